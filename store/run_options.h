/*
 * The run's options record: what a run was started with, kept in its run
 * row (options_json), so that a resume runs with them and the reports
 * parse the stored plan as it was run.
 */
#ifndef RIG_STORE_RUN_OPTIONS_H
#define RIG_STORE_RUN_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

struct plan_platform;
struct strbuf;

/* The options a run was started with, as its run row's options_json
 * records them (written and read here): how the plan was parsed, and what
 * the backend was given. A resume runs with them; the reports parse the
 * stored plan with them, so that a plan rehearsed with --fs-map is the plan
 * as it was run. */
struct store_run_options {
	const struct plan_platform *platform; /* as recorded; NULL (any) when it is not */
	char *fs_map;                /* --fs-map as given, or NULL */
	char **vars;                 /* --var NAME=VALUE as given (nvars; NULL: none) */
	size_t nvars;
	uint64_t image_size;         /* --image-size, 0 none */
	unsigned allow;              /* --allow's flags */
	int force;                   /* --force */
	int no_fit_check;            /* --no-fit-check */
	char *cwd;                   /* the folder the run was started in, or NULL */
	unsigned seeds;              /* plan_schedule_cell_seed's scheme; SEED_LAYOUT when absent */
};
/* Fill o from json (may be NULL). 0, or -EINVAL when json is not a JSON
 * object: a store of rig 0.1 (results store schema 1) has no options. o is
 * zeroed first; release it with store_run_options_release in either case. */
int store_run_options_parse(const char *json, struct store_run_options *o);
void store_run_options_release(struct store_run_options *o);
/* o as its JSON record, appended to j: what store_run_options_parse reads
 * back (cwd NULL: the current folder's). */
void store_run_options_json(const struct store_run_options *o, struct strbuf *j);

#endif
