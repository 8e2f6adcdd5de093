/*
 * The Findings section of report.html: the rows of findings.c, strongest
 * first. The page opens with the strongest row's sentence (for a crossed
 * design, the whole analysis: position, file system and interaction), then
 * the figure its source article would print first, then every row, then
 * the source articles' table of differences from the baseline. Nothing here
 * computes a number: the sentences and estimates are the rows'.
 */
#include <math.h>
#include <string.h>

#include "lib/xalloc.h"
#include "reports/findings.h"
#include "reports/findings_int.h"
#include "reports/html_int.h"

static void verdict(struct strbuf *h, const struct rd_finding *f)
{
	sb_adds(h, f->effect ? " <span class=\"yes\">effect</span>"
			     : " <span class=\"no\">no clear effect</span>");
}

static void row_head(struct strbuf *h, const struct rdata *d, const struct rd_finding *f)
{
	sb_adds(h, "<b>");
	rep_html_step_title(h, &d->tmpls[f->tmpl]);
	sb_adds(h, "</b>, ");
	rep_html_text(h, rd_str(d, f->metric));
	sb_adds(h, " <span class=\"small\">(");
	rep_html_text(h, rep_fnd_kind_name(f->kind));
	sb_adds(h, ")</span>: ");
}

/*
 * No row shows an effect: the lead says so in one sentence, with the
 * groups compared when every row compares the same ones, and the widest
 * interval in percent (how much the data cannot rule out), instead of
 * quoting the strongest row as if it were a finding.
 */
static void lead_none(struct strbuf *h, const struct rdata *d)
{
	const struct rd_finding *wide = NULL;
	int same = 1;
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct rd_finding *f = &d->findings[i];
		same &= f->groups && d->findings[0].groups && !strcmp(f->groups, d->findings[0].groups);
		if (f->unit && !strcmp(f->unit, "%") && isfinite(f->ci_low) && isfinite(f->ci_high) &&
		    (!wide || f->ci_high - f->ci_low > wide->ci_high - wide->ci_low))
			wide = f;
	}
	sb_adds(h, "<p class=\"lead\">No step shows a clear difference");
	const char *g = d->findings[0].groups, *vs = same && g ? strstr(g, " vs ") : NULL;
	if (vs) {
		sb_adds(h, " between ");
		rep_html_textn(h, g, (size_t)(vs - g));
		sb_adds(h, " and ");
		rep_html_text(h, vs + 4);
	}
	if (wide) {
		sb_adds(h, "; the widest interval is <b>");
		rep_html_step_title(h, &d->tmpls[wide->tmpl]);
		sb_adds(h, "</b>'s (");
		rep_html_text(h, rd_str(d, wide->metric));
		sb_adds(h, "), ");
		rep_html_pct(h, wide->ci_low);
		sb_adds(h, " to ");
		rep_html_pct(h, wide->ci_high);
	}
	sb_adds(h, ".</p>\n");
}

/* The lead: the strongest row, with the rest of its family in kind order. */
static void lead(struct strbuf *h, const struct rdata *d)
{
	int effect = 0;
	for (size_t i = 0; i < d->nfindings; i++)
		effect |= d->findings[i].effect;
	if (!effect) {
		lead_none(h, d);
		return;
	}
	const struct rd_finding *top = &d->findings[0];
	sb_adds(h, "<p class=\"lead\"><b>");
	rep_html_step_title(h, &d->tmpls[top->tmpl]);
	sb_adds(h, "</b>, ");
	rep_html_text(h, rd_str(d, top->metric));
	sb_adds(h, ": ");
	if (!top->family) {
		rep_html_text(h, top->sentence);
	} else {
		int any = 0;
		for (int k = FND_POSITION; k <= FND_INTERACTION; k++)
			for (size_t i = 0; i < d->nfindings; i++)
				if (d->findings[i].family == top->family && (int)d->findings[i].kind == k) {
					if (any++)
						sb_adds(h, " ");
					rep_html_text(h, d->findings[i].sentence);
				}
	}
	sb_adds(h, "</p>\n");
}

