/*
 * The thin platform layer: the few system calls that differ between Linux
 * and macOS. One implementation file per platform (platform/linux.c,
 * platform/macos.c), chosen by the Makefile; shared code has no #ifdef.
 */
#ifndef RIG_PLATFORM_H
#define RIG_PLATFORM_H

#include <stdint.h>

/* Monotonic raw nanoseconds: CLOCK_MONOTONIC_RAW (Linux),
 * clock_gettime_nsec_np(CLOCK_UPTIME_RAW) (macOS). */
uint64_t plat_clock_ns(void);
/* The platform's name as plans use it: "linux" or "macos". */
const char *plat_name(void);

#endif
