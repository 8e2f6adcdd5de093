/*
 * Drawing the figures with cairo (see figure.h).
 *
 * One function draws a figure on any cairo context (rep_fig_draw); the SVG,
 * PDF and PNG outputs (figure_out.c) differ only in the surface, so the
 * inline figure and the files for papers are the same drawing. Text is
 * laid out with unhinted metrics on every surface, so the PNG has the
 * SVG's layout.
 *
 * Layout: a plot area with y ticks and a rotated y label on the left, x
 * ticks and label below, and the legend in rows under everything, so it
 * never covers data. The axes and their labels are figure_axis.c's.
 *
 * Nothing is drawn outside the plot area: lines and fitted curves are cut
 * at its edges (the geometry, not only a clip, so the SVG and PDF hold no
 * coordinates off the chart either), and whiskers of a yzero figure are
 * cut at 0.
 *
 * Styles: twelve, pairwise different in colour, marker shape, fill, dash
 * pattern and hatching. The colours are Okabe and Ito's eight (2008,
 * "Color Universal Design"; distinct for the common colour-vision
 * deficiencies), with black as a dark grey so data differs from the frame,
 * then four of Paul Tol's (indigo, olive, wine, green: his "muted" scheme,
 * made for the same purpose). The first three are the ones most figures
 * use; their grey levels are far apart (blue 87, orange 162, dark grey 51
 * of 255), and filled and open markers alternate, so a greyscale print
 * still tells them apart when the colours merge. Okabe-Ito's yellow comes
 * late and only with a filled, black-edged marker: a thin yellow line is
 * faint on white.
 *
 * Rejected: hand-written SVG (cairo does text, clipping and PDF), and
 * gnuplot or a plotting language at run time (an external program per
 * report, and no PDF without more dependencies).
 */
#include "reports/figure_int.h"

#include <cairo.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define FONT "DejaVu Sans"
/* Text sizes at print size (pt): legible in a 3.5 in column. */
#define FS_TICK 8.0
#define FS_LABEL 9.0
#define W_SINGLE 252.0        /* 3.5 in */
#define W_DOUBLE 504.0        /* 7 in */
#define PLOT_H_SINGLE 150.0   /* height of the plot area, pt */
#define PLOT_H_DOUBLE 200.0
#define LEGEND_ROW 11.0

enum marker {
	M_CIRCLE, M_SQUARE, M_TRI_UP, M_DIAMOND, M_TRI_DOWN, M_CROSS,
	M_STAR, M_TRI_RIGHT, M_PLUS, M_BOX_CROSS, M_ASTERISK, M_CIRCLE_PLUS
};

/* Bar hatching, combined: / \ - | */
enum { H_SLASH = 1, H_BACK = 2, H_HORIZ = 4, H_VERT = 8 };

struct fig_style {
	unsigned char r, g, b;
	enum marker marker;
	int filled;          /* else open: white inside (strokes only for x, +, *) */
	double dash[6];
	int ndash;
	int hatch;
};

static const struct fig_style styles[FIG_NSTYLES] = {
	{ 0x00, 0x72, 0xb2, M_CIRCLE, 1, { 0 }, 0, 0 },                        /* blue, solid */
	{ 0xe6, 0x9f, 0x00, M_SQUARE, 0, { 5, 2.5 }, 2, H_SLASH },             /* orange, dashed */
	{ 0x33, 0x33, 0x33, M_TRI_UP, 1, { 1.2, 1.8 }, 2, H_BACK },            /* black, dotted */
	{ 0x56, 0xb4, 0xe9, M_DIAMOND, 0, { 6, 2, 1.2, 2 }, 4, H_HORIZ },      /* sky blue, dash-dot */
	{ 0xd5, 0x5e, 0x00, M_TRI_DOWN, 1, { 10, 3 }, 2, H_SLASH | H_BACK },   /* vermillion, long dash */
	{ 0x00, 0x9e, 0x73, M_CROSS, 0, { 2.5, 1.5 }, 2, H_VERT },             /* bluish green, short dash */
	{ 0xcc, 0x79, 0xa7, M_STAR, 0, { 6, 2, 1.2, 2, 1.2, 2 }, 6, H_HORIZ | H_VERT }, /* reddish purple, dash-dot-dot */
	{ 0xf0, 0xe4, 0x42, M_TRI_RIGHT, 1, { 10, 2, 4, 2 }, 4, H_SLASH | H_HORIZ },    /* yellow, long-short */
	{ 0x33, 0x22, 0x88, M_PLUS, 0, { 1.2, 4 }, 2, H_BACK | H_HORIZ },      /* indigo, sparse dots */
	{ 0x99, 0x99, 0x33, M_BOX_CROSS, 0, { 10, 2, 1.2, 2 }, 4, H_SLASH | H_VERT }, /* olive, long dash-dot */
	{ 0x88, 0x22, 0x55, M_ASTERISK, 0, { 4, 1.5, 4, 1.5, 1.2, 1.5 }, 6, H_BACK | H_VERT }, /* wine, dash-dash-dot */
	{ 0x11, 0x77, 0x33, M_CIRCLE_PLUS, 0, { 10, 2, 1.2, 2, 1.2, 2 }, 6, H_SLASH | H_BACK | H_HORIZ }, /* green, long-dot-dot */
};

