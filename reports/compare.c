/*
 * Joining runs for rig compare, and compare.csv (see compare.h).
 *
 * Each run is loaded and summarized exactly as `rig report` does; the join
 * then works on the groups: a key string per group, keys numbered in the
 * order the first run shows them (so the comparison reads in plan order),
 * and each run's values of a key collected and summarized again (this
 * pools layouts when the layout is not part of the key).
 */
#include "reports/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "reports/csv.h"
#include "reports/report_data.h"
#include "reports/report_out.h"
#include "reports/summary.h"
#include "store/store.h"

static const char compare_csv_header[] =
	"step,module,layout,volume,fs,metric,unit,run_label,run,n,mean,sd,median,min,max,ci_low,"
	"ci_high,reference,pct_of_reference,diff_pct,diff_ci_low,diff_ci_high,p_value";

void rep_compare_warn(struct comparison *c, struct strbuf *msg)
{
	c->warnings = xrealloc(c->warnings, (c->nwarnings + 1) * sizeof(*c->warnings));
	c->warnings[c->nwarnings++] = sb_detach(msg);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The first line where two texts differ, 1-based; 0 when equal. */
static int first_diff_line(const char *a, const char *b, const char **la, const char **lb)
{
	int line = 1;
	*la = a;
	*lb = b;
	while (*a && *a == *b) {
		if (*a == '\n') {
			line++;
			*la = a + 1;
			*lb = b + 1;
		}
		a++;
		b++;
	}
	return *a == *b ? 0 : line;
}

static void add_line(struct strbuf *sb, const char *s)
{
	const char *e = strchr(s, '\n');
	size_t n = e ? (size_t)(e - s) : strlen(s);
	sb_addch(sb, '\'');
	sb_add(sb, s, n > 80 ? 80 : n);
	sb_adds(sb, n > 80 ? "...'" : "'");
}

/* "model serial" of each disk a run used, joined; NULL when none known. */
static char *disk_ids(const struct rdata *d)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < d->nvols; i++) {
		char *model = rep_rd_fact(&d->vols[i], "model"), *serial = rep_rd_fact(&d->vols[i], "serial");
		char *target = rep_rd_fact(&d->vols[i], "target"), *disk = rep_rd_fact(&d->vols[i], "disk");
		struct strbuf one = STRBUF_INIT;
		if (model || serial)
			sb_addf(&one, "%s%s%s", model ? model : "?", serial ? " serial " : "", serial ? serial : "");
		else if (target && !strcmp(target, "image"))
			sb_adds(&one, "a disk image");
		else if (target && !strcmp(target, "disk") && disk)
			sb_addf(&one, "%s (no model or serial)", disk); /* a loop device, say */
		if (one.len && !strstr(sb.buf, one.buf))
			sb_addf(&sb, "%s%s", sb.len ? "; " : "", one.buf);
		sb_release(&one);
		free(model);
		free(serial);
		free(target);
		free(disk);
	}
	if (!sb.len) {
		sb_release(&sb);
		return NULL;
	}
	return sb_detach(&sb);
}

