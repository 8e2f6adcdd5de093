/*
 * The measurement module interface (fio's ioengine_ops, one const struct per
 * file under rig/modules/, listed in one table in modules.c).
 *
 * A module declares its parameters as data (struct rig_param). The same
 * table drives YAML parsing, validation, defaults, `$var` substitution and
 * `rig help MODULE`: plan_params_bind() turns the raw text of a step's parameters
 * (struct pval, kept by the plan) into the module's own args struct, at
 * validation time for every possible sweep value and again for every cell.
 *
 * It declares what it can do the same way (flags, the module it needs, its
 * headline metric), so that code which treats modules differently asks the
 * struct, never the name: a module's name appears only in its own file and
 * the module table (scripts/check-names keeps it so).
 *
 * A module never prints, provisions or touches the store: it gets a narrow
 * context (struct rig_ctx), reports samples through its sink and marks
 * the intervals it measures in the run's time accounting (ctx->time).
 */
#ifndef RIG_MODULE_H
#define RIG_MODULE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/diag.h"
#include "lib/units.h"

struct progress;
struct run_time;
struct strbuf;
struct spawner;
struct est_cell;

enum param_type {
	PT_UINT,     /* uint64_t: a plain integer */
	PT_BOOL,     /* int: true/false */
	PT_SIZE,     /* uint64_t bytes: 4K, 1MB */
	PT_DURATION, /* uint64_t nanoseconds: 10s */
	PT_PERCENT,  /* double: 5% -> 5.0 */
	PT_DIST,     /* struct size_dist: 1G, 2M..2G, inverse-square(1K..1M), [1M, 4M] */
	PT_ENUM,     /* int: index into choices */
	PT_ENUMLIST, /* struct enum_list: a YAML list of choices, no repeats */
	PT_ARGV,     /* struct argv_list: a YAML list of strings (a command) */
	PT_FOLDER,   /* char *: an absolute folder path, normalised (owned; NULL when
	              * not given and without a default) */
};

/*
 * What a PT_FOLDER parameter's folder is to its step, for the plan's
 * `needs` rules (plan_steps.c) and `rig help`. The folder is outside the
 * target: a source tree that steps build and change once per phase
 * (modules/source.h), and that `sync` copies to the volumes.
 */
enum folder_role {
	FOLDER_NONE,
	/* The step works in the folder instead of on the volume, and leaves
	 * there what it would leave on the volume (tree's `at`). */
	FOLDER_MAKES,
	/* The step works in the folder instead of on the volume, on what the
	 * module it needs made there (churn's `at`). */
	FOLDER_WORKS,
	/* The step reads what the module it needs made in the folder, and
	 * works on the volume (sync's `from`). */
	FOLDER_READS,
};

struct rig_param {
	const char *name;
	enum param_type type;
	size_t offset;          /* offsetof(args struct, field) */
	const char *def;        /* default as plan text, NULL = none (see required) */
	int required;
	double min, max;        /* bounds in the type's unit (bytes, ns, %, count); 0,0 = none */
	uint64_t multiple;      /* PT_SIZE: the value must be a multiple of this; 0 = any */
	const char *const *choices; /* PT_ENUM, PT_ENUMLIST: NULL-terminated */
	const char *group;      /* params sharing a group exclude each other and may share
	                         * an offset; when none is given, the first with a
	                         * default applies */
	enum folder_role folder;/* PT_FOLDER: what the folder is to the step */
	const char *help;
};

struct enum_list {
	int *items; /* indexes into choices; owned */
	size_t n;
};

struct argv_list {
	char **items; /* owned strings */
	size_t n;
};

/* A step parameter as written in the plan: a scalar or a list of scalars.
 * given with neither text nor is_seq marks a value of the wrong shape (a
 * mapping) that the plan parser has reported already: binding skips it. */
struct pval {
	int given;         /* 0: not in the plan (the default applies) */
	int is_seq;
	char *text;        /* scalar text (NULL for a sequence) */
	char **items;      /* sequence items */
	struct mark *item_marks;
	size_t nitems;
	struct mark mark;  /* the value's position */
	struct mark key_mark;
};

struct rig_metric {
	const char *name;
	const char *unit;
	const char *help;
	/* 1: a quantity the plan sets (bytes written, files created), recorded
	 * with the samples but not a measurement: it has no spread to test,
	 * so rig compare leaves it out of its statistics (and warns when two
	 * runs did different amounts of work). 0: measured. */
	int setting;
};

/* What kind of access a step is: read-type steps get the cache flush. */
enum module_kind { MOD_OTHER, MOD_WRITES, MOD_READS };

