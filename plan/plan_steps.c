/*
 * The steps of a plan: module steps, `cycle` and `sweep` blocks, nested up
 * to PLAN_MAX_DEPTH deep. Each module step keeps its parameters as written (struct pval)
 * and is validated by binding them exactly as the runner will, for the
 * values of the sweep variables it refers to (plan_bind.c), so that
 * `to: $level` with `level: [90%, 120%]` is an error at `120%`.
 *
 * Only the variables a step uses are varied, and the same message at the
 * same place is reported once however many combinations produce it.
 * `needs` (read after write, enumerate after tree) is checked against plan
 * order: any earlier step, at any depth.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"

/* The enclosing sweeps of a step, innermost first. */
struct scope {
	const struct plan_step *sweep; /* var may be NULL when its name was invalid */
	int used;
	struct scope *outer;
};

static void parse_list(struct pctx *c, yaml_node_t *seq, struct scope *sc,
		       struct plan_step **out, size_t *n);

static size_t module_index(const struct rig_module *m)
{
	size_t i = 0;
	while (mod_all[i] && mod_all[i] != m)
		i++;
	return i;
}

/* --- module parameters --- */

/* Fill pv from the value node; on a shape error, pv is left "given but
 * reported" (no text, not a list) so that binding skips it. */
static int fill_pval(struct pctx *c, const struct rig_module *m, const struct rig_param *rp,
		     yaml_node_t *k, yaml_node_t *v, struct pval *pv)
{
	pv->given = 1;
	pv->key_mark = plan_node_mark(k);
	pv->mark = plan_node_mark(v);
	if (plan_node_is_null(v)) {
		diag_error(c->d, pv->key_mark, "no value for '%s' in step '%s' (expected a %s)",
			   rp->name, m->name, plan_params_type_name(rp->type));
		return -1;
	}
	if (v->type == YAML_SCALAR_NODE) {
		pv->text = xstrdup(plan_node_text(v));
		return 0;
	}
	if (v->type == YAML_MAPPING_NODE) {
		diag_error(c->d, pv->mark, "expected a %s for '%s' in step '%s', not a mapping",
			   plan_params_type_name(rp->type), rp->name, m->name);
		return -1;
	}
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	char **items = xcalloc(n + 1, sizeof(char *));
	struct mark *marks = xcalloc(n + 1, sizeof(struct mark));
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = plan_node_at(c, v->data.sequence.items.start[i]);
		marks[i] = plan_node_mark(it);
		if (it->type != YAML_SCALAR_NODE || plan_node_is_null(it)) {
			diag_error(c->d, marks[i], "expected a single value in the list for '%s' in "
				   "step '%s', not %s", rp->name, m->name,
				   it->type == YAML_SCALAR_NODE ? "nothing" : plan_node_kind(it));
			bad = 1;
			items[i] = xstrdup("");
			continue;
		}
		items[i] = xstrdup(plan_node_text(it));
	}
	if (bad) {
		for (size_t i = 0; i < n; i++)
			free(items[i]);
		free(items);
		free(marks);
		return -1;
	}
	pv->is_seq = 1;
	pv->items = items;
	pv->item_marks = marks;
	pv->nitems = n;
	return 0;
}

/*
 * Validate the step by binding its parameters (plan_bind.c) for the values
 * of the enclosing sweeps it uses; a name no sweep defines is a --var (the
 * outermost binding) or an error of the binding.
 */
static void validate_bindings(struct pctx *c, const struct plan_step *st, struct scope *sc,
			      int values_only)
{
	size_t np = mod_nparams(st->module), nrefs = 1;
	for (size_t i = 0; i < np; i++)
		nrefs += st->params[i].is_seq ? st->params[i].nitems : 1;
	const struct plan_step **used = xcalloc(nrefs, sizeof(*used));
	size_t nused = 0;
	for (size_t i = 0; i < np; i++) {
		const struct pval *pv = &st->params[i];
		size_t nt = pv->is_seq ? pv->nitems : 1;
		for (size_t j = 0; pv->given && j < nt; j++) {
			const char *name = plan_params_var_ref(pv->is_seq ? pv->items[j] : pv->text);
			if (!name)
				continue; /* a value as written */
			struct scope *s = sc;
			while (s && (!s->sweep->var || strcmp(s->sweep->var, name)))
				s = s->outer;
			if (!s) {
				plan_var_use(c, name); /* a --var: the outermost binding */
				continue;
			}
			s->used = 1;
			size_t k = 0;
			while (k < nused && used[k] != s->sweep)
				k++;
			if (k == nused)
				used[nused++] = s->sweep;
		}
	}
	plan_bind_step(c, st, used, nused, values_only);
	free(used);
}

