/*
 * seqread and seqwrite: sequential I/O at a queue depth over one test file,
 * as the disk-mark tools measure it (CrystalDiskMark, AmorphousDiskMark and
 * KDiskMark: SEQ1M Q8T1, SEQ128K Q32T1, ... with a test file of 100 MiB or
 * 1 GiB and a few passes), on the engine of randread and randwrite
 * (randio_job.c): these modules are its sequential offsets, their
 * parameters and what a pass records.
 *
 * A cell: the test file of `span` bytes is laid out first, untimed (the
 * same file randread/randwrite use when the data is random, so a plan's
 * disk-mark set shares one file as the tools do), or found whole and
 * reused; then `passes` passes. Each thread owns a contiguous share of the
 * file's blocks and keeps `qd` requests in flight over it in order; a pass
 * is one sweep of every share (span bytes in all), or, with `time`, runs
 * that long and wraps at the end of a share. Each pass records its own
 * samples (rate, iops, latency percentiles, bytes, seconds), so a cell
 * with passes has several samples of each metric: the statistics use every
 * pass, and the reports show the best pass beside the mean, the figure the
 * tools print.
 *
 * seqwrite overwrites the laid-out file, as fio and the tools do: what a
 * pass times is sequential writes into allocated space and the sync that
 * ends the pass, not block allocation (which only the first pass would
 * pay). data: zero writes zeros (the tools' "0fill"), which compressing or
 * deduplicating storage shrinks; it has its own test file, so a file of
 * zeros is never read as payload or the other way round.
 *
 * The block must be a multiple of 4 KiB (the direct-I/O alignment on every
 * platform rig runs on, plat_direct_align) and the span a whole number of
 * blocks, at least one per request in flight: a pass then moves exactly
 * span bytes. Rejected: a span rounded down to whole blocks (passes x span
 * would no longer be what moved), and passes that continue where the last
 * ended (each pass of a sweep would not be the same work).
 */
#include <stddef.h>

#include "modules/module.h"
#include "modules/randio.h"
#include "modules/seqqd.h"

static const char *const data_choices[] = { "random", "zero", NULL };

static const struct rig_param seqqd_params[] = {
	{ .name = "block", .type = PT_SIZE, .offset = offsetof(struct seqqd_args, block),
	  .def = "1M", .min = 4096, .max = 67108864.0, .multiple = 4096,
	  .help = "size of each request" },
	{ .name = "qd", .type = PT_UINT, .offset = offsetof(struct seqqd_args, qd),
	  .def = "8", .min = 1, .max = 1024, .help = "requests in flight per thread" },
	{ .name = "threads", .type = PT_UINT, .offset = offsetof(struct seqqd_args, threads),
	  .def = "1", .min = 1, .max = 256,
	  .help = "threads, each with its own queue and its own share of the file" },
	{ .name = "span", .type = PT_SIZE, .offset = offsetof(struct seqqd_args, span),
	  .def = "1G", .min = 4096, .help = "size of the test file, a whole number of blocks" },
	{ .name = "time", .type = PT_DURATION, .offset = offsetof(struct seqqd_args, time_ns),
	  .min = 1e6,
	  .help = "how long each pass runs, wrapping at the end of the file (default: a pass is "
		  "one sweep of the file)" },
	{ .name = "passes", .type = PT_UINT, .offset = offsetof(struct seqqd_args, passes),
	  .def = "1", .min = 1, .max = 1000, .help = "passes, each measured and recorded apart" },
	{ .name = "data", .type = PT_ENUM, .offset = offsetof(struct seqqd_args, data),
	  .def = "random", .choices = data_choices,
	  .help = "what the test file holds and writes carry: payload, or zeros (the disk-mark "
		  "tools' 0fill; compressible)" },
	{ .name = "file", .type = PT_ENUM, .offset = offsetof(struct seqqd_args, fresh),
	  .def = "keep", .choices = mod_randio_file_choices, .help = RANDIO_FILE_HELP },
	{ .name = NULL },
};

static const struct rig_metric seqqd_metrics[] = {
	{ "rate", "MB/s", "bytes per second, per pass", 0 },
	{ "iops", "IO/s", "completed requests per second, per pass", 0 },
	{ "lat_p50", "us", "median completion latency, per pass", 0 },
	{ "lat_p99", "us", "99th percentile latency, per pass", 0 },
	{ "lat_p999", "us", "99.9th percentile latency, per pass", 0 },
	{ "bytes", "B", "bytes moved in the pass", 0 },
	{ "seconds", "s", "the pass's time, first submission to last completion (and sync)", 0 },
	RANDIO_PLACE_METRICS,
	{ NULL, NULL, NULL, 0 },
};

/* What seqqd_check reads (struct rig_module.check_reads). */
static const char *const seqqd_check_reads[] = { "block", "span", "threads", "qd", NULL };

