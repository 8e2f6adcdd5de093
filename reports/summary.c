/*
 * Groups, their statistics and summary.csv (see summary.h).
 *
 * Grouping sorts once: every cell gets a rank from (step template, layout,
 * step path, volume position, volume name); every sample a 64-bit key of
 * (cell rank, metric rank, cell index), so one qsort of a million keys
 * orders the samples into groups, each group's samples by sequence number.
 * The metric rank puts the template's headline metric (rate, iops, ...)
 * first, then the others in the order they were first measured.
 *
 * Baselines (report.baseline): a volume name compares every volume of a
 * layout with that volume in the same layout, step path and metric (the
 * source articles' "% of APFS", per layout); a layout name compares every
 * volume with the same volume of the baseline layout. Drift is the slope of
 * a group's values along the sequence (so across repetitions): a group
 * whose values change with the cycle or sweep value is compared only with
 * itself, never across those factors.
 */
#include "reports/summary.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fit.h"
#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "plan/plan.h"
#include "reports/csv.h"
#include "reports/findings.h"
#include "reports/report_data.h"
#include "reports/report_out.h"
#include "reports/stats.h"

/* --- templates --- */

/* "2.cycle3.1" -> "2.cycle.1"; *inner the innermost factor, *sweep_index
 * the innermost sweep's value position. */
static void template_of(const char *step, struct strbuf *out, char *inner, uint32_t *sweep_index)
{
	*inner = 0;
	*sweep_index = 0;
	for (const char *p = step; *p;) {
		int c = !strncmp(p, "cycle", 5), s = !strncmp(p, "sweep", 5);
		if (c || s) {
			sb_adds(out, c ? "cycle" : "sweep");
			*inner = c ? 'c' : 's';
			p += 5;
			unsigned long v = strtoul(p, (char **)&p, 10);
			if (s)
				*sweep_index = (uint32_t)v;
			continue;
		}
		sb_addch(out, *p++);
	}
}

/* The plan step a template names, or NULL. */
static const struct plan_step *plan_step_of(const struct plan *p, const char *tmpl)
{
	if (!p)
		return NULL;
	const struct plan_step *steps = p->steps, *st = NULL;
	size_t n = p->nsteps;
	const char *s = tmpl;
	while (*s) {
		if (!strncmp(s, "cycle", 5) || !strncmp(s, "sweep", 5)) {
			s += 5;
		} else {
			char *end;
			unsigned long i = strtoul(s, &end, 10);
			if (end == s || i < 1 || i > n)
				return NULL;
			st = &steps[i - 1];
			steps = st->steps;
			n = st->nsteps;
			s = end;
		}
		if (*s == '.')
			s++;
		else if (*s)
			return NULL;
	}
	return st;
}

static const char *plan_line(struct rdata *d, const struct plan_step *st)
{
	const char *t = d->run.plan_text;
	if (!st || !t || st->mark.line < 1)
		return NULL;
	for (int l = 1; l < st->mark.line && t; l++) {
		t = strchr(t, '\n');
		if (t)
			t++;
	}
	if (!t)
		return NULL;
	while (*t == ' ' || *t == '\t' || *t == '-')
		t++;
	const char *e = strchr(t, '\n');
	size_t n = e ? (size_t)(e - t) : strlen(t);
	while (n && (t[n - 1] == ' ' || t[n - 1] == '\r'))
		n--;
	char *line = xstrndup(t, n);
	const char *out = rep_rd_strdup(d, line);
	free(line);
	return out;
}

static int cmp_tmpl(const void *a, const void *b)
{
	return rep_rd_step_cmp(((const struct rd_template *)a)->path,
			   ((const struct rd_template *)b)->path);
}

