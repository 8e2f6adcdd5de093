/*
 * Drawing the figures with cairo (see figure.h).
 *
 * One function draws a figure on any cairo context; the SVG, PDF and PNG
 * outputs differ only in the surface, so the inline figure and the files
 * for papers are the same drawing. Surfaces write into a strbuf through
 * cairo's stream callbacks; callers put the bytes where they belong (a
 * crash-safe file, or the HTML page).
 *
 * Layout: a plot area with y ticks and a rotated y label on the left, x
 * ticks and label below, and the legend in rows under everything, so it
 * never covers data. Ticks are "nice" numbers (1, 2, 5 times a power of
 * ten); a log axis gets decades. Styles combine an Okabe-Ito colour with a
 * marker shape and a dash pattern (lines) or a hatching (bars); colours
 * alternate dark and light so grey levels differ too.
 *
 * Rejected: hand-written SVG (cairo does text, clipping and PDF), and
 * gnuplot or a plotting language at run time (an external program per
 * report, and no PDF without more dependencies).
 */
#include "reports/figure.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig/util/strbuf.h"
#include "rig/util/xalloc.h"

#define FONT "DejaVu Sans"
#define FS_TICK 10.0
#define FS_LABEL 11.0

struct fig_style {
	double r, g, b;
	int marker;          /* 0 circle, 1 square, 2 triangle, 3 diamond, 4 cross, 5 plus, 6 down-triangle, 7 star */
	int filled;
	double dash[6];
	int ndash;
	int hatch;           /* bars: 0 none, 1 /, 2 \, 3 -, 4 x */
};

static const struct fig_style styles[FIG_NSTYLES] = {
	{ 0.000, 0.447, 0.698, 0, 1, { 0 }, 0, 0 },              /* blue, solid */
	{ 0.902, 0.624, 0.000, 1, 0, { 6, 3 }, 2, 1 },           /* orange, dashed */
	{ 0.000, 0.620, 0.451, 2, 1, { 1.5, 2.5 }, 2, 2 },       /* green, dotted */
	{ 0.835, 0.369, 0.000, 3, 0, { 7, 2, 1.5, 2 }, 4, 3 },   /* vermillion, dash-dot */
	{ 0.337, 0.706, 0.914, 4, 0, { 11, 4 }, 2, 4 },          /* sky blue, long dash */
	{ 0.800, 0.475, 0.655, 5, 0, { 3, 2 }, 2, 1 },           /* purple, short dash */
	{ 0.200, 0.200, 0.200, 6, 1, { 8, 2, 2, 2, 2, 2 }, 6, 2 }, /* black, dash-dot-dot */
	{ 0.600, 0.600, 0.600, 7, 0, { 1, 1 }, 2, 3 },           /* grey, fine dots */
};

struct fig_series *fig_add_series(struct figure *f, const char *name, int style)
{
	XGROW(f->series, f->nseries + 1, f->aseries);
	struct fig_series *s = &f->series[f->nseries++];
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->style = style;
	return s;
}

void fig_add_point(struct fig_series *s, double x, double y, double lo, double hi)
{
	XGROW(s->pts, s->n + 1, s->alloc);
	s->pts[s->n++] = (struct fig_point){ x, y, lo, hi };
}

void fig_add_bar(struct figure *f, const char *group, const char *label, double y,
		 double lo, double hi, int style)
{
	XGROW(f->bars, f->nbars + 1, f->abars);
	f->bars[f->nbars++] = (struct fig_bar){ group, label, y, lo, hi, style };
}

void fig_release(struct figure *f)
{
	for (size_t i = 0; i < f->nseries; i++)
		free(f->series[i].pts);
	free(f->series);
	free(f->bars);
	f->series = NULL;
	f->bars = NULL;
	f->nseries = f->nbars = f->aseries = f->abars = 0;
}

/* --- axes --- */

struct axis {
	double lo, hi;        /* data range shown */
	int log;
	double ticks[64];
	int nticks;
};

