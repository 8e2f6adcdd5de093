/*
 * The findings of a run (see findings.h and docs/reports.md, "Findings").
 *
 * Each analysis reads the samples of a step's headline groups (never the
 * group means alone: the models need every observation) and writes rows
 * whose numbers come from reports/model.c or reports/stats.c; each row's sentence
 * is written from the same numbers. Rows are sorted by verdict, then by
 * strength: how many half-widths of its 95% interval the estimate lies
 * from "no effect" (0, or a ratio of 1 on the log scale), so the page opens
 * with the clearest finding.
 *
 * Positions are used only for volumes with a byte range (partitions of an
 * image or disk): directories of a dirs target have an order, not a place.
 * The factor compared across positions is the file system when it tells
 * the volumes apart (APFS and HFS+), else the volume name (two volumes of
 * one file system, or --fs-map made them one); report.compare chooses.
 */
#include "reports/findings_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "reports/csv.h"
#include "reports/html_int.h"
#include "reports/model.h"
#include "reports/report_data.h"
#include "reports/report_out.h"
#include "reports/stats.h"


static const char *const kind_names[] = {
	"position", "filesystem", "interaction", "trend", "ratio", "onset", "difference",
};

const char *rep_fnd_kind_name(enum fnd_kind k)
{
	return kind_names[k];
}

/* --- small helpers --- */

/* Units: times (s, ms, us, ns: plan_unit_better); rates ("x/s"). */
static int fnd_is_time_unit(const char *u)
{
	return plan_unit_better(u) < 0;
}

static int fnd_is_speed_unit(const char *u)
{
	size_t n = u ? strlen(u) : 0;
	return n > 2 && !strcmp(u + n - 2, "/s");
}

int rep_fnd_better(const struct rdata *d, uint32_t tmpl)
{
	const struct rd_template *t = &d->tmpls[tmpl];
	if (t->better)
		return t->better;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++)
		if (d->groups[i].metric == t->headline)
			return fnd_is_time_unit(rd_str(d, d->groups[i].unit)) ? -1 : 1;
	return 1;
}

void rep_fnd_add_p(struct strbuf *sb, double p)
{
	if (isnan(p))
		return;
	if (p < 0.001)
		sb_adds(sb, "p < 0.001");
	else
		sb_addf(sb, p < 0.01 ? "p = %.2g" : "p = %.3f", p);
}

/* "a to b%" of a percentage interval, or nothing. */
static void fnd_add_pct_ci(struct strbuf *sb, double lo, double hi)
{
	sb_adds(sb, "95% CI ");
	rep_html_pct(sb, lo);
	sb_adds(sb, " to ");
	rep_html_pct(sb, hi);
}

/* " (95% CI a to b, p = ...)" or " (no interval)". */
void rep_fnd_add_ci_p(struct strbuf *sb, double lo, double hi, double p, int pct)
{
	if (isnan(lo) || isnan(hi)) {
		sb_adds(sb, " (no interval");
		if (!isnan(p)) {
			sb_adds(sb, "; ");
			rep_fnd_add_p(sb, p);
		}
		sb_adds(sb, ")");
		return;
	}
	sb_adds(sb, " (");
	if (pct) {
		fnd_add_pct_ci(sb, lo, hi);
	} else {
		sb_adds(sb, "95% CI ");
		rep_html_num(sb, lo);
		sb_adds(sb, " to ");
		rep_html_num(sb, hi);
	}
	if (!isnan(p)) {
		sb_adds(sb, ", ");
		rep_fnd_add_p(sb, p);
	}
	sb_adds(sb, ")");
}

/* A time in the unit a reader uses, for values of magnitude a in seconds
 * ("s", or "s/cycle"): the factor from seconds, and the unit as shown, in
 * two parts ("ms", "/cycle"). Other units stay as they are. */
static double time_scale(const char *unit, double a, const char **shown, const char **per)
{
	*shown = rep_html_unit(unit);
	*per = "";
	int rate = unit && !strncmp(unit, "s/", 2);
	if (!unit || (strcmp(unit, "s") && !rate) || !(a > 0) || a >= 1)
		return 1;
	*shown = a < 1e-3 ? "\xc2\xb5s" : "ms";
	*per = rate ? unit + 1 : "";
	return a < 1e-3 ? 1e6 : 1e3;
}

static void add_unit(struct strbuf *sb, const char *u, const char *per)
{
	if (*u && strcmp(u, "%"))
		sb_addch(sb, ' ');
	sb_adds(sb, u);
	sb_adds(sb, per);
}

void rep_fnd_add_value(struct strbuf *sb, double v, const char *unit)
{
	const char *u, *per;
	double k = time_scale(unit, fabs(v), &u, &per);
	rep_html_num(sb, v * k);
	add_unit(sb, u, per);
}

