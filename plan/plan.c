/*
 * The plan parser: a plan file (plan language v1, docs/plan-language.md)
 * into struct plan, with every error of the file collected in a struct diag
 * at the offending node's line and column.
 *
 * libyaml's document API loads the whole file into a node tree first: a plan
 * is small, and a tree lets each part be checked where it is (keys looked up
 * in tables, duplicates found, cross-references such as report.baseline
 * resolved after the rest) without a hand-written event state machine. Each
 * checker reports its own problems and returns "nothing" so that the walk
 * goes on; a plan is valid iff no error was added.
 *
 * This file: the node helpers, the top level and cache. The target, layouts
 * and platform checks live in plan_target.c, steps in plan_steps.c, the
 * report section in plan_report.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/files.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"

/* --- nodes --- */

struct mark plan_node_mark(const yaml_node_t *n)
{
	struct mark m = { 0, 0, 0 };
	if (!n)
		return m;
	m.line = (int)n->start_mark.line + 1;
	m.col = (int)n->start_mark.column + 1;
	m.len = 1;
	if (n->end_mark.line == n->start_mark.line && n->end_mark.column > n->start_mark.column)
		m.len = (int)(n->end_mark.column - n->start_mark.column);
	if (n->type == YAML_SCALAR_NODE && n->start_mark.line == n->end_mark.line &&
	    n->data.scalar.length == 0 && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		m.len = 1;
	return m;
}

yaml_node_t *plan_node_at(struct pctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

int plan_node_once(struct pctx *c, const yaml_node_t *n, const void *what)
{
	if (!c->doc || n < c->doc->nodes.start || n >= c->doc->nodes.top)
		return 1;
	size_t i = (size_t)(n - c->doc->nodes.start);
	if (!c->node_memo) {
		c->nnodes = (size_t)(c->doc->nodes.top - c->doc->nodes.start);
		c->node_memo = xcalloc(c->nnodes + 1, sizeof(*c->node_memo));
	}
	if (i >= c->nnodes)
		return 1;
	if (c->node_memo[i] == what)
		return 0;
	c->node_memo[i] = what;
	return 1;
}

const char *plan_node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	default: return "a single value";
	}
}

const char *plan_node_text(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int plan_node_is_null(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *s = plan_node_text(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

void plan_join_choices(struct strbuf *sb, const char *const *choices)
{
	for (size_t i = 0; choices[i]; i++)
		sb_addf(sb, "%s%s", i ? ", " : "", choices[i]);
}

int plan_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 64)
		return 0;
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._+-", *s)))
			return 0;
	return 1;
}

/* --- keys --- */

int plan_map_keys(struct pctx *c, yaml_node_t *map, struct key *keys, size_t nkeys,
	     const char *where, const char *what)
{
	if (!map || map->type != YAML_MAPPING_NODE) {
		if (map)
			diag_error(c->d, plan_node_mark(map), "expected a mapping for %s, not %s",
				   what, plan_node_is_null(map) ? "nothing" : plan_node_kind(map));
		return -1;
	}
	const char **names = xcalloc(nkeys + 1, sizeof(char *));
	for (size_t i = 0; i < nkeys; i++)
		names[i] = keys[i].name;
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
	     pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = plan_node_at(c, pr->key), *v = plan_node_at(c, pr->value);
		const char *name = plan_node_text(k);
		if (!name) {
			diag_error(c->d, plan_node_mark(k), "keys must be plain names, not %s (%s)",
				   plan_node_kind(k), where);
			continue;
		}
		size_t i = 0;
		while (i < nkeys && strcmp(keys[i].name, name))
			i++;
		if (i == nkeys) {
			const char *near = diag_suggest(name, names, nkeys);
			if (near)
				diag_error(c->d, plan_node_mark(k), "unknown key '%s' %s (did you mean '%s'?)",
					   name, where, near);
			else
				diag_error(c->d, plan_node_mark(k), "unknown key '%s' %s", name, where);
			continue;
		}
		if (keys[i].key) {
			diag_error(c->d, plan_node_mark(k), "duplicate key '%s' %s (first given at line %d)",
				   name, where, plan_node_mark(keys[i].key).line);
			continue;
		}
		keys[i].key = k;
		keys[i].val = v;
	}
	free(names);
	return 0;
}

