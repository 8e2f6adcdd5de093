/*
 * Findings of steps outside cycles and sweeps: a crossed design (each file
 * system, or volume, at two or more positions: the two-factor model of
 * reports/model.c), three or more positions of one file system (a straight
 * line against position), or else the plain difference from the baseline
 * (or lowest against highest). See findings.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "plan/plan.h"
#include "reports/findings_int.h"
#include "reports/findings_units.h"
#include "reports/html_int.h"

/* --- positions: a crossed design, or a trend over three or more --- */

/* An observation: value, levels, position, and the volume (a row of the
 * store's volumes: one per provisioning) and repetition it came from. */
struct obs {
	double *y;
	uint32_t *a, *b, *unit, *rep;
	double *x;
	size_t n, alloc;
};

static void obs_add(struct obs *o, double y, uint32_t a, uint32_t b, double x,
		    const struct rd_cell *c)
{
	if (o->n == o->alloc) {
		o->alloc = o->alloc ? 2 * o->alloc : 64;
		o->y = xrealloc(o->y, o->alloc * sizeof(double));
		o->x = xrealloc(o->x, o->alloc * sizeof(double));
		o->a = xrealloc(o->a, o->alloc * sizeof(uint32_t));
		o->b = xrealloc(o->b, o->alloc * sizeof(uint32_t));
		o->unit = xrealloc(o->unit, o->alloc * sizeof(uint32_t));
		o->rep = xrealloc(o->rep, o->alloc * sizeof(uint32_t));
	}
	o->y[o->n] = y;
	o->a[o->n] = a;
	o->b[o->n] = b;
	o->x[o->n] = x;
	o->unit[o->n] = c->vol;
	o->rep[o->n] = c->rep;
	o->n++;
}

static void obs_free(struct obs *o)
{
	free(o->y);
	free(o->x);
	free(o->a);
	free(o->b);
	free(o->unit);
	free(o->rep);
}

/* Does the file system tell the volumes apart (each name one fs, each fs one name)? */
static int fs_separates(const struct rdata *d, const struct rd_template *t)
{
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (!g->fs || !strcmp(g->fs, "unknown"))
			return 0;
		for (size_t j = t->first_group; j < i; j++) {
			const struct rd_group *h = &d->groups[j];
			if ((g->volume == h->volume) != (!strcmp(g->fs, h->fs)))
				return 0;
		}
	}
	return 1;
}

static const char *level_of(const struct rd_group *g, int by_fs)
{
	return by_fs ? g->fs : g->volume;
}

int rep_fnd_compare_by_fs(const struct rdata *d, const struct rd_template *t)
{
	enum plan_compare cmp = d->plan ? d->plan->report.compare : COMPARE_AUTO;
	return cmp == COMPARE_FS || (cmp == COMPARE_AUTO && fs_separates(d, t));
}

const char *rep_fnd_level(const struct rdata *d, uint32_t tmpl, const struct rd_group *g)
{
	return level_of(g, d->tmpls[tmpl].by_fs);
}

/* Are all the step's volumes of one file system (or of none known)? */
static int one_fs(const struct rdata *d, const struct rd_template *t)
{
	const char *fs = NULL;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const char *f = d->groups[i].fs;
		if (!f || !strcmp(f, "unknown"))
			continue;
		if (fs && strcmp(fs, f))
			return 0;
		fs = f;
	}
	return 1;
}

/* The difference row of a step: today's finding (largest difference from
 * the baseline, or lowest against highest). */
