/*
 * Axes of the figures (see figure_int.h): "nice" linear ticks (1, 2, 5
 * times a power of ten, or every whole number for positions and cycles),
 * decades on a log axis, and tick labels written as report.html writes
 * numbers: thousands grouped with commas, U+2212 for a minus, bytes with
 * SI prefixes (one prefix for a whole linear axis, so 0.5 GB, 1 GB,
 * 1.5 GB rather than 500 MB, 1 GB, 1.5 GB).
 */
#include "reports/figure_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double nice_step(double range, int target)
{
	double raw = range / target, mag = pow(10, floor(log10(raw))), r = raw / mag;
	return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

void rep_fig_axis_linear(struct fig_axis *a, double lo, double hi, int zero, int integer)
{
	if (zero) {
		if (lo > 0)
			lo = 0;
		if (hi < 0)
			hi = 0;
	}
	if (!(hi > lo)) {
		double pad = lo == 0 ? 1 : fabs(lo) * 0.1;
		/* An axis from 0 stays at 0: the padding goes above. */
		if (!(zero && lo == 0))
			lo -= pad;
		hi += pad;
	}
	double step = nice_step(hi - lo, 5);
	if (integer && step < 1)
		step = 1;
	a->log = 0;
	a->prefix = 0;
	if (integer && hi - lo <= 24) {
		/* Positions, cycles: every whole value a tick, half a unit of
		 * room at both ends so the end points are not on the frame. */
		step = hi - lo > 12 ? 2 : 1;
		a->lo = lo - 0.5;
		a->hi = hi + 0.5;
		a->nticks = 0;
		/* whole values: points may sit beside them (an interaction plot's
		 * lines are set a little apart) */
		for (double t = ceil(lo - 1e-9); t <= hi + 1e-9 && a->nticks < 64; t += step)
			a->ticks[a->nticks++] = t;
		return;
	}
	a->lo = floor(lo / step) * step;
	a->hi = ceil(hi / step) * step;
	a->nticks = 0;
	for (long k = 0; a->nticks < 64; k++) {
		double t = a->lo + (double)k * step;
		if (t > a->hi + step * 1e-9)
			break;
		a->ticks[a->nticks++] = fabs(t) < step * 1e-9 ? 0 : t;
	}
}

void rep_fig_axis_log(struct fig_axis *a, double lo, double hi)
{
	if (!(lo > 0))
		lo = hi > 0 ? hi / 10 : 1;
	if (!(hi > lo))
		hi = lo * 10;
	a->log = 1;
	a->prefix = 0;
	a->lo = pow(10, floor(log10(lo)));
	a->hi = pow(10, ceil(log10(hi)));
	if (a->hi <= a->lo)
		a->hi = a->lo * 10;
	a->nticks = 0;
	for (double t = a->lo; t <= a->hi * 1.0001 && a->nticks < 64; t *= 10)
		a->ticks[a->nticks++] = t;
}

double rep_fig_axis_pos(const struct fig_axis *a, double v, double p0, double p1)
{
	double f = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
			  : (v - a->lo) / (a->hi - a->lo);
	return p0 + f * (p1 - p0);
}

int rep_fig_si_power(double v)
{
	int u = 0;
	for (v = fabs(v); v >= 1000 && u < 6; v /= 1000)
		u++;
	return u;
}

/* A number as rep_html_num writes one: thousands grouped with commas, U+2212 for
 * a minus; up to six significant digits (ticks are round numbers). */
static void tick_number(char *buf, size_t n, double v)
{
	char digits[48];
	double a = fabs(v);
	if (fabs(a - round(a)) <= 1e-9 * fmax(1, a))
		a = round(a);
	if (a >= 1000 && a < 1e15 && a == floor(a)) {
		char raw[32];
		snprintf(raw, sizeof(raw), "%.0f", a);
		size_t len = strlen(raw), k = 0;
		for (size_t i = 0; i < len; i++) {
			if (i && (len - i) % 3 == 0)
				digits[k++] = ',';
			digits[k++] = raw[i];
		}
		digits[k] = 0;
	} else {
		snprintf(digits, sizeof(digits), "%.6g", a);
	}
	snprintf(buf, n, "%s%s", v < 0 && strcmp(digits, "0") ? "\xe2\x88\x92" : "", digits);
}

void rep_fig_tick_label(char *buf, size_t n, double v, int bytes, const struct fig_axis *a)
{
	if (!bytes) {
		tick_number(buf, n, v);
		return;
	}
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
	if (v == 0) {
		snprintf(buf, n, "0");
		return;
	}
	int u = a->log ? rep_fig_si_power(v) : a->prefix;
	char num[48];
	tick_number(num, sizeof(num), v / pow(1000, u));
	snprintf(buf, n, "%s %s", num, units[u]);
}
