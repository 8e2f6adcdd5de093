/*
 * rig compare --within: file system against file system inside each run,
 * tabulated across runs (the halves article's "% difference from APFS, per
 * disk"), and compare-within.csv (see compare.h).
 *
 * A run's reference is found by name, volume names first, then file
 * systems, case-insensitively; without one given, the run's
 * report.baseline when it names a volume. Pairs are made within a layout,
 * as report.baseline makes them: position on the disk changes rates, and a
 * pair in one layout shares the disk's state. A pooled figure joins a
 * volume's layouts (only those where the reference was measured too, so
 * both sides cover the same positions), and only when every cell of the
 * run completed: a layout cut short would tilt the pool towards the
 * positions that did run, so an incomplete run keeps its layouts apart.
 *
 * Buckets are found through the run's string interning, as summary.c's
 * baselines: a key string per (layout, step, volume or file system,
 * metric), interned, indexes a table of chains of groups.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/compare.h"
#include "reports/csv.h"
#include "reports/report_data.h"
#include "reports/report_out.h"

const char rep_compare_within_csv_header[] =
	"run_label,run,disk,status,failed_cells,resumes,step,module,layout,pooled,reference,volume,fs,"
	"metric,unit,n,mean,sd,ref_n,ref_mean,ref_sd,pct_of_reference,diff_pct,diff_ci_low,"
	"diff_ci_high,p_value";

/* The run's reference for `against` (or its baseline volume). */
static void find_reference(struct comparison *c, struct cmp_run *run, const char *against)
{
	const struct rdata *d = run->d;
	struct strbuf m = STRBUF_INIT;
	run->complete = !strcmp(d->run.status, "completed") && !d->failed_cells;
	run->pooled = run->complete && d->nlayouts > 1;
	if (!against) {
		if (d->base_kind == RD_BASE_VOLUME) {
			run->ref = d->baseline;
			return;
		}
		sb_addf(&m, "run %s: no reference: its plan's report.baseline %s; name one with --against",
			run->label, d->baseline ? "names a layout, not a volume" : "is not set");
		rep_compare_warn(c, &m);
		return;
	}
	for (size_t i = 0; i < d->nvols; i++)
		if (!strcasecmp(d->vols[i].name, against)) {
			run->ref = d->vols[i].name;
			return;
		}
	for (size_t i = 0; i < d->nvols; i++)
		if (d->vols[i].fs && !strcasecmp(d->vols[i].fs, against)) {
			run->ref = d->vols[i].fs;
			run->ref_by_fs = 1;
			return;
		}
	sb_addf(&m, "run %s has no volume or file system named '%s'", run->label, against);
	rep_compare_warn(c, &m);
}

static const char *entity(const struct cmp_run *run, const struct rd_group *g)
{
	return run->ref_by_fs ? (g->fs ? g->fs : "?") : g->volume;
}

static uint32_t key_id(struct rdata *d, struct strbuf *sb, const char *layout, const char *step,
		       const char *ent, uint32_t metric)
{
	sb_reset(sb);
	/* \x1e first: never one of summary.c's baseline keys. */
	sb_addf(sb, "\x1ew%s\x1f%s\x1f%s\x1f%u", layout, step, ent, metric);
	return rep_rd_intern_id(d, sb->buf);
}

/* Append the non-NaN values of the groups chained from head. */
static void chain_values(const struct rdata *d, const long *next, long head, double **vals,
			 size_t *nv, size_t *av)
{
	for (long gi = head; gi >= 0; gi = next[gi]) {
		const struct rd_group *g = &d->groups[gi];
		for (size_t s = 0; s < g->n; s++) {
			double v = d->samples[d->order[g->first + s]].value;
			if (isnan(v))
				continue;
			XGROW(*vals, *nv + 1, *av);
			(*vals)[(*nv)++] = v;
		}
	}
}

struct pool {
	long first;                 /* the first compared group (labels) */
	long *pairs;                /* chain heads: compared, reference, ... */
	size_t npairs;
};