/* v to dec decimals, thousands grouped from 1,000, a typographic minus
 * (a plus too when plus is set and v rounds above 0). */
static void add_fixed(struct strbuf *sb, double v, int dec, int plus)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", dec, fabs(v));
	int zero = strtod(buf, NULL) == 0;
	if (v < 0 && !zero)
		sb_adds(sb, "\xe2\x88\x92");
	else if (plus && !zero)
		sb_addch(sb, '+');
	const char *dot = strchr(buf, '.');
	size_t ni = dot ? (size_t)(dot - buf) : strlen(buf);
	for (size_t i = 0; i < ni; i++) {
		if (i && ni > 3 && (ni - i) % 3 == 0)
			sb_addch(sb, ',');
		sb_addch(sb, buf[i]);
	}
	if (dot)
		sb_adds(sb, dot);
}

/* One scale and one precision for an estimate and its interval: the
 * decimals the half-width has to two significant digits. */
static int est_format(double est, double lo, double hi, const char *unit, double *k,
		      const char **u, const char **per)
{
	double a = fmax(fabs(est), fmax(fabs(lo), fabs(hi)));
	*k = time_scale(unit, a, u, per);
	int dec = 1 - (int)floor(log10((hi - lo) / 2 * *k));
	return dec < 0 ? 0 : dec > 9 ? 9 : dec;
}

void rep_fnd_add_est_ci(struct strbuf *sb, double est, double lo, double hi, double p,
			const char *unit, const char *per_text)
{
	if (isnan(lo) || isnan(hi) || !(hi > lo)) {
		sb_adds(sb, est >= 0 ? "+" : "\xe2\x88\x92");
		rep_fnd_add_value(sb, fabs(est), unit);
		sb_adds(sb, per_text);
		rep_fnd_add_ci_p(sb, lo, hi, p, 0);
		return;
	}
	const char *u, *per;
	double k;
	int dec = est_format(est, lo, hi, unit, &k, &u, &per);
	add_fixed(sb, est * k, dec, 1);
	add_unit(sb, u, per);
	sb_adds(sb, per_text);
	sb_adds(sb, " (95% CI ");
	add_fixed(sb, lo * k, dec, 0);
	sb_adds(sb, " to ");
	add_fixed(sb, hi * k, dec, 0);
	add_unit(sb, u, per);
	if (!isnan(p)) {
		sb_adds(sb, ", ");
		rep_fnd_add_p(sb, p);
	}
	sb_adds(sb, ")");
}

void rep_fnd_add_est_cells(struct strbuf *est_cell, struct strbuf *ci_cell, double est,
			   double lo, double hi, const char *unit)
{
	if (isnan(lo) || isnan(hi) || !(hi > lo)) {
		rep_fnd_add_value(est_cell, est, unit);
		sb_adds(ci_cell, "no interval");
		return;
	}
	const char *u, *per;
	double k;
	int dec = est_format(est, lo, hi, unit, &k, &u, &per);
	add_fixed(est_cell, est * k, dec, 0);
	add_unit(est_cell, u, per);
	add_fixed(ci_cell, lo * k, dec, 0);
	sb_adds(ci_cell, " to ");
	add_fixed(ci_cell, hi * k, dec, 0);
	add_unit(ci_cell, u, per);
}

/* "(−30.4%, 95% CI −33.0% to −27.1%, p < 0.001)" */
void rep_fnd_add_pct_paren(struct strbuf *sb, double est, double lo, double hi, double p)
{
	sb_adds(sb, "(");
	rep_html_pct(sb, est);
	if (isnan(lo) || isnan(hi)) {
		sb_adds(sb, ", no interval");
	} else {
		sb_adds(sb, ", ");
		fnd_add_pct_ci(sb, lo, hi);
	}
	if (!isnan(p)) {
		sb_adds(sb, ", ");
		rep_fnd_add_p(sb, p);
	}
	sb_adds(sb, ")");
}

/* Distance of est from null in half-widths of [lo, hi]. */
double rep_fnd_strength(double est, double lo, double hi, double null)
{
	if (isnan(est) || isnan(lo) || isnan(hi))
		return 0;
	double half = (hi - lo) / 2;
	if (!(half > 0))
		return est != null ? 1e9 : 0;
	return fabs(est - null) / half;
}

int rep_fnd_excludes_zero(const struct model_est *e)
{
	return !isnan(e->lo) && (e->lo > 0 || e->hi < 0);
}

