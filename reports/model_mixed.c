/*
 * The random-intercept model of model_mixed.h by REML.
 *
 * With theta = sd_u / sigma, V = I + theta^2 Z Z' is block diagonal, one
 * block I + theta^2 11' per group of n_j observations, so everything
 * needed at a theta comes from least squares on whitened data: V^-1/2 of
 * a block is I - c_j 11' with c_j = (1 - 1/sqrt(1 + theta^2 n_j)) / n_j
 * (its square is I - theta^2 / (1 + theta^2 n_j) 11' = V_j^-1), so each
 * row of X and y loses c_j times its group's sum. On the whitened data
 * rep_model_qr_lsq gives b(theta), M^-1 = (X'V^-1X)^-1, log |M| and the
 * weighted residual sum pwrss(theta); log |V| = sum log(1 + theta^2 n_j).
 * The REML criterion profiled over sigma (lme4's, Bates et al., "Fitting
 * Linear Mixed-Effects Models Using lme4", J. Stat. Softw. 67(1), 2015,
 * eq. 42) is
 *
 *   d(theta) = log |V| + log |M| + (n - p) (1 + log(2 pi pwrss / (n - p)))
 *
 * minimized over theta >= 0: the least of 0 and a log-spaced grid from
 * 1e-4 to 1e4 (eight points a decade), then golden-section search between
 * the best point's neighbours, and 0 kept when no theta does better by
 * more than rounding, 1e-10 of d (the boundary, a singular fit: d is even
 * in theta, flat at 0). sigma^2 =
 * pwrss / (n - p), s2_u = theta^2 sigma^2, cov = sigma^2 M^-1.
 *
 * Satterthwaite (lmerTest's contest1D, Kuznetsova et al., "lmerTest
 * Package", J. Stat. Softw. 82(13), 2017): the variance parameters are
 * vp = (theta, sigma); the unprofiled criterion
 *   D(theta, sigma) = log |V| + log |M| + (n - p) log(2 pi sigma^2) + pwrss / sigma^2
 * has its Hessian H at the optimum (the sigma terms in closed form, the
 * theta terms by central differences with Richardson extrapolation, as
 * numDeriv does for lmerTest, but from a first step of 1e-2 |theta| (1e-4
 * at 0), four halvings: here numDeriv's 1e-4 |theta| gave df 1.0016 for
 * the balanced fixture, whose exact df is 1 (lmerTest: 0.9999994), and
 * 1e-2 |theta| gives 1.0000001), A = 2 H^+ over H's eigenvalues above
 * 1e-8, and the
 * derivatives of cov = sigma^2 M^-1 (2 sigma M^-1 for sigma; theta's the
 * same way as H's).
 */
#include "reports/model_mixed.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "reports/model_int.h"

/* Residuals below this fraction of y's norm are rounding (model.c's). */
#define ROUNDING_TOL (512 * DBL_EPSILON)
#define EIG_TOL 1e-8
#define GRID_LO (-4.0)
#define GRID_HI 4.0
#define GRID_PER_DECADE 8
#define GOLDEN_ITER 200
#define RICHARDSON 4
#define BOUNDARY_TOL 1e-10

struct mm {
	const double *X, *y;
	const uint32_t *g;
	size_t n, p, ng;
	double *cnt, *xs, *ys;   /* per group: count, column sums [ng*p], y sum */
	double *xw, *yw;         /* whitened copies */
};

/* The model at theta: coef[p], minv[p*p] = M^-1, pwrss, log|V| + log|M|.
 * -1 when the whitened X is not of full rank. */
static int at(const struct mm *m, double theta, double *coef, double *minv, double *pwrss,
	      double *logdet)
{
	double t2 = theta * theta, ldv = 0;
	for (size_t j = 0; j < m->ng; j++)
		if (m->cnt[j] > 0)
			ldv += log1p(t2 * m->cnt[j]);
	for (size_t i = 0; i < m->n; i++) {
		size_t j = m->g[i];
		double nj = m->cnt[j];
		double c = (1 - 1 / sqrt(1 + t2 * nj)) / nj;
		for (size_t k = 0; k < m->p; k++)
			m->xw[i * m->p + k] = m->X[i * m->p + k] - c * m->xs[j * m->p + k];
		m->yw[i] = m->y[i] - c * m->ys[j];
	}
	double ldm;
	if (rep_model_qr_lsq(m->xw, m->yw, m->n, m->p, coef, minv, pwrss, &ldm))
		return -1;
	*logdet = ldv + ldm;
	return 0;
}

/* The profiled REML criterion d(theta); +inf where it cannot be had. */
static double crit(const struct mm *m, double theta, double *coef, double *minv)
{
	double w, ld;
	if (at(m, theta, coef, minv, &w, &ld) || !(w > 0))
		return INFINITY;
	double r = (double)(m->n - m->p);
	return ld + r * (1 + log(2 * M_PI * w / r));
}

