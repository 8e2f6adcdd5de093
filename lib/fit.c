/* Least-squares line; see fit.h. */
#include "lib/fit.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int fit_line(const double *x, const double *y, size_t n, struct linfit *out)
{
	memset(out, 0, sizeof(*out));
	out->intercept_se = out->slope_se = NAN;
	/* Distinctness is checked exactly: a mean of equal doubles can round, so
	 * a centred sum of squares is not a reliable test. */
	size_t k = 1;
	while (k < n && x[k] == x[0])
		k++;
	if (n < 2 || k == n)
		return -EDOM;
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	double sxx = 0, sxy = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		double dx = x[i] - mx, dy = y[i] - my;
		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	if (sxx <= 0)
		return -EDOM;
	out->slope = sxy / sxx;
	out->intercept = my - out->slope * mx;
	out->r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
	out->n = n;
	if (n > 2) {
		double sse = 0;
		for (size_t i = 0; i < n; i++) {
			double r = y[i] - out->intercept - out->slope * x[i];
			sse += r * r;
		}
		double s2 = sse / (double)(n - 2);
		out->slope_se = sqrt(s2 / sxx);
		out->intercept_se = sqrt(s2 * (1.0 / (double)n + mx * mx / sxx));
	}
	return 0;
}
