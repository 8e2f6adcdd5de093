/*
 * Findings of steps inside a cycle (a trend per volume, ratios of the last
 * cycle to the first and between volumes) and inside a numeric sweep (the
 * level a fill step reached, and the onset of degradation). See findings.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "modules/module.h"
#include "reports/findings_int.h"
#include "reports/html_int.h"

/* --- cycles --- */

/* A ratio row from the difference of two groups (Fieller's interval). */
static void ratio_row(struct rd_finding *f, const struct rep_stats_diff *df)
{
	f->unit = "ratio";
	f->estimate = df->pct_of_base / 100;
	f->ci_low = 1 + df->ci_low / 100;
	f->ci_high = 1 + df->ci_high / 100;
	f->p = df->p;
	f->effect = !isnan(f->ci_low) && (f->ci_low > 1 || f->ci_high < 1);
	f->strength = f->ci_low > 0 ? rep_fnd_strength(log(f->estimate), log(f->ci_low), log(f->ci_high), 0)
				    : 0;
}

/* A series' last cycle against its first: a ratio row. */
static void last_vs_first(struct fctx *c, uint32_t ti, const struct rd_group *first,
			  const struct rd_group *last, int better, const char *metric,
			  const char *unit)
{
	struct rdata *d = c->d;
	struct rep_stats_diff df;
	rep_stats_diff(&last->s, &first->s, &df);
	sb_reset(&c->sb);
	sb_addf(&c->sb, "%s: cycle %u / cycle %u", c->tmp.buf, last->cycle, first->cycle);
	struct rd_finding *f = rep_fnd_add_row(c, ti, d->tmpls[ti].headline, FND_RATIO, c->sb.buf);
	ratio_row(f, &df);
	f->n = first->s.n + last->s.n;
	size_t ends[2] = { (size_t)(first - d->groups), (size_t)(last - d->groups) };
	f->units = rep_fnd_units_of(d, ends, 2);
	sb_reset(&c->sb);
	sb_addf(&c->sb, "%s: cycle %u is ", c->tmp.buf, last->cycle);
	char than[32];
	snprintf(than, sizeof(than), "cycle %u", first->cycle);
	rep_fnd_add_ratio(&c->sb, f->estimate, f->ci_low, f->ci_high, f->p, better, unit, than);
	sb_addf(&c->sb, "; %s ", metric);
	rep_fnd_add_value(&c->sb, last->s.mean, unit);
	sb_adds(&c->sb, " against ");
	rep_fnd_add_value(&c->sb, first->s.mean, unit);
	sb_adds(&c->sb, ").");
	rep_fnd_set_sentence(c, f);
}

/* The ratio of series x to series b at their first and at their last
 * common cycle. */
static void between(struct fctx *c, uint32_t ti, const struct series *sx, const struct series *sb,
		    int better, const char *metric)
{
	struct rdata *d = c->d;
	const struct rd_template *t = &d->tmpls[ti];
	for (int end = 0; end < 2; end++) {
		const struct rd_group *gx = NULL, *gb = NULL;
		for (size_t j = 0; j < sx->n; j++) {
			const struct rd_group *g = &d->groups[sx->gi[j]];
			for (size_t q = 0; q < sb->n; q++) {
				const struct rd_group *b = &d->groups[sb->gi[q]];
				if (b->cycle == g->cycle &&
				    (!gx || (end ? g->cycle > gx->cycle : g->cycle < gx->cycle))) {
					gx = g;
					gb = b;
				}
			}
		}
		if (!gx || (end && gx->cycle == 1))
			continue;
		struct rep_stats_diff df;
		rep_stats_diff(&gx->s, &gb->s, &df);
		sb_reset(&c->sb);
		sb_addf(&c->sb, "%s / %s at cycle %u", gx->volume, gb->volume, gx->cycle);
		if (d->nlayouts > 1 && *gx->layout)
			sb_addf(&c->sb, " in %s", gx->layout);
		struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_RATIO, c->sb.buf);
		ratio_row(f, &df);
		f->n = gx->s.n + gb->s.n;
		size_t pair[2] = { (size_t)(gx - d->groups), (size_t)(gb - d->groups) };
		f->units = rep_fnd_units_of(d, pair, 2);
		const char *unit = rd_str(d, gx->unit);
		sb_reset(&c->sb);
		sb_addf(&c->sb, "at cycle %u %s is ", gx->cycle, gx->volume);
		if (d->nlayouts > 1 && *gx->layout)
			sb_addf(&c->sb, "(in %s) ", gx->layout);
		rep_fnd_add_ratio(&c->sb, f->estimate, f->ci_low, f->ci_high, f->p, better, unit, gb->volume);
		sb_addf(&c->sb, "; %s ", metric);
		rep_fnd_add_value(&c->sb, gx->s.mean, unit);
		sb_adds(&c->sb, " against ");
		rep_fnd_add_value(&c->sb, gb->s.mean, unit);
		sb_adds(&c->sb, ").");
		rep_fnd_set_sentence(c, f);
	}
}

