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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/units.h"
#include "lib/xalloc.h"
#include "reports/html_int.h"
#include "reports/report_out.h"

void rep_html_textn(struct strbuf *h, const char *s, size_t len)
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
		size_t n = rep_rd_utf8_len(p, (size_t)(end - p));
		if (n) {
			sb_add(h, p, n);
			p += n;
		} else {
			sb_adds(h, "\xef\xbf\xbd");
			p++;
		}
	}
}

void rep_html_text(struct strbuf *h, const char *s)
{
	if (s)
		rep_html_textn(h, s, strlen(s));
}

void rep_html_num(struct strbuf *h, double v)
{
	if (isnan(v)) {
		sb_adds(h, "\xe2\x80\x93");
		return;
	}
	if (isinf(v)) {
		sb_adds(h, v < 0 ? "\xe2\x88\x92\xe2\x88\x9e" : "\xe2\x88\x9e");
		return;
	}
	if (v < 0)
		sb_adds(h, "\xe2\x88\x92");
	units_format_magnitude(h, v);
}

void rep_html_pct(struct strbuf *h, double v)
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

void rep_html_p_value(struct strbuf *h, double p)
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

void rep_html_p_clause(struct strbuf *h, double p)
{
	if (isnan(p)) {
		sb_adds(h, "no p-value");
		return;
	}
	sb_adds(h, p < 0.001 ? "p " : "p = ");
	rep_html_p_value(h, p);
}

void rep_html_diff_ci(struct strbuf *h, double lo, double hi, size_t nx, size_t nb)
{
	if (nx < 2 || nb < 2) {
		sb_adds(h, "no interval (n = 1)");
		return;
	}
	if (isnan(lo) || isnan(hi)) {
		sb_adds(h, "unbounded");
		return;
	}
	rep_html_pct(h, lo);
	sb_adds(h, " to ");
	rep_html_pct(h, hi);
}

const char *rep_html_unit(const char *unit)
{
	if (!unit)
		return "";
	if (!strcmp(unit, "us"))
		return "\xc2\xb5s";
	if (!strcmp(unit, "1"))
		return "";
	return unit;
}

void rep_html_bytes(struct strbuf *h, double bytes)
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

/* A file-name-safe copy of s appended to sb. */
static void html_safe_name(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		char c = *s;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '-' || c == '_';
		sb_addch(sb, ok ? c : '_');
	}
}

int rep_html_style_of(const struct rdata *d, const char *volume, const char *layout)
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

