/*
 * The surfaces of a figure (see figure.h): SVG and PDF written by cairo
 * into a strbuf through its stream callbacks, PNG rasterized by cairo and
 * written by libpng. Callers put the bytes where they belong (a
 * crash-safe file, or the HTML page). The drawing itself is figure.c's.
 */
#include "reports/figure_int.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"

/* --- surfaces --- */

static cairo_status_t to_strbuf(void *closure, const unsigned char *data, unsigned int len)
{
	sb_add(closure, data, len);
	return CAIRO_STATUS_SUCCESS;
}

/* f's width and height in points, measured on a scratch surface. 0, or
 * -1 if cairo failed. */
static int measure(const struct figure *f, double *w, double *h)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
	cairo_t *cr = cairo_create(s);
	rep_fig_setup_text(cr);
	rep_fig_measure(cr, f, w, h);
	int ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
	cairo_destroy(cr);
	cairo_surface_destroy(s);
	return ok ? 0 : -1;
}

static void png_to_strbuf(png_structp png, png_bytep data, size_t len)
{
	sb_add(png_get_io_ptr(png), data, len);
}

static void png_no_flush(png_structp png)
{
	(void)png;
}

/*
 * The image as an RGB PNG with its resolution (FIG_PNG_DPI, in a pHYs
 * chunk, so word processors and LaTeX size it right). Written with libpng
 * rather than cairo's writer, which uses the default compression and
 * adaptive filters: on a figure (flat colour, mostly white) zlib level 1
 * without filters is about as small and much faster, and encoding was
 * most of a figure's cost (bench/README.md).
 */
static int write_png(cairo_surface_t *img, struct strbuf *out)
{
	cairo_surface_flush(img);
	int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
	int stride = cairo_image_surface_get_stride(img);
	const unsigned char *data = cairo_image_surface_get_data(img);
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	if (!data || !info) {
		png_destroy_write_struct(&png, NULL);
		return -1;
	}
	unsigned char *row = xmalloc((size_t)w * 3);
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		free(row);
		return -1;
	}
	png_set_write_fn(png, out, png_to_strbuf, png_no_flush);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_uint_32 ppm = (png_uint_32)lround(FIG_PNG_DPI / 0.0254);
	png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
	png_set_compression_level(png, 1);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
	png_write_info(png, info);
	for (int y = 0; y < h; y++) {
		/* CAIRO_FORMAT_RGB24: a native-endian 32-bit xRGB word a pixel. */
		const uint32_t *px = (const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride);
		for (int x = 0; x < w; x++) {
			row[3 * x] = (unsigned char)(px[x] >> 16);
			row[3 * x + 1] = (unsigned char)(px[x] >> 8);
			row[3 * x + 2] = (unsigned char)px[x];
		}
		png_write_row(png, row);
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	return 0;
}

enum surf { S_SVG, S_PDF, S_PNG };

/* The surface of kind for f, writing into out; NULL if cairo failed. */
static cairo_surface_t *open_surface(const struct figure *f, struct strbuf *out, enum surf kind,
				     double *W, double *H)
{
	if (measure(f, W, H) < 0)
		return NULL;
	cairo_surface_t *s;
	if (kind == S_SVG) {
		s = cairo_svg_surface_create_for_stream(to_strbuf, out, *W, *H);
		cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
	} else if (kind == S_PDF) {
		s = cairo_pdf_surface_create_for_stream(to_strbuf, out, *W, *H);
		cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "rig");
	} else {
		double scale = FIG_PNG_DPI / 72.0;
		s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)lround(*W * scale),
					       (int)lround(*H * scale));
	}
	return s;
}

/* Draw f on s (from open_surface), finish and destroy it. */
static int draw_surface(const struct figure *f, cairo_surface_t *s, struct strbuf *out, enum surf kind,
			double W, double H)
{
	if (!s)
		return -1;
	cairo_t *cr = cairo_create(s);
	if (kind == S_PNG)
		cairo_scale(cr, FIG_PNG_DPI / 72.0, FIG_PNG_DPI / 72.0);
	rep_fig_setup_text(cr);
	rep_fig_draw(cr, f, W, H);
	int ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
	cairo_destroy(cr);
	if (kind == S_PNG && ok)
		ok = write_png(s, out) == 0;
	cairo_surface_finish(s);
	ok = ok && cairo_surface_status(s) == CAIRO_STATUS_SUCCESS;
	cairo_surface_destroy(s);
	return ok ? 0 : -1;
}

static int render(const struct figure *f, struct strbuf *out, enum surf kind)
{
	double W, H;
	cairo_surface_t *s = open_surface(f, out, kind, &W, &H);
	return draw_surface(f, s, out, kind, W, H);
}

int rep_fig_svg(const struct figure *f, struct strbuf *out)
{
	return render(f, out, S_SVG);
}

int rep_fig_pdf(const struct figure *f, struct strbuf *out)
{
	return render(f, out, S_PDF);
}

int rep_fig_png(const struct figure *f, struct strbuf *out)
{
	return render(f, out, S_PNG);
}

/*
 * The three surfaces of a figure, one after the other. Drawing the PDF and
 * the PNG in threads beside the SVG (tried for the million-sample report,
 * bench/README.md) made cairo 1.16 abort in CI: "cairo_scaled_font_destroy:
 * Assertion `! scaled_font->cache_frozen' failed", two threads using the
 * same scaled font from cairo's global cache. The files stay in two
 * workers (report.c); only cairo is kept to one thread.
 */
void rep_fig_all(const struct figure *f, struct strbuf *svg, struct strbuf *pdf, struct strbuf *png,
	     int rc[3])
{
	rc[0] = render(f, svg, S_SVG);
	rc[1] = render(f, pdf, S_PDF);
	rc[2] = render(f, png, S_PNG);
}
