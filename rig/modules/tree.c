/*
 * tree, enumerate, churn: a directory tree of files with a size
 * distribution, walked and aged (seeds 001/002). Parameter tables here; the
 * measurement lands with issue #6.
 */
#include <stddef.h>

#include "../module.h"

struct tree_args {
	uint64_t files;
	uint64_t dirs;
	uint64_t depth;
	struct size_dist sizes;
};

struct churn_args {
	double fraction;
};

static const struct rig_param tree_params[] = {
	{ .name = "files", .type = PT_UINT, .offset = offsetof(struct tree_args, files),
	  .def = "10000", .min = 1, .max = 1e9, .help = "number of files" },
	{ .name = "dirs", .type = PT_UINT, .offset = offsetof(struct tree_args, dirs),
	  .def = "100", .min = 0, .max = 1e8, .help = "number of directories, spread evenly over the levels" },
	{ .name = "depth", .type = PT_UINT, .offset = offsetof(struct tree_args, depth),
	  .def = "2", .min = 0, .max = 64, .help = "levels of directories below the tree's root" },
	{ .name = "sizes", .type = PT_DIST, .offset = offsetof(struct tree_args, sizes),
	  .def = "inverse-square(1K..1M)", .min = 0,
	  .help = "file sizes: fixed, a range (log-uniform), a list, or inverse-square(MIN..MAX)" },
	{ .name = NULL },
};

static void tree_check(const void *a, struct diag *d, struct mark at)
{
	const struct tree_args *t = a;
	if (t->depth > 0 && t->dirs < t->depth)
		diag_error(d, at, "dirs (%llu) must be at least depth (%llu): every level needs a directory",
			   (unsigned long long)t->dirs, (unsigned long long)t->depth);
	if (t->depth == 0 && t->dirs > 0)
		diag_error(d, at, "dirs (%llu) needs depth of 1 or more",
			   (unsigned long long)t->dirs);
}

static const struct rig_metric tree_metrics[] = {
	{ "files_per_s", "files/s", "files created per second" },
	{ "rate", "MB/s", "payload bytes per second" },
	{ "seconds", "s", "total time" },
	{ "files", "files", "files created" },
	{ "bytes", "B", "payload bytes written" },
	{ NULL, NULL, NULL },
};

static const struct rig_metric enumerate_metrics[] = {
	{ "seconds", "s", "time to walk and stat the whole tree" },
	{ "entries_per_s", "entries/s", "entries visited per second" },
	{ "entries", "entries", "files and directories visited" },
	{ NULL, NULL, NULL },
};

static const struct rig_param churn_params[] = {
	{ .name = "fraction", .type = PT_PERCENT, .offset = offsetof(struct churn_args, fraction),
	  .def = "5%", .min = 0.0001, .max = 100, .help = "share of the tree's files replaced" },
	{ .name = NULL },
};

static const struct rig_metric churn_metrics[] = {
	{ "seconds", "s", "total time" },
	{ "files_per_s", "files/s", "files replaced per second" },
	{ "files", "files", "files replaced" },
	{ NULL, NULL, NULL },
};

static const struct rig_param no_params[] = { { .name = NULL } };

const struct rig_module rig_module_tree = {
	.name = "tree",
	.summary = "builds a directory tree of files with a size distribution",
	.help = "Creates `dirs` directories over `depth` levels and `files` files spread over "
		"the leaf directories, names, sizes and payload all from the seed, so every "
		"volume gets the identical tree.",
	.kind = MOD_WRITES,
	.params = tree_params,
	.args_size = sizeof(struct tree_args),
	.metrics = tree_metrics,
	.check = tree_check,
};

const struct rig_module rig_module_enumerate = {
	.name = "enumerate",
	.summary = "walks the whole tree (fts), stats every entry, checks the counts",
	.help = "Walks the tree the last `tree` step built, stats every entry as backup tools "
		"do, and checks the counts against what the tree holds.",
	.kind = MOD_READS,
	.needs = "tree",
	.params = no_params,
	.args_size = 0,
	.metrics = enumerate_metrics,
};

const struct rig_module rig_module_churn = {
	.name = "churn",
	.summary = "replaces a random fraction of the tree's files, each atomically",
	.help = "Replaces `fraction` of the tree's files, chosen by the seed per cycle: each new "
		"file is written to a temporary name, synced and renamed over the old one.",
	.kind = MOD_WRITES,
	.needs = "tree",
	.params = churn_params,
	.args_size = sizeof(struct churn_args),
	.metrics = churn_metrics,
};