static const struct fig_style *style_of(int i)
{
	return &styles[((i % FIG_NSTYLES) + FIG_NSTYLES) % FIG_NSTYLES];
}

struct fig_series *rep_fig_add_series(struct figure *f, const char *name, int style)
{
	style = ((style % FIG_NSTYLES) + FIG_NSTYLES) % FIG_NSTYLES;
	if (name) {
		unsigned used = 0;
		for (size_t i = 0; i < f->nseries; i++)
			if (f->series[i].name)
				used |= 1u << f->series[i].style;
		if (used & (1u << style))
			for (int k = 0; k < FIG_NSTYLES; k++)
				if (!(used & (1u << k))) {
					style = k;
					break;
				}
	}
	XGROW(f->series, f->nseries + 1, f->aseries);
	struct fig_series *s = &f->series[f->nseries++];
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->style = style;
	return s;
}

void rep_fig_add_point(struct fig_series *s, double x, double y, double lo, double hi)
{
	XGROW(s->pts, s->n + 1, s->alloc);
	s->pts[s->n++] = (struct fig_point){ x, y, lo, hi };
}

void rep_fig_add_bar(struct figure *f, const char *group, const char *label, double y,
		 double lo, double hi, int style)
{
	XGROW(f->bars, f->nbars + 1, f->abars);
	f->bars[f->nbars++] = (struct fig_bar){ group, label, y, lo, hi, style };
}

void rep_fig_release(struct figure *f)
{
	for (size_t i = 0; i < f->nseries; i++)
		free(f->series[i].pts);
	free(f->series);
	free(f->bars);
	f->series = NULL;
	f->bars = NULL;
	f->nseries = f->nbars = f->aseries = f->abars = 0;
}

/* yzero, unless a value itself is below 0 (figure.h). */
static int yzero_applies(const struct figure *f)
{
	if (!f->yzero || f->kind == FIG_MAP)
		return 0;
	for (size_t i = 0; i < f->nseries; i++)
		for (size_t j = 0; j < f->series[i].n && !f->series[i].line_only; j++)
			if (f->series[i].pts[j].y < 0)
				return 0;
	for (size_t i = 0; i < f->nbars; i++)
		if (f->bars[i].y < 0)
			return 0;
	return 1;
}

int rep_fig_clipped(const struct figure *f)
{
	if (!yzero_applies(f))
		return 0;
	for (size_t i = 0; i < f->nseries; i++)
		for (size_t j = 0; j < f->series[i].n && !f->series[i].line_only; j++) {
			const struct fig_point *p = &f->series[i].pts[j];
			if (isfinite(p->y) && isfinite(p->hi) && p->lo < 0)
				return 1;
		}
	for (size_t i = 0; i < f->nbars; i++)
		if (isfinite(f->bars[i].y) && isfinite(f->bars[i].hi) && f->bars[i].lo < 0)
			return 1;
	return 0;
}

enum fig_size rep_fig_size_of(const struct figure *f)
{
	if (f->size != FIG_AUTO)
		return f->size;
	if (f->kind == FIG_MAP)
		return FIG_DOUBLE;
	if (f->kind == FIG_BARS)
		return f->nbars <= 6 ? FIG_SINGLE : FIG_DOUBLE;
	size_t named = 0, points = 0;
	for (size_t i = 0; i < f->nseries; i++) {
		named += f->series[i].name != NULL;
		points += f->series[i].line_only ? 0 : f->series[i].n;
	}
	return named <= 4 && points <= 400 ? FIG_SINGLE : FIG_DOUBLE;
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
	cairo_set_source_rgb(cr, st->r / 255.0, st->g / 255.0, st->b / 255.0);
}

static double luma(const struct fig_style *st)
{
	return 0.299 * st->r + 0.587 * st->g + 0.114 * st->b;
}

