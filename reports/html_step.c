/*
 * The parts of report.html that are about results: the findings (one
 * sentence per step) and one section per step (figure, summary table,
 * difference table, other metrics, file sets, drift and outliers, module
 * notes). The realized order is in html_order.c.
 *
 * Which figure a step gets: against its cycle or sweep value when it is
 * inside one (lines with interval whiskers); against position when the
 * plan's report.by names position and the step ran on three positions or
 * more; otherwise bars per volume, grouped by layout. Big runs are thinned
 * for the point figures (every k-th point, said in the caption); tables and
 * statistics always use every sample.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fit.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "reports/findings.h"
#include "reports/html_int.h"
#include "reports/summary.h"

/* At most this many points in a scatter figure. */
#define MAX_POINTS 4000
#define MAX_OUTLIER_ROWS 40

static int has_by(const struct rdata *d, const char *f)
{
	for (size_t i = 0; i < d->nby; i++)
		if (!strcmp(d->by[i], f))
			return 1;
	return 0;
}

static int fs_differs(const struct rd_group *g)
{
	return g->fs && strcasecmp(g->fs, g->volume) && strcmp(g->fs, "unknown");
}

static void metric_text(struct strbuf *h, const struct rdata *d, const struct rd_group *g)
{
	rep_html_text(h, rd_str(d, g->metric));
	const char *u = rep_html_unit(rd_str(d, g->unit));
	if (*u) {
		sb_adds(h, " (");
		rep_html_text(h, u);
		sb_adds(h, ")");
	}
}

void rep_html_step_title(struct strbuf *h, const struct rd_template *t)
{
	sb_adds(h, "step ");
	rep_html_text(h, t->path);
	sb_adds(h, " ");
	rep_html_text(h, t->module);
}

/* --- a step's figure --- */

static const char *xlabel_of(const struct rd_template *t, struct strbuf *tmp, const struct rdata *d,
			     size_t g0, size_t g1, int reached)
{
	if (t->inner == 'c')
		return "cycle";
	sb_reset(tmp);
	sb_adds(tmp, t->sweep_var ? t->sweep_var : "value");
	if (reached) {
		sb_adds(tmp, " reached (%)");
		return tmp->buf;
	}
	for (size_t i = g0; i < g1; i++)
		if (d->groups[i].sweep_value && strchr(d->groups[i].sweep_value, '%')) {
			sb_adds(tmp, " (%)");
			break;
		}
	return tmp->buf;
}

static struct fig_series *series_named(struct figure *f, const char *name, int style)
{
	for (size_t k = 0; k < f->nseries; k++)
		if (!strcmp(f->series[k].name, name))
			return &f->series[k];
	return rep_fig_add_series(f, name, style);
}

/* Does the template have a finding of kind k (in a family, or not)? */
static int has_finding(const struct rdata *d, uint32_t ti, enum fnd_kind k, int family)
{
	for (size_t i = 0; i < d->nfindings; i++)
		if (d->findings[i].tmpl == ti && d->findings[i].kind == k &&
		    (d->findings[i].family != 0) == family)
			return 1;
	return 0;
}

const char *rep_html_ylabel(struct rdata *d, const struct rd_template *t)
{
	struct strbuf yl = STRBUF_INIT;
	const char *unit = "";
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++)
		if (d->groups[i].metric == t->headline) {
			unit = rep_html_unit(rd_str(d, d->groups[i].unit));
			break;
		}
	sb_adds(&yl, rd_str(d, t->headline));
	if (!strcmp(unit, "MB/s"))
		sb_adds(&yl, " (MB/s, 10\xe2\x81\xb6 B/s)");
	else if (*unit)
		sb_addf(&yl, " (%s)", unit);
	const char *out = rep_rd_strdup(d, yl.buf);
	sb_release(&yl);
	return out;
}

/* The interaction plot of a crossed design: the metric against position,
 * a line per file system (or volume), means and intervals of the samples
 * pooled over layouts. */
static void interaction_points(struct rdata *d, uint32_t ti, struct figure *f)
{
	const struct rd_template *t = &d->tmpls[ti];
	size_t cap = 0;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++)
		cap += d->groups[i].n;
	double *v = xmalloc((cap ? cap : 1) * sizeof(double));
	const char *lv[64];
	size_t nlv = 0;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		const char *l = rep_fnd_level(d, ti, g);
		if (g->metric != t->headline || !l)
			continue;
		size_t k = 0;
		while (k < nlv && strcmp(lv[k], l))
			k++;
		if (k == nlv && nlv < 64)
			lv[nlv++] = l;
	}
	for (size_t k = 0; k < nlv; k++) {
		struct fig_series *s = rep_fig_add_series(f, lv[k], (int)k);
		int done[64];
		size_t ndone = 0;
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
			const struct rd_group *g = &d->groups[i];
			if (g->metric != t->headline || !rep_fnd_level(d, ti, g) || strcmp(rep_fnd_level(d, ti, g), lv[k]))
				continue;
			size_t q = 0;
			while (q < ndone && done[q] != g->position)
				q++;
			if (q < ndone || ndone == 64)
				continue;
			done[ndone++] = g->position;
			size_t m = 0;
			for (size_t j = i; j < t->first_group + t->ngroups; j++) {
				const struct rd_group *h = &d->groups[j];
				const char *hl = rep_fnd_level(d, ti, h);
				if (h->metric != t->headline || h->position != g->position || !hl || strcmp(hl, lv[k]))
					continue;
				for (size_t r = h->first; r < h->first + h->n; r++) {
					double x = d->samples[d->order[r]].value;
					if (!isnan(x))
						v[m++] = x;
				}
			}
			struct stats_summary ss;
			rep_stats_summarize(v, m, &ss);
			/* Each line a little to the side of the position, so that
			 * whiskers of one position do not hide each other. */
			double dodge = ((double)k - (double)(nlv - 1) / 2) * 0.06;
			if (ss.n)
				rep_fig_add_point(s, g->position + dodge, ss.mean, ss.ci_low, ss.ci_high);
		}
	}
	free(v);
}