static double golden(const struct mm *m, double a, double b, double *coef, double *minv)
{
	const double g = (sqrt(5.0) - 1) / 2;
	double c = b - g * (b - a), d = a + g * (b - a);
	double fc = crit(m, c, coef, minv), fd = crit(m, d, coef, minv);
	for (int i = 0; i < GOLDEN_ITER && b - a > 1e-12 * (fabs(a) + fabs(b)) + 1e-300; i++) {
		if (fc <= fd) {
			b = d;
			d = c;
			fd = fc;
			c = b - g * (b - a);
			fc = crit(m, c, coef, minv);
		} else {
			a = c;
			c = d;
			fc = fd;
			d = a + g * (b - a);
			fd = crit(m, d, coef, minv);
		}
	}
	return fc <= fd ? c : d;
}

static double grid_theta(int k)
{
	return pow(10.0, GRID_LO + (double)k / GRID_PER_DECADE);
}

static double best_theta(const struct mm *m, double *coef, double *minv)
{
	int nk = (int)((GRID_HI - GRID_LO) * GRID_PER_DECADE) + 1;
	int best = -1; /* -1: theta 0 */
	double fbest = crit(m, 0, coef, minv);
	for (int k = 0; k < nk; k++) {
		double f = crit(m, grid_theta(k), coef, minv);
		if (f < fbest) {
			fbest = f;
			best = k;
		}
	}
	double lo = best <= 0 ? 0 : grid_theta(best - 1);
	double hi = best < 0 ? grid_theta(0) : best + 1 < nk ? grid_theta(best + 1) : grid_theta(best) * 10;
	double t = golden(m, lo, hi, coef, minv);
	/* d is even in theta and flat at 0: a theta that beats 0 by rounding
	 * only is the boundary. */
	double f0 = crit(m, 0, coef, minv);
	return crit(m, t, coef, minv) < f0 - BOUNDARY_TOL * (1 + fabs(f0)) ? t : 0;
}

/*
 * Derivatives in theta by central differences with Richardson
 * extrapolation, of the vector v(theta) = (log|V| + log|M|, pwrss, M^-1):
 * first derivatives d1 and second derivatives d2, each [2 + p*p].
 */
static void theta_derivs(const struct mm *m, double theta, double *d1, double *d2)
{
	size_t nv = 2 + m->p * m->p;
	double h = theta != 0 ? 1e-2 * fabs(theta) : 1e-4;
	double *vp = xmalloc(nv * sizeof(double)), *vm = xmalloc(nv * sizeof(double));
	double *v0 = xmalloc(nv * sizeof(double)), *coef = xmalloc(m->p * sizeof(double));
	double *r1 = xmalloc(RICHARDSON * nv * sizeof(double));
	double *r2 = xmalloc(RICHARDSON * nv * sizeof(double));
	at(m, theta, coef, v0 + 2, &v0[1], &v0[0]);
	for (int k = 0; k < RICHARDSON; k++, h /= 2) {
		at(m, theta + h, coef, vp + 2, &vp[1], &vp[0]);
		at(m, theta - h, coef, vm + 2, &vm[1], &vm[0]);
		for (size_t i = 0; i < nv; i++) {
			r1[k * nv + i] = (vp[i] - vm[i]) / (2 * h);
			r2[k * nv + i] = (vp[i] - 2 * v0[i] + vm[i]) / (h * h);
		}
	}
	/* Both differences have errors in even powers of h: eliminate h^2,
	 * h^4, ... in turn (Richardson's table, in place). */
	for (int lvl = 1; lvl < RICHARDSON; lvl++) {
		double f = pow(4.0, lvl);
		for (int k = RICHARDSON - 1; k >= lvl; k--)
			for (size_t i = 0; i < nv; i++) {
				r1[k * nv + i] = (f * r1[k * nv + i] - r1[(k - 1) * nv + i]) / (f - 1);
				r2[k * nv + i] = (f * r2[k * nv + i] - r2[(k - 1) * nv + i]) / (f - 1);
			}
	}
	memcpy(d1, r1 + (RICHARDSON - 1) * nv, nv * sizeof(double));
	memcpy(d2, r2 + (RICHARDSON - 1) * nv, nv * sizeof(double));
	free(vp);
	free(vm);
	free(v0);
	free(coef);
	free(r1);
	free(r2);
}

/* A = 2 H^+ for the symmetric 2 x 2 H = [a b; b c], over the eigenvalues
 * above EIG_TOL. */
static void half_pinv(double a, double b, double c, double *A)
{
	double mid = (a + c) / 2, rad = hypot((a - c) / 2, b);
	double lam[2] = { mid + rad, mid - rad };
	memset(A, 0, 4 * sizeof(double));
	for (int e = 0; e < 2; e++) {
		if (!(lam[e] > EIG_TOL))
			continue;
		double vx, vy;
		if (b != 0) {
			vx = lam[e] - c;
			vy = b;
		} else if ((e == 0) == (a >= c)) {
			vx = 1;
			vy = 0;
		} else {
			vx = 0;
			vy = 1;
		}
		double len = hypot(vx, vy);
		vx /= len;
		vy /= len;
		A[0] += 2 * vx * vx / lam[e];
		A[1] += 2 * vx * vy / lam[e];
		A[3] += 2 * vy * vy / lam[e];
	}
	A[2] = A[1];
}

