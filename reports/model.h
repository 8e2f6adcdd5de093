/*
 * Linear models for the findings of a report (docs/reports.md, "Findings"):
 * least squares with the coefficients' covariance, the two-factor model
 * of a crossed design (file system x position), a straight-line trend with
 * the change it implies from the first x to the last, the x after which a
 * trend steepens, Fieller's interval for a ratio of estimates, and the F
 * distribution's tail. Pure functions of their arguments, no I/O; tested
 * against statsmodels/scipy (tests/fixtures/model/).
 *
 * Every interval is 95% (STATS_LEVEL) with Student's t at the residual
 * degrees of freedom. NaN marks what cannot be computed (no residual
 * degrees of freedom, an unbounded interval); the functions never fail on
 * such data, they say so in their output.
 */
#ifndef RIG_MODEL_H
#define RIG_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* An estimate with its standard error, 95% interval, t and two-sided p at
 * df degrees of freedom. All NaN when not estimable. */
struct model_est {
	double est, se, lo, hi, df, t, p;
};

/*
 * Ordinary least squares y = X b + e. X is n x p, row-major. Returns 0 and
 * fills coef[p], cov[p*p] (row-major, s^2 (X'X)^-1), rss, df = n - p and
 * s2 = rss / df (NaN when df == 0; cov is NaN then too). Returns -1 when X
 * does not have full column rank (numerically: with its columns scaled to
 * length 1, so that units do not matter, a pivot of its QR decomposition
 * below 1e-10; a zero column), n < p or p == 0; the outputs are NaN then.
 * The caller owns coef and cov (p and p*p doubles).
 *
 * Residuals are rounding, not spread, when their norm is below 2^-43
 * (1.1e-13) of y's: rss is 0 then (a fit to data without noise), and so
 * are s2 and cov. An estimate with standard error 0 has a zero-width
 * interval and no test: t and p are NaN (as rep_stats_diff's p for groups
 * without spread).
 */
struct model_ols {
	size_t n, p;
	double *coef, *cov;
	double rss, df, s2;
};
int rep_model_ols_fit(const double *X, const double *y, size_t n, size_t p, double *coef,
		  double *cov, struct model_ols *out);

/* The estimate of the linear combination c'b (c has p entries) of a fit,
 * with its interval and t-test of c'b = 0. */
void rep_model_ols_contrast(const struct model_ols *f, const double *c, struct model_est *out);

/* P(F > f) for the F distribution with d1, d2 degrees of freedom; NaN for
 * f or a degree of freedom that is NaN or not positive (f = 0 gives 1). */
double rep_model_f_tail(double f, double d1, double d2);

/*
 * Fieller's 95% interval for theta = a / b, where a and b are estimates
 * with variances vaa, vbb and covariance vab, t quantile at df degrees of
 * freedom. Returns 0 with [lo, hi]; -1 (lo, hi NaN) when the interval is
 * unbounded or not an interval (b is not clearly away from 0: b^2 <= t^2 vbb),
 * and when df is not positive or an argument is NaN.
 */
int rep_model_fieller(double a, double b, double vaa, double vbb, double vab, double df,
		  double *lo, double *hi);

/*
 * A crossed design: observation i has value y[i] > 0, level a[i] of factor
 * A (0 .. na-1: the factor compared, file system or volume) and level b[i]
 * of factor B (0 .. nb-1: position on the disk). na, nb >= 2.
 *
 * The additive model  log y = mu + alpha_a + beta_b + e  (treatment coding,
 * level 0 the reference) is fitted by least squares; the effect of level k
 * of a factor against its level 0 is reported as a percentage,
 * 100 (exp(coef) - 1), with the interval transformed the same way, and the
 * t-test of coef = 0. The log scale makes the effects multiplicative: a
 * position that is 30% slower is 30% slower for every file system. When
 * some y <= 0 the model is fitted to y itself and the percentage is
 * 100 coef / m0, m0 the reference level's least-squares mean, interval
 * scaled the same (log_scale 0 then). A percentage's se is the
 * coefficient's carried over (100 exp(coef) se, or 100 se / m0); its t, p
 * and df are the coefficient's. When m0 is not positive est, se, lo and
 * hi are NaN and t and p stand.
 *
 * Least-squares means per level (in y's unit): the additive model fitted
 * to y itself, its prediction for the level averaged with equal weight over
 * the other factor's levels.
 *
 * Interaction: the full model (every A x B cell its own mean, on the same
 * scale) against the additive one, F = ((rss_add - rss_full) / df1) /
 * (rss_full / df2), df1 = df_add - df_full, df2 = df_full. Testable only
 * when every cell has an observation and df2 > 0; otherwise int_f,
 * int_df1, int_df2 and int_p are NaN. int_f and int_p are NaN too when
 * the cells have no spread (rss_full 0: no test, as for t above).
 * For 2 x 2 designs int_pct is the interaction coefficient of the full
 * model (treatment coding) as a percentage as above: how much more (or
 * less) the B effect is at A level 1 than at level 0 (on y's own scale
 * in percent of b_mean[0]); NaN otherwise.
 *
 * Returns 0; -1 when the additive model is not estimable (a level without
 * observations, or levels that do not connect: the design is not crossed)
 * and for n == 0, na or nb below 2, a level out of range or a y that is
 * not finite, with everything NaN. The arrays are allocated by
 * rep_model_crossed_fit (after -1 too) and freed by rep_model_crossed_release
 * (which leaves them NULL);
 * a_pct[0] and b_pct[0] are the references (est 0, the rest NaN).
 */