/* Whether a sweep's values are written as sizes (4K, 1M), and their range
 * in bytes: the x axis then reads bytes. */
static int sweep_sizes(struct rdata *d, const struct rd_template *t, double *smin, double *smax)
{
	int sizes = 1;
	for (size_t i = t->first_group; sizes && i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != t->headline)
			continue;
		char *end;
		uint64_t bytes;
		const char *why;
		strtod(g->sweep_value, &end); /* a unit after the number, and a size's */
		sizes = *end && units_parse_size(g->sweep_value, &bytes, &why) == 0 &&
			g->sweep_num > 0;
		*smin = fmin(*smin, g->sweep_num);
		*smax = fmax(*smax, g->sweep_num);
	}
	return sizes;
}

/* The headline's means against the cycle, the level reached or the sweep
 * value: a series per layout and volume. */
static void series_points(struct rdata *d, const struct rd_template *t, struct figure *f,
			  int reached)
{
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != t->headline)
			continue;
		struct strbuf sn = STRBUF_INIT;
		sb_adds(&sn, g->volume);
		if (d->nlayouts > 1 && *g->layout)
			sb_addf(&sn, " in %s", g->layout);
		struct fig_series *s = NULL;
		for (size_t k = 0; k < f->nseries && !s; k++)
			if (!strcmp(f->series[k].name, sn.buf))
				s = &f->series[k];
		/* rep_rd_strdup, not rep_rd_intern: the JSON writer may be reading
		 * the intern table in another thread. */
		if (!s)
			s = rep_fig_add_series(f, rep_rd_strdup(d, sn.buf), rep_html_pair_style(d, g->volume, g->layout));
		sb_release(&sn);
		double x = t->inner == 'c' ? g->cycle : reached ? g->reached : g->sweep_num;
		rep_fig_add_point(s, x, g->s.mean, g->s.ci_low, g->s.ci_high);
	}
}

/* The caption of a step's figure: what is drawn against what, and how
 * to read its whiskers and units. */
static void figure_caption(struct rdata *d, const struct rd_template *t, const struct figure *f,
			   const char *what, const char *unit, struct strbuf *cap)
{
	sb_adds(cap, "Mean ");
	rep_html_text(cap, rd_str(d, t->headline));
	sb_addf(cap, " of ");
	rep_html_step_title(cap, t);
	sb_addf(cap, " %s", what);
	if (f->kind == FIG_BARS && d->nlayouts > 1)
		sb_adds(cap, ", grouped by layout");
	sb_adds(cap, d->any_n1 ? "; whiskers: 95% confidence interval of the mean where n &ge; 2."
			       : "; whiskers: 95% confidence interval of the mean (Student t).");
	if (rep_fig_clipped(f))
		sb_adds(cap, " Whiskers clipped at 0: the quantity cannot be negative.");
	if (!strcmp(unit, "MB/s"))
		sb_adds(cap, " MB/s = 10<sup>6</sup> bytes per second.");
}

