/*
 * compare.html: several runs side by side (see compare.h). The page lists
 * the runs with their letters, the warnings (what differs between them),
 * then per step a figure of the headline metric (bars per run, grouped by
 * volume, with 95% interval whiskers) and a table of every key: each run's
 * mean with its interval, and each later run's difference from the first.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reports/compare.h"
#include "reports/html_int.h"
#include "reports/report_out.h"
#include "rig/util/xalloc.h"

static void key_label(struct strbuf *h, const struct cmp_key *k)
{
	h_text(h, k->volume ? k->volume : k->fs ? k->fs : "?");
	if (k->layout && *k->layout) {
		sb_adds(h, " in ");
		h_text(h, k->layout);
	}
}

static void runs_table(struct strbuf *h, const struct comparison *c)
{
	sb_adds(h, "<table>\n<thead><tr><th></th><th>run</th><th>plan</th><th>host</th><th>started (UTC)</th>"
		   "<th>status</th><th>folder</th></tr></thead>\n<tbody>\n");
	for (size_t r = 0; r < c->nruns; r++) {
		const struct rd_run *run = &c->runs[r].d->run;
		sb_addf(h, "<tr><td><b>%s</b></td><td><code>", c->runs[r].label);
		h_text(h, run->id);
		sb_adds(h, "</code></td><td>");
		h_text(h, run->plan_name);
		sb_adds(h, "</td><td>");
		h_text(h, run->host);
		sb_adds(h, "</td><td>");
		h_text(h, run->started_utc);
		sb_adds(h, "</td><td>");
		h_text(h, run->status);
		sb_adds(h, "</td><td class=\"small\">");
		h_text(h, c->runs[r].dir);
		sb_adds(h, "</td></tr>\n");
	}
	sb_adds(h, "</tbody></table>\n");
}

static void step_section(struct hctx *hc, const struct comparison *c, const char *step)
{
	struct strbuf *h = hc->h;
	const struct cmp_key *k0 = NULL;
	for (size_t i = 0; i < c->nkeys && !k0; i++)
		if (c->keys[i].step == step || !strcmp(c->keys[i].step, step))
			k0 = &c->keys[i];
	sb_addf(h, "<h2>Step ");
	h_text(h, step);
	sb_adds(h, ": ");
	h_text(h, k0->module);
	sb_adds(h, "</h2>\n");

	/* Figure: the headline metric, bars per run grouped by key. */
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_BARS;
	const char *unit = "";
	struct strbuf labels = STRBUF_INIT;
	char **groups = NULL;
	size_t ngroups = 0;
	for (size_t i = 0; i < c->nkeys; i++) {
		const struct cmp_key *k = &c->keys[i];
		if (strcmp(k->step, step) || !k->headline)
			continue;
		struct strbuf g = STRBUF_INIT;
		key_label(&g, k);
		groups = xrealloc(groups, (ngroups + 1) * sizeof(*groups));
		groups[ngroups] = sb_detach(&g);
		for (size_t r = 0; r < c->nruns; r++)
			if (k->cells[r].present)
				fig_add_bar(&f, groups[ngroups], c->runs[r].label, k->cells[r].s.mean,
					    k->cells[r].s.ci_low, k->cells[r].s.ci_high, (int)r);
		ngroups++;
		unit = h_unit(k->unit);
		if (!labels.len)
			sb_adds(&labels, k->metric);
	}
	if (f.nbars) {
		struct strbuf yl = STRBUF_INIT, cap = STRBUF_INIT, name = STRBUF_INIT;
		sb_addf(&yl, "%s%s%s%s", labels.buf, *unit ? " (" : "", unit, *unit ? ")" : "");
		f.ylabel = yl.buf;
		f.yzero = 1;
		sb_adds(&cap, "Mean ");
		h_text(&cap, labels.buf);
		sb_adds(&cap, " of each run (letters as in the table of runs), grouped by ");
		sb_adds(&cap, c->by_fs ? "file system" : "volume");
		sb_adds(&cap, "; whiskers: 95% confidence interval of the mean.");
		if (fig_clipped(&f))
			sb_adds(&cap, " Whiskers clipped at 0: the quantity cannot be negative.");
		sb_adds(&name, "compare-step-");
		sb_adds(&name, step);
		h_figure(hc, &f, name.buf, cap.buf);
		sb_release(&yl);
		sb_release(&cap);
		sb_release(&name);
	}
	fig_release(&f);
	for (size_t i = 0; i < ngroups; i++)
		free(groups[i]);
	free(groups);
	sb_release(&labels);

	sb_adds(h, "<div class=\"wrap\"><table>\n<thead><tr><th>");
	sb_adds(h, c->by_fs ? "file system" : "volume");
	sb_adds(h, "</th><th>metric</th>");
	for (size_t r = 0; r < c->nruns; r++)
		sb_addf(h, "<th class=\"num\">%s mean (95%% CI, n)</th>", c->runs[r].label);
	for (size_t r = 1; r < c->nruns; r++)
		sb_addf(h, "<th class=\"num\">%s vs %s (95%% CI; p)</th>", c->runs[r].label, c->runs[0].label);
	sb_adds(h, "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < c->nkeys; i++) {
		const struct cmp_key *k = &c->keys[i];
		if (strcmp(k->step, step))
			continue;
		sb_adds(h, k->headline ? "<tr><td><b>" : "<tr><td>");
		key_label(h, k);
		sb_adds(h, k->headline ? "</b></td><td>" : "</td><td>");
		h_text(h, k->metric);
		const char *u = h_unit(k->unit);
		if (*u) {
			sb_adds(h, " <span class=\"small\">");
			h_text(h, u);
			sb_adds(h, "</span>");
		}
		sb_adds(h, "</td>");
		for (size_t r = 0; r < c->nruns; r++) {
			const struct cmp_cell *cl = &k->cells[r];
			sb_adds(h, "<td class=\"num\">");
			if (cl->present) {
				h_num(h, cl->s.mean);
				sb_adds(h, "<br><span class=\"small\">");
				if (cl->s.n > 1) {
					h_num(h, cl->s.ci_low);
					sb_adds(h, " to ");
					h_num(h, cl->s.ci_high);
				} else {
					sb_adds(h, "no interval");
				}
				sb_addf(h, ", n = %zu</span>", cl->s.n);
			} else {
				sb_adds(h, "<span class=\"small\">not measured</span>");
			}
			sb_adds(h, "</td>");
		}
		for (size_t r = 1; r < c->nruns; r++) {
			const struct cmp_cell *cl = &k->cells[r];
			sb_adds(h, "<td class=\"num\">");
			if (cl->present && k->cells[0].present) {
				int excl = isfinite(cl->diff.ci_low) && (cl->diff.ci_low > 0 || cl->diff.ci_high < 0);
				sb_adds(h, excl ? "<b class=\"yes\">" : "<b>");
				h_pct(h, cl->diff.diff_pct);
				sb_adds(h, "</b><br><span class=\"small\">");
				h_diff_ci(h, cl->diff.ci_low, cl->diff.ci_high, cl->s.n, k->cells[0].s.n);
				sb_adds(h, "; ");
				h_p_clause(h, cl->diff.p);
				sb_adds(h, "</span>");
			} else {
				sb_adds(h, "&ndash;");
			}
			sb_adds(h, "</td>");
		}
		sb_adds(h, "</tr>\n");
	}
	sb_adds(h, "</tbody></table></div>\n");
}

