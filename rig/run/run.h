/*
 * One run or resume in progress (runner-internal): what runner.c,
 * run_cells.c and run_resume.c share. The run folder (run_dir.h) and the
 * provisioning (run_provision.h) keep their own state; this adds what the
 * walk over the schedule needs.
 */
#ifndef RIG_RUN_H
#define RIG_RUN_H

#include <stdint.h>

#include "modules/run_time.h"
#include "plan/plan.h"
#include "platform/progress.h"
#include "platform/spawn.h"
#include "rig/run/run_dir.h"
#include "rig/run/run_provision.h"

/* The event the runner records once the reports of a run are written. */
#define RUN_REPORTS_WRITTEN "reports written"

struct run_options;
struct run_resume;

struct run {
	const struct plan *plan;
	const struct run_options *opt;
	uint64_t seed;
	unsigned seed_scheme;       /* plan_schedule_cell_seed's, as the run recorded it */
	struct run_dir dir;         /* folder, lock, store, commands.log, events */
	struct run_prov prov;       /* backend, volumes, module state, target locks */
	struct spawner sp;          /* logs into dir */
	struct progress progress;
	int flush_ok;               /* cache.flush requested and possible */
	unsigned char *has_row;     /* a resume: per seq, the store has the cell (restart it) */
	struct run_resume *resume;  /* NULL: a new run */
	/* The run as modules' step instances name it (rig_ctx.instance, with
	 * the phase): its id, its plan's SHA-256 and its seed, as the store
	 * recorded them, so a resume names every phase as the run did. */
	char key[192];
	/* The time accounting (run_time.h, run_account.h): the accountant and
	 * the scope its totals belong to (a layout index or -1 for the run
	 * around them; a cell's seq or 0), and whether that cell has its row
	 * in the store yet (else its time is the layout's). */
	struct run_time time;
	long time_layout;
	uint32_t time_seq;
	int time_seq_recorded;
	int time_failed;            /* a write of the accounting failed (said once) */
};

#endif
