/*
 * Comparing runs (rig compare RUN_A RUN_B [...]): the runs' groups joined
 * on (step, volume or file system, metric), each run summarized per key,
 * and every run after the first compared with the first (percent of its
 * mean with Fieller's interval, Welch's p), as compare.csv and
 * compare.html. Differences between the runs that make a comparison
 * questionable (plans, hosts, disks, rig versions) are warnings that say
 * what differs.
 *
 * Join rules (docs/reports.md, "Compare"): on volume names when every run
 * shares a volume name with the first, otherwise on file systems; the
 * layout is part of the key when every run has the same layout names,
 * otherwise samples of a key are pooled over layouts (a warning says so).
 */
#ifndef RIG_REPORTS_COMPARE_H
#define RIG_REPORTS_COMPARE_H

#include <stddef.h>

#include "rig/stats.h"

struct rdata;
struct store;
struct strbuf;

struct cmp_run {
	const char *dir;
	char label[24];             /* "A", "B", ..., "R27" */
	struct store *store;
	struct rdata *d;
};

struct cmp_cell {
	int present;
	struct stats_summary s;
	struct stats_diff diff;     /* against the first run; NaN for the first */
};

struct cmp_key {
	const char *step, *module, *layout, *volume, *fs, *metric, *unit; /* owned by the runs' data */
	int headline;               /* the metric the step's figures use */
	int inner;                  /* inside a cycle or sweep */
	struct cmp_cell *cells;     /* one per run */
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
};

/* Open and join the runs in dirs[0..n). 0, or -errno with the reason in
 * err (a run that cannot be read). */
int compare_build(struct comparison *c, char *const *dirs, size_t n, struct strbuf *err);
void compare_free(struct comparison *c);

int compare_write_csv(const struct comparison *c, const char *path, struct strbuf *err);
/* compare.html into out_dir, its figures into out_dir/figures. */
int compare_write_html(const struct comparison *c, const char *out_dir, struct strbuf *err);

extern const char compare_csv_header[];

#endif