void rep_fnd_cycles(struct fctx *c, uint32_t ti)
{
	struct rdata *d = c->d;
	const struct rd_template *t = &d->tmpls[ti];
	struct series *s;
	size_t ns = rep_fnd_collect_series(d, t, &s);
	int better = rep_fnd_better(d, ti);
	const char *metric = rd_str(d, t->headline);
	size_t cap = 0;
	for (size_t k = 0; k < ns; k++) {
		size_t m = 0;
		for (size_t j = 0; j < s[k].n; j++)
			m += d->groups[s[k].gi[j]].n;
		cap = m > cap ? m : cap;
	}
	double *x = xmalloc((cap ? cap : 1) * sizeof(double)), *y = xmalloc((cap ? cap : 1) * sizeof(double));
	for (size_t k = 0; k < ns; k++) {
		size_t m = 0;
		const struct rd_group *first = NULL, *last = NULL;
		for (size_t j = 0; j < s[k].n; j++) {
			const struct rd_group *g = &d->groups[s[k].gi[j]];
			size_t got = rep_fnd_group_values(d, g, y + m);
			for (size_t q = 0; q < got; q++)
				x[m + q] = g->cycle;
			m += got;
			if (!first || g->cycle < first->cycle)
				first = g;
			if (!last || g->cycle > last->cycle)
				last = g;
		}
		if (!first || first == last)
			continue;
		const char *unit = rd_str(d, first->unit);
		sb_reset(&c->tmp);
		rep_fnd_group_label(&c->tmp, d, first);
		struct model_trend tr;
		if (rep_model_trend_fit(x, y, m, &tr) == 0) {
			struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_TREND, c->tmp.buf);
			f->units = rep_fnd_units_of(d, s[k].gi, s[k].n);
			f->estimate = tr.slope.est;
			f->ci_low = tr.slope.lo;
			f->ci_high = tr.slope.hi;
			f->p = tr.slope.p;
			f->n = m;
			sb_reset(&c->sb);
			sb_addf(&c->sb, "%s/cycle", unit);
			f->unit = rep_rd_strdup(d, c->sb.buf);
			f->effect = !isnan(f->ci_low) && (f->ci_low > 0 || f->ci_high < 0);
			f->strength = rep_fnd_strength(f->estimate, f->ci_low, f->ci_high, 0);
			sb_reset(&c->sb);
			sb_addf(&c->sb, "%s: %s ", c->tmp.buf, metric);
			rep_fnd_add_est_ci(&c->sb, tr.slope.est, tr.slope.lo, tr.slope.hi, tr.slope.p,
					   unit, " per cycle");
			sb_addf(&c->sb, ", from ");
			rep_fnd_add_value(&c->sb, first->s.mean, unit);
			sb_addf(&c->sb, " at cycle %u to ", first->cycle);
			rep_fnd_add_value(&c->sb, last->s.mean, unit);
			sb_addf(&c->sb, " at cycle %u", last->cycle);
			if (!f->effect)
				sb_adds(&c->sb, f->ci_low <= 0 && f->ci_high >= 0 ? ": no clear trend" : "");
			sb_adds(&c->sb, ".");
			rep_fnd_set_sentence(c, f);
		}
		last_vs_first(c, ti, first, last, better, metric, unit);
	}
	/* Between volumes of a layout: each against the layout's reference
	 * (the baseline volume, else the first) at the first and the last cycle. */
	for (size_t ref = 0; ref < ns; ref++) {
		size_t first_of_layout = 0;
		while (s[first_of_layout].layout != s[ref].layout)
			first_of_layout++;
		int is_ref = 0;
		for (size_t k = 0; k < ns; k++)
			if (s[k].layout == s[ref].layout && d->base_kind == RD_BASE_VOLUME &&
			    !strcmp(s[k].volume, d->baseline))
				is_ref = k == ref ? 1 : -1;
		if (is_ref < 0 || (!is_ref && ref != first_of_layout))
			continue;
		for (size_t k = 0; k < ns; k++)
			if (k != ref && s[k].layout == s[ref].layout)
				between(c, ti, &s[k], &s[ref], better, metric);
	}
	free(x);
	free(y);
	rep_fnd_free_series(s, ns);
}

/* --- sweeps: the level reached, and the onset --- */