/* Three or more positions on one file system: every step with the lead's
 * unit on one figure, a line per step (the ten-containers figure, read and
 * write together). */
static int position_lead_figure(struct hctx *c, struct rdata *d, const struct rd_finding *top)
{
	const char *unit = NULL;
	const struct rd_template *tt = &d->tmpls[top->tmpl];
	for (size_t i = tt->first_group; i < tt->first_group + tt->ngroups; i++)
		if (d->groups[i].metric == tt->headline)
			unit = rd_str(d, d->groups[i].unit);
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_LINES;
	f.xint = 1;
	f.yzero = 1;
	f.xlabel = "position (1 = start of the disk)";
	f.ylabel = rep_html_ylabel(d, tt);
	struct strbuf cap = STRBUF_INIT, sn = STRBUF_INIT;
	sb_adds(&cap, "Mean ");
	rep_html_text(&cap, rd_str(d, top->metric));
	sb_adds(&cap, " against the partition's position, a line per step:");
	int style = 0;
	for (size_t fi = 0; fi < d->nfindings; fi++) {
		const struct rd_finding *r = &d->findings[fi];
		if (r->kind != FND_POSITION || r->family)
			continue;
		const struct rd_template *t = &d->tmpls[r->tmpl];
		int same = 0;
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++)
			if (d->groups[i].metric == t->headline)
				same = !strcmp(rd_str(d, d->groups[i].unit), unit);
		if (!same)
			continue;
		sb_reset(&sn);
		rep_html_step_title(&sn, t);
		sb_addf(&sn, " %s", rd_str(d, t->headline));
		struct fig_series *s = rep_fig_add_series(&f, rep_rd_strdup(d, sn.buf), style++);
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
			const struct rd_group *g = &d->groups[i];
			if (g->metric == t->headline && g->s.n)
				rep_fig_add_point(s, g->position, g->s.mean, g->s.ci_low, g->s.ci_high);
		}
		sb_addf(&cap, "%s %s", style > 1 ? "," : "", sn.buf);
	}
	sb_adds(&cap, d->any_n1 ? ". Whiskers: 95% confidence interval of the mean where n &ge; 2."
				: ". Whiskers: 95% confidence interval of the mean (Student t).");
	if (rep_fig_clipped(&f))
		sb_adds(&cap, " Whiskers clipped at 0: the quantity cannot be negative.");
	if (unit && !strcmp(unit, "MB/s"))
		sb_adds(&cap, " MB/s = 10<sup>6</sup> bytes per second.");
	int drawn = style > 0;
	if (drawn)
		rep_html_figure(c, &f, "findings-position", cap.buf);
	rep_fig_release(&f);
	sb_release(&cap);
	sb_release(&sn);
	return drawn;
}

static void lead_figure(struct hctx *c, struct rdata *d)
{
	const struct rd_finding *top = &d->findings[0];
	if (top->kind == FND_DIFFERENCE)
		return; /* the step's own bars say it */
	if (top->kind == FND_POSITION && !top->family && position_lead_figure(c, d, top))
		return;
	struct figure f;
	struct strbuf cap = STRBUF_INIT, name = STRBUF_INIT;
	sb_adds(&name, "findings-");
	if (rep_html_step_figure(d, top->tmpl, &f, &cap, &name) == 0) {
		rep_html_figure(c, &f, name.buf, cap.buf);
		rep_fig_release(&f);
	}
	sb_release(&cap);
	sb_release(&name);
}