/* --- needs, on the volume and at folders --- */

/* Whether path is dir or inside it (both normalised). */
static int path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return 1;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* A source folder may not be in the target, nor hold it. The target's
 * relative `dirs` are checked when the step runs (the module refuses a
 * folder inside or around its volume's folder). */
static void check_folder_target(struct pctx *c, const char *folder, const struct rig_param *p,
				const struct rig_module *m, struct mark at)
{
	const struct plan_target *t = &c->p->target;
	const char *why = NULL;
	for (size_t i = 0; i < t->ndirs; i++) {
		char *dir = t->dirs[i][0] == '/' ? plan_params_folder_normalise(t->dirs[i], &why) : NULL;
		if (dir && (path_within(folder, dir) || path_within(dir, folder)))
			diag_error(c->d, at, "'%s' in step '%s' is %s, %s the target's folder %s: a "
				   "source folder must be outside the target", p->name, m->name, folder,
				   path_within(folder, dir) ? "inside" : "around", t->dirs[i]);
		free(dir);
	}
	char *img = t->image_path && t->image_path[0] == '/'
			    ? plan_params_folder_normalise(t->image_path, &why) : NULL;
	if (img && path_within(folder, img))
		diag_error(c->d, at, "'%s' in step '%s' is %s, the target's image file: a source "
			   "folder must be outside the target (the image's folder is fine)", p->name,
			   m->name, folder);
	free(img);
}

/* The folder a step gives its PT_FOLDER parameter p (NULL: it has none),
 * normalised (owned), or NULL when it gives none or one that binding
 * reports as invalid. A variable is an error here: the steps that build,
 * change and copy a folder are matched by it when the plan is read.
 * *given: the plan gives the parameter. */
static char *step_folder(struct pctx *c, const struct rig_module *m, const struct plan_step *st,
			 const struct rig_param *p, int *given)
{
	*given = 0;
	if (!p)
		return NULL;
	const struct pval *pv = &st->params[p - m->params];
	*given = pv->given;
	if (!pv->given || !pv->text)
		return NULL;
	if (plan_params_var_ref(pv->text)) {
		diag_error(c->d, pv->mark, "'%s' in step '%s' must be written out, not a variable "
			   "('%s'): the steps that build, change and copy a folder are matched by it",
			   p->name, m->name, pv->text);
		return NULL;
	}
	const char *why = NULL;
	char *folder = plan_params_folder_normalise(pv->text, &why);
	if (folder)
		check_folder_target(c, folder, p, m, pv->mark);
	return folder;
}

static int source_known(const struct pctx *c, const char *folder, const struct rig_module *m)
{
	for (size_t i = 0; i < c->nsources; i++)
		if (c->sources[i].m == m && !strcmp(c->sources[i].folder, folder))
			return 1;
	return 0;
}

/* "'tree' or 'sync'": the module needed and those that leave what it leaves. */
static void needed_names(struct strbuf *sb, const struct rig_module *n)
{
	sb_addf(sb, "'%s'", n->name);
	for (size_t i = 0; mod_all[i]; i++)
		if (mod_all[i]->needs == n && (mod_all[i]->flags & MOD_LEAVES_NEEDS))
			sb_addf(sb, " or '%s'", mod_all[i]->name);
}

/*
 * `needs` in plan order. On the volume: an earlier step of the needed
 * module without a folder, or of a module that leaves what it leaves
 * (MOD_LEAVES_NEEDS). At a folder (a FOLDER_WORKS or FOLDER_READS
 * parameter): an earlier step of the needed module that makes that
 * folder (FOLDER_MAKES). Then record what this step leaves.
 */
static void check_needs(struct pctx *c, const struct rig_module *m, const struct plan_step *st)
{
	const struct rig_param *fp = mod_folder_param(m, NULL);
	int given;
	char *folder = step_folder(c, m, st, fp, &given);
	enum folder_role role = fp ? fp->folder : FOLDER_NONE;
	/* Where the step works: a folder instead of the volume, or the volume. */
	int on_volume = !given || role == FOLDER_READS;
	const struct rig_module *n = m->needs;
	if (n && role != FOLDER_MAKES && (role == FOLDER_READS || given)) {
		const struct rig_param *makes = mod_folder_param(n, NULL);
		if (folder && !source_known(c, folder, n))
			diag_error(c->d, st->mark, "step '%s' needs a '%s' step with '%s: %s' before it "
				   "in the plan (it works on what '%s' made in that folder)", m->name,
				   n->name, makes ? makes->name : "?", folder, n->name);
	} else if (n && !c->seen[module_index(n)]) {
		struct strbuf names = STRBUF_INIT;
		needed_names(&names, n);
		diag_error(c->d, st->mark, "step '%s' needs a %s step before it in the plan (it works "
			   "on what '%s' left on the volume)%s", m->name, names.buf, n->name,
			   c->nsources ? "; a step with a folder works there, not on the volume" : "");
		sb_release(&names);
	}
	if (folder && role == FOLDER_MAKES) {
		XGROW(c->sources, c->nsources + 1, c->sources_alloc);
		c->sources[c->nsources++] = (struct plan_source){ folder, m };
		folder = NULL;
	}
	if (on_volume) {
		c->seen[module_index(m)] = 1;
		if (n && (m->flags & MOD_LEAVES_NEEDS))
			c->seen[module_index(n)] = 1;
	}
	free(folder);
}

static void parse_module(struct pctx *c, const struct rig_module *m, yaml_node_t *val,
			 struct scope *sc, struct plan_step *st)
{
	size_t np = mod_nparams(m);
	st->kind = STEP_MODULE;
	st->module = m;
	st->params = xcalloc(np + 1, sizeof(struct pval));
	int bad = 0;
	if (val->type == YAML_MAPPING_NODE) {
		/* Unknown keys: reported at the mapping's first use by m. */
		int report = plan_node_once(c, val, m);
		for (yaml_node_pair_t *pr = val->data.mapping.pairs.start;
		     pr < val->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = plan_node_at(c, pr->key), *v = plan_node_at(c, pr->value);
			const char *name = plan_node_text(k);
			size_t i = 0;
			while (name && i < np && strcmp(m->params[i].name, name))
				i++;
			if (i == np && name && !report) {
				/* reported at the first use */
			} else if (!name) {
				diag_error(c->d, plan_node_mark(k), "parameter names must be plain names, not %s "
					   "(in step '%s')", plan_node_kind(k), m->name);
			} else if (i == np && !np) {
				diag_error(c->d, plan_node_mark(k), "unknown key '%s' in step '%s' (it takes no "
					   "parameters)", name, m->name);
			} else if (i == np) {
				const char **names = xcalloc(np + 1, sizeof(char *));
				for (size_t j = 0; j < np; j++)
					names[j] = m->params[j].name;
				const char *near = diag_suggest(name, names, np);
				struct strbuf sb = STRBUF_INIT;
				if (near)
					sb_addf(&sb, " (did you mean '%s'?)", near);
				else
					plan_join_choices(&sb, names), sb_addch(&sb, ')');
				diag_error(c->d, plan_node_mark(k), "unknown key '%s' in step '%s'%s%s", name,
					   m->name, near ? "" : " (expected one of ", sb.buf);
				sb_release(&sb);
				free(names);
			} else if (st->params[i].given) {
				diag_error(c->d, plan_node_mark(k), "duplicate key '%s' in step '%s' (first given "
					   "at line %d)", name, m->name, st->params[i].key_mark.line);
				continue;
			} else {
				if (fill_pval(c, m, &m->params[i], k, v, &st->params[i]))
					bad = 1;
				continue;
			}
			bad = 1;
		}
	} else if (!plan_node_is_null(val)) {
		diag_error(c->d, plan_node_mark(val), "step '%s' takes a mapping of parameters, e.g. "
			   "'%s: { %s: ... }', or {} for the defaults; not %s", m->name, m->name,
			   np ? m->params[0].name : "", plan_node_kind(val));
		bad = 1;
	}
	validate_bindings(c, st, sc, bad);
	check_needs(c, m, st);
}

/* --- cycle and sweep --- */

static void parse_block_steps(struct pctx *c, const struct key *k, yaml_node_t *map,
			      const char *what, struct scope *sc, struct plan_step *st)
{
	if (!plan_require_key(c, k, map, what))
		return;
	yaml_node_t *seq = plan_key_seq(c, k, "a list of steps");
	if (seq && seq->data.sequence.items.start == seq->data.sequence.items.top)
		diag_error(c->d, plan_node_mark(seq), "'steps' %s is empty", what);
	else if (seq)
		parse_list(c, seq, sc, &st->steps, &st->nsteps);
}

static void parse_cycle(struct pctx *c, yaml_node_t *val, struct scope *sc, struct plan_step *st)
{
	struct key k[] = { { "times", 0, 0 }, { "steps", 0, 0 } };
	st->kind = STEP_CYCLE;
	c->has_cycle = 1;
	static const char cycle_keys = 0;
	if (plan_node_once(c, val, &cycle_keys)
		    ? plan_map_keys(c, val, k, NKEYS(k), "in cycle", "'cycle' ({ times, steps })")
		    : plan_map_keys_quiet(c, val, k, NKEYS(k)))
		return;
	if (plan_require_key(c, &k[0], val, "in cycle")) {
		const char *s = plan_node_text(k[0].val);
		uint64_t v;
		if (s && s[0] == '$')
			diag_error(c->d, plan_node_mark(k[0].val), "cycle 'times' must be a number, not '%s': "
				   "variables may be used only in module parameters", s);
		else if (plan_key_uint(c, &k[0], 1, PLAN_MAX_COUNT, &v) == 0)
			st->times = (uint32_t)v;
	}
	parse_block_steps(c, &k[1], val, "in cycle", sc, st);
}

static void add_sweep_var(struct pctx *c, const char *var)
{
	for (size_t i = 0; i < c->nsweep_vars; i++)
		if (!strcmp(c->sweep_vars[i], var))
			return;
	XGROW(c->sweep_vars, c->nsweep_vars + 1, c->sweep_vars_alloc);
	c->sweep_vars[c->nsweep_vars++] = var;
}

static void sweep_values(struct pctx *c, yaml_node_t *vk, yaml_node_t *vv, struct plan_step *st)
{
	const char *var = plan_node_text(vk);
	if (plan_node_is_null(vv) || vv->type != YAML_SEQUENCE_NODE) {
		diag_error(c->d, plan_node_mark(plan_node_is_null(vv) ? vk : vv), "sweep variable '%s' needs a "
			   "list of values, e.g. %s: [90%%, 95%%]; not %s", var, var,
			   plan_node_is_null(vv) ? "nothing" : plan_node_kind(vv));
		return;
	}
	size_t n = (size_t)(vv->data.sequence.items.top - vv->data.sequence.items.start);
	if (!n) {
		diag_error(c->d, plan_node_mark(vv), "sweep variable '%s' has no values", var);
		return;
	}
	st->values = xcalloc(n, sizeof(char *));
	st->value_marks = xcalloc(n, sizeof(struct mark));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = plan_node_at(c, vv->data.sequence.items.start[i]);
		const char *s = plan_node_text(it);
		struct mark m = plan_node_mark(it);
		if (!s || plan_node_is_null(it)) {
			diag_error(c->d, m, "expected a single value in sweep '%s', not %s", var,
				   s ? "nothing" : plan_node_kind(it));
			continue;
		}
		if (s[0] == '$' && s[1] != '$') {
			diag_error(c->d, m, "sweep values must be written out: '%s' is a variable, and "
				   "a sweep's own list cannot use one", s);
			continue;
		}
		int dup = 0;
		for (size_t j = 0; j < st->nvalues && !dup; j++)
			dup = !strcmp(st->values[j], s);
		if (dup) {
			diag_error(c->d, m, "value '%s' appears twice in sweep '%s'", s, var);
			continue;
		}
		st->value_marks[st->nvalues] = m;
		st->values[st->nvalues++] = xstrdup(s);
	}
}

