/*
 * write and read: a set of files written whole, then read back (Stibium's
 * method). Parameter tables here; the measurement lands with issue #3.
 */
#include <stddef.h>

#include "../module.h"

struct seqio_args {
	uint64_t files;
	struct size_dist sizes;
	uint64_t block;
	int sync;
};

static const struct rig_metric seqio_metrics[] = {
	{ "rate", "MB/s", "total bytes / total time" },
	{ "rate_median_file", "MB/s", "median of the per-file rates" },
	{ "rate_fit", "MB/s", "rate from the least-squares fit time = overhead + bytes/rate" },
	{ "overhead_fit", "s", "per-file overhead from the same fit" },
	{ "bytes", "B", "bytes transferred" },
	{ "seconds", "s", "total time" },
	{ NULL, NULL, NULL },
};

static const struct rig_param write_params[] = {
	{ .name = "files", .type = PT_UINT, .offset = offsetof(struct seqio_args, files),
	  .def = "1", .min = 1, .max = 10000000, .help = "number of files in the set" },
	{ .name = "size", .type = PT_DIST, .offset = offsetof(struct seqio_args, sizes),
	  .def = "1G", .min = 1, .group = "size",
	  .help = "every file's size, or a list of sizes used in turn" },
	{ .name = "sizes", .type = PT_DIST, .offset = offsetof(struct seqio_args, sizes),
	  .min = 1, .group = "size",
	  .help = "a range drawn log-uniformly per file (2M..2G), a list, or inverse-square(MIN..MAX)" },
	{ .name = "block", .type = PT_SIZE, .offset = offsetof(struct seqio_args, block),
	  .def = "1M", .min = 512, .max = 1073741824.0, .help = "size of each write" },
	{ .name = "sync", .type = PT_BOOL, .offset = offsetof(struct seqio_args, sync),
	  .def = "true", .help = "fsync (F_FULLFSYNC on macOS) each file before closing it, inside the timing" },
	{ .name = NULL },
};

static const struct rig_param read_params[] = {
	{ .name = "block", .type = PT_SIZE, .offset = offsetof(struct seqio_args, block),
	  .def = "1M", .min = 512, .max = 1073741824.0, .help = "size of each read" },
	{ .name = NULL },
};

const struct rig_module rig_module_write = {
	.name = "write",
	.summary = "sequential write of a set of files, each written whole, synced, closed",
	.help = "Writes `files` files of pseudo-random payload in `block` units, each synced "
		"and closed, in an order shuffled per repetition. Sizes are fixed (size), "
		"cycled from a list, or drawn per file from a range (sizes).",
	.kind = MOD_WRITES,
	.params = write_params,
	.args_size = sizeof(struct seqio_args),
	.metrics = seqio_metrics,
};

const struct rig_module rig_module_read = {
	.name = "read",
	.summary = "sequential read of the set `write` left on the volume",
	.help = "Reads back, whole and in `block` units, the files the last `write` step "
		"wrote on the same volume.",
	.kind = MOD_READS,
	.needs = "write",
	.params = read_params,
	.args_size = sizeof(struct seqio_args),
	.metrics = seqio_metrics,
};
