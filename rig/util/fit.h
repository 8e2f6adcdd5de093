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
};

/*
 * Fit y on x over n points (x and y are not modified). 0, or -EDOM when
 * the line is undetermined: fewer than 2 distinct x values (n < 2
 * included); *out is then zeroed. Computed about the means (two passes) so
 * byte counts in the billions lose no precision.
 */
int fit_line(const double *x, const double *y, size_t n, struct linfit *out);

#endif
