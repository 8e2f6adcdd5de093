/*
 * Comparing runs (rig compare RUN_A RUN_B [...]): the runs' groups joined
 * on (step, volume or file system, metric), each run summarized per key,
 * and every run after the first compared with the first (percent of its
 * mean with Fieller's interval, Welch's p), as compare.csv and
 * compare.html. Metrics the plan sets (struct rig_metric.setting: bytes
 * written, files created) are left out: they are no measurement, and a
 * warning says when the runs' values of one differ. Differences between
 * the runs that make a comparison
 * questionable (plans, hosts, disks, rig versions) are warnings that say
 * what differs.
 *
 * Join rules (docs/reports.md, "Compare"): on volume names when every run
 * shares a volume name with the first, otherwise on file systems; the
 * layout is part of the key when every run has the same layout names,
 * otherwise samples of a key are pooled over layouts (a warning says so).
 *
 * Within mode (rig compare --within, compare_within.c) compares inside
 * each run instead: every volume or file system against the run's
 * reference one in the same layout (as report.baseline does), and pooled
 * over the layouts only when every cell of the run completed; the runs
 * are tabulated side by side, one row per run (per disk), as
 * compare-within.csv and compare.html.
 */
#ifndef RIG_REPORTS_COMPARE_H
#define RIG_REPORTS_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "reports/stats.h"

struct rdata;
struct store;
struct strbuf;

struct cmp_run {
	const char *dir;
	char label[24];             /* "A", "B", ..., "R27" */
	struct store *store;
	struct rdata *d;
	char *disk;                 /* "model serial S[; ...]", "a disk image", or NULL:
				       existing directories (the volumes' device facts) */
	/* Within mode. */
	const char *ref;            /* the reference as the run names it (a volume name or
				       a file system); NULL: the run has none */
	int ref_by_fs;              /* ref is a file system: its volumes are pooled per layout */
	int complete;               /* status completed and every cell done */
	int pooled;                 /* several layouts, complete: pooled rows too */
};

struct cmp_cell {
	int present;
	struct stats_summary s;
	struct rep_stats_diff diff;     /* against the first run; NaN for the first */
};

struct cmp_key {
	const char *step, *module, *layout, *volume, *fs, *metric, *unit; /* owned by the runs' data */
	int headline;               /* the metric the step's figures use */
	int inner;                  /* inside a cycle or sweep */
	struct cmp_cell *cells;     /* one per run */
};

/* Within mode: one volume or file system of one run against the run's
 * reference, in one layout or pooled over the layouts where both were
 * measured. */
struct cmp_within {
	size_t run;
	uint32_t tmpl;              /* the run's step template (rdata tmpls) */
	const char *step, *module;
	const char *layout;         /* NULL: pooled over the run's layouts */
	const char *volume;         /* NULL when compared by file system */
	const char *fs;             /* NULL when unknown */
	const char *metric, *unit;
	int headline;               /* the metric the step's figures use */
	int inner;                  /* inside a cycle or sweep */
	struct stats_summary s;     /* the compared volume or file system */
	struct stats_summary ref;   /* the reference, over the same layouts */
	struct rep_stats_diff diff;     /* s against ref */
};

struct compare_opts {
	int within;                 /* compare inside each run, tabulate across runs */
	const char *against;        /* within: the reference volume or file system
				       (case-insensitive); NULL: each run's report.baseline */
};

struct comparison {
	struct cmp_run *runs;
	size_t nruns;
	struct cmp_key *keys;
	size_t nkeys, akeys;
	int by_fs;                  /* joined on file systems, not volume names */
	int with_layout;            /* the layout is part of the key */
	char **warnings;
	size_t nwarnings;
	char *settings;             /* metrics left out as quantities the plan sets
				       ("bytes, files"), or NULL: none */
	int within;                 /* built in within mode: rows, not keys */
	struct cmp_within *rows;    /* run by run, each in plan order */
	size_t nrows, arows;
};

/* Open and join the runs in dirs[0..n) (o NULL: across runs). 0, or
 * -errno with the reason in err (a run that cannot be read). */
int rep_compare_build(struct comparison *c, char *const *dirs, size_t n, const struct compare_opts *o,
		  struct strbuf *err);
void rep_compare_free(struct comparison *c);

int rep_compare_write_csv(const struct comparison *c, const char *path, struct strbuf *err);
/* compare.html into out_dir, its figures into out_dir/figures. */
int rep_compare_write_html(const struct comparison *c, const char *out_dir, struct strbuf *err);

/* Within mode (compare_within.c): find each run's reference and fill
 * c->rows; warns about runs without a reference, unpooled layouts. */
void rep_compare_within_build(struct comparison *c, const char *against);
int rep_compare_within_write_csv(const struct comparison *c, const char *path, struct strbuf *err);
/* compare.html (the within table) into out_dir. */
int rep_compare_within_write_html(const struct comparison *c, const char *out_dir, struct strbuf *err);
/* Whether the module's metric is a quantity the plan sets
 * (rig_metric.setting), left out of the statistics. */
int rep_compare_is_setting(const char *module, const char *metric);
/* Whether Fieller's interval of d and Welch's p disagree at 5% (the
 * interval excludes 0 while p >= 0.05, or the reverse): the page marks
 * the cell and explains why in a note (html_compare.c). */
int rep_compare_diff_disagrees(const struct rep_stats_diff *d);
/* Add a warning (msg is emptied). */
void rep_compare_warn(struct comparison *c, struct strbuf *msg);

extern const char rep_compare_within_csv_header[];

#endif