/* The source articles' table: every volume as % of the baseline, per step. */
static void baseline_table(struct strbuf *h, const struct rdata *d)
{
	if (d->base_kind == RD_BASE_NONE)
		return;
	/* Columns: (layout, volume) of non-baseline groups, first seen order. */
	const char *cl[32], *cv[32];
	size_t nc = 0;
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		const struct rd_template *t = &d->tmpls[g->tmpl];
		if (t->inner || g->metric != t->headline || g->base < 0 || g->base == (long)i)
			continue;
		size_t k = 0;
		while (k < nc && !(cl[k] == g->layout && cv[k] == g->volume))
			k++;
		if (k == nc && nc < 32) {
			cl[nc] = g->layout;
			cv[nc++] = g->volume;
		}
	}
	if (!nc)
		return;
	sb_adds(h, "<h3>Difference from ");
	rep_html_text(h, d->baseline);
	sb_adds(h, " (percent of its mean; 95% interval)</h3>\n<div class=\"wrap\"><table>\n<thead><tr><th>step</th>");
	for (size_t k = 0; k < nc; k++) {
		sb_adds(h, "<th class=\"num\">");
		rep_html_text(h, cv[k]);
		if (d->nlayouts > 1 && *cl[k]) {
			sb_adds(h, "<br><span class=\"small\">");
			rep_html_text(h, cl[k]);
			sb_adds(h, "</span>");
		}
		sb_adds(h, "</th>");
	}
	sb_adds(h, "</tr></thead>\n<tbody>\n");
	for (size_t ti = 0; ti < d->ntmpls; ti++) {
		const struct rd_template *t = &d->tmpls[ti];
		if (t->inner || t->headline == UINT32_MAX)
			continue;
		int any = 0;
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++)
			any |= d->groups[i].metric == t->headline && d->groups[i].base >= 0;
		if (!any)
			continue;
		sb_adds(h, "<tr><td>");
		rep_html_step_title(h, t);
		sb_adds(h, " <span class=\"small\">");
		rep_html_text(h, rd_str(d, t->headline));
		sb_adds(h, "</span></td>");
		for (size_t k = 0; k < nc; k++) {
			const struct rd_group *g = NULL;
			for (size_t i = t->first_group; i < t->first_group + t->ngroups && !g; i++) {
				const struct rd_group *c = &d->groups[i];
				if (c->metric == t->headline && c->layout == cl[k] && c->volume == cv[k] &&
				    c->base >= 0)
					g = c;
			}
			sb_adds(h, "<td class=\"num\">");
			if (g) {
				sb_adds(h, "<b>");
				rep_html_pct(h, g->diff.diff_pct);
				sb_adds(h, "</b><br><span class=\"small\">");
				rep_html_diff_ci(h, g->diff.ci_low, g->diff.ci_high, g->s.n, d->groups[g->base].s.n);
				sb_adds(h, "</span>");
			}
			sb_adds(h, "</td>");
		}
		sb_adds(h, "</tr>\n");
	}
	sb_adds(h, "</tbody></table></div>\n");
}

/* Step ti's rows, strongest first, as one compact table: kind, groups,
 * estimate, 95% interval, p, the provisioned volumes a row rests on, the
 * verdict. Every row is here; sentences are written only for the lead and
 * the rows with an effect. */
static void step_table(struct strbuf *h, const struct rdata *d, uint32_t ti)
{
	sb_adds(h, "<div class=\"wrap\"><table>\n<caption>");
	rep_html_step_title(h, &d->tmpls[ti]);
	sb_adds(h, "</caption>\n<thead><tr><th>metric</th><th>kind</th><th>groups</th>"
		   "<th class=\"num\">estimate</th><th class=\"num\">95% interval</th>"
		   "<th class=\"num\">p</th><th class=\"num\">units</th><th>verdict</th></tr>"
		   "</thead>\n<tbody>\n");
	struct strbuf p = STRBUF_INIT;
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct rd_finding *f = &d->findings[i];
		if (f->tmpl != ti)
			continue;
		sb_adds(h, "<tr><td>");
		rep_html_text(h, rd_str(d, f->metric));
		sb_adds(h, "</td><td>");
		rep_html_text(h, rep_fnd_kind_name(f->kind));
		sb_adds(h, "</td><td>");
		rep_html_text(h, f->groups);
		sb_adds(h, "</td><td class=\"num\">");
		if (f->unit && !strcmp(f->unit, "%")) {
			rep_html_pct(h, f->estimate);
			sb_adds(h, "</td><td class=\"num\">");
			if (isnan(f->ci_low) || isnan(f->ci_high)) {
				sb_adds(h, "no interval");
			} else {
				rep_html_pct(h, f->ci_low);
				sb_adds(h, " to ");
				rep_html_pct(h, f->ci_high);
			}
		} else {
			struct strbuf ec = STRBUF_INIT, cc = STRBUF_INIT;
			rep_fnd_add_est_cells(&ec, &cc, f->estimate, f->ci_low, f->ci_high, f->unit);
			rep_html_text(h, ec.buf);
			sb_adds(h, "</td><td class=\"num\">");
			rep_html_text(h, cc.buf);
			sb_release(&ec);
			sb_release(&cc);
		}
		sb_adds(h, "</td><td class=\"num\">");
		sb_reset(&p);
		rep_fnd_add_p(&p, f->p);
		/* the column says p: "0.188", "< 0.001" */
		const char *pt = !strncmp(p.buf, "p = ", 4) ? p.buf + 4 : !strncmp(p.buf, "p ", 2)
			       ? p.buf + 2 : p.buf;
		rep_html_text(h, *pt ? pt : "\xe2\x80\x93");
		sb_addf(h, "</td><td class=\"num\">%zu</td><td>", f->units);
		sb_adds(h, f->effect ? "<span class=\"yes\">effect</span>"
				     : "<span class=\"no\">no clear effect</span>");
		sb_adds(h, "</td></tr>\n");
	}
	sb_release(&p);
	sb_adds(h, "</tbody></table></div>\n");
}