int plan_map_keys_quiet(struct pctx *c, yaml_node_t *map, struct key *keys, size_t nkeys)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return -1;
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
	     pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = plan_node_at(c, pr->key);
		const char *name = plan_node_text(k);
		size_t i = 0;
		while (name && i < nkeys && strcmp(keys[i].name, name))
			i++;
		if (name && i < nkeys && !keys[i].key) {
			keys[i].key = k;
			keys[i].val = plan_node_at(c, pr->value);
		}
	}
	return 0;
}

int plan_require_key(struct pctx *c, const struct key *k, yaml_node_t *map, const char *where)
{
	if (k->key)
		return 1;
	if (map && map->type == YAML_MAPPING_NODE)
		diag_error(c->d, plan_node_mark(map), "missing key '%s' %s", k->name, where);
	return 0;
}

const char *plan_key_scalar(struct pctx *c, const struct key *k, const char *what)
{
	if (!k->key)
		return NULL;
	if (plan_node_is_null(k->val)) {
		diag_error(c->d, plan_node_mark(k->key), "no value for '%s' (expected %s)", k->name, what);
		return NULL;
	}
	if (k->val->type != YAML_SCALAR_NODE) {
		diag_error(c->d, plan_node_mark(k->val), "expected %s for '%s', not %s", what, k->name,
			   plan_node_kind(k->val));
		return NULL;
	}
	return plan_node_text(k->val);
}

int plan_key_uint(struct pctx *c, const struct key *k, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *s = plan_key_scalar(c, k, "a whole number");
	const char *why;
	uint64_t v;
	if (!s)
		return -1;
	if (units_parse_uint(s, &v, &why)) {
		diag_error(c->d, plan_node_mark(k->val), "invalid number '%s' for '%s': %s", s, k->name, why);
		return -1;
	}
	if (v < min || v > max) {
		diag_error(c->d, plan_node_mark(k->val), "'%s' must be %s %llu (is %s)", k->name,
			   v < min ? "at least" : "at most",
			   (unsigned long long)(v < min ? min : max), s);
		return -1;
	}
	*out = v;
	return 0;
}

int plan_key_bool(struct pctx *c, const struct key *k, int *out)
{
	const char *s = plan_key_scalar(c, k, "true or false");
	if (!s)
		return -1;
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		*out = 1;
	else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		*out = 0;
	else {
		diag_error(c->d, plan_node_mark(k->val), "invalid value '%s' for '%s': expected true or false",
			   s, k->name);
		return -1;
	}
	return 0;
}

