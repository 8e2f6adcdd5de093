/*
 * Subcommands, one file each (git's builtin/). Each takes argc/argv with
 * argv[0] the subcommand's name and returns the process exit status:
 * 0 ok, 1 the run failed, 2 bad usage or an invalid plan.
 */
#ifndef RIG_CMD_H
#define RIG_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

#define EXIT_OK 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2

struct rig_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full usage text, shown by `rig help NAME` and on bad usage */
};

extern const struct rig_cmd cmd_table[];
const struct rig_cmd *cmd_find(const char *name);
/* Print "rig NAME: msg" and the command's usage to stderr; returns EXIT_USAGE. */
int cmd_usage_error(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int cmd_run(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* Options shared by commands that read plans. */
struct plan_cli {
	struct plan_options popt;
	int platform_given;
};
/* A seed: an integer 0..2^63-1 (stored as SQLite's signed integer). */
int cmd_parse_seed(const char *s, uint64_t *out);
/* --image-size SIZE (at least 1M): 0, or EXIT_USAGE after the error and usage. */
int cmd_parse_image_size(const char *cmd, const char *arg, uint64_t *out);
/* --assume-rate SIZE/s ("150MB/s"): bytes per second, or EXIT_USAGE. */
int cmd_parse_rate(const char *cmd, const char *arg, double *out);
/* --assume-ops N: file operations per second (N or N/s), > 0; else the usage error. */
int cmd_parse_ops(const char *cmd, const char *arg, double *out);
/* --allow RULES: 0, or EXIT_USAGE after printing the error and usage. */
int cmd_parse_allow(const char *cmd, const char *arg, unsigned *allow);
/* --platform NAME: the platform called NAME (plan/platform.h), or
 * EXIT_USAGE after printing the error (naming the platforms) and usage. */
int cmd_parse_platform(const char *cmd, const char *s, const struct plan_platform **out);
/* --var NAME=VALUE: added to vars[*n] (arg itself, not copied; at most
 * CMD_MAX_VARS), or EXIT_USAGE after printing the error (malformed, a
 * name given twice, too many) and usage. */
#define CMD_MAX_VARS 64
int cmd_parse_var(const char *cmd, const char *arg, const char **vars, size_t *n);
/*
 * Parse and validate a plan, printing every diagnostic to stderr. Returns
 * the plan when valid, NULL (diagnostics printed) otherwise.
 */
struct plan *cmd_load_plan(const char *path, const struct plan_options *o, int *nerrors);

/* --db URL of report and compare (rig/cmd/db.c): the runs refs[0..n) of
 * the shared store into dirs[i]/results.db (the folders exist, the stores
 * must not). EXIT_OK, or EXIT_USAGE / EXIT_FAILED after the message. */
int cmd_db_pull(const char *cmd, const char *url, char *const *refs, const char *const *dirs, size_t n);
/* A new temporary folder with subfolders 1..n, for cmd_db_pull; NULL
 * after the message. */
char *cmd_db_tmpdir(const char *cmd, size_t n);
/* Remove what cmd_db_tmpdir made, with the stores in it; frees root. */
void cmd_db_rmtmp(char *root, size_t n);

#endif
