/*
 * Tests of the figures (reports/figure.c) and of how the reports use them
 * (reports/html_util.c and its callers), read back from what they write:
 * the SVG is parsed into its paths (style and coordinates), so the checks
 * are about the drawing, not the code that made it.
 *
 *   - twelve series keep twelve colours, dash patterns and marker shapes;
 *     rep_html_style_of, rep_html_pair_style and rep_fig_add_series keep series apart;
 *   - with yzero, whiskers and bars stop at the y of 0, which is the
 *     bottom of the axis (found from the data marks' own positions);
 *   - a fitted curve that runs off the data stays inside the plot area;
 *   - PNG at 300 dpi (the header's width, the pHYs chunk), PDF with its
 *     fonts embedded (pdffonts), tick labels with thousands grouped and SI
 *     byte prefixes (pdftotext), when poppler-utils is installed;
 *   - a whole report: every figure as .svg, .pdf, .png and .txt, captions
 *     as plain text, p-values as clauses, the drift figure only for groups
 *     of three results or more, the per-file figure of a sweep with its
 *     twelve series apart.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "report_util.h"
#include "reports/figure.h"
#include "reports/figure_int.h"
#include "reports/html_int.h"
#include "reports/report.h"
#include "store/store.h"
#include "test.h"

/* --- the SVG's paths --- */

struct path {
	char fill[40], stroke[40], dash[64];
	char cmds[64];                 /* the command letters, in order */
	double *xy;                    /* coordinate pairs */
	size_t n;
	double x0, y0, x1, y1;         /* bounding box of the coordinates */
};

struct svg {
	struct path *p;
	size_t n, alloc;
};

static void style_prop(const char *style, const char *key, char *out, size_t n)
{
	out[0] = 0;
	size_t kl = strlen(key);
	for (const char *s = style; (s = strstr(s, key)); s += kl) {
		if ((s != style && s[-1] != ';') || s[kl] != ':')
			continue;
		const char *v = s + kl + 1, *e = strchr(v, ';');
		size_t len = e ? (size_t)(e - v) : strlen(v);
		if (len >= n)
			len = n - 1;
		memcpy(out, v, len);
		out[len] = 0;
		return;
	}
}

/* Every <path style=... d=...> of the drawing (not the glyphs in <defs>). */
static void svg_parse(const char *doc, struct svg *g)
{
	memset(g, 0, sizeof(*g));
	const char *p = strstr(doc, "<g id=\"surface");
	for (p = p ? strstr(p, "<path style=\"") : NULL; p; p = strstr(p + 1, "<path style=\"")) {
		const char *st = p + 13, *se = strchr(st, '"');
		const char *d = se ? strstr(se, " d=\"") : NULL;
		if (!d)
			break;
		d += 4;
		const char *de = strchr(d, '"');
		char *style = xstrndup(st, (size_t)(se - st));
		XGROW(g->p, g->n + 1, g->alloc);
		struct path *q = &g->p[g->n++];
		memset(q, 0, sizeof(*q));
		style_prop(style, "fill", q->fill, sizeof(q->fill));
		style_prop(style, "stroke", q->stroke, sizeof(q->stroke));
		style_prop(style, "stroke-dasharray", q->dash, sizeof(q->dash));
		free(style);
		size_t alloc = 0, nc = 0, nv = 0;
		double pend = 0;
		q->x0 = q->y0 = INFINITY;
		q->x1 = q->y1 = -INFINITY;
		for (const char *s = d; s < de;) {
			if (*s == ' ') {
				s++;
			} else if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')) {
				if (nc + 1 < sizeof(q->cmds))
					q->cmds[nc++] = *s;
				s++;
			} else {
				char *end;
				double v = strtod(s, &end);
				if (end == s)
					break;
				s = end;
				if (nv++ % 2 == 0) {
					pend = v;
					continue;
				}
				XGROW(q->xy, 2 * (q->n + 1), alloc);
				q->xy[2 * q->n] = pend;
				q->xy[2 * q->n + 1] = v;
				q->n++;
				q->x0 = fmin(q->x0, pend);
				q->x1 = fmax(q->x1, pend);
				q->y0 = fmin(q->y0, v);
				q->y1 = fmax(q->y1, v);
			}
		}
		p = de;
	}
}

static void svg_free(struct svg *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->p[i].xy);
	free(g->p);
}

