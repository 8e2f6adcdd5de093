/*
 * The schedule: every cell of a plan in execution order (see schedule.h for
 * the order policies and docs/schedule.md for the phase definition).
 *
 * Built in three passes over the step tree, all pure:
 *
 *   1. check and count: reject what would make the list meaningless (no
 *      volumes, repeat 0, an empty cycle or sweep, times 0) and count the
 *      phases of one repetition and the sweep bindings of one walk, with
 *      saturating arithmetic so that a hostile plan cannot overflow;
 *   2. walk the tree once into a phase template (step, path, cycle, sweep
 *      value, binding chain) shared by every layout and repetition: the
 *      binding array is allocated at its exact size before the walk, so the
 *      `outer` pointers and the cells' `bindings` pointers never move;
 *   3. expand layouts x repetitions x phases x volumes into cells, choosing
 *      the volume order of each phase by the plan's order policy.
 *
 * Random orders draw from prng_derive_seed(seed, "order/layoutL/repR/PATH") (L
 * 1-based), so each phase has its own reproducible stream: adding
 * repetitions, steps or layouts does not disturb the orders of the others.
 *
 * Rejected: materializing the phase template per repetition (paths would be
 * formatted L x R times for no gain), and reallocating a growing binding
 * array during the walk (cells would be left pointing into freed memory).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/prng.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/schedule.h"

/* seq and phase are uint32_t: no count may exceed this. */
#define COUNT_MAX ((uint64_t)UINT32_MAX)

/* One phase of one repetition: what every layout and rep repeats. */
struct phase_tmpl {
	const struct plan_step *step;
	char *path;
	uint32_t cycle;
	const char *sweep_var;
	const char *sweep_value;
	const struct binding *bindings;
};

struct walk {
	struct phase_tmpl *ph;
	size_t nph;
	struct binding *b;
	size_t nb;
	struct strbuf path;
};

/* a * b and a + b, saturating at COUNT_MAX + 1 (which means "too many"). */
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	if (a && b > (COUNT_MAX + 1) / a)
		return COUNT_MAX + 1;
	uint64_t r = a * b;
	return r > COUNT_MAX ? COUNT_MAX + 1 : r;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r = a + b; /* both <= COUNT_MAX + 1: cannot wrap */
	return r > COUNT_MAX ? COUNT_MAX + 1 : r;
}

/*
 * Check a step list and count, for one walk of it, the phases (module step
 * instances) and the sweep bindings (one per sweep value instance).
 */
static int check_steps(const struct plan_step *steps, size_t n,
		       uint64_t *nphases, uint64_t *nbindings)
{
	if (!steps || n == 0)
		return -EINVAL;
	uint64_t ph = 0, nb = 0;
	for (size_t i = 0; i < n; i++) {
		const struct plan_step *st = &steps[i];
		uint64_t bph = 0, bnb = 0;
		switch (st->kind) {
		case STEP_MODULE:
			if (!st->module)
				return -EINVAL;
			ph = sat_add(ph, 1);
			break;
		case STEP_CYCLE:
			if (st->times == 0 ||
			    check_steps(st->steps, st->nsteps, &bph, &bnb) < 0)
				return -EINVAL;
			ph = sat_add(ph, sat_mul(st->times, bph));
			nb = sat_add(nb, sat_mul(st->times, bnb));
			break;
		case STEP_SWEEP:
			if (!st->var || !st->values || st->nvalues == 0 ||
			    check_steps(st->steps, st->nsteps, &bph, &bnb) < 0)
				return -EINVAL;
			for (size_t v = 0; v < st->nvalues; v++)
				if (!st->values[v])
					return -EINVAL;
			ph = sat_add(ph, sat_mul(st->nvalues, bph));
			nb = sat_add(nb, sat_mul(st->nvalues, sat_add(bnb, 1)));
			break;
		default:
			return -EINVAL;
		}
	}
	*nphases = ph;
	*nbindings = nb;
	return 0;
}