/*
 * What a module can do, for the code that must treat modules differently
 * (fio's FIO_DISKLESSIO and friends): it asks the flag, never the name.
 * Each flag is set by the modules that have the ability; 0 is the cautious
 * answer, so a new module that forgets one is treated as doing the riskier
 * thing (touching the volume, setting no level).
 */
enum module_flag {
	/* Never touches the volume (null, pause): a cell of it cut off midway
	 * left nothing there, so a resume may start again at that cell. */
	MOD_DISKLESS = 1u << 0,
	/* Sets the volume's fill level and records it as the metrics `level`
	 * (% used) and `free` (bytes): in a sweep, the other steps are read
	 * against the level it reached (reports/findings_series.c). */
	MOD_SETS_LEVEL = 1u << 1,
	/* Leaves on the volume what the module it needs leaves there (sync
	 * copies into the volume's tree folder the tree that `tree ... at:`
	 * built in a folder, and keeps its description), so a step that needs
	 * that module may follow it on the volume (enumerate after sync). */
	MOD_LEAVES_NEEDS = 1u << 2,
	/* Takes snapshots of the volume through ctx->snap (the platform
	 * driver's): the plan refuses it on a dirs target and where no volume's
	 * file system can take snapshots (plan/plan_cond.c). */
	MOD_SNAPSHOTS = 1u << 3,
	/* Its run() does nothing but run commands through ctx (ctx->snap,
	 * ctx->sp) when ctx->sp is a dry spawner: `rig plan` runs it so to
	 * list them, with no state from a module it needs. */
	MOD_DRY_RUNS = 1u << 4,
	/* Its timed work prepares the volume for the steps after it (building
	 * a tree, filling): the run's time accounting counts that work as
	 * setup, not as measured (modules/run_time.h), though its rates are
	 * recorded as the module's metrics. */
	MOD_PREPARES = 1u << 5,
};

/* The metric a report's figures and findings use for a step of the module
 * unless report.headline says otherwise, and which way is better. */
struct module_headline {
	const char *metric;     /* one of the module's metrics; NULL: the first measured */
	int better;             /* +1 higher is better, -1 lower; 0 with a NULL metric */
};

/* A binding of sweep variables to values, innermost first, for `$name`.
 * The outermost ones are the values of `--var NAME=VALUE` (from_var set):
 * they have no position in the plan, so a message about such a value points
 * at the `$name` that used it and says it came from --var. */
struct binding {
	const char *var;
	const char *value;
	struct mark mark;       /* the value's position in the plan (sweeps) */
	const struct binding *outer;
	int from_var;           /* given with --var: mark is unused */
};

/* Whether s (without the '$') is a variable's name: lowercase letters,
 * digits and '_', starting with a letter or '_'. */
int plan_params_var_name_ok(const char *s);
/* "$name" as a whole value: the name (inside text), else NULL. */
const char *plan_params_var_ref(const char *text);

/* Where a file's data sits on the volume's device, in bytes: its lowest
 * and highest offsets [lo, hi), and mid, the mean offset of its bytes. */
struct file_place {
	uint64_t lo, hi, mid;
};

/*
 * How the run's platform makes a disk image file of a folder (the pack
 * step), as data its driver provides: up to two commands, each an argv
 * in which an argument "{folder}", "{image}" or "{size}" is replaced (the
 * folder, the image's path, the size as a count of size_unit bytes with
 * size_suffix), and the image file's extension.
 */
struct rig_imaging {
	const char *ext;
	const char *const *argv[2];   /* the second may be NULL */
	uint64_t size_unit;
	const char *size_suffix;
};

/* Samples go through the sink; the runner stores each one at once. */
struct rig_sink {
	void *opaque;
	void (*metric)(void *opaque, const char *name, double value, const char *unit);
	void (*file)(void *opaque, const char *file, uint64_t bytes, double seconds);
	/* A note recorded with the cell (fallbacks, engines used). */
	void (*note)(void *opaque, const char *key, const char *value);
	/* Where the data of a file the next `file` call names sits on the
	 * volume's device (at), or why (not NULL, at NULL) it cannot be said.
	 * A NULL file is the cell's one test file (randio's), which no `file`
	 * sample follows: the runner's sink records its place as the cell's
	 * metrics file_at, file_at_min and file_at_max (% of the volume's
	 * bytes). NULL in a sink that does not keep it; modules call it
	 * through mod_place_file. */
	void (*place)(void *opaque, const char *file, const struct file_place *at, const char *why);
};