void rep_fnd_difference(struct fctx *c, uint32_t ti)
{
	struct rdata *d = c->d;
	const struct rd_template *t = &d->tmpls[ti];
	const struct rd_group *best = NULL, *hi = NULL, *lo = NULL;
	size_t ngroups = 0;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != t->headline || !g->s.n)
			continue;
		ngroups++;
		if (g->base >= 0 && g->base != (long)i && isfinite(g->diff.diff_pct) &&
		    (!best || fabs(g->diff.diff_pct) > fabs(best->diff.diff_pct)))
			best = g;
		if (!hi || g->s.mean > hi->s.mean)
			hi = g;
		if (!lo || g->s.mean < lo->s.mean)
			lo = g;
	}
	if (!ngroups)
		return;
	const char *unit = rd_str(d, hi->unit);
	struct rep_stats_diff df;
	const struct rd_group *x = best, *b = best ? &d->groups[best->base] : NULL;
	if (!best && ngroups > 1 && hi != lo) {
		x = lo;
		b = hi;
		rep_stats_diff(&lo->s, &hi->s, &df);
	} else if (best) {
		df = best->diff;
	}
	sb_reset(&c->tmp);
	if (x) {
		rep_fnd_group_label(&c->tmp, d, x);
		sb_adds(&c->tmp, " vs ");
		rep_fnd_group_label(&c->tmp, d, b);
	} else {
		rep_fnd_group_label(&c->tmp, d, hi);
	}
	struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_DIFFERENCE, c->tmp.buf);
	size_t used[2] = { (size_t)((x ? x : hi) - d->groups), (size_t)((x ? b : hi) - d->groups) };
	f->units = rep_fnd_units_of(d, used, x ? 2 : 1);
	sb_reset(&c->sb);
	if (!x) {
		f->unit = rep_rd_strdup(d, unit);
		f->estimate = hi->s.mean;
		f->ci_low = hi->s.ci_low;
		f->ci_high = hi->s.ci_high;
		f->n = hi->s.n;
		/* The metric is named by the row (and the page's line before
		 * the sentence): "rate: rate: mean" read as a stutter. */
		sb_adds(&c->sb, "mean ");
		rep_fnd_add_value(&c->sb, hi->s.mean, unit);
		rep_fnd_add_ci_p(&c->sb, hi->s.ci_low, hi->s.ci_high, NAN, 0);
		sb_adds(&c->sb, "; nothing to compare it with.");
		rep_fnd_set_sentence(c, f);
		return;
	}
	f->estimate = df.diff_pct;
	f->ci_low = df.ci_low;
	f->ci_high = df.ci_high;
	f->p = df.p;
	f->n = x->s.n + b->s.n;
	f->effect = !isnan(df.ci_low) && (df.ci_low > 0 || df.ci_high < 0);
	f->strength = rep_fnd_strength(df.diff_pct, df.ci_low, df.ci_high, 0);
	sb_addf(&c->sb, "%s%s: ", best ? "largest difference from " : "lowest against highest",
		best ? d->baseline : "");
	rep_fnd_group_label(&c->sb, d, x);
	sb_adds(&c->sb, " ");
	rep_fnd_add_value(&c->sb, x->s.mean, unit);
	sb_adds(&c->sb, " against ");
	rep_fnd_group_label(&c->sb, d, b);
	sb_adds(&c->sb, " ");
	rep_fnd_add_value(&c->sb, b->s.mean, unit);
	sb_adds(&c->sb, ", ");
	rep_html_pct(&c->sb, df.diff_pct);
	rep_fnd_add_ci_p(&c->sb, df.ci_low, df.ci_high, df.p, 1);
	if (isnan(df.ci_low))
		sb_adds(&c->sb, x->s.n < 2 || b->s.n < 2
				   ? ": with one sample per volume the difference cannot be told from noise."
				   : ": the interval is unbounded, the difference is not established.");
	else
		sb_adds(&c->sb, f->effect ? ": the interval excludes 0." : ": no clear difference.");
	rep_fnd_set_sentence(c, f);
}

/* Levels of a factor in first-seen order, with an optional reference first. */
struct levels {
	const char *name[64];
	size_t n;
};

static uint32_t level_index(struct levels *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->name[i], name))
			return (uint32_t)i;
	if (l->n == 64)
		return UINT32_MAX;
	l->name[l->n] = name;
	return (uint32_t)l->n++;
}

/* What the position rows rest on: " It rests on N provisioned volumes"
 * (and how they were compared when the between-volume variance could not
 * be estimated). */
static void units_sentence(struct strbuf *sb, const struct fnd_units *u)
{
	sb_addf(sb, " It rests on %zu provisioned volume%s", u->units, u->units == 1 ? "" : "s");
	if (!u->mixed)
		sb_adds(sb, " (their means compared: the spread between volumes could not be told "
			    "from the spread between passes)");
	sb_adds(sb, ".");
}

/* With one provisioned volume per combination, the file-system (or
 * volume) difference is confounded with where the files landed. */
static void placement_sentence(struct strbuf *sb, const struct fnd_units *u, int by_fs)
{
	if (u->min_cell != 1)
		return;
	sb_addf(sb, " With one provisioned volume per %s and position, this difference cannot be "
		    "told apart from where the files happened to land",
		by_fs ? "file system" : "volume name");
	if (u->needed)
		sb_addf(sb, "; %u provisioning%s of each (repeat: { times: %u, provision: each }) "
			    "would narrow its interval to about ±5%%", u->needed,
			u->needed == 1 ? "" : "s", u->needed);
	else
		sb_adds(sb, "; how many provisionings would separate them cannot be estimated from "
			    "these volumes");
	sb_adds(sb, ".");
}