/* Pass 2: the phase template, in plan step order. */
static void walk_steps(struct walk *w, const struct plan_step *steps, size_t n,
		       uint32_t cycle, const char *svar, const char *sval,
		       const struct binding *b)
{
	size_t base = w->path.len;
	for (size_t i = 0; i < n; i++) {
		const struct plan_step *st = &steps[i];
		sb_setlen(&w->path, base);
		if (base)
			sb_addch(&w->path, '.');
		sb_addf(&w->path, "%zu", i + 1);
		size_t mid = w->path.len;
		switch (st->kind) {
		case STEP_MODULE: {
			struct phase_tmpl *t = &w->ph[w->nph++];
			t->step = st;
			t->path = xstrdup(w->path.buf);
			t->cycle = cycle;
			t->sweep_var = svar;
			t->sweep_value = sval;
			t->bindings = b;
			break;
		}
		case STEP_CYCLE:
			for (uint32_t c = 1; c <= st->times; c++) {
				sb_setlen(&w->path, mid);
				sb_addf(&w->path, ".cycle%u", (unsigned)c);
				walk_steps(w, st->steps, st->nsteps, c, svar, sval, b);
				if (c == UINT32_MAX)
					break;
			}
			break;
		case STEP_SWEEP:
			for (size_t v = 0; v < st->nvalues; v++) {
				struct binding *nb = &w->b[w->nb++];
				nb->var = st->var;
				nb->value = st->values[v];
				if (st->value_marks)
					nb->mark = st->value_marks[v];
				else
					memset(&nb->mark, 0, sizeof(nb->mark));
				nb->outer = b;
				sb_setlen(&w->path, mid);
				sb_addf(&w->path, ".sweep%zu", v + 1);
				walk_steps(w, st->steps, st->nsteps, cycle, st->var,
					   st->values[v], nb);
			}
			break;
		}
	}
	sb_setlen(&w->path, base);
}

size_t plan_schedule_williams_rows(size_t n)
{
	return n % 2 ? 2 * n : n;
}

/*
 * The first row is 0, 1, n-1, 2, n-2, ...: its successive differences mod n
 * are +1, -2, +3, -4, ..., all distinct for even n, so the n cyclic shifts
 * put every ordered pair side by side exactly once. For odd n two
 * differences coincide; the mirrored rows supply the missing ones, and
 * every pair appears exactly twice in 2n rows.
 */
void plan_schedule_williams_row(size_t n, size_t r, uint32_t *out)
{
	if (n == 0)
		return;
	r %= plan_schedule_williams_rows(n);
	size_t shift = r % n;
	int mirror = r >= n;
	for (size_t j = 0; j < n; j++) {
		size_t first = j == 0 ? 0 : j % 2 ? (j + 1) / 2 : n - j / 2;
		size_t at = mirror ? n - 1 - j : j;
		out[at] = (uint32_t)((first + shift) % n);
	}
}

static void identity(uint32_t *ord, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
}

static void random_order(uint64_t seed, size_t li, uint32_t rep, const char *path,
			 uint32_t *ord, size_t n, struct strbuf *label)
{
	struct prng r;
	sb_reset(label);
	sb_addf(label, "order/layout%zu/rep%u/%s", li + 1, (unsigned)rep, path);
	prng_seed(&r, prng_derive_seed(seed, label->buf));
	identity(ord, n);
	prng_shuffle_u32(&r, ord, n);
}

/* The order shared by every phase of (layout, rep) for the fixed policies. */
static void rep_order(enum plan_order o, size_t n, uint32_t rep, uint32_t *ord)
{
	switch (o) {
	case ORDER_COUNTERBALANCE:
		identity(ord, n);
		if (rep % 2 == 0)
			for (size_t i = 0; i < n / 2; i++) {
				uint32_t t = ord[i];
				ord[i] = ord[n - 1 - i];
				ord[n - 1 - i] = t;
			}
		break;
	case ORDER_LATIN:
		plan_schedule_williams_row(n, (rep - 1) % plan_schedule_williams_rows(n), ord);
		break;
	default:
		identity(ord, n);
		break;
	}
}

static void put_cell(struct schedule *s, const struct phase_tmpl *t,
		     uint32_t phase, size_t li, uint32_t rep, uint32_t vol)
{
	struct cell *c = &s->cells[s->n];
	c->seq = (uint32_t)(s->n + 1);
	c->phase = phase;
	c->layout = (uint32_t)li;
	c->rep = rep;
	c->volume = vol;
	c->step = t->step;
	c->path = xstrdup(t->path);
	c->cycle = t->cycle;
	c->sweep_var = t->sweep_var;
	c->sweep_value = t->sweep_value;
	c->bindings = t->bindings;
	s->n++;
}

