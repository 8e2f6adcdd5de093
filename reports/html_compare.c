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

#include "lib/xalloc.h"
#include "reports/compare.h"
#include "reports/html_int.h"
#include "reports/report_out.h"

static void key_label(struct strbuf *h, const struct cmp_key *k)
{
	rep_html_text(h, k->volume ? k->volume : k->fs ? k->fs : "?");
	if (k->layout && *k->layout) {
		sb_adds(h, " in ");
		rep_html_text(h, k->layout);
	}
}

/* A metric and, small, its unit. */
static void metric_label(struct strbuf *h, const char *metric, const char *unit)
{
	rep_html_text(h, metric);
	const char *u = rep_html_unit(unit);
	if (*u) {
		sb_adds(h, " <span class=\"small\">");
		rep_html_text(h, u);
		sb_adds(h, "</span>");
	}
}

/* One row per run: what it ran, where (the host's facts the store holds:
 * its name, operating system, the disks' model and serial) and how (plan
 * hash, rig version, resumes), so runs from many hosts read side by side.
 * --within tabulates the disks in its own table: there, no OS, disk and rig
 * columns. */
static void runs_table(struct strbuf *h, const struct comparison *c)
{
	sb_adds(h, "<table>\n<thead><tr><th></th><th>run</th><th>plan</th><th>host</th>");
	if (!c->within)
		sb_adds(h, "<th>OS</th><th>disk</th><th>rig</th>");
	sb_adds(h, "<th>started (UTC)</th><th>status</th><th>folder</th></tr></thead>\n<tbody>\n");
	for (size_t r = 0; r < c->nruns; r++) {
		const struct rdata *d = c->runs[r].d;
		const struct rd_run *run = &d->run;
		sb_addf(h, "<tr><td><b>%s</b></td><td><code>", c->runs[r].label);
		rep_html_text(h, run->id);
		sb_adds(h, "</code></td><td>");
		rep_html_text(h, run->plan_name);
		sb_adds(h, " <span class=\"small\"><code>");
		if (run->plan_sha256)
			sb_addf(h, "%.12s", run->plan_sha256);
		sb_adds(h, "</code></span></td><td>");
		rep_html_text(h, run->host);
		if (!c->within) {
			sb_adds(h, "</td><td class=\"small\">");
			rep_html_text(h, run->os);
			sb_adds(h, "</td><td class=\"small\">");
			rep_html_text(h, c->runs[r].disk ? c->runs[r].disk : "existing directories");
			sb_adds(h, "</td><td>");
			rep_html_text(h, run->rig_version);
		}
		sb_adds(h, "</td><td>");
		rep_html_text(h, run->started_utc);
		sb_adds(h, "</td><td>");
		rep_html_text(h, run->status);
		if (d->nresumes)
			sb_addf(h, ", resumed %zu time%s", d->nresumes, d->nresumes == 1 ? "" : "s");
		sb_adds(h, "</td><td class=\"small\">");
		rep_html_text(h, c->runs[r].dir);
		sb_adds(h, "</td></tr>\n");
	}
	sb_adds(h, "</tbody></table>\n");
}

/* Under a table with a cell marked by rep_compare_diff_disagrees. */
static const char disagree_note[] =
	"<p class=\"small\"><sup>&dagger;</sup> Here the interval and the p-value disagree about a "
	"difference at the 5% level. They answer different questions: the interval (Fieller's) is for "
	"the ratio of the two means, the later run's mean as a percentage of the first's, while "
	"Welch's test is for the difference of the means in the metric's own unit. Each uses its own "
	"approximate degrees of freedom, so near the 5% threshold one can fall on each side. Read such "
	"a difference as borderline; more repetitions settle it.</p>\n";

/* A difference for a table cell: the percentage in bold (marked when its
 * interval excludes 0), then, in a small span the caller closes, the
 * interval and Welch's p, with a dagger when they disagree (returns 1
 * then: the table needs disagree_note). */
static int diff_cell(struct strbuf *h, const struct rep_stats_diff *df, size_t nx, size_t nb)
{
	int excl = isfinite(df->ci_low) && (df->ci_low > 0 || df->ci_high < 0);
	int odd = rep_compare_diff_disagrees(df);
	sb_adds(h, excl ? "<b class=\"yes\">" : "<b>");
	rep_html_pct(h, df->diff_pct);
	sb_adds(h, "</b><br><span class=\"small\">");
	rep_html_diff_ci(h, df->ci_low, df->ci_high, nx, nb);
	sb_adds(h, "; ");
	rep_html_p_clause(h, df->p);
	if (odd)
		sb_adds(h, "<sup>&dagger;</sup>");
	return odd;
}