static void parse_sweep(struct pctx *c, yaml_node_t *key, yaml_node_t *val, struct scope *sc,
			struct plan_step *st)
{
	st->kind = STEP_SWEEP;
	if (val->type != YAML_MAPPING_NODE) {
		diag_error(c->d, plan_node_mark(plan_node_is_null(val) ? key : val), "expected a mapping for "
			   "'sweep' ({ VARIABLE: [values], steps: [...] }), not %s",
			   plan_node_is_null(val) ? "nothing" : plan_node_kind(val));
		return;
	}
	struct key steps = { "steps", 0, 0 };
	yaml_node_t *vk = NULL, *vv = NULL;
	for (yaml_node_pair_t *pr = val->data.mapping.pairs.start; pr < val->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = plan_node_at(c, pr->key), *v = plan_node_at(c, pr->value);
		const char *name = plan_node_text(k);
		if (!name) {
			diag_error(c->d, plan_node_mark(k), "keys must be plain names, not %s (in sweep)",
				   plan_node_kind(k));
		} else if (!strcmp(name, "steps")) {
			if (steps.key)
				diag_error(c->d, plan_node_mark(k), "duplicate key 'steps' in sweep (first given "
					   "at line %d)", plan_node_mark(steps.key).line);
			else
				steps.key = k, steps.val = v;
		} else if (vk) {
			diag_error(c->d, plan_node_mark(k), "sweep has a second variable '%s' (after '%s'): a "
				   "sweep varies exactly one variable; nest sweeps to vary two", name,
				   plan_node_text(vk));
		} else {
			vk = k;
			vv = v;
		}
	}
	if (!vk) {
		diag_error(c->d, plan_node_mark(key), "sweep needs a variable: a key next to 'steps' "
			   "whose value is the list of values, e.g. level: [90%%, 95%%]");
	} else {
		const char *var = plan_node_text(vk);
		struct mark m = plan_node_mark(vk);
		int ok = 1;
		if (!plan_params_var_name_ok(var)) {
			diag_error(c->d, m, "invalid sweep variable name '%s': use lowercase letters, "
				   "digits and '_', starting with a letter or '_'", var);
			ok = 0;
		} else if (plan_factor_reserved(var)) {
			diag_error(c->d, m, "sweep variable '%s' has the name of a report factor; "
				   "choose another name", var);
			ok = 0;
		}
		const struct binding *given = ok ? plan_var_use(c, var) : NULL;
		if (given) {
			diag_error(c->d, m, "sweep variable '%s' is also given with --var %s=%s: a "
				   "--var may not shadow a sweep variable; rename one of them", var, var,
				   given->value);
			ok = 0;
		}
		for (struct scope *s = sc; ok && s; s = s->outer) {
			if (s->sweep->var && !strcmp(s->sweep->var, var)) {
				diag_error(c->d, m, "sweep variable '%s' shadows the enclosing sweep's "
					   "variable '%s' (line %d): choose another name", var, var,
					   s->sweep->mark.line);
				ok = 0;
			}
		}
		if (ok) {
			st->var = xstrdup(var);
			add_sweep_var(c, st->var);
		}
		sweep_values(c, vk, vv, st);
	}
	struct scope inner = { st, 0, sc };
	parse_block_steps(c, &steps, val, "in sweep", &inner, st);
	if (st->var && st->nvalues && st->nsteps && !inner.used)
		diag_warning(c->d, plan_node_mark(vk), "sweep variable '%s' is not used by any step (write "
			     "$%s in a parameter)", st->var, st->var);
}

