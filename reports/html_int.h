/*
 * Internal interface of the HTML writers (html.c: the page and its
 * provenance; html_step.c: the per-step sections and the realized order;
 * html_compare.c: compare.html; html_util.c: what they share).
 */
#ifndef RIG_REPORTS_HTML_INT_H
#define RIG_REPORTS_HTML_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"
#include "reports/figure.h"
#include "reports/report_data.h"

struct hctx {
	struct strbuf *h;        /* the page */
	const char *fig_dir;     /* where figure files go; NULL: inline only */
	int nfig;                /* figures so far: ids and numbering */
	int fig_failed;          /* a figure file could not be written */
	struct strbuf *err;      /* the first such failure */
};

/* Text escaped for HTML; invalid UTF-8 and control characters (other than
 * tab and newline) become U+FFFD, so any command output is a valid page. */
void rep_html_text(struct strbuf *h, const char *s);
void rep_html_textn(struct strbuf *h, const char *s, size_t n);
/* A number for people: 4 significant digits, thousands grouped with
 * commas, no exponent between 0.001 and 10^15; NaN as an en dash. */
void rep_html_num(struct strbuf *h, double v);
/* A signed percentage: "+4.7%", "−20.5%" (U+2212). */
void rep_html_pct(struct strbuf *h, double v);
/* A p-value as a clause: "p &lt; 0.001", "p = 0.0098", "p = 0.395"; NaN
 * as "no p-value". */
void rep_html_p_clause(struct strbuf *h, double p);
/* The value alone, for a table column headed p: "&lt; 0.001", "0.0098";
 * NaN as "n/a". */
void rep_html_p_value(struct strbuf *h, double p);
/* "95% CI a to b" of a percentage difference, or why there is none. */
void rep_html_diff_ci(struct strbuf *h, double lo, double hi, size_t nx, size_t nb);
/* A unit for display ("us" -> "µs"). */
const char *rep_html_unit(const char *unit);
/* Bytes as "1.0 TB" (decimal) with the exact count in a title attribute. */
void rep_html_bytes(struct strbuf *h, double bytes);

/* The document's start (doctype, meta, inline CSS) and end. */
void rep_html_begin(struct strbuf *h, const char *title);
void rep_html_end(struct strbuf *h);

/*
 * Put figure f in the page: the SVG inline (its ids prefixed, so several
 * figures can share a page) in a <figure> with the caption (HTML), and,
 * when c->fig_dir is set, NAME.svg, NAME.pdf, NAME.png (300 dpi) and
 * NAME.txt (the caption as plain text) there. name is sanitized to
 * [A-Za-z0-9._-]. A caller whose figure has yzero adds "whiskers clipped
 * at 0" to the caption when rep_fig_clipped(f) says so.
 */
void rep_html_figure(struct hctx *c, const struct figure *f, const char *name, const char *caption_html);

/* HTML as plain text appended to out: tags dropped (<br> a space, digits
 * in <sup> as superscript digits), entities decoded. */
void rep_html_plain(struct strbuf *out, const char *html);

/* Style index of a volume name / a layout (stable across a page): volume
 * names (else layouts) in order of first appearance, so up to FIG_NSTYLES
 * of them differ. */
int rep_html_style_of(const struct rdata *d, const char *volume, const char *layout);
/* Style of a (volume, layout) pair, for figures whose series are pairs:
 * the pairs in order of first appearance. */
int rep_html_pair_style(const struct rdata *d, const char *volume, const char *layout);

/* Sections (html_step.c). */
void rep_html_steps(struct hctx *c, struct rdata *d);
void rep_html_order(struct hctx *c, struct rdata *d);
/* The findings, strongest first, with the lead figure and the baseline
 * table (html_findings.c). */
void rep_html_findings(struct hctx *c, struct rdata *d);
/* Where the run's time went, for the Methods section (html_time.c). */
void rep_html_time(struct hctx *c, const struct rdata *d);
/* "step 1 write" */
void rep_html_step_title(struct strbuf *h, const struct rd_template *t);
/* The y label of a template's headline metric, with its unit (arena text). */
const char *rep_html_ylabel(struct rdata *d, const struct rd_template *t);
/* Build step ti's main figure (the kind its findings call for: lines
 * against cycle, sweep level reached, position; an interaction plot for a
 * crossed design; else bars) with its caption (HTML) and file name. 0, or
 * -1 when the step has no headline group (nothing built). The caller
 * releases f. */
int rep_html_step_figure(struct rdata *d, uint32_t ti, struct figure *f, struct strbuf *cap,
		  struct strbuf *name);

#endif
