/*
 * What one cell of a module does to its volume, said without doing it: the
 * module side of `rig plan`'s estimates and of the fit check
 * (rig/run/plan_estimate.h walks the schedule and calls each module's
 * estimate() once per cell).
 *
 * The estimator keeps, per volume, one slot per kind of data a module
 * leaves there (struct est_slot: the write set, the tree, the filler, the
 * test files of randio), keyed as the runner keys its state slots
 * (module.needs), except that modules sharing files without sharing state
 * name the owner of those files in module.files_of. A module's estimate()
 * reads the cell's inputs, updates its slot to what the volume holds after
 * the cell, and fills the outputs. Sizes are the run's own draws when the
 * seed is known (`exact`), expectations otherwise; nothing here is timed:
 * the estimator turns moved bytes and file operations into seconds at its
 * stated assumptions.
 */
#ifndef RIG_ESTIMATE_H
#define RIG_ESTIMATE_H

#include <stdint.h>

/* Bytes and files a module's data holds on one volume. */
struct est_slot {
	double bytes;
	double files;
	double part[2]; /* the module's own bookkeeping (randio: its test file per data kind) */
};

struct est_cell {
	/* in */
	uint64_t seed;       /* the cell's seed, as the runner derives it */
	int exact;           /* 1: seed is the run's (draw sizes as the run will) */
	double capacity;     /* the volume's blocks in bytes (statvfs f_blocks); 0: unknown */
	double others;       /* bytes in use on the volume outside this slot */
	struct est_slot *slot; /* in/out: what the slot holds before, then after the cell */
	/* in/out: the source folder off the target (a `tree` or `churn` with
	 * `at:`, read by `sync`): its tree's bytes and files; part[0] and
	 * part[1] the bytes and files its last churn changed. */
	struct est_slot *source;
	int again;           /* 1: an earlier volume's cell of this phase ran this step: a
	                      * step in a source folder runs once per phase, so it counts
	                      * nothing here */
	/* out (zero on entry) */
	double written;      /* bytes written */
	double files;        /* files created */
	double moved;        /* bytes read or written, timed at the assumed rate */
	double ops;          /* file operations on the volume (create, rename, unlink) at the
	                      * assumed file-operation rate (--assume-ops: a hard disk's are
	                      * its seeks) */
	double ops_off;      /* file operations in a source folder off the target, at
	                      * PLAN_EST_FILE_OPS whatever the target */
	double stats;        /* entries statted from the cache, at PLAN_EST_STAT_RATE */
	double walk;         /* entries a cold walk of the volume stats, at its file system's
	                      * walk rate (plan_est_options: --assume-walk) */
	double seconds;      /* time the cell takes whatever the rate (time:, pause) */
	double write_seconds; /* of seconds, those spent writing: the estimator adds this
	                      * x the assumed rate to written */
	double need;         /* the most the slot holds during the cell, in bytes */
	double largest;      /* the largest single file the cell writes, in bytes */
	int unknown;         /* 1: what the cell writes depends on a size not known here */
};

#endif