int rep_html_step_figure(struct rdata *d, uint32_t ti, struct figure *f, struct strbuf *cap,
		  struct strbuf *name)
{
	const struct rd_template *t = &d->tmpls[ti];
	size_t g0 = t->first_group, g1 = g0 + t->ngroups;
	const struct rd_group *first = NULL;
	for (size_t i = g0; i < g1 && !first; i++)
		if (d->groups[i].metric == t->headline)
			first = &d->groups[i];
	if (!first)
		return -1;
	memset(f, 0, sizeof(*f));
	struct strbuf xl = STRBUF_INIT;
	f->ylabel = rep_html_ylabel(d, t);
	f->yzero = 1;
	const char *unit = rep_html_unit(rd_str(d, first->unit));
	int positions = 0, maxpos = 0;
	for (size_t i = g0; i < g1; i++)
		if (d->groups[i].metric == t->headline && d->groups[i].position > maxpos) {
			maxpos = d->groups[i].position;
			positions++;
		}
	int numeric_sweep = t->inner == 's', reached = t->inner == 's';
	for (size_t i = g0; i < g1; i++)
		if (d->groups[i].metric == t->headline && t->inner == 's') {
			if (isnan(d->groups[i].sweep_num))
				numeric_sweep = 0;
			if (isnan(d->groups[i].reached))
				reached = 0;
		}
	/* Sweep values written as sizes (4K, 1M): the x axis reads bytes, on
	 * a log scale when they span a factor of ten or more (block sizes
	 * double: on a linear axis the small ones crowd at zero). */
	double smin = INFINITY, smax = 0;
	int sizes = numeric_sweep && !reached && sweep_sizes(d, t, &smin, &smax);
	const char *what;
	if (t->inner == 'c' || numeric_sweep) {
		f->kind = FIG_LINES;
		f->xint = t->inner == 'c';
		f->xbytes = sizes;
		f->xlog = sizes && smax >= 10 * smin;
		if (f->xlog) {
			sb_reset(&xl);
			sb_addf(&xl, "%s (log scale; 1 kB = 10\xc2\xb3 bytes)",
				t->sweep_var ? t->sweep_var : "value");
			f->xlabel = rep_rd_strdup(d, xl.buf);
		} else {
			f->xlabel = rep_rd_strdup(d, xlabel_of(t, &xl, d, g0, g1, reached));
		}
		what = t->inner == 'c' ? "against the cycle"
		       : reached ? "against the level a fill step reached (mean over repetitions)"
				 : "against the sweep value";
		series_points(d, t, f, reached);
	} else if (has_finding(d, ti, FND_POSITION, 1)) {
		f->kind = FIG_LINES;
		f->xint = 1;
		f->xlabel = "position (1 = start of the disk)";
		what = "against the partition's position, a line per file system (interaction plot: "
		       "parallel lines mean the position effect is the same for each), samples pooled "
		       "over layouts";
		if (rep_fnd_level(d, ti, first) == first->volume)
			what = "against the partition's position, a line per volume (interaction plot: "
			       "parallel lines mean the position effect is the same for each), samples "
			       "pooled over layouts";
		interaction_points(d, ti, f);
	} else if (has_finding(d, ti, FND_POSITION, 0) || (has_by(d, "position") && positions >= 3)) {
		f->kind = FIG_LINES;
		f->xint = 1;
		f->xlabel = "position (1 = start of the disk)";
		what = "against the partition's position";
		for (size_t i = g0; i < g1; i++) {
			const struct rd_group *g = &d->groups[i];
			if (g->metric != t->headline)
				continue;
			const char *sname = *g->layout ? g->layout : "volumes";
			struct fig_series *s = series_named(f, sname, rep_html_style_of(d, NULL, g->layout));
			rep_fig_add_point(s, g->position, g->s.mean, g->s.ci_low, g->s.ci_high);
		}
	} else {
		f->kind = FIG_BARS;
		what = "per volume";
		for (size_t i = g0; i < g1; i++) {
			const struct rd_group *g = &d->groups[i];
			if (g->metric != t->headline)
				continue;
			rep_fig_add_bar(f, d->nlayouts > 1 ? g->layout : NULL,
				    t->inner == 's' ? g->sweep_value : g->volume, g->s.mean, g->s.ci_low,
				    g->s.ci_high, rep_html_style_of(d, g->volume, g->layout));
		}
	}
	figure_caption(d, t, f, what, unit, cap);
	sb_adds(name, "step-");
	sb_adds(name, t->path);
	sb_addf(name, "-%s-%s", t->module, rd_str(d, t->headline));
	sb_release(&xl);
	return 0;
}

static void step_figure(struct hctx *c, struct rdata *d, uint32_t ti)
{
	struct figure f;
	struct strbuf cap = STRBUF_INIT, name = STRBUF_INIT;
	if (rep_html_step_figure(d, ti, &f, &cap, &name) == 0) {
		rep_html_figure(c, &f, name.buf, cap.buf);
		rep_fig_release(&f);
	}
	sb_release(&cap);
	sb_release(&name);
}

/* --- tables --- */

static int varies_layout(const struct rdata *d)
{
	return d->nlayouts > 1;
}

static int any_reached(const struct rdata *d, const struct rd_template *t)
{
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++)
		if (!isnan(d->groups[i].reached))
			return 1;
	return 0;
}

static void factor_head(struct strbuf *h, const struct rdata *d, const struct rd_template *t)
{
	if (varies_layout(d))
		sb_adds(h, "<th>layout</th>");
	if (t->inner == 'c')
		sb_adds(h, "<th class=\"num\">cycle</th>");
	if (t->inner == 's') {
		sb_adds(h, "<th class=\"num\">");
		rep_html_text(h, t->sweep_var);
		sb_adds(h, "</th>");
		if (any_reached(d, t))
			sb_adds(h, "<th class=\"num\">reached</th><th class=\"num\">free space left</th>");
	}
	sb_adds(h, "<th>volume</th>");
}

