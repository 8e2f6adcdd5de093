/*
 * exec: runs an external command in the volume's directory, through the
 * spawning helper (an argument vector, never a shell), and records its
 * wall time and what it printed.
 *
 * The command: each argument of `run` with {dir} (the volume's directory,
 * also the command's working directory), {device} (the volume's block
 * device) and {volume} (its name) substituted; other braces are left
 * alone. {device} on a volume without a device (a `dirs` target) fails
 * the cell, naming the argument: an empty string would turn
 * `--filename={device}` into fio's default file in the current folder, a
 * silent measurement of something else. A shell is used only when the
 * plan's own argv says so (`run: [sh, -c, "..."]`): that is the user's
 * choice, made visibly in the plan.
 *
 * Samples: `seconds`, the wall time from fork to reaping the command
 * (spawn.h), including its start-up; then what `parse` asks for, read
 * from the command's standard output alone (stdout and stderr are
 * captured apart; stderr holds warnings, and fio's JSON would not parse
 * with them mixed in):
 *   fio-json: read_rate and write_rate in MB/s (10^6 bytes/s), the sum of
 *     jobs[].read.bw_bytes (write.bw_bytes) / 10^6, and read_iops,
 *     write_iops (IO/s), the sums of jobs[].*.iops (exec_parse.h). A
 *     direction is recorded only when some job moved data in it (a randread
 *     job yields no write_rate of 0 MB/s to drag summaries down); a job
 *     with a non-zero error fails the cell.
 *   key=value: every NAME=NUMBER line (exec_parse.h: NAME is [a-z0-9_]+)
 *     becomes metric NAME with an empty unit (rig cannot know what the
 *     command measured). A name printed twice records its last value, with
 *     a note; `seconds` is exec's own metric, so a printed `seconds` is
 *     skipped with a note; lines with invalid names are counted in a note.
 *     No such line at all is a note, not a failure.
 * Notes: the command as run, its stderr (last lines) when it printed any,
 * its stdout (last lines) with parse: none, and fio's version.
 *
 * A non-zero exit status or a signal fails the cell; the message carries
 * the command and the last lines of everything it printed. A raised
 * cancel flag stops the command (SIGTERM to its process group, SIGKILL if
 * it lingers; spawn.h) and the cell records nothing.
 *
 * The command goes through the run's spawner (ctx->sp), so it is in the
 * run's commands.log with its output and exit status, like every command
 * rig runs; the "command" note records it with the cell as well.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/exec_parse.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/spawn.h"

/* In EXEC_PARSE_* order. */
static const char *const exec_parsers[] = { "none", "fio-json", "key=value", NULL };

static const struct rig_param exec_params[] = {
	{ .name = "run", .type = PT_ARGV, .offset = offsetof(struct exec_args, run),
	  .required = 1,
	  .help = "the command as a list: [fio, \"--directory={dir}\", ...]; {dir}, {device}, "
		  "{volume} substituted (quote arguments with braces: in a YAML [...] list a "
		  "bare { starts a mapping)" },
	{ .name = "parse", .type = PT_ENUM, .offset = offsetof(struct exec_args, parse),
	  .def = "none", .choices = exec_parsers,
	  .help = "how to read the command's output: none, fio-json, key=value" },
	{ .name = NULL },
};

static const struct rig_metric exec_metrics[] = {
	{ "seconds", "s", "wall time of the command", 0 },
	{ "read_rate", "MB/s", "fio-json: read bandwidth", 0 },
	{ "write_rate", "MB/s", "fio-json: write bandwidth", 0 },
	{ "read_iops", "IO/s", "fio-json: read IOPS", 0 },
	{ "write_iops", "IO/s", "fio-json: write IOPS", 0 },
	{ NULL, NULL, NULL, 0 },
};

/* How much of an output a message or note shows. */
#define TAIL_LINES 20
#define TAIL_BYTES 4000

static void note_tail(struct rig_ctx *ctx, const char *key, const char *text, size_t len)
{
	if (!len)
		return;
	const char *t = mod_exec_tail(text, len, TAIL_LINES, TAIL_BYTES);
	struct strbuf v = STRBUF_INIT;
	if (t != text)
		sb_adds(&v, "[...]\n");
	sb_adds(&v, t);
	cell_note(ctx, key, v.buf);
	sb_release(&v);
}

