/*
 * Module parameters: the table in each module (struct rig_param) turned into
 * the module's args struct (see module.h). One function serves validation
 * (for every sweep value) and each cell of a run, so what validated is
 * exactly what runs.
 *
 * `$name` is substituted only when it is the whole value (or a whole list
 * item), never inside other text: an exec argument such as `--name=$x` is
 * passed as written. `$$` at the start of a value stands for a literal `$`.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"

/* What a value was bound from, for messages. */
struct src {
	const struct rig_module *m;
	const struct rig_param *p;
	struct mark mark;   /* where the text is written */
	const struct binding *via; /* the variable it came through, or NULL */
};

const char *plan_params_type_name(enum param_type t)
{
	switch (t) {
	case PT_UINT: return "whole number";
	case PT_BOOL: return "boolean (true or false)";
	case PT_SIZE: return "size (e.g. 4K, 1MB)";
	case PT_DURATION: return "duration (e.g. 500ms, 10s, 5m)";
	case PT_PERCENT: return "percentage (e.g. 5%)";
	case PT_DIST: return "size distribution (e.g. 1G, 2M..2G, inverse-square(1K..1M), [1M, 4M])";
	case PT_ENUM: return "choice";
	case PT_ENUMLIST: return "list of choices";
	case PT_ARGV: return "command (a list of strings)";
	case PT_FOLDER: return "folder (an absolute path)";
	}
	return "value";
}

/* The short name used inside "invalid X 'text'". */
static const char *short_type(enum param_type t)
{
	switch (t) {
	case PT_UINT: return "number";
	case PT_BOOL: return "boolean";
	case PT_SIZE: return "size";
	case PT_DURATION: return "duration";
	case PT_PERCENT: return "percentage";
	case PT_DIST: return "size distribution";
	case PT_ENUM: return "value";
	case PT_ENUMLIST: return "value";
	case PT_ARGV: return "argument";
	case PT_FOLDER: return "folder";
	}
	return "value";
}

static void via_suffix(struct strbuf *sb, const struct src *s)
{
	if (s->via)
		sb_addf(sb, " (the value of $%s%s)", s->via->var, s->via->from_var ? ", from --var" : "");
}

int plan_params_var_name_ok(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

const char *plan_params_var_ref(const char *text)
{
	return text && text[0] == '$' && plan_params_var_name_ok(text + 1) ? text + 1 : NULL;
}

/*
 * Resolve `$name` in text written at *mark. Returns the text to use (the
 * binding's value, the text without a `$$` escape, or text itself) and
 * updates *mark and *via; NULL after reporting an unbound variable.
 */
static const char *resolve(const char *text, struct mark *mark, const struct binding **via,
			   const struct binding *b, const struct rig_module *m,
			   const struct rig_param *p, struct diag *d)
{
	*via = NULL;
	if (text[0] != '$')
		return text;
	if (text[1] == '$')
		return text + 1;
	if (!plan_params_var_name_ok(text + 1))
		return text;
	for (const struct binding *x = b; x; x = x->outer) {
		if (!strcmp(x->var, text + 1)) {
			*via = x;
			if (!x->from_var)
				*mark = x->mark;
			return x->value;
		}
	}
	diag_error(d, *mark, "undefined variable '%s' in parameter '%s' of step '%s': "
		   "no enclosing sweep defines it; give it with --var %s=VALUE", text, p->name,
		   m->name, text + 1);
	return NULL;
}

static void invalid(struct diag *d, const struct src *s, const char *text, const char *why)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "invalid %s '%s' for '%s' in step '%s'", short_type(s->p->type), text,
		s->p->name, s->m->name);
	via_suffix(&sb, s);
	if (why)
		sb_addf(&sb, ": %s", why);
	if (s->p->type == PT_SIZE || s->p->type == PT_DIST || s->p->type == PT_DURATION)
		units_suggest(&sb, text, s->p->type == PT_SIZE ? UNITS_SIZE
					 : s->p->type == PT_DIST ? UNITS_DIST : UNITS_DURATION);
	diag_error(d, s->mark, "%s", sb.buf);
	sb_release(&sb);
}

