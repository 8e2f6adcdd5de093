/*
 * Linear models for the findings of a report; see model.h for the
 * contracts.
 *
 * Least squares goes through a Householder QR decomposition of X (Golub
 * and Van Loan, Matrix Computations, 5.3): the coefficients by back
 * substitution in R, (X'X)^-1 as R^-1 R^-T. The columns are first scaled
 * to length 1 (and the results scaled back), so that the rank check does
 * not depend on units: without column pivoting the k-th pivot |r_kk| is
 * then the sine of the angle between column k and the columns before it,
 * and one below 1e-10 is a column the others (nearly) span: the check
 * that tells a crossed design whose levels do not connect from one that
 * does. Unscaled, an intercept next to positions in bytes (norms 3 and
 * 3e12) would fail it. Rejected: the normal equations (they square the
 * condition number; Longley's certified digits would be lost), and a
 * pseudo-inverse that would quietly fit a design that does not separate
 * its effects.
 *
 * Rounding is not spread. Data without noise (a synthetic disk, a copy of
 * one result) leave residuals of a few ulps of y, and a ratio of two such
 * residual sums (an F statistic) or an estimate over such a standard error
 * (a t) is a random number. A residual sum of squares whose root is below
 * 2^-43 (1.1e-13) of |y| is therefore taken as 0, and a standard error of
 * 0 gives an interval of zero width but no t, p or F (NaN), as rep_stats_diff
 * gives no p for groups without spread.
 *
 * The crossed design's full model is the cell-means model, computed
 * directly (the mean of each cell, the spread within cells): a dense
 * indicator matrix of one column per cell would cost n x cells doubles
 * for the same numbers. The 2 x 2 interaction coefficient of the
 * treatment-coded full model is the contrast m11 - m10 - m01 + m00 of the
 * cell means: the same column space, hence the same estimate and
 * standard error.
 *
 * The trend and the knot search fit x standardized, (x - mean) / range,
 * and carry the results back to x's unit: x given in bytes or seconds
 * since 1970 is far from 0 compared with its spread. The knot search
 * fits the means of the groups of equal x, weighted by their counts (the
 * same coefficients as the fit to every point; the residual sum adds the
 * spread within the groups), so a series of many repetitions at a few x
 * costs a few small fits. The search is O(m^2) in m distinct x: it takes
 * seconds only from about ten thousand distinct x (bench/README.md has the
 * times). Rejected: updating sums of squares from knot to knot,
 * O(m) in all but with the cancellation QR avoids.
 */
#include "reports/model.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "reports/model_int.h"
#include "reports/stats.h"

/* A pivot of the QR decomposition of X with unit columns below this: X
 * does not have full column rank. */
#define RANK_TOL 1e-10
/* A residual norm below this fraction of y's norm is rounding (2^-43). */
#define ROUNDING_TOL (512 * DBL_EPSILON)

static void est_nan(struct model_est *e)
{
	e->est = e->se = e->lo = e->hi = e->df = e->t = e->p = NAN;
}

static void fill_nan(double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = NAN;
}

/* rss, or 0 when it is the rounding of a fit to y with sum of squares yy. */
static double rounding_to_zero(double rss, double yy)
{
	return rss <= ROUNDING_TOL * ROUNDING_TOL * yy ? 0 : rss;
}

static double sum_sq(const double *y, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += y[i] * y[i];
	return s;
}

/* The mean, corrected by a second pass for the rounding of the first. */
static double mean_of(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	double m = s / (double)n, corr = 0;
	for (size_t i = 0; i < n; i++)
		corr += x[i] - m;
	return m + corr / (double)n;
}

/* An estimate with variance var at df degrees of freedom: its interval,
 * and its t-test when it has a standard error above 0. */
