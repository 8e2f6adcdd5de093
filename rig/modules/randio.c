/*
 * randread and randwrite: random block-aligned I/O at a queue depth on one
 * file of `span` bytes. Parameter tables here; the engines land with #3.
 */
#include <stddef.h>

#include "../module.h"

struct randio_args {
	uint64_t block;
	uint64_t qd;
	uint64_t threads;
	uint64_t span;
	uint64_t time_ns;
	uint64_t ops;
};

static const struct rig_metric randio_metrics[] = {
	{ "iops", "IO/s", "completed operations per second" },
	{ "rate", "MB/s", "bytes per second" },
	{ "lat_p50", "us", "median completion latency" },
	{ "lat_p99", "us", "99th percentile latency" },
	{ "lat_p999", "us", "99.9th percentile latency" },
	{ NULL, NULL, NULL },
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
	  .def = "10s", .min = 1e6, .group = "limit", .help = "how long to run" },
	{ .name = "ops", .type = PT_UINT, .offset = offsetof(struct randio_args, ops),
	  .min = 1, .group = "limit", .help = "how many requests to complete (instead of time)" },
	{ .name = NULL },
};

static void randio_check(const void *a, struct diag *d, struct mark at)
{
	const struct randio_args *r = a;
	if (r->block && r->span && r->span < r->block)
		diag_error(d, at, "span (%llu bytes) is smaller than block (%llu bytes)",
			   (unsigned long long)r->span, (unsigned long long)r->block);
}

const struct rig_module rig_module_randread = {
	.name = "randread",
	.summary = "random reads at a queue depth on one file",
	.help = "Creates a file of `span` bytes of payload (untimed), then reads `block`-sized, "
		"block-aligned, uniformly random offsets with `qd` requests in flight on each "
		"of `threads` threads, for `time` or `ops`.",
	.kind = MOD_READS,
	.params = randio_params,
	.args_size = sizeof(struct randio_args),
	.metrics = randio_metrics,
	.check = randio_check,
};

const struct rig_module rig_module_randwrite = {
	.name = "randwrite",
	.summary = "random writes at a queue depth on one file",
	.help = "As randread, writing fresh payload to random block-aligned offsets.",
	.kind = MOD_WRITES,
	.params = randio_params,
	.args_size = sizeof(struct randio_args),
	.metrics = randio_metrics,
	.check = randio_check,
};
