/*
 * The crossed design on its provisioned volumes; see findings_units.h.
 */
#include "reports/findings_units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "reports/model_mixed.h"
#include "reports/stats.h"

#define NEEDED_MAX 50
/* The interval a design should reach for a's effect: +-5%. */
#define TARGET_PCT 5.0

/* values renumbered 0 .. k-1 in first-seen order; k returned. */
static size_t renumber(const uint32_t *v, size_t n, uint32_t *out)
{
	uint32_t *seen = xmalloc((n ? n : 1) * sizeof(uint32_t));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < k && seen[j] != v[i])
			j++;
		if (j == k)
			seen[k++] = v[i];
		out[i] = (uint32_t)j;
	}
	free(seen);
	return k;
}

static void est_nan(struct model_est *e)
{
	e->est = e->se = e->lo = e->hi = e->df = e->t = e->p = NAN;
}

static void reset(struct fnd_units *u, size_t na, size_t nb)
{
	u->a = xcalloc(na ? na : 1, sizeof(struct model_est));
	u->b = xcalloc(nb ? nb : 1, sizeof(struct model_est));
	for (size_t i = 0; i < na; i++)
		est_nan(&u->a[i]);
	for (size_t i = 0; i < nb; i++)
		est_nan(&u->b[i]);
	est_nan(&u->inter);
	u->int_f = u->int_df1 = u->int_df2 = u->int_p = NAN;
	if (na)
		u->a[0].est = 0;
	if (nb)
		u->b[0].est = 0;
}

/* Row of a design matrix: 1, a's dummies, b's dummies (treatment coding). */
static void design_row(double *row, uint32_t a, uint32_t b, size_t na, size_t nb)
{
	row[0] = 1;
	for (size_t k = 1; k < na; k++)
		row[k] = a == k;
	for (size_t k = 1; k < nb; k++)
		row[na - 1 + k] = b == k;
}

/* The main effects from the mixed model: 0, or -1 when the between-volume
 * variance cannot be estimated. *v1 the variance of a volume's mean. */
static int by_mixed(const struct fnd_unit_obs *o, const double *z, const uint32_t *unit,
		    size_t nu, struct fnd_units *u, double *v1)
{
	uint32_t *rep = xmalloc(o->n * sizeof(uint32_t));
	size_t nr = renumber(o->rep, o->n, rep);
	size_t p = o->na + o->nb - 1 + (nr - 1);
	double *X = xcalloc(o->n * p, sizeof(double));
	for (size_t i = 0; i < o->n; i++) {
		design_row(X + i * p, o->a[i], o->b[i], o->na, o->nb);
		for (size_t r = 1; r < nr; r++)
			X[i * p + o->na + o->nb - 2 + r] = rep[i] == r;
	}
	struct model_mixed m;
	int rc = rep_model_mixed_fit(X, z, unit, o->n, p, nu, &m);
	if (rc == 0 && !m.singular) {
		double *c = xcalloc(p, sizeof(double));
		for (size_t k = 1; k < o->na + o->nb - 1; k++) {
			memset(c, 0, p * sizeof(double));
			c[k] = 1;
			struct model_est e;
			rep_model_mixed_contrast(&m, c, &e);
			if (k < o->na)
				rep_model_pct(&e, o->log_scale, o->a_m0, &u->a[k]);
			else
				rep_model_pct(&e, o->log_scale, o->b_m0, &u->b[k - o->na + 1]);
		}
		free(c);
		*v1 = m.s2_u + m.s2_e * (double)nu / (double)o->n;
	} else {
		rc = -1;
	}
	rep_model_mixed_release(&m);
	free(X);
	free(rep);
	return rc;
}

/* The interaction on the volumes' means (um, of volumes in levels ua and
 * ub; cell_n and cell_sum per combination), against the additive fit f:
 * tested where every combination was measured and some spread within the
 * combinations is left to test against; for 2 x 2, its size too. */
static void interaction(const struct fnd_unit_obs *o, struct fnd_units *u,
			const struct model_ols *f, const uint32_t *ua, const uint32_t *ub,
			const double *um, size_t nu, const size_t *cell_n, const double *cell_sum)
{
	size_t ncell = o->na * o->nb;
	int full = 1;
	for (size_t k = 0; k < ncell; k++)
		full &= cell_n[k] > 0;
	double rss_full = 0;
	for (size_t j = 0; j < nu && full; j++) {
		size_t k = ua[j] * o->nb + ub[j];
		double dev = um[j] - cell_sum[k] / (double)cell_n[k];
		rss_full += dev * dev;
	}
	double df2 = (double)nu - (double)ncell, df1 = f->df - df2;
	if (full && df2 > 0 && df1 > 0) {
		u->int_df1 = df1;
		u->int_df2 = df2;
		if (rss_full > 0) {
			u->int_f = ((f->rss - rss_full) / df1) / (rss_full / df2);
			if (u->int_f < 0)
				u->int_f = 0;
			u->int_p = rep_model_f_tail(u->int_f, df1, df2);
		}
		if (o->na == 2 && o->nb == 2) {
			double m[4], var = 0, s2 = rss_full / df2;
			for (size_t k = 0; k < 4; k++) {
				m[k] = cell_sum[k] / (double)cell_n[k];
				var += s2 / (double)cell_n[k];
			}
			struct model_est e;
			rep_model_est_fill(&e, m[3] - m[2] - m[1] + m[0], var, df2);
			rep_model_pct(&e, o->log_scale, o->b_m0, &u->inter);
		}
	}
}