static void check_differences(struct comparison *c)
{
	const struct cmp_run *a = &c->runs[0];
	for (size_t i = 1; i < c->nruns; i++) {
		const struct cmp_run *b = &c->runs[i];
		const struct rd_run *ra = &a->d->run, *rb = &b->d->run;
		struct strbuf m = STRBUF_INIT;
		if (!same_str(ra->plan_sha256, rb->plan_sha256)) {
			sb_addf(&m, "plans differ: %s ran plan '%s', %s ran plan '%s'", a->label, ra->plan_name,
				b->label, rb->plan_name);
			const char *la, *lb;
			int line = ra->plan_text && rb->plan_text
					   ? first_diff_line(ra->plan_text, rb->plan_text, &la, &lb) : 0;
			if (line) {
				sb_addf(&m, "; first difference at line %d: ", line);
				add_line(&m, la);
				sb_adds(&m, " against ");
				add_line(&m, lb);
			}
			rep_compare_warn(c, &m);
		}
		if (!same_str(ra->seed, rb->seed)) {
			sb_addf(&m, "seeds differ: %s used %s, %s used %s (file sizes, orders and payloads "
				    "differ)", a->label, ra->seed ? ra->seed : "?", b->label, rb->seed ? rb->seed : "?");
			rep_compare_warn(c, &m);
		}
		if (!same_str(ra->host, rb->host)) {
			sb_addf(&m, "hosts differ: %s ran on %s, %s on %s", a->label, ra->host ? ra->host : "?",
				b->label, rb->host ? rb->host : "?");
			rep_compare_warn(c, &m);
		}
		if (!same_str(ra->os, rb->os)) {
			sb_addf(&m, "operating systems differ: %s: %s; %s: %s", a->label, ra->os ? ra->os : "?",
				b->label, rb->os ? rb->os : "?");
			rep_compare_warn(c, &m);
		}
		/* Within mode tabulates disks: that they differ is the point. */
		if (!c->within && !same_str(a->disk, b->disk)) {
			sb_addf(&m, "disks differ: %s used %s, %s used %s", a->label,
				a->disk ? a->disk : "existing directories", b->label,
				b->disk ? b->disk : "existing directories");
			rep_compare_warn(c, &m);
		}
		if (!same_str(ra->rig_version, rb->rig_version)) {
			sb_addf(&m, "rig versions differ: %s %s, %s %s", a->label, ra->rig_version ? ra->rig_version : "?",
				b->label, rb->rig_version ? rb->rig_version : "?");
			rep_compare_warn(c, &m);
		}
		if (strcmp(rb->status, "completed")) {
			sb_addf(&m, "run %s did not complete (%s)", b->label, rb->status);
			rep_compare_warn(c, &m);
		}
		/* A resumed run's cells ran in more than one process, some of
		 * them again (their first samples superseded). */
		if (!c->within && (a->d->nresumes > 0) != (b->d->nresumes > 0)) {
			sb_addf(&m, "resume states differ: %s %s, %s %s", a->label,
				a->d->nresumes ? "was resumed" : "ran without a stop", b->label,
				b->d->nresumes ? "was resumed" : "ran without a stop");
			rep_compare_warn(c, &m);
		}
		sb_release(&m);
	}
	if (strcmp(a->d->run.status, "completed")) {
		struct strbuf m = STRBUF_INIT;
		sb_addf(&m, "run %s did not complete (%s)", a->label, a->d->run.status);
		rep_compare_warn(c, &m);
	}
}

/* Whether run r has a volume (by name) that run 0 has, and the layouts. */
static void choose_join(struct comparison *c)
{
	const struct rdata *a = c->runs[0].d;
	c->with_layout = 1;
	for (size_t r = 1; r < c->nruns; r++) {
		const struct rdata *b = c->runs[r].d;
		int shared = 0;
		for (size_t i = 0; i < b->nvols && !shared; i++)
			for (size_t j = 0; j < a->nvols && !shared; j++)
				shared = !strcmp(a->vols[j].name, b->vols[i].name);
		if (!shared)
			c->by_fs = 1;
		/* Same layout names, both ways? */
		for (size_t i = 0; i < b->nvols; i++) {
			int found = 0;
			for (size_t j = 0; j < a->nvols && !found; j++)
				found = !strcmp(a->vols[j].layout, b->vols[i].layout);
			if (!found)
				c->with_layout = 0;
		}
		for (size_t j = 0; j < a->nvols; j++) {
			int found = 0;
			for (size_t i = 0; i < b->nvols && !found; i++)
				found = !strcmp(a->vols[j].layout, b->vols[i].layout);
			if (!found)
				c->with_layout = 0;
		}
	}
	struct strbuf m = STRBUF_INIT;
	if (c->by_fs) {
		sb_adds(&m, "the runs share no volume names: results are joined on file systems");
		rep_compare_warn(c, &m);
	}
	int layouts = 0;
	for (size_t r = 0; r < c->nruns; r++)
		layouts |= c->runs[r].d->nlayouts > 1 || (c->runs[r].d->nvols && *c->runs[r].d->vols[0].layout);
	if (!c->with_layout && layouts) {
		sb_adds(&m, "the runs' layouts differ: each run's results are pooled over its layouts");
		rep_compare_warn(c, &m);
	}
	sb_release(&m);
}

struct gref {
	char *key;
	size_t run, group, order;
};

static int cmp_gref(const void *a, const void *b)
{
	const struct gref *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return x->run < y->run ? -1 : x->run > y->run ? 1 : (x->group < y->group ? -1 : x->group > y->group);
}