static void all_nan(struct model_mixed *o)
{
	for (size_t i = 0; i < o->p; i++)
		o->coef[i] = NAN;
	for (size_t i = 0; i < o->p * o->p; i++)
		o->cov[i] = o->dcov[i] = o->dcov[o->p * o->p + i] = NAN;
	o->s2_e = o->s2_u = o->theta = o->reml = NAN;
	for (int i = 0; i < 4; i++)
		o->vp_cov[i] = NAN;
	o->singular = 0;
}

int rep_model_mixed_fit(const double *X, const double *y, const uint32_t *group, size_t n,
		    size_t p, size_t ng, struct model_mixed *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	out->p = p;
	out->ng = ng;
	out->coef = xcalloc(p ? p : 1, sizeof(double));
	out->cov = xcalloc(p ? p * p : 1, sizeof(double));
	out->dcov = xcalloc(p ? 2 * p * p : 1, sizeof(double));
	all_nan(out);
	if (p == 0 || n <= p || ng == 0)
		return -1;
	struct mm m = { .X = X, .y = y, .g = group, .n = n, .p = p, .ng = ng };
	m.cnt = xcalloc(ng, sizeof(double));
	m.xs = xcalloc(ng * p, sizeof(double));
	m.ys = xcalloc(ng, sizeof(double));
	m.xw = xmalloc(n * p * sizeof(double));
	m.yw = xmalloc(n * sizeof(double));
	int rc = -1;
	double yy = 0;
	for (size_t i = 0; i < n; i++) {
		if (group[i] >= ng || !isfinite(y[i]))
			goto out;
		m.cnt[group[i]]++;
		m.ys[group[i]] += y[i];
		yy += y[i] * y[i];
		for (size_t k = 0; k < p; k++)
			m.xs[group[i] * p + k] += X[i * p + k];
	}
	double w, ld;
	if (at(&m, 0, out->coef, out->cov, &w, &ld))
		goto out;
	rc = 0;
	double r = (double)(n - p);
	if (!(sqrt(w) > ROUNDING_TOL * sqrt(yy))) {
		/* No noise: least squares, exact. */
		for (size_t i = 0; i < p * p; i++)
			out->cov[i] = out->dcov[i] = out->dcov[p * p + i] = 0;
		out->s2_e = out->s2_u = out->theta = 0;
		out->singular = 1;
		goto out;
	}
	double theta = best_theta(&m, out->coef, out->cov);
	at(&m, theta, out->coef, out->cov, &w, &ld);
	double s2 = w / r, sigma = sqrt(s2);
	out->theta = theta;
	out->singular = theta == 0;
	out->s2_e = s2;
	out->s2_u = theta * theta * s2;
	out->reml = ld + r * (1 + log(2 * M_PI * s2));

	size_t pp = p * p;
	double *d1 = xmalloc((2 + pp) * sizeof(double)), *d2 = xmalloc((2 + pp) * sizeof(double));
	theta_derivs(&m, theta, d1, d2);
	double h_tt = d2[0] + d2[1] / s2;
	double h_ts = -2 * d1[1] / (s2 * sigma);
	double h_ss = -2 * r / s2 + 6 * w / (s2 * s2);
	half_pinv(h_tt, h_ts, h_ss, out->vp_cov);
	for (size_t i = 0; i < pp; i++) {
		out->dcov[i] = s2 * d1[2 + i];
		out->dcov[pp + i] = 2 * sigma * out->cov[i];
		out->cov[i] *= s2;
	}
	free(d1);
	free(d2);
out:
	if (rc)
		all_nan(out);
	free(m.cnt);
	free(m.xs);
	free(m.ys);
	free(m.xw);
	free(m.yw);
	return rc;
}

void rep_model_mixed_release(struct model_mixed *m)
{
	free(m->coef);
	free(m->cov);
	free(m->dcov);
	m->coef = m->cov = m->dcov = NULL;
}

static double qform(const double *c, const double *A, size_t p)
{
	double s = 0;
	for (size_t i = 0; i < p; i++)
		for (size_t j = 0; j < p; j++)
			s += c[i] * A[i * p + j] * c[j];
	return s;
}

void rep_model_mixed_contrast(const struct model_mixed *m, const double *c, struct model_est *out)
{
	size_t p = m->p;
	double est = 0;
	for (size_t i = 0; i < p; i++)
		est += c[i] * m->coef[i];
	double var = qform(c, m->cov, p), df = NAN;
	if (m->s2_e == 0) {
		df = (double)(m->n - m->p); /* no noise: least squares' */
	} else {
		double g0 = qform(c, m->dcov, p), g1 = qform(c, m->dcov + p * p, p);
		double den = g0 * g0 * m->vp_cov[0] + 2 * g0 * g1 * m->vp_cov[1] +
			     g1 * g1 * m->vp_cov[3];
		if (den > 0)
			df = 2 * var * var / den;
	}
	rep_model_est_fill(out, est, var, df);
}