/* Build the templates; tid[step string id] = template index. */
static void build_templates(struct rdata *d)
{
	uint32_t n0 = d->nstrs;
	uint32_t *tid = xmalloc((n0 ? n0 : 1) * sizeof(*tid));
	memset(tid, 0xff, (n0 ? n0 : 1) * sizeof(*tid));
	size_t alloc = 0;
	struct strbuf sb = STRBUF_INIT;
	/* First pass: one template per distinct template path. */
	for (size_t i = 0; i < d->ncells; i++) {
		struct rd_cell *c = &d->cells[i];
		uint32_t sid = rep_rd_intern_id(d, c->step);
		if (sid < n0 && tid[sid] != UINT32_MAX)
			continue;
		sb_reset(&sb);
		char inner;
		uint32_t sidx;
		template_of(c->step, &sb, &inner, &sidx);
		const char *path = rep_rd_intern(d, sb.buf);
		size_t k = 0;
		while (k < d->ntmpls && d->tmpls[k].path != path)
			k++;
		if (k == d->ntmpls) {
			XGROW(d->tmpls, d->ntmpls + 1, alloc);
			struct rd_template *t = &d->tmpls[d->ntmpls++];
			memset(t, 0, sizeof(*t));
			t->path = path;
			t->module = c->module;
			t->mod = mod_find(c->module);
			t->inner = inner;
			t->sweep_var = inner == 's' ? c->sweep_var : NULL;
			t->plan_line = plan_line(d, plan_step_of(d->plan, path));
			t->headline = UINT32_MAX;
		}
		if (sid < n0)
			tid[sid] = (uint32_t)k; /* provisional: before sorting */
	}
	if (d->ntmpls > 1)
		qsort(d->tmpls, d->ntmpls, sizeof(*d->tmpls), cmp_tmpl);
	/* Second pass: each cell's template, computed once per step path. */
	memset(tid, 0xff, (n0 ? n0 : 1) * sizeof(*tid));
	for (size_t i = 0; i < d->ncells; i++) {
		struct rd_cell *c = &d->cells[i];
		uint32_t sid = rep_rd_intern_id(d, c->step);
		if (sid < n0 && tid[sid] != UINT32_MAX) {
			c->tmpl = tid[sid];
			continue;
		}
		sb_reset(&sb);
		char inner;
		uint32_t sidx;
		template_of(c->step, &sb, &inner, &sidx);
		const char *path = rep_rd_intern(d, sb.buf);
		size_t k = 0;
		while (k < d->ntmpls && d->tmpls[k].path != path)
			k++;
		c->tmpl = (uint32_t)k;
		if (sid < n0)
			tid[sid] = (uint32_t)k;
	}
	sb_release(&sb);
	free(tid);
}

/* --- grouping --- */

struct rank_ctx {
	const struct rdata *d;
	const uint32_t *step_rank;  /* by string id */
};
static struct rank_ctx rank_ctx; /* qsort has no context argument */

static int cmp_cells(const void *a, const void *b)
{
	const struct rdata *d = rank_ctx.d;
	const struct rd_cell *x = &d->cells[*(const uint32_t *)a], *y = &d->cells[*(const uint32_t *)b];
	if (x->tmpl != y->tmpl)
		return x->tmpl < y->tmpl ? -1 : 1;
	int lx = d->vols[x->vol].layout_index, ly = d->vols[y->vol].layout_index;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->layout != y->layout)
		return strcmp(x->layout, y->layout);
	if (x->step != y->step)
		return rep_rd_step_cmp(x->step, y->step);
	const struct rd_volume *vx = &d->vols[x->vol], *vy = &d->vols[y->vol];
	if (vx->position != vy->position)
		return vx->position < vy->position ? -1 : 1;
	if (vx->name != vy->name)
		return strcmp(vx->name, vy->name);
	return 0;
}

struct skey {
	uint64_t key;
	uint32_t idx;
};

/* Sort by key, stable (LSD radix, a byte at a time; bytes that are the
 * same in every key are skipped). Equal keys keep their order, which is
 * measurement order. */
static void radix_sort(struct skey *a, size_t n)
{
	/* Each pass scatters from one buffer into the other; the result is
	 * copied back once at the end if it lies in the scratch one. */
	struct skey *tmp = xmalloc((n ? n : 1) * sizeof(*tmp)), *src = a, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((src[i].key >> shift) & 0xff) + 1]++;
		int single = 0;
		for (int b = 1; b <= 256; b++)
			single |= count[b] == n;
		if (single || n < 2)
			continue;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & 0xff]++] = src[i];
		struct skey *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
}

/* Rank every cell by (template, layout, step path, position, volume):
 * the distinct (step, volume) pairs are few, so they are sorted with
 * cmp_cells and the cells take their pair's rank. */
