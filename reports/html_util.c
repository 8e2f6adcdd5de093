/*
 * What the HTML writers share: escaping, number formats, the page's CSS,
 * and putting a figure on the page and into figures/ (see html_int.h).
 *
 * The page is one file with no scripts and no network: inline CSS with the
 * system font stack, inline SVG figures. Cairo's SVG names its glyphs and
 * clip paths "glyph0-1", "clip1", ... in every document, so each inlined
 * figure's ids get a prefix ("f3-"); otherwise the second figure would
 * draw with the first one's glyphs.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "reports/html_int.h"
#include "reports/report_out.h"
#include "rig/util/xalloc.h"

void h_textn(struct strbuf *h, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	while (p < end) {
		unsigned c = *p;
		if (c < 0x80) {
			switch (c) {
			case '&': sb_adds(h, "&amp;"); break;
			case '<': sb_adds(h, "&lt;"); break;
			case '>': sb_adds(h, "&gt;"); break;
			case '"': sb_adds(h, "&quot;"); break;
			case '\'': sb_adds(h, "&#39;"); break;
			default:
				if (c < 0x20 && c != '\n' && c != '\t')
					sb_adds(h, c == '\r' ? "" : "\xef\xbf\xbd");
				else if (c == 0x7f)
					sb_adds(h, "\xef\xbf\xbd");
				else
					sb_addch(h, (char)c);
			}
			p++;
			continue;
		}
		size_t n = rd_utf8_len(p, (size_t)(end - p));
		if (n) {
			sb_add(h, p, n);
			p += n;
		} else {
			sb_adds(h, "\xef\xbf\xbd");
			p++;
		}
	}
}

void h_text(struct strbuf *h, const char *s)
{
	if (s)
		h_textn(h, s, strlen(s));
}

static void grouped_int(struct strbuf *h, double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.0f", fabs(v));
	size_t n = strlen(buf);
	if (v < 0 && strcmp(buf, "0"))
		sb_adds(h, "\xe2\x88\x92");
	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			sb_addch(h, ',');
		sb_addch(h, buf[i]);
	}
}

void h_num(struct strbuf *h, double v)
{
	if (isnan(v)) {
		sb_adds(h, "\xe2\x80\x93");
		return;
	}
	if (isinf(v)) {
		sb_adds(h, v < 0 ? "\xe2\x88\x92\xe2\x88\x9e" : "\xe2\x88\x9e");
		return;
	}
	double a = fabs(v);
	if (a >= 1000 && a < 1e15) {
		grouped_int(h, v);
		return;
	}
	char buf[64];
	snprintf(buf, sizeof(buf), "%.4g", a);
	if (v < 0)
		sb_adds(h, "\xe2\x88\x92");
	sb_adds(h, buf);
}

void h_pct(struct strbuf *h, double v)
{
	if (isnan(v)) {
		sb_adds(h, "\xe2\x80\x93");
		return;
	}
	char buf[64];
	double a = fabs(v);
	snprintf(buf, sizeof(buf), a < 0.1 && a > 0 ? "%.2f%%" : "%.1f%%", a);
	if (!strcmp(buf, "0.0%") || !strcmp(buf, "0.00%") || a == 0)
		sb_adds(h, "0.0%");
	else {
		sb_adds(h, v < 0 ? "\xe2\x88\x92" : "+");
		sb_adds(h, buf);
	}
}

void h_p_value(struct strbuf *h, double p)
{
	if (isnan(p)) {
		sb_adds(h, "n/a");
		return;
	}
	if (p < 0.001) {
		sb_adds(h, "&lt; 0.001");
		return;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), p < 0.01 ? "%.2g" : "%.3f", p);
	sb_adds(h, buf);
}

void h_p_clause(struct strbuf *h, double p)
{
	if (isnan(p)) {
		sb_adds(h, "no p-value");
		return;
	}
	sb_adds(h, p < 0.001 ? "p " : "p = ");
	h_p_value(h, p);
}

void h_diff_ci(struct strbuf *h, double lo, double hi, size_t nx, size_t nb)
{
	if (nx < 2 || nb < 2) {
		sb_adds(h, "no interval (n = 1)");
		return;
	}
	if (isnan(lo) || isnan(hi)) {
		sb_adds(h, "unbounded");
		return;
	}
	h_pct(h, lo);
	sb_adds(h, " to ");
	h_pct(h, hi);
}

const char *h_unit(const char *unit)
{
	if (!unit)
		return "";
	if (!strcmp(unit, "us"))
		return "\xc2\xb5s";
	if (!strcmp(unit, "1"))
		return "";
	return unit;
}

void h_bytes(struct strbuf *h, double bytes)
{
	const char *units[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
	double v = bytes;
	int u = 0;
	while (fabs(v) >= 1000 && u < 6) {
		v /= 1000;
		u++;
	}
	sb_addf(h, "<span title=\"%.0f bytes\">", bytes);
	char buf[32];
	snprintf(buf, sizeof(buf), u ? "%.3g %s" : "%.0f %s", v, units[u]);
	sb_adds(h, buf);
	sb_adds(h, "</span>");
}

void h_safe_name(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		char c = *s;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '-' || c == '_';
		sb_addch(sb, ok ? c : '_');
	}
}

int h_style_of(const struct rdata *d, const char *volume, const char *layout)
{
	/* Volumes in order of their first appearance by name; layouts only when
	 * there is no volume. Pointer comparisons: the strings are interned. */
	int vi = -1, k = 0;
	for (size_t i = 0; i < d->nvols && volume; i++) {
		size_t j = 0;
		while (j < i && d->vols[j].name != d->vols[i].name)
			j++;
		if (j < i)
			continue;
		if (d->vols[i].name == volume) {
			vi = k;
			break;
		}
		k++;
	}
	if (vi >= 0)
		return vi % FIG_NSTYLES;
	k = 0;
	for (size_t i = 0; i < d->nvols && layout; i++) {
		size_t j = 0;
		while (j < i && d->vols[j].layout != d->vols[i].layout)
			j++;
		if (j < i)
			continue;
		if (d->vols[i].layout == layout)
			return k % FIG_NSTYLES;
		k++;
	}
	return 0;
}