int plan_key_choice(struct pctx *c, const struct key *k, const char *const *choices, int *out)
{
	const char *s = plan_key_scalar(c, k, "a name");
	size_t n = 0;
	if (!s)
		return -1;
	for (; choices[n]; n++)
		if (!strcmp(choices[n], s)) {
			*out = (int)n;
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	plan_join_choices(&sb, choices);
	const char *near = diag_suggest(s, choices, n);
	if (near)
		diag_error(c->d, plan_node_mark(k->val), "unknown value '%s' for '%s' (expected one of %s; "
			   "did you mean '%s'?)", s, k->name, sb.buf, near);
	else
		diag_error(c->d, plan_node_mark(k->val), "unknown value '%s' for '%s' (expected one of %s)",
			   s, k->name, sb.buf);
	sb_release(&sb);
	return -1;
}

yaml_node_t *plan_key_seq(struct pctx *c, const struct key *k, const char *what)
{
	if (!k->key)
		return NULL;
	if (plan_node_is_null(k->val)) {
		diag_error(c->d, plan_node_mark(k->key), "no value for '%s' (expected %s)", k->name, what);
		return NULL;
	}
	if (k->val->type != YAML_SEQUENCE_NODE) {
		diag_error(c->d, plan_node_mark(k->val), "expected %s for '%s', not %s", what, k->name,
			   plan_node_kind(k->val));
		return NULL;
	}
	return k->val;
}

/* --- cache --- */

static void parse_cache(struct pctx *c, const struct key *ck)
{
	struct key keys[] = { { "direct", 0, 0 }, { "flush", 0, 0 }, { "remount", 0, 0 } };
	struct plan *p = c->p;
	if (!ck->key || plan_node_is_null(ck->val) ||
	    plan_map_keys(c, ck->val, keys, NKEYS(keys), "in cache", "'cache'"))
		return;
	plan_key_bool(c, &keys[0], &p->cache.direct);
	plan_key_bool(c, &keys[1], &p->cache.flush);
	plan_key_bool(c, &keys[2], &p->cache.remount);
	if (p->cache.remount && p->target.kind == TARGET_DIRS && keys[2].key)
		diag_error(c->d, plan_node_mark(keys[2].val), "'remount' needs an image or disk target: "
			   "rig does not mount the directories of a dirs target");
}

/* --- top level --- */

static int name_is_plan_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 64 || !((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	return 1;
}

static const char *const order_names[] = {
	"alternate", "counterbalance", "latin", "random", "sequential", NULL
};
static const char *const reprovision_names[] = { "layout", "repeat", NULL };

/*
 * repeat: N, or repeat: { times: N, provision: once | each } (each: every
 * repetition on file systems made afresh, so that where they put the files
 * is replicated too; the same as reprovision: repeat, which may say it
 * instead but not the opposite).
 */
static const char *const provision_names[] = { "once", "each", NULL };

static void parse_repeat(struct pctx *c, const struct key *rk, const struct key *pk)
{
	struct plan *p = c->p;
	int v;
	yaml_node_t *prov = NULL;
	const char *said = "provision: each";
	if (rk->key && rk->val->type == YAML_MAPPING_NODE) {
		struct key k[] = { { "times", 0, 0 }, { "provision", 0, 0 } };
		if (plan_map_keys(c, rk->val, k, NKEYS(k), "in repeat",
				  "'repeat' (N or { times, provision })") == 0) {
			uint64_t r;
			if (plan_require_key(c, &k[0], rk->val, "in repeat") &&
			    plan_key_uint(c, &k[0], 1, PLAN_MAX_COUNT, &r) == 0)
				p->repeat = (uint32_t)r;
			if (k[1].key && plan_key_choice(c, &k[1], provision_names, &v) == 0) {
				prov = k[1].val;
				p->reprovision = v ? REPROVISION_REPEAT : REPROVISION_LAYOUT;
			}
		}
	} else if (rk->key) {
		uint64_t r;
		if (plan_key_uint(c, rk, 1, PLAN_MAX_COUNT, &r) == 0)
			p->repeat = (uint32_t)r;
	}
	if (pk->key && plan_key_choice(c, pk, reprovision_names, &v) == 0) {
		if (prov && v != (int)p->reprovision)
			diag_error(c->d, plan_node_mark(pk->val), "'reprovision: %s' contradicts 'provision: "
				   "%s' in repeat (line %d): say it once, in repeat", reprovision_names[v],
				   provision_names[p->reprovision == REPROVISION_REPEAT],
				   plan_node_mark(prov).line);
		else
			p->reprovision = (enum plan_reprovision)v;
		if (!prov) {
			prov = pk->val;
			said = "reprovision: repeat";
		}
	}
	if (prov && p->reprovision == REPROVISION_REPEAT && p->target.kind == TARGET_DIRS)
		diag_error(c->d, plan_node_mark(prov), "'%s' needs an image or disk target: rig cannot "
			   "provision a dirs target afresh", said);
}

/* In the order of the K_ names below (rig help plan-language is checked
 * against this list). */
const char *const plan_top_keys[] = {
	"rig", "name", "description", "seed", "target", "layouts", "order", "repeat",
	"reprovision", "cache", "steps", "report", NULL,
};

static void parse_root(struct pctx *c, yaml_node_t *root)
{
	struct plan *p = c->p;
	enum { K_RIG, K_NAME, K_DESC, K_SEED, K_TARGET, K_LAYOUTS, K_ORDER, K_REPEAT,
	       K_REPROVISION, K_CACHE, K_STEPS, K_REPORT, K_N };
	struct key k[K_N];
	for (size_t i = 0; i < K_N; i++)
		k[i] = (struct key){ plan_top_keys[i], NULL, NULL };
	if (root->type != YAML_MAPPING_NODE) {
		diag_error(c->d, plan_node_mark(root), "a plan is a mapping of keys (rig, name, target, "
			   "steps, ...), not %s", plan_node_kind(root));
		return;
	}
	plan_map_keys(c, root, k, NKEYS(k), "in the plan", "the plan");

	if (!k[K_RIG].key) {
		diag_error(c->d, plan_node_mark(root), "missing key 'rig' in the plan (the plan-language "
			   "version; this rig supports rig: %d)", PLAN_VERSION);
	} else {
		const char *s = plan_key_scalar(c, &k[K_RIG], "the plan-language version");
		uint64_t v;
		const char *why;
		if (s && (units_parse_uint(s, &v, &why) || v != PLAN_VERSION))
			diag_error(c->d, plan_node_mark(k[K_RIG].val), "unsupported plan-language version '%s' "
				   "(this rig supports version %d)", s, PLAN_VERSION);
		else if (s)
			p->version = (int)v;
	}

	if (plan_require_key(c, &k[K_NAME], root, "in the plan")) {
		const char *s = plan_key_scalar(c, &k[K_NAME], "a name");
		if (s && !name_is_plan_name(s))
			diag_error(c->d, plan_node_mark(k[K_NAME].val), "invalid plan name '%s': use 1 to 64 "
				   "lowercase letters, digits and '-', starting with a letter or digit", s);
		else if (s)
			p->name = xstrdup(s);
	}
	const char *s = plan_key_scalar(c, &k[K_DESC], "a text");
	if (s)
		p->description = xstrdup(s);
	if (k[K_SEED].key && plan_key_uint(c, &k[K_SEED], 0, UINT64_MAX, &p->seed) == 0)
		p->has_seed = 1;

	plan_parse_fs_map(c);
	plan_parse_vars(c);
	if (plan_require_key(c, &k[K_TARGET], root, "in the plan"))
		plan_parse_target(c, k[K_TARGET].key, k[K_TARGET].val);
	if (c->target_known && p->target.kind == TARGET_DIRS) {
		if (k[K_LAYOUTS].key)
			diag_error(c->d, plan_node_mark(k[K_LAYOUTS].key), "'layouts' apply only to image and "
				   "disk targets: the directories of a dirs target are used as they are");
	} else if (c->target_known && !k[K_LAYOUTS].key) {
		diag_error(c->d, plan_node_mark(k[K_TARGET].key), "missing key 'layouts' in the plan: "
			   "an image or disk target needs at least one layout");
	} else if (k[K_LAYOUTS].key) {
		plan_parse_layouts(c, &k[K_LAYOUTS]);
	}

	int v;
	if (k[K_ORDER].key && plan_key_choice(c, &k[K_ORDER], order_names, &v) == 0)
		p->order = (enum plan_order)v;
	parse_repeat(c, &k[K_REPEAT], &k[K_REPROVISION]);
	parse_cache(c, &k[K_CACHE]);
	if (plan_require_key(c, &k[K_STEPS], root, "in the plan")) {
		yaml_node_t *seq = plan_key_seq(c, &k[K_STEPS], "a list of steps");
		if (seq && seq->data.sequence.items.start == seq->data.sequence.items.top)
			diag_error(c->d, plan_node_mark(seq), "'steps' is empty: a plan needs at least one step");
		else if (seq)
			plan_parse_steps(c, seq, &p->steps, &p->nsteps);
	}
	plan_parse_report(c, &k[K_REPORT]);
	plan_check_platform(c);
	plan_check_keep(c);
	plan_check_conditions(c);
	plan_check_vars(c);
	if (k[K_DESC].val && !c->d->nerrors)
		plan_check_description(c, plan_node_mark(k[K_DESC].val));
}

/* Report libyaml's problem (a syntax error) at its mark. */
static void yaml_problem(struct pctx *c, yaml_parser_t *parser)
{
	struct mark m = { (int)parser->problem_mark.line + 1, (int)parser->problem_mark.column + 1, 1 };
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "invalid YAML: %s", parser->problem ? parser->problem : "syntax error");
	if (parser->context)
		sb_addf(&sb, " (%s at line %d)", parser->context, (int)parser->context_mark.line + 1);
	diag_error(c->d, m, "%s", sb.buf);
	sb_release(&sb);
}

static void parse_document(struct pctx *c)
{
	struct plan *p = c->p;
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser)) {
		diag_error(c->d, (struct mark){ 0, 0, 0 }, "cannot initialize the YAML parser");
		return;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)p->text, p->text_len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_problem(c, &parser);
		yaml_parser_delete(&parser);
		return;
	}
	c->doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || plan_node_is_null(root)) {
		diag_error(c->d, (struct mark){ 1, 1, 1 }, "the plan is empty: it needs at least rig, "
			   "name, target and steps");
	} else {
		parse_root(c, root);
		yaml_document_t next;
		if (!yaml_parser_load(&parser, &next)) {
			yaml_problem(c, &parser);
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&next);
			if (r2)
				diag_error(c->d, plan_node_mark(r2), "a plan is one YAML document; "
					   "this is a second one");
			yaml_document_delete(&next);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	c->doc = NULL;
	free(c->node_memo);
	c->node_memo = NULL;
}