/* A row's numbers from a model's estimate: effect when its interval excludes 0. */
void rep_fnd_est_row(struct rd_finding *f, const struct model_est *e, size_t n, uint32_t family)
{
	f->estimate = e->est;
	f->ci_low = e->lo;
	f->ci_high = e->hi;
	f->p = e->p;
	f->n = n;
	f->family = family;
	f->effect = rep_fnd_excludes_zero(e);
	f->strength = rep_fnd_strength(e->est, e->lo, e->hi, 0);
}

struct rd_finding *rep_fnd_add_row(struct fctx *c, uint32_t tmpl, uint32_t metric,
				  enum fnd_kind kind, const char *groups)
{
	struct rdata *d = c->d;
	XGROW(d->findings, d->nfindings + 1, c->alloc);
	struct rd_finding *f = &d->findings[d->nfindings++];
	memset(f, 0, sizeof(*f));
	f->tmpl = tmpl;
	f->metric = metric;
	f->kind = kind;
	f->groups = rep_rd_strdup(d, groups);
	f->estimate = f->ci_low = f->ci_high = f->p = NAN;
	f->unit = "%";
	return f;
}

void rep_fnd_set_sentence(struct fctx *c, struct rd_finding *f)
{
	f->sentence = rep_rd_strdup(c->d, c->sb.buf);
	sb_reset(&c->sb);
}

/* Plain-text label of a group: volume, with the layout when there are several. */
void rep_fnd_group_label(struct strbuf *sb, const struct rdata *d, const struct rd_group *g)
{
	sb_adds(sb, g->volume);
	if (d->nlayouts > 1 && *g->layout)
		sb_addf(sb, " in %s", g->layout);
}

/* The finite sample values of group g into out (room for g->n); returns how many. */
size_t rep_fnd_group_values(const struct rdata *d, const struct rd_group *g, double *out)
{
	size_t n = 0;
	for (size_t k = g->first; k < g->first + g->n; k++) {
		double v = d->samples[d->order[k]].value;
		if (!isnan(v))
			out[n++] = v;
	}
	return n;
}

size_t rep_fnd_units_of(const struct rdata *d, const size_t *gi, size_t ng)
{
	/* A row rests on a few groups of a few volumes: a scan is enough. */
	uint32_t *seen = NULL;
	size_t n = 0, alloc = 0;
	for (size_t i = 0; i < ng; i++) {
		const struct rd_group *g = &d->groups[gi[i]];
		for (size_t k = g->first; k < g->first + g->n; k++) {
			uint32_t v = d->cells[d->samples[d->order[k]].cell].vol;
			size_t j = 0;
			while (j < n && seen[j] != v)
				j++;
			if (j == n) {
				XGROW(seen, n + 1, alloc);
				seen[n++] = v;
			}
		}
	}
	free(seen);
	return n;
}

/* --- series: the headline groups of one step, per layout and volume --- */


size_t rep_fnd_collect_series(const struct rdata *d, const struct rd_template *t, struct series **out)
{
	struct series *s = NULL;
	size_t n = 0, alloc = 0;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != t->headline || !g->s.n)
			continue;
		size_t k = 0;
		while (k < n && !(s[k].layout == g->layout && s[k].volume == g->volume))
			k++;
		if (k == n) {
			XGROW(s, n + 1, alloc);
			memset(&s[n], 0, sizeof(*s));
			s[n].layout = g->layout;
			s[n].volume = g->volume;
			n++;
		}
		XGROW(s[k].gi, s[k].n + 1, s[k].alloc);
		s[k].gi[s[k].n++] = i;
	}
	*out = s;
	return n;
}

void rep_fnd_free_series(struct series *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].gi);
	free(s);
}

static const char *fnd_ratio_word(double r, int better, const char *unit)
{
	/* For times and rates, "slower"/"faster"; otherwise no word. */
	if (!fnd_is_time_unit(unit) && !fnd_is_speed_unit(unit))
		return NULL;
	int worse = better < 0 ? r > 1 : r < 1;
	return worse ? "slower" : "faster";
}

/* "3.01× slower than B (95% CI 2.9 to 3.1×, p < 0.001" from the ratio
 * r = x / b of a metric; the caller closes the parenthesis. */
void rep_fnd_add_ratio(struct strbuf *sb, double r, double lo, double hi, double p, int better,
		      const char *unit, const char *than)
{
	const char *w = fnd_ratio_word(r, better, unit);
	/* Say the factor that is above 1: a rate half as high is 2× slower. */
	int invert = w && r < 1;
	double f = invert ? 1 / r : r, flo = invert ? 1 / hi : lo, fhi = invert ? 1 / lo : hi;
	if (w && f < 1.005) /* "1.00× faster" says nothing */
		sb_addf(sb, "about as fast as %s", than);
	else
		sb_addf(sb, "%.2f\xc3\x97 %s%s%s", f, w ? w : "", w ? " than " : "that of ", than);
	if (isnan(flo) || isnan(fhi))
		sb_adds(sb, " (no interval");
	else
		sb_addf(sb, " (95%% CI %.2f to %.2f\xc3\x97", flo, fhi);
	if (!isnan(p)) {
		sb_adds(sb, ", ");
		rep_fnd_add_p(sb, p);
	}
}