static void factor_cells(struct strbuf *h, const struct rdata *d, const struct rd_template *t,
			 const struct rd_group *g)
{
	if (varies_layout(d)) {
		sb_adds(h, "<td>");
		rep_html_text(h, g->layout);
		sb_adds(h, "</td>");
	}
	if (t->inner == 'c')
		sb_addf(h, "<td class=\"num\">%u</td>", g->cycle);
	if (t->inner == 's') {
		sb_adds(h, "<td class=\"num\">");
		rep_html_text(h, g->sweep_value);
		sb_adds(h, "</td>");
		if (any_reached(d, t)) {
			/* What the fill step actually reached: a level asked for
			 * may stop short (the volume ran out of space). */
			sb_adds(h, "<td class=\"num\">");
			if (!isnan(g->reached))
				sb_addf(h, "%.2f%%", g->reached);
			else
				sb_adds(h, "\xe2\x80\x93");
			sb_adds(h, "</td><td class=\"num\">");
			if (!isnan(g->reached_free))
				rep_html_bytes(h, g->reached_free);
			else
				sb_adds(h, "\xe2\x80\x93");
			sb_adds(h, "</td>");
		}
	}
	sb_adds(h, "<td>");
	rep_html_text(h, g->volume);
	if (fs_differs(g)) {
		sb_adds(h, " <span class=\"small\">");
		rep_html_text(h, g->fs);
		sb_adds(h, "</span>");
	}
	sb_adds(h, "</td>");
}

static void num_td(struct strbuf *h, double v)
{
	sb_adds(h, "<td class=\"num\">");
	rep_html_num(h, v);
	sb_adds(h, "</td>");
}

/*
 * A metric's table. When its cells recorded passes (rd_group.passes), the
 * best of passes stands next to the mean and its interval, for setting
 * beside a disk-mark tool's figure, with a sentence saying what it is:
 * the statistics use every pass, the best is never the headline.
 */
static void summary_table(struct strbuf *h, const struct rdata *d, const struct rd_template *t,
			  uint32_t metric)
{
	uint32_t passes = 0;
	const struct rd_group *first = NULL;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		if (d->groups[i].metric != metric)
			continue;
		if (!first)
			first = &d->groups[i];
		if (d->groups[i].passes > passes)
			passes = d->groups[i].passes;
	}
	int best = passes > 1;
	sb_adds(h, "<div class=\"wrap\"><table>\n<thead><tr>");
	factor_head(h, d, t);
	sb_adds(h, "<th class=\"num\">pos.</th><th class=\"num\">n</th><th class=\"num\">mean</th>"
		   "<th class=\"num\">sd</th><th class=\"num\">median</th><th class=\"num\">min</th>"
		   "<th class=\"num\">max</th><th class=\"num\">95% CI of the mean</th>");
	if (best)
		sb_adds(h, "<th class=\"num\">best of passes</th>");
	sb_adds(h, "<th class=\"num\">outliers</th><th>cache</th></tr></thead>\n<tbody>\n");
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != metric)
			continue;
		sb_addf(h, "<tr%s>", g->base == (long)i ? " class=\"base\"" : "");
		factor_cells(h, d, t, g);
		sb_addf(h, "<td class=\"num\">%d</td><td class=\"num\">%zu", g->position, g->s.n);
		if (g->nnan)
			sb_addf(h, " <span class=\"small\">(+%zu NaN)</span>", g->nnan);
		sb_adds(h, "</td>");
		num_td(h, g->s.mean);
		num_td(h, g->s.sd);
		num_td(h, g->s.median);
		num_td(h, g->s.min);
		num_td(h, g->s.max);
		sb_adds(h, "<td class=\"num\">");
		if (g->s.n < 2) {
			sb_adds(h, "n/a (n = 1)");
		} else {
			rep_html_num(h, g->s.ci_low);
			sb_adds(h, " to ");
			rep_html_num(h, g->s.ci_high);
		}
		sb_adds(h, "</td>");
		if (best) {
			sb_adds(h, "<td class=\"num\">");
			if (isnan(g->best))
				sb_adds(h, "n/a");
			else
				rep_html_num(h, g->best);
			sb_adds(h, "</td>");
		}
		sb_addf(h, "<td class=\"num\">%s%zu%s</td><td class=\"small\">",
			g->outliers ? "<span class=\"yes\">" : "", g->outliers, g->outliers ? "</span>" : "");
		rep_html_text(h, g->caches);
		sb_adds(h, "</td></tr>\n");
	}
	sb_adds(h, "</tbody></table></div>\n");
	if (best)
		sb_addf(h, "<p class=\"small\">Each cell measured this in up to %u passes. n, the mean, "
			   "its interval and the other statistics use every pass. <b>Best of "
			   "passes</b> is each cell's best pass (%s), the figure disk-mark tools "
			   "print for a run; with repetitions, the median of those over the "
			   "repetitions. It is there to set beside such figures, not to compare "
			   "volumes by.</p>\n",
			passes, rep_summary_better(d, first) < 0 ? "lowest" : "highest");
}