static void polygon(cairo_t *cr, double x, double y, double r, int n, double a0)
{
	for (int i = 0; i < n; i++) {
		double a = a0 + i * 2 * M_PI / n;
		if (i == 0)
			cairo_move_to(cr, x + r * cos(a), y + r * sin(a));
		else
			cairo_line_to(cr, x + r * cos(a), y + r * sin(a));
	}
	cairo_close_path(cr);
}

static void marker(cairo_t *cr, const struct fig_style *st, double x, double y, double r)
{
	int strokes_only = 0;
	cairo_new_path(cr);
	switch (st->marker) {
	case M_CIRCLE:
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		cairo_close_path(cr);
		break;
	case M_SQUARE:
		cairo_rectangle(cr, x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
		break;
	case M_TRI_UP:
		polygon(cr, x, y + r * 0.15, r * 1.15, 3, -M_PI / 2);
		break;
	case M_DIAMOND:
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x + r * 0.9, y);
		cairo_line_to(cr, x, y + r * 1.2);
		cairo_line_to(cr, x - r * 0.9, y);
		cairo_close_path(cr);
		break;
	case M_TRI_DOWN:
		polygon(cr, x, y - r * 0.15, r * 1.15, 3, M_PI / 2);
		break;
	case M_CROSS:
		cairo_move_to(cr, x - r, y - r);
		cairo_line_to(cr, x + r, y + r);
		cairo_move_to(cr, x - r, y + r);
		cairo_line_to(cr, x + r, y - r);
		strokes_only = 1;
		break;
	case M_STAR:
		for (int i = 0; i < 10; i++) {
			double a = -M_PI / 2 + i * M_PI / 5, rr = i % 2 ? r * 0.5 : r * 1.3;
			if (i == 0)
				cairo_move_to(cr, x + rr * cos(a), y + rr * sin(a));
			else
				cairo_line_to(cr, x + rr * cos(a), y + rr * sin(a));
		}
		cairo_close_path(cr);
		break;
	case M_TRI_RIGHT:
		polygon(cr, x - r * 0.15, y, r * 1.15, 3, 0);
		break;
	case M_PLUS:
		cairo_move_to(cr, x - r * 1.2, y);
		cairo_line_to(cr, x + r * 1.2, y);
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x, y + r * 1.2);
		strokes_only = 1;
		break;
	case M_BOX_CROSS:
		cairo_rectangle(cr, x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
		cairo_move_to(cr, x - r * 0.85, y - r * 0.85);
		cairo_line_to(cr, x + r * 0.85, y + r * 0.85);
		cairo_move_to(cr, x - r * 0.85, y + r * 0.85);
		cairo_line_to(cr, x + r * 0.85, y - r * 0.85);
		break;
	case M_ASTERISK:
		for (int i = 0; i < 3; i++) {
			double a = M_PI / 2 + i * M_PI / 3;
			cairo_move_to(cr, x + r * 1.2 * cos(a), y + r * 1.2 * sin(a));
			cairo_line_to(cr, x - r * 1.2 * cos(a), y - r * 1.2 * sin(a));
		}
		strokes_only = 1;
		break;
	case M_CIRCLE_PLUS:
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		cairo_close_path(cr);
		cairo_move_to(cr, x - r, y);
		cairo_line_to(cr, x + r, y);
		cairo_move_to(cr, x, y - r);
		cairo_line_to(cr, x, y + r);
		break;
	}
	set_color(cr, st);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1.0);
	if (strokes_only) {
		cairo_stroke(cr);
	} else if (st->filled) {
		cairo_fill_preserve(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		cairo_set_line_width(cr, 0.5);
		cairo_stroke(cr);
	} else {
		cairo_set_source_rgb(cr, 1, 1, 1);
		cairo_fill_preserve(cr);
		set_color(cr, st);
		cairo_stroke(cr);
	}
}

/* A whisker from ylo to yhi (pixels); a cap at each end that is the
 * interval's own (capped), none where it was cut. */