static void fill_est(struct model_est *e, double est, double var, double df)
{
	est_nan(e);
	e->est = est;
	e->df = df;
	if (isnan(est) || isnan(var) || !(df > 0))
		return;
	e->se = var > 0 ? sqrt(var) : 0; /* a negative var is rounding */
	double q = rep_stats_t_quantile(0.5 + STATS_LEVEL / 2, df);
	e->lo = est - q * e->se;
	e->hi = est + q * e->se;
	if (e->se > 0) {
		e->t = est / e->se;
		e->p = rep_stats_t_two_sided(e->t, df);
	}
}

void rep_model_est_fill(struct model_est *e, double est, double var, double df)
{
	fill_est(e, est, var, df);
}

/* w[0..m) -= beta (v'w) v: the Householder reflection I - beta v v'. */
static void reflect(const double *v, double beta, double *w, size_t m)
{
	double s = 0;
	for (size_t i = 0; i < m; i++)
		s += v[i] * w[i];
	s *= beta;
	for (size_t i = 0; i < m; i++)
		w[i] -= s * v[i];
}

int rep_model_qr_lsq(const double *X, const double *y, size_t n, size_t p, double *coef,
		 double *xtxinv, double *rss, double *logdet)
{
	/* a: X column by column, becoming R above the diagonal and the
	 * reflection vectors on and below it; diag: R's diagonal. */
	double *a = xmalloc(n * p * sizeof(double));
	double *qty = xmalloc(n * sizeof(double));
	double *diag = xmalloc(p * sizeof(double));
	/* scale: the columns' norms; a holds them scaled to length 1. */
	double *scale = xmalloc(p * sizeof(double));
	int ret = 0;
	for (size_t j = 0; j < p; j++) {
		double *col = a + j * n;
		for (size_t i = 0; i < n; i++)
			col[i] = X[i * p + j];
		scale[j] = sqrt(sum_sq(col, n));
		if (!(scale[j] > 0) || isinf(scale[j])) {
			ret = -1;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			col[i] /= scale[j];
	}
	memcpy(qty, y, n * sizeof(double));
	for (size_t k = 0; k < p; k++) {
		double *v = a + k * n + k;
		size_t m = n - k;
		double norm = sqrt(sum_sq(v, m));
		if (!(norm > RANK_TOL)) {
			ret = -1;
			goto out;
		}
		/* The sign that avoids cancellation in v[0] - alpha. */
		double alpha = v[0] >= 0 ? -norm : norm;
		double beta = 1 / (norm * (norm + fabs(v[0])));
		v[0] -= alpha;
		diag[k] = alpha;
		for (size_t j = k + 1; j < p; j++)
			reflect(v, beta, a + j * n + k, m);
		reflect(v, beta, qty + k, m);
	}
	/* R b = (Q'y)[0..p); R[i][j] = a[j * n + i] above the diagonal. */
	for (size_t i = p; i-- > 0;) {
		double s = qty[i];
		for (size_t j = i + 1; j < p; j++)
			s -= a[j * n + i] * coef[j];
		coef[i] = s / diag[i];
	}
	*rss = sum_sq(qty + p, n - p);
	if (logdet) { /* log |X'X| = log |R'R| with the columns' scales */
		*logdet = 0;
		for (size_t k = 0; k < p; k++)
			*logdet += 2 * (log(fabs(diag[k])) + log(scale[k]));
	}
	/* R^-1 (upper triangular, row-major in rinv), then R^-1 R^-T. */
	double *rinv = xcalloc(p * p, sizeof(double));
	for (size_t j = 0; j < p; j++) {
		rinv[j * p + j] = 1 / diag[j];
		for (size_t i = j; i-- > 0;) {
			double s = 0;
			for (size_t k = i + 1; k <= j; k++)
				s += a[k * n + i] * rinv[k * p + j];
			rinv[i * p + j] = -s / diag[i];
		}
	}
	/* Back to X's columns: b_j = b'_j / scale_j. */
	for (size_t i = 0; i < p; i++) {
		coef[i] /= scale[i];
		for (size_t j = i; j < p; j++) {
			double s = 0;
			for (size_t k = j; k < p; k++)
				s += rinv[i * p + k] * rinv[j * p + k];
			s /= scale[i] * scale[j];
			xtxinv[i * p + j] = xtxinv[j * p + i] = s;
		}
	}
	free(rinv);
out:
	free(scale);
	free(a);
	free(qty);
	free(diag);
	return ret;
}

/* The residual variance and covariance of a fit from its (X'X)^-1 (in
 * f->cov on entry) and residual sum of squares. */
static void finish_fit(struct model_ols *f, double rss, double yy)
{
	f->rss = rounding_to_zero(rss, yy);
	f->df = (double)(f->n - f->p);
	f->s2 = f->df > 0 ? f->rss / f->df : NAN;
	for (size_t i = 0; i < f->p * f->p; i++)
		f->cov[i] *= f->s2;
}

int rep_model_ols_fit(const double *X, const double *y, size_t n, size_t p, double *coef,
		  double *cov, struct model_ols *out)
{
	out->n = n;
	out->p = p;
	out->coef = coef;
	out->cov = cov;
	out->rss = out->df = out->s2 = NAN;
	double rss;
	if (p == 0 || n < p || rep_model_qr_lsq(X, y, n, p, coef, cov, &rss, NULL)) {
		fill_nan(coef, p);
		fill_nan(cov, p * p);
		return -1;
	}
	finish_fit(out, rss, sum_sq(y, n));
	return 0;
}

void rep_model_ols_contrast(const struct model_ols *f, const double *c, struct model_est *out)
{
	double est = 0, var = 0;
	for (size_t i = 0; i < f->p; i++) {
		est += c[i] * f->coef[i];
		for (size_t j = 0; j < f->p; j++)
			var += c[i] * f->cov[i * f->p + j] * c[j];
	}
	fill_est(out, est, var, f->df);
}

double rep_model_f_tail(double f, double d1, double d2)
{
	if (isnan(f) || f < 0 || !(d1 > 0) || !(d2 > 0))
		return NAN;
	if (f == 0)
		return 1;
	if (isinf(f))
		return 0;
	return rep_stats_betai(d2 / 2, d1 / 2, d2 / (d2 + d1 * f));
}

int rep_model_fieller(double a, double b, double vaa, double vbb, double vab, double df,
		  double *lo, double *hi)
{
	*lo = *hi = NAN;
	double q = rep_stats_t_quantile(0.5 + STATS_LEVEL / 2, df), t2 = q * q;
	/* The theta with (a - theta b)^2 <= t^2 var(a - theta b): a quadratic
	 * A theta^2 - 2 B theta + C <= 0, bounded when A > 0. */
	double qa = b * b - t2 * vbb;
	if (!(qa > 0) || isnan(a) || isnan(vaa) || isnan(vab))
		return -1;
	double qb = a * b - t2 * vab, qc = a * a - t2 * vaa;
	/* B^2 - AC without the cancellation of the products a^2 b^2; never
	 * negative but for rounding (a / b itself is inside). */
	double disc = t2 * (a * a * vbb + b * b * vaa - 2 * a * b * vab -
			    t2 * (vaa * vbb - vab * vab));
	double sq = disc > 0 ? sqrt(disc) : 0;
	/* The root away from 0 as (B +- sq) / A, the other as C over that
	 * numerator: no difference of nearly equal numbers. */
	double far = qb >= 0 ? qb + sq : qb - sq;
	double r1 = far / qa, r2 = far != 0 ? qc / far : r1;
	*lo = r1 < r2 ? r1 : r2;
	*hi = r1 < r2 ? r2 : r1;
	return 0;
}

/* --- the crossed design --- */

/* An effect e on the fitted scale as a percentage: 100 (exp(e) - 1) on
 * the log scale, 100 e / m0 on y's own. */
void rep_model_pct(const struct model_est *e, int log_scale, double m0, struct model_est *out)
{
	*out = *e;
	if (log_scale) {
		out->est = 100 * expm1(e->est);
		out->se = 100 * exp(e->est) * e->se;
		out->lo = 100 * expm1(e->lo);
		out->hi = 100 * expm1(e->hi);
	} else if (m0 > 0) {
		double k = 100 / m0;
		out->est *= k;
		out->se *= k;
		out->lo *= k;
		out->hi *= k;
	} else {
		out->est = out->se = out->lo = out->hi = NAN;
	}
}

static void crossed_nan(struct model_crossed *c)
{
	c->log_scale = 0;
	for (size_t k = 0; k < c->na; k++) {
		est_nan(&c->a_pct[k]);
		c->a_mean[k] = NAN;
	}
	for (size_t k = 0; k < c->nb; k++) {
		est_nan(&c->b_pct[k]);
		c->b_mean[k] = NAN;
	}
	c->resid_df = c->int_f = c->int_df1 = c->int_df2 = c->int_p = NAN;
	est_nan(&c->int_pct);
}

/* Least-squares means of the additive fit coef (intercept, A levels
 * 1.., B levels 1..): a level's prediction averaged over the other
 * factor's levels with equal weight. */
static void lsmeans(const double *coef, size_t na, size_t nb, double *a_mean, double *b_mean)
{
	double sa = 0, sb = 0;
	for (size_t k = 1; k < na; k++)
		sa += coef[k];
	for (size_t k = 1; k < nb; k++)
		sb += coef[na - 1 + k];
	for (size_t k = 0; k < na; k++)
		a_mean[k] = coef[0] + (k ? coef[k] : 0) + sb / (double)nb;
	for (size_t k = 0; k < nb; k++)
		b_mean[k] = coef[0] + (k ? coef[na - 1 + k] : 0) + sa / (double)na;
}

/*
 * The cell-means model: coef[cells] the mean of each cell, cov the
 * diagonal s^2 / count. cell[i] is observation i's cell (0 .. ncells-1),
 * every cell has an observation.
 */
static void cell_means_fit(const double *z, const size_t *cell, size_t n, size_t ncells,
			   double *coef, double *cov, struct model_ols *f)
{
	double *count = xcalloc(ncells, sizeof(double));
	for (size_t j = 0; j < ncells; j++)
		coef[j] = 0;
	for (size_t i = 0; i < n; i++) {
		count[cell[i]] += 1;
		coef[cell[i]] += z[i];
	}
	for (size_t j = 0; j < ncells; j++)
		coef[j] /= count[j];
	/* A second pass corrects each mean for the rounding of the first. */
	double *corr = xcalloc(ncells, sizeof(double));
	for (size_t i = 0; i < n; i++)
		corr[cell[i]] += z[i] - coef[cell[i]];
	for (size_t j = 0; j < ncells; j++)
		coef[j] += corr[j] / count[j];
	double rss = 0;
	for (size_t i = 0; i < n; i++)
		rss += (z[i] - coef[cell[i]]) * (z[i] - coef[cell[i]]);
	for (size_t i = 0; i < ncells * ncells; i++)
		cov[i] = 0;
	for (size_t j = 0; j < ncells; j++)
		cov[j * ncells + j] = 1 / count[j];
	f->n = n;
	f->p = ncells;
	f->coef = coef;
	f->cov = cov;
	finish_fit(f, rss, sum_sq(z, n));
	free(count);
	free(corr);
}

/* The interaction: the cell-means model against the additive fit add of
 * z; int_pct for 2 x 2 designs. */
static void interaction(const double *z, const uint32_t *a, const uint32_t *b, size_t n,
			const struct model_ols *add, struct model_crossed *out)
{
	size_t na = out->na, nb = out->nb, ncells = 0;
	size_t *col = xmalloc(na * nb * sizeof(size_t)), *cell = xmalloc(n * sizeof(size_t));
	for (size_t j = 0; j < na * nb; j++)
		col[j] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t ab = (size_t)a[i] * nb + b[i];
		if (col[ab] == SIZE_MAX)
			col[ab] = ncells++;
		cell[i] = col[ab];
	}
	double *coef = xmalloc(ncells * sizeof(double));
	double *cov = xmalloc(ncells * ncells * sizeof(double));
	struct model_ols full;
	cell_means_fit(z, cell, n, ncells, coef, cov, &full);
	if (ncells == na * nb && full.df > 0) {
		out->int_df1 = add->df - full.df;
		out->int_df2 = full.df;
		if (full.rss > 0) {
			double extra = add->rss > full.rss ? add->rss - full.rss : 0;
			out->int_f = extra / out->int_df1 / (full.rss / full.df);
			out->int_p = rep_model_f_tail(out->int_f, out->int_df1, out->int_df2);
		}
	}
	if (na == 2 && nb == 2 && ncells == 4) {
		/* Cells (a, b) at a * nb + b: m11 - m10 - m01 + m00. */
		double c[4] = { 0 };
		c[col[0]] += 1;
		c[col[1]] -= 1;
		c[col[2]] -= 1;
		c[col[3]] += 1;
		struct model_est e;
		rep_model_ols_contrast(&full, c, &e);
		rep_model_pct(&e, out->log_scale, out->b_mean[0], &out->int_pct);
	}
	free(col);
	free(cell);
	free(coef);
	free(cov);
}