static void diff_table(struct strbuf *h, const struct rdata *d, const struct rd_template *t)
{
	int any = 0;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++)
		any |= d->groups[i].metric == t->headline && d->groups[i].base >= 0;
	if (!any)
		return;
	sb_adds(h, "<h3>Difference from the baseline, ");
	rep_html_text(h, d->baseline);
	sb_adds(h, "</h3>\n<div class=\"wrap\"><table>\n<thead><tr>");
	factor_head(h, d, t);
	sb_adds(h, "<th class=\"num\">mean</th><th class=\"num\">baseline mean</th>"
		   "<th class=\"num\">% of baseline</th><th class=\"num\">difference</th>"
		   "<th class=\"num\">95% CI</th><th class=\"num\">Welch p</th>"
		   "<th>interval excludes 0</th></tr></thead>\n<tbody>\n");
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		if (g->metric != t->headline || g->base < 0)
			continue;
		const struct rd_group *b = &d->groups[g->base];
		int self = g->base == (long)i;
		sb_addf(h, "<tr%s>", self ? " class=\"base\"" : "");
		factor_cells(h, d, t, g);
		num_td(h, g->s.mean);
		num_td(h, b->s.mean);
		sb_adds(h, "<td class=\"num\">");
		if (isnan(g->diff.pct_of_base))
			sb_adds(h, "\xe2\x80\x93");
		else
			sb_addf(h, "%.1f%%", g->diff.pct_of_base);
		sb_adds(h, "</td>");
		if (self) {
			sb_adds(h, "<td class=\"num\">baseline</td><td></td><td></td><td></td></tr>\n");
			continue;
		}
		sb_adds(h, "<td class=\"num\"><b>");
		rep_html_pct(h, g->diff.diff_pct);
		sb_adds(h, "</b></td><td class=\"num\">");
		rep_html_diff_ci(h, g->diff.ci_low, g->diff.ci_high, g->s.n, b->s.n);
		sb_adds(h, "</td><td class=\"num\">");
		rep_html_p_value(h, g->diff.p);
		sb_adds(h, "</td><td>");
		if (isnan(g->diff.ci_low))
			sb_adds(h, "<span class=\"no\">n/a</span>");
		else if (g->diff.ci_low > 0 || g->diff.ci_high < 0)
			sb_adds(h, "<span class=\"yes\">yes</span>");
		else
			sb_adds(h, "<span class=\"no\">no</span>");
		sb_adds(h, "</td></tr>\n");
	}
	sb_adds(h, "</tbody></table></div>\n");
}

/* --- file sets --- */

/* Per-file rates against sizes, a series per volume, with each fitted
 * curve; total files in nsets sets (the figure draws at most MAX_POINTS). */
static void files_figure(struct hctx *c, struct rdata *d, size_t ti, size_t total, size_t nsets)
{
	const struct rd_template *t = &d->tmpls[ti];
	struct figure f;
	memset(&f, 0, sizeof(f));
	f.kind = FIG_POINTS;
	f.xlog = 1;
	f.xbytes = 1;
	f.yzero = 1;
	f.xlabel = "file size (log scale; 1 MB = 10\xe2\x81\xb6 bytes)";
	f.ylabel = "rate (MB/s, 10\xe2\x81\xb6 B/s)";
	size_t stride = total > MAX_POINTS ? (total + MAX_POINTS - 1) / MAX_POINTS : 1;
	const char **labels = xcalloc(nsets, sizeof(*labels));
	size_t li = 0;
	for (size_t i = 0; i < d->nfilesets; i++) {
		const struct rd_fileset *fs = &d->filesets[i];
		if (fs->tmpl != ti)
			continue;
		struct strbuf lab = STRBUF_INIT;
		sb_adds(&lab, fs->volume);
		if (d->nlayouts > 1 && *fs->layout)
			sb_addf(&lab, " in %s", fs->layout);
		if (strcmp(fs->step, t->path))
			sb_addf(&lab, " (step %s)", fs->step);
		labels[li] = rep_rd_strdup(d, lab.buf);
		sb_release(&lab);
		struct fig_series *s = rep_fig_add_series(&f, labels[li++], rep_html_pair_style(d, fs->volume, fs->layout));
		double xmin = INFINITY, xmax = 0;
		for (size_t j = 0; j < fs->n; j++) {
			const struct rd_file *fl = &d->files[d->forder[fs->first + j]];
			if (fl->bytes > 0) {
				xmin = fmin(xmin, (double)fl->bytes);
				xmax = fmax(xmax, (double)fl->bytes);
			}
			if (j % stride || !(fl->seconds > 0))
				continue;
			rep_fig_add_point(s, (double)fl->bytes, (double)fl->bytes / fl->seconds / 1e6, NAN, NAN);
		}
		if (fs->fitted && xmax > 0) {
			struct fig_series *fit = rep_fig_add_series(&f, NULL, s->style);
			fit->line_only = 1;
			for (int k = 0; k <= 60; k++) {
				double x = exp(log(xmin) + (log(xmax) - log(xmin)) * k / 60.0);
				double secs = fs->overhead_s + x / (fs->rate_mbs * 1e6);
				rep_fig_add_point(fit, x, secs > 0 ? x / secs / 1e6 : NAN, NAN, NAN);
			}
		}
	}
	struct strbuf cap = STRBUF_INIT, name = STRBUF_INIT;
	sb_adds(&cap, "Rate of every file of ");
	rep_html_step_title(&cap, t);
	sb_adds(&cap, " against its size, with the least-squares fit of time = overhead + size / rate "
		      "drawn as a curve per volume.");
	if (stride > 1)
		sb_addf(&cap, " Every %zu<sup>th</sup> of %zu files is drawn; the fit uses all.", stride, total);
	sb_addf(&name, "step-%s-%s-files", t->path, t->module);
	rep_html_figure(c, &f, name.buf, cap.buf);
	rep_fig_release(&f);
	free(labels);
	sb_release(&cap);
	sb_release(&name);
}

