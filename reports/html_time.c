/*
 * report.html, Methods: where the run's time went (report_time.h), per
 * layout with the estimate the run started with, and per step. Only the
 * categories that took time are columns; every number is in time.csv,
 * per cell.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "reports/html_int.h"
#include "reports/report_time.h"

static void secs(struct strbuf *h, double v)
{
	char buf[32];
	if (isnan(v))
		snprintf(buf, sizeof(buf), "\xe2\x80\x93");
	else if (v >= 100)
		snprintf(buf, sizeof(buf), "%.0f", v);
	else if (v >= 0.001)
		snprintf(buf, sizeof(buf), "%.3g", v);
	else
		snprintf(buf, sizeof(buf), "%s", v > 0 ? "&lt;0.001" : "0");
	sb_adds(h, buf);
}

static void share(struct strbuf *h, double v)
{
	if (isnan(v))
		sb_adds(h, "\xe2\x80\x93");
	else
		sb_addf(h, "%.1f%%", 100 * v);
}

/* "1 h 02 min", "3 min 04 s", "12.3 s" */
static void duration(struct strbuf *h, double s)
{
	if (s >= 3600)
		sb_addf(h, "%.0f h %02.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
	else if (s >= 60)
		sb_addf(h, "%.0f min %02.0f s", floor(s / 60), floor(fmod(s, 60)));
	else
		sb_addf(h, "%.3g s", s);
}

static void head(struct strbuf *h, const char *first, const int *shown, int estimate)
{
	sb_addf(h, "<div class=\"wrap\"><table>\n<thead><tr><th>%s</th>", first);
	if (estimate)
		sb_adds(h, "<th class=\"num\">estimate (s)</th>");
	sb_adds(h, "<th class=\"num\">wall (s)</th>");
	if (estimate)
		sb_adds(h, "<th class=\"num\">wall / estimate</th>");
	for (int c = 0; c < RT_NCAT; c++)
		if (shown[c])
			sb_addf(h, "<th class=\"num\">%s (s)</th>", mod_run_time_name((enum run_time_cat)c));
	sb_adds(h, "<th class=\"num\">measured share</th></tr></thead>\n<tbody>\n");
}

static void row(struct strbuf *h, const char *name, const double s[RT_NCAT], const int *shown,
		int estimate, double est, size_t not_estimated)
{
	sb_adds(h, "<tr><td>");
	rep_html_text(h, name);
	sb_adds(h, "</td>");
	double wall = rep_rtime_wall(s);
	if (estimate) {
		sb_adds(h, "<td class=\"num\">");
		secs(h, est);
		if (not_estimated)
			sb_addf(h, " <span class=\"small\">(%zu cells not estimated)</span>",
				not_estimated);
		sb_adds(h, "</td>");
	}
	sb_adds(h, "<td class=\"num\">");
	secs(h, wall);
	sb_adds(h, "</td>");
	if (estimate) {
		sb_adds(h, "<td class=\"num\">");
		if (est > 0 && wall > 0)
			sb_addf(h, "%.2f", wall / est);
		else
			sb_adds(h, "\xe2\x80\x93");
		sb_adds(h, "</td>");
	}
	for (int c = 0; c < RT_NCAT; c++) {
		if (!shown[c])
			continue;
		sb_adds(h, "<td class=\"num\">");
		secs(h, s[c]);
		sb_adds(h, "</td>");
	}
	sb_adds(h, "<td class=\"num\">");
	share(h, rep_rtime_share(s));
	sb_adds(h, "</td></tr>\n");
}

/* Per step (the report's sections): its cells' time, summed. */
static void by_step(struct strbuf *h, const struct rdata *d, const int *shown)
{
	if (!d->ntmpls)
		return;
	double (*s)[RT_NCAT] = xcalloc(d->ntmpls, sizeof(*s));
	size_t *n = xcalloc(d->ntmpls, sizeof(*n));
	const struct rd_time *t = d->time;
	for (size_t i = 0; i < t->nscopes; i++) {
		const struct rt_scope *sc = &t->scopes[i];
		const struct rd_cell *cell = sc->seq ? rep_rd_cell_of(d, sc->seq) : NULL;
		if (!cell || cell->tmpl >= d->ntmpls)
			continue;
		uint32_t k = cell->tmpl;
		n[k]++;
		for (int c = 0; c < RT_NCAT; c++)
			s[k][c] += sc->s[c];
	}
	int step_shown[RT_NCAT];
	for (int c = 0; c < RT_NCAT; c++)
		step_shown[c] = shown[c] && c != RT_PROVISION && c != RT_TEARDOWN && c != RT_REPORT;
	head(h, "step", step_shown, 0);
	struct strbuf name = STRBUF_INIT;
	for (size_t k = 0; k < d->ntmpls; k++) {
		if (!n[k])
			continue;
		sb_reset(&name);
		sb_addf(&name, "%s %s (%zu cell%s)", d->tmpls[k].path, d->tmpls[k].module, n[k],
			n[k] == 1 ? "" : "s");
		row(h, name.buf, s[k], step_shown, 0, NAN, 0);
	}
	sb_release(&name);
	sb_adds(h, "</tbody></table></div>\n");
	free(s);
	free(n);
}

void rep_html_time(struct hctx *c, const struct rdata *d)
{
	struct strbuf *h = c->h;
	const struct rd_time *t = d->time;
	sb_adds(h, "<h3 id=\"time\">Where the time went</h3>\n");
	if (!t || !t->recorded) {
		sb_adds(h, "<p class=\"small\">Not recorded: the run's store has no time accounting "
			   "(it was written by a rig before results store schema 4).</p>\n");
		return;
	}
	double wall = rep_rtime_wall(t->total) - t->total[RT_REPORT];
	sb_adds(h, "<p class=\"small\">Every moment of the run is counted in exactly one category: "
		   "<b>provision</b> and <b>teardown</b> of the target, <b>setup</b> (a step's work "
		   "outside its timed intervals, such as laying out test files, and all of a step "
		   "that prepares the volume: building trees, filling), <b>flush</b> (cache "
		   "defeat before read steps), <b>pause</b> (waits the plan asks for), "
		   "<b>measured</b> (the intervals steps time for their results), <b>store</b> "
		   "(writing results.db), <b>report</b> and <b>other</b> (rig's own work between "
		   "them). The <b>measured share</b> is measured time over wall time, report "
		   "generation left out. ");
	sb_adds(h, "The run took ");
	duration(h, wall);
	sb_adds(h, ", of which ");
	duration(h, t->total[RT_MEASURED]);
	sb_adds(h, " measured: a measured share of <b>");
	share(h, rep_rtime_share(t->total));
	sb_adds(h, "</b>. ");
	if (t->total[RT_REPORT] > 0) {
		sb_adds(h, "Writing the reports after the run took ");
		duration(h, t->total[RT_REPORT]);
		sb_adds(h, ". ");
	} else {
		sb_adds(h, "Report generation is recorded after the reports are written, so this "
			   "page does not hold it (<code>rig report</code> redraws it with it). ");
	}
	int estimate = !isnan(t->estimate);
	if (estimate) {
		sb_adds(h, "The estimate is what <code>rig plan</code> gives for the plan with this "
			   "run's seed, recorded when the run started");
		if (!isnan(t->assumed_rate))
			sb_addf(h, " (at an assumed %.0f MB/s)", t->assumed_rate / 1e6);
		sb_adds(h, ". ");
	}
	if (d->nresumes)
		sb_adds(h, "The run was resumed: its times add up every attempt. ");
	sb_adds(h, "Per cell in <code>time.csv</code>.</p>\n");

	int shown[RT_NCAT];
	for (int k = 0; k < RT_NCAT; k++)
		shown[k] = t->total[k] > 0 || k == RT_MEASURED;
	head(h, "layout", shown, estimate);
	double run_s[RT_NCAT] = { 0 };
	for (size_t i = 0; i < t->nscopes; i++)
		if (t->scopes[i].layout_index < 0)
			for (int k = 0; k < RT_NCAT; k++)
				run_s[k] += t->scopes[i].s[k];
	for (size_t i = 0; i < t->nlayouts; i++) {
		const struct rt_layout *l = &t->layouts[i];
		row(h, *l->layout ? l->layout : "(the folders)", l->s, shown, estimate, l->estimate,
		    l->not_estimated);
	}
	row(h, "the run around the layouts", run_s, shown, estimate, NAN, 0);
	row(h, "total", t->total, shown, estimate, t->estimate, 0);
	sb_adds(h, "</tbody></table></div>\n");
	by_step(h, d, shown);
}
