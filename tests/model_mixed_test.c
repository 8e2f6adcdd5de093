/*
 * Tests of reports/model_mixed.c against lme4 and lmerTest
 * (tests/fixtures/model/make_mixed.R writes mixed_reference.h): the REML
 * fit of a random intercept per provisioned volume (fixed effects,
 * covariance, variance components, REML criterion, singularity) and
 * Satterthwaite's degrees of freedom for contrasts, over a balanced design,
 * one with provisioning replicated, an unbalanced one, one drawn without a
 * between-volume variance, and a singular fit. Then what the references
 * cannot show: the model's invariances and its refusals.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "reports/model_mixed.h"
#include "test.h"

struct ref_est {
	double est, se, lo, hi, df, t, p;
};
struct ref_mixed {
	size_t n, p, ng;
	const double *X, *y;
	const uint32_t *g;
	const double *coef, *cov;
	double s2_e, s2_u, theta, reml;
	int singular;
	const double *c;
	const struct ref_est *con;
	size_t ncon;
};

#include "tests/fixtures/model/mixed_reference.h"

static int failures;

/* Relative to want, or absolute to scale where want is (near) 0. */
static void near(const char *where, const char *what, double got, double want, double tol,
		 double scale)
{
	int ok = isnan(want) ? isnan(got) : fabs(got - want) <= tol * fmax(fabs(want), scale);
	CU_ASSERT_TRUE(ok);
	if (!ok && failures++ < 30)
		fprintf(stderr, "\n%s %s: got %.12g, want %.12g\n", where, what, got, want);
}

/* lme4 stops its optimizer at a tolerance of about 1e-6 in theta; the
 * estimates agree to that, the derived numbers (df by numerical
 * derivatives on both sides) a little less. */
#define TOL_FIT 2e-5
#define TOL_DF 1e-4

static void check_case(const char *name, const struct ref_mixed *r)
{
	struct model_mixed m;
	CU_ASSERT_EQUAL_FATAL(rep_model_mixed_fit(r->X, r->y, r->g, r->n, r->p, r->ng, &m), 0);
	double cscale = 0;
	for (size_t i = 0; i < r->p; i++)
		cscale = fmax(cscale, fabs(r->coef[i]));
	for (size_t i = 0; i < r->p; i++)
		near(name, "coef", m.coef[i], r->coef[i], TOL_FIT, 1e-3 * cscale);
	double vscale = 0;
	for (size_t i = 0; i < r->p * r->p; i++)
		vscale = fmax(vscale, fabs(r->cov[i]));
	for (size_t i = 0; i < r->p * r->p; i++)
		near(name, "cov", m.cov[i], r->cov[i], TOL_FIT, 1e-3 * vscale);
	near(name, "s2_e", m.s2_e, r->s2_e, TOL_FIT, 0);
	near(name, "s2_u", m.s2_u, r->s2_u, 1e-4, 1e-3 * r->s2_e);
	near(name, "theta", m.theta, r->theta, 1e-4, 1e-4);
	near(name, "reml", m.reml, r->reml, 1e-7, 1e-6);
	CU_ASSERT_EQUAL(m.singular, r->singular);
	for (size_t k = 0; k < r->ncon; k++) {
		struct model_est e;
		rep_model_mixed_contrast(&m, r->c + k * r->p, &e);
		const struct ref_est *w = &r->con[k];
		char what[32];
		snprintf(what, sizeof(what), "contrast %zu", k);
		near(name, what, e.est, w->est, TOL_FIT, 1e-3 * cscale);
		near(name, what, e.se, w->se, TOL_FIT, 0);
		near(name, what, e.df, w->df, TOL_DF, 0);
		near(name, what, e.lo, w->lo, TOL_DF, 1e-3 * cscale);
		near(name, what, e.hi, w->hi, TOL_DF, 1e-3 * cscale);
		near(name, what, e.t, w->t, TOL_FIT, 1e-3);
		near(name, what, e.p, w->p, 1e-2, 1e-6);
	}
	rep_model_mixed_release(&m);
	CU_ASSERT_PTR_NULL(m.coef);
}

static void test_balanced(void)
{
	check_case("balanced", &balanced_ref);
}

static void test_replicated(void)
{
	check_case("replicated", &replicated_ref);
}

static void test_unbalanced(void)
{
	check_case("unbalanced", &unbalanced_ref);
}

static void test_no_unit_variance(void)
{
	check_case("nounit", &nounit_ref);
}

/* At the boundary the fit is least squares and the degrees of freedom
 * are n - p. */
static void test_singular(void)
{
	check_case("singular", &singular_ref);
	struct model_mixed m;
	const struct ref_mixed *r = &singular_ref;
	CU_ASSERT_EQUAL_FATAL(rep_model_mixed_fit(r->X, r->y, r->g, r->n, r->p, r->ng, &m), 0);
	CU_ASSERT_EQUAL(m.theta, 0);
	CU_ASSERT_EQUAL(m.s2_u, 0);
	struct model_est e;
	rep_model_mixed_contrast(&m, r->c, &e);
	near("singular", "df", e.df, (double)(r->n - r->p), 1e-9, 0);
	rep_model_mixed_release(&m);
}