struct model_crossed {
	int log_scale;
	size_t na, nb, n;
	struct model_est *a_pct, *b_pct;   /* [na], [nb] */
	double *a_mean, *b_mean;           /* [na], [nb] least-squares means */
	double resid_df;                   /* of the additive model */
	double int_f, int_df1, int_df2, int_p;
	struct model_est int_pct;
};
int rep_model_crossed_fit(const double *y, const uint32_t *a, const uint32_t *b, size_t n,
		      size_t na, size_t nb, struct model_crossed *out);
void rep_model_crossed_release(struct model_crossed *c);

/* An estimate with variance var at df degrees of freedom: its 95% interval
 * (Student's t), and its t-test when its standard error is above 0 (an
 * interval of zero width and no t or p at 0; NaN for what df or var do not
 * allow). */
void rep_model_est_fill(struct model_est *e, double est, double var, double df);

/* An effect e (a coefficient with its interval) as a percentage:
 * 100 (exp(e) - 1) on the log scale (se 100 exp(e) se), 100 e / m0 on y's
 * own scale (est, se, lo and hi NaN when m0 is not positive); t, p and df
 * stay. rep_model_crossed_fit's percentages are these. */
void rep_model_pct(const struct model_est *e, int log_scale, double m0, struct model_est *out);

/*
 * A straight line y = b0 + b1 x by least squares over n points (x need
 * not be distinct; at least two distinct x and n >= 3 for an interval).
 * slope: b1 with its interval and t-test. x_first, x_last: the smallest and
 * largest x. change_pct: the change the line implies from x_first to
 * x_last as a percentage of the fitted value at x_first,
 *   100 b1 (x_last - x_first) / (b0 + b1 x_first),
 * with Fieller's interval for that ratio (numerator and denominator are
 * linear combinations of (b0, b1) with the fit's covariance), its se by
 * the delta method, its t and p the slope's; est NaN when the fitted value
 * at x_first is 0. fit_first/fit_last: the fitted values there. r2:
 * coefficient of determination (1 when every y is equal, as fit_line).
 * Returns 0, or -1 (all NaN) with fewer than two distinct x.
 */
struct model_trend {
	size_t n;
	double b0, b1, r2;
	double x_first, x_last, fit_first, fit_last;
	struct model_est slope;
	struct model_est change_pct;
};
int rep_model_trend_fit(const double *x, const double *y, size_t n, struct model_trend *out);

/*
 * Where a trend steepens: for each candidate knot k among the distinct x
 * values with at least two distinct x on either side (strictly below and
 * strictly above k), the continuous two-segment line
 *   y = b0 + b1 x + b2 max(0, x - k)
 * is fitted; the k with the least residual sum of squares is kept (the
 * smallest such k on ties). The fit is reported (returns 1, *knot = k,
 * *extra = b2 with its interval and t-test) when b2 has the sign of the
 * straight line's slope b1 of rep_model_trend_fit over the same points (the
 * fall, or rise, gets steeper after k) and its p < 0.05. Returns 0 when no
 * knot qualifies (fewer than 5 distinct x, no such sign or p), with
 * *knot and *extra NaN. Data without noise give no p, hence 0.
 */
int rep_model_steepening(const double *x, const double *y, size_t n, double *knot,
		     struct model_est *extra);

#endif