static void warnings_banner(struct strbuf *h, const struct comparison *c)
{
	if (!c->nwarnings)
		return;
	sb_adds(h, "<div class=\"banner warn\"><b>The runs differ in more than the results:</b><ul>\n");
	for (size_t i = 0; i < c->nwarnings; i++) {
		sb_adds(h, "<li>");
		rep_html_text(h, c->warnings[i]);
		sb_adds(h, "</li>\n");
	}
	sb_adds(h, "</ul></div>\n");
}

/* A step's figure: its headline metric, bars per run grouped by key. */
static void step_figure(struct hctx *hc, const struct comparison *c, const char *step)
{
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
				rep_fig_add_bar(&f, groups[ngroups], c->runs[r].label, k->cells[r].s.mean,
					    k->cells[r].s.ci_low, k->cells[r].s.ci_high, (int)r);
		ngroups++;
		unit = rep_html_unit(k->unit);
		if (!labels.len)
			sb_adds(&labels, k->metric);
	}
	if (f.nbars) {
		struct strbuf yl = STRBUF_INIT, cap = STRBUF_INIT, name = STRBUF_INIT;
		sb_addf(&yl, "%s%s%s%s", labels.buf, *unit ? " (" : "", unit, *unit ? ")" : "");
		f.ylabel = yl.buf;
		f.yzero = 1;
		sb_adds(&cap, "Mean ");
		rep_html_text(&cap, labels.buf);
		sb_adds(&cap, " of each run (letters as in the table of runs), grouped by ");
		sb_adds(&cap, c->by_fs ? "file system" : "volume");
		sb_adds(&cap, "; whiskers: 95% confidence interval of the mean.");
		if (rep_fig_clipped(&f))
			sb_adds(&cap, " Whiskers clipped at 0: the quantity cannot be negative.");
		sb_adds(&name, "compare-step-");
		sb_adds(&name, step);
		rep_html_figure(hc, &f, name.buf, cap.buf);
		sb_release(&yl);
		sb_release(&cap);
		sb_release(&name);
	}
	rep_fig_release(&f);
	for (size_t i = 0; i < ngroups; i++)
		free(groups[i]);
	free(groups);
	sb_release(&labels);
}

static void step_section(struct hctx *hc, const struct comparison *c, const char *step)
{
	struct strbuf *h = hc->h;
	const struct cmp_key *k0 = NULL;
	for (size_t i = 0; i < c->nkeys && !k0; i++)
		if (c->keys[i].step == step || !strcmp(c->keys[i].step, step))
			k0 = &c->keys[i];
	sb_addf(h, "<h2>Step ");
	rep_html_text(h, step);
	sb_adds(h, ": ");
	rep_html_text(h, k0->module);
	sb_adds(h, "</h2>\n");

	step_figure(hc, c, step);

	sb_adds(h, "<div class=\"wrap\"><table>\n<thead><tr><th>");
	sb_adds(h, c->by_fs ? "file system" : "volume");
	sb_adds(h, "</th><th>metric</th>");
	for (size_t r = 0; r < c->nruns; r++)
		sb_addf(h, "<th class=\"num\">%s mean (95%% CI, n)</th>", c->runs[r].label);
	for (size_t r = 1; r < c->nruns; r++)
		sb_addf(h, "<th class=\"num\">%s vs %s (95%% CI; p)</th>", c->runs[r].label, c->runs[0].label);
	sb_adds(h, "</tr></thead>\n<tbody>\n");
	int disagree = 0;
	for (size_t i = 0; i < c->nkeys; i++) {
		const struct cmp_key *k = &c->keys[i];
		if (strcmp(k->step, step))
			continue;
		sb_adds(h, k->headline ? "<tr><td><b>" : "<tr><td>");
		key_label(h, k);
		sb_adds(h, k->headline ? "</b></td><td>" : "</td><td>");
		metric_label(h, k->metric, k->unit);
		sb_adds(h, "</td>");
		for (size_t r = 0; r < c->nruns; r++) {
			const struct cmp_cell *cl = &k->cells[r];
			sb_adds(h, "<td class=\"num\">");
			if (cl->present) {
				rep_html_num(h, cl->s.mean);
				sb_adds(h, "<br><span class=\"small\">");
				if (cl->s.n > 1) {
					rep_html_num(h, cl->s.ci_low);
					sb_adds(h, " to ");
					rep_html_num(h, cl->s.ci_high);
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
				disagree |= diff_cell(h, &cl->diff, cl->s.n, k->cells[0].s.n);
				sb_adds(h, "</span>");
			} else {
				sb_adds(h, "&ndash;");
			}
			sb_adds(h, "</td>");
		}
		sb_adds(h, "</tr>\n");
	}
	sb_adds(h, "</tbody></table></div>\n");
	if (disagree)
		sb_adds(h, disagree_note);
}

int rep_compare_write_html(const struct comparison *c, const char *out_dir, struct strbuf *err)
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
	rep_html_begin(&page, title.buf);
	sb_adds(&page, "<header><h1>");
	rep_html_text(&page, title.buf);
	sb_adds(&page, "</h1>\n<p class=\"meta\">Every later run against run A: percent of A's mean, "
		       "Fieller's 95% interval, Welch's p. Joined on (step, ");
	sb_adds(&page, c->by_fs ? "file system" : "volume");
	sb_adds(&page, c->with_layout ? ", layout" : "");
	sb_adds(&page, ", metric).");
	if (c->settings) {
		sb_adds(&page, " Left out: ");
		rep_html_text(&page, c->settings);
		sb_adds(&page, ", quantities the plan sets rather than measurements.");
	}
	sb_adds(&page, "</p></header>\n");
	sb_release(&title);
	runs_table(&page, c);
	warnings_banner(&page, c);
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
	rep_html_end(&page);
	if (ferr.len) {
		sb_adds(err, ferr.buf);
		rc = -EIO;
		goto out;
	}
	sb_addf(&path, "%s/compare.html", out_dir);
	rc = rep_rout_write_file(path.buf, page.buf, page.len, err);
out:
	sb_release(&page);
	sb_release(&dir);
	sb_release(&path);
	sb_release(&ferr);
	return rc;
}

