/*
 * Internal interface of the findings (findings.c: sentence helpers, rows,
 * order and findings.csv; findings_series.c: cycles and sweeps;
 * findings_position.c: crossed designs, positions and plain differences).
 * Sentences are plain UTF-8 text written from a row's own numbers.
 */
#ifndef RIG_REPORTS_FINDINGS_INT_H
#define RIG_REPORTS_FINDINGS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"
#include "reports/findings.h"
#include "reports/model.h"
#include "reports/report_data.h"
#include "reports/stats.h"

struct fctx {
	struct rdata *d;
	size_t alloc;
	uint32_t nfamily;
	struct strbuf sb;           /* sentence being written */
	struct strbuf tmp;
};

/* The headline groups of one step on one volume of one layout, in display order. */
struct series {
	const char *layout, *volume;
	size_t *gi;                 /* group indices */
	size_t n, alloc;
};

/* Sentence parts: "p < 0.001" / "p = 0.012"; "95% CI −3.1% to +1.5%";
 * " (95% CI a to b, p ...)" (pct: as percentages) or " (no interval)";
 * a value with its unit; "(−30.4%, 95% CI ..., p ...)". */
void rep_fnd_add_p(struct strbuf *sb, double p);
void rep_fnd_add_ci_p(struct strbuf *sb, double lo, double hi, double p, int pct);
/* A value with its unit, as the reports print numbers; a time under a
 * second in ms or µs ("47.16 ms", not "0.04716 s"). */
void rep_fnd_add_value(struct strbuf *sb, double v, const char *unit);
/* A signed estimate and its interval in one unit and to one precision,
 * set by the interval's half-width to two significant digits: "+48.0 ms
 * per cycle (95% CI 39.4 to 56.6 ms, p < 0.001)" (per: " per cycle", or
 * ""). Without an interval, as rep_fnd_add_value and "(no interval)". */
void rep_fnd_add_est_ci(struct strbuf *sb, double est, double lo, double hi, double p,
			const char *unit, const char *per);
/* The same, as a table's two cells (text, not HTML): "48.0 ms/cycle" and
 * "39.4 to 56.6 ms/cycle"; without an interval the value and "no
 * interval". */
void rep_fnd_add_est_cells(struct strbuf *est_cell, struct strbuf *ci_cell, double est,
			   double lo, double hi, const char *unit);
void rep_fnd_add_pct_paren(struct strbuf *sb, double est, double lo, double hi, double p);
/* "3.01× slower than B (95% CI 2.9 to 3.1×, p < 0.001" for the ratio r = x / b
 * (the caller closes the parenthesis). */
void rep_fnd_add_ratio(struct strbuf *sb, double r, double lo, double hi, double p, int better,
		   const char *unit, const char *than);

/* Does the estimate's interval exclude 0 (an interval, and 0 outside it)? */
int rep_fnd_excludes_zero(const struct model_est *e);
/* Distance of est from null in half-widths of [lo, hi] (0 without an interval). */
double rep_fnd_strength(double est, double lo, double hi, double null);
/* A new row (estimates NaN, unit "%"), and its numbers from a model's estimate. */
struct rd_finding *rep_fnd_add_row(struct fctx *c, uint32_t tmpl, uint32_t metric,
			       enum fnd_kind kind, const char *groups);
void rep_fnd_est_row(struct rd_finding *f, const struct model_est *e, size_t n, uint32_t family);
/* The row's sentence is c->sb's text (c->sb is emptied). */
void rep_fnd_set_sentence(struct fctx *c, struct rd_finding *f);

/* "volume" or "volume in layout" when there are several layouts. */
void rep_fnd_group_label(struct strbuf *sb, const struct rdata *d, const struct rd_group *g);
/* The provisioned volumes (rows of the store's volumes) the samples of
 * groups gi[0..ng) come from: what a row resting on them rests on. */
size_t rep_fnd_units_of(const struct rdata *d, const size_t *gi, size_t ng);
/* The finite values of group g into out (room for g->n); how many. */
size_t rep_fnd_group_values(const struct rdata *d, const struct rd_group *g, double *out);
/* The headline groups of template t as series; free with rep_fnd_free_series. */
size_t rep_fnd_collect_series(const struct rdata *d, const struct rd_template *t, struct series **out);
void rep_fnd_free_series(struct series *s, size_t n);

/* The factor a crossed design compares for template t: 1 file system, 0 volume. */
int rep_fnd_compare_by_fs(const struct rdata *d, const struct rd_template *t);

/* The analyses (findings_series.c, findings_position.c). */
void rep_fnd_find_reached(struct rdata *d);
void rep_fnd_cycles(struct fctx *c, uint32_t ti);
void rep_fnd_sweeps(struct fctx *c, uint32_t ti);
/* 1 when step ti is a crossed design or has three or more positions (rows added). */
int rep_fnd_crossed(struct fctx *c, uint32_t ti);
void rep_fnd_difference(struct fctx *c, uint32_t ti);

#endif