int compare_write_html(const struct comparison *c, const char *out_dir, struct strbuf *err)
{
	struct strbuf page = STRBUF_INIT, dir = STRBUF_INIT, path = STRBUF_INIT, ferr = STRBUF_INIT;
	sb_addf(&dir, "%s/figures", out_dir);
	int rc = 0;
	if (mkdir(dir.buf, 0777) < 0 && errno != EEXIST) {
		rc = -errno;
		sb_addf(err, "cannot create %s: %s", dir.buf, strerror(errno));
		goto out;
	}
	struct hctx hc = { .h = &page, .fig_dir = dir.buf, .err = &ferr };
	struct strbuf title = STRBUF_INIT;
	sb_addf(&title, "Comparison of %zu runs", c->nruns);
	h_begin(&page, title.buf);
	sb_adds(&page, "<header><h1>");
	h_text(&page, title.buf);
	sb_adds(&page, "</h1>\n<p class=\"meta\">Every later run against run A: percent of A's mean, "
		       "Fieller's 95% interval, Welch's p. Joined on (step, ");
	sb_adds(&page, c->by_fs ? "file system" : "volume");
	sb_adds(&page, c->with_layout ? ", layout" : "");
	sb_adds(&page, ", metric).</p></header>\n");
	sb_release(&title);
	runs_table(&page, c);
	if (c->nwarnings) {
		sb_adds(&page, "<div class=\"banner warn\"><b>The runs differ in more than the results:</b><ul>\n");
		for (size_t i = 0; i < c->nwarnings; i++) {
			sb_adds(&page, "<li>");
			h_text(&page, c->warnings[i]);
			sb_adds(&page, "</li>\n");
		}
		sb_adds(&page, "</ul></div>\n");
	}
	size_t shown = 0;
	for (size_t i = 0; i < c->nkeys; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(c->keys[j].step, c->keys[i].step);
		if (!seen) {
			step_section(&hc, c, c->keys[i].step);
			shown++;
		}
	}
	if (!shown)
		sb_adds(&page, "<p>The runs have no results in common.</p>\n");
	h_end(&page);
	if (ferr.len) {
		sb_adds(err, ferr.buf);
		rc = -EIO;
		goto out;
	}
	sb_addf(&path, "%s/compare.html", out_dir);
	rc = rout_write_file(path.buf, page.buf, page.len, err);
out:
	sb_release(&page);
	sb_release(&dir);
	sb_release(&path);
	sb_release(&ferr);
	return rc;
}
