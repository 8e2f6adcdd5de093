/*
 * The time accounting of a run, read from its store for the reports:
 * where the wall time went per scope (each cell, each layout outside its
 * cells, the run around the layouts; per resume) and category
 * (modules/run_time.h), the totals per layout and for the run, and the
 * estimate the run started with (tables time_spent and estimates,
 * docs/results-store.md). time.csv is written from it here; report.html
 * shows it in its Methods section (html_time.c), results.json under
 * run.time (json.c).
 *
 * The measured share is measured / (wall - report): report generation
 * follows the run and is recorded after the first reports are written,
 * so it is left out of the share, which is then the same in every
 * redraw.
 */
#ifndef RIG_REPORTS_REPORT_TIME_H
#define RIG_REPORTS_REPORT_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "modules/run_time.h"

struct rdata;
struct sqlite3;
struct strbuf;

/* One scope's seconds per category. */
struct rt_scope {
	int64_t resume;        /* 0: the run; else resumes.id */
	long layout_index;     /* -1: the run around the layouts */
	const char *layout;    /* "" for dirs and for the run's scope */
	uint32_t seq;          /* 0: outside a cell */
	double s[RT_NCAT];
};

/* A layout's totals over its cells and the time between them, all
 * attempts; the estimate the run started with (NaN: none recorded). */
struct rt_layout {
	long layout_index;
	const char *layout;
	double s[RT_NCAT];
	double estimate;
	size_t not_estimated;  /* cells the estimate could not count */
};

struct rd_time {
	struct rt_scope *scopes;  /* by resume, layout, seq */
	size_t nscopes;
	struct rt_layout *layouts; /* by layout index; every layout with time or an estimate */
	size_t nlayouts;
	double total[RT_NCAT];    /* every scope */
	double estimate;          /* sum of the layouts' estimates; NaN: none */
	double assumed_rate;      /* bytes/s the estimate assumed; NaN: none */
	int recorded;             /* the store holds an accounting (schema 4 and after) */
};

/* Read the accounting of the store db into d->time (allocated). 0 or
 * -EIO with the reason in err. */
int rep_rtime_load(struct rdata *d, struct sqlite3 *db, struct strbuf *err);
void rep_rtime_free(struct rd_time *t);

/* Sum of the categories; the measured share of s (NaN when no time). */
double rep_rtime_wall(const double s[RT_NCAT]);
double rep_rtime_share(const double s[RT_NCAT]);

/* time.csv: one row per scope, one per layout's total, one for the run's
 * (docs/reports.md). 0 or -errno with the reason in err. */
int rep_rtime_write_csv(const struct rdata *d, const char *path, struct strbuf *err);

#endif
