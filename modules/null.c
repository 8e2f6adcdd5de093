/*
 * null: a module that measures nothing real (fio's engines/null.c), kept
 * forever so the schedule, runner, store and reports are tested without
 * root, devices or waiting. It records `value` (the parameter, so tests can
 * tell cells apart), `seconds` (its own time) and, when `files` > 0, that
 * many per-file samples. `fail: true` makes the cell fail.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "lib/strbuf.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/platform.h"

struct null_args {
	uint64_t value;
	uint64_t files;
	uint64_t time_ns;
	int fail;
};

static const struct rig_param null_params[] = {
	{ .name = "value", .type = PT_UINT, .offset = offsetof(struct null_args, value),
	  .def = "1", .help = "the number recorded as metric `value`" },
	{ .name = "files", .type = PT_UINT, .offset = offsetof(struct null_args, files),
	  .def = "0", .max = 100000, .help = "per-file samples to record" },
	{ .name = "time", .type = PT_DURATION, .offset = offsetof(struct null_args, time_ns),
	  .def = "0s", .max = 3600e9, .help = "how long to take (cancellable)" },
	{ .name = "fail", .type = PT_BOOL, .offset = offsetof(struct null_args, fail),
	  .def = "false", .help = "fail the cell, to test error paths" },
	{ .name = NULL },
};

static const struct rig_metric null_metrics[] = {
	{ "value", "1", "the `value` parameter", 0 },
	{ "seconds", "s", "time the cell took", 0 },
	{ NULL, NULL, NULL, 0 },
};

static int null_run(struct rig_ctx *ctx, const void *a)
{
	const struct null_args *n = a;
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	while (plat_clock_ns() - t0 < n->time_ns && !*ctx->cancel) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	if (n->fail) {
		mod_run_time_mark(ctx->time, RT_SETUP);
		sb_addf(ctx->err, "null module asked to fail (fail: true)");
		return -EIO;
	}
	for (uint64_t i = 0; i < n->files; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%06llu", (unsigned long long)i);
		ctx->sink->file(ctx->sink->opaque, name, 1000000 * (i + 1), 0.01 * (double)(i + 1));
	}
	double secs = (double)(mod_run_time_mark(ctx->time, RT_SETUP) - t0) / 1e9;
	ctx->sink->metric(ctx->sink->opaque, "value", (double)n->value, "1");
	ctx->sink->metric(ctx->sink->opaque, "seconds", secs, "s");
	return 0;
}

static void null_estimate(const void *a, struct est_cell *c)
{
	c->seconds = (double)((const struct null_args *)a)->time_ns / 1e9;
}

const struct rig_module mod_null = {
	.name = "null",
	.summary = "measures nothing; for testing rig itself",
	.help = "Records `value` and its own time, optionally `files` per-file samples, and "
		"fails when `fail: true`. Runs anywhere, instantly unless `time` is set.",
	.kind = MOD_OTHER,
	.flags = MOD_DISKLESS,
	.headline = { "value", +1 },
	.params = null_params,
	.args_size = sizeof(struct null_args),
	.metrics = null_metrics,
	.run = null_run,
	.estimate = null_estimate,
};