/* Where the files of step ti of each level sit within their volumes:
 * the recorded places (files.csv's disk offsets) over the volumes' byte
 * ranges, lowest and highest, in percent; NaN for a level none of whose
 * files has a place. */
static void placement_of(const struct rdata *d, uint32_t ti, const struct levels *la, int by_fs,
			 double *lo, double *hi)
{
	for (size_t k = 0; k < la->n; k++) {
		lo[k] = INFINITY;
		hi[k] = -INFINITY;
	}
	for (size_t i = 0; i < d->nfiles; i++) {
		const struct rd_file *f = &d->files[i];
		const struct rd_cell *cl = &d->cells[f->cell];
		const struct rd_volume *v = &d->vols[cl->vol];
		if (cl->tmpl != ti || f->disk_offset[0] < 0 || !v->has_offsets ||
		    v->off_end <= v->off_start)
			continue;
		const char *lev = by_fs ? v->fs : v->name;
		size_t k = 0;
		while (k < la->n && (!lev || strcmp(la->name[k], lev)))
			k++;
		if (k == la->n)
			continue;
		double len = (double)(v->off_end - v->off_start);
		lo[k] = fmin(lo[k], 100 * (double)(f->disk_offset[0] - v->off_start) / len);
		hi[k] = fmax(hi[k], 100 * (double)(f->disk_offset[1] - v->off_start) / len);
	}
	for (size_t k = 0; k < la->n; k++)
		if (isinf(lo[k]))
			lo[k] = hi[k] = NAN;
}

/* The file-system row's sentence on where the two levels put their data:
 * said when their spans' middles are more than 10 points apart or one
 * span is more than twice the other. */
static void where_sentence(struct strbuf *sb, const char *a, double alo, double ahi, const char *b,
			   double blo, double bhi)
{
	if (isnan(alo) || isnan(blo))
		return;
	double wa = ahi - alo, wb = bhi - blo;
	int differ = fabs((alo + ahi) / 2 - (blo + bhi) / 2) > 10 || wa > 2 * wb || wb > 2 * wa;
	sb_addf(sb, " %s's files sit between %.1f%% and %.1f%% of its volumes, %s's between %.1f%% "
		    "and %.1f%%%s", a, alo, ahi, b, blo, bhi,
		differ ? ": part of the difference may be placement." : ", about the same places.");
}

/* The levels of the factor (into la, after any reference already there)
 * and the positions, in order, of the headline's groups: 0, or -1 when a
 * group's volume has no byte range or there are too many of either. */
static int collect_levels(const struct rdata *d, const struct rd_template *t, struct levels *la,
			  int positions[64], size_t *npos)
{
	int by_fs = t->by_fs;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != t->headline || !g->s.n)
			continue;
		const struct rd_volume *v = NULL;
		for (size_t k = 0; k < d->nvols && !v; k++)
			if (d->vols[k].name == g->volume && d->vols[k].layout == g->layout)
				v = &d->vols[k];
		if (!v || !v->has_offsets || !level_of(g, by_fs))
			return -1;
		if (level_index(la, level_of(g, by_fs)) == UINT32_MAX)
			return -1;
		size_t k = 0;
		while (k < *npos && positions[k] != g->position)
			k++;
		if (k == *npos) {
			if (*npos == 64)
				return -1;
			positions[(*npos)++] = g->position;
		}
	}
	for (size_t i = 1; i < *npos; i++)
		for (size_t j = i; j > 0 && positions[j - 1] > positions[j]; j--) {
			int tmp = positions[j];
			positions[j] = positions[j - 1];
			positions[j - 1] = tmp;
		}
	return 0;
}

/* Each level of the factor measured at two positions or more: a crossed
 * design, which can tell the factor from the position. */
static int is_crossed(const struct rdata *d, const struct rd_template *t, const struct levels *la,
		      const int *positions, size_t npos)
{
	int crossed = la->n >= 2;
	for (size_t a = 0; a < la->n && crossed; a++) {
		int seen = 0;
		for (size_t k = 0; k < npos; k++)
			for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
				const struct rd_group *g = &d->groups[i];
				if (g->metric == t->headline && g->s.n && g->position == positions[k] &&
				    !strcmp(level_of(g, t->by_fs), la->name[a])) {
					seen++;
					break;
				}
			}
		crossed = seen >= 2;
	}
	return crossed;
}

