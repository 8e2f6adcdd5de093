/*
 * The plan's report section (plan language v1, docs/plan-language.md):
 * title, baseline, the factors of the charts, the formats, the headline
 * metric of steps and the factor a crossed design compares. Checked after
 * the target, layouts and steps, since baseline, by and headline refer to
 * them.
 *
 * A headline key is a module name (every step of that module) or a step
 * path without cycle and sweep numbers ("2.cycle.1", as the report's step
 * templates): a headline is a property of a section of the report, which
 * pools every cycle and sweep value, so a numbered path could name only
 * part of what the section shows. Module names start with a letter and
 * paths with a digit, so the two cannot be confused.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"

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

int plan_factor_reserved(const char *name)
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
	diag_error(c->d, plan_node_mark(k->val), "%s", sb.buf);
	sb_release(&sb);
	free(names);
}

static void check_factor(struct pctx *c, yaml_node_t *item, const char *f)
{
	struct plan *p = c->p;
	if (!strcmp(f, "cycle") && !c->has_cycle) {
		diag_error(c->d, plan_node_mark(item), "factor 'cycle' in report.by, but the plan has no cycle step");
		return;
	}
	if (!strcmp(f, "layout") && p->target.kind == TARGET_DIRS) {
		diag_error(c->d, plan_node_mark(item), "factor 'layout' in report.by, but a dirs target has no layouts");
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
	plan_join_choices(&sb, all);
	const char *near = diag_suggest(f, all, nf + c->nsweep_vars);
	if (near)
		diag_error(c->d, plan_node_mark(item), "unknown factor '%s' in report.by (expected one of %s; "
			   "did you mean '%s'?)", f, sb.buf, near);
	else
		diag_error(c->d, plan_node_mark(item), "unknown factor '%s' in report.by (expected one of %s)",
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
		yaml_node_t *n = plan_node_at(c, *it);
		const char *s = plan_node_text(n);
		if (!s || plan_node_is_null(n)) {
			diag_error(c->d, plan_node_mark(n), "expected a name in %s, not %s", what,
				   s ? "nothing" : plan_node_kind(n));
			continue;
		}
		int dup = 0;
		for (yaml_node_item_t *jt = seq->data.sequence.items.start; jt < it; jt++) {
			const char *t = plan_node_text(plan_node_at(c, *jt));
			if (t && !strcmp(s, t))
				dup = 1;
		}
		if (dup)
			diag_error(c->d, plan_node_mark(n), "'%s' appears twice in %s", s, what);
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
	diag_error(c->d, plan_node_mark(n), "unknown report format '%s' (expected html, csv or json%s%s%s)",
		   s, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}

/* --- headline and compare --- */

static const char *const better_names[] = { "higher", "lower", NULL };
static const char *const compare_names[] = { "fs", "volume", NULL };

/* What a report.headline key may name: the modules the plan's steps use
 * (each once) and every module step's path without cycle and sweep
 * numbers, in plan order; for suggestions and messages. */
struct hnames {
	const char **mods;
	size_t nmods;
	char **paths;
	size_t npaths, apaths;
};

static void collect_names(const struct plan_step *steps, size_t n, struct strbuf *path,
			  struct hnames *h)
{
	size_t len = path->len;
	for (size_t i = 0; i < n; i++) {
		const struct plan_step *st = &steps[i];
		sb_setlen(path, len);
		sb_addf(path, "%zu", i + 1);
		if (st->kind != STEP_MODULE) {
			sb_adds(path, st->kind == STEP_CYCLE ? ".cycle." : ".sweep.");
			collect_names(st->steps, st->nsteps, path, h);
			continue;
		}
		if (!st->module)
			continue;
		XGROW(h->paths, h->npaths + 1, h->apaths);
		h->paths[h->npaths++] = xstrdup(path->buf);
		size_t k = 0;
		while (k < h->nmods && h->mods[k] != st->module->name)
			k++;
		if (k == h->nmods)
			h->mods[h->nmods++] = st->module->name;
	}
	sb_setlen(path, len);
}

static void hnames_release(struct hnames *h)
{
	free(h->mods);
	for (size_t i = 0; i < h->npaths; i++)
		free(h->paths[i]);
	free(h->paths);
}

