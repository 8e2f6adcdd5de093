/*
 * The one way rig runs an external command: an argument vector (never a
 * shell string), stdin from /dev/null, stdout and stderr captured together,
 * the exit status, and the wall time. Every command goes through a
 * struct spawner, which logs it (the run's command log) or, in dry-run mode,
 * only records what would have run. The provisioning backends and the exec
 * module use it; nothing in rig runs a command through a shell.
 *
 * spawn_run_opts adds two things the exec module needs: stdout and stderr
 * also captured apart (fio's JSON must be parsed from stdout alone, while
 * its warnings go to stderr), and stopping the command when a cancel flag
 * is raised (Ctrl-C during a long fio job). The combined output stays in
 * r->output in every mode, so loggers and error messages see everything
 * the command printed, in the order it arrived (chunk by chunk: two pipes
 * cannot give a finer order). Rejected: a flag that moves stderr out of
 * r->output (every logger would have to learn a second field).
 *
 * Fault injection (fault.h) is asked before every command that is not a
 * dry run: a RIG_FAULT rule may replace the command by a failure with a
 * recorded output, which is logged like any result.
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
	char *output;   /* stdout+stderr, NUL-terminated; owned (free with spawn_result_release) */
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
/* Called after every command (and for every command in dry-run mode, with
 * r == NULL). argv_text is the command as one shell-quoted line. */
typedef void (*spawn_log_fn)(void *opaque, const char *argv_text,
			     const struct spawn_result *r);

struct spawner {
	int dry_run;
	spawn_log_fn log;  /* may be NULL */
	void *opaque;
	/* Tests only (NULL in rig): called instead of running any command.
	 * Fills r as a run would (output owned and NUL-terminated; with split,
	 * stdout_text may be set, the rest is filled in) and returns 0, or a
	 * negative errno for a command that could not start. The result is
	 * logged like a real one. This is how the refusal suite drives a
	 * backend against a recorded machine without running anything. */
	int (*fake)(void *opaque, const char *const *argv, struct spawn_result *r);
};

/*
 * Run argv[0] (searched in PATH) with argv in directory cwd (NULL: ours).
 * Returns 0 when the command ran (whatever its exit status: check
 * r->exited and r->status), or a negative errno when it could not be
 * started, with the reason in err. In dry-run mode nothing runs: r reports
 * exit status 0 with empty output.
 */
int spawn_run(struct spawner *sp, const char *const *argv, const char *cwd,
	      struct spawn_result *r, struct strbuf *err);
/* spawn_run with options (opts may be NULL: spawn_run). In dry-run mode
 * with split, stdout_text and stderr_text are empty strings. */
int spawn_run_opts(struct spawner *sp, const char *const *argv, const char *cwd,
		   const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err);
void spawn_result_release(struct spawn_result *r);

/* Succeeds only when the command exited with status 0; otherwise err gets
 * "COMMAND failed with exit status N:\nOUTPUT". r may be NULL. */
int spawn_check(struct spawner *sp, const char *const *argv, const char *cwd,
		struct spawn_result *r, struct strbuf *err);

/* Append argv as one line, each argument quoted for a POSIX shell only
 * where it needs to be (for display and logs, never for execution). */
void spawn_argv_text(struct strbuf *sb, const char *const *argv);

#endif