/* What the rows of a crossed fit share. */
struct crossed_rows {
	struct fctx *c;
	uint32_t ti;
	const struct levels *la;
	char (*pname)[24];
	size_t npos;
	int by_fs;
	const char *metric, *unit;
	const struct model_crossed *m;
	const struct fnd_units *u;
	size_t n;      /* observations */
	uint32_t fam;  /* the family of the rows */
};

/* A row per position against the first: the crossed fit's position
 * effects, the first row saying what the rate follows. */
static void position_rows(const struct crossed_rows *r)
{
	struct fctx *c = r->c;
	uint32_t ti = r->ti;
	const struct rd_template *t = &c->d->tmpls[ti];
	const struct fnd_units *u = r->u;
	const struct model_crossed *m = r->m;
	const struct levels *la = r->la;
	const char *unit = r->unit;
	char (*pname)[24] = r->pname;
	int pos_eff = 0, fs_eff = 0;
	for (size_t k = 1; k < r->npos; k++)
		pos_eff |= rep_fnd_excludes_zero(&u->b[k]);
	for (size_t k = 1; k < la->n; k++)
		fs_eff |= rep_fnd_excludes_zero(&u->a[k]);
	const char *fname = r->by_fs ? "the file system" : "the volume";
	for (size_t k = 1; k < r->npos; k++) {
		sb_reset(&c->tmp);
		sb_addf(&c->tmp, "%s vs %s", pname[k], pname[0]);
		struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_POSITION, c->tmp.buf);
		const struct model_est *e = &u->b[k];
		rep_fnd_est_row(f, e, r->n, r->fam);
		f->units = u->units;
		sb_reset(&c->sb);
		if (k == 1) {
			/* the row names its metric: the sentence does not repeat it */
			if (pos_eff && !fs_eff)
				sb_addf(&c->sb, "follows position, not %s; ", fname);
			else if (!pos_eff && fs_eff)
				sb_addf(&c->sb, "follows %s, not position; ", fname);
			else if (pos_eff)
				sb_addf(&c->sb, "depends on both position and %s; ", fname);
			else
				sb_addf(&c->sb, "neither position nor %s changes it clearly; ", fname);
		}
		sb_addf(&c->sb, "%s: ", pname[0]);
		rep_fnd_add_value(&c->sb, m->b_mean[0], unit);
		sb_addf(&c->sb, ", %s: ", pname[k]);
		rep_fnd_add_value(&c->sb, m->b_mean[k], unit);
		sb_adds(&c->sb, " ");
		rep_fnd_add_pct_paren(&c->sb, e->est, e->lo, e->hi, e->p);
		if (!f->effect)
			sb_adds(&c->sb, ": no clear effect");
		sb_adds(&c->sb, ".");
		if (k == 1)
			units_sentence(&c->sb, u);
		rep_fnd_set_sentence(c, f);
	}
}

/* A row per level of the factor (file system or volume) against the
 * first, at the same positions, with where each level's files sat. */
static void level_rows(const struct crossed_rows *r, const double *plo, const double *phi)
{
	struct fctx *c = r->c;
	uint32_t ti = r->ti;
	const struct rd_template *t = &c->d->tmpls[ti];
	const struct fnd_units *u = r->u;
	const struct model_crossed *m = r->m;
	const struct levels *la = r->la;
	const char *unit = r->unit;
	int by_fs = r->by_fs;
	for (size_t k = 1; k < la->n; k++) {
		sb_reset(&c->tmp);
		sb_addf(&c->tmp, "%s vs %s", la->name[k], la->name[0]);
		struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_FILESYSTEM, c->tmp.buf);
		const struct model_est *e = &u->a[k];
		rep_fnd_est_row(f, e, r->n, r->fam);
		f->units = u->units;
		sb_reset(&c->sb);
		sb_addf(&c->sb, "%s: %s ", by_fs ? "file system" : "volume", la->name[k]);
		rep_fnd_add_value(&c->sb, m->a_mean[k], unit);
		sb_addf(&c->sb, " against %s ", la->name[0]);
		rep_fnd_add_value(&c->sb, m->a_mean[0], unit);
		sb_adds(&c->sb, " at the same positions, ");
		rep_html_pct(&c->sb, e->est);
		rep_fnd_add_ci_p(&c->sb, e->lo, e->hi, e->p, 1);
		sb_adds(&c->sb, f->effect ? ": an effect." : ": no clear effect.");
		where_sentence(&c->sb, la->name[k], plo[k], phi[k], la->name[0], plo[0],
			       phi[0]);
		placement_sentence(&c->sb, u, by_fs);
		rep_fnd_set_sentence(c, f);
	}
}

