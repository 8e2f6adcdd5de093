/*
 * The run folder (runner-internal): making it, plan.yaml, its lock, and
 * the record a run keeps as it goes: commands.log (what ran, and the
 * backend's notes, in a format for people) and events (in results.db and,
 * unless info, on stderr).
 *
 * The folder's lock is flock on RUN/plan.yaml: the kernel releases it when
 * the process dies, even by SIGKILL, so a resume is refused next to a live
 * run of the same folder and never by a stale lock.
 */
#ifndef RIG_RUN_DIR_H
#define RIG_RUN_DIR_H

#include <stddef.h>
#include <stdio.h>

#include "lib/strbuf.h"

struct progress;
struct spawn_result;
struct store;

struct run_dir {
	struct strbuf path;        /* as made by a run (may be relative); absolute for a resume */
	struct strbuf id;          /* its last component: the run id */
	int made;                  /* 1: run_dir_make made the folder; 0: it claimed an empty one, or a resume */
	struct strbuf root_made;   /* the runs root when run_dir_make made it too; else empty */
	int lock_fd;               /* RUN/plan.yaml, flock'ed while the run lives; -1 none */
	FILE *cmdlog;              /* RUN/commands.log; NULL until opened */
	struct store *store;       /* RUN/results.db; NULL until opened (by the caller) */
	struct progress *progress; /* borrowed: ended before a line goes to stderr */
};

void run_dir_init(struct run_dir *d, struct progress *progress);
/* Close the store, the command log and the lock. */
void run_dir_release(struct run_dir *d);

/*
 * A new run's folder: out_dir (it must not exist or be empty), or
 * ROOT/<UTC>-<plan_name>[-k] below runs_root (NULL: "runs"). -1 with the
 * reason in err.
 */
int run_dir_make(struct run_dir *d, const char *out_dir, const char *runs_root,
		 const char *plan_name, struct strbuf *err);
/*
 * Undo run_dir_make for a run that never began (refused, or failed before
 * anything was provisioned or measured): close the store, the command log
 * and the lock, delete the files a run writes before its first cell
 * (plan.yaml, commands.log, results.db and SQLite's side files), then the
 * folder itself and the runs root if this run made them. A folder that
 * existed before (-o naming an empty one) is left, empty again; one that
 * holds anything else is kept. 0, or -1 with what was kept in err.
 */
int run_dir_discard(struct run_dir *d, struct strbuf *err);
/* An existing run's folder (rig resume), made absolute. -1 with err. */
int run_dir_use(struct run_dir *d, const char *dir, struct strbuf *err);

/* Write RUN/plan.yaml (it must not exist yet). 0 or a negative errno. */
int run_dir_write_plan(struct run_dir *d, const char *text, size_t len, struct strbuf *err);
/* Take the folder's lock. -EBUSY while another rig works in it. */
int run_dir_lock(struct run_dir *d, struct strbuf *err);
/* Open RUN/commands.log: made new (a run), or appended to (a resume). */
int run_dir_open_log(struct run_dir *d, int append, struct strbuf *err);

/* The spawner's log hook (spawn.h; opaque: the run_dir): the command, its
 * output and exit status into commands.log and the store; r NULL (a dry
 * run): the command line alone, into commands.log. */
void run_dir_log_command(void *opaque, const char *argv_text, const struct spawn_result *r);
/* The backend's note hook (provision_ctx.note; opaque: the run_dir): steps
 * that are not commands go to commands.log, warnings are events. */
void run_dir_note(void *opaque, int warning, const char *text);
/* An event: stored (when the store is open) and, unless level is "info",
 * printed as "rig: LEVEL: MESSAGE". */
void run_dir_event(struct run_dir *d, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
