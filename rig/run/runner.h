/*
 * The runner: the only place with side effects on disks. It walks the
 * schedule cell by cell: provisions each layout (and each repetition when
 * reprovision: repeat), defeats caches before read-type steps, runs the
 * module, stores every sample as it is measured, and tears down. It writes
 * the run folder: plan.yaml (verbatim), results.db, commands.log,
 * results.csv and files.csv.
 *
 * Ctrl-C (SIGINT) or SIGTERM stops between operations: the current cell is
 * marked interrupted, teardown runs, and everything measured is kept. The
 * handlers are in place from the start of run_start or run_continue to
 * their return: a signal before the target is prepared ends it as not
 * started (run_cancel set), one after the run's end is recorded lets the
 * reports be written.
 * A failed cell stops the run (later cells usually depend on it, as `read`
 * on `write`), marked failed with the reason; what was measured is kept.
 */
#ifndef RIG_RUNNER_H
#define RIG_RUNNER_H

#include <signal.h>
#include <stdint.h>

#include "plan/plan.h"

struct strbuf;

struct run_options {
	const char *out_dir;      /* -o DIR: must not exist or be empty; NULL: runs/<UTC>-<name> */
	const char *runs_root;    /* where run folders go; NULL: "runs" */
	int has_seed;             /* --seed given */
	uint64_t seed;
	int yes;                  /* --yes */
	int force;                /* --force: overwrite an image file rig did not make */
	unsigned allow;           /* --allow: safety rules waived (SAFETY_ALLOW_*) */
	uint64_t image_size;      /* --image-size: replaces the plan's image size; 0 none */
	int quiet;                /* no progress lines (-q) */
	int json_progress;        /* --json-progress: one JSON object per event on
	                           * stderr instead of the lines (docs/progress.md);
	                           * also with quiet */
	int no_fit_check;         /* --no-fit-check: run a layout whose data does not fit */
	const char *argv_text;    /* the command line, for provenance */
	const struct plan_options *popt; /* how the plan was parsed (recorded for a resume) */
};

enum run_status { RUN_OK = 0, RUN_FAILED = 1, RUN_NOT_STARTED = 2 };

/*
 * Run a valid plan. Returns RUN_OK, RUN_FAILED (the run folder exists and
 * holds what was measured; err says why), or RUN_NOT_STARTED (nothing was
 * provisioned or measured; err says why: a module not available in this
 * build, the target in use, refused when prepared: a safety rule, the
 * confirm, an image file rig did not make, not root; or interrupted before
 * the target was prepared, run_cancel then set). A run not started
 * leaves no run folder: the one it made is removed again (an empty one
 * named with -o is left empty), so there is nothing to resume.
 * run_dir receives the run folder's path when one was made and kept.
 */
enum run_status run_start(const struct plan *p, const struct run_options *o,
			   struct strbuf *run_dir, struct strbuf *err);

/*
 * Resume the run in folder dir (rig resume): check that it can be resumed
 * (not live, not completed, same rig version, plan.yaml as recorded, the
 * store's cells as the plan and seed schedule them), then run the cells not
 * yet done in the original order; where it starts and whether the
 * provisioning is kept: resume.h. Of o, only yes, force, allow (added to
 * the recorded ones), quiet, json_progress and argv_text are used; the rest
 * is recorded.
 * RUN_OK with info set when the run had completed already (nothing done);
 * RUN_NOT_STARTED when refused, also when the target cannot be prepared
 * (not root, tools missing; the store is left as it was, except for an
 * event saying so, and what the stopped run left may have been torn
 * down); RUN_FAILED as run_start.
 */
enum run_status run_continue(const char *dir, const struct run_options *o,
			      struct strbuf *run_dir, struct strbuf *info, struct strbuf *err);

/* Set by the SIGINT/SIGTERM handler the runner installs. */
extern volatile sig_atomic_t run_cancel;

#endif
