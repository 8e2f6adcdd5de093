/*
 * Validating a module step by binding its parameters exactly as the runner
 * will (plan_params_bind), for the values of the sweep variables it uses, so
 * that `to: $level` with `level: [90%, 120%]` is an error at `120%`.
 *
 * What the validator promises is every combination of the step's sweep
 * values (or, past the plan's budget, every value of each variable once:
 * the n-th combination takes value n mod count of every variable). It
 * keeps that promise without binding every combination: what a parameter
 * binds and reports depends only on the variables its own value names
 * (plan_params_bind_param), so each parameter is bound once for each
 * combination of its own variables, which for the usual `block: $b` is
 * once per value of b. Only the module's cross-parameter check (m->check)
 * needs whole combinations, and it gets them put together from the bound
 * fields, without binding again. The messages, their places and which
 * combinations count against the budget are those of binding every
 * combination in full; a sweep of 50 values in each of three variables
 * costs 150 bindings, not 125,000.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"

/* Combinations validated per plan. A step whose combinations of sweep
 * values fit in what is left counts every combination; otherwise each
 * value of each variable once. This keeps validation linear in the plan's
 * size (aliases can multiply a few lines into thousands of steps). */
#define MAX_BINDINGS 50000

/* The bindings of one parameter. */
struct pbind {
	size_t *vars;      /* indexes into the step's sweeps, ascending */
	size_t nvars;
	uint64_t *stride;  /* in full mode, each variable's weight in a tuple's index */
	uint64_t ntuples;  /* combinations of its variables' values bound */
	unsigned char *ok; /* per tuple: bound without an error */
	char *fields;      /* per tuple: the bound field, kept for the check; or NULL */
	size_t size;       /* bytes of the field */
};

/* The step being validated. */
struct bstep {
	struct pctx *c;
	const struct plan_step *st;
	const struct plan_step *const *sweeps;
	size_t nsweeps;
	int diagonal;      /* past the budget: value n mod count of each variable */
	uint64_t combos;   /* combinations of all the step's variables validated */
	size_t from;       /* the step's first item in c->d */
	struct mark skip;  /* drop errors here (line 0: none) */
};

/* Add the items of tmp to d, skipping those already added since `from`,
 * and those at `skip` (the step itself) when skip.line != 0. */
static void merge_unique(struct diag *d, size_t from, const struct diag *tmp, struct mark skip)
{
	for (size_t i = 0; i < tmp->n; i++) {
		const struct diag_item *t = &tmp->items[i];
		int dup = skip.line && t->mark.line == skip.line && t->mark.col == skip.col;
		for (size_t j = from; j < d->n && !dup; j++)
			dup = d->items[j].mark.line == t->mark.line && d->items[j].mark.col == t->mark.col &&
			      !strcmp(d->items[j].msg, t->msg);
		if (dup)
			continue;
		if (t->level == DIAG_ERROR)
			diag_error(d, t->mark, "%s", t->msg);
		else
			diag_warning(d, t->mark, "%s", t->msg);
	}
}

/* The step's sweeps that parameter i names, ascending, into pb->vars
 * (room for s->nsweeps). */
static void param_vars(const struct bstep *s, size_t i, struct pbind *pb)
{
	const struct pval *pv = &s->st->params[i];
	size_t nt = pv->is_seq ? pv->nitems : 1;
	for (size_t j = 0; pv->given && j < nt; j++) {
		const char *name = plan_params_var_ref(pv->is_seq ? pv->items[j] : pv->text);
		size_t k = 0;
		while (name && k < s->nsweeps &&
		       (!s->sweeps[k]->var || strcmp(s->sweeps[k]->var, name)))
			k++;
		if (!name || k == s->nsweeps)
			continue;
		size_t at = 0;
		while (at < pb->nvars && pb->vars[at] < k)
			at++;
		if (at < pb->nvars && pb->vars[at] == k)
			continue;
		memmove(pb->vars + at + 1, pb->vars + at, (pb->nvars - at) * sizeof(*pb->vars));
		pb->vars[at] = k;
		pb->nvars++;
	}
}

