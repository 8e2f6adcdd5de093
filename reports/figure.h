/*
 * Figures of a report, drawn with cairo: one description (struct figure)
 * renders to an SVG document in memory (inlined into report.html) and to
 * standalone SVG and PDF files for papers (figures/). Three kinds:
 *
 *   FIG_BARS    bars with 95% interval whiskers, grouped (by layout)
 *   FIG_LINES   series of points joined by lines, with whiskers, against
 *               a numeric factor (position, cycle, fill level)
 *   FIG_POINTS  scatter without lines (drift along the sequence, per-file
 *               rates); optional fitted curves as line-only series
 *   FIG_MAP     partition maps to scale: one row per layout (bar.group),
 *               a segment per partition from bar.lo to bar.hi in bytes
 *
 * Every series and bar style differs in marker shape, dash pattern or
 * hatching as well as colour, so a greyscale print keeps them apart.
 */
#ifndef RIG_REPORTS_FIGURE_H
#define RIG_REPORTS_FIGURE_H

#include <stddef.h>

struct strbuf;

enum fig_kind { FIG_BARS, FIG_LINES, FIG_POINTS, FIG_MAP };

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
	const char *xlabel, *ylabel;  /* with units: "throughput (MB/s, 10^6 B/s)" */
	int xlog;               /* logarithmic x axis (decades) */
	int xbytes;             /* x values are bytes: ticks read 1 MB, 10 MB, ... */
	int xint;               /* integer x ticks only (position, cycle, repetition) */
	int yzero;              /* the y axis starts at 0 */
	struct fig_series *series;
	size_t nseries, aseries;
	struct fig_bar *bars;
	size_t nbars, abars;
	double width, height;   /* points; 0: 640 x 360 */
};

/* Builders; strings are not copied and must outlive the figure. */
struct fig_series *fig_add_series(struct figure *f, const char *name, int style);
void fig_add_point(struct fig_series *s, double x, double y, double lo, double hi);
void fig_add_bar(struct figure *f, const char *group, const char *label, double y,
		 double lo, double hi, int style);
void fig_release(struct figure *f);

/* The figure as an SVG document appended to out. 0, or -1 if cairo failed. */
int fig_svg(const struct figure *f, struct strbuf *out);
/* As PDF bytes appended to out. */
int fig_pdf(const struct figure *f, struct strbuf *out);
/* As PNG bytes (scale 2: 1280 x 720 for the default size). */
int fig_png(const struct figure *f, struct strbuf *out);

/* The number of distinct styles before they repeat. */
#define FIG_NSTYLES 8

#endif