struct rig_ctx;
/* A metric and a note of the cell through ctx->sink (nothing without one). */
static inline void cell_metric(struct rig_ctx *ctx, const char *name, double value,
				 const char *unit);
static inline void cell_note(struct rig_ctx *ctx, const char *key, const char *value);
/* Ask the platform where the data of the file at path (named `file` to
 * the sink; NULL: the cell's test file) sits (plat_file_extent) and tell
 * the sink, before its `file` sample; outside any timed interval: it
 * opens the file again. */
void mod_place_file(const struct rig_ctx *ctx, const char *file, const char *path);

struct rig_volume_info;

/*
 * A volume's snapshots, for a module with MOD_SNAPSHOTS: what the runner
 * gives it from the platform driver (provision/engine.h,
 * prov_snapshots_init). The names are the driver's.
 */
struct rig_snapshots {
	int keep;            /* the partition's `snapshots:`: SNAP_UNSET (-1) not said,
	                      * 0 none (skip the volume), N keep its last N */
	const char *skip;    /* why the volume takes none (its file system, `none`), or NULL */
	/* Take a read-only snapshot; its name in *name (caller frees). 0, or a
	 * negative errno with the reason (the command and its output) in err. */
	int (*take)(void *opaque, char **name, struct strbuf *err);
	/* Delete one the run took. */
	int (*drop)(void *opaque, const char *name, struct strbuf *err);
	/* The names of the volume's snapshots now, the run's and any other
	 * (*names and each name the caller frees): 0; 1 when it cannot be
	 * known (`rig plan`'s dry run); a negative errno. NULL where the file
	 * system takes none or the backend cannot list them. */
	int (*list)(void *opaque, char ***names, size_t *n, struct strbuf *err);
	void *opaque;
};

struct rig_ctx {
	const char *dir;                 /* the volume's directory (mounted) */
	const char *device;              /* block device, or NULL */
	const char *volume;              /* volume name */
	const struct rig_imaging *imaging; /* the run's platform's way to make a disk image
	                                  * of a folder (--platform decides); NULL: none */
	uint64_t seed;                   /* derived from plan seed, step path, volume */
	uint32_t rep;                    /* repetition, from 1 */
	uint32_t cycle;                  /* 0 outside cycles */
	const char *instance;            /* the step instance within the run: the same text
	                                  * for every volume's cell of a phase, different for
	                                  * every other phase and every other run (a resume
	                                  * keeps it); a step that works in a folder once per
	                                  * phase compares it. NULL: unknown (work every time) */
	int direct;                      /* cache.direct requested */
	const char *cache_method;        /* flush applied before the cell ("drop_caches",
	                                  * "remount+drop_caches") or "" when none was:
	                                  * non-empty means the caches were emptied
	                                  * (enumerate's `cache: drop` relies on it) */
	int direct_used;                 /* the runner sets it to direct && module->direct_io;
	                                  * a module clears it when the file system refused
	                                  * direct I/O; the cache column of samples says it */
	struct rig_sink *sink;
	volatile sig_atomic_t *cancel;   /* non-zero: stop at the next operation */
	void **volstate;                 /* per-volume state shared by steps (write -> read) */
	struct spawner *sp;              /* for external commands: logged to commands.log; may be NULL */
	struct progress *progress;       /* long work reports how far it got (util/progress.h:
	                                  * plat_progress_work, as often as it likes); may be NULL */
	const struct rig_snapshots *snap;/* the volume's snapshots (MOD_SNAPSHOTS modules on image
	                                  * and disk targets), else NULL */
	struct run_time *time;           /* the run's time accounting (modules/run_time.h): the
	                                  * module marks its measured intervals
	                                  * (mod_run_time_mark RT_MEASURED, back to RT_SETUP) and
	                                  * its waits (RT_PAUSE); the rest of its cell is
	                                  * setup. May be NULL (mod_run_time_mark still reads
	                                  * the clock) */
	struct strbuf *err;              /* the reason when run() fails */
};

static inline void cell_metric(struct rig_ctx *ctx, const char *name, double value,
				 const char *unit)
{
	if (ctx->sink && ctx->sink->metric)
		ctx->sink->metric(ctx->sink->opaque, name, value, unit);
}

static inline void cell_note(struct rig_ctx *ctx, const char *key, const char *value)
{
	if (ctx->sink && ctx->sink->note)
		ctx->sink->note(ctx->sink->opaque, key, value);
}

