/*
 * Tests of reports/model.c against reference values computed independently
 * with statsmodels, scipy and numpy (tests/fixtures/model/reference.h,
 * made by make_fixtures.py there: see it for where each number comes
 * from), to 1e-9 relative; the Longley regression also against NIST's
 * certified values. Then what the fixtures cannot say: data without
 * noise (a fit whose residuals are rounding: zero-width intervals, no
 * test), degenerate inputs, and a fit of 100,000 points.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "reports/model.h"
#include "reports/stats.h"
#include "test.h"

/* The shapes of the generated tables. */
struct ref_est {
	double est, se, lo, hi, df, t, p;
};
struct ref_ols {
	const char *name;
	size_t n, p, ncon;
	const double *X, *y, *coef, *cov, *con_c;
	const struct ref_est *con;
	int ret;
	double rss, df, s2, tol;
};
struct ref_ftail {
	double f, d1, d2, p;
};
struct ref_fieller {
	double a, b, vaa, vbb, vab, df;
	int ret;
	double lo, hi;
};
struct ref_crossed {
	const char *name;
	size_t n, na, nb;
	const double *y;
	const uint32_t *a, *b;
	int ret, log_scale;
	const struct ref_est *a_pct, *b_pct;
	const double *a_mean, *b_mean;
	double resid_df, int_f, int_df1, int_df2, int_p;
	struct ref_est int_pct;
};
struct ref_trend {
	const char *name;
	size_t n;
	const double *x, *y;
	int ret;
	double b0, b1, r2, x_first, x_last, fit_first, fit_last;
	struct ref_est slope, change_pct;
};
struct ref_steep {
	const char *name;
	size_t n;
	const double *x, *y;
	int ret;
	double knot;
	struct ref_est extra;
};

#include "tests/fixtures/model/reference.h"

#define REL 1e-9
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int failures;

static int close_to(double got, double want, double tol)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want) || want == 0)
		return got == want || fabs(got) < 1e-12;
	return fabs(got - want) <= tol * fabs(want);
}

static void check(const char *where, const char *what, double got, double want, double tol)
{
	int ok = close_to(got, want, tol);
	CU_ASSERT_TRUE(ok);
	if (!ok && failures++ < 30)
		fprintf(stderr, "\n%s %s: got %.17g, want %.17g\n", where, what, got, want);
}

static void check_est(const char *where, const char *what, const struct model_est *got,
		      const struct ref_est *want, double tol)
{
	static const char *const field[] = { "est", "se", "lo", "hi", "df", "t", "p" };
	const double g[] = { got->est, got->se, got->lo, got->hi, got->df, got->t, got->p };
	const double w[] = { want->est, want->se, want->lo, want->hi, want->df, want->t, want->p };
	for (size_t i = 0; i < COUNT(field); i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s.%s", what, field[i]);
		check(where, name, g[i], w[i], tol);
	}
}

/* Every field of e NaN. */
static int all_nan(const struct model_est *e)
{
	return isnan(e->est) && isnan(e->se) && isnan(e->lo) && isnan(e->hi) && isnan(e->df) &&
	       isnan(e->t) && isnan(e->p);
}

/* An estimate of a fit without residual spread: est, a zero-width
 * interval, no test. */
static void check_no_spread(const struct model_est *e, double est)
{
	CU_ASSERT_DOUBLE_EQUAL(e->est, est, 1e-9 * fabs(est) + 1e-12);
	CU_ASSERT_EQUAL(e->se, 0);
	CU_ASSERT_EQUAL(e->lo, e->est);
	CU_ASSERT_EQUAL(e->hi, e->est);
	CU_ASSERT_TRUE(isnan(e->t) && isnan(e->p));
}