/* --- the list --- */

static const char **step_names(size_t *n)
{
	size_t nm = 0;
	while (mod_all[nm])
		nm++;
	const char **names = xcalloc(nm + 3, sizeof(char *));
	for (size_t i = 0; i < nm; i++)
		names[i] = mod_all[i]->name;
	names[nm] = "cycle";
	names[nm + 1] = "sweep";
	*n = nm + 2;
	return names;
}

static void extra_keys(struct pctx *c, yaml_node_t *item, const struct rig_module *m,
		       const char *first)
{
	for (yaml_node_pair_t *pr = item->data.mapping.pairs.start + 1;
	     pr < item->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = plan_node_at(c, pr->key);
		const char *name = plan_node_text(k);
		if (name && m && mod_param(m, name))
			diag_error(c->d, plan_node_mark(k), "'%s' is a parameter of step '%s': put it inside "
				   "the step, as in '%s: { %s: ... }'", name, first, first, name);
		else
			diag_error(c->d, plan_node_mark(k), "a step has exactly one key, but '%s' follows "
				   "'%s': start each step with its own '- '", name ? name : "?", first);
	}
}

/* One list item; returns 1 when st was filled. */
static int parse_item(struct pctx *c, yaml_node_t *item, struct scope *sc, struct plan_step *st)
{
	size_t nnames;
	const char **names;
	if (item->type != YAML_MAPPING_NODE) {
		const char *s = plan_node_text(item);
		if (s && mod_find(s))
			diag_error(c->d, plan_node_mark(item), "step '%s' needs a mapping of parameters: "
				   "write '%s: {}' for its defaults", s, s);
		else
			diag_error(c->d, plan_node_mark(item), "a step is a one-key mapping such as "
				   "'write: { files: 4 }', not %s", plan_node_is_null(item) ? "nothing" : plan_node_kind(item));
		return 0;
	}
	if (item->data.mapping.pairs.start == item->data.mapping.pairs.top) {
		diag_error(c->d, plan_node_mark(item), "empty step: a step is a one-key mapping such as "
			   "'write: {}'");
		return 0;
	}
	yaml_node_t *k = plan_node_at(c, item->data.mapping.pairs.start->key);
	yaml_node_t *v = plan_node_at(c, item->data.mapping.pairs.start->value);
	const char *name = plan_node_text(k);
	if (!name) {
		diag_error(c->d, plan_node_mark(k), "a step's key must be a module name, not %s", plan_node_kind(k));
		return 0;
	}
	const struct rig_module *m = mod_find(name);
	extra_keys(c, item, m, name);
	st->mark = plan_node_mark(k);
	if (!strcmp(name, "cycle")) {
		parse_cycle(c, v, sc, st);
		return 1;
	}
	if (!strcmp(name, "sweep")) {
		parse_sweep(c, k, v, sc, st);
		return 1;
	}
	if (m) {
		parse_module(c, m, v, sc, st);
		return 1;
	}
	static const char unknown_module = 0;
	if (!plan_node_once(c, k, &unknown_module))
		return 0; /* reported at its first use */
	names = step_names(&nnames);
	const char *near = diag_suggest(name, names, nnames);
	if (near) {
		diag_error(c->d, st->mark, "unknown module '%s' (did you mean '%s'?)", name, near);
	} else {
		struct strbuf sb = STRBUF_INIT;
		plan_join_choices(&sb, names);
		diag_error(c->d, st->mark, "unknown module '%s' (known: %s)", name, sb.buf);
		sb_release(&sb);
	}
	free(names);
	return 0;
}

