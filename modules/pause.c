/*
 * pause: lets the volume settle (the quiescence between churn cycles of
 * the enumeration article 001). Sleeps in short slices so Ctrl-C is honoured promptly.
 */
#include <stddef.h>
#include <time.h>

#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/platform.h"
#include "platform/progress.h"

struct pause_args {
	uint64_t time_ns;
};

static const struct rig_param pause_params[] = {
	{ .name = "time", .type = PT_DURATION, .offset = offsetof(struct pause_args, time_ns),
	  .def = "10s", .min = 0, .max = 86400e9, .help = "how long to wait" },
	{ .name = NULL },
};

static const struct rig_metric pause_metrics[] = { { NULL, NULL, NULL, 0 } };

static int pause_run(struct rig_ctx *ctx, const void *a)
{
	const struct pause_args *p = a;
	uint64_t start = mod_run_time_mark(ctx->time, RT_PAUSE), end = start + p->time_ns;
	for (;;) {
		if (*ctx->cancel)
			return 0;
		uint64_t now = plat_clock_ns();
		plat_progress_work(ctx->progress, "pause", now - start, p->time_ns, PROGRESS_NS);
		if (now >= end)
			return 0;
		uint64_t left = end - now, slice = 100000000u;
		if (left < slice)
			slice = left;
		struct timespec ts = { (time_t)(slice / 1000000000u), (long)(slice % 1000000000u) };
		nanosleep(&ts, NULL);
	}
}

static void pause_estimate(const void *a, struct est_cell *c)
{
	c->seconds = (double)((const struct pause_args *)a)->time_ns / 1e9;
}

const struct rig_module mod_pause = {
	.name = "pause",
	.summary = "lets the volume settle",
	.help = "Waits `time` without touching the volume (records no metrics).",
	.kind = MOD_OTHER,
	.flags = MOD_DISKLESS,
	.params = pause_params,
	.args_size = sizeof(struct pause_args),
	.metrics = pause_metrics,
	.run = pause_run,
	.estimate = pause_estimate,
};