static const char BLACK[] = "rgb(0%,0%,0%)", WHITE[] = "rgb(100%,100%,100%)",
		  WHISKER[] = "rgb(10%,10%,10%)", GRID[] = "rgb(85%,85%,85%)";

static int is_neutral(const char *c)
{
	return !*c || !strcmp(c, "none") || !strcmp(c, BLACK) || !strcmp(c, WHITE) ||
	       !strcmp(c, WHISKER) || !strcmp(c, GRID);
}

/* A marker: small, drawn in a series colour (filled, or open, or strokes). */
static const char *marker_colour(const struct path *q)
{
	if (q->x1 - q->x0 > 9 || q->y1 - q->y0 > 9 || !q->n)
		return NULL;
	if (!is_neutral(q->fill))
		return q->fill;
	if (!is_neutral(q->stroke))
		return q->stroke;
	return NULL;
}

/* A data line: a stroke in a series colour, longer than a marker. */
static int is_line(const struct path *q)
{
	return !strcmp(q->fill, "none") && !is_neutral(q->stroke) && !marker_colour(q);
}

/* The frame: "M x0 y0 L x0 y1 L x1 y1" in black. */
static int find_frame(const struct svg *g, double *x0, double *y0, double *x1, double *y1)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct path *q = &g->p[i];
		if (strcmp(q->stroke, BLACK) || strcmp(q->fill, "none") || q->n != 3 ||
		    strcmp(q->cmds, "MLL") || q->xy[0] != q->xy[2] || q->xy[3] != q->xy[5])
			continue;
		*x0 = q->xy[0];
		*y0 = q->xy[1];
		*y1 = q->xy[3];
		*x1 = q->xy[4];
		return 1;
	}
	return 0;
}

/* Two markers have the same shape: the same commands and the same
 * coordinates relative to their boxes. (Not the paint: cairo may write a
 * marker's fill and its outline as two paths.) */
static int same_shape(const struct path *a, const struct path *b)
{
	if (strcmp(a->cmds, b->cmds) || a->n != b->n)
		return 0;
	double sa = fmax(a->x1 - a->x0, a->y1 - a->y0), sb = fmax(b->x1 - b->x0, b->y1 - b->y0);
	for (size_t i = 0; i < a->n; i++) {
		double ax = (a->xy[2 * i] - a->x0) / sa, ay = (a->xy[2 * i + 1] - a->y0) / sa;
		double bx = (b->xy[2 * i] - b->x0) / sb, by = (b->xy[2 * i + 1] - b->y0) / sb;
		if (fabs(ax - bx) > 0.04 || fabs(ay - by) > 0.04)
			return 0;
	}
	return 1;
}

static char *svg_of(const struct figure *f)
{
	struct strbuf sb = STRBUF_INIT;
	CU_ASSERT_EQUAL(rep_fig_svg(f, &sb), 0);
	return sb_detach(&sb);
}

/*
 * The series of a figure as its SVG shows them: for each series colour,
 * one marker shape and one dash pattern. 1 when n series have n colours,
 * n shapes and n dash patterns, pairwise different; the reason otherwise.
 */
static int series_apart(const char *doc, size_t want, int lines, struct strbuf *why)
{
	struct svg g;
	svg_parse(doc, &g);
	const char *colour[64];
	const struct path *shape[64];
	const char *dash[64];
	size_t n = 0;
	int ok = 1;
	for (size_t i = 0; i < g.n && ok; i++) {
		const struct path *q = &g.p[i];
		const char *c = marker_colour(q);
		if (!c)
			continue;
		size_t k = 0;
		while (k < n && strcmp(colour[k], c))
			k++;
		if (k == n && n < 64) {
			colour[n] = c;
			shape[n] = q;
			dash[n++] = NULL;
		} else if (k < n && !same_shape(shape[k], q)) {
			sb_addf(why, "colour %s has two marker shapes", c);
			ok = 0;
		}
	}
	for (size_t i = 0; i < g.n && ok && lines; i++) {
		const struct path *q = &g.p[i];
		if (!is_line(q))
			continue;
		size_t k = 0;
		while (k < n && strcmp(colour[k], q->stroke))
			k++;
		if (k == n) {
			sb_addf(why, "a line in %s, a colour no marker has", q->stroke);
			ok = 0;
		} else if (dash[k] && strcmp(dash[k], q->dash)) {
			sb_addf(why, "colour %s has two dash patterns", q->stroke);
			ok = 0;
		} else {
			dash[k] = q->dash;
		}
	}
	if (ok && n != want) {
		sb_addf(why, "%zu series colours, not %zu", n, want);
		ok = 0;
	}
	for (size_t a = 0; a < n && ok; a++)
		for (size_t b = a + 1; b < n && ok; b++) {
			if (same_shape(shape[a], shape[b])) {
				sb_addf(why, "series %zu and %zu have one marker shape", a, b);
				ok = 0;
			}
			if (lines && (!dash[a] || !dash[b] || !strcmp(dash[a], dash[b]))) {
				sb_addf(why, "series %zu and %zu have one dash pattern (or none drawn)", a, b);
				ok = 0;
			}
		}
	svg_free(&g);
	return ok;
}

