/*
 * A plan: the typed, validated form of a plan file (plan language v1,
 * docs/plan-language.md). Parsed once with libyaml; every error of the file
 * is collected in a struct diag with file:line:column.
 *
 * Ownership: plan_parse() allocates everything reachable from struct plan;
 * plan_free() releases it. Strings are never NULL where documented as such.
 */
#ifndef RIG_PLAN_H
#define RIG_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/diag.h"
#include "modules/module.h"

struct strbuf;

#define PLAN_VERSION 1

enum target_kind { TARGET_DIRS, TARGET_IMAGE, TARGET_DISK };

struct plan_target {
	enum target_kind kind;
	struct mark mark;
	/* dirs */
	char **dirs;            /* absolute or relative paths as written */
	char **names;           /* volume names: `names:` or last path component */
	size_t ndirs;
	/* image */
	char *image_path;
	uint64_t image_size;
	int keep;
	/* disk */
	char *device;
	char *confirm;
};

enum psize_kind { PSIZE_BYTES, PSIZE_PERCENT, PSIZE_REST };

struct plan_partition {
	char *name;             /* after {n} expansion */
	char *fs;               /* canonical: apfs hfs+ exfat fat32 ext4 xfs btrfs */
	enum psize_kind size_kind;
	uint64_t bytes;         /* PSIZE_BYTES */
	double percent;         /* PSIZE_PERCENT: 0 < p <= 100 */
	int keep;               /* keep: true (first partition only, macOS): resized, not made */
	struct mark keep_mark;  /* the keep value, when given */
	struct mark mark;       /* the partition entry */
	/* Conditions (docs/plan-language.md, "Volume conditions"): COND_UNSET
	 * when left out (the platform's default, unchanged), else COND_OFF or
	 * COND_ON. snapshots: SNAP_UNSET (the snapshot step's keep), 0 for
	 * `none`, N for `keep N`. */
	int indexing, defrag;
	int snapshots;
	struct mark indexing_mark, defrag_mark, snapshots_mark;
	/* PCOND_* bits: conditions the file system --fs-map put in place of
	 * the plan's cannot honour. Warned at validation; not applied, and
	 * recorded so in the volume's facts. */
	unsigned not_applied;
	const char *mapped_from; /* the file system as written, when --fs-map changed it */
};

enum { COND_UNSET = -1, COND_OFF = 0, COND_ON = 1 };
#define SNAP_UNSET (-1)
enum { PCOND_INDEXING = 1u << 0, PCOND_DEFRAG = 1u << 1, PCOND_SNAPSHOTS = 1u << 2 };

struct plan_layout {
	char *name;
	char *scheme;           /* "gpt" (the only one in v1... see docs) */
	struct plan_partition *parts; /* count: expanded */
	size_t nparts;
	int keeps;              /* parts[0].keep: the layout keeps its first partition */
	struct mark mark;
};

enum plan_order {
	ORDER_ALTERNATE,
	ORDER_COUNTERBALANCE,
	ORDER_LATIN,
	ORDER_RANDOM,
	ORDER_SEQUENTIAL,
};

enum plan_reprovision { REPROVISION_LAYOUT, REPROVISION_REPEAT };

struct plan_cache {
	int direct;   /* default 1 */
	int flush;    /* default 1 */
	int remount;  /* default 0 */
};

enum step_kind { STEP_MODULE, STEP_CYCLE, STEP_SWEEP };

struct plan_step {
	enum step_kind kind;
	struct mark mark;            /* the step's key */
	/* STEP_MODULE */
	const struct rig_module *module;
	struct pval *params;         /* parallel to module->params */
	/* STEP_CYCLE */
	uint32_t times;
	/* STEP_SWEEP */
	char *var;                   /* without the '$' */
	char **values;               /* as written, e.g. "90%" */
	struct mark *value_marks;
	size_t nvalues;
	/* STEP_CYCLE and STEP_SWEEP */
	struct plan_step *steps;
	size_t nsteps;
};

enum report_format { FMT_HTML = 1, FMT_CSV = 2, FMT_JSON = 4 };

/* report.headline: the metric a step's figure and findings use. */
struct plan_headline {
	char *step;                  /* a module name ("enumerate") or a step path ("2.cycle.2") */
	char *metric;                /* one of that module's metrics */
	int better;                  /* +1 higher is better, -1 lower; 0: from the unit (times: lower) */
	struct mark mark;
};
/* step is either a name of a module that the plan's steps use (it starts
 * with a letter) or the path of a module step with the cycle and sweep
 * numbers taken out, as the report's step templates ("2", "2.cycle.1",
 * "3.sweep.4.sweep.1"; it starts with a digit; numbers written plainly
 * whatever the plan wrote). Each step appears once. better is 0 only for a
 * metric outside its module's table (exec's key=value names) when the plan
 * did not say: the report then decides from the samples' unit
 * (plan_unit_better). */