/* Level k of one factor against its level 0: coefficient idx of fit f,
 * or the reference (est 0) for k == 0. */
static void effect(const struct model_ols *f, size_t k, size_t idx, int log_scale, double m0,
		   struct model_est *out)
{
	est_nan(out);
	if (k == 0) {
		out->est = 0;
		return;
	}
	double *c = xcalloc(f->p, sizeof(double));
	c[idx] = 1;
	struct model_est e;
	rep_model_ols_contrast(f, c, &e);
	rep_model_pct(&e, log_scale, m0, out);
	free(c);
}

int rep_model_crossed_fit(const double *y, const uint32_t *a, const uint32_t *b, size_t n,
		      size_t na, size_t nb, struct model_crossed *out)
{
	memset(out, 0, sizeof(*out));
	out->na = na;
	out->nb = nb;
	out->n = n;
	out->a_pct = xcalloc(na, sizeof(struct model_est));
	out->b_pct = xcalloc(nb, sizeof(struct model_est));
	out->a_mean = xcalloc(na, sizeof(double));
	out->b_mean = xcalloc(nb, sizeof(double));
	crossed_nan(out);
	if (na < 2 || nb < 2 || n == 0)
		return -1;
	int log_scale = 1;
	for (size_t i = 0; i < n; i++) {
		if (a[i] >= na || b[i] >= nb || !isfinite(y[i]))
			return -1;
		log_scale &= y[i] > 0;
	}
	/* Treatment coding: intercept, A levels 1.., B levels 1... */
	size_t p = na + nb - 1;
	double *X = xcalloc(n * p, sizeof(double)), *z = xmalloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		double *row = X + i * p;
		row[0] = 1;
		if (a[i])
			row[a[i]] = 1;
		if (b[i])
			row[na - 1 + b[i]] = 1;
		z[i] = log_scale ? log(y[i]) : y[i];
	}
	double *coef = xmalloc(p * sizeof(double)), *cov = xmalloc(p * p * sizeof(double));
	double *rcoef = xmalloc(p * sizeof(double)), *rcov = xmalloc(p * p * sizeof(double));
	struct model_ols add, raw;
	int ret = rep_model_ols_fit(X, z, n, p, coef, cov, &add);
	/* The least-squares means are in y's unit: the additive model fitted
	 * to y itself (the same design, so estimable alike). */
	if (ret == 0 && log_scale)
		ret = rep_model_ols_fit(X, y, n, p, rcoef, rcov, &raw);
	else
		memcpy(rcoef, coef, p * sizeof(double));
	if (ret == 0) {
		out->log_scale = log_scale;
		out->resid_df = add.df;
		lsmeans(rcoef, na, nb, out->a_mean, out->b_mean);
		for (size_t k = 0; k < na; k++)
			effect(&add, k, k, log_scale, out->a_mean[0], &out->a_pct[k]);
		for (size_t k = 0; k < nb; k++)
			effect(&add, k, na - 1 + k, log_scale, out->b_mean[0], &out->b_pct[k]);
		interaction(z, a, b, n, &add, out);
	}
	free(X);
	free(z);
	free(coef);
	free(cov);
	free(rcoef);
	free(rcov);
	return ret;
}