/* --- compare.html in within mode --- */

/* A column of the within table: one step's main metric for one compared
 * volume or file system, in one layout or pooled (layout NULL). */
struct wcol {
	const char *step, *module, *metric, *unit, *ent, *layout;
};

static const char *w_ent(const struct cmp_within *w)
{
	return w->volume ? w->volume : w->fs ? w->fs : "?";
}

static int w_in_col(const struct cmp_within *w, const struct wcol *k)
{
	return !strcmp(w->step, k->step) && !strcmp(w->metric, k->metric) && !strcmp(w_ent(w), k->ent) &&
	       (w->layout && k->layout ? !strcmp(w->layout, k->layout) : w->layout == k->layout);
}

static struct wcol *within_columns(const struct comparison *c, size_t *ncols)
{
	struct wcol *cols = NULL;
	size_t n = 0, alloc = 0;
	for (size_t i = 0; i < c->nrows; i++) {
		const struct cmp_within *w = &c->rows[i];
		if (!w->headline || w->inner)
			continue;
		size_t k = 0;
		while (k < n && !w_in_col(w, &cols[k]))
			k++;
		if (k < n)
			continue;
		XGROW(cols, n + 1, alloc);
		cols[n++] = (struct wcol){ w->step, w->module, w->metric, w->unit, w_ent(w), w->layout };
	}
	*ncols = n;
	return cols;
}

static void within_run_cell(struct strbuf *h, const struct cmp_run *run)
{
	const struct rdata *d = run->d;
	sb_adds(h, "<td><b>");
	rep_html_text(h, run->disk ? run->disk : "existing directories");
	sb_addf(h, "</b><br><span class=\"small\">run %s, ", run->label);
	rep_html_text(h, run->dir);
	sb_adds(h, "</span>");
	if (!run->complete) {
		sb_adds(h, "<br><b>incomplete</b> <span class=\"small\">(");
		rep_html_text(h, d->run.status);
		sb_addf(h, ", %zu of %zu cells not done%s)</span>", d->failed_cells, d->ncells,
			d->nlayouts > 1 ? "; layouts not pooled" : "");
	}
	if (d->nresumes)
		sb_addf(h, "<br><b>resumed</b> <span class=\"small\">(%zu time%s)</span>", d->nresumes,
			d->nresumes > 1 ? "s" : "");
	sb_adds(h, "</td><td>");
	if (run->ref) {
		rep_html_text(h, run->ref);
		sb_adds(h, run->ref_by_fs ? " <span class=\"small\">(file system)</span>" : "");
	} else {
		sb_adds(h, "<span class=\"small\">none</span>");
	}
	sb_adds(h, "</td>");
}