static void whisker(cairo_t *cr, double x, double ylo, double yhi, double cap, int lo_cut)
{
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 0.8);
	cairo_move_to(cr, x, ylo);
	cairo_line_to(cr, x, yhi);
	if (!lo_cut) {
		cairo_move_to(cr, x - cap, ylo);
		cairo_line_to(cr, x + cap, ylo);
	}
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
	/* Light hatching on dark colours, dark on light ones. */
	if (luma(st) > 150)
		cairo_set_source_rgba(cr, 0, 0, 0, 0.55);
	else
		cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
	cairo_set_line_width(cr, 0.9);
	cairo_set_dash(cr, NULL, 0, 0);
	double span = w + h, gap = 4.5;
	if (st->hatch & H_SLASH)
		for (double d = -h; d < span; d += gap) {
			cairo_move_to(cr, x + d, y + h);
			cairo_line_to(cr, x + d + h, y);
		}
	if (st->hatch & H_BACK)
		for (double d = -h; d < span; d += gap) {
			cairo_move_to(cr, x + d, y);
			cairo_line_to(cr, x + d + h, y + h);
		}
	if (st->hatch & H_HORIZ)
		for (double d = 2; d < h; d += gap) {
			cairo_move_to(cr, x, y + h - d);
			cairo_line_to(cr, x + w, y + h - d);
		}
	if (st->hatch & H_VERT)
		for (double d = 2; d < w; d += gap) {
			cairo_move_to(cr, x + d, y);
			cairo_line_to(cr, x + d, y + h);
		}
	cairo_stroke(cr);
	cairo_restore(cr);
	cairo_rectangle(cr, x, y, w, h);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 0.6);
	cairo_stroke(cr);
}

/* --- the figure --- */

struct frame {
	double W, H;
	double x0, x1, y0, y1;   /* plot area: x0 left, y0 top */
	struct fig_axis ax, ay;
	int yzero;               /* yzero applies */
	int groups;              /* bar groups with a name */
	double xlab_h, leg_h;    /* room for x tick labels (and groups), legend */
};

/* The part of segment a-b inside the plot area (Liang-Barsky): the
 * parameters t0 <= t1 along it, 0 when no part is inside. */
static int clip_segment(const struct frame *fr, double ax, double ay, double bx, double by,
			double *t0, double *t1)
{
	double dx = bx - ax, dy = by - ay;
	double p[4] = { -dx, dx, -dy, dy };
	double q[4] = { ax - fr->x0, fr->x1 - ax, ay - fr->y0, fr->y1 - ay };
	*t0 = 0;
	*t1 = 1;
	for (int i = 0; i < 4; i++) {
		if (p[i] == 0) {
			if (q[i] < 0)
				return 0;
			continue;
		}
		double t = q[i] / p[i];
		if (p[i] < 0) {
			if (t > *t1)
				return 0;
			if (t > *t0)
				*t0 = t;
		} else {
			if (t < *t0)
				return 0;
			if (t < *t1)
				*t1 = t;
		}
	}
	return 1;
}

static void data_range(const struct figure *f, int yzero, double *xlo, double *xhi, double *ylo,
		       double *yhi)
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
			if (isfinite(p->lo) && isfinite(p->hi)) {
				*ylo = fmin(*ylo, p->lo);
				*yhi = fmax(*yhi, p->hi);
			}
		}
	for (size_t i = 0; i < f->nbars; i++) {
		const struct fig_bar *b = &f->bars[i];
		if (!isfinite(b->y))
			continue;
		*ylo = fmin(*ylo, b->y);
		*yhi = fmax(*yhi, b->y);
		if (isfinite(b->lo) && isfinite(b->hi)) {
			*ylo = fmin(*ylo, b->lo);
			*yhi = fmax(*yhi, b->hi);
		}
	}
	if (!isfinite(*ylo)) {
		*ylo = 0;
		*yhi = 1;
	}
	if (yzero && *ylo < 0)
		*ylo = 0; /* whiskers are cut at 0 */
	if (!isfinite(*xlo)) {
		*xlo = f->xlog ? 1 : 0;
		*xhi = f->xlog ? 10 : 1;
	}
}

/* Markers of a line figure, of a scatter, of a dense scatter (pt). */
static double marker_radius(const struct figure *f)
{
	size_t total = 0;
	for (size_t i = 0; i < f->nseries; i++)
		total += f->series[i].n;
	return f->kind == FIG_POINTS ? (total > 400 ? 1.5 : 2.1) : 2.8;
}

