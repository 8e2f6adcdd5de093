/*
 * exec (modules/exec.c): what the module and its tests share. The
 * args struct its parameter table binds, and the pure parts, apart so
 * tests reach them without running commands: placeholder substitution in
 * the argument vector, fio's JSON output, and name=number lines.
 */
#ifndef RIG_EXEC_PARSE_H
#define RIG_EXEC_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "modules/module.h"

struct strbuf;

struct exec_args {
	struct argv_list run;
	int parse;       /* EXEC_PARSE_*: an index into the `parse` choices */
};

enum { EXEC_PARSE_NONE, EXEC_PARSE_FIO_JSON, EXEC_PARSE_KV };

extern const struct rig_module mod_exec;

/*
 * The command to run: each argument of `run` with every `{dir}`, `{device}`
 * and `{volume}` replaced by the value (any number of times, anywhere in
 * the argument: `--directory={dir}`). Anything else in braces is left as
 * written (`find . -exec ... {} +` keeps its `{}`). `{device}` on a volume
 * without a block device (device NULL: a `dirs` target) is an error rather
 * than an empty string, which a command would take as "no file" or, worse,
 * as the current folder. dir and volume may not be NULL.
 * Returns 0 and *out, a NULL-terminated vector of owned strings (free with
 * mod_exec_argv_free), or -EINVAL with the reason in err.
 */
int mod_exec_expand(const struct argv_list *run, const char *dir, const char *device,
		const char *volume, char ***out, struct strbuf *err);
void mod_exec_argv_free(char **argv);

/* What fio's JSON says, summed over its jobs. */
struct fio_totals {
	size_t jobs;
	double read_bw_bytes;   /* bytes/s: sum of jobs[].read.bw_bytes */
	double write_bw_bytes;
	double read_iops;       /* sum of jobs[].read.iops */
	double write_iops;
	double read_io_bytes;   /* bytes moved: sum of jobs[].read.io_bytes */
	double write_io_bytes;
	int bw_from_kib;        /* some job had no bw_bytes (fio < 3): bw (KiB/s) * 1024 used */
	char version[64];       /* "fio version", or "" */
};

/*
 * Parse fio's --output-format=json (or json+) from text (fio's stdout
 * alone; NUL-terminated). Lines before the JSON (a warning fio printed to
 * stdout) and text after it are skipped: the JSON starts at the first line
 * whose first character is '{'. Every job counts (with or without
 * group_reporting). 0, or -EINVAL with the reason in err: no JSON, JSON
 * that does not parse, no jobs, a job with a non-zero "error" (its name
 * and error are given), a job without read/write figures.
 */
int mod_exec_parse_fio_json(const char *text, struct fio_totals *t, struct strbuf *err);

/*
 * The name=number lines of text. A line counts when, after trimming spaces,
 * tabs and a carriage return at either end, it is NAME=NUMBER (spaces or
 * tabs allowed around '='), NAME matches [a-z0-9_]+ and is at most
 * EXEC_NAME_MAX characters, and NUMBER is a finite decimal number
 * ([+-]digits[.digits][e[+-]digits], or .digits; no hex, inf or nan).
 * fn gets each in output order. A line of that shape whose name does not
 * qualify (`Speed=42`, `read-rate=3`) is not a metric: it is counted in
 * *bad, and the first is copied into first_bad (may be NULL). Other
 * lines are ignored. Returns the number of metric lines.
 */
#define EXEC_NAME_MAX 64
typedef void (*exec_kv_fn)(void *opaque, const char *name, double value);
size_t mod_exec_parse_kv(const char *text, exec_kv_fn fn, void *opaque, size_t *bad,
		     struct strbuf *first_bad);

/* The last max_lines lines of text (at most max_bytes), for messages: a
 * pointer into text, after a line break when one is in range. */
const char *mod_exec_tail(const char *text, size_t len, size_t max_lines, size_t max_bytes);

#endif