/* --- figures --- */

static void test_twelve_series_apart(void)
{
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_LINES;
	f.xint = 1;
	f.xlabel = "cycle";
	f.ylabel = "rate (MB/s)";
	static const char *const names[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l" };
	for (int i = 0; i < FIG_NSTYLES; i++) {
		struct fig_series *s = rep_fig_add_series(&f, names[i], i);
		for (int x = 1; x <= 3; x++)
			rep_fig_add_point(s, x, 10 + 5 * i + x, NAN, NAN);
	}
	char *doc = svg_of(&f);
	struct strbuf why = STRBUF_INIT;
	int ok = series_apart(doc, FIG_NSTYLES, 1, &why);
	CU_ASSERT_TRUE(ok);
	if (!ok)
		fprintf(stderr, "\ntwelve styles: %s\n", why.buf);
	free(doc);
	rep_fig_release(&f);

	/* Ten series asking for one style (a volume over ten sweep values) are
	 * given ten; a fitted curve keeps its series' style. */
	memset(&f, 0, sizeof(f));
	f.kind = FIG_POINTS;
	int seen = 0;
	for (int i = 0; i < 10; i++) {
		struct fig_series *s = rep_fig_add_series(&f, names[i], 0);
		rep_fig_add_point(s, i, i, NAN, NAN);
		seen |= 1 << s->style;
		struct fig_series *fit = rep_fig_add_series(&f, NULL, s->style);
		CU_ASSERT_EQUAL(fit->style, f.series[f.nseries - 2].style);
	}
	CU_ASSERT_EQUAL(seen, (1 << 10) - 1);
	doc = svg_of(&f);
	sb_reset(&why);
	ok = series_apart(doc, 10, 0, &why);
	CU_ASSERT_TRUE(ok);
	if (!ok)
		fprintf(stderr, "\nten series of one style: %s\n", why.buf);
	free(doc);
	rep_fig_release(&f);
	sb_release(&why);
}

static void test_page_styles_apart(void)
{
	/* Six volumes in each of two layouts (a ten-partition disk has ten):
	 * twelve pairs, twelve styles; twelve volume names, twelve styles. */
	static const char *const vn[12] = { "v0", "v1", "v2", "v3", "v4", "v5",
					    "v6", "v7", "v8", "v9", "v10", "v11" };
	static const char *const ln[2] = { "first", "second" };
	struct rd_volume vols[12];
	memset(vols, 0, sizeof(vols));
	for (int i = 0; i < 12; i++) {
		vols[i].layout = ln[i / 6];
		vols[i].layout_index = i / 6;
		vols[i].name = vn[i % 6];
	}
	struct rdata d;
	memset(&d, 0, sizeof(d));
	d.vols = vols;
	d.nvols = 12;
	int used = 0;
	for (int i = 0; i < 12; i++)
		used |= 1 << rep_html_pair_style(&d, vols[i].name, vols[i].layout);
	CU_ASSERT_EQUAL(used, (1 << 12) - 1);
	for (int i = 0; i < 12; i++) {
		vols[i].name = vn[i];
		vols[i].layout = ln[0];
		vols[i].layout_index = 0;
	}
	used = 0;
	for (int i = 0; i < 12; i++)
		used |= 1 << rep_html_style_of(&d, vn[i], ln[0]);
	CU_ASSERT_EQUAL(used, (1 << 12) - 1);
}

/* The y of value 0 in a figure whose data marks at 10 and 20 are at y10
 * and y20: the scale is linear. */
static double zero_at(double y10, double y20)
{
	return y10 + (y10 - y20);
}

static void test_yzero_clips_whiskers(void)
{
	/* Lines: a whisker from -5 to 25 around 10. */
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_LINES;
	f.yzero = 1;
	f.xint = 1;
	struct fig_series *s = rep_fig_add_series(&f, "ext4", 0);
	rep_fig_add_point(s, 1, 10, -5, 25);
	rep_fig_add_point(s, 2, 20, 15, 25);
	rep_fig_add_point(s, 3, 30, 25, 35);
	CU_ASSERT_EQUAL(rep_fig_clipped(&f), 1);
	char *doc = svg_of(&f);
	struct svg g;
	svg_parse(doc, &g);
	double fx0 = 0, fy0 = 0, fx1 = 0, fy1 = 0;
	CU_ASSERT_TRUE_FATAL(find_frame(&g, &fx0, &fy0, &fx1, &fy1));
	double ys[3];
	size_t nm = 0, nw = 0;
	for (size_t i = 0; i < g.n; i++) {
		const struct path *q = &g.p[i];
		/* Data markers (circles, style 0) inside the frame, by x. */
		if (marker_colour(q) && (q->y0 + q->y1) / 2 < fy1 && nm < 3)
			ys[nm++] = (q->y0 + q->y1) / 2;
	}
	CU_ASSERT_EQUAL_FATAL(nm, 3);
	double y0 = zero_at(ys[0], ys[1]);
	/* The axis ends at 0, and no whisker goes below it. */
	CU_ASSERT_DOUBLE_EQUAL(fy1, y0, 0.01);
	for (size_t i = 0; i < g.n; i++) {
		const struct path *q = &g.p[i];
		if (strcmp(q->stroke, WHISKER))
			continue;
		nw++;
		CU_ASSERT_TRUE(q->y1 <= y0 + 0.01);
		if (q->y1 > y0 + 0.01)
			fprintf(stderr, "\nwhisker to y %.2f, below the zero line at %.2f\n", q->y1, y0);
	}
	CU_ASSERT_EQUAL(nw, 3);
	svg_free(&g);
	free(doc);
	rep_fig_release(&f);

	/* Bars: the same; bars stand on the zero line. */
	memset(&f, 0, sizeof(f));
	f.kind = FIG_BARS;
	f.yzero = 1;
	rep_fig_add_bar(&f, NULL, "ext4", 10, -5, 25, 0);
	rep_fig_add_bar(&f, NULL, "xfs", 20, 15, 25, 1);
	CU_ASSERT_EQUAL(rep_fig_clipped(&f), 1);
	doc = svg_of(&f);
	svg_parse(doc, &g);
	CU_ASSERT_TRUE_FATAL(find_frame(&g, &fx0, &fy0, &fx1, &fy1));
	double tops[2], bottoms[2];
	size_t nb = 0;
	nw = 0;
	for (size_t i = 0; i < g.n; i++) {
		const struct path *q = &g.p[i];
		if (!is_neutral(q->fill) && !strcmp(q->cmds, "MLLLZM") && nb < 2) {
			tops[nb] = q->y0;
			bottoms[nb++] = q->y1;
		}
	}
	CU_ASSERT_EQUAL_FATAL(nb, 2);
	y0 = zero_at(tops[0], tops[1]);
	CU_ASSERT_DOUBLE_EQUAL(fy1, y0, 0.01);
	CU_ASSERT_DOUBLE_EQUAL(bottoms[0], y0, 0.01);
	CU_ASSERT_DOUBLE_EQUAL(bottoms[1], y0, 0.01);
	for (size_t i = 0; i < g.n; i++) {
		const struct path *q = &g.p[i];
		if (strcmp(q->stroke, WHISKER))
			continue;
		nw++;
		CU_ASSERT_TRUE(q->y1 <= y0 + 0.01);
	}
	CU_ASSERT_EQUAL(nw, 2);
	svg_free(&g);
	free(doc);

	/* Nothing below 0: nothing clipped. A value below 0: yzero does not
	 * apply (the quantity can be negative), nothing is cut. */
	f.bars[0].lo = 1;
	CU_ASSERT_EQUAL(rep_fig_clipped(&f), 0);
	f.bars[0].lo = -5;
	f.bars[1].y = -1;
	CU_ASSERT_EQUAL(rep_fig_clipped(&f), 0);
	rep_fig_release(&f);
}

static void test_fitted_curve_inside(void)
{
	/* Files of 1 to 100 MB at about 100 MB/s with 2 ms overhead; a fit of
	 * 90 MB/s with -3 ms overhead: at 1 MB its rate is 123 MB/s, above the
	 * axis, and below 0.27 MB its time is negative (no rate). */
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_POINTS;
	f.xlog = 1;
	f.xbytes = 1;
	f.yzero = 1;
	struct fig_series *s = rep_fig_add_series(&f, "ext4", 0);
	for (int i = 0; i <= 20; i++) {
		double x = 1e6 * pow(100, i / 20.0);
		rep_fig_add_point(s, x, x / (0.002 + x / 1e8) / 1e6, NAN, NAN);
	}
	struct fig_series *fit = rep_fig_add_series(&f, NULL, 5);
	fit->line_only = 1;
	for (int k = 0; k <= 60; k++) {
		double x = 1e5 * pow(1e8 / 1e5, k / 60.0);
		double secs = -0.003 + x / 9e7;
		rep_fig_add_point(fit, x, secs > 0 ? x / secs / 1e6 : NAN, NAN, NAN);
	}
	char *doc = svg_of(&f);
	struct svg g;
	svg_parse(doc, &g);
	double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
	CU_ASSERT_TRUE_FATAL(find_frame(&g, &x0, &y0, &x1, &y1));
	size_t lines = 0, outside = 0;
	for (size_t i = 0; i < g.n; i++) {
		const struct path *q = &g.p[i];
		if (!is_line(q))
			continue;
		lines++;
		for (size_t k = 0; k < q->n; k++)
			if (q->xy[2 * k] < x0 - 0.01 || q->xy[2 * k] > x1 + 0.01 ||
			    q->xy[2 * k + 1] < y0 - 0.01 || q->xy[2 * k + 1] > y1 + 0.01)
				outside++;
	}
	CU_ASSERT_EQUAL(lines, 1);
	CU_ASSERT_EQUAL(outside, 0);
	if (outside)
		fprintf(stderr, "\n%zu points of the fitted curve off the plot area\n", outside);
	svg_free(&g);
	free(doc);
	rep_fig_release(&f);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Run argv; its stdout, or NULL when it is not installed (said once). */
static char *tool_output(const char *const *argv)
{
	char *out = NULL, *err = NULL;
	int rc = rfx_run(argv, &out, &err);
	free(err);
	if (rc == 127) {
		printf("\nSKIPPED: %s not found (Debian package poppler-utils)\n", argv[0]);
		free(out);
		return NULL;
	}
	CU_ASSERT_EQUAL(rc, 0);
	return out;
}

/* f as dir/fig.pdf; the path (caller frees). */
static char *pdf_file(const struct figure *f, const char *dir)
{
	struct strbuf path = STRBUF_INIT, pdf = STRBUF_INIT;
	sb_addf(&path, "%s/fig.pdf", dir);
	CU_ASSERT_EQUAL(rep_fig_pdf(f, &pdf), 0);
	FILE *fp = fopen(path.buf, "wb");
	CU_ASSERT_PTR_NOT_NULL(fp);
	if (fp) {
		fwrite(pdf.buf, 1, pdf.len, fp);
		fclose(fp);
	}
	sb_release(&pdf);
	return sb_detach(&path);
}

/* The text of f's PDF (pdftotext), or NULL without poppler-utils. */
static char *pdf_text(const struct figure *f, const char *dir)
{
	char *path = pdf_file(f, dir);
	const char *text[] = { "pdftotext", "-raw", path, "-", NULL };
	char *out = tool_output(text);
	free(path);
	return out;
}

static void sample_bars(struct figure *f, enum fig_size size)
{
	memset(f, 0, sizeof(*f));
	f->kind = FIG_BARS;
	f->size = size;
	f->yzero = 1;
	f->ylabel = "operations per second";
	rep_fig_add_bar(f, "first", "ext4", 15000, 14000, 16000, 0);
	rep_fig_add_bar(f, "first", "xfs", 12500, 12000, 13000, 1);
}

static void test_outputs(void)
{
	/* PNG: 300 dpi at 3.5 and 7 in, said in a pHYs chunk. */
	for (int single = 0; single < 2; single++) {
		struct figure f;
		sample_bars(&f, single ? FIG_SINGLE : FIG_DOUBLE);
		struct strbuf png = STRBUF_INIT;
		CU_ASSERT_EQUAL(rep_fig_png(&f, &png), 0);
		const unsigned char *b = (const unsigned char *)png.buf;
		CU_ASSERT_TRUE_FATAL(png.len > 70 && !memcmp(b + 12, "IHDR", 4));
		CU_ASSERT_EQUAL(be32(b + 16), single ? 1050 : 2100);
		CU_ASSERT_TRUE(!memcmp(b + 37, "pHYs", 4) && be32(b + 41) == 11811 && b[49] == 1);
		CU_ASSERT_EQUAL(rep_fig_size_of(&f), single ? FIG_SINGLE : FIG_DOUBLE);
		sb_release(&png);
		/* The SVG is as wide, in points. */
		char *doc = svg_of(&f);
		CU_ASSERT_PTR_NOT_NULL(strstr(doc, single ? "width=\"252pt\"" : "width=\"504pt\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(doc, "viewBox=\"0 0 "));
		free(doc);
		rep_fig_release(&f);
	}

	/* PDF: fonts embedded; tick labels as the page writes numbers. */
	char *dir = test_tmpdir();
	struct figure f;
	sample_bars(&f, FIG_AUTO);
	char *path = pdf_file(&f, dir);
	const char *fonts[] = { "pdffonts", path, NULL };
	char *out = tool_output(fonts);
	if (out) {
		/* A header, a rule, then one line per font. Types and encodings
		 * may be two words ("CID TrueType", "Type 1C"), so "emb" is
		 * found from the right: emb sub uni object-number generation. */
		int nfonts = 0, embedded = 0;
		const char *line = strchr(out, '\n');
		line = line ? strchr(line + 1, '\n') : NULL;
		for (; line && line[1]; line = strchr(line + 1, '\n')) {
			const char *tok[16];
			size_t ntok = 0, len[16];
			for (const char *c = line + 1; *c && *c != '\n';) {
				while (*c == ' ')
					c++;
				if (!*c || *c == '\n')
					break;
				const char *e = c;
				while (*e && *e != ' ' && *e != '\n')
					e++;
				if (ntok < 16) {
					tok[ntok] = c;
					len[ntok++] = (size_t)(e - c);
				}
				c = e;
			}
			if (ntok < 6)
				continue;
			nfonts++;
			embedded += len[ntok - 5] == 3 && !strncmp(tok[ntok - 5], "yes", 3);
		}
		CU_ASSERT_TRUE(nfonts > 0);
		CU_ASSERT_EQUAL(embedded, nfonts);
		if (embedded != nfonts)
			fprintf(stderr, "\npdffonts:\n%s\n", out);
	}
	free(out);
	free(path);
	out = pdf_text(&f, dir);
	rep_fig_release(&f);
	if (out) {
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "15,000"));
		CU_ASSERT_PTR_NULL(strstr(out, "15000"));
		CU_ASSERT_PTR_NULL(strstr(out, "15k"));
	}
	free(out);

	/* A byte axis: SI decades on a log axis, one prefix on a linear one. */
	memset(&f, 0, sizeof(f));
	f.kind = FIG_POINTS;
	f.xlog = 1;
	f.xbytes = 1;
	struct fig_series *s = rep_fig_add_series(&f, "files", 0);
	rep_fig_add_point(s, 2e6, 1, NAN, NAN);
	rep_fig_add_point(s, 5e7, 2, NAN, NAN);
	rep_fig_add_point(s, -1, -2500, NAN, NAN); /* not drawn on a log axis */
	rep_fig_add_point(s, 3e6, -2000, NAN, NAN);
	out = pdf_text(&f, dir);
	rep_fig_release(&f);
	if (out) {
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 MB"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "100 MB"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "\xe2\x88\x92" "2,000")); /* U+2212 */
	}
	free(out);
	memset(&f, 0, sizeof(f));
	f.kind = FIG_MAP;
	rep_fig_add_bar(&f, "disk", "1 ext4", 0, 0, 1.07e9, 0);
	rep_fig_add_bar(&f, "disk", "2 xfs", 0, 1.07e9, 2.14e9, 1);
	out = pdf_text(&f, dir);
	rep_fig_release(&f);
	if (out) {
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "0.5 GB"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "1.5 GB"));
		CU_ASSERT_PTR_NULL(strstr(out, "500 MB"));
	}
	free(out);
	test_rmtree(dir);
	free(dir);
}

