/*
 * A linear mixed model with one random intercept, for the findings of a
 * report whose observations come in groups that share a draw: the passes
 * over one provisioned volume share where its file system put the files,
 * so the volume, not the pass, is the unit a file-system or position
 * effect rests on (docs/reports.md, "Findings"; methodology: "The unit of
 * replication").
 *
 *   y = X b + Z u + e,   u_j ~ N(0, s2_u) for group j,   e ~ N(0, s2_e)
 *
 * fitted by restricted maximum likelihood (REML), with Satterthwaite's
 * degrees of freedom for a contrast of the fixed effects: what lme4's
 * lmer(REML = TRUE) and lmerTest give, and the fixtures of the test are
 * theirs (tests/fixtures/model/make_mixed.R). Pure functions, no I/O.
 */
#ifndef RIG_MODEL_MIXED_H
#define RIG_MODEL_MIXED_H

#include <stddef.h>
#include <stdint.h>

#include "reports/model.h"

/*
 * X is n x p row-major (full column rank), y[n], group[i] in 0 .. ng-1.
 * The fit: coef[p] the fixed effects, cov[p*p] their covariance (row-major)
 * at the REML estimates of s2_e and s2_u; theta = sqrt(s2_u / s2_e);
 * reml the REML criterion (-2 restricted log likelihood, lme4's
 * REMLcrit) at the optimum. singular: the between-group variance is
 * estimated at its bound 0 (then the fit is least squares, and a contrast's
 * degrees of freedom are n - p: Satterthwaite's at the boundary). The
 * caller may then prefer the analysis of the groups' means.
 *
 * Returns 0; -1 when the model cannot be fitted (n <= p, X without full
 * column rank, a group index out of range, a y not finite), with
 * everything NaN. Data without noise (residuals that are rounding) give
 * s2_e = s2_u = 0, a zero covariance and singular 1. The arrays are
 * allocated by rep_model_mixed_fit (after -1 too) and freed by
 * rep_model_mixed_release.
 */
struct model_mixed {
	size_t n, p, ng;
	double *coef, *cov;      /* [p], [p*p] */
	double s2_e, s2_u, theta, reml;
	int singular;
	/* For Satterthwaite: the asymptotic covariance of (theta, sigma)
	 * (2 x the pseudo-inverse of the REML criterion's Hessian, over its
	 * eigenvalues above 1e-8, as lmerTest), and the derivatives of cov
	 * with respect to theta and sigma ([2][p*p]). */
	double vp_cov[4];
	double *dcov;
};
int rep_model_mixed_fit(const double *X, const double *y, const uint32_t *group, size_t n,
		    size_t p, size_t ng, struct model_mixed *out);
void rep_model_mixed_release(struct model_mixed *m);

/* The estimate of c'b (c has p entries) with its interval and t-test at
 * Satterthwaite's degrees of freedom
 *   df = 2 (c'Cc)^2 / (g' A g),  g_k = c' (dC/dvp_k) c,  A = vp_cov;
 * NaN df (and interval, t, p) when g'Ag is not positive. */
void rep_model_mixed_contrast(const struct model_mixed *m, const double *c, struct model_est *out);

#endif
