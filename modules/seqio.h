/*
 * write and read (modules/seqio.c): what the tests and the module
 * share. The runner knows these modules only through mod_write and
 * mod_read; the types here are the args struct the parameter tables
 * bind and the per-volume file set `write` leaves for `read`.
 */
#ifndef RIG_SEQIO_H
#define RIG_SEQIO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/units.h"

struct seqio_args {
	uint64_t files;
	struct size_dist sizes;
	uint64_t block;
	int sync;
};

#define SEQIO_SUBDIR "seqio"   /* the set lives in <volume dir>/seqio */

struct seqio_file {
	char name[24];   /* "f003": a zero-padded index, at least 3 digits */
	uint64_t size;   /* bytes, exact */
	uint64_t stream; /* payload stream (payload.h) */
};

/* What `write` leaves in *ctx->volstate (released by its release_state). */
struct seqio_set {
	uint32_t magic;
	char *dir;                 /* <volume dir>/seqio, owned */
	struct seqio_file *files;  /* n entries, index order, owned */
	size_t n;
	uint64_t payload_seed;     /* plat_payload_init seed the files were written with */
	int synced;                /* written with sync: true */
};

/* Sizes of a set of n files: file i gets units_dist_draw(d, u_i, i) with
 * u_i the i-th uniform of a prng seeded with `seed` (lists cycle, ranges
 * draw). The same seed gives the same sizes everywhere. */
void mod_seqio_draw_sizes(const struct size_dist *d, uint64_t seed, uint64_t *out, size_t n);

extern const struct rig_module mod_write, mod_read;

#endif
