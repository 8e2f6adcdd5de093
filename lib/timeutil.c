/* Wall-clock timestamps; see timeutil.h. */
#include "lib/timeutil.h"

#include <stdio.h>
#include <time.h>

void timeutil_utc_iso(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	char base[24];
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

void timeutil_utc_compact(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y%m%dT%H%M%SZ", &tm);
}
