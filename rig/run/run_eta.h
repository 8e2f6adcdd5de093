/*
 * The time left in a run (runner-internal), for the progress line: each
 * cell left is expected to take as long as the cells of the same plan
 * step took so far (the same module with the same parameters, on any
 * volume, in any repetition, cycle or sweep value), or, for a step not
 * run yet, as long as the average cell; the sum is scaled by the share
 * of the elapsed time the cells themselves took, so provisioning, cache
 * flushes and teardown count in proportion. Unknown until a cell ends.
 *
 * Rejected: an estimate from the plan alone (bytes over an assumed
 * rate): the disk under test is what is unknown; the run's own cells are
 * the best clock there is.
 */
#ifndef RIG_RUN_ETA_H
#define RIG_RUN_ETA_H

#include <stddef.h>
#include <stdint.h>

struct schedule;

struct run_eta {
	uint32_t *step_of;   /* per cell: its step's index */
	size_t nsteps;
	double *sum;         /* per step: seconds of its cells done */
	uint32_t *n;         /* per step: its cells done */
	uint32_t *left;      /* per step: its cells not done */
	double cell_sum;     /* seconds of all cells done */
	uint32_t cell_n;
};

/* Cells from..n-1 of s are to run. */
void run_eta_init(struct run_eta *e, const struct schedule *s, size_t from);
void run_eta_release(struct run_eta *e);
/* Cell i (index into s->cells) ran for seconds. */
void run_eta_done(struct run_eta *e, size_t i, double seconds);
/* Seconds left, given the seconds elapsed since the walk started; -1
 * while no cell has ended. */
double run_eta_left(const struct run_eta *e, double elapsed);

#endif
