/*
 * Plan variables from the command line: `--var NAME=VALUE` (rig run, plan
 * and validate) gives `$NAME` a value outside any sweep, wherever a sweep's
 * variable may stand (a whole module parameter value or list item) and in
 * the target's device, confirm, image path and size, and a dirs target's
 * folders and names: one plan, and each host of a fleet gives its own disk
 * or scratch folder.
 *
 * The values become the outermost bindings of every step (struct binding
 * with from_var set), so the validator binds exactly what the run binds,
 * and a message about a value points at the `$name` written in the plan and
 * says that the value came from --var. A run records the arguments in its
 * options (runner.c), so a resume and the reports parse the plan alike.
 *
 * Rejected: substituting the text before parsing (messages would point at
 * text nobody wrote, and the plan's hash would differ from host to host),
 * and a --var that overrides a sweep variable (two values for one name:
 * the results' factor columns would lie).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"

int plan_var_split(const char *arg, size_t *name_len, struct strbuf *err)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : 0;
	if (!eq || !n) {
		sb_addf(err, "--var takes NAME=VALUE (e.g. disk=/dev/sdb), not '%s'", arg);
		return -1;
	}
	char name[PLAN_VAR_NAME_MAX + 1];
	if (n > PLAN_VAR_NAME_MAX) {
		sb_addf(err, "--var '%s': the name is longer than %d characters", arg,
			PLAN_VAR_NAME_MAX);
		return -1;
	}
	memcpy(name, arg, n);
	name[n] = '\0';
	if (name[0] == '$') {
		sb_addf(err, "--var '%s': give the name without '$' (--var %s)", arg, arg + 1);
		return -1;
	}
	if (!plan_params_var_name_ok(name)) {
		sb_addf(err, "--var '%s': invalid variable name '%s': use lowercase letters, digits "
			     "and '_', starting with a letter or '_'", arg, name);
		return -1;
	}
	*name_len = n;
	return 0;
}

void plan_parse_vars(struct pctx *c)
{
	const struct plan_options *o = c->opt;
	struct plan *p = c->p;
	if (!o->nvars)
		return;
	p->vars = xcalloc(o->nvars, sizeof(*p->vars));
	c->var_used = xcalloc(o->nvars, 1);
	for (size_t i = 0; i < o->nvars; i++) {
		struct strbuf err = STRBUF_INIT;
		size_t n;
		if (plan_var_split(o->vars[i], &n, &err) < 0) {
			diag_error(c->d, (struct mark){ 0, 0, 0 }, "%s", err.buf);
			sb_release(&err);
			continue;
		}
		int twice = 0;
		for (size_t j = 0; j < p->nvars && !twice; j++)
			twice = strlen(p->vars[j].var) == n && !strncmp(p->vars[j].var, o->vars[i], n);
		if (twice) {
			diag_error(c->d, (struct mark){ 0, 0, 0 }, "--var %.*s is given twice", (int)n,
				   o->vars[i]);
			continue;
		}
		/* One allocation: "NAME\0VALUE". */
		char *s = xstrdup(o->vars[i]);
		s[n] = '\0';
		p->vars[p->nvars].var = s;
		p->vars[p->nvars].value = s + n + 1;
		p->vars[p->nvars].from_var = 1;
		p->nvars++;
	}
	for (size_t i = 0; i + 1 < p->nvars; i++)
		p->vars[i].outer = &p->vars[i + 1];
	if (!p->nvars) {
		free(p->vars);
		p->vars = NULL;
	}
}

const struct binding *plan_var_use(struct pctx *c, const char *name)
{
	for (size_t i = 0; i < c->p->nvars; i++) {
		if (!strcmp(c->p->vars[i].var, name)) {
			c->var_used[i] = 1;
			return &c->p->vars[i];
		}
	}
	return NULL;
}

/* Only in a plan without other errors: a step that did not parse (an
 * unknown module, say) may be where the variable is used. */
void plan_check_vars(struct pctx *c)
{
	if (c->d->nerrors)
		return;
	for (size_t i = 0; i < c->p->nvars; i++)
		if (!c->var_used[i])
			diag_error(c->d, (struct mark){ 0, 0, 0 }, "unknown variable in --var %s=%s: the "
				   "plan has no $%s in a step's parameters or its target",
				   c->p->vars[i].var, c->p->vars[i].value, c->p->vars[i].var);
}

void plan_vars_free(struct plan *p)
{
	for (size_t i = 0; i < p->nvars; i++)
		free((char *)p->vars[i].var);
	free(p->vars);
	p->vars = NULL;
	p->nvars = 0;
}