/* --- order, and the whole run --- */

/* A design's main analysis (the crossed design's effects, the position
 * trend, the trend per cycle, the onset) before what qualifies it. */
static const int kind_rank[] = {
	[FND_POSITION] = 0, [FND_FILESYSTEM] = 0, [FND_TREND] = 0, [FND_ONSET] = 0,
	[FND_INTERACTION] = 1, [FND_RATIO] = 1, [FND_DIFFERENCE] = 2,
};

static int cmp_rows(const void *a, const void *b)
{
	const struct rd_finding *x = a, *y = b;
	if (x->effect != y->effect)
		return y->effect - x->effect;
	if (kind_rank[x->kind] != kind_rank[y->kind])
		return kind_rank[x->kind] - kind_rank[y->kind];
	if (x->strength != y->strength)
		return x->strength < y->strength ? 1 : -1;
	if (x->tmpl != y->tmpl)
		return x->tmpl < y->tmpl ? -1 : 1;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return strcmp(x->groups, y->groups);
}

void rep_findings_compute(struct rdata *d)
{
	struct fctx c = { .d = d, .sb = STRBUF_INIT, .tmp = STRBUF_INIT };
	rep_fnd_find_reached(d);
	for (uint32_t ti = 0; ti < d->ntmpls; ti++)
		d->tmpls[ti].by_fs = rep_fnd_compare_by_fs(d, &d->tmpls[ti]);
	for (uint32_t ti = 0; ti < d->ntmpls; ti++) {
		const struct rd_template *t = &d->tmpls[ti];
		if (t->headline == UINT32_MAX)
			continue;
		if (t->inner == 'c') {
			rep_fnd_cycles(&c, ti);
			continue;
		}
		int numeric = t->inner == 's';
		for (size_t i = t->first_group; i < t->first_group + t->ngroups && numeric; i++)
			if (d->groups[i].metric == t->headline && isnan(d->groups[i].sweep_num))
				numeric = 0;
		if (numeric) {
			rep_fnd_sweeps(&c, ti);
			continue;
		}
		if (!t->inner && rep_fnd_crossed(&c, ti))
			continue;
		rep_fnd_difference(&c, ti);
	}
	if (d->nfindings > 1)
		qsort(d->findings, d->nfindings, sizeof(*d->findings), cmp_rows);
	sb_release(&c.sb);
	sb_release(&c.tmp);
}

/* --- findings.csv --- */

static const struct rep_col finding_cols[] = {
	{ "step", REP_TEXT, 0 },     { "metric", REP_TEXT, 0 },   { "kind", REP_TEXT, 0 },
	{ "groups", REP_TEXT, 0 },   { "estimate", REP_REAL, 0 }, { "unit", REP_TEXT, 0 },
	{ "ci_low", REP_REAL, 0 },   { "ci_high", REP_REAL, 0 },  { "p", REP_REAL, 0 },
	{ "n", REP_COUNT, 0 },       { "verdict", REP_TEXT, 0 },  { "sentence", REP_TEXT, 0 },
	{ "units", REP_COUNT, 0 }, /* the provisioned volumes a row rests on; missing: none */
};

_Static_assert(sizeof(finding_cols) / sizeof(finding_cols[0]) <= REP_MAX_COLS,
	       "a row's values fit its writers' arrays");

static size_t finding_count(const struct rdata *d)
{
	return d->nfindings;
}

static void finding_row(const struct rdata *d, size_t i, struct rep_val *v)
{
	const struct rd_finding *f = &d->findings[i];
	v[0].text = d->tmpls[f->tmpl].path;
	v[1].text = rd_str(d, f->metric);
	v[2].text = rep_fnd_kind_name(f->kind);
	v[3].text = f->groups;
	v[4].real = f->estimate;
	v[5].text = f->unit;
	v[6].real = f->ci_low;
	v[7].real = f->ci_high;
	v[8].real = f->p;
	v[9].count = (long long)f->n;
	v[10].text = f->effect ? "effect" : "no-clear-effect";
	v[11].text = f->sentence;
	v[12].count = (long long)f->units;
	v[12].null = !f->units;
}

const struct rep_table rep_findings_table = {
	finding_cols, sizeof(finding_cols) / sizeof(finding_cols[0]), finding_count, finding_row,
};