static void within_table(struct strbuf *h, const struct comparison *c)
{
	size_t ncols;
	struct wcol *cols = within_columns(c, &ncols);
	if (!ncols) {
		sb_adds(h, "<p>No run has a volume or file system to compare with its reference.</p>\n");
		free(cols);
		return;
	}
	sb_adds(h, "<div class=\"wrap\"><table>\n<thead><tr><th>disk and run</th><th>reference</th>");
	for (size_t k = 0; k < ncols; k++) {
		const struct wcol *col = &cols[k];
		sb_adds(h, "<th class=\"num\">");
		rep_html_text(h, col->step);
		sb_adds(h, " ");
		rep_html_text(h, col->module);
		sb_adds(h, ": ");
		rep_html_text(h, col->ent);
		sb_adds(h, "<br>");
		if (!col->layout)
			sb_adds(h, "all layouts<br>");
		else if (*col->layout) {
			rep_html_text(h, col->layout);
			sb_adds(h, "<br>");
		}
		metric_label(h, col->metric, col->unit);
		sb_adds(h, "</th>");
	}
	sb_adds(h, "</tr></thead>\n<tbody>\n");
	int disagree = 0;
	for (size_t r = 0; r < c->nruns; r++) {
		const struct cmp_run *run = &c->runs[r];
		sb_adds(h, "<tr>");
		within_run_cell(h, run);
		for (size_t k = 0; k < ncols; k++) {
			const struct cmp_within *w = NULL;
			for (size_t i = 0; i < c->nrows && !w; i++)
				if (c->rows[i].run == r && w_in_col(&c->rows[i], &cols[k]))
					w = &c->rows[i];
			sb_adds(h, "<td class=\"num\">");
			if (w) {
				disagree |= diff_cell(h, &w->diff, w->s.n, w->ref.n);
				sb_addf(h, "; n = %zu / %zu</span>", w->s.n, w->ref.n);
			} else if (!cols[k].layout && run->ref && !run->complete && run->d->nlayouts > 1) {
				sb_adds(h, "<span class=\"small\">not pooled</span>");
			} else {
				sb_adds(h, "&ndash;");
			}
			sb_adds(h, "</td>");
		}
		sb_adds(h, "</tr>\n");
	}
	sb_adds(h, "</tbody></table></div>\n");
	if (disagree)
		sb_adds(h, disagree_note);
	free(cols);
}

static void within_notes(struct strbuf *h, const struct comparison *c)
{
	sb_adds(h, "<ul class=\"small\">\n<li>Each cell: the percent difference of the mean from the run's "
		   "reference, paired in the same layout, or over all the layouts where both were measured; "
		   "Fieller's 95% interval, Welch's p, and n (compared / reference). In red: the interval "
		   "excludes 0.</li>\n");
	for (size_t r = 0; r < c->nruns; r++) {
		const struct cmp_run *run = &c->runs[r];
		const struct rdata *d = run->d;
		if (!run->complete) {
			sb_addf(h, "<li>Run %s did not complete (", run->label);
			rep_html_text(h, d->run.status);
			sb_addf(h, "; %zu of %zu cells not done)%s</li>\n", d->failed_cells, d->ncells,
				d->nlayouts > 1 ? ": its layouts are shown apart and never pooled, since a pool "
						  "would lean towards the positions that did run." : ".");
		}
		if (d->nresumes)
			sb_addf(h, "<li>Run %s was resumed %zu time%s (<code>rig resume</code>): every cell "
				   "counts once, from its last attempt; %llu sample%s of earlier attempts %s not "
				   "counted.</li>\n", run->label, d->nresumes, d->nresumes > 1 ? "s" : "",
				(unsigned long long)d->superseded, d->superseded == 1 ? "" : "s",
				d->superseded == 1 ? "is" : "are");
	}
	int more = 0;
	for (size_t i = 0; i < c->nrows && !more; i++)
		more = !c->rows[i].headline || c->rows[i].inner;
	if (more)
		sb_adds(h, "<li>Steps inside a cycle or sweep, and the metrics other than each step's main "
			   "one, are in <code>compare-within.csv</code>.</li>\n");
	sb_adds(h, "</ul>\n");
}

int rep_compare_within_write_html(const struct comparison *c, const char *out_dir, struct strbuf *err)
{
	struct strbuf page = STRBUF_INIT, title = STRBUF_INIT, path = STRBUF_INIT;
	sb_addf(&title, "File systems within each of %zu run%s", c->nruns, c->nruns > 1 ? "s" : "");
	rep_html_begin(&page, title.buf);
	sb_adds(&page, "<header><h1>");
	rep_html_text(&page, title.buf);
	sb_adds(&page, "</h1>\n<p class=\"meta\">In each run, every volume or file system against the "
		       "run's reference on the same disk: percent of the reference's mean, Fieller's 95% "
		       "interval, Welch's p. One row per run.</p></header>\n");
	runs_table(&page, c);
	warnings_banner(&page, c);
	sb_adds(&page, "<h2 id=\"within\">Difference from the reference, per run</h2>\n");
	within_table(&page, c);
	within_notes(&page, c);
	rep_html_end(&page);
	sb_addf(&path, "%s/compare.html", out_dir);
	int rc = rep_rout_write_file(path.buf, page.buf, page.len, err);
	sb_release(&page);
	sb_release(&title);
	sb_release(&path);
	return rc;
}