/* Whether the list seq may be parsed here: not inside itself (an alias to
 * an enclosing list), not nested too deep, and not past the step limit.
 * Reports why not. */
static int list_allowed(struct pctx *c, yaml_node_t *seq)
{
	for (size_t i = 0; i < c->depth; i++) {
		if (c->step_path[i] == seq) {
			diag_error(c->d, plan_node_mark(seq), "this list of steps contains itself "
				   "(through an alias): the steps of a plan must be finite");
			return 0;
		}
	}
	if (c->depth > PLAN_MAX_DEPTH) {
		diag_error(c->d, plan_node_mark(seq), "steps nested more than %d deep (cycle and "
			   "sweep blocks inside each other)", PLAN_MAX_DEPTH);
		return 0;
	}
	return 1;
}

static void parse_list(struct pctx *c, yaml_node_t *seq, struct scope *sc,
		       struct plan_step **out, size_t *n)
{
	size_t total = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	/* Sized once, so that scopes may point at steps while nested lists parse. */
	struct plan_step *steps = xcalloc(total + 1, sizeof(struct plan_step));
	size_t k = 0;
	*out = steps;
	*n = 0;
	static const char parsed = 0;
	if (c->lists_once && !plan_node_once(c, seq, &parsed))
		return; /* the plan is refused for its size; this list's messages are in */
	if (!list_allowed(c, seq))
		return;
	c->step_path[c->depth++] = seq;
	for (size_t i = 0; i < total; i++) {
		yaml_node_t *item = plan_node_at(c, seq->data.sequence.items.start[i]);
		if (++c->nsteps_seen > PLAN_MAX_STEPS) {
			if (!c->too_large)
				diag_error(c->d, plan_node_mark(item), "the plan has more than %d steps "
					   "(each use of an alias counts)", PLAN_MAX_STEPS);
			c->too_large = 1;
			break;
		}
		if (parse_item(c, item, sc, &steps[k]))
			k++;
		else
			memset(&steps[k], 0, sizeof(steps[k]));
	}
	c->depth--;
	*n = k;
}