struct rig_module {
	const char *name;
	const char *summary;             /* one line, for `rig help` */
	const char *help;                /* paragraph, for `rig help MODULE` */
	enum module_kind kind;
	unsigned flags;                  /* enum module_flag */
	struct module_headline headline;
	int direct_io;                   /* 1: its data I/O honours cache.direct */
	/* The module that must run earlier on the volume (read needs write), or
	 * NULL; it shares that module's state slot. A pointer, not a name, so
	 * that no file names another module and the compiler checks it. */
	const struct rig_module *needs;
	const struct rig_param *params;  /* terminated by an entry with name == NULL */
	size_t args_size;
	const struct rig_metric *metrics;/* terminated by name == NULL */
	int open_metrics;                /* 1: it also reports metrics named at run time
	                                  * (exec's key=value lines), so a plan may name
	                                  * metrics that are not in the table */
	/* Cross-parameter checks after binding; add errors at `at` (the step). */
	void (*check)(const void *args, struct diag *d, struct mark at);
	/* The parameters check reads, NULL-terminated; NULL: any. Validation
	 * then checks each combination of these parameters' sweep values once
	 * instead of every combination of all of them (plan/plan_bind.c), so
	 * the list must be complete (tests/plan_bind_test.c compares with
	 * checking every combination). */
	const char *const *check_reads;
	/* Run one cell. 0, or a negative errno with the reason in ctx->err.
	 * NULL: not available in this build yet (refused before a run starts). */
	int (*run)(struct rig_ctx *ctx, const void *args);
	/* Release per-volume state (*ctx->volstate) at the end of a layout. */
	void (*release_state)(void *state);
	/* What a cell writes and takes, without running it (modules/estimate.h), for
	 * `rig plan`'s estimates and the fit check. NULL: not estimated (said). */
	void (*estimate)(const void *args, struct est_cell *c);
	/* The module whose files on the volume this one uses without sharing its
	 * state (randio's test file), for the estimator's slots; NULL: its own,
	 * or its `needs`'. */
	const struct rig_module *files_of;
};

/* The module table (modules.c). */
extern const struct rig_module *const mod_all[];
const struct rig_module *mod_find(const char *name);
const struct rig_param *mod_param(const struct rig_module *m, const char *name);
/* The module's metric called name, or NULL (not in its table: an open
 * metric, or a module this build does not know when m is NULL). */
const struct rig_metric *mod_metric(const struct rig_module *m, const char *name);
size_t mod_nparams(const struct rig_module *m);
/* The module's PT_FOLDER parameter (its index in m->params in *index, may
 * be NULL), or NULL when it has none. A module has at most one. */
const struct rig_param *mod_folder_param(const struct rig_module *m, size_t *index);
/* "Needs an earlier 'tree' step ..." for `rig help MODULE`, or nothing
 * when m needs none. */
void mod_describe_needs(const struct rig_module *m, struct strbuf *sb);

/*
 * Bind raw values to an args struct (zeroed by the caller, args_size bytes).
 * vals is parallel to m->params (may be NULL: all defaults). `$name` values
 * are looked up in b; an unbound name is an error. Errors go to d at the
 * value's mark (or `at` for defaults and missing required params).
 * Returns the number of errors added. plan_params_free() releases what binding
 * allocated inside args, whether or not binding succeeded. Binding does not
 * call m->check; the plan validator does, after a binding without errors.
 */
int plan_params_bind(const struct rig_module *m, const struct pval *vals,
		const struct binding *b, void *args, struct diag *d, struct mark at);
void plan_params_free(const struct rig_module *m, void *args);
/* plan_params_bind and plan_params_free of parameter i alone (plan_params_bind is these
 * for every i in order; what one parameter binds and reports depends only
 * on its own value, the variables that value names and which of the
 * parameters were given). The validator binds each parameter once per
 * value of its variables instead of once per combination. */
int plan_params_bind_param(const struct rig_module *m, const struct pval *vals, size_t i,
		      const struct binding *b, void *args, struct diag *d, struct mark at);
void plan_params_free_param(const struct rig_param *p, void *args);
/* The bytes of p's field in the args struct (at p->offset). */
size_t plan_params_field_size(const struct rig_param *p);
/* Describe a parameter's type for help and errors: "size (e.g. 4K, 1MB)". */
const char *plan_params_type_name(enum param_type t);
/* A PT_FOLDER value as binding stores it: absolute, no `.` or `..`
 * component, no repeated or trailing '/' ("/var//tmp/x/" is "/var/tmp/x").
 * A malloc'd string, or NULL with the reason in *why (a static string). */
char *plan_params_folder_normalise(const char *text, const char **why);

#endif