/* The step path up to and including its last "sweep<k>" component. */
static size_t sweep_prefix_len(const char *step)
{
	const char *p = step, *last = NULL;
	while ((p = strstr(p, "sweep")) != NULL) {
		p += 5;
		while (*p >= '0' && *p <= '9')
			p++;
		last = p;
	}
	return last ? (size_t)(last - step) : 0;
}

struct reached {
	uint32_t vol, rep;
	const char *step;           /* the fill cell's step path */
	size_t plen;
	double level, free_bytes;
};

/* Each sweep group's level reached: the mean over its cells of the
 * `level` a fill step measured in the same sweep value, volume and
 * repetition. */
void rep_fnd_find_reached(struct rdata *d)
{
	struct reached *r = NULL;
	size_t nr = 0, alloc = 0;
	for (size_t i = 0; i < d->nsamples; i++) {
		const struct rd_sample *sm = &d->samples[i];
		const struct rd_cell *c = &d->cells[sm->cell];
		const char *m = rd_str(d, sm->metric);
		const struct rig_module *mod = d->tmpls[c->tmpl].mod;
		if (!c->sweep_value || !mod || !(mod->flags & MOD_SETS_LEVEL) || isnan(sm->value) ||
		    (strcmp(m, "level") && strcmp(m, "free")))
			continue;
		d->tmpls[c->tmpl].level_source = 1;
		size_t plen = sweep_prefix_len(c->step), k = 0;
		while (k < nr && !(r[k].vol == c->vol && r[k].rep == c->rep && r[k].plen == plen &&
				   !strncmp(r[k].step, c->step, plen)))
			k++;
		if (k == nr) {
			XGROW(r, nr + 1, alloc);
			r[nr] = (struct reached){ c->vol, c->rep, c->step, plen, NAN, NAN };
			nr++;
		}
		if (!strcmp(m, "level"))
			r[k].level = sm->value;
		else
			r[k].free_bytes = sm->value;
	}
	size_t cap = 0;
	for (size_t i = 0; i < d->ngroups; i++)
		cap = d->groups[i].n > cap ? d->groups[i].n : cap;
	double *lv = xmalloc((cap ? cap : 1) * sizeof(double));
	double *fr = xmalloc((cap ? cap : 1) * sizeof(double));
	for (size_t i = 0; i < d->ngroups; i++) {
		struct rd_group *g = &d->groups[i];
		g->reached = g->reached_lo = g->reached_hi = g->reached_free = NAN;
		if (!g->sweep_value || !nr)
			continue;
		size_t nl = 0, nf = 0;
		uint32_t prev = UINT32_MAX;
		for (size_t k = g->first; k < g->first + g->n; k++) {
			uint32_t ci = d->samples[d->order[k]].cell;
			if (ci == prev)
				continue; /* one value per cell */
			prev = ci;
			const struct rd_cell *c = &d->cells[ci];
			size_t plen = sweep_prefix_len(c->step);
			for (size_t q = 0; q < nr; q++)
				if (r[q].vol == c->vol && r[q].rep == c->rep && r[q].plen == plen &&
				    !strncmp(r[q].step, c->step, plen)) {
					if (!isnan(r[q].level))
						lv[nl++] = r[q].level;
					if (!isnan(r[q].free_bytes))
						fr[nf++] = r[q].free_bytes;
					break;
				}
		}
		if (nl) {
			struct stats_summary ss;
			rep_stats_summarize(lv, nl, &ss);
			g->reached = ss.mean;
			g->reached_lo = ss.ci_low;
			g->reached_hi = ss.ci_high;
		}
		if (nf) {
			double sum = 0;
			for (size_t q = 0; q < nf; q++)
				sum += fr[q];
			g->reached_free = sum / (double)nf;
		}
	}
	free(lv);
	free(fr);
	free(r);
}

static int cmp_sweep(const void *a, const void *b, const struct rdata *d)
{
	const struct rd_group *x = &d->groups[*(const size_t *)a], *y = &d->groups[*(const size_t *)b];
	return (x->sweep_index > y->sweep_index) - (x->sweep_index < y->sweep_index);
}

static void sort_by_sweep(const struct rdata *d, size_t *gi, size_t n)
{
	for (size_t i = 1; i < n; i++) /* insertion sort: a sweep has few values */
		for (size_t j = i; j > 0 && cmp_sweep(&gi[j - 1], &gi[j], d) > 0; j--) {
			size_t t = gi[j];
			gi[j] = gi[j - 1];
			gi[j - 1] = t;
		}
}

/* "96.24% reached (asked 96%)", or the sweep value when no fill step
 * measured the level. */
static void add_level(struct strbuf *sb, const struct rd_group *g)
{
	if (!isnan(g->reached)) {
		/* two decimals: 98.3% reached reads wrong as "98%" */
		sb_addf(sb, "%.2f%% reached (asked %s)", g->reached, g->sweep_value);
	} else {
		sb_adds(sb, g->sweep_value);
	}
}

