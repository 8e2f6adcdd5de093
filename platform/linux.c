/* Platform layer for Linux; see platform.h. */
#include <time.h>

#include "platform.h"

uint64_t plat_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *plat_name(void)
{
	return "linux";
}