int h_pair_style(const struct rdata *d, const char *volume, const char *layout)
{
	int li = 0;
	for (size_t i = 0; i < d->nvols; i++)
		if (d->vols[i].layout == layout) {
			li = d->vols[i].layout_index;
			break;
		}
	/* Shift by 3 per layout: 2 or 3 volumes per layout stay apart. */
	return (h_style_of(d, volume, NULL) + li * 3) % FIG_NSTYLES;
}

static const char css[] =
	":root{color-scheme:light}"
	"body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,"
	"\"Noto Sans\",\"Liberation Sans\",\"DejaVu Sans\",sans-serif;margin:0;color:#1b1b1b;"
	"background:#fff;line-height:1.45;font-size:16px}"
	"main{max-width:1080px;margin:0 auto;padding:28px 32px 72px}"
	"h1{font-size:1.95rem;line-height:1.2;margin:.1em 0 .25em}"
	"h2{font-size:1.35rem;border-bottom:1px solid #d8d8d8;padding-bottom:.2em;margin:2.2em 0 .6em}"
	"h3{font-size:1.08rem;margin:1.6em 0 .4em}"
	".meta{color:#555;font-size:.95rem;margin:.2em 0}"
	".desc{font-size:1.05rem;max-width:52em}"
	".banner{border-left:6px solid #b00020;background:#fdecee;padding:.75em 1em;margin:1em 0}"
	".banner.warn{border-color:#a86200;background:#fff4e0}"
	".banner.info{border-color:#2a5d9f;background:#eef4fb}"
	".findings{padding-left:1.2em}.findings li{margin:.45em 0;max-width:56em}"
	"table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.9rem}"
	"th,td{padding:.3em .65em;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}"
	"thead th{border-bottom:2px solid #8a8a8a;background:#f5f5f5;font-weight:600}"
	".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"tr.base td{color:#555;font-style:italic}"
	".yes{color:#8a0016;font-weight:600}.no{color:#555}"
	".wrap{overflow-x:auto}"
	"figure{margin:1em 0 1.8em}"
	"figure svg{width:100%;height:auto;max-width:820px;display:block;border:1px solid #eee}"
	"figcaption{color:#444;font-size:.9rem;max-width:820px;margin-top:.35em}"
	"details{margin:.6em 0}summary{cursor:pointer;font-weight:600}"
	"pre{background:#f7f7f7;border:1px solid #e4e4e4;padding:.7em .9em;overflow-x:auto;"
	"font-size:.82rem;line-height:1.35;white-space:pre-wrap;word-break:break-word}"
	"code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,\"DejaVu Sans Mono\",monospace}"
	"code{font-size:.88em;background:#f3f3f3;padding:.05em .3em;border-radius:3px}"
	"dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1.4em;margin:.5em 0 1em}"
	"dl.facts dt{color:#555}dl.facts dd{margin:0;word-break:break-word}"
	"nav.toc{font-size:.92rem;margin:1em 0;color:#444}nav.toc a{margin-right:1em}"
	"a{color:#0b57a4}"
	".small{font-size:.85rem;color:#555}"
	"@media print{main{max-width:none;padding:0}figure{break-inside:avoid}}";

void h_begin(struct strbuf *h, const char *title)
{
	sb_adds(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<meta name=\"generator\" content=\"rig " RIG_VERSION "\">\n<title>");
	h_text(h, title);
	sb_adds(h, "</title>\n<style>");
	sb_adds(h, css);
	sb_adds(h, "</style>\n</head>\n<body>\n<main>\n");
}

void h_end(struct strbuf *h)
{
	sb_adds(h, "</main>\n</body>\n</html>\n");
}

/* Append svg with its ids prefixed, without the XML declaration: one
 * pass over the text. */
static void add_svg(struct strbuf *h, const char *svg, int id)
{
	const char *p = strstr(svg, "<svg");
	if (!p)
		return;
	char pre[16];
	snprintf(pre, sizeof(pre), "f%d-", id);
	const char *run = p;
	for (; *p; p++) {
		size_t bl = 0;
		if (*p == 'i' && !strncmp(p, "id=\"", 4))
			bl = 4;
		else if (*p == 'h' && !strncmp(p, "href=\"#", 7))
			bl = 7;
		else if (*p == 'u' && !strncmp(p, "url(#", 5))
			bl = 5;
		if (!bl)
			continue;
		sb_add(h, run, (size_t)(p - run) + bl);
		sb_adds(h, pre);
		p += bl - 1;
		run = p + 1;
	}
	sb_add(h, run, (size_t)(p - run));
}

static void write_fig_file(struct hctx *c, const struct figure *f, const char *base, int pdf)
{
	struct strbuf bytes = STRBUF_INIT, path = STRBUF_INIT;
	sb_addf(&path, "%s/%s.%s", c->fig_dir, base, pdf ? "pdf" : "svg");
	int rc = pdf ? fig_pdf(f, &bytes) : fig_svg(f, &bytes);
	struct strbuf e = STRBUF_INIT;
	if (rc < 0)
		sb_addf(&e, "cannot draw %s", path.buf);
	else
		rc = rout_write_file(path.buf, bytes.buf, bytes.len, &e);
	if (rc < 0 && !c->fig_failed) {
		c->fig_failed = 1;
		if (c->err)
			sb_adds(c->err, e.buf);
	}
	sb_release(&e);
	sb_release(&bytes);
	sb_release(&path);
}

void h_figure(struct hctx *c, const struct figure *f, const char *name, const char *caption_html)
{
	int id = ++c->nfig;
	struct strbuf svg = STRBUF_INIT, base = STRBUF_INIT;
	h_safe_name(&base, name);
	sb_addf(c->h, "<figure id=\"fig-%d\">\n", id);
	if (fig_svg(f, &svg) == 0)
		add_svg(c->h, svg.buf, id);
	else
		sb_adds(c->h, "<p class=\"banner\">this figure could not be drawn</p>");
	sb_addf(c->h, "\n<figcaption><b>Figure %d.</b> %s", id, caption_html);
	if (c->fig_dir) {
		sb_adds(c->h, " <span class=\"small\">(<a href=\"figures/");
		h_text(c->h, base.buf);
		sb_adds(c->h, ".svg\">SVG</a>, <a href=\"figures/");
		h_text(c->h, base.buf);
		sb_adds(c->h, ".pdf\">PDF</a>)</span>");
		write_fig_file(c, f, base.buf, 0);
		write_fig_file(c, f, base.buf, 1);
	}
	sb_adds(c->h, "</figcaption>\n</figure>\n");
	sb_release(&svg);
	sb_release(&base);
}