/* The fits of time = overhead + size / rate, a row per file set. */
static void files_table(struct hctx *c, struct rdata *d, size_t ti)
{
	struct strbuf *h = c->h;
	sb_adds(h, "<div class=\"wrap\"><table>\n<thead><tr>");
	if (d->nlayouts > 1)
		sb_adds(h, "<th>layout</th>");
	sb_adds(h, "<th>step</th><th>volume</th><th class=\"num\">files</th>"
		   "<th class=\"num\">fitted rate (MB/s)</th><th class=\"num\">intercept: overhead per "
		   "file (ms, 95% CI)</th><th class=\"num\">r&sup2;</th></tr></thead>\n<tbody>\n");
	int any_short = 0;
	for (size_t i = 0; i < d->nfilesets; i++) {
		const struct rd_fileset *fs = &d->filesets[i];
		if (fs->tmpl != ti)
			continue;
		sb_adds(h, "<tr>");
		if (d->nlayouts > 1) {
			sb_adds(h, "<td>");
			rep_html_text(h, fs->layout);
			sb_adds(h, "</td>");
		}
		sb_adds(h, "<td>");
		rep_html_text(h, fs->step);
		sb_adds(h, "</td><td>");
		rep_html_text(h, fs->volume);
		sb_addf(h, "</td><td class=\"num\">%zu</td>", fs->n);
		if (!fs->fitted) {
			any_short |= fs->fit == RD_FIT_TOO_FEW;
			sb_adds(h, "<td colspan=\"3\">");
			if (fs->fit == RD_FIT_TOO_FEW)
				sb_addf(h, "no fit: %zu file%s timed (a line needs %d)", fs->npoints,
					fs->npoints == 1 ? "" : "s", FIT_MIN_POINTS);
			else
				sb_adds(h, fs->fit == RD_FIT_ONE_SIZE ? "no fit: one size"
								      : "no fit: time does not grow with size");
			sb_adds(h, "</td></tr>\n");
			continue;
		}
		num_td(h, fs->rate_mbs);
		sb_adds(h, "<td class=\"num\">");
		rep_html_num(h, fs->overhead_s * 1e3);
		sb_adds(h, " (");
		rep_html_num(h, fs->overhead_lo * 1e3);
		sb_adds(h, " to ");
		rep_html_num(h, fs->overhead_hi * 1e3);
		sb_adds(h, ")");
		if (fs->overhead_hi < 0)
			sb_adds(h, " below 0: time is not a line in size here");
		else if (fs->overhead_lo <= 0)
			sb_adds(h, " includes 0");
		sb_addf(h, "</td><td class=\"num\">%.4f</td></tr>\n", fs->r2);
	}
	sb_adds(h, "</tbody></table></div>\n");
	sb_adds(h, "<p class=\"small\">The intercept is the time the fitted line gives a file of 0 "
		   "bytes: a fixed cost per file when its interval lies above 0; an interval that "
		   "includes 0 cannot tell such a cost from none, and one below 0 means the files' "
		   "times do not follow a straight line in size.");
	if (any_short)
		sb_addf(h, " A line has 2 parameters: fewer than %d files fit it too closely to say "
			   "anything (2 files give r&sup2; = 1 and any intercept), so none is shown.",
			FIT_MIN_POINTS);
	sb_adds(h, "</p>\n");
}

/* A step's per-file results (write and read time each file): the figure
 * and the fits' table, when it timed any file. */
static void filesets(struct hctx *c, struct rdata *d, size_t ti)
{
	size_t total = 0, nsets = 0;
	for (size_t i = 0; i < d->nfilesets; i++)
		if (d->filesets[i].tmpl == ti) {
			total += d->filesets[i].n;
			nsets++;
		}
	if (!total)
		return;
	struct strbuf *h = c->h;
	sb_adds(h, "<h3>Per-file results</h3>\n");
	files_figure(c, d, ti, total, nsets);
	files_table(c, d, ti);
}

/* --- drift, outliers, notes --- */