static struct cmp_within *add_row(struct comparison *c, size_t r, const struct rd_group *g,
				  const char *layout)
{
	const struct cmp_run *run = &c->runs[r];
	const struct rdata *d = run->d;
	XGROW(c->rows, c->nrows + 1, c->arows);
	struct cmp_within *w = &c->rows[c->nrows++];
	memset(w, 0, sizeof(*w));
	w->run = r;
	w->tmpl = g->tmpl;
	w->step = g->step;
	w->module = g->module;
	w->layout = layout;
	w->volume = run->ref_by_fs ? NULL : g->volume;
	w->fs = g->fs;
	w->metric = rd_str(d, g->metric);
	w->unit = rd_str(d, g->unit);
	w->headline = g->metric == d->tmpls[g->tmpl].headline;
	w->inner = d->tmpls[g->tmpl].inner != 0;
	return w;
}

static void summarize_pair(struct cmp_within *w, double *x, size_t nx, double *b, size_t nb)
{
	rep_stats_summarize(x, nx, &w->s);
	rep_stats_summarize(b, nb, &w->ref);
	rep_stats_diff(&w->s, &w->ref, &w->diff);
}

/* Rows of one run: per layout in the groups' (plan) order, each step's
 * pooled rows after its layouts'. */
static void run_rows(struct comparison *c, size_t r)
{
	struct cmp_run *run = &c->runs[r];
	struct rdata *d = run->d;
	size_t ng = d->ngroups;
	if (!run->ref || !ng)
		return;
	struct strbuf sb = STRBUF_INIT;
	uint32_t *own = xmalloc(ng * sizeof(*own)), *ref = xmalloc(ng * sizeof(*ref));
	uint32_t *pool_key = xmalloc(ng * sizeof(*pool_key));
	for (size_t i = 0; i < ng; i++) {
		const struct rd_group *g = &d->groups[i];
		own[i] = key_id(d, &sb, g->layout, g->step, entity(run, g), g->metric);
		ref[i] = key_id(d, &sb, g->layout, g->step, run->ref, g->metric);
		pool_key[i] = key_id(d, &sb, "\x1e", g->step, entity(run, g), g->metric);
	}
	/* key id -> first group of its chain; next[] links the rest. */
	size_t nk = d->nstrs;
	long *head = xmalloc(nk * sizeof(*head)), *tail = xmalloc(nk * sizeof(*tail));
	long *next = xmalloc(ng * sizeof(*next)), *pool_of = xmalloc(nk * sizeof(*pool_of));
	for (size_t k = 0; k < nk; k++)
		head[k] = tail[k] = pool_of[k] = -1;
	for (size_t i = 0; i < ng; i++) {
		next[i] = -1;
		if (tail[own[i]] >= 0)
			next[tail[own[i]]] = (long)i;
		else
			head[own[i]] = (long)i;
		tail[own[i]] = (long)i;
	}
	struct pool *pools = NULL;
	size_t npools = 0, apools = 0;
	double *x = NULL, *b = NULL;
	size_t ax = 0, ab = 0;
	size_t first_row = c->nrows;
	for (size_t i = 0; i < ng; i++) {
		const struct rd_group *g = &d->groups[i];
		if (head[own[i]] != (long)i || !strcmp(entity(run, g), run->ref) || head[ref[i]] < 0 ||
		    rep_compare_is_setting(g->module, rd_str(d, g->metric)))
			continue;
		size_t nx = 0, nb = 0;
		chain_values(d, next, (long)i, &x, &nx, &ax);
		chain_values(d, next, head[ref[i]], &b, &nb, &ab);
		summarize_pair(add_row(c, r, g, g->layout), x, nx, b, nb);
		if (!run->pooled)
			continue;
		long p = pool_of[pool_key[i]];
		if (p < 0) {
			XGROW(pools, npools + 1, apools);
			pools[npools] = (struct pool){ (long)i, NULL, 0 };
			p = pool_of[pool_key[i]] = (long)npools++;
		}
		struct pool *pl = &pools[p];
		pl->pairs = xrealloc(pl->pairs, (pl->npairs + 2) * sizeof(*pl->pairs));
		pl->pairs[pl->npairs++] = (long)i;
		pl->pairs[pl->npairs++] = head[ref[i]];
	}
	/* Pooled rows: only where two layouts or more paired up. */
	for (size_t p = 0; p < npools; p++) {
		struct pool *pl = &pools[p];
		if (pl->npairs >= 4) {
			size_t nx = 0, nb = 0;
			for (size_t k = 0; k < pl->npairs; k += 2) {
				chain_values(d, next, pl->pairs[k], &x, &nx, &ax);
				chain_values(d, next, pl->pairs[k + 1], &b, &nb, &ab);
			}
			summarize_pair(add_row(c, r, &d->groups[pl->first], NULL), x, nx, b, nb);
		}
		free(pl->pairs);
	}
	/* Each template's pooled rows after its per-layout rows: the rows
	 * were made in plan order, so a stable merge by (template, pooled). */
	size_t nr = c->nrows - first_row;
	struct cmp_within *tmp = xmalloc((nr ? nr : 1) * sizeof(*tmp)), *rows = c->rows + first_row;
	size_t k = 0;
	for (size_t t = 0; t < d->ntmpls; t++)
		for (int pooled = 0; pooled < 2; pooled++)
			for (size_t j = 0; j < nr; j++)
				if (rows[j].tmpl == t && (rows[j].layout == NULL) == pooled)
					tmp[k++] = rows[j];
	memcpy(rows, tmp, nr * sizeof(*tmp));
	free(tmp);
	free(pools);
	free(x);
	free(b);
	free(head);
	free(tail);
	free(next);
	free(pool_of);
	free(own);
	free(ref);
	free(pool_key);
	sb_release(&sb);
}

