/*
 * Internal to the plan parser (plan.c, plan_target.c, plan_steps.c,
 * plan_report.c): the parse context and the helpers that turn libyaml nodes
 * into checked values, each reporting its own errors (file:line:col via
 * struct diag) and returning NULL or -1 so that parsing continues and every
 * error of a file is collected.
 */
#ifndef RIG_PLAN_PARSE_H
#define RIG_PLAN_PARSE_H

#include <yaml.h>

#include "plan/plan.h"

/* Limits that keep a plan's parse finite and small whatever the text:
 * YAML aliases can make a list of steps contain itself, or double a list
 * at every level (2^n steps from n lines). Real plans are far below them. */
#define PLAN_MAX_DEPTH 32      /* cycle and sweep blocks inside each other */
#define PLAN_MAX_STEPS 10000   /* steps in all, each use of an alias counted */

struct pctx {
	yaml_document_t *doc;
	struct diag *d;
	struct plan *p;
	const struct plan_options *opt;
	/* Sweep variables declared anywhere in the plan (report.by may name
	 * them); not owned, they point into the plan's steps. */
	const char **sweep_vars;
	size_t nsweep_vars, sweep_vars_alloc;
	int has_cycle;
	/* Modules seen so far in plan order (indexes into mod_all), for
	 * `needs`. */
	unsigned char *seen;
	/* Folders that steps with a FOLDER_MAKES parameter (`tree ... at:`)
	 * fill earlier in plan order, for `needs` at a folder. */
	struct plan_source *sources;
	size_t nsources, sources_alloc;
	/* The target's kind was recognised (its details may still be wrong). */
	int target_known;
	/* Every partition entry's file system, for the platform check. */
	struct fsref *fsrefs;
	size_t nfsrefs, fsrefs_alloc;
	/* --fs-map, parsed (static file-system name strings). */
	const char *map_from[8], *map_to[8];
	size_t nmap;
	struct mark device_mark;
	const char *device_via;  /* the --var the device came from, or NULL */
	/* Step lists being parsed, outermost first: a list met again on this
	 * path contains itself through an alias. */
	yaml_node_t *step_path[PLAN_MAX_DEPTH + 1]; /* the plan's own list, then blocks */
	size_t depth;
	/* Steps parsed so far, each use of an alias counted. */
	size_t nsteps_seen;
	/* The plan has more than PLAN_MAX_STEPS steps with its aliases
	 * expanded (counted before parsing them): each list of steps is
	 * parsed at its first use only, for its own messages. */
	int lists_once;
	/* Combinations of sweep values validated so far (plan_bind.c). */
	uint64_t nbinds;
	int too_large;  /* "too large" reported once */
	/* Which of p->vars the plan used ($name outside any sweep, or a
	 * sweep's variable, which is an error); parallel to p->vars. */
	unsigned char *var_used;
	char via_note[PLAN_VAR_NAME_MAX + 40]; /* " (the value of $x, from --var)" */
	/* Per node of the document: what its own messages were last reported
	 * for (plan_node_once); nodes_memo[id - 1]. */
	const void **node_memo;
	size_t nnodes;
};

struct plan_source {
	char *folder;                 /* normalised (plan_params_folder_normalise); owned */
	const struct rig_module *m;   /* the step that fills it */
};

struct fsref {
	const char *fs;     /* canonical, after --fs-map (static string) */
	const char *orig;   /* as written, when --fs-map changed it; else NULL */
	struct mark mark;   /* the fs value */
	const char *name;   /* the partition entry's name as written (static for the parse) */
};

/* A key of a mapping: filled by plan_map_keys(). */
struct key {
	const char *name;
	yaml_node_t *key;   /* NULL: not given */
	yaml_node_t *val;
};

struct mark plan_node_mark(const yaml_node_t *n);
yaml_node_t *plan_node_at(struct pctx *c, int id);
/* "a mapping", "a list", "a value" */
const char *plan_node_kind(const yaml_node_t *n);
/* A plain empty, ~ or null scalar. */
int plan_node_is_null(const yaml_node_t *n);
/* The scalar's text (NUL-terminated by libyaml), or NULL. */
const char *plan_node_text(const yaml_node_t *n);
/* 1 the first time node n is met as `what`, 0 when the node met before was
 * last met as `what` too. A step list used through aliases is parsed at
 * every use (up to PLAN_MAX_STEPS); the messages that depend only on a
 * node and `what` were reported at its first use and would be dropped as
 * duplicates, so they need not be worked out again (suggestions compare a
 * word with every name). `what` is the address of a static object. */