static void seqqd_check(const void *args, struct diag *d, struct mark at)
{
	const struct seqqd_args *a = args;
	if (!a->block || !a->span)
		return;
	if (a->span < a->block) {
		diag_error(d, at, "span (%llu bytes) is smaller than block (%llu bytes)",
			   (unsigned long long)a->span, (unsigned long long)a->block);
	} else if (a->span % a->block) {
		diag_error(d, at, "span (%llu bytes) is not a whole number of blocks (%llu bytes): "
			   "a pass moves span bytes in whole blocks",
			   (unsigned long long)a->span, (unsigned long long)a->block);
	} else if (a->span / a->block < a->threads * a->qd) {
		diag_error(d, at, "span holds %llu blocks, fewer than threads x qd = %llu requests "
			   "in flight: give a larger span or a smaller block",
			   (unsigned long long)(a->span / a->block),
			   (unsigned long long)(a->threads * a->qd));
	}
}

static void seqqd_record(struct rig_ctx *ctx, const struct randio_pass *p)
{
	struct rig_sink *s = ctx->sink;
	s->metric(s->opaque, "rate", (double)p->bytes / p->seconds / 1e6, "MB/s");
	s->metric(s->opaque, "iops", (double)p->done / p->seconds, "IO/s");
	s->metric(s->opaque, "lat_p50", p->lat_p50, "us");
	s->metric(s->opaque, "lat_p99", p->lat_p99, "us");
	s->metric(s->opaque, "lat_p999", p->lat_p999, "us");
	s->metric(s->opaque, "bytes", (double)p->bytes, "B");
	s->metric(s->opaque, "seconds", p->seconds, "s");
}

static int seqqd_run(struct rig_ctx *ctx, const struct seqqd_args *a, int write)
{
	struct randio_spec sp = {
		.block = a->block, .qd = a->qd, .threads = a->threads, .span = a->span,
		.time_ns = a->time_ns, .passes = a->passes, .write = write, .sequential = 1,
		.data = a->data == 1 ? RANDIO_DATA_ZERO : RANDIO_DATA_RANDOM, .fresh = a->fresh,
		.record = seqqd_record,
	};
	return mod_randio_job_run(ctx, &sp);
}

static void seqqd_estimate(const struct seqqd_args *a, int write, struct est_cell *c)
{
	struct randio_spec sp = {
		.block = a->block, .qd = a->qd, .threads = a->threads, .span = a->span,
		.time_ns = a->time_ns, .passes = a->passes, .write = write, .sequential = 1,
		.data = a->data == 1 ? RANDIO_DATA_ZERO : RANDIO_DATA_RANDOM, .fresh = a->fresh,
	};
	mod_randio_estimate(&sp, c);
}

static void seqread_estimate(const void *args, struct est_cell *c)
{
	seqqd_estimate(args, 0, c);
}

static void seqwrite_estimate(const void *args, struct est_cell *c)
{
	seqqd_estimate(args, 1, c);
}

static int seqread_run(struct rig_ctx *ctx, const void *args)
{
	return seqqd_run(ctx, args, 0);
}

static int seqwrite_run(struct rig_ctx *ctx, const void *args)
{
	return seqqd_run(ctx, args, 1);
}

const struct rig_module mod_seqread = {
	.name = "seqread",
	.summary = "sequential reads at a queue depth on one file (disk-mark SEQ)",
	.help = "Lays out a test file of `span` bytes (payload, or zeros with `data: zero`; "
		"untimed, and reused by later seqread, seqwrite, randread and randwrite steps of "
		"the same span and data on the volume), then reads it sequentially in "
		"`block`-sized requests with `qd` in flight on each of `threads` threads, each "
		"thread over its own contiguous share of the file. Each of `passes` passes is one "
		"sweep of the file (span bytes), or runs for `time` when given, wrapping at the "
		"end; every pass is recorded apart, and the report shows the best pass beside "
		"the mean and its interval, as the disk-mark tools print it (CrystalDiskMark's "
		"SEQ1M Q8T1 is `block: 1M, qd: 8, threads: 1`). Engine as randread: io_uring at "
		"qd > 1 when available, else psync; RIG_ENGINE forces one.",
	.kind = MOD_READS,
	.headline = { "rate", +1 },
	.direct_io = 1,
	.params = seqqd_params,
	.args_size = sizeof(struct seqqd_args),
	.metrics = seqqd_metrics,
	.check = seqqd_check,
	.check_reads = seqqd_check_reads,
	.run = seqread_run,
	.release_state = mod_randio_release,
	.estimate = seqread_estimate,
	.files_of = &mod_randread,
};

const struct rig_module mod_seqwrite = {
	.name = "seqwrite",
	.summary = "sequential writes at a queue depth on one file (disk-mark SEQ)",
	.help = "As seqread, writing: the test file is laid out first, untimed, then each pass "
		"overwrites it sequentially and syncs it at its end, inside the pass's timing. "
		"With `data: random` every 512-byte sector written carries a fresh stamp, so no "
		"two are equal; `data: zero` writes zeros, which compressing or deduplicating "
		"storage shrinks (the disk-mark tools' 0fill: for comparison with them).",
	.kind = MOD_WRITES,
	.headline = { "rate", +1 },
	.direct_io = 1,
	.params = seqqd_params,
	.args_size = sizeof(struct seqqd_args),
	.metrics = seqqd_metrics,
	.check = seqqd_check,
	.check_reads = seqqd_check_reads,
	.run = seqwrite_run,
	.release_state = mod_randio_release,
	.estimate = seqwrite_estimate,
	.files_of = &mod_randread,
};
