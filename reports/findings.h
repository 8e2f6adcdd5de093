/*
 * The findings of a run (docs/reports.md, "Findings"): what the design of
 * the experiment allows its data to say, computed from the summary groups
 * and their samples by the models of reports/model.h, as rows with an
 * estimate, a 95% interval, a p-value, a verdict and a sentence. The page's
 * Findings section, findings.csv and results.json's "findings" are all
 * written from these rows; nothing in them is templated text without its
 * numbers.
 *
 * The design is recognised per step (template) and headline metric:
 *   - inside a cycle: per volume, the metric against the cycle (trend) and
 *     the last cycle against the first (ratio); between volumes, the ratio
 *     at the first and at the last cycle;
 *   - inside a numeric sweep: the onset, the first level whose interval
 *     lies wholly beyond the first level's in the direction of
 *     degradation, named by the level actually reached (a fill step's
 *     `level` in the same sweep value);
 *   - a crossed design (each file system, or volume, at two or more
 *     positions on the disk): file system + position, with the interaction;
 *   - three or more positions otherwise: the metric against position
 *     (first-to-last change, where the fall steepens);
 *   - otherwise the plain difference from the baseline (or lowest against
 *     highest).
 */
#ifndef RIG_REPORTS_FINDINGS_H
#define RIG_REPORTS_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "reports/columns.h"

struct rdata;
struct strbuf;

enum fnd_kind {
	FND_POSITION, FND_FILESYSTEM, FND_INTERACTION, FND_TREND, FND_RATIO, FND_ONSET,
	FND_DIFFERENCE
};

/* The name of a kind in findings.csv ("position", ...). */
const char *rep_fnd_kind_name(enum fnd_kind k);

struct rd_finding {
	uint32_t tmpl;              /* the step (template) */
	uint32_t metric;            /* interned metric id */
	enum fnd_kind kind;
	const char *groups;         /* what is compared, e.g. "position 2 vs position 1" */
	double estimate, ci_low, ci_high, p; /* NaN: none */
	const char *unit;           /* of estimate: "%", "s/cycle", "ratio", a sweep's unit */
	size_t n;                   /* samples used */
	int effect;                 /* the interval excludes 0 (1 for a ratio); an onset found */
	const char *sentence;       /* plain UTF-8 text */
	uint32_t family;            /* rows of one analysis share it (a crossed design's three) */
	size_t units;               /* provisioned volumes (store volume rows) the row rests on */
	double strength;            /* sort key: distance from "no effect" in half-intervals */
};

/* Compute d->findings (sorted, strongest first) and each sweep group's
 * reached level. Needs rep_summary_compute first. */
void rep_findings_compute(struct rdata *d);

/* The findings' columns (columns.h): findings.csv, results.json's
 * "findings" and the shared store's rig.findings. */
extern const struct rep_table rep_findings_table;

/* The level of the factor compared across positions for group g of
 * template tmpl: its file system or its volume name (report.compare; by
 * default the file system when it tells the volumes apart). May be NULL
 * (file system unknown). */
struct rd_group;
const char *rep_fnd_level(const struct rdata *d, uint32_t tmpl, const struct rd_group *g);

/* The metric's better direction for a template: +1 higher, -1 lower. */
int rep_fnd_better(const struct rdata *d, uint32_t tmpl);

#endif