static void record_fio(struct rig_ctx *ctx, const struct fio_totals *t)
{
	struct strbuf v = STRBUF_INIT;
	sb_addf(&v, "%s%s%zu job%s", t->version, *t->version ? ", " : "", t->jobs,
		t->jobs == 1 ? "" : "s");
	cell_note(ctx, "fio", v.buf);
	sb_release(&v);
	int reads = t->read_io_bytes > 0 || t->read_iops > 0 || t->read_bw_bytes > 0;
	int writes = t->write_io_bytes > 0 || t->write_iops > 0 || t->write_bw_bytes > 0;
	if (reads) {
		cell_metric(ctx, "read_rate", t->read_bw_bytes / 1e6, "MB/s");
		cell_metric(ctx, "read_iops", t->read_iops, "IO/s");
	}
	if (writes) {
		cell_metric(ctx, "write_rate", t->write_bw_bytes / 1e6, "MB/s");
		cell_metric(ctx, "write_iops", t->write_iops, "IO/s");
	}
	if (!reads && !writes)
		cell_note(ctx, "parse", "fio moved no data in any job: no rates recorded");
	if (t->bw_from_kib)
		cell_note(ctx, "parse", "fio's JSON has no bw_bytes (fio before 3.0): rates are its "
				   "bw (KiB/s) * 1024 / 10^6");
}

/* key=value: metrics collected first, so repeats keep the last value. */
struct kv {
	char **names;
	double *values;
	unsigned *times;
	size_t n, alloc, alloc_v, alloc_t;
};

static void kv_add(void *opaque, const char *name, double value)
{
	struct kv *kv = opaque;
	for (size_t i = 0; i < kv->n; i++) {
		if (!strcmp(kv->names[i], name)) {
			kv->values[i] = value;
			kv->times[i]++;
			return;
		}
	}
	XGROW(kv->names, kv->n + 1, kv->alloc);
	XGROW(kv->values, kv->n + 1, kv->alloc_v);
	XGROW(kv->times, kv->n + 1, kv->alloc_t);
	kv->names[kv->n] = xstrdup(name);
	kv->values[kv->n] = value;
	kv->times[kv->n] = 1;
	kv->n++;
}

static void record_kv(struct rig_ctx *ctx, const char *out)
{
	struct kv kv;
	memset(&kv, 0, sizeof(kv));
	size_t bad = 0;
	struct strbuf first_bad = STRBUF_INIT, v = STRBUF_INIT;
	mod_exec_parse_kv(out, kv_add, &kv, &bad, &first_bad);
	for (size_t i = 0; i < kv.n; i++) {
		if (!strcmp(kv.names[i], "seconds")) {
			cell_note(ctx, "parse", "the command printed seconds=..., which is not recorded: "
					   "`seconds` is exec's own metric (the command's wall time)");
		} else {
			cell_metric(ctx, kv.names[i], kv.values[i], "");
			if (kv.times[i] > 1) {
				sb_reset(&v);
				sb_addf(&v, "%s was printed %u times: the last value is recorded",
					kv.names[i], kv.times[i]);
				cell_note(ctx, "parse", v.buf);
			}
		}
		free(kv.names[i]);
	}
	if (bad) {
		sb_reset(&v);
		sb_addf(&v, "%zu line%s of the form name=number not recorded: names must be "
			    "[a-z0-9_]+, at most %d characters (first: '%s')",
			bad, bad == 1 ? "" : "s", EXEC_NAME_MAX, first_bad.buf);
		cell_note(ctx, "parse", v.buf);
	}
	if (!kv.n)
		cell_note(ctx, "parse", "no name=number lines in the command's standard output");
	free(kv.names);
	free(kv.values);
	free(kv.times);
	sb_release(&first_bad);
	sb_release(&v);
}

