/*
 * Figures of a report, drawn with cairo: one description (struct figure)
 * renders to an SVG document in memory (inlined into report.html) and to
 * standalone SVG, PDF and PNG files for papers (figures/). Four kinds:
 *
 *   FIG_BARS    bars with 95% interval whiskers, grouped (by layout)
 *   FIG_LINES   series of points joined by lines, with whiskers, against
 *               a numeric factor (position, cycle, fill level)
 *   FIG_POINTS  scatter without lines (drift along the sequence, per-file
 *               rates); optional fitted curves as line-only series
 *   FIG_MAP     partition maps to scale: one row per layout (bar.group),
 *               a segment per partition from bar.lo to bar.hi in bytes
 *
 * Sizes are those of a printed page: a single column is 3.5 in (252 pt)
 * wide, a double column 7 in (504 pt); text is 8 and 9 pt at that size.
 * The height follows from the plot area and the legend's rows.
 *
 * FIG_NSTYLES styles differ pairwise in colour, marker shape, dash pattern
 * and bar hatching, so a greyscale print keeps up to that many series apart.
 */
#ifndef RIG_REPORTS_FIGURE_H
#define RIG_REPORTS_FIGURE_H

#include <stddef.h>

struct strbuf;

enum fig_kind { FIG_BARS, FIG_LINES, FIG_POINTS, FIG_MAP };

/* FIG_AUTO: a single column for a few bars or series, else a double one. */
enum fig_size { FIG_AUTO, FIG_DOUBLE, FIG_SINGLE };

struct fig_point {
	double x, y;
	double lo, hi;          /* whisker; NaN: none */
};

struct fig_series {
	const char *name;       /* legend text; NULL: not in the legend */
	struct fig_point *pts;
	size_t n, alloc;
	int style;              /* marker, dash and colour: fig_style index */
	int line_only;          /* a fitted curve: a line, no markers */
};

struct fig_bar {
	const char *group;      /* bars of one group stand together, labelled once */
	const char *label;      /* under the bar */
	double y, lo, hi;       /* lo/hi NaN: no whisker */
	int style;
};

struct figure {
	enum fig_kind kind;
	enum fig_size size;
	const char *xlabel, *ylabel;  /* with units: "throughput (MB/s, 10^6 B/s)" */
	int xlog;               /* logarithmic x axis (decades) */
	int xbytes;             /* x values are bytes: ticks read 1 MB, 10 MB, ... (SI) */
	int xint;               /* integer x ticks only (position, cycle, repetition) */
	/*
	 * The values cannot be negative (rates, counts, times): the y axis
	 * starts at 0 and never goes below it, whiskers reaching below 0 are
	 * cut there (rep_fig_clipped says so, for the caption). Ignored when a
	 * bar's or a point's own value is below 0: that quantity can be
	 * negative after all, and cutting would hide data.
	 */
	int yzero;
	struct fig_series *series;
	size_t nseries, aseries;
	struct fig_bar *bars;
	size_t nbars, abars;
	double height;          /* points; 0: from the size and the legend */
};

/* Builders; strings are not copied and must outlive the figure.
 * rep_fig_add_series keeps named series apart: when style (taken modulo
 * FIG_NSTYLES) is already another named series' style, the series gets the
 * first style no named series has yet, so up to FIG_NSTYLES named series
 * differ. A fitted curve (name NULL) takes the style it is given: pass its
 * series' s->style. */
struct fig_series *rep_fig_add_series(struct figure *f, const char *name, int style);
void rep_fig_add_point(struct fig_series *s, double x, double y, double lo, double hi);
void rep_fig_add_bar(struct figure *f, const char *group, const char *label, double y,
		 double lo, double hi, int style);
void rep_fig_release(struct figure *f);

/* 1 when f->yzero applies and a whisker reaches below 0: it is drawn cut at
 * 0, and the caption should say "whiskers clipped at 0". */
int rep_fig_clipped(const struct figure *f);
/* f->size, FIG_AUTO resolved. */
enum fig_size rep_fig_size_of(const struct figure *f);

/* The figure as an SVG document appended to out (width and height in pt,
 * with a viewBox, so CSS may scale it). 0, or -1 if cairo failed. */
int rep_fig_svg(const struct figure *f, struct strbuf *out);
/* As PDF bytes appended to out (the fonts' subsets embedded). */
int rep_fig_pdf(const struct figure *f, struct strbuf *out);
/* As PNG bytes at 300 dpi (2100 pixels wide for a double column, 1050 for
 * a single one), the resolution recorded in a pHYs chunk. */
int rep_fig_png(const struct figure *f, struct strbuf *out);
/* All three, one after the other (cairo in one thread: figure_out.c);
 * rc[0..2] are rep_fig_svg's, rep_fig_pdf's and rep_fig_png's. */
void rep_fig_all(const struct figure *f, struct strbuf *svg, struct strbuf *pdf, struct strbuf *png,
	     int rc[3]);

/* The number of distinct styles before they repeat. */
#define FIG_NSTYLES 12
/* PNG resolution, pixels per inch. */
#define FIG_PNG_DPI 300

#endif
