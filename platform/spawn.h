/*
 * The one way rig runs an external command: an argument vector (never a
 * shell string), stdin from /dev/null, stdout and stderr captured together,
 * the exit status, and the wall time. Every command goes through a
 * struct spawner, which logs it (the run's command log). The provisioning
 * backends and the exec module use it; nothing in rig runs a command
 * through a shell.
 *
 * A spawner is one small interface (struct spawn_ops, spawn_impl.h: carry
 * out one command into a spawn_result) with one implementation per file,
 * as redis's ae.c has ae_epoll.c, ae_kqueue.c and ae_select.c:
 *
 *   plat_spawner_real   spawn_real.c   fork, exec, pipes, cancel: the only code
 *                                 that starts processes
 *   plat_spawner_dry    spawn_dry.c    runs nothing, only logs (`rig plan`)
 *   plat_spawner_fake   spawn_fake.c   a test's callback plays the command
 *   plat_spawner_fault  spawn_fault.c  fault rules (fault.h) first, then the
 *                                 spawner it wraps
 *
 * spawn.c keeps what all share: logging, the argv text, plat_spawn_check.
 * A backend asks no more than plat_spawner_dry_run (and, before it reads a
 * recorded machine's facts, whether sp->fake is set), so `rig plan` prints
 * the very commands `rig run` executes, and the refusal suite drives a
 * real backend without running anything. Rejected:
 * flags on one spawner that a single function tests one after another (the
 * real, dry, fake and fault paths interleaved, and every new kind another
 * branch in the code that starts processes).
 *
 * plat_spawn_run_opts adds two things the exec module needs: stdout and stderr
 * also captured apart (fio's JSON must be parsed from stdout alone, while
 * its warnings go to stderr), and stopping the command when a cancel flag
 * is raised (Ctrl-C during a long fio job). The combined output stays in
 * r->output in every mode, so loggers and error messages see everything
 * the command printed, in the order it arrived (chunk by chunk: two pipes
 * cannot give a finer order). Rejected: a flag that moves stderr out of
 * r->output (every logger would have to learn a second field).
 */
#ifndef RIG_SPAWN_H
#define RIG_SPAWN_H

#include <signal.h>
#include <stddef.h>

struct strbuf;

struct spawn_result {
	int exited;     /* 1: exited normally; 0: killed by a signal */
	int status;     /* exit status, or the signal number when !exited */
	double seconds; /* wall time */
	char *output;   /* stdout+stderr, NUL-terminated; owned (free with plat_spawn_result_release) */
	size_t output_len;
	int truncated;  /* output longer than SPAWN_MAX_OUTPUT: the middle was dropped
	                 * (of any of the captured texts) */
	/* With spawn_opts.split only (NULL otherwise): each stream alone,
	 * NUL-terminated, owned, each kept (and cut) like output. */
	char *stdout_text;
	size_t stdout_len;
	char *stderr_text;
	size_t stderr_len;
	int cancelled;  /* stopped because spawn_opts.cancel was raised */
};

#define SPAWN_MAX_OUTPUT (4u << 20)
/* After a cancel: SIGTERM to the command's process group, SIGKILL this
 * much later if its output is still open, and stop waiting for its output
 * as long again after that (a process that left the group may hold it). */
#define SPAWN_CANCEL_GRACE_MS 2000

struct spawn_opts {
	int split;  /* also capture stdout and stderr apart (r->stdout_text, r->stderr_text) */
	/* Non-NULL: the command runs in its own process group (so a terminal's
	 * Ctrl-C reaches rig alone) and is stopped as described above when
	 * *cancel becomes non-zero; r->cancelled says so. The flag is polled
	 * every 100 ms and whenever a signal interrupts the wait. */
	volatile sig_atomic_t *cancel;
};

struct spawner;
struct spawn_ops; /* spawn_impl.h */
/* Called after every command (and for every command of a dry run, with
 * r == NULL). argv_text is the command as one shell-quoted line. */
typedef void (*spawn_log_fn)(void *opaque, const char *argv_text,
			     const struct spawn_result *r);
