/*
 * One run or resume in progress (runner-internal): what runner.c,
 * run_cells.c and run_resume.c share. The run folder (run_dir.h) and the
 * provisioning (run_provision.h) keep their own state; this adds what the
 * walk over the schedule needs.
 */
#ifndef RIG_RUN_H
#define RIG_RUN_H

#include <stdint.h>

#include "plan.h"
#include "run_dir.h"
#include "run_provision.h"
#include "util/progress.h"
#include "util/spawn.h"

/* The event the runner records once the reports of a run are written. */
#define RUN_REPORTS_WRITTEN "reports written"

struct run_options;
struct run_resume;

struct run {
	const struct plan *plan;
	const struct run_options *opt;
	uint64_t seed;
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
};

#endif