static void test_ols_reference(void)
{
	failures = 0;
	for (size_t k = 0; k < COUNT(ref_ols); k++) {
		const struct ref_ols *r = &ref_ols[k];
		double *coef = xcalloc(r->p, sizeof(double));
		double *cov = xcalloc(r->p * r->p, sizeof(double));
		struct model_ols f;
		CU_ASSERT_EQUAL(rep_model_ols_fit(r->X, r->y, r->n, r->p, coef, cov, &f), r->ret);
		CU_ASSERT_TRUE(f.n == r->n && f.p == r->p && f.coef == coef && f.cov == cov);
		for (size_t i = 0; i < r->p; i++)
			check(r->name, "coef", coef[i], r->coef[i], r->tol);
		for (size_t i = 0; i < r->p * r->p; i++)
			check(r->name, "cov", cov[i], r->cov[i], r->tol);
		check(r->name, "rss", f.rss, r->rss, r->tol);
		check(r->name, "df", f.df, r->df, 0);
		check(r->name, "s2", f.s2, r->s2, r->tol);
		for (size_t i = 0; i < r->ncon; i++) {
			struct model_est e;
			rep_model_ols_contrast(&f, r->con_c + i * r->p, &e);
			check_est(r->name, "contrast", &e, &r->con[i], r->tol);
		}
		free(coef);
		free(cov);
	}
	CU_ASSERT_TRUE(COUNT(ref_ols) >= 7);
}

/* The ill-conditioned classic: Householder QR keeps the certified digits
 * the normal equations would lose. */
static void test_ols_longley(void)
{
	const struct ref_ols *r = NULL;
	for (size_t k = 0; k < COUNT(ref_ols); k++)
		if (!strcmp(ref_ols[k].name, "longley"))
			r = &ref_ols[k];
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	double coef[7], cov[49];
	struct model_ols f;
	CU_ASSERT_EQUAL_FATAL(rep_model_ols_fit(r->X, r->y, r->n, r->p, coef, cov, &f), 0);
	failures = 0;
	for (size_t i = 0; i < 7; i++) {
		check("longley", "certified coef", coef[i], longley_cert_coef[i], 1e-9);
		check("longley", "certified se", sqrt(cov[i * 7 + i]), longley_cert_se[i], 1e-9);
	}
	check("longley", "certified rss", f.rss, longley_cert_rss, 1e-9);
	CU_ASSERT_EQUAL(f.df, 9);
}

