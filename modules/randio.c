/*
 * randread and randwrite: random block-aligned I/O at a queue depth on one
 * file of `span` bytes (fio's randread/randwrite with one job per thread).
 *
 * The job itself (the test file, laid out untimed and reused by later
 * cells of the same span; the engines; the start line; the timing with a
 * write's final sync inside it) is randio_job.c's, shared with seqread and
 * seqwrite: these modules are its random offsets, their parameters and
 * what a pass records (iops, rate, latency percentiles). Offsets are
 * uniform over the floor(span / block) blocks, from a stream per worker
 * (randio.h), so a cell's requests are reproducible from its seed; the
 * streams go on from pass to pass, so each pass draws new offsets.
 */
#include <stddef.h>

#include "modules/module.h"
#include "modules/randio.h"

static const struct rig_metric randio_metrics[] = {
	{ "iops", "IO/s", "completed operations per second", 0 },
	{ "rate", "MB/s", "bytes per second", 0 },
	{ "lat_p50", "us", "median completion latency", 0 },
	{ "lat_p99", "us", "99th percentile latency", 0 },
	{ "lat_p999", "us", "99.9th percentile latency", 0 },
	RANDIO_PLACE_METRICS,
	{ NULL, NULL, NULL, 0 },
};

static const struct rig_param randio_params[] = {
	{ .name = "block", .type = PT_SIZE, .offset = offsetof(struct randio_args, block),
	  .def = "4K", .min = 512, .max = 67108864.0, .help = "size of each request" },
	{ .name = "qd", .type = PT_UINT, .offset = offsetof(struct randio_args, qd),
	  .def = "1", .min = 1, .max = 1024, .help = "requests in flight per thread" },
	{ .name = "threads", .type = PT_UINT, .offset = offsetof(struct randio_args, threads),
	  .def = "1", .min = 1, .max = 256, .help = "threads, each with its own queue" },
	{ .name = "span", .type = PT_SIZE, .offset = offsetof(struct randio_args, span),
	  .def = "1G", .min = 4096, .help = "size of the test file the offsets fall in" },
	{ .name = "time", .type = PT_DURATION, .offset = offsetof(struct randio_args, time_ns),
	  .def = "10s", .min = 1e6, .group = "limit", .help = "how long each pass runs" },
	{ .name = "ops", .type = PT_UINT, .offset = offsetof(struct randio_args, ops),
	  .min = 1, .group = "limit",
	  .help = "how many requests each pass completes (instead of time)" },
	{ .name = "passes", .type = PT_UINT, .offset = offsetof(struct randio_args, passes),
	  .def = "1", .min = 1, .max = 1000,
	  .help = "passes, each measured and recorded apart (the disk-mark tools' passes)" },
	{ .name = "file", .type = PT_ENUM, .offset = offsetof(struct randio_args, fresh),
	  .def = "keep", .choices = mod_randio_file_choices, .help = RANDIO_FILE_HELP },
	{ .name = NULL },
};

/* What randio_check reads (struct rig_module.check_reads). */
static const char *const randio_check_reads[] = { "block", "span", NULL };

static void randio_check(const void *a, struct diag *d, struct mark at)
{
	const struct randio_args *r = a;
	if (r->block && r->span && r->span < r->block)
		diag_error(d, at, "span (%llu bytes) is smaller than block (%llu bytes)",
			   (unsigned long long)r->span, (unsigned long long)r->block);
}

static void randio_record(struct rig_ctx *ctx, const struct randio_pass *p)
{
	struct rig_sink *s = ctx->sink;
	s->metric(s->opaque, "iops", (double)p->done / p->seconds, "IO/s");
	s->metric(s->opaque, "rate", (double)p->bytes / p->seconds / 1e6, "MB/s");
	s->metric(s->opaque, "lat_p50", p->lat_p50, "us");
	s->metric(s->opaque, "lat_p99", p->lat_p99, "us");
	s->metric(s->opaque, "lat_p999", p->lat_p999, "us");
}

static int randio_run(struct rig_ctx *ctx, const struct randio_args *a, int write)
{
	struct randio_spec sp = {
		.block = a->block, .qd = a->qd, .threads = a->threads, .span = a->span,
		.time_ns = a->time_ns, .ops = a->ops, .passes = a->passes, .write = write,
		.data = RANDIO_DATA_RANDOM, .fresh = a->fresh, .record = randio_record,
	};
	return mod_randio_job_run(ctx, &sp);
}

static int randread_run(struct rig_ctx *ctx, const void *args)
{
	return randio_run(ctx, args, 0);
}

static int randwrite_run(struct rig_ctx *ctx, const void *args)
{
	return randio_run(ctx, args, 1);
}

static void randio_estimate_args(const struct randio_args *a, int write, struct est_cell *c)
{
	struct randio_spec sp = {
		.block = a->block, .qd = a->qd, .threads = a->threads, .span = a->span,
		.time_ns = a->ops ? 0 : a->time_ns, .ops = a->ops, .passes = a->passes,
		.write = write, .data = RANDIO_DATA_RANDOM, .fresh = a->fresh,
	};
	mod_randio_estimate(&sp, c);
}

static void randread_estimate(const void *args, struct est_cell *c)
{
	randio_estimate_args(args, 0, c);
}

static void randwrite_estimate(const void *args, struct est_cell *c)
{
	randio_estimate_args(args, 1, c);
}

const struct rig_module mod_randread = {
	.name = "randread",
	.summary = "random reads at a queue depth on one file",
	.help = "Creates a file of `span` bytes of payload (untimed; reused by later randread, "
		"randwrite, seqread and seqwrite steps of the same span on the volume), then "
		"reads `block`-sized, block-aligned, uniformly random offsets with `qd` requests "
		"in flight on each of `threads` threads, for `time` or `ops`, in `passes` passes "
		"recorded apart (the disk-mark tools' passes; the report shows the best beside "
		"the mean). Engine: io_uring on Linux at qd > 1 when available, otherwise "
		"threads doing pread/pwrite (psync); the environment variable RIG_ENGINE=psync "
		"or RIG_ENGINE=io_uring forces one.",
	.kind = MOD_READS,
	.headline = { "iops", +1 },
	.direct_io = 1,
	.params = randio_params,
	.args_size = sizeof(struct randio_args),
	.metrics = randio_metrics,
	.check = randio_check,
	.check_reads = randio_check_reads,
	.run = randread_run,
	.release_state = mod_randio_release,
	.estimate = randread_estimate,
};

const struct rig_module mod_randwrite = {
	.name = "randwrite",
	.summary = "random writes at a queue depth on one file",
	.help = "As randread, writing payload to random block-aligned offsets: each request's "
		"buffer is filled once before the clock, and every write gives each of its "
		"512-byte sectors a fresh stamp, so no two sectors written are equal. The file "
		"is synced at the end, inside the timing.",
	.kind = MOD_WRITES,
	.headline = { "iops", +1 },
	.direct_io = 1,
	.params = randio_params,
	.args_size = sizeof(struct randio_args),
	.metrics = randio_metrics,
	.check = randio_check,
	.check_reads = randio_check_reads,
	.run = randwrite_run,
	.release_state = mod_randio_release,
	.estimate = randwrite_estimate,
	.files_of = &mod_randread,
};