void rep_model_crossed_release(struct model_crossed *c)
{
	free(c->a_pct);
	free(c->b_pct);
	free(c->a_mean);
	free(c->b_mean);
	c->a_pct = c->b_pct = NULL;
	c->a_mean = c->b_mean = NULL;
}

/* --- trends --- */

int rep_model_trend_fit(const double *x, const double *y, size_t n, struct model_trend *out)
{
	out->n = n;
	out->b0 = out->b1 = out->r2 = NAN;
	out->x_first = out->x_last = out->fit_first = out->fit_last = NAN;
	est_nan(&out->slope);
	est_nan(&out->change_pct);
	if (n == 0)
		return -1;
	double lo = x[0], hi = x[0];
	for (size_t i = 1; i < n; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	if (!(hi > lo))
		return -1;
	/* y = c0 + c1 u, u = (x - xm) / range. */
	double xm = mean_of(x, n), range = hi - lo;
	double *X = xmalloc(2 * n * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		X[2 * i] = 1;
		X[2 * i + 1] = (x[i] - xm) / range;
	}
	double c[2], cov[4];
	struct model_ols f;
	int ret = rep_model_ols_fit(X, y, n, 2, c, cov, &f);
	free(X);
	if (ret)
		return -1;
	double ul = (lo - xm) / range, uh = (hi - xm) / range;
	out->b1 = c[1] / range;
	out->b0 = c[0] - out->b1 * xm;
	out->x_first = lo;
	out->x_last = hi;
	out->fit_first = c[0] + c[1] * ul;
	out->fit_last = c[0] + c[1] * uh;
	const double per_x[2] = { 0, 1 / range };
	rep_model_ols_contrast(&f, per_x, &out->slope);

	double ymin = y[0], ymax = y[0];
	for (size_t i = 1; i < n; i++) {
		ymin = y[i] < ymin ? y[i] : ymin;
		ymax = y[i] > ymax ? y[i] : ymax;
	}
	double ym = mean_of(y, n), tss = 0;
	for (size_t i = 0; i < n; i++)
		tss += (y[i] - ym) * (y[i] - ym);
	out->r2 = ymax == ymin ? 1 : 1 - f.rss / tss;

	/* The change num / den: num = c1 (uh - ul), den = c0 + c1 ul. */
	double du = uh - ul, num = c[1] * du, den = out->fit_first;
	double vnn = du * du * cov[3], vdd = cov[0] + 2 * ul * cov[1] + ul * ul * cov[3];
	double vnd = du * (cov[1] + ul * cov[3]);
	struct model_est *ch = &out->change_pct;
	ch->df = f.df;
	ch->t = out->slope.t;
	ch->p = out->slope.p;
	if (den != 0) {
		double r = num / den, var = (vnn - 2 * r * vnd + r * r * vdd) / (den * den);
		ch->est = 100 * r;
		ch->se = isnan(var) ? NAN : 100 * sqrt(var > 0 ? var : 0);
	}
	double flo, fhi;
	if (rep_model_fieller(num, den, vnn, vdd, vnd, f.df, &flo, &fhi) == 0) {
		ch->lo = 100 * flo;
		ch->hi = 100 * fhi;
	}
	return 0;
}

struct point {
	double x, y;
};

static int by_x(const void *pa, const void *pb)
{
	double a = ((const struct point *)pa)->x, b = ((const struct point *)pb)->x;
	return a < b ? -1 : a > b;
}

int rep_model_steepening(const double *x, const double *y, size_t n, double *knot,
		     struct model_est *extra)
{
	*knot = NAN;
	est_nan(extra);
	if (n < 5)
		return 0;
	struct point *pt = xmalloc(n * sizeof(*pt));
	for (size_t i = 0; i < n; i++) {
		pt[i].x = x[i];
		pt[i].y = y[i];
	}
	qsort(pt, n, sizeof(*pt), by_x);
	double *sy = xmalloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		sy[i] = pt[i].y;
	/* Groups of equal x: gx their x, gw their count, gy their mean; the
	 * spread within them is part of every candidate's residual sum. */
	double *gx = xmalloc(n * sizeof(double)), *gw = xmalloc(n * sizeof(double));
	double *gy = xmalloc(n * sizeof(double)), within = 0;
	size_t m = 0;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && pt[j].x == pt[i].x; j++)
			;
		double gm = mean_of(sy + i, j - i);
		for (size_t q = i; q < j; q++)
			within += (sy[q] - gm) * (sy[q] - gm);
		gx[m] = pt[i].x;
		gw[m] = (double)(j - i);
		gy[m++] = gm;
	}
	int ret = 0;
	struct model_trend line;
	if (m < 5 || rep_model_trend_fit(x, y, n, &line))
		goto out;

	/* Weighted rows sqrt(w) (1, u, max(0, x - k) / range), u as in
	 * rep_model_trend_fit, for each candidate k = gx[j]. */
	double xm = mean_of(x, n), range = gx[m - 1] - gx[0];
	double *X = xmalloc(3 * m * sizeof(double)), *yw = xmalloc(m * sizeof(double));
	for (size_t i = 0; i < m; i++) {
		double sw = sqrt(gw[i]);
		X[3 * i] = sw;
		X[3 * i + 1] = sw * (gx[i] - xm) / range;
		yw[i] = sw * gy[i];
	}
	double coef[3], xtx[9], best_coef[3] = { 0 }, best_xtx[9] = { 0 }, best_rss = INFINITY;
	size_t best = 0;
	for (size_t j = 2; j + 2 < m; j++) {
		for (size_t i = 0; i < m; i++)
			X[3 * i + 2] = gx[i] > gx[j] ? sqrt(gw[i]) * (gx[i] - gx[j]) / range : 0;
		double rss;
		if (rep_model_qr_lsq(X, yw, m, 3, coef, xtx, &rss, NULL) == 0 && rss < best_rss) {
			best_rss = rss;
			best = j;
			memcpy(best_coef, coef, sizeof(coef));
			memcpy(best_xtx, xtx, sizeof(xtx));
		}
	}
	free(X);
	free(yw);
	if (isinf(best_rss))
		goto out;
	double rss = rounding_to_zero(best_rss + within, sum_sq(y, n)), df = (double)n - 3;
	struct model_est e;
	fill_est(&e, best_coef[2] / range, rss / df * best_xtx[8] / (range * range), df);
	/* Steeper in the line's own direction, and clearly so. */
	int same_sign = (e.est > 0 && line.b1 > 0) || (e.est < 0 && line.b1 < 0);
	if (same_sign && e.p < 1 - STATS_LEVEL) {
		*knot = gx[best];
		*extra = e;
		ret = 1;
	}
out:
	free(pt);
	free(sy);
	free(gx);
	free(gw);
	free(gy);
	return ret;
}