/* How many tuples of its variables' values the parameter binds: those the
 * step's combinations contain. Fills pb->stride (room for pb->nvars). */
static void count_tuples(const struct bstep *s, struct pbind *pb)
{
	if (s->diagonal) {
		pb->ntuples = pb->nvars == 0 ? 1
			    : pb->nvars == 1 ? s->sweeps[pb->vars[0]]->nvalues : s->combos;
		return;
	}
	pb->ntuples = 1;
	for (size_t j = 0; j < pb->nvars; j++) {
		pb->stride[j] = pb->ntuples;
		pb->ntuples *= s->sweeps[pb->vars[j]]->nvalues;
	}
}

/* The value index of the parameter's j-th variable in tuple t. */
static size_t tuple_value(const struct bstep *s, const struct pbind *pb, uint64_t t, size_t j)
{
	size_t nv = s->sweeps[pb->vars[j]]->nvalues;
	if (s->diagonal)
		return (size_t)(t % nv);
	return (size_t)(t / pb->stride[j] % nv);
}

/* The tuple of combination n (idx: each variable's value index, full mode). */
static uint64_t tuple_of(const struct bstep *s, const struct pbind *pb, uint64_t n,
			 const size_t *idx)
{
	if (s->diagonal)
		return pb->nvars == 0 ? 0
		     : pb->nvars == 1 ? n % s->sweeps[pb->vars[0]]->nvalues : n;
	uint64_t t = 0;
	for (size_t j = 0; j < pb->nvars; j++)
		t += idx[pb->vars[j]] * pb->stride[j];
	return t;
}

/* Bind parameter i for each of its tuples (pb->ok, pb->fields allocated);
 * keep the fields in pb->fields when it is not NULL. b: room for the
 * parameter's variables. */
static void bind_param(const struct bstep *s, size_t i, struct pbind *pb, char *args,
		       struct binding *b)
{
	struct pctx *c = s->c;
	const struct rig_module *m = s->st->module;
	const struct rig_param *rp = &m->params[i];
	for (uint64_t t = 0; t < pb->ntuples; t++) {
		for (size_t j = 0; j < pb->nvars; j++) {
			const struct plan_step *sw = s->sweeps[pb->vars[j]];
			size_t v = tuple_value(s, pb, t, j);
			b[j] = (struct binding){ .var = sw->var, .value = sw->values[v],
						 .mark = sw->value_marks[v],
						 .outer = j + 1 < pb->nvars ? &b[j + 1] : c->p->vars };
		}
		struct diag tmp;
		diag_init(&tmp, c->d->file, c->d->text);
		pb->ok[t] = plan_params_bind_param(m, s->st->params, i, pb->nvars ? &b[0] : c->p->vars,
					      args, &tmp, s->st->mark) == 0;
		if (pb->fields && pb->ok[t]) {
			memcpy(pb->fields + t * pb->size, args + rp->offset, pb->size);
			memset(args + rp->offset, 0, pb->size);
		} else {
			plan_params_free_param(rp, args);
		}
		if (tmp.n)
			merge_unique(c->d, s->from, &tmp, s->skip);
		diag_release(&tmp);
	}
}

/* Whether m->check reads parameter i (m->check_reads; NULL: any). */
static int check_reads(const struct rig_module *m, size_t i)
{
	if (!m->check_reads)
		return 1;
	for (const char *const *r = m->check_reads; *r; r++)
		if (!strcmp(*r, m->params[i].name))
			return 1;
	return 0;
}

/* Which variables a combination must vary for m->check (full mode): all,
 * unless the module says what its check reads and every parameter it does
 * not read bound for every value. Then the others stay at their first value:
 * each combination of the read parameters' values is checked once, in the
 * order checking every combination first meets it, so the messages and
 * their order are the same. lim[k]: the values of variable k to go
 * through. Returns how many combinations that is. */
