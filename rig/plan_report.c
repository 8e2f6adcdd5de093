/*
 * The plan's report section (plan language v1, docs/plan-language.md):
 * title, baseline, the factors of the charts and the formats. Checked after
 * the target, layouts and steps, since baseline and by refer to them.
 */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_parse.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static const char *const fixed_factors[] = {
	"layout", "position", "volume", "fs", "rep", "cycle", "seq", NULL
};
static const char *const format_names[] = { "html", "csv", "json", NULL };

static int is_fixed_factor(const char *s)
{
	for (size_t i = 0; fixed_factors[i]; i++)
		if (!strcmp(fixed_factors[i], s))
			return 1;
	return 0;
}

int factor_reserved(const char *name)
{
	return is_fixed_factor(name);
}

/* Every name report.baseline may refer to: volumes and layouts. */
static size_t baseline_names(const struct plan *p, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t li = 0; li < plan_layout_count(p); li++) {
		if (p->target.kind != TARGET_DIRS && n < max)
			out[n++] = plan_layout_name(p, li);
		for (size_t vi = 0; vi < plan_volume_count(p, li); vi++)
			if (n < max && plan_volume_name(p, li, vi))
				out[n++] = plan_volume_name(p, li, vi);
	}
	return n;
}

static void check_baseline(struct pctx *c, const struct key *k)
{
	struct plan *p = c->p;
	size_t max = 1 + p->target.ndirs + p->nlayouts;
	for (size_t li = 0; li < p->nlayouts; li++)
		max += p->layouts[li].nparts;
	const char **names = xcalloc(max, sizeof(char *));
	size_t n = baseline_names(p, names, max);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], p->report.baseline)) {
			free(names);
			return;
		}
	const char *near = diag_suggest(p->report.baseline, names, n);
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "baseline '%s' is not a volume or layout of the plan", p->report.baseline);
	if (near)
		sb_addf(&sb, " (did you mean '%s'?)", near);
	diag_error(c->d, node_mark(k->val), "%s", sb.buf);
	sb_release(&sb);
	free(names);
}

static void check_factor(struct pctx *c, yaml_node_t *item, const char *f)
{
	struct plan *p = c->p;
	if (!strcmp(f, "cycle") && !c->has_cycle) {
		diag_error(c->d, node_mark(item), "factor 'cycle' in report.by, but the plan has no cycle step");
		return;
	}
	if (!strcmp(f, "layout") && p->target.kind == TARGET_DIRS) {
		diag_error(c->d, node_mark(item), "factor 'layout' in report.by, but a dirs target has no layouts");
		return;
	}
	if (is_fixed_factor(f))
		return;
	for (size_t i = 0; i < c->nsweep_vars; i++)
		if (!strcmp(c->sweep_vars[i], f))
			return;
	size_t nf = NKEYS(fixed_factors) - 1;
	const char **all = xcalloc(nf + c->nsweep_vars + 1, sizeof(char *));
	memcpy(all, fixed_factors, nf * sizeof(char *));
	for (size_t i = 0; i < c->nsweep_vars; i++)
		all[nf + i] = c->sweep_vars[i];
	struct strbuf sb = STRBUF_INIT;
	join_choices(&sb, all);
	const char *near = diag_suggest(f, all, nf + c->nsweep_vars);
	if (near)
		diag_error(c->d, node_mark(item), "unknown factor '%s' in report.by (expected one of %s; "
			   "did you mean '%s'?)", f, sb.buf, near);
	else
		diag_error(c->d, node_mark(item), "unknown factor '%s' in report.by (expected one of %s)",
			   f, sb.buf);
	sb_release(&sb);
	free(all);
}

/* A list of unique scalars; calls fn for each new one. */
static void each_unique(struct pctx *c, yaml_node_t *seq, const char *what,
			void (*fn)(struct pctx *, yaml_node_t *, const char *))
{
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *n = node_at(c, *it);
		const char *s = node_text(n);
		if (!s || node_is_null(n)) {
			diag_error(c->d, node_mark(n), "expected a name in %s, not %s", what,
				   s ? "nothing" : node_kind(n));
			continue;
		}
		int dup = 0;
		for (yaml_node_item_t *jt = seq->data.sequence.items.start; jt < it; jt++) {
			const char *t = node_text(node_at(c, *jt));
			if (t && !strcmp(s, t))
				dup = 1;
		}
		if (dup)
			diag_error(c->d, node_mark(n), "'%s' appears twice in %s", s, what);
		else
			fn(c, n, s);
	}
}

static void add_factor(struct pctx *c, yaml_node_t *n, const char *s)
{
	struct plan_report *r = &c->p->report;
	check_factor(c, n, s);
	r->by = xrealloc(r->by, (r->nby + 1) * sizeof(char *));
	r->by[r->nby++] = xstrdup(s);
}

static void add_format(struct pctx *c, yaml_node_t *n, const char *s)
{
	for (size_t i = 0; format_names[i]; i++)
		if (!strcmp(format_names[i], s)) {
			c->p->report.formats |= 1u << i;
			return;
		}
	const char *near = diag_suggest(s, format_names, 3);
	diag_error(c->d, node_mark(n), "unknown report format '%s' (expected html, csv or json%s%s%s)",
		   s, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}

void parse_report(struct pctx *c, const struct key *rk)
{
	struct key keys[] = { { "title", 0, 0 }, { "baseline", 0, 0 }, { "by", 0, 0 },
			      { "formats", 0, 0 } };
	struct plan_report *r = &c->p->report;
	r->formats = FMT_HTML | FMT_CSV;
	if (!rk->key || node_is_null(rk->val) ||
	    map_keys(c, rk->val, keys, NKEYS(keys), "in report", "'report'"))
		return;
	const char *s = key_scalar(c, &keys[0], "a title");
	if (s)
		r->title = xstrdup(s);
	s = key_scalar(c, &keys[1], "a volume or layout name");
	if (s) {
		r->baseline = xstrdup(s);
		r->baseline_mark = node_mark(keys[1].val);
		check_baseline(c, &keys[1]);
	}
	yaml_node_t *seq = key_seq(c, &keys[2], "a list of factors");
	if (seq)
		each_unique(c, seq, "report.by", add_factor);
	seq = key_seq(c, &keys[3], "a list of formats (html, csv, json)");
	if (seq) {
		r->formats = 0;
		each_unique(c, seq, "report.formats", add_format);
		if (seq->data.sequence.items.start == seq->data.sequence.items.top)
			diag_error(c->d, node_mark(seq), "report.formats is empty: give at least one of "
				   "html, csv, json");
	}
}