static void format_bound(struct strbuf *sb, enum param_type t, double v)
{
	switch (t) {
	case PT_SIZE:
	case PT_DIST:
		units_format_size(sb, (uint64_t)v);
		break;
	case PT_DURATION:
		units_format_duration(sb, (uint64_t)v);
		break;
	case PT_PERCENT:
		units_format_percent(sb, v);
		break;
	default:
		sb_addf(sb, "%.0f", v);
		break;
	}
}

/* Check v against the param's bounds; 0 or 1 error added. */
static int check_bounds(struct diag *d, const struct src *s, const char *text, double v)
{
	const struct rig_param *p = s->p;
	int below = v < p->min, above = p->max != 0 && v > p->max;
	if (p->type == PT_PERCENT && !(v > 0 && v <= 100)) {
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "'%s' in step '%s' is %s", p->name, s->m->name, text);
		via_suffix(&sb, s);
		sb_adds(&sb, ": a percentage must be more than 0% and at most 100%");
		diag_error(d, s->mark, "%s", sb.buf);
		sb_release(&sb);
		return 1;
	}
	if (!below && !above)
		return 0;
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "'%s' in step '%s' is %s", p->name, s->m->name, text);
	via_suffix(&sb, s);
	sb_addf(&sb, ", %s the %s of ", below ? "below" : "above", below ? "minimum" : "maximum");
	format_bound(&sb, p->type, below ? p->min : p->max);
	diag_error(d, s->mark, "%s", sb.buf);
	sb_release(&sb);
	return 1;
}

/* A size that must be a multiple of p->multiple (a block for direct I/O);
 * 0 or 1 error added. */
static int check_multiple(struct diag *d, const struct src *s, const char *text, uint64_t v)
{
	const struct rig_param *p = s->p;
	if (p->type != PT_SIZE || !p->multiple || v % p->multiple == 0)
		return 0;
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "'%s' in step '%s' is %s", p->name, s->m->name, text);
	via_suffix(&sb, s);
	sb_adds(&sb, ", not a multiple of ");
	units_format_size(&sb, p->multiple);
	sb_addf(&sb, " (%llu bytes)", (unsigned long long)p->multiple);
	diag_error(d, s->mark, "%s", sb.buf);
	sb_release(&sb);
	return 1;
}

char *plan_params_folder_normalise(const char *text, const char **why)
{
	if (text[0] != '/') {
		*why = "a folder must be an absolute path (starting with '/')";
		return NULL;
	}
	struct strbuf sb = STRBUF_INIT;
	for (const char *c = text; *c;) {
		while (*c == '/')
			c++;
		size_t n = strcspn(c, "/");
		if (!n)
			break;
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
			*why = "a folder may not have '.' or '..' in its path: write it out";
			sb_release(&sb);
			return NULL;
		}
		sb_addch(&sb, '/');
		sb_add(&sb, c, n);
		c += n;
	}
	if (!sb.len)
		sb_addch(&sb, '/');
	return sb_detach(&sb);
}

static int find_choice(const char *const *choices, const char *text)
{
	for (int i = 0; choices && choices[i]; i++)
		if (!strcmp(choices[i], text))
			return i;
	return -1;
}

static void bad_choice(struct diag *d, const struct src *s, const char *text)
{
	const struct rig_param *p = s->p;
	size_t n = 0;
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "unknown value '%s' for '%s' in step '%s'", text, p->name, s->m->name);
	via_suffix(&sb, s);
	sb_adds(&sb, " (expected one of ");
	for (; p->choices && p->choices[n]; n++)
		sb_addf(&sb, "%s%s", n ? ", " : "", p->choices[n]);
	sb_addch(&sb, ')');
	const char *near = diag_suggest(text, p->choices, n);
	if (near)
		sb_addf(&sb, "; did you mean '%s'?", near);
	diag_error(d, s->mark, "%s", sb.buf);
	sb_release(&sb);
}

/* YAML 1.1's spellings of a boolean, as libyaml leaves them. */
static int bind_bool(struct diag *d, const struct src *s, const char *text, char *f)
{
	int v;
	if (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "TRUE"))
		v = 1;
	else if (!strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "FALSE"))
		v = 0;
	else {
		invalid(d, s, text, "expected true or false");
		return 1;
	}
	memcpy(f, &v, sizeof(v));
	return 0;
}