static int cmp_gref_order(const void *a, const void *b)
{
	const struct gref *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Whether Fieller's interval and Welch's p say different things at 5%:
 * the interval excludes 0 and p >= 0.05, or it holds 0 and p < 0.05. */
int rep_compare_diff_disagrees(const struct rep_stats_diff *df)
{
	if (!isfinite(df->ci_low) || !isfinite(df->ci_high) || isnan(df->p))
		return 0;
	int excl = df->ci_low > 0 || df->ci_high < 0;
	return excl != (df->p < 0.05);
}

int rep_compare_is_setting(const char *module, const char *metric)
{
	const struct rig_metric *mt = mod_metric(mod_find(module), metric);
	return mt && mt->setting;
}

/*
 * A key whose metric the plan sets (struct rig_metric.setting: bytes
 * written, files created) is no measurement: it is left out of the
 * statistics, its name noted for the page. When the runs' values differ,
 * the runs did different work, which a warning says. Returns 1 for such
 * a key.
 */
static int leave_out_setting(struct comparison *c, const struct cmp_key *key)
{
	if (!rep_compare_is_setting(key->module, key->metric))
		return 0;
	struct strbuf m = STRBUF_INIT;
	const struct cmp_cell *a = &key->cells[0];
	for (size_t r = 1; r < c->nruns && a->present; r++) {
		const struct cmp_cell *b = &key->cells[r];
		if (!b->present || (b->s.min == a->s.min && b->s.max == a->s.max))
			continue;
		sb_addf(&m, "step %s (%s) on %s: %s differs, %.10g %s in %s and %.10g %s in %s: the runs "
			    "did not do the same work", key->step, key->module,
			key->volume ? key->volume : key->fs ? key->fs : "?", key->metric, a->s.mean,
			key->unit, c->runs[0].label, b->s.mean, key->unit, c->runs[r].label);
		rep_compare_warn(c, &m);
	}
	sb_release(&m);
	struct strbuf list = STRBUF_INIT, item = STRBUF_INIT;
	sb_addf(&list, ", %s,", c->settings ? c->settings : "");
	sb_addf(&item, ", %s,", key->metric);
	if (!strstr(list.buf, item.buf)) {
		sb_reset(&list);
		sb_addf(&list, "%s%s%s", c->settings ? c->settings : "", c->settings ? ", " : "",
			key->metric);
		free(c->settings);
		c->settings = sb_detach(&list);
	}
	sb_release(&list);
	sb_release(&item);
	return 1;
}

static void join(struct comparison *c)
{
	size_t n = 0;
	for (size_t r = 0; r < c->nruns; r++)
		n += c->runs[r].d->ngroups;
	struct gref *refs = xcalloc(n ? n : 1, sizeof(*refs));
	size_t k = 0;
	for (size_t r = 0; r < c->nruns; r++) {
		const struct rdata *d = c->runs[r].d;
		for (size_t g = 0; g < d->ngroups; g++, k++) {
			const struct rd_group *gr = &d->groups[g];
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "%s\x1f%s\x1f%s\x1f%s", gr->step, c->with_layout ? gr->layout : "",
				c->by_fs ? (gr->fs ? gr->fs : "?") : gr->volume, rd_str(d, gr->metric));
			refs[k] = (struct gref){ sb_detach(&sb), r, g, k };
		}
	}
	qsort(refs, n, sizeof(*refs), cmp_gref);
	/* Runs of equal keys become one cmp_key, placed by its first order. */
	size_t *first = xcalloc(n ? n : 1, sizeof(*first));
	for (size_t i = 0; i < n;) {
		size_t j = i, minord = refs[i].order;
		while (j < n && !strcmp(refs[j].key, refs[i].key)) {
			if (refs[j].order < minord)
				minord = refs[j].order;
			j++;
		}
		for (size_t t = i; t < j; t++)
			first[t] = minord;
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		refs[i].order = first[i] * (c->nruns + 1) + refs[i].run;
	free(first);
	qsort(refs, n, sizeof(*refs), cmp_gref_order);

	double *vals = NULL;
	size_t avals = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !strcmp(refs[j].key, refs[i].key))
			j++;
		XGROW(c->keys, c->nkeys + 1, c->akeys);
		struct cmp_key *key = &c->keys[c->nkeys++];
		memset(key, 0, sizeof(*key));
		key->cells = xcalloc(c->nruns, sizeof(*key->cells));
		const struct rdata *d0 = c->runs[refs[i].run].d;
		const struct rd_group *g0 = &d0->groups[refs[i].group];
		key->step = g0->step;
		key->module = g0->module;
		key->layout = c->with_layout ? g0->layout : NULL;
		key->volume = c->by_fs ? NULL : g0->volume;
		key->fs = g0->fs;
		key->metric = rd_str(d0, g0->metric);
		key->unit = rd_str(d0, g0->unit);
		key->headline = g0->metric == d0->tmpls[g0->tmpl].headline;
		key->inner = d0->tmpls[g0->tmpl].inner != 0;
		for (size_t r = 0; r < c->nruns; r++) {
			size_t nv = 0;
			for (size_t t = i; t < j; t++) {
				if (refs[t].run != r)
					continue;
				const struct rdata *d = c->runs[r].d;
				const struct rd_group *g = &d->groups[refs[t].group];
				for (size_t s = 0; s < g->n; s++) {
					double v = d->samples[d->order[g->first + s]].value;
					if (isnan(v))
						continue;
					XGROW(vals, nv + 1, avals);
					vals[nv++] = v;
				}
				key->cells[r].present = 1;
			}
			if (key->cells[r].present)
				rep_stats_summarize(vals, nv, &key->cells[r].s);
		}
		if (leave_out_setting(c, key)) {
			free(key->cells);
			c->nkeys--;
			i = j;
			continue;
		}
		for (size_t r = 0; r < c->nruns; r++) {
			struct rep_stats_diff *df = &key->cells[r].diff;
			df->pct_of_base = df->diff_pct = df->ci_low = df->ci_high = df->t = df->df = df->p = NAN;
			if (r && key->cells[r].present && key->cells[0].present)
				rep_stats_diff(&key->cells[r].s, &key->cells[0].s, df);
		}
		i = j;
	}
	free(vals);
	for (size_t i = 0; i < n; i++)
		free(refs[i].key);
	free(refs);
}

