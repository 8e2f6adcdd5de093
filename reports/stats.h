/*
 * Statistics for reports (docs/reports.md, "Statistics"): summaries of a
 * group of samples with a Student-t interval of the mean, outlier flags by
 * the modified z-score, the difference of two groups as a percentage of a
 * baseline with an interval and Welch's t-test, and the drift of results
 * along the realized order. Pure functions of their arguments, no I/O;
 * tested against values computed independently (tests/fixtures/stats/).
 *
 * NaN marks what cannot be computed (an interval from one sample, a p-value
 * from groups without spread); callers print it as "n/a" or an empty field.
 */
#ifndef RIG_STATS_H
#define RIG_STATS_H

#include <stddef.h>

/* The confidence level of every interval rig reports. */
#define STATS_LEVEL 0.95

/* Modified z-score above which a sample is flagged (Iglewicz and Hoaglin). */
#define STATS_OUTLIER_Z 3.5
/* Fewer samples than this are never flagged: the median absolute deviation
 * of three or four values is one of their gaps, and any uneven spacing
 * would be called an outlier. */
#define STATS_OUTLIER_MIN_N 5

struct stats_summary {
	size_t n;
	double mean;
	double sd;          /* sample standard deviation (n - 1); NaN for n < 2 */
	double median;
	double min, max;
	double ci_low;      /* 95% interval of the mean, Student t; NaN for n < 2 */
	double ci_high;
};

/*
 * Summarize x[0..n). x is reordered in place (the median is found by
 * selection, in linear time). NaN
 * values must be removed by the caller. n == 0 gives n = 0 and NaN
 * elsewhere.
 */
void rep_stats_summarize(double *x, size_t n, struct stats_summary *out);

/*
 * Modified z-scores 0.6745 (x - median) / MAD of x[0..n) (any order) into
 * z[0..n). When the MAD is 0 the mean absolute deviation stands in for it
 * (z = (x - median) / (1.253314 * meanAD)); when that is 0 too, or
 * n < STATS_OUTLIER_MIN_N,
 * every z is 0. Returns how many |z| exceed STATS_OUTLIER_Z. scratch holds
 * n doubles.
 */
size_t rep_stats_modified_z(const double *x, size_t n, double *z, double *scratch);

/*
 * The difference of a group x against a baseline group b, both summarized.
 * pct_of_base = 100 * mean_x / mean_b; diff_pct = pct_of_base - 100. The
 * 95% interval of diff_pct is Fieller's interval for the ratio of two
 * independent means with unequal variances, t quantile at the
 * Welch-Satterthwaite degrees of freedom of (x - R b) at the estimate R; it
 * is NaN when either side has n < 2 or when the interval is unbounded (the
 * baseline's mean is not clearly away from 0). p is Welch's two-sided
 * t-test of equal means: NaN when either n < 2 or both variances are 0.
 */
struct rep_stats_diff {
	double pct_of_base;
	double diff_pct;
	double ci_low, ci_high;    /* of diff_pct */
	double t, df, p;           /* Welch */
};
void rep_stats_diff(const struct stats_summary *x, const struct stats_summary *b,
		struct rep_stats_diff *out);

/*
 * Drift: least-squares slope of y against seq with its 95% interval
 * (t at n - 2 degrees of freedom). flagged = the interval excludes 0.
 * Needs n >= 3 and two distinct seq values; otherwise slope and interval
 * are NaN, flagged 0, and -1 is returned.
 */
struct rep_stats_drift {
	double slope, ci_low, ci_high;
	int flagged;
};
int rep_stats_drift(const double *seq, const double *y, size_t n, struct rep_stats_drift *out);

/* Student t distribution with df > 0 degrees of freedom (df need not be an
 * integer): the two-sided tail 2 P(T > |t|), and the quantile (inverse
 * CDF) for 0 < p < 1. */
double rep_stats_t_two_sided(double t, double df);
double rep_stats_t_quantile(double p, double df);

/* Regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0. */
double rep_stats_betai(double a, double b, double x);

/* Standard normal quantile, 0 < p < 1. */
double rep_stats_normal_quantile(double p);

#endif