static void rank_cells(struct rdata *d, uint32_t *crank)
{
	size_t nc = d->ncells, nslots = 4096; /* grows when needed */
	uint64_t *skeys = NULL;
	uint32_t *sval = NULL, *rep = NULL, npairs = 0, apairs = 0;
	uint32_t *pair = xmalloc((nc ? nc : 1) * sizeof(*pair));
	skeys = xmalloc(nslots * sizeof(*skeys));
	sval = xmalloc(nslots * sizeof(*sval));
	memset(skeys, 0xff, nslots * sizeof(*skeys));
	for (size_t i = 0; i < nc; i++) {
		const struct rd_cell *c = &d->cells[i];
		uint64_t k = ((uint64_t)rep_rd_intern_id(d, c->step) << 32) | c->vol;
		if ((npairs + 1) * 2 > nslots) {
			/* Rehash into twice the slots. */
			size_t ns2 = nslots * 2;
			uint64_t *k2 = xmalloc(ns2 * sizeof(*k2));
			uint32_t *v2 = xmalloc(ns2 * sizeof(*v2));
			memset(k2, 0xff, ns2 * sizeof(*k2));
			for (size_t j = 0; j < nslots; j++) {
				if (skeys[j] == UINT64_MAX)
					continue;
				size_t h = (size_t)((skeys[j] * 0x9e3779b97f4a7c15ull) >> 20) & (ns2 - 1);
				while (k2[h] != UINT64_MAX)
					h = (h + 1) & (ns2 - 1);
				k2[h] = skeys[j];
				v2[h] = sval[j];
			}
			free(skeys);
			free(sval);
			skeys = k2;
			sval = v2;
			nslots = ns2;
		}
		size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (nslots - 1);
		while (skeys[h] != UINT64_MAX && skeys[h] != k)
			h = (h + 1) & (nslots - 1);
		if (skeys[h] == UINT64_MAX) {
			skeys[h] = k;
			sval[h] = npairs;
			XGROW(rep, npairs + 1, apairs);
			rep[npairs++] = (uint32_t)i;
		}
		pair[i] = sval[h];
	}
	/* Sort the pairs' representative cells; equal ones share a rank. */
	uint32_t *order = xmalloc((npairs ? npairs : 1) * sizeof(*order));
	uint32_t *prank = xmalloc((npairs ? npairs : 1) * sizeof(*prank));
	if (npairs)
		memcpy(order, rep, npairs * sizeof(*order));
	rank_ctx.d = d;
	if (npairs > 1)
		qsort(order, npairs, sizeof(*order), cmp_cells);
	/* order holds cell indices; map each back to its pair. */
	uint32_t r = 0;
	for (uint32_t i = 0; i < npairs; i++) {
		if (i && cmp_cells(&order[i - 1], &order[i]) != 0)
			r++;
		prank[pair[order[i]]] = r;
	}
	for (size_t i = 0; i < nc; i++)
		crank[i] = prank[pair[i]];
	free(order);
	free(prank);
	free(rep);
	free(pair);
	free(skeys);
	free(sval);
}

static double sweep_number(const char *v)
{
	if (!v)
		return NAN;
	char *end;
	double x = strtod(v, &end);
	if (end == v)
		return NAN;
	if (!*end || !strcmp(end, "%"))
		return x;
	uint64_t bytes;
	const char *why;
	if (units_parse_size(v, &bytes, &why) == 0)
		return (double)bytes;
	return NAN;
}

static void add_cache(struct rdata *d, struct rd_group *g, const char *cache)
{
	if (!*cache)
		cache = "none";
	if (!g->caches) {
		g->caches = cache;
		return;
	}
	/* Joined list, each method once. */
	const char *p = g->caches;
	size_t n = strlen(cache);
	while (p) {
		if (!strncmp(p, cache, n) && (p[n] == ',' || !p[n]))
			return;
		p = strstr(p, ", ");
		if (p)
			p += 2;
	}
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s, %s", g->caches, cache);
	g->caches = rep_rd_intern(d, sb.buf);
	sb_release(&sb);
}

static void find_headlines(struct rdata *d)
{
	for (size_t t = 0; t < d->ntmpls; t++) {
		const struct plan_headline *ph =
			plan_headline_for(d->plan, d->tmpls[t].path, d->tmpls[t].module);
		const struct rig_module *m = d->tmpls[t].mod;
		const char *want = ph ? ph->metric : m ? m->headline.metric : NULL;
		d->tmpls[t].better = ph ? ph->better : 0;
		uint32_t first = UINT32_MAX;
		for (size_t i = 0; i < d->nsamples; i++) {
			const struct rd_sample *s = &d->samples[i];
			if (d->cells[s->cell].tmpl != t)
				continue;
			if (first == UINT32_MAX)
				first = s->metric;
			if (want && !strcmp(rd_str(d, s->metric), want)) {
				first = s->metric;
				/* The module's direction is for its own headline only:
				 * the first metric measured in its stead goes by its unit. */
				if (!ph)
					d->tmpls[t].better = m->headline.better;
				break;
			}
		}
		d->tmpls[t].headline = first;
	}
}