int rep_compare_build(struct comparison *c, char *const *dirs, size_t n, const struct compare_opts *o,
		  struct strbuf *err)
{
	memset(c, 0, sizeof(*c));
	c->runs = xcalloc(n, sizeof(*c->runs));
	c->nruns = n;
	for (size_t i = 0; i < n; i++) {
		struct cmp_run *r = &c->runs[i];
		r->dir = dirs[i];
		if (i < 26)
			r->label[0] = (char)('A' + i);
		else
			snprintf(r->label, sizeof(r->label), "R%zu", i + 1);
		struct strbuf path = STRBUF_INIT, e = STRBUF_INIT;
		sb_addf(&path, "%s/results.db", dirs[i]);
		r->store = store_open(path.buf, 1, &e);
		if (r->store)
			r->d = rep_rdata_load(r->store, &e);
		sb_release(&path);
		if (!r->d) {
			sb_addf(err, "cannot read run %s: %s", dirs[i], e.buf);
			sb_release(&e);
			return -EIO;
		}
		sb_release(&e);
		rep_summary_compute(r->d);
		r->disk = disk_ids(r->d);
	}
	if (o && o->within) {
		c->within = 1;
		check_differences(c);
		rep_compare_within_build(c, o->against);
		return 0;
	}
	choose_join(c);
	check_differences(c);
	join(c);
	return 0;
}

void rep_compare_free(struct comparison *c)
{
	for (size_t i = 0; i < c->nkeys; i++)
		free(c->keys[i].cells);
	free(c->keys);
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	free(c->rows);
	free(c->settings);
	for (size_t i = 0; i < c->nruns; i++) {
		free(c->runs[i].disk);
		rep_rdata_free(c->runs[i].d);
		if (c->runs[i].store)
			store_close(c->runs[i].store);
	}
	free(c->runs);
	memset(c, 0, sizeof(*c));
}

int rep_compare_write_csv(const struct comparison *c, const char *path, struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	struct strbuf *b = &o.buf;
	sb_addf(b, "%s\n", compare_csv_header);
	for (size_t i = 0; i < c->nkeys; i++) {
		const struct cmp_key *k = &c->keys[i];
		for (size_t r = 0; r < c->nruns; r++) {
			const struct cmp_cell *cl = &k->cells[r];
			if (!cl->present)
				continue;
			const char *cols[] = { k->step, k->module, k->layout, k->volume, k->fs, k->metric, k->unit,
					       c->runs[r].label, c->runs[r].d->run.id };
			for (size_t j = 0; j < sizeof(cols) / sizeof(cols[0]); j++) {
				if (j)
					sb_addch(b, ',');
				sb_add_csv(b, cols[j] ? cols[j] : "");
			}
			sb_addf(b, ",%zu", cl->s.n);
			rep_csv_add_next_double(b, cl->s.mean);
			rep_csv_add_next_double(b, cl->s.sd);
			rep_csv_add_next_double(b, cl->s.median);
			rep_csv_add_next_double(b, cl->s.min);
			rep_csv_add_next_double(b, cl->s.max);
			rep_csv_add_next_double(b, cl->s.ci_low);
			rep_csv_add_next_double(b, cl->s.ci_high);
			sb_addch(b, ',');
			sb_add_csv(b, c->runs[0].label);
			rep_csv_add_next_double(b, r ? cl->diff.pct_of_base : 100);
			rep_csv_add_next_double(b, r ? cl->diff.diff_pct : 0);
			rep_csv_add_next_double(b, cl->diff.ci_low);
			rep_csv_add_next_double(b, cl->diff.ci_high);
			rep_csv_add_next_double(b, cl->diff.p);
			sb_addch(b, '\n');
		}
		rep_rout_flush_some(&o);
	}
	return rep_rout_commit(&o, err);
}