static void test_text_helpers(void)
{
	struct strbuf sb = STRBUF_INIT;
	rep_html_p_clause(&sb, 0.0004);
	CU_ASSERT_STRING_EQUAL(sb.buf, "p &lt; 0.001");
	sb_reset(&sb);
	rep_html_p_clause(&sb, 0.0123);
	CU_ASSERT_STRING_EQUAL(sb.buf, "p = 0.012");
	sb_reset(&sb);
	rep_html_p_clause(&sb, 0.0042);
	CU_ASSERT_STRING_EQUAL(sb.buf, "p = 0.0042");
	sb_reset(&sb);
	rep_html_p_clause(&sb, NAN);
	CU_ASSERT_STRING_EQUAL(sb.buf, "no p-value");
	sb_reset(&sb);
	rep_html_p_value(&sb, 0.0004);
	CU_ASSERT_STRING_EQUAL(sb.buf, "&lt; 0.001");
	sb_reset(&sb);
	rep_html_plain(&sb, "<b>Mean</b> rate; n &ge; 2, p &lt; 0.001 &amp; 10<sup>6</sup> B, every "
		     "5<sup>th</sup>&#8201;&#x2014;&nbsp;<i>x</i> &bogus; a<br>b");
	CU_ASSERT_STRING_EQUAL(sb.buf, "Mean rate; n \xe2\x89\xa5 2, p < 0.001 & 10\xe2\x81\xb6 B, every "
				       "5th\xe2\x80\x89\xe2\x80\x94\xc2\xa0x &bogus; a b");
	sb_release(&sb);
}

