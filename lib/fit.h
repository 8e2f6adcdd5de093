/*
 * Ordinary least-squares fit of a straight line y = intercept + slope * x.
 * `write` and `read` fit per-file time against size (time = overhead +
 * bytes / rate) to separate bandwidth from fixed per-file costs; anything
 * else that needs a line through points may use it.
 */
#ifndef RIG_FIT_H
#define RIG_FIT_H

#include <stddef.h>

struct linfit {
	double intercept;
	double slope;
	double r2;      /* coefficient of determination; 1 when every y is equal */
	size_t n;       /* points used */
	/* Standard errors from the residuals (n - 2 degrees of freedom); NaN
	 * when n < 3: two points fit exactly and say nothing about the scatter. */
	double intercept_se, slope_se;
};

/*
 * The fewest points a fit is shown for. A line has 2 parameters: 2 points
 * give r² = 1 and any intercept, 3 leave one degree of freedom (t = 12.7
 * for a 95% interval). 5 leave 3 (t = 3.18), the fewest with which the
 * intercept's interval is narrow enough to tell a per-file overhead from 0.
 */
#define FIT_MIN_POINTS 5

/*
 * Fit y on x over n points (x and y are not modified). 0, or -EDOM when
 * the line is undetermined: fewer than 2 distinct x values (n < 2
 * included); *out is then zeroed. Computed about the means (two passes) so
 * byte counts in the billions lose no precision.
 */
int fit_line(const double *x, const double *y, size_t n, struct linfit *out);

#endif