int plan_node_once(struct pctx *c, const yaml_node_t *n, const void *what);

/*
 * Walk mapping `map`, filling keys[] (names set by the caller). Unknown
 * keys (with a suggestion), duplicates and non-scalar keys are errors that
 * mention `where` ("in target", "in step 'write'"). Returns 0, or -1 when
 * map is not a mapping (reported as "expected a mapping for WHAT").
 */
int plan_map_keys(struct pctx *c, yaml_node_t *map, struct key *keys, size_t nkeys,
	     const char *where, const char *what);
/* plan_map_keys without its messages, for a map whose messages were
 * reported (plan_node_once). */
int plan_map_keys_quiet(struct pctx *c, yaml_node_t *map, struct key *keys, size_t nkeys);
/* Report "missing key 'NAME' WHERE" at map unless k was given. Returns 1 if given. */
int plan_require_key(struct pctx *c, const struct key *k, yaml_node_t *map, const char *where);

/* A scalar value of a key; NULL (reported) for null, lists and mappings.
 * `what` is the expected thing ("a size"). */
const char *plan_key_scalar(struct pctx *c, const struct key *k, const char *what);
int plan_key_uint(struct pctx *c, const struct key *k, uint64_t min, uint64_t max, uint64_t *out);
int plan_key_bool(struct pctx *c, const struct key *k, int *out);
int plan_key_choice(struct pctx *c, const struct key *k, const char *const *choices, int *out);
/* The list value of a key (may be empty), or NULL (reported). */
yaml_node_t *plan_key_seq(struct pctx *c, const struct key *k, const char *what);
/* Whether s is a valid volume, layout or partition name: 1..64 characters
 * of [A-Za-z0-9._+-], starting with a letter or digit. */
int plan_name_ok(const char *s);
/* Append a NULL-terminated list of choices: "alternate, latin, ...". */
struct strbuf;
void plan_join_choices(struct strbuf *sb, const char *const *choices);

/* A fixed report factor (layout, position, ...): sweep variables may not
 * take these names. */
int plan_factor_reserved(const char *name);

/* Target, layouts and the platform (plan_target.c). */
void plan_parse_fs_map(struct pctx *c);
void plan_parse_target(struct pctx *c, yaml_node_t *key, yaml_node_t *val);
void plan_parse_layouts(struct pctx *c, const struct key *k);
void plan_check_platform(struct pctx *c);
/* The rules of `keep` that need the whole plan (after plan_check_platform). */
void plan_check_keep(struct pctx *c);

/* Volume conditions (plan_cond.c): a partition entry's `indexing`,
 * `defrag` and `snapshots` keys (each may be absent) into pt; after
 * plan_check_platform, each condition against what the platform and file
 * system can do, and the snapshot step against the target. */
void plan_parse_conditions(struct pctx *c, const struct key *indexing, const struct key *defrag,
			   const struct key *snapshots, struct plan_partition *pt);
void plan_check_conditions(struct pctx *c);
/* --var values (plan_vars.c). plan_parse_vars fills c->p->vars from the
 * options (before the target and steps); plan_var_use returns the value of
 * --var NAME and marks it used, or NULL when none gives NAME;
 * plan_check_vars reports the --var names the plan never used. */
void plan_parse_vars(struct pctx *c);
const struct binding *plan_var_use(struct pctx *c, const char *name);
void plan_check_vars(struct pctx *c);
void plan_vars_free(struct plan *p);

/* The description's stated counts ("160 test files") against the plan's
 * (plan_describe.c): a warning at `at` (the description) for each that no
 * step, cycle, sweep, repeat or layout has. */
void plan_check_description(struct pctx *c, struct mark at);

/* The step list (plan_steps.c). */
void plan_parse_steps(struct pctx *c, yaml_node_t *seq, struct plan_step **out, size_t *n);
void plan_steps_free(struct plan_step *s, size_t n);

/* Validate module step st by binding its parameters (plan_bind.c) for the
 * values of sweeps[0..nsweeps), the enclosing sweeps whose variables it
 * names (each once). values_only: it has a misspelt key; report only the
 * values' problems. Counts the combinations against the plan's budget. */
void plan_bind_step(struct pctx *c, const struct plan_step *st,
		    const struct plan_step *const *sweeps, size_t nsweeps, int values_only);

/* The report section (plan_report.c), after the steps it refers to. */
void plan_parse_report(struct pctx *c, const struct key *rk);

/* The largest `repeat` and cycle `times`: more is a typo, and would make a
 * schedule too large to hold. */
#define PLAN_MAX_COUNT 1000000

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

#endif
