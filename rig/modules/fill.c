/*
 * fill and meta: fill levels (seed 004) and metadata operations in one big
 * directory. Parameter tables here; the measurement lands with issue #6.
 */
#include <stddef.h>

#include "../module.h"

struct fill_args {
	double to;
};

struct meta_args {
	uint64_t files;
	struct enum_list ops;
};

static const char *const meta_ops[] = { "create", "stat", "rename", "unlink", NULL };

static const struct rig_param fill_params[] = {
	{ .name = "to", .type = PT_PERCENT, .offset = offsetof(struct fill_args, to),
	  .required = 1, .min = 0, .max = 100,
	  .help = "the volume's used space to reach, as % of its capacity" },
	{ .name = NULL },
};

static const struct rig_metric fill_metrics[] = {
	{ "seconds", "s", "time to write (or remove) filler" },
	{ "rate", "MB/s", "filler bytes written per second" },
	{ "level", "%", "used space reached" },
	{ NULL, NULL, NULL },
};

static const struct rig_param meta_params[] = {
	{ .name = "files", .type = PT_UINT, .offset = offsetof(struct meta_args, files),
	  .def = "10000", .min = 1, .max = 1e9, .help = "files in the one directory" },
	{ .name = "ops", .type = PT_ENUMLIST, .offset = offsetof(struct meta_args, ops),
	  .choices = meta_ops, /* not given: all of them, in this order */
	  .help = "operations to time, in this order (default: all)" },
	{ .name = NULL },
};

static const struct rig_metric meta_metrics[] = {
	{ "create_per_s", "ops/s", "files created per second" },
	{ "stat_per_s", "ops/s", "files stat'ed per second, random order" },
	{ "rename_per_s", "ops/s", "files renamed per second" },
	{ "unlink_per_s", "ops/s", "files removed per second" },
	{ NULL, NULL, NULL },
};

const struct rig_module rig_module_fill = {
	.name = "fill",
	.summary = "writes filler until the volume's used space reaches a level",
	.help = "Writes large filler files of payload until the used share of the volume "
		"(statvfs) reaches `to`; a lower level removes filler. Filler is removed when "
		"the plan finishes.",
	.kind = MOD_WRITES,
	.params = fill_params,
	.args_size = sizeof(struct fill_args),
	.metrics = fill_metrics,
};

const struct rig_module rig_module_meta = {
	.name = "meta",
	.summary = "metadata operations in one large directory",
	.help = "Creates `files` files in one directory, stats them in random order, renames "
		"each and unlinks each, timing each operation kind.",
	.kind = MOD_WRITES,
	.params = meta_params,
	.args_size = sizeof(struct meta_args),
	.metrics = meta_metrics,
};