int plan_schedule_build(const struct plan *p, uint64_t seed, struct schedule *s)
{
	if (!s)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	if (!p || p->repeat == 0)
		return -EINVAL;
	switch (p->order) {
	case ORDER_ALTERNATE:
	case ORDER_COUNTERBALANCE:
	case ORDER_LATIN:
	case ORDER_RANDOM:
	case ORDER_SEQUENTIAL:
		break;
	default:
		return -EINVAL;
	}

	/* Pass 1: check and count. */
	uint64_t nph, nb;
	if (check_steps(p->steps, p->nsteps, &nph, &nb) < 0 ||
	    nph > COUNT_MAX || nb > COUNT_MAX)
		return -EINVAL;
	size_t nlayouts = plan_layout_count(p);
	if (nlayouts == 0 || nlayouts > COUNT_MAX)
		return -EINVAL;
	uint64_t ncells = 0, maxvol = 0;
	for (size_t li = 0; li < nlayouts; li++) {
		size_t nv = plan_volume_count(p, li);
		if (nv == 0 || nv > COUNT_MAX)
			return -EINVAL;
		if (nv > maxvol)
			maxvol = nv;
		ncells = sat_add(ncells, sat_mul(sat_mul(p->repeat, nph), nv));
	}
	uint64_t nphases = sat_mul(sat_mul(nlayouts, p->repeat), nph);
	if (ncells > COUNT_MAX || nphases > COUNT_MAX)
		return -EINVAL;

	/* Pass 2: the phase template; bindings at their final address. */
	struct walk w = { .path = STRBUF_INIT };
	w.ph = xcalloc((size_t)nph, sizeof(*w.ph));
	w.b = nb ? xcalloc((size_t)nb, sizeof(*w.b)) : NULL;
	walk_steps(&w, p->steps, p->nsteps, 0, NULL, NULL, p->vars); /* --var: outermost */
	sb_release(&w.path);

	/* Pass 3: the cells. */
	s->cells = xcalloc((size_t)ncells, sizeof(*s->cells));
	s->bindings = w.b;
	s->nbindings = w.nb;
	s->nphases = (uint32_t)nphases;
	uint32_t *ord = xcalloc((size_t)maxvol, sizeof(*ord));
	struct strbuf label = STRBUF_INIT;
	uint32_t phase = 0;
	for (size_t li = 0; li < nlayouts; li++) {
		size_t nv = plan_volume_count(p, li);
		size_t layout_start = s->n;
		for (uint32_t rep = 1; rep <= p->repeat; rep++) {
			size_t rep_start = s->n;
			if (p->order == ORDER_SEQUENTIAL) {
				/* Phases keep their numbers from the interleaved walk. */
				for (uint32_t v = 0; v < nv; v++)
					for (size_t k = 0; k < w.nph; k++)
						put_cell(s, &w.ph[k], phase + (uint32_t)k + 1,
							 li, rep, v);
				phase += (uint32_t)w.nph;
			} else {
				rep_order(p->order, nv, rep, ord);
				for (size_t k = 0; k < w.nph; k++) {
					phase++;
					if (p->order == ORDER_RANDOM)
						random_order(seed, li, rep, w.ph[k].path,
							     ord, nv, &label);
					for (size_t i = 0; i < nv; i++)
						put_cell(s, &w.ph[k], phase, li, rep, ord[i]);
				}
			}
			s->cells[rep_start].first_of_rep = 1;
			if (rep == UINT32_MAX)
				break;
		}
		s->cells[layout_start].first_of_layout = 1;
	}
	sb_release(&label);
	free(ord);
	for (size_t k = 0; k < w.nph; k++)
		free(w.ph[k].path);
	free(w.ph);
	return 0;
}

void plan_schedule_free(struct schedule *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->cells[i].path);
	free(s->cells);
	free(s->bindings);
	memset(s, 0, sizeof(*s));
}

uint64_t plan_schedule_cell_seed(uint64_t seed, unsigned scheme, const char *layout,
			    const struct cell *c)
{
	struct strbuf label = STRBUF_INIT;
	if (scheme == SEED_LAYOUT)
		sb_addf(&label, "cell/%s/%u/%s", layout, c->rep, c->path);
	else
		sb_addf(&label, "cell/%u/%s", c->rep, c->path);
	uint64_t s = prng_derive_seed(seed, label.buf);
	sb_release(&label);
	return s;
}
