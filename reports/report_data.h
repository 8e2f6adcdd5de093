/*
 * A run, read from its results store into memory for the reports: the run
 * row, volumes, cells, samples, file samples, notes, commands and events,
 * the plan's report section (re-parsed from the stored plan text with the
 * options the run recorded), and the
 * summary groups with their statistics (reports/summary.c computes them).
 *
 * Repeated strings (layouts, steps, metrics, units, cache methods, ...)
 * are interned: two equal strings are the same pointer, and samples carry
 * small ids instead of text, so a million samples cost 24 bytes each.
 * Everything belongs to the struct rdata and is freed by rep_rdata_free.
 */
#ifndef RIG_REPORTS_REPORT_DATA_H
#define RIG_REPORTS_REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "reports/stats.h"

struct store;
struct strbuf;
struct plan;
struct rig_module;
struct rd_finding;
struct rd_time;

struct rd_run {
	const char *id, *plan_name, *plan_file, *plan_text, *plan_sha256;
	const char *seed;           /* decimal text, as stored */
	int seed_drawn;
	unsigned seed_scheme;       /* plan_schedule_cell_seed's (SEED_LAYOUT, SEED_COMMON) */
	const char *rig_version, *host, *os, *platform, *argv;
	const char *started_utc, *ended_utc; /* ended NULL: still running or crashed */
	const char *status;         /* running completed failed interrupted */
	const char *error;          /* may be NULL */
	const char *options_json;   /* the options it ran with (store_run_options_parse); may be NULL */
};

struct rd_volume {
	int64_t id;
	const char *layout;         /* "" for dirs */
	int layout_index;
	const char *name;
	const char *fs;             /* NULL when unknown */
	int position;
	int has_offsets;
	int64_t off_start, off_end;
	const char *device, *dir, *facts_json; /* each may be NULL */
};

struct rd_cell {
	uint32_t seq, phase, rep;
	const char *layout, *step, *module;
	uint32_t vol;               /* index into volumes */
	uint32_t cycle;             /* 0: outside a cycle */
	const char *sweep_var, *sweep_value; /* NULL outside a sweep */
	const char *start_utc, *end_utc; /* end NULL: never ended */
	const char *status, *error;
	uint32_t tmpl;              /* index into templates */
};

struct rd_sample {
	uint32_t cell;              /* index into cells */
	uint32_t metric, unit, cache; /* interned string ids: rd_str() */
	double value;               /* NaN when stored NULL */
};

struct rd_file {
	uint32_t cell;
	const char *file;
	int64_t bytes;
	double seconds;
	int64_t disk_offset[2];     /* where its data sits on the disk, lowest and highest
				     * byte offset; -1: not known */
};

struct rd_note { uint32_t seq; const char *key, *value; };  /* seq 0: the run */
struct rd_command {
	const char *start_utc, *argv, *output; /* output may be NULL */
	int status;
	double seconds;             /* NaN when unknown */
};
struct rd_event { const char *utc, *level, *msg; };
/* A `rig resume` of the run (store table resumes). */
struct rd_resume {
	const char *started_utc, *ended_utc, *status, *why;
	uint32_t first_unfinished, from_seq;
	int reprovisioned;
};

/* A step of the plan with the cycle and sweep numbers taken out of its
 * path ("2.cycle3.1" -> "2.cycle.1"): one section of the report. */
struct rd_template {
	const char *path;
	const char *module;
	const struct rig_module *mod; /* mod_find(module); NULL when this rig does not
				       * know the module (a store written by another version) */
	char inner;                 /* innermost factor: 'c' cycle, 's' sweep, 0 none */
	const char *sweep_var;      /* the innermost sweep's variable, when inner == 's' */
	const char *plan_line;      /* the step's line of the plan text, trimmed; may be NULL */
	uint32_t headline;          /* metric id the figures and findings use; UINT32_MAX: none */
	int better;                 /* the headline's better, from report.headline or the
				     * module: +1, -1; 0 from the unit (rep_fnd_better) */
	int level_source;           /* a step in a sweep whose module sets the level
				     * (MOD_SETS_LEVEL: fill): the other steps are read
				     * against the level it reached (rep_findings_compute) */
	int by_fs;                  /* a crossed design compares file systems (1) or volumes (0):
				     * report.compare, else whether the file systems tell the
				     * volumes apart (rep_findings_compute) */
	size_t first_group, ngroups; /* its groups, contiguous in display order */
};

/* A summary group: one metric of one step path on one volume of one
 * layout, over the repetitions. */
struct rd_group {
	uint32_t tmpl;
	const char *layout;
	int layout_index;
	const char *step, *module;
	const char *volume, *fs;    /* fs NULL when unknown */
	int position;
	uint32_t cycle;             /* 0 none */
	const char *sweep_var, *sweep_value;
	double sweep_num;           /* sweep value as a number ("90%" -> 90), NaN if not one */
	uint32_t sweep_index;       /* position of the value in the sweep's list, from 1; 0 none */
	uint32_t metric, unit;
	size_t first, n;            /* samples: order[first .. first + n), by seq */
	size_t nnan;                /* of them NaN (not in the statistics) */
	struct stats_summary s;
	/* Passes: a cell that recorded the metric more than once (a module's
	 * passes, seqread's or randread's `passes`) measured it once per pass.
	 * passes is the most samples one cell of the group has (1: no passes);
	 * best the median over those cells of each cell's best pass (highest,
	 * or lowest when lower is better), the figure a disk-mark tool prints
	 * for one run; NaN when no cell had passes. Every pass is in the
	 * statistics above; best is shown beside them, never instead. */
	uint32_t passes;
	double best;
	size_t outliers;
	struct rep_stats_drift drift;
	long base;                  /* baseline group, -1 none; == own index: it is the baseline */
	struct rep_stats_diff diff;
	const char *caches;         /* cache methods applied, joined with ", " */
	/* In a sweep: the level a fill step reached in the same sweep value
	 * (mean over the group's cells, its interval) and the free bytes left;
	 * NaN when no fill step measured them (rep_findings_compute). */
	double reached, reached_lo, reached_hi, reached_free;
};