/* A scalar where the parameter takes a list. */
static void takes_a_list(struct diag *d, const struct src *s)
{
	const struct rig_param *p = s->p;
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "'%s' in step '%s' takes a list", p->name, s->m->name);
	via_suffix(&sb, s);
	sb_adds(&sb, p->type == PT_ARGV ? " (an argument vector such as [fio, --name=x]; no shell is used)"
					 : ", e.g. [a, b]");
	diag_error(d, s->mark, "%s", sb.buf);
	sb_release(&sb);
}

/* Bind one scalar text (already resolved) into the field at f. */
static int bind_scalar(struct diag *d, const struct src *s, const char *text, char *f)
{
	const char *why = NULL;
	const struct rig_param *p = s->p;
	if (!*text) {
		invalid(d, s, text, "the value is empty");
		return 1;
	}
	switch (p->type) {
	case PT_UINT: {
		uint64_t v;
		if (units_parse_uint(text, &v, &why)) {
			invalid(d, s, text, why);
			return 1;
		}
		if (check_bounds(d, s, text, (double)v))
			return 1;
		memcpy(f, &v, sizeof(v));
		return 0;
	}
	case PT_SIZE:
	case PT_DURATION: {
		uint64_t v;
		int r = p->type == PT_SIZE ? units_parse_size(text, &v, &why)
					   : units_parse_duration(text, &v, &why);
		if (r) {
			invalid(d, s, text, why);
			return 1;
		}
		if (check_bounds(d, s, text, (double)v) || check_multiple(d, s, text, v))
			return 1;
		memcpy(f, &v, sizeof(v));
		return 0;
	}
	case PT_PERCENT: {
		double v;
		if (units_parse_percent(text, &v, &why)) {
			invalid(d, s, text, why);
			return 1;
		}
		if (check_bounds(d, s, text, v))
			return 1;
		memcpy(f, &v, sizeof(v));
		return 0;
	}
	case PT_BOOL:
		return bind_bool(d, s, text, f);
	case PT_ENUM: {
		int v = find_choice(p->choices, text);
		if (v < 0) {
			bad_choice(d, s, text);
			return 1;
		}
		memcpy(f, &v, sizeof(v));
		return 0;
	}
	case PT_DIST: {
		struct size_dist *dist = (struct size_dist *)(void *)f;
		struct size_dist v;
		if (units_parse_dist(text, &v, &why)) {
			invalid(d, s, text, why);
			return 1;
		}
		if (check_bounds(d, s, text, (double)v.lo) ||
		    check_bounds(d, s, text, (double)v.hi))
			return 1;
		units_dist_release(dist);
		*dist = v;
		return 0;
	}
	case PT_FOLDER: {
		char *v = plan_params_folder_normalise(text, &why);
		if (!v) {
			invalid(d, s, text, why);
			return 1;
		}
		char **field = (char **)(void *)f;
		free(*field);
		*field = v;
		return 0;
	}
	case PT_ENUMLIST:
	case PT_ARGV:
		break;
	}
	takes_a_list(d, s);
	return 1;
}