static void build_groups(struct rdata *d)
{
	size_t nc = d->ncells;
	uint32_t *crank = xmalloc((nc ? nc : 1) * sizeof(*crank));
	rank_cells(d, crank);
	/* Metric rank: first appearance, headline first per template. */
	uint32_t *first_seen = xmalloc((d->nstrs ? d->nstrs : 1) * sizeof(*first_seen));
	memset(first_seen, 0xff, (d->nstrs ? d->nstrs : 1) * sizeof(*first_seen));
	uint32_t nseen = 0;
	for (size_t i = 0; i < d->nsamples; i++)
		if (first_seen[d->samples[i].metric] == UINT32_MAX)
			first_seen[d->samples[i].metric] = nseen++;

	size_t ns = d->nsamples;
	struct skey *keys = xmalloc((ns ? ns : 1) * sizeof(*keys));
	for (size_t i = 0; i < ns; i++) {
		const struct rd_sample *s = &d->samples[i];
		const struct rd_cell *c = &d->cells[s->cell];
		uint64_t mr = s->metric == d->tmpls[c->tmpl].headline ? 0 : 1 + first_seen[s->metric];
		/* 26 bits of cell rank, 12 of metric rank, 26 of cell index:
		 * 67 million cells and 4095 metrics. */
		keys[i].key = ((uint64_t)crank[s->cell] << 38) | ((mr & 0xfff) << 26) |
			      (s->cell & 0x3ffffff);
		keys[i].idx = (uint32_t)i;
	}
	radix_sort(keys, ns);
	d->order = xmalloc((ns ? ns : 1) * sizeof(*d->order));
	d->sample_group = xmalloc((ns ? ns : 1) * sizeof(*d->sample_group));
	size_t alloc = 0;
	for (size_t i = 0; i < ns; i++) {
		d->order[i] = keys[i].idx;
		uint64_t gk = keys[i].key >> 26;
		if (i == 0 || gk != keys[i - 1].key >> 26) {
			XGROW(d->groups, d->ngroups + 1, alloc);
			struct rd_group *g = &d->groups[d->ngroups++];
			memset(g, 0, sizeof(*g));
			const struct rd_sample *s = &d->samples[keys[i].idx];
			const struct rd_cell *c = &d->cells[s->cell];
			const struct rd_volume *v = &d->vols[c->vol];
			char inner;
			struct strbuf tmp = STRBUF_INIT;
			template_of(c->step, &tmp, &inner, &g->sweep_index);
			sb_release(&tmp);
			g->tmpl = c->tmpl;
			g->layout = c->layout;
			g->layout_index = v->layout_index;
			g->step = c->step;
			g->module = c->module;
			g->volume = v->name;
			g->fs = v->fs;
			g->position = v->position;
			g->cycle = c->cycle;
			g->sweep_var = c->sweep_var;
			g->sweep_value = c->sweep_value;
			g->sweep_num = sweep_number(c->sweep_value);
			g->metric = s->metric;
			g->unit = s->unit;
			g->first = i;
			g->base = -1;
		}
		d->groups[d->ngroups - 1].n++;
		d->sample_group[keys[i].idx] = (uint32_t)(d->ngroups - 1);
	}
	free(keys);
	free(first_seen);

	/* Templates' group ranges (groups are in template order). */
	for (size_t g = 0; g < d->ngroups; g++) {
		struct rd_template *t = &d->tmpls[d->groups[g].tmpl];
		if (!t->ngroups)
			t->first_group = g;
		t->ngroups++;
	}

	/* File sets: files ordered by cell rank, then cell, then file. */
	size_t nf = d->nfiles;
	struct skey *fk = xmalloc((nf ? nf : 1) * sizeof(*fk));
	for (size_t i = 0; i < nf; i++) {
		uint32_t c = d->files[i].cell;
		fk[i].key = ((uint64_t)crank[c] << 32) | c;
		fk[i].idx = (uint32_t)i;
	}
	radix_sort(fk, nf);
	d->forder = xmalloc((nf ? nf : 1) * sizeof(*d->forder));
	alloc = 0;
	for (size_t i = 0; i < nf; i++) {
		d->forder[i] = fk[i].idx;
		if (i == 0 || fk[i].key >> 32 != fk[i - 1].key >> 32) {
			XGROW(d->filesets, d->nfilesets + 1, alloc);
			struct rd_fileset *f = &d->filesets[d->nfilesets++];
			memset(f, 0, sizeof(*f));
			const struct rd_cell *c = &d->cells[d->files[fk[i].idx].cell];
			f->tmpl = c->tmpl;
			f->layout = c->layout;
			f->step = c->step;
			f->volume = d->vols[c->vol].name;
			f->first = i;
		}
		d->filesets[d->nfilesets - 1].n++;
	}
	free(fk);
	free(crank);
}