/* " (did you mean 'X'?)" when one of the plan's names is close to s. */
static void suggest_name(struct strbuf *sb, const char *s, const struct hnames *h)
{
	size_t n = h->nmods + h->npaths;
	const char **all = xcalloc(n + 1, sizeof(char *));
	memcpy(all, h->mods, h->nmods * sizeof(char *));
	for (size_t i = 0; i < h->npaths; i++)
		all[h->nmods + i] = h->paths[i];
	const char *near = diag_suggest(s, all, n);
	if (near)
		sb_addf(sb, " (did you mean '%s'?)", near);
	free(all);
}

static const char *kind_name(const struct plan_step *st)
{
	return st->kind == STEP_CYCLE ? "cycle" : st->kind == STEP_SWEEP ? "sweep" : "module step";
}

/*
 * The module step that step path s names ("2", "2.cycle.1",
 * "3.sweep.4.sweep.1"), or NULL with the reason in why (after "no step
 * 'S' in the plan: "). canon gets the path with its numbers written
 * plainly ("02" -> "2"). *block is set when s names a cycle or sweep
 * itself.
 */
static const struct plan_step *step_of_path(const struct plan *p, const char *s,
					    struct strbuf *canon, struct strbuf *why,
					    const struct plan_step **block)
{
	const struct plan_step *steps = p->steps, *st = NULL;
	size_t n = p->nsteps, blocklen = 0;
	*block = NULL;
	for (;;) {
		char *end;
		if (*s < '0' || *s > '9')
			return NULL;
		unsigned long i = strtoul(s, &end, 10);
		if (i < 1 || i > n) {
			if (st)
				sb_addf(why, "the %s at step %.*s has %zu step%s", kind_name(st),
					(int)blocklen, canon->buf, n, n == 1 ? "" : "s");
			else
				sb_addf(why, "the plan has %zu step%s", n, n == 1 ? "" : "s");
			return NULL;
		}
		st = &steps[i - 1];
		sb_addf(canon, "%lu", i);
		s = end;
		if (!*s)
			break;
		int cyc = !strncmp(s, ".cycle.", 7), swp = !strncmp(s, ".sweep.", 7);
		if (!cyc && !swp)
			return NULL;
		if (st->kind != (cyc ? STEP_CYCLE : STEP_SWEEP)) {
			sb_addf(why, "step %s is a %s, not a %s", canon->buf,
				st->kind == STEP_MODULE && st->module ? st->module->name : kind_name(st),
				cyc ? "cycle" : "sweep");
			return NULL;
		}
		blocklen = canon->len;
		sb_adds(canon, cyc ? ".cycle." : ".sweep.");
		s += 7;
		steps = st->steps;
		n = st->nsteps;
	}
	if (st->kind != STEP_MODULE || !st->module) {
		*block = st->kind != STEP_MODULE ? st : NULL;
		return NULL;
	}
	return st;
}

/* s with the numbers after "cycle" and "sweep" taken out, as the report's
 * step templates have them ("2.cycle3.1" -> "2.cycle.1"). */
static void without_numbers(const char *s, struct strbuf *out)
{
	while (*s) {
		if (!strncmp(s, "cycle", 5) || !strncmp(s, "sweep", 5)) {
			sb_add(out, s, 5);
			s += 5;
			while (*s >= '0' && *s <= '9')
				s++;
			continue;
		}
		sb_addch(out, *s++);
	}
}

/*
 * The module a headline key names: a module of the plan's steps, or a step
 * path. NULL when it names neither (reported); canon gets the key as
 * stored in plan_headline.step.
 */
