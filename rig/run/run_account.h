/*
 * The time accounting in the store (runner-internal): the runner tells
 * which scope the time from now on belongs to, and the totals of the scope
 * left (run_time.h) become rows of the store's table time_spent; and the
 * estimate `rig plan` gives for the plan, recorded as the run starts
 * (table estimates), for the report to compare with what the run took.
 *
 * Scopes: a cell (its layout and seq); a layout outside its cells
 * (provisioning, teardown, the fit check); the run around the layouts
 * (starting, preparing the target, ending, the reports). A failure to
 * record is said once as a warning event and never stops the run: the
 * accounting describes the run, it is not one of its results.
 */
#ifndef RIG_RUN_ACCOUNT_H
#define RIG_RUN_ACCOUNT_H

#include <stdint.h>

struct run;
struct schedule;

/* The time from now on belongs to layout li (-1: the run around the
 * layouts) and cell seq (0: none). The time of the scope left is recorded
 * (in the new scope's time, as a store write), when the store is open. */
void run_account_scope(struct run *run, long li, uint32_t seq);
/* Record the current scope's time so far (the run's end). */
void run_account_flush(struct run *run);
/* Record the estimate of the plan's run time per layout (plan_estimate.h,
 * with the run's seed and --image-size, the target's default rate). */
void run_account_estimate(struct run *run, const struct schedule *s);

#endif
