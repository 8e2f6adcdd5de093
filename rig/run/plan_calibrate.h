/*
 * `rig plan --from RUN`: the estimate corrected by what an earlier run of
 * the same kinds of steps took on the same disk (a pilot: the plan with
 * fewer files, cycles or repetitions).
 *
 * A rate fixed before a run cannot know a disk's seeks, a remount's cost
 * or a file system's walk on this disk; the earlier run measured them. Its
 * own plan is estimated again, with the same assumptions, cell by cell,
 * and each cell's estimate is set beside the time the run spent on it
 * (time_spent: setup, cache clearing, the measurement, storing). Per
 * module and file system the ratio of the two corrects every cell of the
 * new plan of that module on that file system (struct plan_est_scale);
 * provisioning is taken per volume as measured. Modules the earlier run
 * did not have keep the assumptions, and the estimate says so.
 */
#ifndef RIG_PLAN_CALIBRATE_H
#define RIG_PLAN_CALIBRATE_H

#include <stddef.h>

#include "rig/run/plan_estimate.h"

struct strbuf;

struct plan_calibration {
	char *dir;                   /* RUN as given */
	char *run_id;
	struct plan_est_scale *scale; /* module names static, fs owned */
	size_t nscale;
	double provision_s;          /* measured seconds per volume provisioned; 0: none */
	size_t volumes;              /* volumes it was measured over */
	size_t cells;                /* finished cells read */
};

/* Read RUN (a run folder) and fill cal, estimating its plan with base's
 * assumptions (rate, ops, walks; its seed and sizes are the run's). 0, or
 * -1 with the reason in err. */
int run_plan_calibrate(const char *dir, const struct plan_est_options *base,
		   struct plan_calibration *cal, struct strbuf *err);
void run_plan_calibration_release(struct plan_calibration *cal);
/* Lines saying what was measured, for `rig plan`. */
void run_plan_calibration_format(const struct plan_calibration *cal, struct strbuf *out);

#endif