/* Legend entries in rows from x0 to x1; returns the height they need. */
static double legend(cairo_t *cr, const struct figure *f, double x0, double x1, double y, int draw)
{
	const char *names[64];
	int st[64], isbar[64], line[64];
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
				/* A scatter's series shows its fitted curve's dash. */
				line[n] = f->kind == FIG_LINES;
				for (size_t k = 0; k < f->nseries; k++)
					line[n] |= f->series[k].line_only && f->series[k].style == st[n];
				isbar[n++] = 0;
			}
	}
	if (!n)
		return 0;
	double x = x0, row = 0, sw = 20;
	for (size_t i = 0; i < n; i++) {
		double w = sw + 3 + text_width(cr, names[i], FS_TICK) + 10;
		if (x + w > x1 && x > x0) {
			x = x0;
			row++;
		}
		if (draw) {
			const struct fig_style *s = style_of(st[i]);
			double yy = y + row * LEGEND_ROW + LEGEND_ROW / 2;
			if (isbar[i]) {
				bar_rect(cr, s, x + 2, yy - 4, sw - 4, 8);
			} else {
				if (line[i]) {
					set_color(cr, s);
					cairo_set_line_width(cr, f->kind == FIG_LINES ? 1.2 : 1.0);
					cairo_set_dash(cr, s->dash, s->ndash, 0);
					cairo_move_to(cr, x, yy);
					cairo_line_to(cr, x + sw, yy);
					cairo_stroke(cr);
				}
				marker(cr, s, x + sw / 2, yy, fmax(marker_radius(f), 2.1));
			}
			cairo_set_source_rgb(cr, 0, 0, 0);
			text_at(cr, x + sw + 3, yy, names[i], FS_TICK, 0, 0.5);
		}
		x += w;
	}
	return (row + 1) * LEGEND_ROW + 4;
}

/* Rows of a partition map: the distinct groups in order. */
static size_t map_rows(const struct figure *f, const char **rows, size_t max)
{
	size_t nrows = 0;
	for (size_t i = 0; i < f->nbars; i++) {
		size_t k = 0;
		while (k < nrows && strcmp(rows[k], f->bars[i].group))
			k++;
		if (k == nrows && nrows < max)
			rows[nrows++] = f->bars[i].group;
	}
	return nrows;
}

#define MAP_ROW 24.0

static double map_height(const struct figure *f)
{
	const char *rows[32];
	size_t n = map_rows(f, rows, 32);
	return 8 + (double)n * (MAP_ROW + 6) + 4 + FS_TICK + 6 + (f->xlabel ? FS_LABEL + 8 : 0) + 4;
}

static void draw_map(cairo_t *cr, const struct figure *f, double W, double H)
{
	double end = 0;
	const char *rows[32];
	size_t nrows = map_rows(f, rows, 32);
	for (size_t i = 0; i < f->nbars; i++)
		end = fmax(end, f->bars[i].hi);
	double lw = 0;
	for (size_t k = 0; k < nrows; k++)
		lw = fmax(lw, text_width(cr, rows[k], FS_TICK));
	double x0 = 6 + lw + 6, x1 = W - 14, y = 8;
	struct fig_axis ax;
	rep_fig_axis_linear(&ax, 0, end > 0 ? end : 1, 1, 0);
	ax.hi = end > 0 ? end : 1; /* to scale: the disk ends at the right edge */
	ax.prefix = rep_fig_si_power(ax.ticks[ax.nticks - 1]);
	for (size_t k = 0; k < nrows; k++, y += MAP_ROW + 6) {
		cairo_set_source_rgb(cr, 0, 0, 0);
		text_at(cr, x0 - 5, y + MAP_ROW / 2, rows[k], FS_TICK, 1, 0.5);
		for (size_t i = 0; i < f->nbars; i++) {
			const struct fig_bar *b = &f->bars[i];
			if (strcmp(b->group, rows[k]))
				continue;
			double a = rep_fig_axis_pos(&ax, b->lo, x0, x1), e = rep_fig_axis_pos(&ax, b->hi, x0, x1);
			bar_rect(cr, style_of(b->style), a, y, fmax(e - a, 0.5), MAP_ROW);
			double tw = text_width(cr, b->label, FS_TICK);
			if (tw + 6 < e - a) {
				cairo_set_source_rgb(cr, 1, 1, 1);
				cairo_rectangle(cr, (a + e) / 2 - tw / 2 - 2, y + MAP_ROW / 2 - FS_TICK / 2 - 1.5,
						tw + 4, FS_TICK + 3);
				cairo_fill(cr);
				cairo_set_source_rgb(cr, 0, 0, 0);
				text_at(cr, (a + e) / 2, y + MAP_ROW / 2, b->label, FS_TICK, 0.5, 0.5);
			}
		}
	}
	/* Byte axis under the rows. */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 0.8);
	cairo_move_to(cr, x0, y);
	cairo_line_to(cr, x1, y);
	cairo_stroke(cr);
	char buf[64];
	for (int i = 0; i < ax.nticks; i++) {
		if (ax.ticks[i] > ax.hi * 1.0001)
			break;
		double x = rep_fig_axis_pos(&ax, ax.ticks[i], x0, x1);
		cairo_move_to(cr, x, y);
		cairo_line_to(cr, x, y + 3);
		cairo_stroke(cr);
		rep_fig_tick_label(buf, sizeof(buf), ax.ticks[i], 1, &ax);
		text_at(cr, x, y + 4 + FS_TICK / 2, buf, FS_TICK, 0.5, 0.5);
	}
	if (f->xlabel)
		text_at(cr, (x0 + x1) / 2, H - 4 - FS_LABEL / 2, f->xlabel, FS_LABEL, 0.5, 0.5);
}

