/*
 * The statistics of a run, per group, and summary.csv (docs/reports.md).
 *
 * A group is one metric of one step path (cycle and sweep value included)
 * on one volume of one layout, over the repetitions; rep_summary_compute fills
 * rdata's templates, groups (in display order), per-sample outlier scores,
 * baseline differences, drift and the per-volume file-set fits.
 */
#ifndef RIG_REPORTS_SUMMARY_H
#define RIG_REPORTS_SUMMARY_H

#include "reports/columns.h"

struct rdata;
struct strbuf;

void rep_summary_compute(struct rdata *d);

/* Which way is better for group g's metric (+1 higher, -1 lower): the
 * step's headline by report.headline or its module (rep_fnd_better), any
 * other metric by its unit (times lower). The best of passes is chosen
 * so. */
struct rd_group;
int rep_summary_better(const struct rdata *d, const struct rd_group *g);

/* The header row of summary.csv, without the line end. */
/* The summary's columns (columns.h), a row per group, documented in
 * docs/reports.md: summary.csv and results.json's "summary" (its cache
 * column is the JSON's alone, run the CSV's). */
extern const struct rep_table rep_summary_table;

#endif