/* report.compare: the factor a crossed design compares across positions. */
enum plan_compare { COMPARE_AUTO, COMPARE_FS, COMPARE_VOLUME };

struct plan_report {
	char *title;                 /* NULL: the plan's name */
	char *baseline;              /* volume or layout name, or NULL */
	struct mark baseline_mark;
	char **by;                   /* factors: layout position volume fs rep cycle seq, or a sweep var */
	size_t nby;
	unsigned formats;            /* FMT_*; default html|csv */
	struct plan_headline *headlines;
	size_t nheadlines;
	enum plan_compare compare;   /* AUTO: fs when it tells the volumes apart, else volume */
};

struct plan_platform; /* plan/platform.h: a platform, what it makes and accepts */

struct plan {
	char *file;                  /* path as given */
	char *text;                  /* the file's bytes, verbatim */
	size_t text_len;
	int version;
	char *name;
	char *description;           /* may be NULL */
	int has_seed;
	uint64_t seed;
	struct plan_target target;
	struct plan_layout *layouts; /* dirs: none */
	size_t nlayouts;
	enum plan_order order;
	uint32_t repeat;
	enum plan_reprovision reprovision;
	struct plan_cache cache;
	struct plan_step *steps;
	size_t nsteps;
	struct plan_report report;
	/* The platform whose driver makes the plan's file systems; NULL (any)
	 * for dirs targets. */
	const struct plan_platform *platform;
	/* plan_options.fs_map changed the file system of some partition. */
	int fs_mapped;
	/* The --var values (plan_options.vars), as the outermost bindings of
	 * every step: vars[i].outer is &vars[i + 1]; from_var set. NULL: none.
	 * Owned (plan_free). */
	struct binding *vars;
	size_t nvars;
};

struct plan_options {
	/* Validate file systems against this platform (NULL: infer from the
	 * plan, and require that one platform can make all of them). */
	const struct plan_platform *platform;
	/* --fs-map apfs=ext4,hfs+=xfs: applied to every partition's fs
	 * before validation. NULL: none. */
	const char *fs_map;
	/* --var NAME=VALUE, as given (nvars of them; not owned): `$NAME` has
	 * VALUE in module parameters and the target wherever no sweep binds
	 * it. A NAME the plan does not use, given twice, or that is a sweep's
	 * variable is an error. */
	const char *const *vars;
	size_t nvars;
};

/* The longest variable name --var takes. */
#define PLAN_VAR_NAME_MAX 64

/* Check one --var argument, "NAME=VALUE": 0 with the length of NAME in
 * *name_len, or -1 with the reason in err (the argument is named). */
int plan_var_split(const char *arg, size_t *name_len, struct strbuf *err);

/*
 * Parse and validate a plan. Returns the plan (NULL only when the file
 * cannot be read or is not YAML at all) and adds every problem to d; the
 * plan is valid iff d->nerrors == 0 afterwards. The diag's file and text
 * are set by plan_parse_file to the plan's.
 */
struct plan *plan_parse_file(const char *path, const struct plan_options *opt,
			     struct diag *d);
struct plan *plan_parse_text(const char *name, const char *text, size_t len,
			     const struct plan_options *opt, struct diag *d);
void plan_free(struct plan *p);

/* Volume names of a plan in position order: for dirs the target's names,
 * otherwise the partitions of layout li. */
size_t plan_volume_count(const struct plan *p, size_t li);
const char *plan_volume_name(const struct plan *p, size_t li, size_t vi);
/* Number of layouts the schedule iterates: nlayouts, or 1 for dirs. */
size_t plan_layout_count(const struct plan *p);
const char *plan_layout_name(const struct plan *p, size_t li); /* "" for dirs */

/* The headline a report section uses: the entry for its template path
 * ("2.cycle.1") when there is one, else the entry for its module, else
 * NULL (the report's default for the module). */
const struct plan_headline *plan_headline_for(const struct plan *p, const char *tmpl_path,
					      const char *module);
/* Which direction of a metric is better by its unit: -1 (lower) for times
 * (s, ms, us, ns), +1 (higher) for everything else. */
int plan_unit_better(const char *unit);

const char *plan_order_name(enum plan_order o);
/* The top-level keys of a plan, NULL-terminated, in the order the parser
 * reads them (`rig help plan-language` is tested against it). */
extern const char *const plan_top_keys[];
/* The platform's name; "any" for NULL. */
const char *plan_platform_name(const struct plan_platform *d);

#endif