/* The position x factor interaction row: tested on the volumes' means. */
static void interaction_row(const struct crossed_rows *r)
{
	struct fctx *c = r->c;
	uint32_t ti = r->ti;
	const struct rd_template *t = &c->d->tmpls[ti];
	const struct fnd_units *u = r->u;
	const struct model_crossed *m = r->m;
	int by_fs = r->by_fs;
	sb_reset(&c->tmp);
	sb_addf(&c->tmp, "position x %s", by_fs ? "file system" : "volume");
	struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_INTERACTION, c->tmp.buf);
	f->estimate = u->inter.est;
	f->ci_low = u->inter.lo;
	f->ci_high = u->inter.hi;
	f->p = u->int_p;
	f->n = r->n;
	f->units = u->units;
	f->family = r->fam;
	f->effect = !isnan(u->int_p) && u->int_p < 0.05;
	f->strength = isnan(m->int_pct.lo) ? (f->effect ? 1 : 0)
					  : rep_fnd_strength(f->estimate, f->ci_low, f->ci_high, 0);
	sb_reset(&c->sb);
	if (isnan(u->int_p)) {
		sb_addf(&c->sb, "interaction: not testable (%s)",
			u->min_cell == 0 ? "a combination of position and level was not measured"
			: u->min_cell == 1 ? "one provisioned volume per combination: nothing "
					    "to test against"
					  : "no spread between the volumes of a combination");
	} else {
		sb_addf(&c->sb, "interaction: the position effect %s between %ss",
			f->effect ? "differs" : "does not clearly differ",
			by_fs ? "file system" : "volume");
		if (!isnan(u->inter.est)) {
			sb_adds(&c->sb, ", by ");
			rep_html_pct(&c->sb, u->inter.est);
			rep_fnd_add_ci_p(&c->sb, u->inter.lo, u->inter.hi, u->int_p, 1);
		} else {
			sb_addf(&c->sb, " (F = %.2f on %.0f and %.0f df, ", u->int_f, u->int_df1,
				u->int_df2);
			rep_fnd_add_p(&c->sb, u->int_p);
			sb_adds(&c->sb, ")");
		}
	}
	sb_adds(&c->sb, ".");
	rep_fnd_set_sentence(c, f);
}

/* One file system at three positions or more: the line through the
 * provisioned volumes' means (the passes over a volume share where its
 * files are), its fall or rise from the first position to the last. 1 when
 * fitted. */
static int position_trend(struct fctx *c, uint32_t ti, const struct obs *o, char (*pname)[24],
			  size_t npos, const char *metric, const char *unit)
{
	const struct rd_template *t = &c->d->tmpls[ti];
	int done = 0;
	double *ux = xcalloc(o->n, sizeof(double)), *uy = xcalloc(o->n, sizeof(double));
	double *un = xcalloc(o->n, sizeof(double));
	uint32_t *uid = xcalloc(o->n, sizeof(uint32_t));
	size_t nu = 0;
	for (size_t i = 0; i < o->n; i++) {
		size_t j = 0;
		while (j < nu && uid[j] != o->unit[i])
			j++;
		if (j == nu) {
			uid[nu] = o->unit[i];
			ux[nu++] = o->x[i];
		}
		uy[j] += o->y[i];
		un[j]++;
	}
	for (size_t j = 0; j < nu; j++)
		uy[j] /= un[j];
	struct model_trend tr;
	if (rep_model_trend_fit(ux, uy, nu, &tr) == 0) {
		done = 1;
		sb_reset(&c->tmp);
		sb_addf(&c->tmp, "%s vs %s", pname[npos - 1], pname[0]);
		struct rd_finding *f = rep_fnd_add_row(c, ti, t->headline, FND_POSITION, c->tmp.buf);
		const struct model_est *e = &tr.change_pct;
		rep_fnd_est_row(f, e, o->n, 0);
		f->units = nu;
		sb_reset(&c->sb);
		sb_addf(&c->sb, "%s %s by ", metric, e->est < 0 ? "falls" : "rises");
		sb_addf(&c->sb, "%.1f%% from %s to %s along the disk", fabs(e->est), pname[0],
			pname[npos - 1]);
		rep_fnd_add_ci_p(&c->sb, e->lo, e->hi, e->p, 1);
		sb_adds(&c->sb, ": the fitted line goes from ");
		rep_fnd_add_value(&c->sb, tr.fit_first, unit);
		sb_adds(&c->sb, " to ");
		rep_fnd_add_value(&c->sb, tr.fit_last, unit);
		sb_adds(&c->sb, ", ");
		rep_fnd_add_value(&c->sb, fabs(tr.slope.est), unit);
		sb_adds(&c->sb, " per position");
		double knot;
		struct model_est extra;
		if (rep_model_steepening(ux, uy, nu, &knot, &extra)) {
			sb_addf(&c->sb, "; the %s steepens after position %.0f (",
				e->est < 0 ? "fall" : "rise", knot);
			rep_fnd_add_p(&c->sb, extra.p);
			sb_adds(&c->sb, ")");
		}
		if (!f->effect)
			sb_adds(&c->sb, ": no clear effect");
		sb_addf(&c->sb, ". It rests on the means of %zu provisioned volume%s.", nu,
			nu == 1 ? "" : "s");
		rep_fnd_set_sentence(c, f);
	}
	free(ux);
	free(uy);
	free(un);
	free(uid);
	return done;
}