static uint64_t check_limits(const struct bstep *s, const struct pbind *pb, size_t np,
			     size_t *lim)
{
	const struct rig_module *m = s->st->module;
	int narrow = m->check_reads != NULL;
	for (size_t k = 0; k < s->nsweeps; k++)
		lim[k] = 1;
	for (size_t i = 0; narrow && i < np; i++) {
		if (check_reads(m, i))
			for (size_t j = 0; j < pb[i].nvars; j++)
				lim[pb[i].vars[j]] = s->sweeps[pb[i].vars[j]]->nvalues;
		else
			for (uint64_t t = 0; narrow && t < pb[i].ntuples; t++)
				narrow = pb[i].ok[t];
	}
	for (size_t k = 0; !narrow && k < s->nsweeps; k++)
		lim[k] = s->sweeps[k]->nvalues;
	uint64_t n = 1;
	for (size_t k = 0; k < s->nsweeps; k++)
		n *= lim[k];
	return n;
}

/* m->check for every combination whose parameters all bound, each put
 * together from the kept fields. The parameters without a variable have
 * one tuple: placed once. */
static void check_combinations(const struct bstep *s, const struct pbind *pb, size_t np,
			       char *args)
{
	struct pctx *c = s->c;
	const struct rig_module *m = s->st->module;
	size_t *vary = xcalloc(np + 1, sizeof(*vary)), nvary = 0;
	size_t *idx = xcalloc(s->nsweeps + 1, sizeof(*idx));
	size_t *lim = xcalloc(s->nsweeps + 1, sizeof(*lim));
	uint64_t combos = s->diagonal ? s->combos : check_limits(s, pb, np, lim);
	struct diag tmp;
	diag_init(&tmp, c->d->file, c->d->text);
	int fixed_ok = 1;
	for (size_t i = 0; i < np; i++) {
		if (pb[i].nvars)
			vary[nvary++] = i;
		else if (!pb[i].ok[0])
			fixed_ok = 0;
		else
			memcpy(args + m->params[i].offset, pb[i].fields, pb[i].size);
	}
	for (uint64_t n = 0; fixed_ok && n < combos; n++) {
		int ok = 1;
		for (size_t v = 0; v < nvary && ok; v++) {
			const struct pbind *p = &pb[vary[v]];
			uint64_t t = tuple_of(s, p, n, idx);
			ok = p->ok[t];
			if (ok)
				memcpy(args + m->params[vary[v]].offset, p->fields + t * p->size, p->size);
		}
		if (ok)
			m->check(args, &tmp, s->st->mark);
		if (tmp.n) {
			merge_unique(c->d, s->from, &tmp, s->skip);
			diag_release(&tmp);
		}
		for (size_t k = 0; !s->diagonal && k < s->nsweeps; k++) {
			if (++idx[k] < lim[k])
				break;
			idx[k] = 0;
		}
	}
	free(lim);
	free(idx);
	free(vary);
}

/* A step that uses no sweep variable: one binding, as a run binds it. */
static void bind_whole(const struct bstep *s, char *args)
{
	struct pctx *c = s->c;
	const struct rig_module *m = s->st->module;
	struct diag tmp;
	diag_init(&tmp, c->d->file, c->d->text);
	if (plan_params_bind(m, s->st->params, c->p->vars, args, &tmp, s->st->mark) == 0 && m->check)
		m->check(args, &tmp, s->st->mark);
	plan_params_free(m, args);
	if (tmp.n)
		merge_unique(c->d, s->from, &tmp, s->skip);
	diag_release(&tmp);
}

/* Bind each parameter for its own variables' values, then check the
 * combinations when the module has a check (and it is wanted). */