int rep_html_pair_style(const struct rdata *d, const char *volume, const char *layout)
{
	/* The (volume, layout) pairs in order of first appearance, so up to
	 * FIG_NSTYLES pairs differ. */
	int k = 0;
	for (size_t i = 0; i < d->nvols; i++) {
		const struct rd_volume *v = &d->vols[i];
		size_t j = 0;
		while (j < i && !(d->vols[j].name == v->name && d->vols[j].layout == v->layout))
			j++;
		if (j < i)
			continue;
		if (v->name == volume && v->layout == layout)
			return k % FIG_NSTYLES;
		k++;
	}
	return rep_html_style_of(d, volume, layout);
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
	".lead{font-size:1.08em;max-width:56em;border-left:4px solid #0072b2;padding:.3em .8em;background:#f4f8fb}"
	".findings{padding-left:1.2em}.findings li{margin:.45em 0;max-width:56em}"
	"table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.9rem}"
	"th,td{padding:.3em .65em;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}"
	"thead th{border-bottom:2px solid #8a8a8a;background:#f5f5f5;font-weight:600}"
	".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"tr.base td{color:#555;font-style:italic}"
	".yes{color:#8a0016;font-weight:600}.no{color:#555}"
	".wrap{overflow-x:auto}"
	"figure{margin:1em 0 1.8em}"
	/* Figures are drawn at print size (3.5 or 7 in wide, 8 pt text):
	 * on screen, about 1.6 times that. */
	"figure svg{width:100%;height:auto;max-width:820px;display:block;border:1px solid #eee}"
	"figure.fig-single svg{max-width:420px}"
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

void rep_html_begin(struct strbuf *h, const char *title)
{
	sb_adds(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<meta name=\"generator\" content=\"rig " RIG_VERSION "\">\n<title>");
	rep_html_text(h, title);
	sb_adds(h, "</title>\n<style>");
	sb_adds(h, css);
	sb_adds(h, "</style>\n</head>\n<body>\n<main>\n");
}

void rep_html_end(struct strbuf *h)
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

/* figures/BASE.EXT from bytes, drawn (rc 0) or not; the first failure
 * goes to c->err. */
static void write_fig_file(struct hctx *c, const char *base, const char *ext, int rc,
			   const struct strbuf *bytes)
{
	struct strbuf path = STRBUF_INIT, e = STRBUF_INIT;
	sb_addf(&path, "%s/%s.%s", c->fig_dir, base, ext);
	if (rc < 0)
		sb_addf(&e, "cannot draw %s", path.buf);
	else
		rc = rep_rout_write_file(path.buf, bytes->buf, bytes->len, &e);
	if (rc < 0 && !c->fig_failed) {
		c->fig_failed = 1;
		if (c->err)
			sb_adds(c->err, e.buf);
	}
	sb_release(&e);
	sb_release(&path);
}

static void add_utf8(struct strbuf *sb, unsigned long cp)
{
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	if (cp < 0x80) {
		sb_addch(sb, (char)cp);
	} else if (cp < 0x800) {
		sb_addch(sb, (char)(0xc0 | cp >> 6));
		sb_addch(sb, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		sb_addch(sb, (char)(0xe0 | cp >> 12));
		sb_addch(sb, (char)(0x80 | (cp >> 6 & 0x3f)));
		sb_addch(sb, (char)(0x80 | (cp & 0x3f)));
	} else {
		sb_addch(sb, (char)(0xf0 | cp >> 18));
		sb_addch(sb, (char)(0x80 | (cp >> 12 & 0x3f)));
		sb_addch(sb, (char)(0x80 | (cp >> 6 & 0x3f)));
		sb_addch(sb, (char)(0x80 | (cp & 0x3f)));
	}
}

/* The named entities the writers use, and a few more. */
static const struct {
	const char *name;
	unsigned cp;
} entities[] = {
	{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' },
	{ "nbsp", 0xa0 }, { "ge", 0x2265 }, { "le", 0x2264 }, { "ndash", 0x2013 },
	{ "mdash", 0x2014 }, { "rarr", 0x2192 }, { "sup2", 0xb2 }, { "sup3", 0xb3 },
	{ "times", 0xd7 }, { "minus", 0x2212 }, { "middot", 0xb7 }, { "hellip", 0x2026 },
	{ "micro", 0xb5 }, { "deg", 0xb0 }, { "plusmn", 0xb1 },
};

/* Superscript digits: "10<sup>6</sup>" reads 10⁶, not 106. */
static const unsigned sup_digit[10] = { 0x2070, 0xb9, 0xb2, 0xb3, 0x2074,
					0x2075, 0x2076, 0x2077, 0x2078, 0x2079 };

void rep_html_plain(struct strbuf *out, const char *html)
{
	int sup = 0;
	for (const char *p = html; *p;) {
		if (*p == '<') {
			const char *e = strchr(p, '>');
			if (!e)
				break;
			if (!strncmp(p, "<sup>", 5))
				sup = 1;
			else if (!strncmp(p, "</sup>", 6))
				sup = 0;
			else if (!strncmp(p, "<br", 3))
				sb_addch(out, ' ');
			p = e + 1;
			continue;
		}
		if (*p == '&') {
			const char *e = p + 1;
			while (*e && *e != ';' && e - p < 12)
				e++;
			unsigned long cp = 0;
			if (*e == ';' && p[1] == '#') {
				char *end;
				cp = p[2] == 'x' || p[2] == 'X' ? strtoul(p + 3, &end, 16) : strtoul(p + 2, &end, 10);
				if (end != e)
					cp = 0;
			} else if (*e == ';') {
				for (size_t i = 0; i < sizeof(entities) / sizeof(entities[0]) && !cp; i++)
					if (strlen(entities[i].name) == (size_t)(e - p - 1) &&
					    !strncmp(p + 1, entities[i].name, (size_t)(e - p - 1)))
						cp = entities[i].cp;
			}
			if (cp) {
				add_utf8(out, cp);
				p = e + 1;
				continue;
			}
		}
		if (sup && *p >= '0' && *p <= '9')
			add_utf8(out, sup_digit[*p - '0']);
		else if (sup && *p == '-')
			add_utf8(out, 0x207b);
		else
			sb_addch(out, *p);
		p++;
	}
}

void rep_html_figure(struct hctx *c, const struct figure *f, const char *name, const char *caption_html)
{
	int id = ++c->nfig;
	struct strbuf svg = STRBUF_INIT, base = STRBUF_INIT;
	html_safe_name(&base, name);
	sb_addf(c->h, "<figure id=\"fig-%d\" class=\"fig-%s\">\n", id,
		rep_fig_size_of(f) == FIG_SINGLE ? "single" : "double");
	/* The same drawing for papers: SVG (the inline one), PDF, PNG at 300
	 * dpi, and the caption as plain text, when there is a folder for them. */
	struct strbuf pdf = STRBUF_INIT, png = STRBUF_INIT;
	int rc[3] = { 0, 0, 0 };
	if (c->fig_dir)
		rep_fig_all(f, &svg, &pdf, &png, rc);
	else
		rc[0] = rep_fig_svg(f, &svg);
	if (rc[0] == 0)
		add_svg(c->h, svg.buf, id);
	else
		sb_adds(c->h, "<p class=\"banner\">this figure could not be drawn</p>");
	sb_addf(c->h, "\n<figcaption><b>Figure %d.</b> %s", id, caption_html);
	if (c->fig_dir) {
		static const char *const kinds[] = { "svg", "SVG", "pdf", "PDF", "png", "PNG", "txt", "caption" };
		sb_adds(c->h, " <span class=\"small\">(");
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k += 2) {
			sb_adds(c->h, k ? ", <a href=\"figures/" : "<a href=\"figures/");
			rep_html_text(c->h, base.buf);
			sb_addf(c->h, ".%s\">%s</a>", kinds[k], kinds[k + 1]);
		}
		sb_adds(c->h, ")</span>");
		write_fig_file(c, base.buf, "svg", rc[0], &svg);
		write_fig_file(c, base.buf, "pdf", rc[1], &pdf);
		write_fig_file(c, base.buf, "png", rc[2], &png);
		struct strbuf txt = STRBUF_INIT;
		rep_html_plain(&txt, caption_html);
		sb_addch(&txt, '\n');
		write_fig_file(c, base.buf, "txt", 0, &txt);
		sb_release(&txt);
	}
	sb_release(&pdf);
	sb_release(&png);
	sb_adds(c->h, "</figcaption>\n</figure>\n");
	sb_release(&svg);
	sb_release(&base);
}