static double nice_step(double range, int target)
{
	double raw = range / target, mag = pow(10, floor(log10(raw))), r = raw / mag;
	return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

static void axis_linear(struct axis *a, double lo, double hi, int zero, int integer)
{
	if (zero) {
		if (lo > 0)
			lo = 0;
		if (hi < 0)
			hi = 0;
	}
	if (!(hi > lo)) {
		double pad = lo == 0 ? 1 : fabs(lo) * 0.1;
		lo -= pad;
		hi += pad;
	}
	double step = nice_step(hi - lo, 5);
	if (integer && step < 1)
		step = 1;
	a->log = 0;
	if (integer && hi - lo <= 24) {
		/* Positions, cycles: every whole value a tick, half a unit of
		 * room at both ends so the end points are not on the frame. */
		step = hi - lo > 12 ? 2 : 1;
		a->lo = lo - 0.5;
		a->hi = hi + 0.5;
		a->nticks = 0;
		for (double t = lo; t <= hi + 1e-9 && a->nticks < 64; t += step)
			a->ticks[a->nticks++] = t;
		return;
	}
	a->lo = floor(lo / step) * step;
	a->hi = ceil(hi / step) * step;
	if (zero && lo >= 0)
		a->lo = lo < 0 ? a->lo : (lo == 0 ? 0 : a->lo);
	a->nticks = 0;
	for (double t = a->lo; t <= a->hi + step * 1e-9 && a->nticks < 64; t += step)
		a->ticks[a->nticks++] = fabs(t) < step * 1e-9 ? 0 : t;
}

static void axis_log(struct axis *a, double lo, double hi)
{
	if (!(lo > 0))
		lo = hi > 0 ? hi / 10 : 1;
	if (!(hi > lo))
		hi = lo * 10;
	a->log = 1;
	a->lo = pow(10, floor(log10(lo)));
	a->hi = pow(10, ceil(log10(hi)));
	if (a->hi <= a->lo)
		a->hi = a->lo * 10;
	a->nticks = 0;
	for (double t = a->lo; t <= a->hi * 1.0001 && a->nticks < 64; t *= 10)
		a->ticks[a->nticks++] = t;
}

static double axis_pos(const struct axis *a, double v, double p0, double p1)
{
	double f = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
			  : (v - a->lo) / (a->hi - a->lo);
	return p0 + f * (p1 - p0);
}

static void tick_label(char *buf, size_t n, double v, int bytes)
{
	if (bytes) {
		const char *units[] = { "B", "kB", "MB", "GB", "TB", "PB" };
		int u = 0;
		while (fabs(v) >= 1000 && u < 5) {
			v /= 1000;
			u++;
		}
		snprintf(buf, n, "%g %s", v, units[u]);
		return;
	}
	double av = fabs(v);
	if (av >= 1e6 && fmod(av, 1e5) == 0)
		snprintf(buf, n, "%gM", v / 1e6);
	else if (av >= 1e4 && fmod(av, 100) == 0)
		snprintf(buf, n, "%gk", v / 1e3);
	else
		snprintf(buf, n, "%g", v);
}

/* --- drawing helpers --- */

static void text_at(cairo_t *cr, double x, double y, const char *s, double size, double halign,
		    double valign)
{
	cairo_text_extents_t e;
	cairo_set_font_size(cr, size);
	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - e.x_advance * halign, y + size * 0.35 - size * (valign - 0.5) * 0.7);
	cairo_show_text(cr, s);
}

static double text_width(cairo_t *cr, const char *s, double size)
{
	cairo_text_extents_t e;
	cairo_set_font_size(cr, size);
	cairo_text_extents(cr, s, &e);
	return e.x_advance;
}

static void set_color(cairo_t *cr, const struct fig_style *st)
{
	cairo_set_source_rgb(cr, st->r, st->g, st->b);
}