/* --- the plan's size, aliases expanded --- */

/* The list of steps of item when it is a cycle or a sweep with one (the
 * first 'steps' key, as the parse takes it), or NULL. */
static yaml_node_t *block_list(struct pctx *c, const yaml_node_t *item)
{
	if (item->type != YAML_MAPPING_NODE ||
	    item->data.mapping.pairs.start == item->data.mapping.pairs.top)
		return NULL;
	const char *name = plan_node_text(plan_node_at(c, item->data.mapping.pairs.start->key));
	yaml_node_t *v = plan_node_at(c, item->data.mapping.pairs.start->value);
	struct key steps = { "steps", 0, 0 };
	if (!name || (strcmp(name, "cycle") && strcmp(name, "sweep")) ||
	    plan_map_keys_quiet(c, v, &steps, 1) < 0 || !steps.val ||
	    steps.val->type != YAML_SEQUENCE_NODE)
		return NULL;
	return steps.val;
}

struct tally {
	struct pctx *c;
	uint64_t *count;     /* per node: its steps, once counted */
	unsigned char *state; /* per node: 0 not counted, 1 being counted, 2 counted */
};

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The steps of list seq with every alias expanded, as parse_list counts
 * them: each item, and the steps of its block. Each list is counted once
 * (so the work is the document's size, not the expansion's); a list met
 * again inside itself counts nothing there (parse_list reports it), and
 * nesting past PLAN_MAX_DEPTH is not followed (reported too). */