/* plat_spawner_fake's callback: plays argv instead of running it. Fills r as a
 * run would (output owned and NUL-terminated; with split, stdout_text may
 * be set, the rest is filled in) and returns 0, or a negative errno for a
 * command that could not start. */
typedef int (*spawn_fake_fn)(void *opaque, const char *const *argv, struct spawn_result *r);
/* Told that a command is running (the progress line: util/progress.h):
 * once as it starts (seconds 0) and, from plat_spawner_real, about every
 * SPAWN_WATCH_MS while it runs. argv_text as for spawn_log_fn. */
typedef void (*spawn_watch_fn)(void *opaque, const char *argv_text, double seconds);
#define SPAWN_WATCH_MS 250

/*
 * Built by the constructors below and copied by value: it owns nothing, so
 * a run or `rig plan` holds one with nothing to free. A zeroed spawner runs
 * nothing (every command fails with -EINVAL): one built by hand without an
 * implementation is caught at its first command, never taken for a real
 * one that logs nothing.
 */
struct spawner {
	const struct spawn_ops *ops;   /* how a command is carried out */
	/* plat_spawner_fault's: the implementation it hands commands on to, with
	 * the same log, opaque and fake (so one level of wrapping only). */
	const struct spawn_ops *inner;
	spawn_log_fn log;              /* may be NULL */
	void *opaque;                  /* log's and fake's */
	spawn_fake_fn fake;            /* plat_spawner_fake's, else NULL */
	/* Set by the caller after construction (NULL: nobody watches); kept
	 * by plat_spawner_fault. Not called in a dry run. */
	spawn_watch_fn watch;
	void *watch_opaque;
};

/* Runs each command and logs its result. */
struct spawner plat_spawner_real(spawn_log_fn log, void *opaque);
/* Runs nothing: logs each command with r == NULL; r reports exit status 0
 * with empty output (with split, empty stdout_text and stderr_text). */
struct spawner plat_spawner_dry(spawn_log_fn log, void *opaque);
/* Tests only: fake(opaque, ...) plays each command; its result is
 * completed (output_len, the split texts: the output as stderr) and logged
 * like a real one. This is how the refusal suite drives a backend against a
 * recorded machine without running anything. */
struct spawner plat_spawner_fake(spawn_fake_fn fake, spawn_log_fn log, void *opaque);
/* inner with fault injection (fault.h) in front: a command a RIG_FAULT rule
 * names is not handed on; its failure is logged like any result. Signal
 * rules fire before the command and after it is logged (a SIGKILL after a
 * command still finds it in the log). inner's log, opaque and fake are
 * kept. A dry or already wrapped inner is returned as it is: a dry run's
 * commands are neither counted nor faked. */
struct spawner plat_spawner_fault(struct spawner inner);
/* Whether sp runs nothing and logs r == NULL (plat_spawner_dry); 0 for NULL.
 * The backends skip, in a dry run, what only a real run can check. */
int plat_spawner_dry_run(const struct spawner *sp);

/*
 * Run argv[0] (searched in PATH) with argv in directory cwd (NULL: ours)
 * through sp (NULL: plat_spawner_fault(plat_spawner_real(NULL, NULL)), which logs
 * nothing). Returns 0 when the command ran (whatever its exit status: check
 * r->exited and r->status), or a negative errno when it could not be
 * started, with the reason in err.
 */
int plat_spawn_run(struct spawner *sp, const char *const *argv, const char *cwd,
	      struct spawn_result *r, struct strbuf *err);
/* plat_spawn_run with options (opts may be NULL: plat_spawn_run). */
int plat_spawn_run_opts(struct spawner *sp, const char *const *argv, const char *cwd,
		   const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err);
void plat_spawn_result_release(struct spawn_result *r);

/* Succeeds only when the command exited with status 0; otherwise err gets
 * "COMMAND failed with exit status N:\nOUTPUT". r may be NULL. */
int plat_spawn_check(struct spawner *sp, const char *const *argv, const char *cwd,
		struct spawn_result *r, struct strbuf *err);

/* Append argv as one line, each argument quoted for a POSIX shell only
 * where it needs to be (for display and logs, never for execution). */
void plat_spawn_argv_text(struct strbuf *sb, const char *const *argv);

#endif