static const struct rig_module *headline_module(struct pctx *c, yaml_node_t *k, const char *key,
						const struct hnames *h, struct strbuf *canon)
{
	struct strbuf msg = STRBUF_INIT;
	const struct rig_module *m = NULL;
	if (*key < '0' || *key > '9') {
		m = mod_find(key);
		size_t i = 0;
		while (m && i < h->nmods && strcmp(h->mods[i], key))
			i++;
		if (m && i < h->nmods) {
			sb_adds(canon, key);
			sb_release(&msg);
			return m;
		}
		if (m) {
			sb_addf(&msg, "module '%s' in report.headline is not used by the plan's steps",
				key);
			if (h->nmods) {
				sb_adds(&msg, " (they use ");
				for (size_t j = 0; j < h->nmods; j++)
					sb_addf(&msg, "%s%s", j ? ", " : "", h->mods[j]);
				sb_addch(&msg, ')');
			}
		} else {
			sb_addf(&msg, "unknown step '%s' in report.headline: give a module of the "
				      "plan's steps or a step path such as '1' or '2.cycle.1'", key);
			suggest_name(&msg, key, h);
		}
		diag_error(c->d, plan_node_mark(k), "%s", msg.buf);
		sb_release(&msg);
		return NULL;
	}
	struct strbuf plain = STRBUF_INIT, why = STRBUF_INIT;
	const struct plan_step *block = NULL, *st = NULL;
	without_numbers(key, &plain);
	if (strcmp(plain.buf, key)) {
		sb_addf(&msg, "step path '%s' in report.headline has a cycle or sweep number: a "
			      "headline holds for every cycle and sweep value, so leave them out "
			      "('%s')", key, plain.buf);
	} else if ((st = step_of_path(c->p, key, canon, &why, &block))) {
		m = st->module;
	} else if (block) {
		sb_addf(&msg, "step '%s' in report.headline is a %s, not a measurement: give one of "
			      "its steps, such as '%s.%s.1'", key, kind_name(block), canon->buf,
			kind_name(block));
	} else if (why.len) {
		sb_addf(&msg, "no step '%s' in the plan for report.headline: %s", key, why.buf);
	} else {
		sb_addf(&msg, "invalid step path '%s' in report.headline: step numbers from 1 joined "
			      "by '.', with 'cycle' or 'sweep' between a block and its steps, such "
			      "as '2' or '2.cycle.1'", key);
		suggest_name(&msg, key, h);
	}
	if (!m)
		diag_error(c->d, plan_node_mark(k), "%s", msg.buf);
	sb_release(&msg);
	sb_release(&plain);
	sb_release(&why);
	return m;
}

/* One headline entry: `KEY: METRIC` or `KEY: { metric: METRIC, better: higher }`. */
static void parse_headline(struct pctx *c, yaml_node_t *k, yaml_node_t *v, const char *key,
			   const struct rig_module *m, const char *canon)
{
	struct plan_report *r = &c->p->report;
	const char *metric = NULL;
	yaml_node_t *mnode = v;
	int better = 0;
	if (v->type == YAML_MAPPING_NODE) {
		struct key keys[] = { { "metric", 0, 0 }, { "better", 0, 0 } };
		struct strbuf where = STRBUF_INIT;
		sb_addf(&where, "in report.headline '%s'", key);
		plan_map_keys(c, v, keys, NKEYS(keys), where.buf, "");
		if (plan_require_key(c, &keys[0], v, where.buf)) {
			metric = plan_key_scalar(c, &keys[0], "a metric name");
			mnode = keys[0].val;
		}
		int b;
		if (keys[1].key && plan_key_choice(c, &keys[1], better_names, &b) == 0)
			better = b == 0 ? 1 : -1;
		sb_release(&where);
	} else if (plan_node_is_null(v)) {
		diag_error(c->d, plan_node_mark(k), "no value for '%s' in report.headline (expected a "
			   "metric name, or { metric: NAME, better: higher or lower })", key);
	} else if (v->type == YAML_SCALAR_NODE) {
		metric = plan_node_text(v);
	} else {
		diag_error(c->d, plan_node_mark(v), "expected a metric name, or { metric: NAME, better: "
			   "higher or lower }, for '%s' in report.headline, not %s", key, plan_node_kind(v));
	}
	if (!metric)
		return;
	const struct rig_metric *x = m->metrics;
	size_t nx = 0;
	while (x[nx].name && strcmp(x[nx].name, metric))
		nx++;
	if (!x[nx].name && !m->open_metrics) {
		const char **names = xcalloc(nx + 1, sizeof(char *));
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < nx; i++) {
			names[i] = x[i].name;
			sb_addf(&sb, "%s%s", i ? ", " : "", x[i].name);
		}
		const char *near = diag_suggest(metric, names, nx);
		if (!nx)
			diag_error(c->d, plan_node_mark(mnode), "unknown metric '%s' for '%s' in "
				   "report.headline: %s measures nothing", metric, key, m->name);
		else if (near)
			diag_error(c->d, plan_node_mark(mnode), "unknown metric '%s' for '%s' in "
				   "report.headline (%s measures %s; did you mean '%s'?)", metric, key,
				   m->name, sb.buf, near);
		else
			diag_error(c->d, plan_node_mark(mnode), "unknown metric '%s' for '%s' in "
				   "report.headline (%s measures %s)", metric, key, m->name, sb.buf);
		sb_release(&sb);
		free(names);
		return;
	}
	if (!better && x[nx].name)
		better = plan_unit_better(x[nx].unit);
	r->headlines = xrealloc(r->headlines, (r->nheadlines + 1) * sizeof(*r->headlines));
	r->headlines[r->nheadlines++] = (struct plan_headline){ xstrdup(canon), xstrdup(metric),
								 better, plan_node_mark(k) };
}

