/* Wall-clock time as text, for records and folder names (UTC always). */
#ifndef RIG_TIMEUTIL_H
#define RIG_TIMEUTIL_H

#include <stddef.h>

/* ISO 8601 with milliseconds: "2026-11-30T02:35:39.123Z". buf >= 32 bytes. */
void timeutil_utc_iso(char *buf, size_t size);
/* Compact, sortable, safe in paths: "20261130T023539Z". buf >= 20 bytes. */
void timeutil_utc_compact(char *buf, size_t size);

#endif
