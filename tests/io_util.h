/*
 * What the suites of the I/O modules (randio, seqqd) share: a volume to
 * call a module on directly, whether io_uring can be used here, and
 * whether a file's 512-byte sectors are all different (payload that
 * defeats dedup).
 */
#ifndef RIG_TESTS_IO_UTIL_H
#define RIG_TESTS_IO_UTIL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"
#include "modules/module.h"

/* A temporary directory as a volume, its state slot, a cancel flag, the
 * error buffer, and a context pointing at them (direct I/O asked, as a
 * plan's default). */
struct iot_vol {
	char *dir;
	void *state;
	volatile sig_atomic_t cancel;
	struct strbuf err;
	struct rig_ctx ctx;
};

void iot_vol_init(struct iot_vol *v, uint64_t seed, struct rig_sink *sink);
/* Release the state slot (as the end of a layout does) and remove the
 * directory. */
void iot_vol_done(struct iot_vol *v);
/* Run module `name` on v with RIG_ENGINE=engine (NULL: unset); err is
 * emptied first and printed on failure unless quiet. */
int iot_run(struct iot_vol *v, const char *name, const void *args, const char *engine,
	    int quiet);
/* Whether <v->dir>/name exists. */
int iot_exists(const struct iot_vol *v, const char *name);

/* 1 when io_uring queues can be opened here; the first call that finds
 * they cannot prints why (the io_uring runs are then skipped). */
int iot_have_uring(void);
/* How many 512-byte sectors of buf[0..len) equal another one. */
size_t iot_equal_sectors(const unsigned char *buf, size_t len);

#endif