int rep_fnd_crossed(struct fctx *c, uint32_t ti)
{
	struct rdata *d = c->d;
	const struct rd_template *t = &d->tmpls[ti];
	int by_fs = t->by_fs;
	struct levels la = { .n = 0 };
	/* The reference level first: the baseline's, else the first seen. */
	if (d->baseline && d->base_kind == RD_BASE_VOLUME)
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
			const struct rd_group *g = &d->groups[i];
			if (g->metric == t->headline && !strcmp(g->volume, d->baseline) && level_of(g, by_fs)) {
				level_index(&la, level_of(g, by_fs));
				break;
			}
		}
	int positions[64];
	size_t npos = 0;
	if (collect_levels(d, t, &la, positions, &npos) < 0)
		return 0;
	char pname[64][24];
	for (size_t k = 0; k < npos; k++)
		snprintf(pname[k], sizeof(pname[k]), "position %d", positions[k]);
	if (npos < 2)
		return 0;
	int crossed_design = is_crossed(d, t, &la, positions, npos);
	if (!crossed_design && npos < 3)
		return 0;
	struct obs o = { 0 };
	uint32_t unit_id = 0; /* the headline's unit: set below, there are groups */
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != t->headline || !g->s.n)
			continue;
		unit_id = g->unit;
		uint32_t a = level_index(&la, level_of(g, by_fs)), b = 0;
		while (positions[b] != g->position)
			b++;
		for (size_t k = g->first; k < g->first + g->n; k++) {
			const struct rd_sample *s = &d->samples[d->order[k]];
			if (!isnan(s->value))
				obs_add(&o, s->value, a, b, g->position, &d->cells[s->cell]);
		}
	}
	const char *metric = rd_str(d, t->headline);
	const char *unit = rd_str(d, unit_id);
	int done = 0;
	if (crossed_design) {
		struct model_crossed m;
		struct fnd_units u;
		struct fnd_unit_obs uo = { .y = o.y, .a = o.a, .b = o.b, .rep = o.rep, .unit = o.unit,
					   .n = o.n, .na = la.n, .nb = npos };
		int fitted = rep_model_crossed_fit(o.y, o.a, o.b, o.n, la.n, npos, &m) == 0;
		if (fitted) {
			uo.log_scale = m.log_scale;
			uo.a_m0 = m.a_mean[0];
			uo.b_m0 = m.b_mean[0];
		}
		if (fitted && rep_fnd_units_fit(&uo, &u) == 0) {
			done = 1;
			double plo[64], phi[64];
			placement_of(d, ti, &la, by_fs, plo, phi);
			struct crossed_rows r = { .c = c, .ti = ti, .la = &la, .pname = pname,
						  .npos = npos, .by_fs = by_fs, .metric = metric,
						  .unit = unit, .m = &m, .u = &u, .n = o.n,
						  .fam = ++c->nfamily };
			position_rows(&r);
			level_rows(&r, plo, phi);
			interaction_row(&r);
			rep_fnd_units_release(&u);
		}
		if (fitted)
			rep_model_crossed_release(&m);
	}
	if (!done && npos >= 3 && one_fs(d, t))
		done = position_trend(c, ti, &o, pname, npos, metric, unit);
	obs_free(&o);
	return done;
}