/* --- a whole report --- */

struct report {
	char *dir;
	char *html;
};

static void report_make(struct report *r, const struct fx_opts *o)
{
	r->dir = test_tmpdir();
	CU_ASSERT_EQUAL_FATAL(rfx_make_store(r->dir, o), 0);
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", r->dir);
	struct store *s = store_open(p.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(rep_write(s, r->dir, &err), 0);
	store_close(s);
	sb_reset(&p);
	sb_addf(&p, "%s/report.html", r->dir);
	r->html = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->html);
	sb_release(&p);
	sb_release(&err);
}

static char *report_file(const struct report *r, const char *name, size_t *len)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/figures/%s", r->dir, name);
	char *t = test_read_file(p.buf, len);
	sb_release(&p);
	return t;
}

static void report_free(struct report *r)
{
	test_rmtree(r->dir);
	free(r->dir);
	free(r->html);
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Every figure of the page has its four files; returns how many figures. */
static int figure_files(const struct report *r)
{
	int n = 0;
	for (const char *p = strstr(r->html, "<a href=\"figures/"); p;
	     p = strstr(p + 1, "<a href=\"figures/")) {
		const char *name = p + 17, *e = strstr(name, ".svg\"");
		const char *q = strchr(name, '"');
		if (!e || e > q)
			continue; /* the other links of the same figure */
		n++;
		char *base = xstrndup(name, (size_t)(e - name));
		static const char *const ext[] = { "svg", "pdf", "png", "txt" };
		for (int k = 0; k < 4; k++) {
			struct strbuf fn = STRBUF_INIT;
			sb_addf(&fn, "%s.%s", base, ext[k]);
			size_t len = 0;
			char *t = report_file(r, fn.buf, &len);
			CU_ASSERT_TRUE(t && len > 0);
			if (!t)
				fprintf(stderr, "\nfigures/%s is missing\n", fn.buf);
			if (t && k == 0)
				CU_ASSERT_PTR_NOT_NULL(strstr(t, "<svg"));
			if (t && k == 1)
				CU_ASSERT_EQUAL(strncmp(t, "%PDF", 4), 0);
			if (t && k == 2)
				CU_ASSERT_TRUE(len > 24 && !memcmp(t + 1, "PNG", 3) &&
					       (be32((unsigned char *)t + 16) == 1050 ||
						be32((unsigned char *)t + 16) == 2100));
			if (t && k == 3) {
				/* Plain text: no tags, no entities, one line. */
				int tag = 0;
				for (const char *c = t; *c; c++)
					tag |= *c == '<' && (c[1] == '/' || (c[1] >= 'a' && c[1] <= 'z'));
				CU_ASSERT_FALSE(tag);
				CU_ASSERT_PTR_NULL(strstr(t, "&lt;"));
				CU_ASSERT_PTR_NULL(strstr(t, "&amp;"));
				CU_ASSERT_PTR_NULL(strstr(t, "&ge;"));
				CU_ASSERT_PTR_NULL(strstr(t, "&#"));
				CU_ASSERT_TRUE(len > 20 && t[len - 1] == '\n' && !memchr(t, '\n', len - 1));
			}
			free(t);
			sb_release(&fn);
		}
		free(base);
	}
	return n;
}

static void test_report_figures(void)
{
	struct fx_opts o = { .reps = 4, .seed = 11, .sweep_files = 1 };
	struct report r;
	report_make(&r, &o);
	int n = figure_files(&r);
	CU_ASSERT_EQUAL(n, count(r.html, "<figure"));
	CU_ASSERT_TRUE(n >= 8); /* 4 steps, 3 file sets, drift, partition map */
	/* p-values are clauses: "p < 0.001", never "p = < 0.001". */
	CU_ASSERT_PTR_NOT_NULL(strstr(r.html, "p &lt; 0.001"));
	CU_ASSERT_PTR_NULL(strstr(r.html, "p = <"));
	CU_ASSERT_PTR_NULL(strstr(r.html, "p = &lt;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.html, "class=\"fig-single\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.html, "class=\"fig-double\""));
	/* The caption as text: superscripts, no markup. */
	char *txt = report_file(&r, "step-1-write-rate.txt", NULL);
	CU_ASSERT_TRUE(txt && strstr(txt, "MB/s = 10\xe2\x81\xb6 bytes per second."));
	free(txt);
	/* The sweep's per-file figure: 3 values x 2 volumes x 2 layouts, each
	 * its own colour, marker and (for the fits) dash pattern. */
	char *svg = report_file(&r, "step-4.sweep.1-null-files.svg", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	struct strbuf why = STRBUF_INIT;
	int ok = series_apart(svg, 12, 1, &why);
	CU_ASSERT_TRUE(ok);
	if (!ok)
		fprintf(stderr, "\nthe sweep's per-file figure: %s\n", why.buf);
	sb_release(&why);
	free(svg);
	/* The drift figure: every group has four results. */
	svg = report_file(&r, "drift.svg", NULL);
	CU_ASSERT_PTR_NOT_NULL(svg);
	free(svg);
	report_free(&r);

	/* Two repetitions: no group has three results, so no drift figure,
	 * a sentence instead. */
	struct fx_opts o2 = { .reps = 2, .seed = 3 };
	report_make(&r, &o2);
	CU_ASSERT_EQUAL(figure_files(&r), count(r.html, "<figure"));
	svg = report_file(&r, "drift.svg", NULL);
	CU_ASSERT_PTR_NULL(svg);
	free(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.html, "No drift figure: it needs 3 results or more of a group"));
	CU_ASSERT_PTR_NULL(strstr(r.html, "p = <"));
	CU_ASSERT_PTR_NULL(strstr(r.html, "p = &lt;"));
	report_free(&r);
}

/* An integer axis ticks whole values even when the points sit beside them
 * (the interaction plot sets its lines a little apart). */
static void test_integer_axis_whole_ticks(void)
{
	struct fig_axis a;
	rep_fig_axis_linear(&a, 0.97, 2.03, 0, 1);
	CU_ASSERT_EQUAL(a.nticks, 2);
	CU_ASSERT_DOUBLE_EQUAL(a.ticks[0], 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(a.ticks[1], 2, 1e-12);
	CU_ASSERT_TRUE(a.lo < 0.97 && a.hi > 2.03);
	rep_fig_axis_linear(&a, 1, 10, 0, 1);
	CU_ASSERT_EQUAL(a.nticks, 10);
	CU_ASSERT_DOUBLE_EQUAL(a.ticks[0], 1, 1e-12);
}

void register_figure_tests(void)
{
	CU_pSuite s = test_suite("figures (reports/figure.c and their use in reports)");
	test_add(s, "twelve series: twelve colours, markers and dash patterns", test_twelve_series_apart);
	test_add(s, "an integer axis ticks whole values", test_integer_axis_whole_ticks);
	test_add(s, "rep_html_pair_style and rep_html_style_of: twelve pairs, twelve volumes apart",
		 test_page_styles_apart);
	test_add(s, "yzero: whiskers and bars stop at the zero line, the axis at 0",
		 test_yzero_clips_whiskers);
	test_add(s, "a fitted curve with negative overhead stays inside the plot", test_fitted_curve_inside);
	test_add(s, "PNG at 300 dpi, PDF fonts embedded, tick labels grouped", test_outputs);
	test_add(s, "p-value clauses; captions as plain text", test_text_helpers);
	test_add(s, "a report: four files per figure, p clauses, drift only with 3 results",
		 test_report_figures);
}
