/*
 * exec: runs an external command in the volume's directory, through the
 * spawning helper (an argument vector, never a shell). Parameter table here;
 * the module lands with issue #6.
 */
#include <stddef.h>

#include "../module.h"

struct exec_args {
	struct argv_list run;
	int parse;
};

static const char *const exec_parsers[] = { "none", "fio-json", "key=value", NULL };

static const struct rig_param exec_params[] = {
	{ .name = "run", .type = PT_ARGV, .offset = offsetof(struct exec_args, run),
	  .required = 1,
	  .help = "the command as a list: [fio, --directory={dir}, ...]; {dir}, {device}, {volume} substituted" },
	{ .name = "parse", .type = PT_ENUM, .offset = offsetof(struct exec_args, parse),
	  .def = "none", .choices = exec_parsers,
	  .help = "how to read the command's output: none, fio-json, key=value" },
	{ .name = NULL },
};

static const struct rig_metric exec_metrics[] = {
	{ "seconds", "s", "wall time of the command" },
	{ "read_rate", "MB/s", "fio-json: read bandwidth" },
	{ "write_rate", "MB/s", "fio-json: write bandwidth" },
	{ "read_iops", "IO/s", "fio-json: read IOPS" },
	{ "write_iops", "IO/s", "fio-json: write IOPS" },
	{ NULL, NULL, NULL },
};

const struct rig_module rig_module_exec = {
	.name = "exec",
	.summary = "runs an external command in the volume's directory",
	.help = "Runs `run` (an argument vector, no shell) with {dir}, {device} and {volume} "
		"substituted, records its wall time, and parses its output as asked: fio's JSON, "
		"or name=number lines (each becomes a metric).",
	.kind = MOD_OTHER,
	.params = exec_params,
	.args_size = sizeof(struct exec_args),
	.metrics = exec_metrics,
};