static uint64_t count_list(struct tally *t, yaml_node_t *seq, size_t depth)
{
	size_t i = (size_t)(seq - t->c->doc->nodes.start);
	if (t->state[i] == 2)
		return t->count[i];
	if (t->state[i] == 1 || depth > PLAN_MAX_DEPTH)
		return 0;
	t->state[i] = 1;
	uint64_t n = 0;
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = plan_node_at(t->c, *it);
		yaml_node_t *inner = item ? block_list(t->c, item) : NULL;
		n = add_sat(n, 1);
		if (inner)
			n = add_sat(n, count_list(t, inner, depth + 1));
	}
	t->count[i] = n;
	t->state[i] = 2;
	return n;
}

static uint64_t count_steps(struct pctx *c, yaml_node_t *seq)
{
	size_t nnodes = (size_t)(c->doc->nodes.top - c->doc->nodes.start);
	struct tally t = { c, xcalloc(nnodes + 1, sizeof(uint64_t)), xcalloc(nnodes + 1, 1) };
	uint64_t n = count_list(&t, seq, 0);
	free(t.count);
	free(t.state);
	return n;
}

void plan_parse_steps(struct pctx *c, yaml_node_t *seq, struct plan_step **out, size_t *n)
{
	/* Counted first: a plan of a few lines can name millions of steps
	 * through aliases, and parsing ten thousand of them to find out would
	 * cost more than all the rest of its parse. */
	uint64_t total = count_steps(c, seq);
	if (total > PLAN_MAX_STEPS) {
		diag_error(c->d, plan_node_mark(seq), "the plan has %s%" PRIu64 " steps with its "
			   "aliases expanded, more than the %d a plan may have (each use of an alias "
			   "counts)", total == UINT64_MAX ? "over " : "", total, PLAN_MAX_STEPS);
		c->too_large = 1;
		c->lists_once = 1;
	}
	parse_list(c, seq, NULL, out, n);
}

static void pval_free(struct pval *v)
{
	free(v->text);
	for (size_t i = 0; i < v->nitems; i++)
		free(v->items[i]);
	free(v->items);
	free(v->item_marks);
}

void plan_steps_free(struct plan_step *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		struct plan_step *st = &s[i];
		if (st->kind == STEP_MODULE && st->params)
			for (size_t j = 0; j < mod_nparams(st->module); j++)
				pval_free(&st->params[j]);
		free(st->params);
		free(st->var);
		for (size_t j = 0; j < st->nvalues; j++)
			free(st->values[j]);
		free(st->values);
		free(st->value_marks);
		plan_steps_free(st->steps, st->nsteps);
	}
	free(s);
}