/* --- statistics --- */

int rep_summary_better(const struct rdata *d, const struct rd_group *g)
{
	if (g->metric == d->tmpls[g->tmpl].headline)
		return rep_fnd_better(d, g->tmpl);
	return plan_unit_better(rd_str(d, g->unit));
}

/*
 * Passes (rd_group.passes, .best; rdata.pass): the group's samples come
 * cell by cell, each cell's in measurement order, so a cell's passes are
 * a run of consecutive samples and a sample's pass is its place in its
 * run. bests holds room for the group's n values.
 */
static void group_passes(struct rdata *d, struct rd_group *g, double *bests)
{
	int better = rep_summary_better(d, g);
	size_t nb = 0;
	g->passes = 1;
	for (size_t i = 0; i < g->n;) {
		uint32_t cell = d->samples[d->order[g->first + i]].cell;
		size_t j = i;
		while (j < g->n && d->samples[d->order[g->first + j]].cell == cell)
			j++;
		if (j - i > g->passes)
			g->passes = (uint32_t)(j - i);
		double best = NAN;
		for (size_t k = i; j - i > 1 && k < j; k++) {
			uint32_t si = d->order[g->first + k];
			double v = d->samples[si].value;
			d->pass[si] = (uint32_t)(k - i + 1);
			if (!isnan(v) && (isnan(best) || (better < 0 ? v < best : v > best)))
				best = v;
		}
		if (!isnan(best))
			bests[nb++] = best;
		i = j;
	}
	g->best = NAN;
	if (nb) {
		struct stats_summary bs;
		rep_stats_summarize(bests, nb, &bs);
		g->best = bs.median;
	}
}

static void group_stats(struct rdata *d, double *vals, double *seqs, double *z, double *scratch)
{
	for (size_t gi = 0; gi < d->ngroups; gi++) {
		struct rd_group *g = &d->groups[gi];
		group_passes(d, g, vals);
		size_t k = 0;
		uint32_t last_cache = UINT32_MAX;
		for (size_t i = 0; i < g->n; i++) {
			const struct rd_sample *s = &d->samples[d->order[g->first + i]];
			if (s->cache != last_cache) {
				add_cache(d, g, rd_str(d, s->cache));
				last_cache = s->cache;
			}
			if (isnan(s->value))
				continue;
			vals[k] = s->value;
			seqs[k] = d->cells[s->cell].seq;
			k++;
		}
		g->nnan = g->n - k;
		g->outliers = rep_stats_modified_z(vals, k, z, scratch);
		size_t j = 0;
		for (size_t i = 0; i < g->n; i++) {
			uint32_t si = d->order[g->first + i];
			d->z[si] = isnan(d->samples[si].value) ? 0 : (float)z[j++];
		}
		rep_stats_drift(seqs, vals, k, &g->drift);
		rep_stats_summarize(vals, k, &g->s); /* reorders vals: last */
		if (k == 1)
			d->any_n1 = 1;
	}
}

/* Key of a group for baseline lookups. */
static uint32_t group_key(struct rdata *d, struct strbuf *sb, const char *layout,
			  const char *step, const char *volume, uint32_t metric)
{
	sb_reset(sb);
	sb_addf(sb, "\x1f%s\x1f%s\x1f%s\x1f%u", layout, step, volume, metric);
	return rep_rd_intern_id(d, sb->buf);
}