static void marker(cairo_t *cr, const struct fig_style *st, double x, double y, double r)
{
	cairo_new_path(cr);
	switch (st->marker) {
	case 0:
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		break;
	case 1:
		cairo_rectangle(cr, x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
		break;
	case 2:
		cairo_move_to(cr, x, y - r * 1.1);
		cairo_line_to(cr, x + r, y + r * 0.75);
		cairo_line_to(cr, x - r, y + r * 0.75);
		cairo_close_path(cr);
		break;
	case 3:
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x + r, y);
		cairo_line_to(cr, x, y + r * 1.2);
		cairo_line_to(cr, x - r, y);
		cairo_close_path(cr);
		break;
	case 4:
		cairo_move_to(cr, x - r, y - r);
		cairo_line_to(cr, x + r, y + r);
		cairo_move_to(cr, x - r, y + r);
		cairo_line_to(cr, x + r, y - r);
		break;
	case 5:
		cairo_move_to(cr, x - r * 1.2, y);
		cairo_line_to(cr, x + r * 1.2, y);
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x, y + r * 1.2);
		break;
	case 6:
		cairo_move_to(cr, x, y + r * 1.1);
		cairo_line_to(cr, x + r, y - r * 0.75);
		cairo_line_to(cr, x - r, y - r * 0.75);
		cairo_close_path(cr);
		break;
	default:
		for (int i = 0; i < 5; i++) {
			double a = -M_PI / 2 + i * 4 * M_PI / 5;
			if (i == 0)
				cairo_move_to(cr, x + r * 1.2 * cos(a), y + r * 1.2 * sin(a));
			else
				cairo_line_to(cr, x + r * 1.2 * cos(a), y + r * 1.2 * sin(a));
		}
		cairo_close_path(cr);
	}
	set_color(cr, st);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1.3);
	if (st->marker == 4 || st->marker == 5) {
		cairo_stroke(cr);
	} else if (st->filled) {
		cairo_fill_preserve(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		cairo_set_line_width(cr, 0.6);
		cairo_stroke(cr);
	} else {
		cairo_set_source_rgb(cr, 1, 1, 1);
		cairo_fill_preserve(cr);
		set_color(cr, st);
		cairo_stroke(cr);
	}
}

static void whisker(cairo_t *cr, double x, double ylo, double yhi, double cap)
{
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, x, ylo);
	cairo_line_to(cr, x, yhi);
	cairo_move_to(cr, x - cap, ylo);
	cairo_line_to(cr, x + cap, ylo);
	cairo_move_to(cr, x - cap, yhi);
	cairo_line_to(cr, x + cap, yhi);
	cairo_stroke(cr);
}

static void bar_rect(cairo_t *cr, const struct fig_style *st, double x, double y, double w, double h)
{
	cairo_rectangle(cr, x, y, w, h);
	set_color(cr, st);
	cairo_fill_preserve(cr);
	cairo_save(cr);
	cairo_clip_preserve(cr);
	cairo_new_path(cr);
	cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
	cairo_set_line_width(cr, 1.4);
	cairo_set_dash(cr, NULL, 0, 0);
	double span = w + h;
	if (st->hatch == 1 || st->hatch == 4)
		for (double d = -h; d < span; d += 6) {
			cairo_move_to(cr, x + d, y + h);
			cairo_line_to(cr, x + d + h, y);
		}
	if (st->hatch == 2 || st->hatch == 4)
		for (double d = -h; d < span; d += 6) {
			cairo_move_to(cr, x + d, y);
			cairo_line_to(cr, x + d + h, y + h);
		}
	if (st->hatch == 3)
		for (double d = 3; d < h; d += 5) {
			cairo_move_to(cr, x, y + h - d);
			cairo_line_to(cr, x + w, y + h - d);
		}
	cairo_stroke(cr);
	cairo_restore(cr);
	cairo_rectangle(cr, x, y, w, h);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 0.8);
	cairo_stroke(cr);
}

/* --- the figure --- */

struct frame {
	double x0, x1, y0, y1;   /* plot area: x0 left, y0 top */
	struct axis ax, ay;
};

static void data_range(const struct figure *f, double *xlo, double *xhi, double *ylo, double *yhi)
{
	*xlo = *ylo = INFINITY;
	*xhi = *yhi = -INFINITY;
	/* Fitted curves follow the data; they do not stretch the axes. */
	for (size_t i = 0; i < f->nseries; i++)
		for (size_t j = 0; j < f->series[i].n && !f->series[i].line_only; j++) {
			const struct fig_point *p = &f->series[i].pts[j];
			if (!isfinite(p->x) || !isfinite(p->y) || (f->xlog && !(p->x > 0)))
				continue;
			*xlo = fmin(*xlo, p->x);
			*xhi = fmax(*xhi, p->x);
			*ylo = fmin(*ylo, p->y);
			*yhi = fmax(*yhi, p->y);
			if (isfinite(p->lo))
				*ylo = fmin(*ylo, p->lo);
			if (isfinite(p->hi))
				*yhi = fmax(*yhi, p->hi);
		}
	for (size_t i = 0; i < f->nbars; i++) {
		const struct fig_bar *b = &f->bars[i];
		if (!isfinite(b->y))
			continue;
		*ylo = fmin(*ylo, b->y);
		*yhi = fmax(*yhi, b->y);
		if (isfinite(b->lo))
			*ylo = fmin(*ylo, b->lo);
		if (isfinite(b->hi))
			*yhi = fmax(*yhi, b->hi);
	}
	if (!isfinite(*ylo)) {
		*ylo = 0;
		*yhi = 1;
	}
	if (!isfinite(*xlo)) {
		*xlo = f->xlog ? 1 : 0;
		*xhi = f->xlog ? 10 : 1;
	}
}