/* How many volumes per combination an interval of +-5% for a's effect
 * would take, with v1 the variance of a volume's mean as estimated (p
 * parameters, ncell combinations); 0: more than NEEDED_MAX. */
static unsigned volumes_needed(const struct fnd_unit_obs *o, double v1, size_t ncell, size_t p)
{
	double target = o->log_scale ? log1p(TARGET_PCT / 100) : TARGET_PCT / 100 * o->a_m0;
	/* One volume per combination cannot tell placement from the factor:
	 * two at least. */
	for (unsigned k = 2; k <= NEEDED_MAX && isfinite(v1) && target > 0; k++) {
		double df = (double)k * (double)ncell - (double)p;
		if (df < 1)
			continue;
		double se = sqrt(v1 * 2 / ((double)k * (double)o->nb));
		if (rep_stats_t_quantile(0.5 + STATS_LEVEL / 2, df) * se <= target)
			return k;
	}
	return 0;
}

int rep_fnd_units_fit(const struct fnd_unit_obs *o, struct fnd_units *u)
{
	memset(u, 0, sizeof(*u));
	reset(u, o->na, o->nb);
	if (o->n == 0 || o->na < 2 || o->nb < 2)
		return -1;
	uint32_t *unit = xmalloc(o->n * sizeof(uint32_t));
	size_t nu = renumber(o->unit, o->n, unit);
	u->units = nu;
	/* Each volume: one level of a and of b, its mean on the fitted scale. */
	double *z = xmalloc(o->n * sizeof(double));
	double *um = xcalloc(nu, sizeof(double)), *cnt = xcalloc(nu, sizeof(double));
	uint32_t *ua = xmalloc(nu * sizeof(uint32_t)), *ub = xmalloc(nu * sizeof(uint32_t));
	size_t ncell = o->na * o->nb;
	size_t *cell_n = xcalloc(ncell, sizeof(size_t));
	double *cell_sum = xcalloc(ncell, sizeof(double));
	int rc = -1;
	for (size_t i = 0; i < o->n; i++) {
		z[i] = o->log_scale ? log(o->y[i]) : o->y[i];
		size_t j = unit[i];
		if (cnt[j] == 0) {
			ua[j] = o->a[i];
			ub[j] = o->b[i];
		} else if (ua[j] != o->a[i] || ub[j] != o->b[i]) {
			goto out;
		}
		um[j] += z[i];
		cnt[j]++;
	}
	for (size_t j = 0; j < nu; j++) {
		um[j] /= cnt[j];
		cell_n[ua[j] * o->nb + ub[j]]++;
		cell_sum[ua[j] * o->nb + ub[j]] += um[j];
	}
	u->min_cell = nu;
	for (size_t k = 0; k < ncell; k++)
		if (cell_n[k] < u->min_cell)
			u->min_cell = cell_n[k];
	/* The volumes' means: the additive model by least squares. */
	size_t p = o->na + o->nb - 1;
	double *X = xcalloc(nu * p, sizeof(double));
	for (size_t j = 0; j < nu; j++)
		design_row(X + j * p, ua[j], ub[j], o->na, o->nb);
	double *coef = xmalloc(p * sizeof(double)), *cov = xmalloc(p * p * sizeof(double));
	struct model_ols f;
	if (nu < p || rep_model_ols_fit(X, um, nu, p, coef, cov, &f) < 0) {
		free(X);
		free(coef);
		free(cov);
		goto out;
	}
	rc = 0;
	double v1 = f.s2;
	u->mixed = by_mixed(o, z, unit, nu, u, &v1) == 0;
	if (!u->mixed) {
		double *c = xcalloc(p, sizeof(double));
		for (size_t k = 1; k < p; k++) {
			memset(c, 0, p * sizeof(double));
			c[k] = 1;
			struct model_est e;
			rep_model_ols_contrast(&f, c, &e);
			if (k < o->na)
				rep_model_pct(&e, o->log_scale, o->a_m0, &u->a[k]);
			else
				rep_model_pct(&e, o->log_scale, o->b_m0, &u->b[k - o->na + 1]);
		}
		free(c);
	}
	interaction(o, u, &f, ua, ub, um, nu, cell_n, cell_sum);
	u->needed = volumes_needed(o, v1, ncell, p);
	free(X);
	free(coef);
	free(cov);
out:
	if (rc)
		for (size_t k = 1; k < o->na || k < o->nb; k++) {
			if (k < o->na)
				est_nan(&u->a[k]);
			if (k < o->nb)
				est_nan(&u->b[k]);
		}
	free(unit);
	free(z);
	free(um);
	free(cnt);
	free(ua);
	free(ub);
	free(cell_n);
	free(cell_sum);
	return rc;
}

void rep_fnd_units_release(struct fnd_units *u)
{
	free(u->a);
	free(u->b);
	u->a = u->b = NULL;
}