static double fig_width(const struct figure *f)
{
	return rep_fig_size_of(f) == FIG_SINGLE ? W_SINGLE : W_DOUBLE;
}

/*
 * Where everything goes. H 0: the natural height (the plot area's
 * height for the size, plus what is above and below it), set in fr->H.
 */
static void layout(cairo_t *cr, const struct figure *f, double W, double H, struct frame *fr)
{
	memset(fr, 0, sizeof(*fr));
	fr->W = W;
	fr->yzero = yzero_applies(f);
	double xlo, xhi, ylo, yhi;
	data_range(f, fr->yzero, &xlo, &xhi, &ylo, &yhi);
	rep_fig_axis_linear(&fr->ay, ylo, yhi, fr->yzero || f->kind == FIG_BARS, 0);
	if (f->kind != FIG_BARS) {
		if (f->xlog)
			rep_fig_axis_log(&fr->ax, xlo, xhi);
		else
			rep_fig_axis_linear(&fr->ax, xlo, xhi, 0, f->xint);
		if (f->xbytes && !fr->ax.log)
			fr->ax.prefix = rep_fig_si_power(fmax(fabs(fr->ax.ticks[0]), fabs(fr->ax.ticks[fr->ax.nticks - 1])));
	}

	/* Margins: widest y tick label; half the last x tick label. */
	double ytw = 0, right = 8;
	char buf[64];
	for (int i = 0; i < fr->ay.nticks; i++) {
		rep_fig_tick_label(buf, sizeof(buf), fr->ay.ticks[i], 0, &fr->ay);
		ytw = fmax(ytw, text_width(cr, buf, FS_TICK));
	}
	if (f->kind != FIG_BARS && fr->ax.nticks) {
		rep_fig_tick_label(buf, sizeof(buf), fr->ax.ticks[fr->ax.nticks - 1], f->xbytes, &fr->ax);
		right = fmax(right, text_width(cr, buf, FS_TICK) / 2 + 3);
	}
	fr->x0 = 4 + (f->ylabel ? FS_LABEL + 6 : 0) + ytw + 5;
	fr->x1 = W - right;
	fr->y0 = 8;
	fr->leg_h = legend(cr, f, fr->x0, fr->x1, 0, 0);
	fr->xlab_h = FS_TICK + 6;
	for (size_t i = 0; i < f->nbars; i++)
		if (f->bars[i].group && *f->bars[i].group &&
		    (i == 0 || !f->bars[i - 1].group || strcmp(f->bars[i].group, f->bars[i - 1].group)))
			fr->groups++;
	if (f->kind == FIG_BARS && fr->groups > 0)
		fr->xlab_h += FS_TICK + 6;
	double below = fr->xlab_h + (f->xlabel ? FS_LABEL + 6 : 0) + fr->leg_h + 4;
	if (!(H > 0))
		H = fr->y0 + (fig_width(f) == W_SINGLE ? PLOT_H_SINGLE : PLOT_H_DOUBLE) + below;
	fr->H = H;
	fr->y1 = H - below;
}

/* A series' points joined, cut at the edges of the plot area. */
static void polyline(cairo_t *cr, const struct figure *f, const struct frame *fr,
		     const struct fig_series *s)
{
	int have = 0, pen = 0; /* a previous point; the path ends at it */
	double px = 0, py = 0;
	for (size_t j = 0; j < s->n; j++) {
		const struct fig_point *p = &s->pts[j];
		double x = NAN, y = NAN;
		if (isfinite(p->x) && isfinite(p->y) && !(f->xlog && !(p->x > 0))) {
			x = rep_fig_axis_pos(&fr->ax, p->x, fr->x0, fr->x1);
			y = rep_fig_axis_pos(&fr->ay, p->y, fr->y1, fr->y0);
		}
		if (!isfinite(x) || !isfinite(y)) {
			have = pen = 0;
			continue;
		}
		double t0, t1;
		if (have && clip_segment(fr, px, py, x, y, &t0, &t1)) {
			if (t0 > 0 || !pen)
				cairo_move_to(cr, px + t0 * (x - px), py + t0 * (y - py));
			cairo_line_to(cr, px + t1 * (x - px), py + t1 * (y - py));
			pen = t1 >= 1;
		} else {
			pen = 0;
		}
		px = x;
		py = y;
		have = 1;
	}
}