static void baselines(struct rdata *d)
{
	if (d->base_kind == RD_BASE_NONE || !d->ngroups)
		return;
	struct strbuf sb = STRBUF_INIT;
	/* key id -> group; keys are interned after every other string. */
	uint32_t lo = d->nstrs;
	uint32_t *keys = xmalloc(d->ngroups * sizeof(*keys));
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct rd_group *g = &d->groups[i];
		keys[i] = group_key(d, &sb, g->layout, g->step, g->volume, g->metric);
	}
	uint32_t hi = d->nstrs;
	long *map = xmalloc(((size_t)(hi - lo) + 1) * sizeof(*map));
	for (uint32_t i = 0; i <= hi - lo; i++)
		map[i] = -1;
	for (size_t i = 0; i < d->ngroups; i++)
		if (keys[i] >= lo && map[keys[i] - lo] < 0)
			map[keys[i] - lo] = (long)i;
	for (size_t i = 0; i < d->ngroups; i++) {
		struct rd_group *g = &d->groups[i];
		const char *layout = g->layout, *volume = g->volume;
		if (d->base_kind == RD_BASE_VOLUME)
			volume = d->baseline;
		else
			layout = d->baseline;
		uint32_t k = group_key(d, &sb, layout, g->step, volume, g->metric);
		if (k < lo || k >= hi || map[k - lo] < 0)
			continue;
		g->base = map[k - lo];
		if (g->base == (long)i) {
			/* The baseline itself: 100% of itself, nothing to test. */
			g->diff.pct_of_base = 100;
			g->diff.diff_pct = 0;
			g->diff.ci_low = g->diff.ci_high = g->diff.t = g->diff.df = g->diff.p = NAN;
		} else {
			rep_stats_diff(&g->s, &d->groups[g->base].s, &g->diff);
		}
	}
	free(map);
	free(keys);
	sb_release(&sb);
}

static void fit_filesets(struct rdata *d)
{
	size_t cap = 0;
	for (size_t i = 0; i < d->nfilesets; i++)
		cap = d->filesets[i].n > cap ? d->filesets[i].n : cap;
	double *x = xmalloc((cap ? cap : 1) * sizeof(double)), *y = xmalloc((cap ? cap : 1) * sizeof(double));
	for (size_t i = 0; i < d->nfilesets; i++) {
		struct rd_fileset *f = &d->filesets[i];
		size_t k = 0;
		for (size_t j = 0; j < f->n; j++) {
			const struct rd_file *fl = &d->files[d->forder[f->first + j]];
			if (isnan(fl->seconds))
				continue;
			x[k] = (double)fl->bytes;
			y[k++] = fl->seconds;
		}
		struct linfit lf;
		f->rate_mbs = f->overhead_s = f->r2 = f->overhead_lo = f->overhead_hi = NAN;
		f->npoints = k;
		f->fitted = 0;
		/* Fewer points than FIT_MIN_POINTS: 2 give r² = 1 and any
		 * intercept; nothing shown rather than a line that says nothing. */
		if (k < FIT_MIN_POINTS)
			f->fit = RD_FIT_TOO_FEW;
		else if (fit_line(x, y, k, &lf) < 0)
			f->fit = RD_FIT_ONE_SIZE;
		else if (!(lf.slope > 0))
			f->fit = RD_FIT_NO_SLOPE;
		else
			f->fit = RD_FIT_OK;
		if (f->fit != RD_FIT_OK)
			continue;
		f->fitted = 1;
		f->rate_mbs = 1 / lf.slope / 1e6;
		f->overhead_s = lf.intercept;
		f->r2 = lf.r2;
		double t = rep_stats_t_quantile(0.975, (double)(k - 2));
		f->overhead_lo = lf.intercept - t * lf.intercept_se;
		f->overhead_hi = lf.intercept + t * lf.intercept_se;
	}
	free(x);
	free(y);
}

void rep_summary_compute(struct rdata *d)
{
	build_templates(d);
	find_headlines(d);
	build_groups(d);
	size_t cap = 0;
	for (size_t i = 0; i < d->ngroups; i++)
		cap = d->groups[i].n > cap ? d->groups[i].n : cap;
	cap = cap ? cap : 1;
	double *vals = xmalloc(cap * sizeof(double)), *seqs = xmalloc(cap * sizeof(double));
	double *z = xmalloc(cap * sizeof(double)), *scratch = xmalloc(cap * sizeof(double));
	d->z = xcalloc(d->nsamples ? d->nsamples : 1, sizeof(*d->z));
	d->pass = xcalloc(d->nsamples ? d->nsamples : 1, sizeof(*d->pass));
	group_stats(d, vals, seqs, z, scratch);
	free(vals);
	free(seqs);
	free(z);
	free(scratch);
	baselines(d);
	fit_filesets(d);
}