/* Legend entries and their rows; returns the height it needs. */
static double legend(cairo_t *cr, const struct figure *f, double x0, double x1, double y, int draw)
{
	const char *names[64];
	int st[64], isbar[64];
	size_t n = 0;
	if (f->kind == FIG_BARS) {
		for (size_t i = 0; i < f->nbars && n < 64; i++) {
			size_t k = 0;
			while (k < n && strcmp(names[k], f->bars[i].label))
				k++;
			if (k == n) {
				names[n] = f->bars[i].label;
				st[n] = f->bars[i].style;
				isbar[n++] = 1;
			}
		}
		if (n <= 1 || n == f->nbars)
			return 0; /* labels under the bars say it all */
	} else {
		for (size_t i = 0; i < f->nseries && n < 64; i++)
			if (f->series[i].name) {
				names[n] = f->series[i].name;
				st[n] = f->series[i].style;
				isbar[n++] = -f->series[i].line_only;
			}
	}
	if (!n)
		return 0;
	double x = x0, row = 0, h = 16;
	for (size_t i = 0; i < n; i++) {
		double w = 34 + text_width(cr, names[i], FS_TICK) + 16;
		if (x + w > x1 && x > x0) {
			x = x0;
			row++;
		}
		if (draw) {
			const struct fig_style *s = &styles[st[i] % FIG_NSTYLES];
			double yy = y + row * h + 8;
			if (isbar[i] == 1) {
				bar_rect(cr, s, x + 4, yy - 6, 22, 12);
			} else {
				set_color(cr, s);
				cairo_set_line_width(cr, 1.6);
				cairo_set_dash(cr, s->dash, s->ndash, 0);
				cairo_move_to(cr, x, yy);
				cairo_line_to(cr, x + 30, yy);
				cairo_stroke(cr);
				if (isbar[i] == 0 && f->kind != FIG_POINTS)
					marker(cr, s, x + 15, yy, 3.5);
				else if (isbar[i] == 0)
					marker(cr, s, x + 15, yy, 3);
			}
			cairo_set_source_rgb(cr, 0, 0, 0);
			text_at(cr, x + 34, yy, names[i], FS_TICK, 0, 0.5);
		}
		x += w;
	}
	return (row + 1) * h + 4;
}

static void draw_map(cairo_t *cr, const struct figure *f, double W, double H)
{
	double end = 0;
	const char *rows[32];
	size_t nrows = 0;
	for (size_t i = 0; i < f->nbars; i++) {
		end = fmax(end, f->bars[i].hi);
		size_t k = 0;
		while (k < nrows && strcmp(rows[k], f->bars[i].group))
			k++;
		if (k == nrows && nrows < 32)
			rows[nrows++] = f->bars[i].group;
	}
	double lw = 0;
	for (size_t k = 0; k < nrows; k++)
		lw = fmax(lw, text_width(cr, rows[k], FS_TICK));
	double x0 = 16 + lw + 10, x1 = W - 20, rowh = 34, y = 14;
	struct axis ax;
	axis_linear(&ax, 0, end > 0 ? end : 1, 1, 0);
	ax.hi = end > 0 ? end : 1; /* to scale: the disk ends at the right edge */
	for (size_t k = 0; k < nrows; k++, y += rowh + 8) {
		cairo_set_source_rgb(cr, 0, 0, 0);
		text_at(cr, x0 - 8, y + rowh / 2, rows[k], FS_TICK, 1, 0.5);
		for (size_t i = 0; i < f->nbars; i++) {
			const struct fig_bar *b = &f->bars[i];
			if (strcmp(b->group, rows[k]))
				continue;
			double a = axis_pos(&ax, b->lo, x0, x1), e = axis_pos(&ax, b->hi, x0, x1);
			bar_rect(cr, &styles[b->style % FIG_NSTYLES], a, y, fmax(e - a, 0.5), rowh);
			double tw = text_width(cr, b->label, FS_TICK);
			if (tw + 6 < e - a) {
				cairo_set_source_rgb(cr, 1, 1, 1);
				cairo_rectangle(cr, (a + e) / 2 - tw / 2 - 3, y + rowh / 2 - FS_TICK / 2 - 2,
						tw + 6, FS_TICK + 4);
				cairo_fill(cr);
				cairo_set_source_rgb(cr, 0, 0, 0);
				text_at(cr, (a + e) / 2, y + rowh / 2, b->label, FS_TICK, 0.5, 0.5);
			}
		}
	}
	/* Byte axis under the rows. */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, x0, y);
	cairo_line_to(cr, x1, y);
	cairo_stroke(cr);
	char buf[64];
	for (int i = 0; i < ax.nticks; i++) {
		if (ax.ticks[i] > ax.hi * 1.0001)
			break;
		double x = axis_pos(&ax, ax.ticks[i], x0, x1);
		cairo_move_to(cr, x, y);
		cairo_line_to(cr, x, y + 4);
		cairo_stroke(cr);
		tick_label(buf, sizeof(buf), ax.ticks[i], 1);
		text_at(cr, x, y + 6 + FS_TICK / 2, buf, FS_TICK, 0.5, 0.5);
	}
	if (f->xlabel)
		text_at(cr, (x0 + x1) / 2, H - 10, f->xlabel, FS_LABEL, 0.5, 0.5);
}