static void draw_bars(cairo_t *cr, const struct figure *f, const struct frame *fr)
{
	double xlab_y = fr->y1 + 5 + FS_TICK / 2;
	size_t n = f->nbars;
	int groups = fr->groups;
	double gap = groups > 1 ? 0.6 : 0; /* in bar widths, between groups */
	double units = (double)n + gap * (groups > 1 ? groups - 1 : 0) + 0.6;
	double bw = (fr->x1 - fr->x0) / (units ? units : 1);
	double x = fr->x0 + bw * 0.3, y0 = rep_fig_axis_pos(&fr->ay, 0, fr->y1, fr->y0);
	double gstart = x;
	for (size_t i = 0; i < n; i++) {
		const struct fig_bar *b = &f->bars[i];
		int newgroup = i > 0 && b->group && f->bars[i - 1].group &&
			       strcmp(b->group, f->bars[i - 1].group);
		if (newgroup)
			x += gap * bw;
		if (i == 0 || newgroup)
			gstart = x;
		if (isfinite(b->y)) {
			double yt = rep_fig_axis_pos(&fr->ay, b->y, fr->y1, fr->y0);
			bar_rect(cr, style_of(b->style), x + bw * 0.1, fmin(yt, y0), bw * 0.8, fabs(y0 - yt));
			if (isfinite(b->lo) && isfinite(b->hi)) {
				int cut = fr->yzero && b->lo < 0;
				whisker(cr, x + bw / 2, rep_fig_axis_pos(&fr->ay, cut ? 0 : b->lo, fr->y1, fr->y0),
					rep_fig_axis_pos(&fr->ay, b->hi, fr->y1, fr->y0), fmin(bw * 0.12, 4), cut);
			}
		}
		cairo_set_source_rgb(cr, 0, 0, 0);
		double lw = text_width(cr, b->label, FS_TICK);
		double fs = lw > bw * 0.95 ? fmax(5, FS_TICK * bw * 0.95 / lw) : FS_TICK;
		text_at(cr, x + bw / 2, xlab_y, b->label, fs, 0.5, 0.5);
		x += bw;
		int lastofgroup = i + 1 == n || !b->group || !f->bars[i + 1].group ||
				  strcmp(b->group, f->bars[i + 1].group);
		if (lastofgroup && b->group && *b->group && groups > 0) {
			cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
			cairo_set_line_width(cr, 0.6);
			double gy = xlab_y + FS_TICK / 2 + 2;
			cairo_move_to(cr, gstart + bw * 0.1, gy);
			cairo_line_to(cr, x - bw * 0.1, gy);
			cairo_stroke(cr);
			cairo_set_source_rgb(cr, 0, 0, 0);
			double gw = text_width(cr, b->group, FS_TICK), room = x - gstart;
			double gfs = gw > room * 0.98 ? fmax(5, FS_TICK * room * 0.98 / gw) : FS_TICK;
			text_at(cr, (gstart + x) / 2, gy + 2 + FS_TICK / 2, b->group, gfs, 0.5, 0.5);
		}
	}
	/* The zero line. */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 0.8);
	cairo_move_to(cr, fr->x0, y0);
	cairo_line_to(cr, fr->x1, y0);
	cairo_stroke(cr);
}