static int exec_run(struct rig_ctx *ctx, const void *a)
{
	const struct exec_args *args = a;
	char **argv = NULL;
	const char *volume = ctx->volume ? ctx->volume : "";
	int rc = mod_exec_expand(&args->run, ctx->dir, ctx->device, volume, &argv, ctx->err);
	if (rc < 0)
		return rc;
	struct strbuf text = STRBUF_INIT;
	plat_spawn_argv_text(&text, (const char *const *)argv);
	cell_note(ctx, "command", text.buf);
	if (*ctx->cancel) {
		sb_release(&text);
		mod_exec_argv_free(argv);
		return 0;
	}
	struct spawn_opts o = { .split = 1, .cancel = ctx->cancel };
	struct spawn_result r;
	/* The command's run is the measurement (its wall time is `seconds`). */
	mod_run_time_mark(ctx->time, RT_MEASURED);
	rc = plat_spawn_run_opts(ctx->sp, (const char *const *)argv, ctx->dir, &o, &r, ctx->err);
	mod_run_time_mark(ctx->time, RT_SETUP);
	mod_exec_argv_free(argv);
	if (rc < 0) {
		sb_release(&text);
		return rc;
	}
	if (r.cancelled) {
		cell_note(ctx, "interrupted", "the command was stopped (SIGTERM to its process group)");
	} else if (!r.exited || r.status != 0) {
		if (r.exited)
			sb_addf(ctx->err, "command %s failed with exit status %d", text.buf, r.status);
		else
			sb_addf(ctx->err, "command %s was killed by signal %d", text.buf, r.status);
		if (r.output_len) {
			const char *t = mod_exec_tail(r.output, r.output_len, TAIL_LINES, TAIL_BYTES);
			sb_addf(ctx->err, "; its output%s:\n%s", t != r.output ? " ends" : "", t);
		} else {
			sb_adds(ctx->err, " and printed nothing");
		}
		rc = -EIO;
	} else {
		cell_metric(ctx, "seconds", r.seconds, "s");
		note_tail(ctx, "stderr", r.stderr_text, r.stderr_len);
		if (r.truncated)
			cell_note(ctx, "output", "the command's output was longer than rig keeps: its "
					    "middle was cut");
		if (args->parse == EXEC_PARSE_NONE) {
			note_tail(ctx, "stdout", r.stdout_text, r.stdout_len);
		} else if (args->parse == EXEC_PARSE_KV) {
			record_kv(ctx, r.stdout_text);
		} else {
			struct fio_totals t;
			struct strbuf perr = STRBUF_INIT;
			rc = mod_exec_parse_fio_json(r.stdout_text, &t, &perr);
			if (rc < 0) {
				sb_addf(ctx->err, "command %s: %s%s", text.buf, perr.buf,
					r.truncated ? " (its output was cut: too long)" : "");
				if (r.stderr_len)
					sb_addf(ctx->err, "; its stderr:\n%s",
						mod_exec_tail(r.stderr_text, r.stderr_len, TAIL_LINES,
							  TAIL_BYTES));
			} else {
				record_fio(ctx, &t);
			}
			sb_release(&perr);
		}
	}
	plat_spawn_result_release(&r);
	sb_release(&text);
	return rc;
}

const struct rig_module mod_exec = {
	.name = "exec",
	.summary = "runs an external command in the volume's directory",
	.help = "Runs `run` (an argument vector, no shell) in the volume's directory with {dir}, "
		"{device} and {volume} substituted ({device} on a volume without one, such as a "
		"`dirs` target, fails the cell), records its wall time, and parses its standard "
		"output (stderr is kept apart, in a note) as asked: fio's JSON (read_rate, "
		"write_rate in MB/s = bw_bytes/10^6 summed over jobs; read_iops, write_iops), "
		"or name=number lines (each a metric named name, [a-z0-9_]+, with an empty "
		"unit). A non-zero exit status fails the cell "
		"and shows the end of the command's output.",
	.kind = MOD_OTHER,
	/* What a command measures is the plan's: the first metric it reported. */
	.headline = { NULL, 0 },
	.params = exec_params,
	.args_size = sizeof(struct exec_args),
	.metrics = exec_metrics,
	.open_metrics = 1,
	.run = exec_run,
};