static void draw(cairo_t *cr, const struct figure *f, double W, double H)
{
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
	if (f->kind == FIG_MAP) {
		draw_map(cr, f, W, H);
		return;
	}

	struct frame fr;
	double xlo, xhi, ylo, yhi;
	data_range(f, &xlo, &xhi, &ylo, &yhi);
	axis_linear(&fr.ay, ylo, yhi, f->yzero || f->kind == FIG_BARS, 0);
	if (f->kind != FIG_BARS) {
		if (f->xlog)
			axis_log(&fr.ax, xlo, xhi);
		else
			axis_linear(&fr.ax, xlo, xhi, 0, f->xint);
	}

	/* Margins: widest y tick label, the x labels, the legend. */
	double ytw = 0;
	char buf[64];
	for (int i = 0; i < fr.ay.nticks; i++) {
		tick_label(buf, sizeof(buf), fr.ay.ticks[i], 0);
		ytw = fmax(ytw, text_width(cr, buf, FS_TICK));
	}
	fr.x0 = 16 + FS_LABEL + 8 + ytw + 8;
	fr.x1 = W - 30; /* room for the last x tick label */
	fr.y0 = 14;
	double leg = legend(cr, f, fr.x0, fr.x1, 0, 0);
	double xlab_h = f->kind == FIG_BARS ? 2 * FS_TICK + 14 : FS_TICK + 8;
	int groups = 0;
	for (size_t i = 0; i < f->nbars; i++)
		if (f->bars[i].group && *f->bars[i].group && (i == 0 || !f->bars[i - 1].group ||
							       strcmp(f->bars[i].group, f->bars[i - 1].group)))
			groups++;
	if (f->kind == FIG_BARS && groups > 0)
		xlab_h += FS_TICK + 6;
	fr.y1 = H - 10 - leg - (f->xlabel ? FS_LABEL + 10 : 0) - xlab_h;

	/* Grid and y ticks. */
	cairo_set_line_width(cr, 0.5);
	for (int i = 0; i < fr.ay.nticks; i++) {
		double y = axis_pos(&fr.ay, fr.ay.ticks[i], fr.y1, fr.y0);
		cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
		cairo_move_to(cr, fr.x0, y);
		cairo_line_to(cr, fr.x1, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		tick_label(buf, sizeof(buf), fr.ay.ticks[i], 0);
		text_at(cr, fr.x0 - 6, y, buf, FS_TICK, 1, 0.5);
	}
	if (f->ylabel) {
		cairo_save(cr);
		cairo_translate(cr, 14, (fr.y0 + fr.y1) / 2);
		cairo_rotate(cr, -M_PI / 2);
		cairo_set_source_rgb(cr, 0, 0, 0);
		text_at(cr, 0, 0, f->ylabel, FS_LABEL, 0.5, 0.5);
		cairo_restore(cr);
	}

	double xlab_y = fr.y1 + 8 + FS_TICK / 2;
	if (f->kind == FIG_BARS) {
		size_t n = f->nbars;
		double gap = groups > 1 ? 0.6 : 0; /* in bar widths, between groups */
		double units = (double)n + gap * (groups > 1 ? groups - 1 : 0) + 0.6;
		double bw = (fr.x1 - fr.x0) / (units ? units : 1);
		double x = fr.x0 + bw * 0.3, y0 = axis_pos(&fr.ay, 0, fr.y1, fr.y0);
		double gstart = x;
		for (size_t i = 0; i < n; i++) {
			const struct fig_bar *b = &f->bars[i];
			int newgroup = i > 0 && b->group && f->bars[i - 1].group &&
				       strcmp(b->group, f->bars[i - 1].group);
			if (newgroup)
				x += gap * bw;
			if (i == 0 || newgroup)
				gstart = x;
			const struct fig_style *s = &styles[b->style % FIG_NSTYLES];
			if (isfinite(b->y)) {
				double yt = axis_pos(&fr.ay, b->y, fr.y1, fr.y0);
				bar_rect(cr, s, x + bw * 0.1, fmin(yt, y0), bw * 0.8, fabs(y0 - yt));
				if (isfinite(b->lo) && isfinite(b->hi))
					whisker(cr, x + bw / 2, axis_pos(&fr.ay, b->lo, fr.y1, fr.y0),
						axis_pos(&fr.ay, b->hi, fr.y1, fr.y0), bw * 0.12);
			}
			cairo_set_source_rgb(cr, 0, 0, 0);
			double lw = text_width(cr, b->label, FS_TICK);
			double fs = lw > bw * 0.95 ? fmax(6, FS_TICK * bw * 0.95 / lw) : FS_TICK;
			text_at(cr, x + bw / 2, xlab_y, b->label, fs, 0.5, 0.5);
			x += bw;
			int lastofgroup = i + 1 == n || !b->group || !f->bars[i + 1].group ||
					  strcmp(b->group, f->bars[i + 1].group);
			if (lastofgroup && b->group && *b->group && groups > 0) {
				cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
				cairo_set_line_width(cr, 0.8);
				double gy = xlab_y + FS_TICK + 2;
				cairo_move_to(cr, gstart + bw * 0.1, gy);
				cairo_line_to(cr, x - bw * 0.1, gy);
				cairo_stroke(cr);
				cairo_set_source_rgb(cr, 0, 0, 0);
				text_at(cr, (gstart + x) / 2, gy + FS_TICK, b->group, FS_TICK, 0.5, 0.5);
			}
		}
		/* The zero line. */
		cairo_set_source_rgb(cr, 0, 0, 0);
		cairo_set_line_width(cr, 1);
		cairo_move_to(cr, fr.x0, y0);
		cairo_line_to(cr, fr.x1, y0);
		cairo_stroke(cr);
	} else {
		cairo_set_line_width(cr, 0.5);
		for (int i = 0; i < fr.ax.nticks; i++) {
			double x = axis_pos(&fr.ax, fr.ax.ticks[i], fr.x0, fr.x1);
			cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
			cairo_move_to(cr, x, fr.y0);
			cairo_line_to(cr, x, fr.y1);
			cairo_stroke(cr);
			cairo_set_source_rgb(cr, 0, 0, 0);
			tick_label(buf, sizeof(buf), fr.ax.ticks[i], f->xbytes);
			text_at(cr, x, xlab_y, buf, FS_TICK, 0.5, 0.5);
		}
		cairo_save(cr);
		cairo_rectangle(cr, fr.x0 - 6, fr.y0 - 6, fr.x1 - fr.x0 + 12, fr.y1 - fr.y0 + 12);
		cairo_clip(cr);
		/* Fitted curves and lines under the markers. */
		for (size_t i = 0; i < f->nseries; i++) {
			const struct fig_series *s = &f->series[i];
			if (f->kind == FIG_POINTS && !s->line_only)
				continue;
			const struct fig_style *st = &styles[s->style % FIG_NSTYLES];
			set_color(cr, st);
			cairo_set_line_width(cr, s->line_only ? 1.4 : 1.6);
			cairo_set_dash(cr, st->dash, st->ndash, 0);
			int pen = 0;
			for (size_t j = 0; j < s->n; j++) {
				const struct fig_point *p = &s->pts[j];
				if (!isfinite(p->y) || (f->xlog && !(p->x > 0))) {
					pen = 0;
					continue;
				}
				double x = axis_pos(&fr.ax, p->x, fr.x0, fr.x1);
				double y = axis_pos(&fr.ay, p->y, fr.y1, fr.y0);
				if (pen)
					cairo_line_to(cr, x, y);
				else
					cairo_move_to(cr, x, y);
				pen = 1;
			}
			cairo_stroke(cr);
		}
		cairo_set_dash(cr, NULL, 0, 0);
		size_t total = 0;
		for (size_t i = 0; i < f->nseries; i++)
			total += f->series[i].n;
		double r = f->kind == FIG_POINTS ? (total > 400 ? 2 : 2.8) : 3.8;
		for (size_t i = 0; i < f->nseries; i++) {
			const struct fig_series *s = &f->series[i];
			if (s->line_only)
				continue;
			const struct fig_style *st = &styles[s->style % FIG_NSTYLES];
			for (size_t j = 0; j < s->n; j++) {
				const struct fig_point *p = &s->pts[j];
				if (!isfinite(p->y) || (f->xlog && !(p->x > 0)))
					continue;
				double x = axis_pos(&fr.ax, p->x, fr.x0, fr.x1);
				if (isfinite(p->lo) && isfinite(p->hi))
					whisker(cr, x, axis_pos(&fr.ay, p->lo, fr.y1, fr.y0),
						axis_pos(&fr.ay, p->hi, fr.y1, fr.y0), 3);
				marker(cr, st, x, axis_pos(&fr.ay, p->y, fr.y1, fr.y0), r);
			}
		}
		cairo_restore(cr);
	}

	/* Frame and x label. */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, fr.x0, fr.y0);
	cairo_line_to(cr, fr.x0, fr.y1);
	cairo_line_to(cr, fr.x1, fr.y1);
	cairo_stroke(cr);
	double ybelow = fr.y1 + xlab_h;
	if (f->xlabel) {
		text_at(cr, (fr.x0 + fr.x1) / 2, ybelow + FS_LABEL / 2 + 4, f->xlabel, FS_LABEL, 0.5, 0.5);
		ybelow += FS_LABEL + 10;
	}
	legend(cr, f, fr.x0, fr.x1, ybelow + 2, 1);
}

