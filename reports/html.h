/*
 * report.html: one self-contained page (inline CSS and SVG, no scripts, no
 * network) with the title, the findings, the provenance, one section per
 * step and the realized order; its figures also as SVG and PDF files in
 * figures/. compare.html: several runs side by side (html_compare.c).
 */
#ifndef RIG_REPORTS_HTML_H
#define RIG_REPORTS_HTML_H

struct rdata;
struct strbuf;

/* Write run_dir/report.html and run_dir/figures/. d must have been through
 * rep_summary_compute. 0, or -errno with the reason in err. */
int rep_html_write_report(struct rdata *d, const char *run_dir, struct strbuf *err);

#endif