/* Adding a constant to a group's observations moves only its random
 * intercept's share: the fixed effects that the groups do not confound
 * stay, and a shift of every y moves only the intercept. The group
 * numbering does not matter. */
static void test_invariances(void)
{
	const struct ref_mixed *r = &replicated_ref;
	double *y = xmalloc(r->n * sizeof(double));
	uint32_t *g = xmalloc(r->n * sizeof(uint32_t));
	struct model_mixed a, b;
	CU_ASSERT_EQUAL_FATAL(rep_model_mixed_fit(r->X, r->y, r->g, r->n, r->p, r->ng, &a), 0);
	for (size_t i = 0; i < r->n; i++) {
		y[i] = r->y[i] + 3;
		g[i] = (uint32_t)(r->ng - 1 - r->g[i]);
	}
	CU_ASSERT_EQUAL_FATAL(rep_model_mixed_fit(r->X, y, g, r->n, r->p, r->ng, &b), 0);
	near("shift", "intercept", b.coef[0], a.coef[0] + 3, 1e-9, 1);
	for (size_t i = 1; i < r->p; i++)
		near("shift", "coef", b.coef[i], a.coef[i], 1e-6, 1e-6);
	near("shift", "s2_u", b.s2_u, a.s2_u, 1e-6, 0);
	near("shift", "reml", b.reml, a.reml, 1e-9, 1e-9);
	rep_model_mixed_release(&a);
	rep_model_mixed_release(&b);
	free(y);
	free(g);
}

/* Data without noise: exact least squares, zero covariance, the interval
 * of zero width and no test (model.h's conventions). */
static void test_no_noise(void)
{
	const struct ref_mixed *r = &balanced_ref;
	double *y = xmalloc(r->n * sizeof(double));
	for (size_t i = 0; i < r->n; i++) {
		y[i] = 0;
		for (size_t k = 0; k < r->p; k++)
			y[i] += r->X[i * r->p + k] * (double)(k + 1);
	}
	struct model_mixed m;
	CU_ASSERT_EQUAL_FATAL(rep_model_mixed_fit(r->X, y, r->g, r->n, r->p, r->ng, &m), 0);
	CU_ASSERT_EQUAL(m.singular, 1);
	CU_ASSERT_EQUAL(m.s2_e, 0);
	near("no noise", "coef 2", m.coef[2], 3, 1e-9, 0);
	struct model_est e;
	rep_model_mixed_contrast(&m, r->c, &e);
	near("no noise", "est", e.est, 2, 1e-9, 0);
	CU_ASSERT_EQUAL(e.se, 0);
	CU_ASSERT_EQUAL(e.lo, e.hi);
	CU_ASSERT(isnan(e.t) && isnan(e.p));
	rep_model_mixed_release(&m);
	free(y);
}

/* What cannot be fitted is refused with everything NaN. */
static void test_refusals(void)
{
	const struct ref_mixed *r = &balanced_ref;
	struct model_mixed m;
	CU_ASSERT_EQUAL(rep_model_mixed_fit(r->X, r->y, r->g, r->p, r->p, r->ng, &m), -1);
	CU_ASSERT(isnan(m.coef[0]) && isnan(m.s2_e));
	rep_model_mixed_release(&m);
	CU_ASSERT_EQUAL(rep_model_mixed_fit(r->X, r->y, r->g, r->n, r->p, 2, &m), -1);
	rep_model_mixed_release(&m);
	double *X = xmalloc(r->n * r->p * sizeof(double));
	memcpy(X, r->X, r->n * r->p * sizeof(double));
	for (size_t i = 0; i < r->n; i++)
		X[i * r->p + 2] = X[i * r->p + 1]; /* two equal columns */
	CU_ASSERT_EQUAL(rep_model_mixed_fit(X, r->y, r->g, r->n, r->p, r->ng, &m), -1);
	CU_ASSERT(isnan(m.cov[0]));
	rep_model_mixed_release(&m);
	double *y = xmalloc(r->n * sizeof(double));
	memcpy(y, r->y, r->n * sizeof(double));
	y[3] = NAN;
	CU_ASSERT_EQUAL(rep_model_mixed_fit(r->X, y, r->g, r->n, r->p, r->ng, &m), -1);
	rep_model_mixed_release(&m);
	free(X);
	free(y);
}

void register_model_mixed_tests(void)
{
	CU_pSuite s = test_suite("mixed model (reports/model_mixed.c) against lme4 and lmerTest");
	test_add(s, "balanced halves in both orders, 4 volumes", test_balanced);
	test_add(s, "provisioning replicated, 16 volumes", test_replicated);
	test_add(s, "unbalanced: rows dropped, unequal volumes", test_unbalanced);
	test_add(s, "drawn without a between-volume variance", test_no_unit_variance);
	test_add(s, "a singular fit: least squares, n - p degrees of freedom", test_singular);
	test_add(s, "a shifted y, renumbered volumes", test_invariances);
	test_add(s, "data without noise", test_no_noise);
	test_add(s, "refused: too few rows, a volume out of range, rank, NaN", test_refusals);
}
