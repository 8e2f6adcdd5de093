/*
 * Between the parts of the figures: figure.c (the drawing), figure_axis.c
 * (axes and tick labels) and figure_out.c (the surfaces it is drawn on).
 */
#ifndef RIG_REPORTS_FIGURE_INT_H
#define RIG_REPORTS_FIGURE_INT_H

#include <cairo.h>

#include "reports/figure.h"

/* An axis: the range shown and its ticks. */
struct fig_axis {
	double lo, hi;        /* data range shown */
	int log;
	int prefix;           /* bytes on a linear axis: the SI power of every tick */
	double ticks[64];
	int nticks;
};

/* A linear axis over lo..hi: from 0 when zero (never below it when lo is
 * 0), every whole value a tick when integer and the range is short. */
void rep_fig_axis_linear(struct fig_axis *a, double lo, double hi, int zero, int integer);
/* A log axis in whole decades around lo..hi (lo > 0). */
void rep_fig_axis_log(struct fig_axis *a, double lo, double hi);
/* Where v falls between p0 (at a->lo) and p1 (at a->hi). */
double rep_fig_axis_pos(const struct fig_axis *a, double v, double p0, double p1);
/* The SI power of v: 0 for bytes, 1 for kB, 2 for MB, ... */
int rep_fig_si_power(double v);
/* Tick v's label into buf: a number, or with bytes a size in SI units
 * (per tick on a log axis, a->prefix on a linear one). */
void rep_fig_tick_label(char *buf, size_t n, double v, int bytes, const struct fig_axis *a);

/* The font and text metrics every surface uses (unhinted: the same
 * layout at any resolution). */
void rep_fig_setup_text(cairo_t *cr);
/* f's size in points: its column's width, and its natural height (or
 * f->height). cr: any context set up by rep_fig_setup_text. */
void rep_fig_measure(cairo_t *cr, const struct figure *f, double *w, double *h);
/* Draw f on cr, w x h points from the origin. */
void rep_fig_draw(cairo_t *cr, const struct figure *f, double w, double h);

#endif