/* Bind a list; items are resolved already, marks parallel to them. */
static int bind_list(struct diag *d, const struct src *s, const char *const *items,
		     const struct mark *marks, const struct binding *const *vias, size_t n,
		     struct mark whole, char *f)
{
	const struct rig_param *p = s->p;
	struct src is = *s;
	if (!n) {
		is.mark = whole;
		invalid(d, &is, "[]", "the list is empty");
		return 1;
	}
	if (p->type == PT_DIST) {
		size_t bad = 0;
		const char *why = NULL;
		struct size_dist v;
		if (units_dist_list(items, n, &v, &bad, &why)) {
			is.mark = marks[bad];
			is.via = vias[bad];
			invalid(d, &is, items[bad], why);
			return 1;
		}
		int errs = 0;
		for (size_t i = 0; i < n; i++) {
			is.mark = marks[i];
			is.via = vias[i];
			errs += check_bounds(d, &is, items[i], (double)v.list[i]);
		}
		if (errs) {
			units_dist_release(&v);
			return errs;
		}
		struct size_dist *dist = (struct size_dist *)(void *)f;
		units_dist_release(dist);
		*dist = v;
		return 0;
	}
	if (p->type == PT_ENUMLIST) {
		int *idx = xcalloc(n, sizeof(int));
		int errs = 0;
		for (size_t i = 0; i < n; i++) {
			is.mark = marks[i];
			is.via = vias[i];
			idx[i] = find_choice(p->choices, items[i]);
			if (idx[i] < 0) {
				bad_choice(d, &is, items[i]);
				errs++;
				continue;
			}
			for (size_t j = 0; j < i; j++) {
				if (idx[j] == idx[i]) {
					diag_error(d, marks[i], "'%s' appears twice in '%s' of step '%s'",
						   items[i], p->name, s->m->name);
					errs++;
					break;
				}
			}
		}
		if (errs) {
			free(idx);
			return errs;
		}
		struct enum_list *l = (struct enum_list *)(void *)f;
		free(l->items);
		l->items = idx;
		l->n = n;
		return 0;
	}
	if (p->type == PT_ARGV) {
		if (!*items[0]) {
			is.mark = marks[0];
			invalid(d, &is, items[0], "the command name is empty");
			return 1;
		}
		struct argv_list *l = (struct argv_list *)(void *)f;
		for (size_t i = 0; i < l->n; i++)
			free(l->items[i]);
		free(l->items);
		l->items = xcalloc(n, sizeof(char *));
		for (size_t i = 0; i < n; i++)
			l->items[i] = xstrdup(items[i]);
		l->n = n;
		return 0;
	}
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "'%s' in step '%s' takes one %s, not a list", p->name, s->m->name,
		plan_params_type_name(p->type));
	diag_error(d, whole, "%s", sb.buf);
	sb_release(&sb);
	return 1;
}

/* Bind a value as written in the plan (or the default, at `at`). */
static int bind_pval(const struct rig_module *m, const struct rig_param *p,
		     const struct pval *v, const struct binding *b, char *f, struct diag *d)
{
	struct src s = { m, p, v->mark, NULL };
	if (!v->is_seq && !v->text)
		return 0; /* a mapping or other shape the plan parser reported */
	if (!v->is_seq) {
		const char *text = resolve(v->text, &s.mark, &s.via, b, m, p, d);
		return text ? bind_scalar(d, &s, text, f) : 1;
	}
	const char **items = xcalloc(v->nitems + 1, sizeof(char *));
	const struct binding **vias = xcalloc(v->nitems + 1, sizeof(*vias));
	struct mark *marks = xcalloc(v->nitems + 1, sizeof(struct mark));
	int errs = 0;
	for (size_t i = 0; i < v->nitems; i++) {
		marks[i] = v->item_marks ? v->item_marks[i] : v->mark;
		items[i] = resolve(v->items[i], &marks[i], &vias[i], b, m, p, d);
		if (!items[i])
			errs++;
	}
	if (!errs)
		errs = bind_list(d, &s, items, marks, vias, v->nitems, v->mark, f);
	free(items);
	free(vias);
	free(marks);
	return errs;
}

/* A default from the table: scalar text, or a comma-separated list. */
static int bind_default(const struct rig_module *m, const struct rig_param *p, char *f,
			struct diag *d, struct mark at)
{
	struct pval v = { .given = 1, .mark = at, .key_mark = at };
	if (p->type != PT_ENUMLIST && p->type != PT_ARGV) {
		v.text = (char *)p->def;
		return bind_pval(m, p, &v, NULL, f, d);
	}
	char *copy = xstrdup(p->def);
	char **items = NULL;
	size_t n = 0, alloc = 0;
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		XGROW(items, n + 1, alloc);
		items[n++] = tok;
	}
	v.is_seq = 1;
	v.items = items;
	v.nitems = n;
	int errs = bind_pval(m, p, &v, NULL, f, d);
	free(items);
	free(copy);
	return errs;
}

static int all_choices(const struct rig_param *p, char *f)
{
	struct enum_list *l = (struct enum_list *)(void *)f;
	size_t n = 0;
	while (p->choices && p->choices[n])
		n++;
	free(l->items);
	l->items = xcalloc(n ? n : 1, sizeof(int));
	for (size_t i = 0; i < n; i++)
		l->items[i] = (int)i;
	l->n = n;
	return 0;
}