static void drift_outliers(struct strbuf *h, const struct rdata *d, const struct rd_template *t)
{
	size_t checked = 0, flagged = 0, outl = 0;
	for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		checked += !isnan(g->drift.slope);
		flagged += g->drift.flagged;
		outl += g->outliers;
	}
	sb_adds(h, "<h3>Drift and outliers</h3>\n<p>");
	if (!checked)
		sb_adds(h, "Drift along the sequence needs three samples or more per group: not checked "
			   "(too few repetitions).");
	else if (!flagged)
		sb_addf(h, "No drift: in none of the %zu groups checked does the 95%% interval of the slope "
			   "against the sequence number exclude 0.", checked);
	else
		sb_addf(h, "<span class=\"yes\">Drift in %zu of %zu groups</span>: the 95%% interval of the "
			   "slope against the sequence number excludes 0.", flagged, checked);
	sb_addf(h, " %zu sample%s flagged as outliers (|modified z| &gt; 3.5; kept in every statistic).</p>\n",
		outl, outl == 1 ? " is" : "s are");
	if (flagged) {
		sb_adds(h, "<div class=\"wrap\"><table>\n<thead><tr>");
		factor_head(h, d, t);
		sb_adds(h, "<th>metric</th><th class=\"num\">n</th><th class=\"num\">slope per cell</th>"
			   "<th class=\"num\">95% CI</th><th class=\"num\">change over the run, % of mean</th>"
			   "</tr></thead>\n<tbody>\n");
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
			const struct rd_group *g = &d->groups[i];
			if (!g->drift.flagged)
				continue;
			sb_adds(h, "<tr>");
			factor_cells(h, d, t, g);
			sb_adds(h, "<td>");
			rep_html_text(h, rd_str(d, g->metric));
			sb_addf(h, "</td><td class=\"num\">%zu</td>", g->s.n);
			num_td(h, g->drift.slope);
			sb_adds(h, "<td class=\"num\">");
			rep_html_num(h, g->drift.ci_low);
			sb_adds(h, " to ");
			rep_html_num(h, g->drift.ci_high);
			sb_adds(h, "</td><td class=\"num\">");
			uint32_t s0 = d->cells[d->samples[d->order[g->first]].cell].seq;
			uint32_t s1 = d->cells[d->samples[d->order[g->first + g->n - 1]].cell].seq;
			rep_html_pct(h, g->s.mean != 0 ? 100 * g->drift.slope * (s1 - s0) / g->s.mean : NAN);
			sb_adds(h, "</td></tr>\n");
		}
		sb_adds(h, "</tbody></table></div>\n");
	}
	if (outl) {
		sb_adds(h, "<details><summary>Outliers</summary>\n<div class=\"wrap\"><table>\n<thead><tr>"
			   "<th class=\"num\">seq</th><th class=\"num\">rep</th><th>step</th>");
		if (d->nlayouts > 1)
			sb_adds(h, "<th>layout</th>");
		sb_adds(h, "<th>volume</th><th>metric</th><th class=\"num\">value</th>"
			   "<th class=\"num\">group median</th><th class=\"num\">modified z</th></tr></thead>\n<tbody>\n");
		size_t rows = 0;
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
			const struct rd_group *g = &d->groups[i];
			for (size_t j = 0; j < g->n && g->outliers; j++) {
				uint32_t si = d->order[g->first + j];
				if (!(fabs(d->z[si]) > STATS_OUTLIER_Z))
					continue;
				if (rows++ >= MAX_OUTLIER_ROWS)
					continue;
				const struct rd_cell *cl = &d->cells[d->samples[si].cell];
				sb_addf(h, "<tr><td class=\"num\">%u</td><td class=\"num\">%u</td><td>", cl->seq, cl->rep);
				rep_html_text(h, cl->step);
				sb_adds(h, "</td>");
				if (d->nlayouts > 1) {
					sb_adds(h, "<td>");
					rep_html_text(h, g->layout);
					sb_adds(h, "</td>");
				}
				sb_adds(h, "<td>");
				rep_html_text(h, g->volume);
				sb_adds(h, "</td><td>");
				rep_html_text(h, rd_str(d, g->metric));
				sb_adds(h, "</td>");
				num_td(h, d->samples[si].value);
				num_td(h, g->s.median);
				sb_addf(h, "<td class=\"num\">%.1f</td></tr>\n", d->z[si]);
			}
		}
		sb_adds(h, "</tbody></table></div>\n");
		if (rows > MAX_OUTLIER_ROWS)
			sb_addf(h, "<p class=\"small\">%zu more; results.json marks every outlier.</p>\n",
				rows - MAX_OUTLIER_ROWS);
		sb_adds(h, "</details>\n");
	}
}

/*
 * The notes of a step's cells, one row per distinct note with the number
 * of cells. shown: a step without metrics (a `tree` or `churn` with `at`
 * works in a source folder, not on the volumes): its notes are what it
 * did, shown open under a sentence saying so. Returns whether any was.
 */
