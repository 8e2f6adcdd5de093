/*
 * The schedule: a pure function of a plan and a seed that lists every cell
 * (one module step on one volume) in the order the runner will execute it.
 * No I/O, no clock, no globals: `rig plan` prints it without touching a disk,
 * and a resumed run rebuilds the same list.
 *
 * Steps run phase by phase: a phase is one instance of a module step (one
 * layout, one repetition, one cycle number or sweep value) on every volume,
 * and the order policy decides the volumes' order inside each phase:
 *
 *   alternate       plan order in every phase
 *   counterbalance  plan order in odd repetitions, reversed in even ones
 *   latin           row ((rep-1) mod rows) of a Williams balanced Latin
 *                   square over the volumes (n rows for even n, 2n for odd)
 *   random          a seeded shuffle for every phase
 *   sequential      no interleaving: in each repetition all steps on the
 *                   first volume, then all on the next
 */
#ifndef RIG_SCHEDULE_H
#define RIG_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

struct cell {
	uint32_t seq;            /* 1-based place in the realized order */
	uint32_t phase;          /* 1-based; cells of one phase share it */
	uint32_t layout;         /* index into plan layouts (0 for dirs) */
	uint32_t rep;            /* 1-based */
	uint32_t volume;         /* index into the layout's volumes (position - 1) */
	const struct plan_step *step; /* a STEP_MODULE step */
	char *path;              /* "2", "2.cycle3.1", "1.sweep2.3" (owned) */
	uint32_t cycle;          /* innermost enclosing cycle's number, 0 = none */
	const char *sweep_var;   /* innermost enclosing sweep, NULL = none */
	const char *sweep_value; /* its value as written, NULL = none */
	const struct binding *bindings; /* all enclosing sweep bindings, innermost first */
	int first_of_layout;     /* the first cell of its layout (provision before it) */
	int first_of_rep;        /* the first cell of its (layout, rep) */
};

struct schedule {
	struct cell *cells;
	size_t n;
	uint32_t nphases;
	/* Storage for bindings referenced by cells (owned). */
	struct binding *bindings;
	size_t nbindings;
};

/* Build the schedule. Returns 0, or -EINVAL if the plan is not valid
 * (callers validate first). The plan must outlive the schedule. */
int plan_schedule_build(const struct plan *p, uint64_t seed, struct schedule *s);
void plan_schedule_free(struct schedule *s);

/*
 * A cell's seed, what its module gets as rig_ctx.seed: a function of the
 * run's seed, the repetition and the step's path (which names its cycle
 * and sweep value), so every volume of a phase, and every layout at the
 * same repetition, gets the same draws (common random numbers: sizes,
 * tree, churn selection). Modules that want per-volume streams (the
 * payload) derive further. The derivation is versioned and recorded with
 * each run (options_json's "seeds"), so a resume of an older run draws as
 * it did:
 *
 *   SEED_LAYOUT (1)  runs before December 2026: the layout's name ("" for dirs)
 *                    too, so each layout drew its own workload
 *   SEED_COMMON (2)  common random numbers (SEED_CURRENT)
 */
enum { SEED_LAYOUT = 1, SEED_COMMON = 2, SEED_CURRENT = SEED_COMMON };
uint64_t plan_schedule_cell_seed(uint64_t seed, unsigned scheme, const char *layout,
			    const struct cell *c);

/*
 * Row r (0-based) of the Williams design for n volumes, written into
 * out[0..n-1] as volume indexes. Rows: n for even n, 2n for odd n (the
 * square and its mirror). Exposed for tests and `rig help order`.
 */
size_t plan_schedule_williams_rows(size_t n);
void plan_schedule_williams_row(size_t n, size_t r, uint32_t *out);

#endif