static int same_group(const struct rig_param *a, const struct rig_param *b)
{
	return a->group && b->group && !strcmp(a->group, b->group);
}

int plan_params_bind_param(const struct rig_module *m, const struct pval *vals, size_t i,
		      const struct binding *b, void *args, struct diag *d, struct mark at)
{
	const struct rig_param *p = &m->params[i];
	size_t n = p->group ? mod_nparams(m) : i + 1; /* only a group looks past i */
	size_t before = d->nerrors;
	char *f = (char *)args + p->offset;
	int given = vals && vals[i].given;
	/* Group: the first given member wins; later ones are errors. */
	size_t other = n;
	for (size_t j = 0; p->group && j < n; j++)
		if (j != i && same_group(p, &m->params[j]) && vals && vals[j].given &&
		    (j < i || !given)) {
			other = j;
			break;
		}
	if (given && other < i) {
		diag_error(d, vals[i].key_mark,
			   "'%s' and '%s' exclude each other in step '%s': give only one",
			   m->params[other].name, p->name, m->name);
	} else if (given) {
		bind_pval(m, p, &vals[i], b, f, d);
	} else if (other < n) {
		/* another member of the group was given */
	} else if (p->group) {
		/* None given: the first member with a default applies. */
		size_t first = n, lead = n;
		int required = 0;
		for (size_t j = 0; j < n; j++) {
			if (!same_group(p, &m->params[j]))
				continue;
			if (lead == n)
				lead = j;
			required |= m->params[j].required;
			if (first == n && m->params[j].def)
				first = j;
		}
		if (first == i)
			bind_default(m, p, f, d, at);
		else if (first == n && required && lead == i)
			diag_error(d, at, "step '%s' needs '%s' or another parameter of its "
				   "group '%s'", m->name, p->name, p->group);
	} else if (p->def) {
		bind_default(m, p, f, d, at);
	} else if (p->required) {
		diag_error(d, at, "step '%s' needs parameter '%s' (%s)", m->name, p->name,
			   p->help ? p->help : plan_params_type_name(p->type));
	} else if (p->type == PT_ENUMLIST) {
		all_choices(p, f);
	}
	return (int)(d->nerrors - before);
}

int plan_params_bind(const struct rig_module *m, const struct pval *vals,
		const struct binding *b, void *args, struct diag *d, struct mark at)
{
	size_t n = mod_nparams(m);
	int errs = 0;
	for (size_t i = 0; i < n; i++)
		errs += plan_params_bind_param(m, vals, i, b, args, d, at);
	return errs;
}

size_t plan_params_field_size(const struct rig_param *p)
{
	switch (p->type) {
	case PT_UINT:
	case PT_SIZE:
	case PT_DURATION: return sizeof(uint64_t);
	case PT_PERCENT: return sizeof(double);
	case PT_BOOL:
	case PT_ENUM: return sizeof(int);
	case PT_DIST: return sizeof(struct size_dist);
	case PT_ENUMLIST: return sizeof(struct enum_list);
	case PT_ARGV: return sizeof(struct argv_list);
	case PT_FOLDER: return sizeof(char *);
	}
	return 0;
}

void plan_params_free_param(const struct rig_param *p, void *args)
{
	char *f = (char *)args + p->offset;
	if (p->type == PT_DIST) {
		units_dist_release((struct size_dist *)(void *)f);
	} else if (p->type == PT_ENUMLIST) {
		struct enum_list *l = (struct enum_list *)(void *)f;
		free(l->items);
		l->items = NULL;
		l->n = 0;
	} else if (p->type == PT_ARGV) {
		struct argv_list *l = (struct argv_list *)(void *)f;
		for (size_t i = 0; i < l->n; i++)
			free(l->items[i]);
		free(l->items);
		l->items = NULL;
		l->n = 0;
	} else if (p->type == PT_FOLDER) {
		char **field = (char **)(void *)f;
		free(*field);
		*field = NULL;
	}
}

void plan_params_free(const struct rig_module *m, void *args)
{
	if (!args)
		return;
	for (const struct rig_param *p = m->params; p && p->name; p++)
		plan_params_free_param(p, args);
}