static void parse_headlines(struct pctx *c, const struct key *hk)
{
	if (!hk->key || plan_node_is_null(hk->val))
		return;
	if (hk->val->type != YAML_MAPPING_NODE) {
		diag_error(c->d, plan_node_mark(hk->val), "expected a mapping for 'report.headline' "
			   "(step or module: metric), not %s", plan_node_kind(hk->val));
		return;
	}
	size_t nmod = 0;
	while (mod_all[nmod])
		nmod++;
	struct hnames h = { xcalloc(nmod + 1, sizeof(char *)), 0, NULL, 0, 0 };
	struct strbuf path = STRBUF_INIT;
	collect_names(c->p->steps, c->p->nsteps, &path, &h);
	sb_release(&path);
	yaml_node_pair_t *pairs = hk->val->data.mapping.pairs.start;
	size_t npairs = (size_t)(hk->val->data.mapping.pairs.top - pairs);
	/* Each key's step as stored, for duplicates ("2" and "02" are one). */
	char **canons = xcalloc(npairs + 1, sizeof(char *));
	for (size_t i = 0; i < npairs; i++) {
		yaml_node_t *k = plan_node_at(c, pairs[i].key), *v = plan_node_at(c, pairs[i].value);
		const char *key = plan_node_text(k);
		if (!key || !*key) { /* the module `null` is a name here, as in steps */
			diag_error(c->d, plan_node_mark(k), "keys must be module names or step paths, not "
				   "%s (in report.headline)", key ? "nothing" : plan_node_kind(k));
			continue;
		}
		struct strbuf canon = STRBUF_INIT;
		const struct rig_module *m = headline_module(c, k, key, &h, &canon);
		if (!m) {
			sb_release(&canon);
			continue;
		}
		size_t j = 0;
		while (j < i && (!canons[j] || strcmp(canons[j], canon.buf)))
			j++;
		if (j < i) {
			diag_error(c->d, plan_node_mark(k), "duplicate key '%s' in report.headline (first "
				   "given at line %d)", key, plan_node_mark(plan_node_at(c, pairs[j].key)).line);
			sb_release(&canon);
			continue;
		}
		canons[i] = sb_detach(&canon);
		parse_headline(c, k, v, key, m, canons[i]);
	}
	for (size_t i = 0; i < npairs; i++)
		free(canons[i]);
	free(canons);
	hnames_release(&h);
}

void plan_parse_report(struct pctx *c, const struct key *rk)
{
	struct key keys[] = { { "title", 0, 0 }, { "baseline", 0, 0 }, { "by", 0, 0 },
			      { "formats", 0, 0 }, { "headline", 0, 0 }, { "compare", 0, 0 } };
	struct plan_report *r = &c->p->report;
	r->formats = FMT_HTML | FMT_CSV;
	if (!rk->key || plan_node_is_null(rk->val) ||
	    plan_map_keys(c, rk->val, keys, NKEYS(keys), "in report", "'report'"))
		return;
	const char *s = plan_key_scalar(c, &keys[0], "a title");
	if (s)
		r->title = xstrdup(s);
	s = plan_key_scalar(c, &keys[1], "a volume or layout name");
	if (s) {
		r->baseline = xstrdup(s);
		r->baseline_mark = plan_node_mark(keys[1].val);
		check_baseline(c, &keys[1]);
	}
	yaml_node_t *seq = plan_key_seq(c, &keys[2], "a list of factors");
	if (seq)
		each_unique(c, seq, "report.by", add_factor);
	seq = plan_key_seq(c, &keys[3], "a list of formats (html, csv, json)");
	if (seq) {
		r->formats = 0;
		each_unique(c, seq, "report.formats", add_format);
		if (seq->data.sequence.items.start == seq->data.sequence.items.top)
			diag_error(c->d, plan_node_mark(seq), "report.formats is empty: give at least one of "
				   "html, csv, json");
	}
	parse_headlines(c, &keys[4]);
	int v;
	if (keys[5].key && plan_key_choice(c, &keys[5], compare_names, &v) == 0)
		r->compare = v == 0 ? COMPARE_FS : COMPARE_VOLUME;
}