void rep_fnd_sweeps(struct fctx *c, uint32_t ti)
{
	struct rdata *d = c->d;
	const struct rd_template *t = &d->tmpls[ti];
	/* The fill step is the means: its rate is filler written per second, not
	 * a measurement read against the level it sets. */
	if (t->level_source)
		return;
	struct series *s;
	size_t ns = rep_fnd_collect_series(d, t, &s);
	int better = rep_fnd_better(d, ti);
	const char *metric = rd_str(d, t->headline), *var = t->sweep_var ? t->sweep_var : "value";
	for (size_t k = 0; k < ns; k++) {
		if (s[k].n < 2)
			continue;
		sort_by_sweep(d, s[k].gi, s[k].n);
		const struct rd_group *first = &d->groups[s[k].gi[0]], *onset = NULL;
		const char *unit = rd_str(d, first->unit);
		for (size_t j = 1; j < s[k].n && !isnan(first->s.ci_low); j++) {
			const struct rd_group *g = &d->groups[s[k].gi[j]];
			if (isnan(g->s.ci_low))
				continue;
			if (better > 0 ? g->s.ci_high < first->s.ci_low : g->s.ci_low > first->s.ci_high) {
				onset = g;
				break;
			}
		}
		sb_reset(&c->tmp);
		rep_fnd_group_label(&c->tmp, d, first);
		sb_reset(&c->sb);
		sb_addf(&c->sb, "%s: onset against %s %s", c->tmp.buf, var, first->sweep_value);
		struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_ONSET, c->sb.buf);
		f->units = rep_fnd_units_of(d, s[k].gi, s[k].n);
		const char *su = strchr(first->sweep_value, '%') ? "%" : "";
		f->unit = su;
		f->n = 0;
		for (size_t j = 0; j < s[k].n; j++)
			f->n += d->groups[s[k].gi[j]].s.n;
		sb_reset(&c->sb);
		if (onset) {
			struct rep_stats_diff df;
			rep_stats_diff(&onset->s, &first->s, &df);
			f->estimate = !isnan(onset->reached) ? onset->reached : onset->sweep_num;
			f->ci_low = !isnan(onset->reached) ? onset->reached_lo : NAN;
			f->ci_high = !isnan(onset->reached) ? onset->reached_hi : NAN;
			f->p = df.p;
			f->effect = 1;
			f->strength = rep_fnd_strength(df.diff_pct, df.ci_low, df.ci_high, 0);
			if (f->strength < 1)
				f->strength = 1; /* the intervals do not overlap */
			sb_addf(&c->sb, "%s: %s %s from %s ", c->tmp.buf, metric,
				better > 0 ? "drops" : "rises", var);
			add_level(&c->sb, onset);
			sb_adds(&c->sb, ": ");
			rep_fnd_add_value(&c->sb, onset->s.mean, unit);
			sb_adds(&c->sb, " against ");
			rep_fnd_add_value(&c->sb, first->s.mean, unit);
			sb_adds(&c->sb, " at ");
			add_level(&c->sb, first);
			sb_adds(&c->sb, ", ");
			rep_html_pct(&c->sb, df.diff_pct);
			rep_fnd_add_ci_p(&c->sb, df.ci_low, df.ci_high, df.p, 1);
			if (!isnan(onset->reached_free))
				sb_addf(&c->sb, "; free space left %.2f GB", onset->reached_free / 1e9);
			sb_adds(&c->sb, ".");
		} else {
			const struct rd_group *last = &d->groups[s[k].gi[s[k].n - 1]];
			if (isnan(first->s.ci_low))
				sb_addf(&c->sb, "%s: %s at the first %s (%s), so no interval there: no "
						"onset can be established; ",
					c->tmp.buf, first->s.n ? "one sample" : "no sample", var,
					first->sweep_value);
			else
				sb_addf(&c->sb, "%s: no %s up to %s is clearly %s than the first (%s); ",
					c->tmp.buf, var, last->sweep_value, better > 0 ? "lower" : "higher",
					first->sweep_value);
			sb_addf(&c->sb, "%s ", metric);
			rep_fnd_add_value(&c->sb, last->s.mean, unit);
			sb_adds(&c->sb, " at ");
			add_level(&c->sb, last);
			sb_adds(&c->sb, " against ");
			rep_fnd_add_value(&c->sb, first->s.mean, unit);
			sb_adds(&c->sb, " at ");
			add_level(&c->sb, first);
			sb_adds(&c->sb, ".");
		}
		rep_fnd_set_sentence(c, f);
	}
	rep_fnd_free_series(s, ns);
}
