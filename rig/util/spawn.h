/*
 * The one way rig runs an external command: an argument vector (never a
 * shell string), stdin from /dev/null, stdout and stderr captured together,
 * the exit status, and the wall time. Every command goes through a
 * struct spawner, which logs it (the run's command log) or, in dry-run mode,
 * only records what would have run. The provisioning backends and the exec
 * module use it; nothing in rig runs a command through a shell.
 */
#ifndef RIG_SPAWN_H
#define RIG_SPAWN_H

#include <stddef.h>

struct strbuf;

struct spawn_result {
	int exited;     /* 1: exited normally; 0: killed by a signal */
	int status;     /* exit status, or the signal number when !exited */
	double seconds; /* wall time */
	char *output;   /* stdout+stderr, NUL-terminated; owned (free with spawn_result_release) */
	size_t output_len;
	int truncated;  /* output longer than SPAWN_MAX_OUTPUT: the middle was dropped */
};

#define SPAWN_MAX_OUTPUT (4u << 20)

struct spawner;
/* Called after every command (and for every command in dry-run mode, with
 * r == NULL). argv_text is the command as one shell-quoted line. */
typedef void (*spawn_log_fn)(void *opaque, const char *argv_text,
			     const struct spawn_result *r);

struct spawner {
	int dry_run;
	spawn_log_fn log;  /* may be NULL */
	void *opaque;
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
void spawn_result_release(struct spawn_result *r);

/* Succeeds only when the command exited with status 0; otherwise err gets
 * "COMMAND failed with exit status N:\nOUTPUT". r may be NULL. */
int spawn_check(struct spawner *sp, const char *const *argv, const char *cwd,
		struct spawn_result *r, struct strbuf *err);

/* Append argv as one line, each argument quoted for a POSIX shell only
 * where it needs to be (for display and logs, never for execution). */
void spawn_argv_text(struct strbuf *sb, const char *const *argv);

#endif