void rep_compare_within_build(struct comparison *c, const char *against)
{
	struct strbuf m = STRBUF_INIT;
	for (size_t r = 0; r < c->nruns; r++) {
		struct cmp_run *run = &c->runs[r];
		find_reference(c, run, against);
		if (!run->complete && run->d->nlayouts > 1) {
			sb_addf(&m, "run %s: %zu of %zu cells did not complete: its layouts are shown "
				    "apart, not pooled", run->label, run->d->failed_cells, run->d->ncells);
			rep_compare_warn(c, &m);
		}
		run_rows(c, r);
	}
	sb_release(&m);
}

int rep_compare_within_write_csv(const struct comparison *c, const char *path, struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	struct strbuf *b = &o.buf;
	sb_addf(b, "%s\n", rep_compare_within_csv_header);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct cmp_within *w = &c->rows[i];
		const struct cmp_run *run = &c->runs[w->run];
		const struct rdata *d = run->d;
		sb_add_csv(b, run->label);
		sb_addch(b, ',');
		sb_add_csv(b, d->run.id);
		sb_addch(b, ',');
		sb_add_csv(b, run->disk ? run->disk : "existing directories");
		sb_addch(b, ',');
		sb_add_csv(b, d->run.status);
		sb_addf(b, ",%zu,%zu", d->failed_cells, d->nresumes);
		const char *cols[] = { w->step, w->module, w->layout, w->layout ? "no" : "yes", run->ref,
				       w->volume, w->fs, w->metric, w->unit };
		for (size_t j = 0; j < sizeof(cols) / sizeof(cols[0]); j++) {
			sb_addch(b, ',');
			sb_add_csv(b, cols[j] ? cols[j] : "");
		}
		sb_addf(b, ",%zu", w->s.n);
		rep_csv_add_next_double(b, w->s.mean);
		rep_csv_add_next_double(b, w->s.sd);
		sb_addf(b, ",%zu", w->ref.n);
		rep_csv_add_next_double(b, w->ref.mean);
		rep_csv_add_next_double(b, w->ref.sd);
		rep_csv_add_next_double(b, w->diff.pct_of_base);
		rep_csv_add_next_double(b, w->diff.diff_pct);
		rep_csv_add_next_double(b, w->diff.ci_low);
		rep_csv_add_next_double(b, w->diff.ci_high);
		rep_csv_add_next_double(b, w->diff.p);
		sb_addch(b, '\n');
		rep_rout_flush_some(&o);
	}
	return rep_rout_commit(&o, err);
}
