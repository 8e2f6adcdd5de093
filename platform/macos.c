/* Platform layer for macOS; see platform.h. */
#include <time.h>

#include "platform.h"

uint64_t plat_clock_ns(void)
{
	return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
}

const char *plat_name(void)
{
	return "macos";
}
