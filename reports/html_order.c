/*
 * The realized order of report.html: the drift figure (every step's
 * headline result against its sequence number, as a percentage of its
 * group's mean, so steps of different units share one axis) and the order
 * itself, phase by phase, folded. Big runs are thinned in the figure
 * (every k-th point, said in the caption) and cut in the table (the full
 * order is in results.csv).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"
#include "reports/html_int.h"

/* At most this many points in the drift figure. */
#define MAX_POINTS 4000
/* A group needs this many results to be in the drift figure: fewer show
 * no trend (and the drift test needs as many). */
#define MIN_DRIFT_POINTS 3
/* At most this many rows in the realized-order table. */
#define MAX_ORDER_ROWS 400

/* A group drawn in the drift figure: the headline metric, a mean to
 * divide by, and enough results for a trend to show. */
static int drift_group(const struct rdata *d, const struct rd_group *g)
{
	return g->metric == d->tmpls[g->tmpl].headline && g->s.mean != 0 && isfinite(g->s.mean) &&
	       g->s.n >= MIN_DRIFT_POINTS;
}

static void drift_figure(struct hctx *c, struct rdata *d)
{
	size_t total = 0, left_out = 0;
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (drift_group(d, g))
			total += g->n;
		else if (g->metric == d->tmpls[g->tmpl].headline && g->s.n)
			left_out++;
	}
	if (!total) {
		if (left_out)
			sb_addf(c->h, "<p>No drift figure: it needs %d results or more of a group (the same "
				      "step, volume, layout and cycle or sweep value), and no group has them.</p>\n",
				MIN_DRIFT_POINTS);
		return;
	}
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_POINTS;
	f.xint = 1;
	f.xlabel = "sequence number (realized order)";
	f.ylabel = "result, % of its group's mean";
	size_t stride = total > MAX_POINTS ? (total + MAX_POINTS - 1) / MAX_POINTS : 1, k = 0;
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (!drift_group(d, g))
			continue;
		struct fig_series *s = NULL;
		for (size_t j = 0; j < f.nseries && !s; j++)
			if (!strcmp(f.series[j].name, g->volume))
				s = &f.series[j];
		if (!s)
			s = rep_fig_add_series(&f, g->volume, rep_html_style_of(d, g->volume, g->layout));
		for (size_t j = 0; j < g->n; j++, k++) {
			if (k % stride)
				continue;
			const struct rd_sample *sm = &d->samples[d->order[g->first + j]];
			rep_fig_add_point(s, d->cells[sm->cell].seq, 100 * sm->value / g->s.mean, NAN, NAN);
		}
	}
	struct strbuf cap = STRBUF_INIT;
	sb_adds(&cap, "Every step's headline result against its place in the realized order, as a "
		      "percentage of the mean of its group (same step, volume, layout and cycle or sweep "
		      "value). A trend along the sequence that no group explains is drift.");
	if (left_out)
		sb_addf(&cap, " %zu group%s of fewer than %d results %s left out.", left_out,
			left_out == 1 ? "" : "s", MIN_DRIFT_POINTS, left_out == 1 ? "is" : "are");
	if (stride > 1)
		sb_addf(&cap, " Every %zu<sup>th</sup> of %zu results is drawn.", stride, total);
	rep_html_figure(c, &f, "drift", cap.buf);
	rep_fig_release(&f);
	sb_release(&cap);
}

void rep_html_order(struct hctx *c, struct rdata *d)
{
	struct strbuf *h = c->h;
	sb_adds(h, "<h2 id=\"order\">Realized order and drift</h2>\n");
	if (d->plan)
		sb_addf(h, "<p>Order policy <code>%s</code>; %zu cells.</p>\n",
			plan_order_name(d->plan->order), d->ncells);
	drift_figure(c, d);
	sb_adds(h, "<details><summary>The order, phase by phase</summary>\n<div class=\"wrap\"><table>\n"
		   "<thead><tr><th class=\"num\">seq</th>");
	if (d->nlayouts > 1)
		sb_adds(h, "<th>layout</th>");
	sb_adds(h, "<th class=\"num\">rep</th><th>step</th><th>module</th><th>volumes in order</th>"
		   "<th>started (UTC)</th></tr></thead>\n<tbody>\n");
	size_t rows = 0, i = 0;
	while (i < d->ncells) {
		size_t j = i;
		while (j < d->ncells && d->cells[j].phase == d->cells[i].phase &&
		       d->cells[j].step == d->cells[i].step && d->cells[j].rep == d->cells[i].rep &&
		       d->cells[j].layout == d->cells[i].layout)
			j++;
		if (rows++ < MAX_ORDER_ROWS) {
			const struct rd_cell *c0 = &d->cells[i];
			if (j - i > 1)
				sb_addf(h, "<tr><td class=\"num\">%u&ndash;%u</td>", c0->seq, d->cells[j - 1].seq);
			else
				sb_addf(h, "<tr><td class=\"num\">%u</td>", c0->seq);
			if (d->nlayouts > 1) {
				sb_adds(h, "<td>");
				rep_html_text(h, c0->layout);
				sb_adds(h, "</td>");
			}
			sb_addf(h, "<td class=\"num\">%u</td><td>", c0->rep);
			rep_html_text(h, c0->step);
			sb_adds(h, "</td><td>");
			rep_html_text(h, c0->module);
			sb_adds(h, "</td><td>");
			for (size_t k = i; k < j; k++) {
				if (k > i)
					sb_adds(h, " &rarr; ");
				int bad = strcmp(d->cells[k].status, "done") != 0;
				if (bad)
					sb_adds(h, "<span class=\"yes\">");
				rep_html_text(h, d->vols[d->cells[k].vol].name);
				if (bad) {
					sb_adds(h, " (");
					rep_html_text(h, d->cells[k].status);
					sb_adds(h, ")</span>");
				}
			}
			sb_adds(h, "</td><td class=\"small\">");
			rep_html_text(h, c0->start_utc);
			sb_adds(h, "</td></tr>\n");
		}
		i = j;
	}
	sb_adds(h, "</tbody></table></div>\n");
	if (rows > MAX_ORDER_ROWS)
		sb_addf(h, "<p class=\"small\">%zu more phases; every cell's seq and start time are in "
			   "results.csv.</p>\n", rows - MAX_ORDER_ROWS);
	sb_adds(h, "</details>\n");
}