/*
 * fontconfig, which cairo uses to find fonts, loses a few hundred bytes on
 * its first use (libfontconfig's own allocations, unreachable at exit).
 * rig's sanitized builds check for leaks at exit; this hook, which
 * LeakSanitizer calls when it is linked in and nothing else ever does,
 * names that one library so a leak of rig's own still fails the tests.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libfontconfig.so\n";
}

/* ...and quietly: the list of suppressions used would end every run's
 * output. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

/* --- surfaces --- */

static cairo_status_t to_strbuf(void *closure, const unsigned char *data, unsigned int len)
{
	sb_add(closure, data, len);
	return CAIRO_STATUS_SUCCESS;
}

enum surf { S_SVG, S_PDF, S_PNG };

static int render(const struct figure *f, struct strbuf *out, enum surf kind)
{
	double W = f->width > 0 ? f->width : 640, H = f->height > 0 ? f->height : 360;
	cairo_surface_t *s;
	if (kind == S_SVG) {
		s = cairo_svg_surface_create_for_stream(to_strbuf, out, W, H);
		cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
	} else if (kind == S_PDF) {
		s = cairo_pdf_surface_create_for_stream(to_strbuf, out, W, H);
		cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "rig");
	} else {
		s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)(W * 2), (int)(H * 2));
	}
	cairo_t *cr = cairo_create(s);
	if (kind == S_PNG)
		cairo_scale(cr, 2, 2);
	draw(cr, f, W, H);
	int ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
	cairo_destroy(cr);
	if (kind == S_PNG && ok)
		ok = cairo_surface_write_to_png_stream(s, to_strbuf, out) == CAIRO_STATUS_SUCCESS;
	cairo_surface_finish(s);
	ok = ok && cairo_surface_status(s) == CAIRO_STATUS_SUCCESS;
	cairo_surface_destroy(s);
	return ok ? 0 : -1;
}

int fig_svg(const struct figure *f, struct strbuf *out)
{
	return render(f, out, S_SVG);
}

int fig_pdf(const struct figure *f, struct strbuf *out)
{
	return render(f, out, S_PDF);
}

int fig_png(const struct figure *f, struct strbuf *out)
{
	return render(f, out, S_PNG);
}