/* --- the summary's columns: summary.csv, results.json's "summary" --- */

static const struct rep_col summary_cols[] = {
	{ "run", REP_TEXT, REP_CSV },
	{ "layout", REP_TEXT, 0 },       { "step", REP_TEXT, 0 },        { "module", REP_TEXT, 0 },
	{ "volume", REP_TEXT, 0 },       { "fs", REP_TEXT, 0 },          { "position", REP_COUNT, 0 },
	{ "cycle", REP_COUNT, 0 },       { "sweep_var", REP_TEXT, 0 },   { "sweep_value", REP_TEXT, 0 },
	{ "metric", REP_TEXT, 0 },       { "unit", REP_TEXT, 0 },        { "n", REP_COUNT, 0 },
	{ "mean", REP_REAL, 0 },         { "sd", REP_REAL, 0 },          { "median", REP_REAL, 0 },
	{ "min", REP_REAL, 0 },          { "max", REP_REAL, 0 },         { "ci_low", REP_REAL, 0 },
	{ "ci_high", REP_REAL, 0 },      { "baseline", REP_TEXT, 0 },
	{ "pct_of_baseline", REP_REAL, 0 }, { "diff_pct", REP_REAL, 0 },
	{ "diff_ci_low", REP_REAL, 0 },  { "diff_ci_high", REP_REAL, 0 }, { "p_value", REP_REAL, 0 },
	{ "outliers", REP_COUNT, 0 },    { "missing", REP_COUNT, 0 },
	{ "drift_slope", REP_REAL, 0 },  { "drift_ci_low", REP_REAL, 0 },
	{ "drift_ci_high", REP_REAL, 0 }, { "drift", REP_BOOL, 0 },
	{ "cache", REP_TEXT, REP_JSON }, /* the cache treatments its samples had */
	{ "passes", REP_COUNT, 0 },      { "best_of_passes", REP_REAL, 0 },
};

_Static_assert(sizeof(summary_cols) / sizeof(summary_cols[0]) <= REP_MAX_COLS,
	       "a row's values fit its writers' arrays");

static size_t summary_count(const struct rdata *d)
{
	return d->ngroups;
}

static void summary_row(const struct rdata *d, size_t i, struct rep_val *v)
{
	const struct rd_group *g = &d->groups[i];
	const struct rd_group *bg = g->base >= 0 ? &d->groups[g->base] : NULL;
	v[0].text = d->run.id;
	v[1].text = g->layout;
	v[2].text = g->step;
	v[3].text = g->module;
	v[4].text = g->volume;
	v[5].text = g->fs;
	v[6].count = g->position;
	v[7].count = g->cycle;
	v[7].null = !g->cycle;
	v[8].text = g->sweep_var;
	v[9].text = g->sweep_value;
	v[10].text = rd_str(d, g->metric);
	v[11].text = rd_str(d, g->unit);
	v[12].count = (long long)g->s.n;
	v[13].real = g->s.mean;
	v[14].real = g->s.sd;
	v[15].real = g->s.median;
	v[16].real = g->s.min;
	v[17].real = g->s.max;
	v[18].real = g->s.ci_low;
	v[19].real = g->s.ci_high;
	v[20].text = !bg ? NULL : d->base_kind == RD_BASE_VOLUME ? bg->volume : bg->layout;
	v[21].real = bg ? g->diff.pct_of_base : NAN;
	v[22].real = bg ? g->diff.diff_pct : NAN;
	v[23].real = bg ? g->diff.ci_low : NAN;
	v[24].real = bg ? g->diff.ci_high : NAN;
	v[25].real = bg ? g->diff.p : NAN;
	v[26].count = (long long)g->outliers;
	v[27].count = (long long)g->nnan;
	v[28].real = g->drift.slope;
	v[29].real = g->drift.ci_low;
	v[30].real = g->drift.ci_high;
	v[31].count = g->drift.flagged;
	v[31].null = isnan(g->drift.slope);
	v[32].text = g->caches;
	v[33].count = g->passes;
	v[34].real = g->best;
}

const struct rep_table rep_summary_table = {
	summary_cols, sizeof(summary_cols) / sizeof(summary_cols[0]), summary_count, summary_row,
};
