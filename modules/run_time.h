/*
 * Where a run's wall time goes: the time accounting. At every instant the
 * run is in exactly one category (provisioning, a module's setup, a
 * measured interval, a store write, ...); switching the category
 * attributes the time since the last switch to the one it leaves, so the
 * categories add up to the wall time by construction, whatever is
 * forgotten (that lands in the category it was in: `other` between cells,
 * `setup` inside a module).
 *
 * The runner owns one accountant per run, takes its totals whenever the
 * scope changes (a cell, the gap between a layout's cells, the run around
 * them) and records them (run_account.h); modules see it as rig_ctx.time
 * and mark only their measured intervals and pauses: everything else they
 * do in a cell is setup. Nothing here knows the store.
 *
 * One thread: the runner's. A module whose workers run in threads marks
 * the interval in the thread that starts and joins them.
 *
 * Rejected: a stack of nested regions (a sink's store write inside a
 * module's cell is the only nesting, and mod_run_time_swap gives it back);
 * sampling the clock per sample or per I/O (the intervals modules already
 * time are the ones to count, read from the same clock at the same
 * instants).
 */
#ifndef RIG_RUN_TIME_H
#define RIG_RUN_TIME_H

#include <stdint.h>

/* The categories, in the order reports list them. */
enum run_time_cat {
	RT_PROVISION, /* preparing the target, provisioning a layout (partition, mkfs, mount) */
	RT_TEARDOWN,  /* unmounting, detaching, removing what a layout made */
	RT_SETUP,     /* a module's work outside its measured intervals: laying out test
	               * files, building trees, filling, cleaning up; and all the timed
	               * work of a module that prepares the volume (MOD_PREPARES) */
	RT_FLUSH,     /* cache defeat before a read-type step (remount, dropping caches) */
	RT_PAUSE,     /* waits a plan asks for */
	RT_MEASURED,  /* the intervals modules time for their results */
	RT_STORE,     /* writing the results store (cells, samples, notes, these rows) */
	RT_REPORT,    /* writing the reports at the run's end */
	RT_OTHER,     /* rig's own work between all these: starting, binding parameters,
	               * the fit check, progress output */
	RT_NCAT
};

struct run_time {
	enum run_time_cat cur;      /* the category the time since `since` belongs to */
	uint64_t since;             /* plat_clock_ns() of the last switch */
	uint64_t ns[RT_NCAT];       /* per category, since the last mod_run_time_take */
	enum run_time_cat measured_as; /* what RT_MEASURED counts as (RT_SETUP in the cell
	                             * of a module that prepares the volume) */
};

/* Start the clock now, in category c. */
void mod_run_time_init(struct run_time *t, enum run_time_cat c);

/*
 * From now on the time counts as c (RT_MEASURED as t->measured_as).
 * Returns the clock reading (plat_clock_ns) of the switch, so a module's
 * own timing and the accounting use the same instants:
 *     uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
 *     ...the timed work...
 *     ns = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
 * t may be NULL (a module run outside a run, by a test): only the clock
 * is read.
 */
uint64_t mod_run_time_mark(struct run_time *t, enum run_time_cat c);

/* As mod_run_time_mark, returning the category left, to go back to it. */
enum run_time_cat mod_run_time_swap(struct run_time *t, enum run_time_cat c);

/* The nanoseconds of each category since the last take, up to now, into
 * ns; the totals start again from zero (the category stays). */
void mod_run_time_take(struct run_time *t, uint64_t ns[RT_NCAT]);

/* "provision", "teardown", "setup", "flush", "pause", "measured",
 * "store", "report", "other": the names in the store and the reports. */
const char *mod_run_time_name(enum run_time_cat c);
/* The category called name, or -1. */
int mod_run_time_from_name(const char *name);

#endif
