/*
 * rig resume's part of the runner (runner-internal): what run_continue
 * checks and reads before it walks the rest of the schedule, and what it
 * records in the store's resumes table. Where a resumed run starts and
 * whether it keeps the provisioning: resume.h.
 *
 * Paths: the recorded plan's relative paths (dirs, the image) and the
 * volume folders the killed run recorded relative to where it was started
 * are joined to that folder (the run's recorded cwd), so the backends, the
 * target locks and the modules (`exec` runs in its volume's folder) use
 * them as the run did; the process's working folder is never changed.
 */
#ifndef RIG_RUN_RESUME_H
#define RIG_RUN_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "rig/run/resume.h"
#include "rig/run/runner.h"
#include "store/run_options.h"

struct run;
struct schedule;
struct strbuf;
struct volume;

struct run_resume {
	struct resume_info info;     /* the store's record of the run */
	struct store_run_options rec;   /* the options it was started with */
	struct plan_options popt;    /* how its plan is parsed again */
	struct plan *plan;           /* the recorded plan, relative paths resolved; owned */
	enum cell_state *state;      /* per seq 1..n: done, started, new */
	struct run_resume_point rp;
	struct volume *vols;         /* the recorded volumes of the unfinished cell's layout */
	int64_t *ids;                /* their store ids */
	size_t nvols, nvols_alloc;
	int64_t resume_id;           /* the resumes row, once begun; 0 before */
};

void run_resume_init(struct run_resume *rs);
void run_resume_release(struct run_resume *rs);

/*
 * Open the run folder dir (run->dir, with its lock and its store) and
 * refuse before anything changes: a run stopped before it recorded
 * anything, a live run, another rig version, a changed plan.yaml.
 * 0: go on; -1: refused, the reason in err; 1: the run had completed,
 * info says so and *status is RUN_OK, or RUN_FAILED when its missing
 * reports could not be written again.
 */
int run_resume_open(struct run_resume *rs, struct run *run, const char *dir,
		    struct strbuf *info, enum run_status *status, struct strbuf *err);
/* The recorded options into o (image size, --allow and --force added)
 * and the recorded plan parsed again (rs->plan), its relative paths
 * joined to the folder the run was started in. -1 with err (also when
 * the plan has a relative path and that folder is gone). */
int run_resume_plan(struct run_resume *rs, struct run_options *o, struct strbuf *err);
/*
 * The store's cells checked against sched, where the run stopped
 * (rs->rp, run->has_row), and what the backend is to verify: the recorded
 * volumes of the layout there, whether they may be kept (run->prov's
 * presume and keep_why, given to the backend's context). -1 with err.
 */
int run_resume_where(struct run_resume *rs, struct run *run, const struct schedule *sched,
		     struct strbuf *err);
/*
 * After prepare: keep the provisioning when the backend verified it, record
 * the resume (its first unfinished cell, where it starts and why) and say
 * so. *from: the first cell to run. -1 with err when the store refuses.
 */
int run_resume_begin(struct run_resume *rs, struct run *run, const struct schedule *sched,
		     size_t *from, struct strbuf *err);
/* The resume's row ends with the run's status. */
void run_resume_end(struct run_resume *rs, struct run *run, const char *ended,
		    const char *status);

#endif