struct plan *plan_parse_text(const char *name, const char *text, size_t len,
			     const struct plan_options *opt, struct diag *d)
{
	static const struct plan_options none = { .platform = NULL };
	struct plan *p = xcalloc(1, sizeof(*p));
	p->file = xstrdup(name ? name : "<plan>");
	p->text = xmalloc(len + 1);
	memcpy(p->text, text, len);
	p->text[len] = '\0';
	p->text_len = len;
	p->order = ORDER_ALTERNATE;
	p->repeat = 1;
	p->reprovision = REPROVISION_LAYOUT;
	p->cache.direct = 1;
	p->cache.flush = 1;
	p->report.formats = FMT_HTML | FMT_CSV;
	d->file = p->file;
	d->text = p->text;

	struct pctx c = { .d = d, .p = p, .opt = opt ? opt : &none };
	size_t nmod = 0;
	while (mod_all[nmod])
		nmod++;
	c.seen = xcalloc(nmod + 1, 1);
	parse_document(&c);
	free(c.seen);
	for (size_t i = 0; i < c.nsources; i++)
		free(c.sources[i].folder);
	free(c.sources);
	free(c.sweep_vars);
	free(c.fsrefs);
	free(c.var_used);
	return p;
}

struct plan *plan_parse_file(const char *path, const struct plan_options *opt, struct diag *d)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = files_read(path, &sb);
	if (rc < 0) {
		d->file = path;
		diag_error(d, (struct mark){ 0, 0, 0 }, "cannot read plan %s: %s", path, strerror(-rc));
		sb_release(&sb);
		return NULL;
	}
	struct plan *p = plan_parse_text(path, sb.buf, sb.len, opt, d);
	sb_release(&sb);
	return p;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	free(p->file);
	free(p->text);
	free(p->name);
	free(p->description);
	free_strv(p->target.dirs, p->target.ndirs);
	free_strv(p->target.names, p->target.ndirs);
	free(p->target.image_path);
	free(p->target.device);
	free(p->target.confirm);
	for (size_t i = 0; i < p->nlayouts; i++) {
		struct plan_layout *l = &p->layouts[i];
		free(l->name);
		free(l->scheme);
		for (size_t j = 0; j < l->nparts; j++) {
			free(l->parts[j].name);
			free(l->parts[j].fs);
		}
		free(l->parts);
	}
	free(p->layouts);
	plan_steps_free(p->steps, p->nsteps);
	free(p->report.title);
	free(p->report.baseline);
	free_strv(p->report.by, p->report.nby);
	for (size_t i = 0; i < p->report.nheadlines; i++) {
		free(p->report.headlines[i].step);
		free(p->report.headlines[i].metric);
	}
	free(p->report.headlines);
	plan_vars_free(p);
	free(p);
}