static void draw_series(cairo_t *cr, const struct figure *f, const struct frame *fr)
{
	double xlab_y = fr->y1 + 5 + FS_TICK / 2;
	char buf[64];
	cairo_set_line_width(cr, 0.4);
	for (int i = 0; i < fr->ax.nticks; i++) {
		double x = rep_fig_axis_pos(&fr->ax, fr->ax.ticks[i], fr->x0, fr->x1);
		cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
		cairo_move_to(cr, x, fr->y0);
		cairo_line_to(cr, x, fr->y1);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		rep_fig_tick_label(buf, sizeof(buf), fr->ax.ticks[i], f->xbytes, &fr->ax);
		text_at(cr, x, xlab_y, buf, FS_TICK, 0.5, 0.5);
	}
	/* Fitted curves and lines under the markers, cut at the plot area. */
	for (size_t i = 0; i < f->nseries; i++) {
		const struct fig_series *s = &f->series[i];
		if (f->kind == FIG_POINTS && !s->line_only)
			continue;
		const struct fig_style *st = style_of(s->style);
		cairo_new_path(cr);
		polyline(cr, f, fr, s);
		set_color(cr, st);
		cairo_set_line_width(cr, s->line_only ? 1.0 : 1.2);
		cairo_set_dash(cr, st->dash, st->ndash, 0);
		cairo_stroke(cr);
	}
	cairo_set_dash(cr, NULL, 0, 0);
	/* Markers: within the axes by construction; the clip keeps one that
	 * sits on an edge from spilling over the frame's ticks. */
	cairo_save(cr);
	cairo_rectangle(cr, fr->x0 - 4, fr->y0 - 4, fr->x1 - fr->x0 + 8,
			fr->y1 - fr->y0 + 4 + (fr->yzero ? 0 : 3));
	cairo_clip(cr);
	double r = marker_radius(f);
	for (size_t i = 0; i < f->nseries; i++) {
		const struct fig_series *s = &f->series[i];
		if (s->line_only)
			continue;
		const struct fig_style *st = style_of(s->style);
		for (size_t j = 0; j < s->n; j++) {
			const struct fig_point *p = &s->pts[j];
			if (!isfinite(p->x) || !isfinite(p->y) || (f->xlog && !(p->x > 0)))
				continue;
			double x = rep_fig_axis_pos(&fr->ax, p->x, fr->x0, fr->x1);
			if (isfinite(p->lo) && isfinite(p->hi)) {
				int cut = fr->yzero && p->lo < 0;
				whisker(cr, x, rep_fig_axis_pos(&fr->ay, cut ? 0 : p->lo, fr->y1, fr->y0),
					rep_fig_axis_pos(&fr->ay, p->hi, fr->y1, fr->y0), 2.2, cut);
			}
			marker(cr, st, x, rep_fig_axis_pos(&fr->ay, p->y, fr->y1, fr->y0), r);
		}
	}
	cairo_restore(cr);
}

static void draw(cairo_t *cr, const struct figure *f, const struct frame *fr)
{
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
	if (f->kind == FIG_MAP) {
		draw_map(cr, f, fr->W, fr->H);
		return;
	}
	/* Grid and y ticks. */
	char buf[64];
	cairo_set_line_width(cr, 0.4);
	for (int i = 0; i < fr->ay.nticks; i++) {
		double y = rep_fig_axis_pos(&fr->ay, fr->ay.ticks[i], fr->y1, fr->y0);
		cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
		cairo_move_to(cr, fr->x0, y);
		cairo_line_to(cr, fr->x1, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		rep_fig_tick_label(buf, sizeof(buf), fr->ay.ticks[i], 0, &fr->ay);
		text_at(cr, fr->x0 - 4, y, buf, FS_TICK, 1, 0.5);
	}
	if (f->ylabel) {
		cairo_save(cr);
		cairo_translate(cr, 4 + FS_LABEL / 2, (fr->y0 + fr->y1) / 2);
		cairo_rotate(cr, -M_PI / 2);
		cairo_set_source_rgb(cr, 0, 0, 0);
		text_at(cr, 0, 0, f->ylabel, FS_LABEL, 0.5, 0.5);
		cairo_restore(cr);
	}
	if (f->kind == FIG_BARS)
		draw_bars(cr, f, fr);
	else
		draw_series(cr, f, fr);

	/* Frame and x label. */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 0.8);
	cairo_move_to(cr, fr->x0, fr->y0);
	cairo_line_to(cr, fr->x0, fr->y1);
	cairo_line_to(cr, fr->x1, fr->y1);
	cairo_stroke(cr);
	double ybelow = fr->y1 + fr->xlab_h;
	if (f->xlabel) {
		text_at(cr, (fr->x0 + fr->x1) / 2, ybelow + FS_LABEL / 2 + 1, f->xlabel, FS_LABEL, 0.5, 0.5);
		ybelow += FS_LABEL + 6;
	}
	legend(cr, f, fr->x0, fr->x1, ybelow, 1);
}

/* The same text metrics on every surface: unhinted, so the layout does
 * not depend on the output's resolution. */
void rep_fig_setup_text(cairo_t *cr)
{
	cairo_font_options_t *fo = cairo_font_options_create();
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
	cairo_set_font_options(cr, fo);
	cairo_font_options_destroy(fo);
	cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
}

void rep_fig_measure(cairo_t *cr, const struct figure *f, double *w, double *h)
{
	*w = fig_width(f);
	if (f->kind == FIG_MAP) {
		*h = f->height > 0 ? f->height : map_height(f);
		return;
	}
	struct frame fr;
	layout(cr, f, *w, f->height, &fr);
	*h = fr.H;
}

void rep_fig_draw(cairo_t *cr, const struct figure *f, double w, double h)
{
	struct frame fr;
	if (f->kind == FIG_MAP) {
		memset(&fr, 0, sizeof(fr));
		fr.W = w;
		fr.H = h;
	} else {
		layout(cr, f, w, h, &fr);
	}
	draw(cr, f, &fr);
}