/* A set of files (write/read) of one step path pooled over repetitions
 * per layout and volume: time = overhead + bytes / rate. */
struct rd_fileset {
	uint32_t tmpl;
	const char *layout, *step, *volume;
	size_t first, n;            /* files: forder[first .. first + n) */
	/* The fit of time = intercept + bytes / rate over the files measured
	 * (summary.c): fitted, or why not. */
	enum rd_fit { RD_FIT_OK, RD_FIT_TOO_FEW, RD_FIT_ONE_SIZE, RD_FIT_NO_SLOPE } fit;
	size_t npoints;             /* files with a time */
	int fitted;                 /* fit == RD_FIT_OK */
	double rate_mbs, overhead_s, r2;
	double overhead_lo, overhead_hi; /* the intercept's 95% interval (t, n - 2 df) */
};

/* Room for the longest shortest-form double ("-2.2250738585072014e-308"). */
#define RD_VTEXT 28

enum rd_base_kind { RD_BASE_NONE, RD_BASE_VOLUME, RD_BASE_LAYOUT };

struct rdata {
	struct rd_run run;
	struct rd_volume *vols;
	size_t nvols;
	struct rd_cell *cells;      /* by seq */
	size_t ncells;
	struct rd_sample *samples;  /* in measurement order */
	size_t nsamples;
	struct rd_file *files;
	size_t nfiles;
	struct rd_note *notes;
	size_t nnotes;
	struct rd_command *cmds;
	size_t ncmds;
	struct rd_event *events;
	size_t nevents;
	struct rd_resume *resumes;
	size_t nresumes;
	uint64_t superseded;        /* samples kept in the store but not counted (resumes) */
	struct rd_time *time;       /* where the run's time went (report_time.h); never NULL
	                             * after rep_rdata_load */

	/* The plan's report section (defaults when the plan cannot be parsed). */
	const char *title, *description;
	const char *baseline;       /* as written, may be NULL */
	enum rd_base_kind base_kind;
	const char **by;
	size_t nby;
	unsigned formats;           /* FMT_* of plan/plan.h */
	const char *plan_problem;   /* why the stored plan did not validate, or NULL */
	struct plan *plan;          /* parsed with the options the run recorded (its
	                             * --fs-map, platform, --image-size); NULL when it
	                             * did not validate: the report uses its defaults */
	const char *fs_map;         /* the --fs-map the run was given, when it changed a
	                             * file system of the plan; else NULL */
	size_t nlayouts;            /* distinct layouts among the volumes */

	/* Derived (rep_summary_compute). */
	struct rd_template *tmpls;
	size_t ntmpls;
	struct rd_group *groups;    /* display order: template, layout, cycle/sweep, volume, metric */
	size_t ngroups;
	uint32_t *order;            /* sample indices grouped, by seq within a group */
	uint32_t *sample_group;     /* group of each sample */
	float *z;                   /* modified z-score of each sample (0 when not computed) */
	uint32_t *pass;             /* each sample's pass: its rank among its cell's samples of
	                             * the same metric, from 1; 0 when the cell recorded the
	                             * metric once (rep_summary_compute) */
	struct rd_fileset *filesets;
	size_t nfilesets;
	uint32_t *forder;
	int any_n1;                 /* some group has n == 1: no intervals there */
	char (*vtext)[RD_VTEXT];    /* each sample's value as CSV text (rep_csv_format_values) */
	size_t failed_cells;        /* cells not done */
	struct rd_finding *findings; /* rep_findings_compute: strongest first */
	size_t nfindings;

	/* Interned strings and their storage. */
	const char **strs;
	uint32_t nstrs, astrs;
	uint32_t *slots;
	uint32_t nslots;
	void *arena;
};

/* Read the whole run. Returns NULL with the reason in err. */
struct rdata *rep_rdata_load(struct store *s, struct strbuf *err);
void rep_rdata_free(struct rdata *d);

/* The interned string of id. */
static inline const char *rd_str(const struct rdata *d, uint32_t id)
{
	return d->strs[id];
}
/* Intern s (copied); returns its id. */
uint32_t rep_rd_intern_id(struct rdata *d, const char *s);
const char *rep_rd_intern(struct rdata *d, const char *s); /* NULL stays NULL */
/* The id of s if it is interned, else UINT32_MAX; reads the table only, so
 * it may run beside readers of d (not beside rep_rd_intern). */
uint32_t rep_rd_find(const struct rdata *d, const char *s);
/* An arena copy of s (NULL stays NULL). */
const char *rep_rd_strdup(struct rdata *d, const char *s);

/* Length of the valid UTF-8 sequence at s (1..4 bytes), or 0 when the
 * bytes there are not one (overlong, surrogate, truncated). */
size_t rep_rd_utf8_len(const unsigned char *s, size_t avail);

/* The cell of seq, or NULL (cells are by seq). */
const struct rd_cell *rep_rd_cell_of(const struct rdata *d, uint32_t seq);
/* Compare step paths in plan order ("2" < "10", "2.cycle2.1" < "2.cycle10.1"). */
int rep_rd_step_cmp(const char *a, const char *b);
/* A value of a volume's facts_json as text ("model", "serial", ...), or
 * NULL. Caller frees. */
char *rep_rd_fact(const struct rd_volume *v, const char *key);

#endif