void rep_html_findings(struct hctx *c, struct rdata *d)
{
	struct strbuf *h = c->h;
	sb_adds(h, "<h2 id=\"findings\">Findings</h2>\n");
	if (!d->nfindings) {
		sb_adds(h, "<p>No step recorded a result.</p>\n");
		return;
	}
	lead(h, d);
	lead_figure(c, d);
	/* Sentences for what shows an effect; every row in its step's table. A
	 * ratio without an interval describes, it does not find: table only. */
	int listed = 0;
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct rd_finding *f = &d->findings[i];
		if (!f->effect)
			continue;
		sb_adds(h, listed++ ? "<li>" : "<ul class=\"findings\">\n<li>");
		row_head(h, d, f);
		rep_html_text(h, f->sentence);
		verdict(h, f);
		sb_adds(h, "</li>\n");
	}
	if (listed)
		sb_adds(h, "</ul>\n");
	for (uint32_t ti = 0; ti < d->ntmpls; ti++) {
		int has = 0;
		for (size_t i = 0; i < d->nfindings && !has; i++)
			has = d->findings[i].tmpl == ti;
		if (has)
			step_table(h, d, ti);
	}
	/* The other rows' sentences stay at hand, folded: why there is no
	 * interval, what a ratio describes. */
	if ((size_t)listed < d->nfindings) {
		sb_addf(h, "<details><summary>The %zu row%s without a clear effect, as sentences"
			   "</summary>\n<ul class=\"findings\">\n", d->nfindings - (size_t)listed,
			d->nfindings - (size_t)listed == 1 ? "" : "s");
		for (size_t i = 0; i < d->nfindings; i++) {
			const struct rd_finding *f = &d->findings[i];
			if (f->effect)
				continue;
			sb_adds(h, "<li>");
			row_head(h, d, f);
			rep_html_text(h, f->sentence);
			sb_adds(h, "</li>\n");
		}
		sb_adds(h, "</ul></details>\n");
	}
	sb_adds(h, "<p class=\"small\">Every row is also in <code>findings.csv</code>. "
		   "Percentages of a crossed design come from a two-factor model on the logarithm "
		   "of the metric with the provisioned volumes as the units (a random intercept "
		   "per volume, or the volumes' means); trends and ratios from least squares and "
		   "Fieller's interval (Methods).</p>\n");
	int differences = 0;
	for (size_t i = 0; i < d->nfindings; i++)
		differences |= d->findings[i].kind == FND_DIFFERENCE;
	if (d->base_kind == RD_BASE_NONE && differences)
		sb_adds(h, "<p class=\"small\">The plan names no <code>report.baseline</code>, so a "
			   "step without a design to analyse compares its lowest mean with its "
			   "highest.</p>\n");
	baseline_table(h, d);
}