static void bind_by_param(const struct bstep *s, char *args)
{
	const struct rig_module *m = s->st->module;
	size_t np = mod_nparams(m);
	int keep = m->check && !s->skip.line;
	struct pbind *pb = xcalloc(np + 1, sizeof(*pb));
	/* One block for every parameter's variables and strides. */
	size_t *vars = xcalloc(np * s->nsweeps + 1, sizeof(*vars));
	uint64_t *strides = xcalloc(np * s->nsweeps + 1, sizeof(*strides));
	struct binding *b = xcalloc(s->nsweeps + 1, sizeof(*b));
	uint64_t ntuples = 0, nbytes = 0;
	for (size_t i = 0; i < np; i++) {
		pb[i].vars = vars + i * s->nsweeps;
		pb[i].stride = strides + i * s->nsweeps;
		pb[i].size = plan_params_field_size(&m->params[i]);
		param_vars(s, i, &pb[i]);
		count_tuples(s, &pb[i]);
		ntuples += pb[i].ntuples;
		nbytes += pb[i].ntuples * pb[i].size;
	}
	unsigned char *ok = xcalloc(ntuples + 1, 1);
	char *fields = keep ? xcalloc(nbytes + 1, 1) : NULL;
	for (size_t i = 0; i < np; i++) {
		pb[i].ok = ok;
		ok += pb[i].ntuples;
		if (keep) {
			pb[i].fields = fields;
			fields += pb[i].ntuples * pb[i].size;
		}
		bind_param(s, i, &pb[i], args, b);
	}
	if (keep)
		check_combinations(s, pb, np, args);
	memset(args, 0, m->args_size);
	for (size_t i = 0; keep && i < np; i++) {
		for (uint64_t t = 0; t < pb[i].ntuples; t++) {
			if (!pb[i].ok[t])
				continue;
			memcpy(args + m->params[i].offset, pb[i].fields + t * pb[i].size, pb[i].size);
			plan_params_free_param(&m->params[i], args);
		}
	}
	free(np ? pb[0].ok : NULL);
	free(np && keep ? pb[0].fields : NULL);
	free(b);
	free(strides);
	free(vars);
	free(pb);
}

void plan_bind_step(struct pctx *c, const struct plan_step *st,
		    const struct plan_step *const *sweeps, size_t nsweeps, int values_only)
{
	uint64_t product = 1; /* 0: an empty list, reported already */
	size_t most = 1;
	for (size_t k = 0; k < nsweeps; k++) {
		size_t nv = sweeps[k]->nvalues;
		product = nv && product > MAX_BINDINGS / nv ? MAX_BINDINGS + 1 : product * nv;
		if (nv > most)
			most = nv;
	}
	uint64_t left = MAX_BINDINGS - c->nbinds;
	struct bstep s = { c, st, sweeps, nsweeps, product > left, 0, c->d->n, { 0, 0, 0 } };
	s.combos = s.diagonal ? most : product;
	if (s.combos > left) {
		if (!c->too_large)
			diag_error(c->d, st->mark, "the plan is too large to check: its steps bind "
				   "more than %d combinations of sweep values", MAX_BINDINGS);
		c->too_large = 1;
		return;
	}
	c->nbinds += s.combos;
	if (!s.combos)
		return;
	/* values_only: the step has a misspelt key, so report only problems of
	 * the values given, not missing parameters or cross-checks (likely the
	 * typo's consequences, and noise next to the error that explains them).
	 * Both are reported at the step, as m->check's errors are. */
	if (values_only)
		s.skip = st->mark;
	const struct rig_module *m = st->module;
	/* The args of a module are small; the heap only for a large one. */
	_Alignas(max_align_t) char small[512];
	char *args = m->args_size <= sizeof(small) ? small : xmalloc(m->args_size);
	memset(args, 0, m->args_size <= sizeof(small) ? sizeof(small) : m->args_size);
	if (nsweeps)
		bind_by_param(&s, args);
	else
		bind_whole(&s, args);
	if (args != small)
		free(args);
}