static void test_ols_edges(void)
{
	/* No columns, fewer rows than columns: -1 with NaN outputs. */
	double X[] = { 1, 0, 1, 1, 1, 2, 1, 3 }, y[] = { 3, 5, 7, 9 }, coef[2], cov[4];
	struct model_ols f;
	CU_ASSERT_EQUAL(rep_model_ols_fit(X, y, 4, 0, coef, cov, &f), -1);
	CU_ASSERT_EQUAL(rep_model_ols_fit(X, y, 1, 2, coef, cov, &f), -1);
	CU_ASSERT_TRUE(isnan(coef[0]) && isnan(coef[1]) && isnan(cov[3]));
	CU_ASSERT_TRUE(isnan(f.rss) && isnan(f.df) && isnan(f.s2));
	struct model_est e;
	const double c[] = { 0, 1 };
	rep_model_ols_contrast(&f, c, &e);
	CU_ASSERT_TRUE(all_nan(&e));
	/* Two columns 1e-13 apart: rank deficient by the 1e-10 rule, though
	 * not exactly. A zero column. */
	double Xt[] = { 1, 1, 1, 1 + 1e-13, 1, 1, 1, 1 };
	CU_ASSERT_EQUAL(rep_model_ols_fit(Xt, y, 4, 2, coef, cov, &f), -1);
	double Xz[] = { 1, 0, 1, 0, 1, 0, 1, 0 };
	CU_ASSERT_EQUAL(rep_model_ols_fit(Xz, y, 4, 2, coef, cov, &f), -1);
	/* A small column is not a dependent one: units do not matter. */
	double Xs[] = { 1, 1e-16, 1, 0, 1, 0, 1, 0 };
	CU_ASSERT_EQUAL(rep_model_ols_fit(Xs, y, 4, 2, coef, cov, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(coef[1] * 1e-16, 3 - 7, 1e-12);

	/* A perfect line (y = 3 + 2x): the residuals are rounding, so the
	 * fit has no spread: rss and every variance exactly 0, contrasts with
	 * zero-width intervals and no t or p. */
	CU_ASSERT_EQUAL_FATAL(rep_model_ols_fit(X, y, 4, 2, coef, cov, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(coef[0], 3, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(coef[1], 2, 1e-12);
	CU_ASSERT_EQUAL(f.rss, 0);
	CU_ASSERT_EQUAL(f.s2, 0);
	CU_ASSERT_EQUAL(f.df, 2);
	for (size_t i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(cov[i], 0);
	rep_model_ols_contrast(&f, c, &e);
	check_no_spread(&e, 2);
	CU_ASSERT_EQUAL(e.df, 2);
	/* A contrast that is exactly 0 with no spread: no test either. */
	const double zero[] = { 0, 0 };
	rep_model_ols_contrast(&f, zero, &e);
	CU_ASSERT_EQUAL(e.est, 0);
	CU_ASSERT_TRUE(isnan(e.p));
}

/* 100,000 points, 6 columns: heap memory, and the time stays small. */
static void test_ols_large(void)
{
	size_t n = 100000, p = 6;
	double *X = xmalloc(n * p * sizeof(double)), *y = xmalloc(n * sizeof(double));
	uint64_t s = 7;
	for (size_t i = 0; i < n; i++) {
		X[i * p] = 1;
		for (size_t j = 1; j < p; j++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			X[i * p + j] = (double)(s >> 11) / 9007199254740992.0;
		}
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		double noise = (double)(s >> 11) / 9007199254740992.0 - 0.5;
		y[i] = 10 + X[i * p + 1] - 2 * X[i * p + 2] + 3 * X[i * p + 5] + 0.01 * noise;
	}
	double coef[6], cov[36];
	struct model_ols f;
	CU_ASSERT_EQUAL_FATAL(rep_model_ols_fit(X, y, n, p, coef, cov, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(coef[0], 10, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(coef[2], -2, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(coef[5], 3, 1e-3);
	/* Uniform noise on [-0.005, 0.005]: variance 1e-4 / 12. */
	CU_ASSERT_DOUBLE_EQUAL(f.s2, 1e-4 / 12, 1e-6);
	CU_ASSERT_EQUAL(f.df, (double)(n - p));
	free(X);
	free(y);
}

static void test_f_tail(void)
{
	failures = 0;
	for (size_t k = 0; k < COUNT(ref_ftail); k++) {
		const struct ref_ftail *r = &ref_ftail[k];
		char where[64];
		snprintf(where, sizeof(where), "F(%g; %g, %g)", r->f, r->d1, r->d2);
		check(where, "tail", rep_model_f_tail(r->f, r->d1, r->d2), r->p, REL);
	}
	CU_ASSERT_EQUAL(rep_model_f_tail(0, 2, 10), 1);
	CU_ASSERT_EQUAL(rep_model_f_tail(INFINITY, 2, 10), 0);
	CU_ASSERT_TRUE(isnan(rep_model_f_tail(-1, 2, 10)));
	CU_ASSERT_TRUE(isnan(rep_model_f_tail(NAN, 2, 10)));
	CU_ASSERT_TRUE(isnan(rep_model_f_tail(1, 0, 10)));
	CU_ASSERT_TRUE(isnan(rep_model_f_tail(1, 2, -3)));
	CU_ASSERT_TRUE(isnan(rep_model_f_tail(1, NAN, 3)));
	/* F(1, d) is t(d) squared. */
	CU_ASSERT_DOUBLE_EQUAL(rep_model_f_tail(2.5 * 2.5, 1, 7), rep_stats_t_two_sided(2.5, 7), 1e-14);
}

static void test_fieller(void)
{
	failures = 0;
	for (size_t k = 0; k < COUNT(ref_fieller); k++) {
		const struct ref_fieller *r = &ref_fieller[k];
		double lo, hi;
		char where[48];
		snprintf(where, sizeof(where), "fieller %zu", k);
		CU_ASSERT_EQUAL(rep_model_fieller(r->a, r->b, r->vaa, r->vbb, r->vab, r->df, &lo, &hi),
				r->ret);
		check(where, "lo", lo, r->lo, REL);
		check(where, "hi", hi, r->hi, REL);
	}
	/* Bounded cases contain the estimate; df 0 or NaN: no interval. */
	double lo, hi;
	CU_ASSERT_EQUAL(rep_model_fieller(3, 4, 0.1, 0.1, 0, 5, &lo, &hi), 0);
	CU_ASSERT_TRUE(lo < 0.75 && 0.75 < hi);
	CU_ASSERT_EQUAL(rep_model_fieller(3, 4, 0.1, 0.1, 0, 0, &lo, &hi), -1);
	CU_ASSERT_TRUE(isnan(lo) && isnan(hi));
	CU_ASSERT_EQUAL(rep_model_fieller(NAN, 4, 0.1, 0.1, 0, 5, &lo, &hi), -1);
	CU_ASSERT_EQUAL(rep_model_fieller(3, 4, 0.1, NAN, 0, 5, &lo, &hi), -1);
	/* b == 0 exactly, no variance: not an interval. */
	CU_ASSERT_EQUAL(rep_model_fieller(3, 0, 0, 0, 0, 5, &lo, &hi), -1);
}

static void test_crossed_reference(void)
{
	failures = 0;
	for (size_t k = 0; k < COUNT(ref_crossed); k++) {
		const struct ref_crossed *r = &ref_crossed[k];
		struct model_crossed m;
		CU_ASSERT_EQUAL(rep_model_crossed_fit(r->y, r->a, r->b, r->n, r->na, r->nb, &m), r->ret);
		CU_ASSERT_TRUE(m.na == r->na && m.nb == r->nb && m.n == r->n);
		CU_ASSERT_EQUAL(m.log_scale, r->log_scale);
		for (size_t i = 0; i < r->na; i++) {
			check_est(r->name, "a_pct", &m.a_pct[i], &r->a_pct[i], REL);
			check(r->name, "a_mean", m.a_mean[i], r->a_mean[i], REL);
		}
		for (size_t i = 0; i < r->nb; i++) {
			check_est(r->name, "b_pct", &m.b_pct[i], &r->b_pct[i], REL);
			check(r->name, "b_mean", m.b_mean[i], r->b_mean[i], REL);
		}
		check(r->name, "resid_df", m.resid_df, r->resid_df, 0);
		check(r->name, "int_f", m.int_f, r->int_f, REL);
		check(r->name, "int_df1", m.int_df1, r->int_df1, 0);
		check(r->name, "int_df2", m.int_df2, r->int_df2, 0);
		check(r->name, "int_p", m.int_p, r->int_p, REL);
		check_est(r->name, "int_pct", &m.int_pct, &r->int_pct, REL);
		rep_model_crossed_release(&m);
		CU_ASSERT_PTR_NULL(m.a_pct);
		rep_model_crossed_release(&m); /* twice is harmless */
	}
	CU_ASSERT_TRUE(COUNT(ref_crossed) >= 12);
}

/* y of the 2 x 2 cells (i, j) as base * fa[i] * fb[j] * extra (for cell
 * (1, 1)), reps each: a crossed design without noise. */
static size_t exact_cells(double *y, uint32_t *a, uint32_t *b, size_t reps, double extra)
{
	const double fa[] = { 1, 0.8 }, fb[] = { 1, 0.65 };
	size_t n = 0;
	for (uint32_t i = 0; i < 2; i++)
		for (uint32_t j = 0; j < 2; j++)
			for (size_t r = 0; r < reps; r++) {
				y[n] = 150 * fa[i] * fb[j] * (i && j ? extra : 1);
				a[n] = i;
				b[n++] = j;
			}
	return n;
}

static void test_crossed_no_spread(void)
{
	double y[12];
	uint32_t a[12], b[12];
	struct model_crossed m;
	/* Multiplicative without noise: the effects exactly, zero-width
	 * intervals, no test; the interaction has no F (0 / 0 is not a test). */
	size_t n = exact_cells(y, a, b, 3, 1);
	CU_ASSERT_EQUAL_FATAL(rep_model_crossed_fit(y, a, b, n, 2, 2, &m), 0);
	CU_ASSERT_EQUAL(m.log_scale, 1);
	check_no_spread(&m.a_pct[1], -20);
	check_no_spread(&m.b_pct[1], -35);
	CU_ASSERT_EQUAL(m.resid_df, 9);
	CU_ASSERT_EQUAL(m.int_df1, 1);
	CU_ASSERT_EQUAL(m.int_df2, 8);
	CU_ASSERT_TRUE(isnan(m.int_f) && isnan(m.int_p));
	check_no_spread(&m.int_pct, 0);
	/* Least-squares means (the raw additive fit is exact here too): A's
	 * level 0 averaged over B's levels, B's level 1 over A's. */
	CU_ASSERT_DOUBLE_EQUAL(m.a_mean[0], 150 * (1 + 0.65) / 2, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(m.b_mean[1], 150 * 0.65 * (1 + 0.8) / 2, 1e-9);
	rep_model_crossed_release(&m);

	/* An interaction without noise: cell (1, 1) 10% lower still. The
	 * additive fit has spread, the cells none: still no F, and the
	 * interaction percentage exactly -10. */
	n = exact_cells(y, a, b, 3, 0.9);
	CU_ASSERT_EQUAL_FATAL(rep_model_crossed_fit(y, a, b, n, 2, 2, &m), 0);
	CU_ASSERT_TRUE(isnan(m.int_f) && isnan(m.int_p));
	check_no_spread(&m.int_pct, -10);
	CU_ASSERT_TRUE(m.a_pct[1].se > 0 && m.a_pct[1].p < 0.05);
	rep_model_crossed_release(&m);
}

static void test_crossed_refusals(void)
{
	double y[] = { 10, 12, 8, 9, 11, 7 };
	uint32_t a[] = { 0, 0, 1, 1, 0, 1 }, b[] = { 0, 1, 0, 1, 0, 1 };
	struct model_crossed m;
	/* Every refusal leaves the arrays allocated and NaN. */
	const struct {
		size_t n, na, nb;
	} bad[] = { { 0, 2, 2 }, { 6, 1, 2 }, { 6, 2, 1 }, { 6, 2, 0 } };
	for (size_t k = 0; k < COUNT(bad); k++) {
		CU_ASSERT_EQUAL(rep_model_crossed_fit(y, a, b, bad[k].n, bad[k].na, bad[k].nb, &m), -1);
		if (bad[k].na)
			CU_ASSERT_TRUE(all_nan(&m.a_pct[0]) && isnan(m.a_mean[0]));
		CU_ASSERT_TRUE(isnan(m.resid_df) && isnan(m.int_p) && all_nan(&m.int_pct));
		rep_model_crossed_release(&m);
	}
	/* A level out of range, a y that is not a number. */
	uint32_t a_bad[] = { 0, 0, 1, 1, 0, 2 };
	CU_ASSERT_EQUAL(rep_model_crossed_fit(y, a_bad, b, 6, 2, 2, &m), -1);
	rep_model_crossed_release(&m);
	double y_nan[] = { 10, 12, NAN, 9, 11, 7 };
	CU_ASSERT_EQUAL(rep_model_crossed_fit(y_nan, a, b, 6, 2, 2, &m), -1);
	rep_model_crossed_release(&m);
	/* A negative y: the raw scale, with percentages against a positive
	 * mean still. */
	double y_neg[] = { 10, 12, 8, -1, 11, 7 };
	CU_ASSERT_EQUAL(rep_model_crossed_fit(y_neg, a, b, 6, 2, 2, &m), 0);
	CU_ASSERT_EQUAL(m.log_scale, 0);
	CU_ASSERT_TRUE(isfinite(m.a_pct[1].est));
	rep_model_crossed_release(&m);
	/* Reference means that are not positive: no percentage, but the test
	 * of the coefficient stands. */
	double y_low[] = { -10, 2, -8, 1, -11, 1 };
	CU_ASSERT_EQUAL(rep_model_crossed_fit(y_low, a, b, 6, 2, 2, &m), 0);
	CU_ASSERT_TRUE(m.a_mean[0] < 0 && m.b_mean[0] < 0);
	CU_ASSERT_TRUE(isnan(m.a_pct[1].est) && isnan(m.a_pct[1].lo));
	CU_ASSERT_TRUE(isfinite(m.a_pct[1].t) && isfinite(m.a_pct[1].p));
	rep_model_crossed_release(&m);
}

static void test_trend_reference(void)
{
	failures = 0;
	for (size_t k = 0; k < COUNT(ref_trend); k++) {
		const struct ref_trend *r = &ref_trend[k];
		struct model_trend t;
		CU_ASSERT_EQUAL(rep_model_trend_fit(r->x, r->y, r->n, &t), r->ret);
		CU_ASSERT_EQUAL(t.n, r->n);
		check(r->name, "b0", t.b0, r->b0, REL);
		check(r->name, "b1", t.b1, r->b1, REL);
		check(r->name, "r2", t.r2, r->r2, REL);
		check(r->name, "x_first", t.x_first, r->x_first, 0);
		check(r->name, "x_last", t.x_last, r->x_last, 0);
		check(r->name, "fit_first", t.fit_first, r->fit_first, REL);
		check(r->name, "fit_last", t.fit_last, r->fit_last, REL);
		check_est(r->name, "slope", &t.slope, &r->slope, REL);
		check_est(r->name, "change_pct", &t.change_pct, &r->change_pct, REL);
	}
	CU_ASSERT_TRUE(COUNT(ref_trend) >= 7);
}

static void test_trend_edges(void)
{
	struct model_trend t;
	double x[] = { 4, 4, 4 }, y[] = { 1, 2, 3 };
	/* No points, one point, one distinct x: -1, all NaN. */
	CU_ASSERT_EQUAL(rep_model_trend_fit(x, y, 0, &t), -1);
	CU_ASSERT_EQUAL(rep_model_trend_fit(x, y, 1, &t), -1);
	CU_ASSERT_EQUAL(t.n, 1);
	CU_ASSERT_EQUAL(rep_model_trend_fit(x, y, 3, &t), -1);
	CU_ASSERT_TRUE(isnan(t.b0) && isnan(t.b1) && isnan(t.r2) && isnan(t.x_first) &&
		       isnan(t.fit_last) && all_nan(&t.slope) && all_nan(&t.change_pct));

	/* A perfect line: exact estimates, zero-width intervals, no test. */
	double xl[] = { 1, 2, 3, 4, 5 }, yl[] = { 98, 96, 94, 92, 90 };
	CU_ASSERT_EQUAL_FATAL(rep_model_trend_fit(xl, yl, 5, &t), 0);
	check_no_spread(&t.slope, -2);
	CU_ASSERT_EQUAL(t.r2, 1);
	/* 100 * -2 * (5 - 1) / 98 */
	CU_ASSERT_DOUBLE_EQUAL(t.change_pct.est, -800.0 / 98, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(t.change_pct.lo, t.change_pct.est, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(t.change_pct.hi, t.change_pct.est, 1e-12);
	CU_ASSERT_EQUAL(t.change_pct.se, 0);
	CU_ASSERT_TRUE(isnan(t.change_pct.p));

	/* Every y equal: slope 0, r2 1 (as fit_line), no test. */
	double yc[] = { 7, 7, 7, 7, 7 };
	CU_ASSERT_EQUAL_FATAL(rep_model_trend_fit(xl, yc, 5, &t), 0);
	check_no_spread(&t.slope, 0);
	CU_ASSERT_EQUAL(t.r2, 1);
	CU_ASSERT_DOUBLE_EQUAL(t.change_pct.est, 0, 1e-12);
}

static void test_steepening_reference(void)
{
	failures = 0;
	for (size_t k = 0; k < COUNT(ref_steep); k++) {
		const struct ref_steep *r = &ref_steep[k];
		double knot;
		struct model_est e;
		CU_ASSERT_EQUAL(rep_model_steepening(r->x, r->y, r->n, &knot, &e), r->ret);
		check(r->name, "knot", knot, r->knot, 0);
		check_est(r->name, "extra", &e, &r->extra, REL);
	}
	CU_ASSERT_TRUE(COUNT(ref_steep) >= 9);
}

static void test_steepening_edges(void)
{
	double knot = 0;
	struct model_est e;
	double x[] = { 0, 1, 2, 3, 4, 5, 6, 7 }, y[] = { 50, 49, 48, 47, 46, 41, 36, 31 };
	/* Fewer than five points or five distinct x. */
	CU_ASSERT_EQUAL(rep_model_steepening(x, y, 4, &knot, &e), 0);
	CU_ASSERT_TRUE(isnan(knot) && all_nan(&e));
	double x4[] = { 0, 0, 1, 1, 2, 2, 3, 3 };
	CU_ASSERT_EQUAL(rep_model_steepening(x4, y, 8, &knot, &e), 0);
	/* A broken stick without noise: the fit is exact, so there is no
	 * test, and nothing is reported (data has noise; a model that claims
	 * a bend from rounding would be worse). */
	CU_ASSERT_EQUAL(rep_model_steepening(x, y, 8, &knot, &e), 0);
	CU_ASSERT_TRUE(isnan(knot));
	/* The same with a little noise: found at 4, 4 more per step. */
	double yn[] = { 50.01, 48.99, 48.02, 46.98, 46.01, 40.99, 36.02, 30.98 };
	CU_ASSERT_EQUAL(rep_model_steepening(x, yn, 8, &knot, &e), 1);
	CU_ASSERT_EQUAL(knot, 4);
	CU_ASSERT_DOUBLE_EQUAL(e.est, -4, 0.05);
	CU_ASSERT_TRUE(e.lo < e.est && e.est < e.hi && e.hi < 0 && e.df == 5);
}

void register_model_tests(void)
{
	CU_pSuite s = test_suite("linear models (reports/model.c)");
	test_add(s, "least squares against statsmodels, 1e-9 relative; rank deficiency",
		 test_ols_reference);
	test_add(s, "Longley against NIST's certified values", test_ols_longley);
	test_add(s, "least squares: no columns, too few rows, a perfect fit", test_ols_edges);
	test_add(s, "least squares over 100,000 points", test_ols_large);
	test_add(s, "F tail against scipy; its edges", test_f_tail);
	test_add(s, "Fieller's interval, bounded and unbounded", test_fieller);
	test_add(s, "crossed designs against statsmodels (log and raw scale, interaction)",
		 test_crossed_reference);
	test_add(s, "crossed designs without noise: zero-width intervals, no test",
		 test_crossed_no_spread);
	test_add(s, "crossed designs refused; reference means not positive", test_crossed_refusals);
	test_add(s, "trends against statsmodels and Fieller", test_trend_reference);
	test_add(s, "trends: n = 0, 1, one x, a perfect line, constant y", test_trend_edges);
	test_add(s, "steepening against a numpy knot search", test_steepening_reference);
	test_add(s, "steepening: too few x, no noise, a little noise", test_steepening_edges);
}