static int module_notes(struct strbuf *h, const struct rdata *d, size_t ti, int shown)
{
	const char *keys[24], *vals[24];
	size_t counts[24], n = 0, more = 0;
	for (size_t i = 0; i < d->nnotes; i++) {
		const struct rd_note *nt = &d->notes[i];
		if (!nt->seq)
			continue;
		/* Notes are few; a binary search would find the cell, but the
		 * cells are by seq and notes reference them in order. */
		size_t lo = 0, hi = d->ncells;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (d->cells[mid].seq < nt->seq)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= d->ncells || d->cells[lo].seq != nt->seq || d->cells[lo].tmpl != ti)
			continue;
		size_t k = 0;
		while (k < n && !(keys[k] == nt->key && vals[k] == nt->value))
			k++;
		if (k < n) {
			counts[k]++;
		} else if (n < 24) {
			keys[n] = nt->key;
			vals[n] = nt->value;
			counts[n++] = 1;
		} else {
			more++;
		}
	}
	if (!n)
		return 0;
	if (shown)
		sb_adds(h, "<p>This step recorded no metrics on the volumes measured; what it did, "
			   "from its notes:</p>\n<div class=\"wrap\"><table>\n");
	else
		sb_adds(h, "<details><summary>Notes from the module</summary>\n<table>\n");
	sb_adds(h, "<thead><tr><th>note</th><th>value</th><th class=\"num\">cells</th></tr></thead>\n"
		   "<tbody>\n");
	for (size_t k = 0; k < n; k++) {
		sb_adds(h, "<tr><td>");
		rep_html_text(h, keys[k]);
		sb_adds(h, "</td><td>");
		rep_html_text(h, vals[k]);
		sb_addf(h, "</td><td class=\"num\">%zu</td></tr>\n", counts[k]);
	}
	sb_adds(h, "</tbody></table>\n");
	if (shown)
		sb_adds(h, "</div>\n");
	if (more)
		sb_addf(h, "<p class=\"small\">%zu more notes in results.json.</p>\n", more);
	if (!shown)
		sb_adds(h, "</details>\n");
	return 1;
}

static void failed_cells(struct strbuf *h, const struct rdata *d, size_t ti)
{
	size_t n = 0;
	if (!d->failed_cells)
		return; /* no need to look at every cell for every step */
	for (size_t i = 0; i < d->ncells; i++) {
		const struct rd_cell *c = &d->cells[i];
		if (c->tmpl != ti || !strcmp(c->status, "done"))
			continue;
		if (!n++)
			sb_adds(h, "<div class=\"banner\"><b>Cells of this step did not complete:</b><ul>\n");
		if (n > 20)
			continue;
		sb_addf(h, "<li>seq %u (rep %u, step %s, volume ", c->seq, c->rep, c->step);
		rep_html_text(h, d->vols[c->vol].name);
		sb_adds(h, "): ");
		rep_html_text(h, c->status);
		if (c->error) {
			sb_adds(h, " &mdash; ");
			rep_html_text(h, c->error);
		}
		sb_adds(h, "</li>\n");
	}
	if (n > 20)
		sb_addf(h, "<li>and %zu more</li>\n", n - 20);
	if (n)
		sb_adds(h, "</ul>What they measured before stopping is included below.</div>\n");
}

void rep_html_steps(struct hctx *c, struct rdata *d)
{
	struct strbuf *h = c->h;
	for (size_t ti = 0; ti < d->ntmpls; ti++) {
		const struct rd_template *t = &d->tmpls[ti];
		sb_addf(h, "<h2 id=\"step-%s\">Step ", t->path);
		rep_html_text(h, t->path);
		sb_adds(h, ": ");
		rep_html_text(h, t->module);
		sb_adds(h, "</h2>\n");
		if (t->plan_line) {
			sb_adds(h, "<p><code>");
			rep_html_text(h, t->plan_line);
			sb_adds(h, "</code></p>\n");
		}
		failed_cells(h, d, ti);
		if (t->headline == UINT32_MAX) {
			if (!module_notes(h, d, ti, 1))
				sb_adds(h, "<p>This step recorded no metrics.</p>\n");
			continue;
		}
		step_figure(c, d, (uint32_t)ti);
		const struct rd_group *hg = NULL;
		for (size_t i = t->first_group; i < t->first_group + t->ngroups && !hg; i++)
			if (d->groups[i].metric == t->headline)
				hg = &d->groups[i];
		sb_adds(h, "<h3>");
		metric_text(h, d, hg);
		sb_adds(h, "</h3>\n");
		summary_table(h, d, t, t->headline);
		diff_table(h, d, t);
		/* The other metrics, folded. */
		uint32_t seen[64];
		size_t nseen = 0;
		for (size_t i = t->first_group; i < t->first_group + t->ngroups; i++) {
			const struct rd_group *g = &d->groups[i];
			if (g->metric == t->headline)
				continue;
			size_t k = 0;
			while (k < nseen && seen[k] != g->metric)
				k++;
			if (k < nseen || nseen == 64)
				continue;
			seen[nseen++] = g->metric;
		}
		if (nseen) {
			sb_adds(h, "<details><summary>Other metrics: ");
			for (size_t k = 0; k < nseen; k++) {
				if (k)
					sb_adds(h, ", ");
				rep_html_text(h, rd_str(d, seen[k]));
			}
			sb_adds(h, "</summary>\n");
			for (size_t k = 0; k < nseen; k++) {
				const struct rd_group *g = NULL;
				for (size_t i = t->first_group; i < t->first_group + t->ngroups && !g; i++)
					if (d->groups[i].metric == seen[k])
						g = &d->groups[i];
				sb_adds(h, "<h3>");
				metric_text(h, d, g);
				sb_adds(h, "</h3>\n");
				summary_table(h, d, t, seen[k]);
			}
			sb_adds(h, "</details>\n");
		}
		filesets(c, d, ti);
		drift_outliers(h, d, t);
		module_notes(h, d, ti, 0);
	}
}
