/*
 * Tests of plan/schedule.c. Plans are built by hand (no YAML): a step tree is
 * written in a small notation parsed here,
 *
 *   write read cycle3{pause enumerate} sweep:fill=90%,95%{fill write}
 *
 * (module names from a table of dummy modules; `cycleN{...}`; `sweep:VAR=
 * v1,v2{...}`; a sweep value's mark has line = its 1-based index).
 *
 * Most tests prove properties over a table of plan shapes x every order
 * policy rather than single examples: counts, seq numbering, phase
 * numbering, flags, that every cell's path resolves in the plan to exactly
 * its step with its cycle number and sweep bindings, that each repetition
 * holds every leaf instance once in plan order, interleaving (or, for
 * sequential, volume after volume), and each policy's volume order. The
 * checkers report the first violation with its context and stop.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "plan/schedule.h"
#include "provision/driver.h"
#include "test.h"

/* ---- reporting ---------------------------------------------------------- */

/* The case under test, prefixed to failure messages. */
static char case_name[256];

static void set_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_case(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(case_name, sizeof(case_name), fmt, ap);
	va_end(ap);
}

static void fail_at(unsigned line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_at(unsigned line, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	sb_addf(&sb, "[%s] ", case_name);
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	CU_assertImplementation(CU_FALSE, line, sb.buf, __FILE__, "", CU_FALSE);
	sb_release(&sb);
}

/* In a checker returning int: report the first violation and return 0. */
#define REQUIRE(cond, ...)                                                    \
	do {                                                                  \
		if (!(cond)) {                                                \
			fail_at(__LINE__, __VA_ARGS__);                       \
			return 0;                                             \
		}                                                             \
	} while (0)

/* ---- building plans by hand --------------------------------------------- */

static const struct rig_module dummy_modules[] = {
	{ .name = "write" }, { .name = "read" }, { .name = "pause" },
	{ .name = "enumerate" }, { .name = "fill" }, { .name = "tree" },
	{ .name = "churn" },
};

static const struct rig_module *dummy_module(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(dummy_modules) / sizeof(dummy_modules[0]); i++)
		if (strlen(dummy_modules[i].name) == len &&
		    !strncmp(dummy_modules[i].name, name, len))
			return &dummy_modules[i];
	return NULL;
}

/* The notation is the test's own: a mistake in it is a bug in the test. */
static void bad_spec(const char *at)
{
	fprintf(stderr, "schedule_test: bad step notation at '%s'\n", at);
	abort();
}

static void parse_list(const char **sp, char end, struct plan_step **out, size_t *nout);

/* One item of the notation at *sp into st. */
static void parse_item(const char **sp, struct plan_step *st)
{
	const char *s = *sp;
	char *e;
	memset(st, 0, sizeof(*st));
	if (!strncmp(s, "cycle", 5)) {
		st->kind = STEP_CYCLE;
		st->times = (uint32_t)strtoul(s + 5, &e, 10);
		if (e == s + 5 || *e != '{')
			bad_spec(s);
		*sp = e + 1;
	} else if (!strncmp(s, "sweep:", 6)) {
		st->kind = STEP_SWEEP;
		size_t len = strcspn(s += 6, "={");
		if (s[len] != '=')
			bad_spec(s);
		st->var = xstrndup(s, len);
		s += len + 1;
		st->values = xcalloc(1, sizeof(char *)); /* non-NULL even when empty */
		while (*s != '{') {
			len = strcspn(s, ",{");
			if (!s[len])
				bad_spec(s);
			st->values = xrealloc(st->values, (st->nvalues + 1) * sizeof(char *));
			st->values[st->nvalues++] = xstrndup(s, len);
			s += len + (s[len] == ',');
		}
		st->value_marks = xcalloc(st->nvalues + 1, sizeof(struct mark));
		for (size_t v = 0; v < st->nvalues; v++)
			st->value_marks[v] = (struct mark){ .line = (int)v + 1, .col = 1, .len = 1 };
		*sp = s + 1;
	} else {
		size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyz");
		st->kind = STEP_MODULE;
		st->module = dummy_module(s, len);
		if (!st->module)
			bad_spec(s);
		*sp = s + len;
		return;
	}
	parse_list(sp, '}', &st->steps, &st->nsteps);
}

static void parse_list(const char **sp, char end, struct plan_step **out, size_t *nout)
{
	struct plan_step *steps = NULL;
	size_t n = 0;
	for (;;) {
		while (**sp == ' ')
			(*sp)++;
		if (**sp == end)
			break;
		if (!**sp)
			bad_spec(*sp);
		steps = xrealloc(steps, (n + 1) * sizeof(*steps));
		parse_item(sp, &steps[n++]);
	}
	if (end)
		(*sp)++;
	*out = steps;
	*nout = n;
}

static void spec_steps_free(struct plan_step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct plan_step *st = &steps[i];
		spec_steps_free(st->steps, st->nsteps);
		for (size_t v = 0; v < st->nvalues; v++)
			free(st->values[v]);
		free(st->values);
		free(st->value_marks);
		free(st->var);
	}
	free(steps);
}

static void set_steps(struct plan *p, const char *spec)
{
	parse_list(&spec, '\0', &p->steps, &p->nsteps);
}

/* A dirs target with nvol volumes v1..vN. */
static struct plan *plan_dirs(size_t nvol, uint32_t repeat, enum plan_order order,
			      const char *spec)
{
	struct plan *p = xcalloc(1, sizeof(*p));
	p->version = PLAN_VERSION;
	p->name = xstrdup("test");
	p->target.kind = TARGET_DIRS;
	p->target.ndirs = nvol;
	p->target.dirs = xcalloc(nvol + 1, sizeof(char *));
	p->target.names = xcalloc(nvol + 1, sizeof(char *));
	for (size_t i = 0; i < nvol; i++) {
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "/tmp/v%zu", i + 1);
		p->target.dirs[i] = sb_detach(&sb);
		sb_addf(&sb, "v%zu", i + 1);
		p->target.names[i] = sb_detach(&sb);
	}
	p->order = order;
	p->repeat = repeat;
	set_steps(p, spec);
	return p;
}

/* An image target with nlayouts layouts of nparts[i] partitions. */
static struct plan *plan_image(const size_t *nparts, size_t nlayouts, uint32_t repeat,
			       enum plan_order order, const char *spec)
{
	struct plan *p = xcalloc(1, sizeof(*p));
	p->version = PLAN_VERSION;
	p->name = xstrdup("test");
	p->target.kind = TARGET_IMAGE;
	p->target.image_path = xstrdup("/tmp/rig-test.img");
	p->target.image_size = 1ull << 30;
	p->layouts = xcalloc(nlayouts + 1, sizeof(*p->layouts));
	p->nlayouts = nlayouts;
	for (size_t li = 0; li < nlayouts; li++) {
		struct plan_layout *l = &p->layouts[li];
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "L%zu", li + 1);
		l->name = sb_detach(&sb);
		l->scheme = xstrdup("gpt");
		l->nparts = nparts[li];
		l->parts = xcalloc(nparts[li] + 1, sizeof(*l->parts));
		for (size_t i = 0; i < nparts[li]; i++) {
			sb_addf(&sb, "p%zu", i + 1);
			l->parts[i].name = sb_detach(&sb);
			l->parts[i].fs = xstrdup("ext4");
			l->parts[i].size_kind = PSIZE_REST;
		}
	}
	p->order = order;
	p->repeat = repeat;
	p->platform = plan_platform_find("linux");
	set_steps(p, spec);
	return p;
}

static void plan_del(struct plan *p)
{
	for (size_t i = 0; i < p->target.ndirs; i++) {
		free(p->target.dirs[i]);
		free(p->target.names[i]);
	}
	free(p->target.dirs);
	free(p->target.names);
	free(p->target.image_path);
	for (size_t li = 0; li < p->nlayouts; li++) {
		struct plan_layout *l = &p->layouts[li];
		for (size_t i = 0; i < l->nparts; i++) {
			free(l->parts[i].name);
			free(l->parts[i].fs);
		}
		free(l->parts);
		free(l->name);
		free(l->scheme);
	}
	free(p->layouts);
	spec_steps_free(p->steps, p->nsteps);
	free(p->name);
	free(p);
}

/* Leaf instances of one walk of the tree, counted independently. */
static size_t count_leaves(const struct plan_step *steps, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++) {
		const struct plan_step *st = &steps[i];
		if (st->kind == STEP_MODULE)
			c++;
		else if (st->kind == STEP_CYCLE)
			c += st->times * count_leaves(st->steps, st->nsteps);
		else
			c += st->nvalues * count_leaves(st->steps, st->nsteps);
	}
	return c;
}

static const enum plan_order all_orders[] = {
	ORDER_ALTERNATE, ORDER_COUNTERBALANCE, ORDER_LATIN, ORDER_RANDOM, ORDER_SEQUENTIAL,
};
#define NORDERS (sizeof(all_orders) / sizeof(all_orders[0]))

/* ---- paths -------------------------------------------------------------- */

/* Split "2.cycle3.1" into tokens; kind 'n' (index), 'c' (cycle), 's' (sweep). */
struct ptok {
	char kind;
	unsigned long num;
};

static size_t path_tokens(const char *path, struct ptok *t, size_t max)
{
	size_t n = 0;
	const char *s = path;
	while (*s && n < max) {
		char kind = 'n';
		if (!strncmp(s, "cycle", 5)) {
			kind = 'c';
			s += 5;
		} else if (!strncmp(s, "sweep", 5)) {
			kind = 's';
			s += 5;
		}
		if (*s < '1' || *s > '9')
			return 0;
		char *e;
		t[n].kind = kind;
		t[n].num = strtoul(s, &e, 10);
		n++;
		s = e;
		if (*s == '.')
			s++;
		else if (*s)
			return 0;
	}
	return *s ? 0 : n;
}

#define MAXTOK 64

/* Plan step order: token by token, an enclosing path before its contents. */
static int path_cmp(const char *a, const char *b)
{
	struct ptok ta[MAXTOK], tb[MAXTOK];
	size_t na = path_tokens(a, ta, MAXTOK), nb = path_tokens(b, tb, MAXTOK);
	for (size_t i = 0; i < na && i < nb; i++) {
		if (ta[i].kind != tb[i].kind)
			return ta[i].kind < tb[i].kind ? -1 : 1;
		if (ta[i].num != tb[i].num)
			return ta[i].num < tb[i].num ? -1 : 1;
	}
	return na < nb ? -1 : na > nb;
}

/*
 * Resolve a cell's path in the plan and check everything the path implies:
 * the step pointer, the cycle number, the innermost sweep and the whole
 * binding chain (innermost first, with the value marks).
 */
static int check_path(const struct plan *p, const struct schedule *s, const struct cell *c)
{
	struct ptok t[MAXTOK];
	size_t nt = path_tokens(c->path, t, MAXTOK);
	REQUIRE(nt % 2 == 1, "seq %u: malformed path '%s'", c->seq, c->path);
	const struct plan_step *list = p->steps, *st = NULL;
	size_t nlist = p->nsteps;
	uint32_t cycle = 0;
	const char *vars[MAXTOK], *vals[MAXTOK];
	int lines[MAXTOK];
	size_t nsw = 0;
	for (size_t i = 0; i < nt; i++) {
		if (i % 2 == 0) {
			REQUIRE(t[i].kind == 'n' && t[i].num <= nlist,
				"seq %u: path '%s' token %zu is not a step index", c->seq, c->path, i);
			st = &list[t[i].num - 1];
			continue;
		}
		if (t[i].kind == 'c') {
			REQUIRE(st->kind == STEP_CYCLE && t[i].num <= st->times,
				"seq %u: path '%s': no cycle %lu there", c->seq, c->path, t[i].num);
			cycle = (uint32_t)t[i].num;
		} else {
			REQUIRE(t[i].kind == 's' && st->kind == STEP_SWEEP && t[i].num <= st->nvalues,
				"seq %u: path '%s': no sweep value %lu there", c->seq, c->path, t[i].num);
			vars[nsw] = st->var;
			vals[nsw] = st->values[t[i].num - 1];
			lines[nsw] = (int)t[i].num;
			nsw++;
		}
		list = st->steps;
		nlist = st->nsteps;
	}
	REQUIRE(st == c->step, "seq %u: path '%s' names another step", c->seq, c->path);
	REQUIRE(st->kind == STEP_MODULE, "seq %u: not a module step", c->seq);
	REQUIRE(c->cycle == cycle, "seq %u: path '%s' cycle %u, want %u", c->seq, c->path,
		c->cycle, cycle);
	if (nsw == 0) {
		REQUIRE(!c->sweep_var && !c->sweep_value && !c->bindings,
			"seq %u: sweep data outside any sweep", c->seq);
		return 1;
	}
	REQUIRE(c->sweep_var && !strcmp(c->sweep_var, vars[nsw - 1]) && c->sweep_value &&
		!strcmp(c->sweep_value, vals[nsw - 1]),
		"seq %u: path '%s': innermost sweep wrong", c->seq, c->path);
	const struct binding *b = c->bindings;
	for (size_t k = nsw; k-- > 0; b = b->outer) {
		REQUIRE(b, "seq %u: binding chain too short", c->seq);
		REQUIRE(b >= s->bindings && b < s->bindings + s->nbindings,
			"seq %u: binding outside the schedule's storage", c->seq);
		REQUIRE(!strcmp(b->var, vars[k]) && !strcmp(b->value, vals[k]) &&
			b->mark.line == lines[k],
			"seq %u: binding %zu is %s=%s@%d, want %s=%s@%d", c->seq, nsw - k,
			b->var, b->value, b->mark.line, vars[k], vals[k], lines[k]);
	}
	REQUIRE(!b, "seq %u: binding chain too long", c->seq);
	return 1;
}

/* ---- properties --------------------------------------------------------- */

/* What check_common remembers per phase while walking the cells. */
struct common {
	size_t P, maxv;
	unsigned char *seen;           /* [phase][volume] */
	const struct cell **first;     /* [phase]: its first cell met */
	const char **ref_path;         /* [k]: path of the k-th phase of every rep */
};

/* One cell, the i-th, expected in layout li, repetition rep, k-th of it. */
static int check_cell(const struct plan *p, const struct schedule *s, struct common *m,
		      size_t i, size_t li, size_t rep, size_t k)
{
	const struct cell *c = &s->cells[i];
	size_t nv = plan_volume_count(p, li), base = (li * p->repeat + rep - 1) * m->P;
	REQUIRE(c->seq == i + 1 && c->layout == li && c->rep == rep,
		"cell %zu: seq %u layout %u rep %u, want %zu %zu %zu", i, c->seq, c->layout,
		c->rep, i + 1, li, rep);
	REQUIRE(c->first_of_layout == (rep == 1 && k == 0) && c->first_of_rep == (k == 0),
		"seq %u: first_of_layout %d first_of_rep %d", c->seq, c->first_of_layout,
		c->first_of_rep);
	REQUIRE(c->volume < nv && c->phase > base && c->phase <= base + m->P,
		"seq %u: volume %u phase %u out of range", c->seq, c->volume, c->phase);
	size_t ph = c->phase - 1;
	REQUIRE(!m->seen[ph * m->maxv + c->volume]++, "phase %u has volume %u twice",
		c->phase, c->volume);
	const struct cell *r = m->first[ph] ? m->first[ph] : (m->first[ph] = c);
	REQUIRE(r->step == c->step && !strcmp(r->path, c->path) && r->cycle == c->cycle &&
		r->bindings == c->bindings, "phase %u mixes steps %s and %s", c->phase,
		r->path, c->path);
	const char **ref = &m->ref_path[ph - base];
	REQUIRE(!*ref || !strcmp(*ref, c->path), "phase %u of layout %zu rep %zu is %s, want %s",
		c->phase, li, rep, c->path, *ref);
	*ref = c->path;
	return check_path(p, s, c);
}

/*
 * What holds for every order: counts, seq, flags, phase numbers per
 * (layout, rep), each phase covering every volume once with one step,
 * every path resolving, and each repetition holding every leaf instance
 * once in plan order (same phase list in every layout and rep).
 */
static int check_common(const struct plan *p, const struct schedule *s)
{
	size_t L = plan_layout_count(p), R = p->repeat;
	struct common m = { .P = count_leaves(p->steps, p->nsteps) };
	size_t want = 0;
	for (size_t li = 0; li < L; li++) {
		size_t nv = plan_volume_count(p, li);
		want += R * m.P * nv;
		if (nv > m.maxv)
			m.maxv = nv;
	}
	REQUIRE(s->n == want, "%zu cells, want %zu", s->n, want);
	REQUIRE(s->nphases == L * R * m.P, "%u phases, want %zu", s->nphases, L * R * m.P);

	m.seen = xcalloc(s->nphases * m.maxv + 1, 1);
	m.first = xcalloc(s->nphases + 1, sizeof(*m.first));
	m.ref_path = xcalloc(m.P + 1, sizeof(char *));
	int ok = 1;
	size_t i = 0;
	for (size_t li = 0; ok && li < L; li++)
		for (size_t rep = 1; ok && rep <= R; rep++)
			for (size_t k = 0; ok && k < m.P * plan_volume_count(p, li); k++, i++)
				ok = check_cell(p, s, &m, i, li, rep, k);
	for (size_t k = 1; ok && k < m.P; k++)
		if (path_cmp(m.ref_path[k - 1], m.ref_path[k]) >= 0) {
			fail_at(__LINE__, "phase list out of plan order: %s then %s",
				m.ref_path[k - 1], m.ref_path[k]);
			ok = 0;
		}
	free(m.seen);
	free(m.first);
	free(m.ref_path);
	return ok;
}

/* Interleaved orders: phases contiguous, numbered 1.. in execution order. */
static int check_interleaved(const struct plan *p, const struct schedule *s)
{
	size_t i = 0;
	uint32_t phase = 0;
	while (i < s->n) {
		size_t nv = plan_volume_count(p, s->cells[i].layout);
		phase++;
		for (size_t k = 0; k < nv; k++, i++)
			REQUIRE(i < s->n && s->cells[i].phase == phase,
				"seq %zu: phase %u, want %u (phases not contiguous)", i + 1,
				i < s->n ? s->cells[i].phase : 0, phase);
	}
	REQUIRE(phase == s->nphases, "%u phases seen, want %u", phase, s->nphases);
	return 1;
}

/* Sequential: per (layout, rep), all phases on volume 0, then 1, ... */
static int check_sequential(const struct plan *p, const struct schedule *s)
{
	size_t P = count_leaves(p->steps, p->nsteps), i = 0;
	while (i < s->n) {
		const struct cell *first = &s->cells[i];
		size_t nv = plan_volume_count(p, first->layout);
		uint32_t base = (first->layout * p->repeat + first->rep - 1) * (uint32_t)P;
		for (size_t j = 0; j < P * nv; j++, i++) {
			const struct cell *c = &s->cells[i];
			REQUIRE(c->volume == j / P && c->phase == base + j % P + 1,
				"seq %u: volume %u phase %u, want volume %zu phase %zu", c->seq,
				c->volume, c->phase, j / P, base + j % P + 1);
		}
	}
	return 1;
}

/* Each policy's volume order inside every phase. */
static int check_policy(const struct plan *p, const struct schedule *s)
{
	uint32_t want[64];
	size_t i = 0;
	while (i < s->n) {
		const struct cell *c0 = &s->cells[i];
		size_t n = plan_volume_count(p, c0->layout);
		switch (p->order) {
		case ORDER_ALTERNATE:
			for (size_t k = 0; k < n; k++)
				want[k] = (uint32_t)k;
			break;
		case ORDER_COUNTERBALANCE:
			for (size_t k = 0; k < n; k++)
				want[k] = (uint32_t)(c0->rep % 2 ? k : n - 1 - k);
			break;
		case ORDER_LATIN:
			plan_schedule_williams_row(n, (c0->rep - 1) % plan_schedule_williams_rows(n), want);
			break;
		default:
			return 1; /* random: covered by check_common and the seed tests */
		}
		for (size_t k = 0; k < n; k++, i++)
			REQUIRE(s->cells[i].volume == want[k],
				"phase %u rep %u: position %zu has volume %u, want %u",
				s->cells[i].phase, c0->rep, k + 1, s->cells[i].volume, want[k]);
	}
	return 1;
}

struct shape {
	const char *name;
	size_t nlayouts;          /* 0: dirs target */
	size_t nvol[4];           /* dirs: nvol[0] */
	uint32_t repeat;
	const char *spec;
};

static const struct shape shapes[] = {
	{ "dirs 2, write read", 0, { 2 }, 3, "write read" },
	{ "dirs 1, cycle", 0, { 1 }, 2, "write cycle2{pause read}" },
	{ "dirs 5, sweep", 0, { 5 }, 4, "write sweep:fill=90%,95%{fill read} enumerate" },
	{ "dirs 12, long", 0, { 12 }, 3, "write read" },
	{ "dirs 3, more reps than latin rows", 0, { 3 }, 13, "write read" },
	{ "image 2+3+1, nested", 3, { 2, 3, 1 }, 3,
	  "write cycle2{sweep:x=a,b{read pause}} read" },
	{ "image 4+7, cycle", 2, { 4, 7 }, 5, "tree cycle3{churn enumerate}" },
	{ "image 6, sweep in sweep", 1, { 6 }, 2,
	  "sweep:x=1,2,3{sweep:y=a,b{write read} cycle2{cycle2{pause}}}" },
};

static struct plan *shape_plan(const struct shape *sh, enum plan_order o)
{
	if (!sh->nlayouts)
		return plan_dirs(sh->nvol[0], sh->repeat, o, sh->spec);
	return plan_image(sh->nvol, sh->nlayouts, sh->repeat, o, sh->spec);
}

static void test_properties_all_orders(void)
{
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
		for (size_t oi = 0; oi < NORDERS; oi++) {
			enum plan_order o = all_orders[oi];
			struct plan *p = shape_plan(&shapes[si], o);
			struct schedule s;
			set_case("%s, order %s", shapes[si].name, plan_order_name(o));
			int rc = plan_schedule_build(p, 42, &s);
			CU_ASSERT_EQUAL(rc, 0);
			if (rc == 0) {
				CU_ASSERT(check_common(p, &s));
				if (o == ORDER_SEQUENTIAL) {
					CU_ASSERT(check_sequential(p, &s));
				} else {
					CU_ASSERT(check_interleaved(p, &s));
				}
				CU_ASSERT(check_policy(p, &s));
			}
			plan_schedule_free(&s);
			plan_del(p);
		}
}

/* Sequential numbers its phases as the interleaved walk does. */
static void test_sequential_phase_numbers(void)
{
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		struct plan *pa = shape_plan(&shapes[si], ORDER_ALTERNATE);
		struct plan *ps = shape_plan(&shapes[si], ORDER_SEQUENTIAL);
		struct schedule a, q;
		CU_ASSERT_EQUAL_FATAL(plan_schedule_build(pa, 1, &a), 0);
		CU_ASSERT_EQUAL_FATAL(plan_schedule_build(ps, 1, &q), 0);
		CU_ASSERT_EQUAL(a.nphases, q.nphases);
		/* phase -> the alternate schedule's cell of that phase */
		const struct cell **by_phase = xcalloc(a.nphases + 1, sizeof(*by_phase));
		for (size_t i = 0; i < a.n; i++)
			by_phase[a.cells[i].phase] = &a.cells[i];
		size_t bad = 0;
		for (size_t i = 0; i < q.n; i++) {
			const struct cell *c = &q.cells[i], *r = by_phase[c->phase];
			if (!r || r->layout != c->layout || r->rep != c->rep || strcmp(r->path, c->path))
				bad++;
		}
		CU_ASSERT_EQUAL(bad, 0);
		free(by_phase);
		plan_schedule_free(&a);
		plan_schedule_free(&q);
		plan_del(pa);
		plan_del(ps);
	}
}

/* ---- the Williams design ------------------------------------------------ */

static int check_williams(size_t n)
{
	size_t rows = plan_schedule_williams_rows(n);
	REQUIRE(rows == (n % 2 ? 2 * n : n), "n %zu: %zu rows", n, rows);
	size_t *pos = xcalloc(n * n, sizeof(size_t));  /* [volume][position] */
	size_t *adj = xcalloc(n * n, sizeof(size_t));  /* [a][b]: a then b */
	uint32_t row[64];
	int ok = 0;
	for (size_t r = 0; r < rows; r++) {
		plan_schedule_williams_row(n, r, row);
		for (size_t j = 0; j < n; j++) {
			if (row[j] >= n) {
				fail_at(__LINE__, "n %zu row %zu: volume %u out of range", n, r, row[j]);
				goto out;
			}
			pos[row[j] * n + j]++;
			if (j)
				adj[row[j - 1] * n + row[j]]++;
		}
	}
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++) {
			/* every volume in every position rows/n times (so each row is a permutation) */
			if (pos[a * n + b] != rows / n) {
				fail_at(__LINE__, "n %zu: volume %zu in position %zu %zu times, want %zu",
					n, a, b + 1, pos[a * n + b], rows / n);
				goto out;
			}
			/* every ordered pair adjacent rows/n times: 1 (even n) or 2 (odd n) */
			size_t want = a == b ? 0 : rows / n;
			if (adj[a * n + b] != want) {
				fail_at(__LINE__, "n %zu: %zu followed by %zu %zu times, want %zu",
					n, a, b, adj[a * n + b], want);
				goto out;
			}
		}
	ok = 1;
out:
	free(pos);
	free(adj);
	return ok;
}

static void test_williams_balanced(void)
{
	for (size_t n = 2; n <= 12; n++) {
		set_case("williams n=%zu", n);
		CU_ASSERT(check_williams(n));
	}
}

static void test_williams_rows(void)
{
	static const struct {
		size_t n, r;
		uint32_t row[6];
	} cases[] = {
		{ 1, 0, { 0 } },
		{ 2, 0, { 0, 1 } },
		{ 2, 1, { 1, 0 } },
		{ 4, 0, { 0, 1, 3, 2 } },
		{ 4, 1, { 1, 2, 0, 3 } },
		{ 4, 5, { 1, 2, 0, 3 } },             /* r is taken mod rows */
		{ 3, 0, { 0, 1, 2 } },
		{ 3, 3, { 2, 1, 0 } },                /* mirror of row 0 */
		{ 5, 0, { 0, 1, 4, 2, 3 } },
		{ 5, 7, { 0, 4, 1, 3, 2 } },          /* mirror of row 2: 2 3 1 4 0 */
		{ 6, 0, { 0, 1, 5, 2, 4, 3 } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t row[6] = { 0 };
		plan_schedule_williams_row(cases[i].n, cases[i].r, row);
		CU_ASSERT(!memcmp(row, cases[i].row, cases[i].n * sizeof(uint32_t)));
	}
	CU_ASSERT_EQUAL(plan_schedule_williams_rows(0), 0);
	CU_ASSERT_EQUAL(plan_schedule_williams_rows(1), 2);
	CU_ASSERT_EQUAL(plan_schedule_williams_rows(7), 14);
	CU_ASSERT_EQUAL(plan_schedule_williams_rows(8), 8);
}

/* ---- random order ------------------------------------------------------- */

static int same_cells(const struct schedule *a, const struct schedule *b)
{
	if (a->n != b->n || a->nphases != b->nphases)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct cell *x = &a->cells[i], *y = &b->cells[i];
		if (x->seq != y->seq || x->phase != y->phase || x->layout != y->layout ||
		    x->rep != y->rep || x->volume != y->volume || x->step != y->step ||
		    strcmp(x->path, y->path) || x->cycle != y->cycle ||
		    x->sweep_value != y->sweep_value || x->first_of_layout != y->first_of_layout ||
		    x->first_of_rep != y->first_of_rep)
			return 0;
	}
	return 1;
}

/* Phases (by number) whose volume order differs between a and b. */
static size_t phases_differing(const struct schedule *a, const struct schedule *b)
{
	size_t n = 0;
	for (size_t i = 0; i < a->n && i < b->n;) {
		uint32_t ph = a->cells[i].phase;
		int differ = 0;
		for (; i < a->n && a->cells[i].phase == ph; i++)
			if (a->cells[i].volume != b->cells[i].volume)
				differ = 1;
		n += differ;
	}
	return n;
}

static void test_random_reproducible(void)
{
	static const uint64_t seeds[] = { 0, 1, 42, 0xdeadbeefull, UINT64_MAX };
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
		for (size_t k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
			struct plan *p = shape_plan(&shapes[si], ORDER_RANDOM);
			struct schedule a, b;
			CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, seeds[k], &a), 0);
			CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, seeds[k], &b), 0);
			CU_ASSERT(same_cells(&a, &b));
			plan_schedule_free(&a);
			plan_schedule_free(&b);
			plan_del(p);
		}
}

/* Do the n cells from i and from j visit the volumes in the same order? */
static int same_order(const struct schedule *s, size_t i, size_t j, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (s->cells[i + k].volume != s->cells[j + k].volume)
			return 0;
	return 1;
}

static void test_random_differs(void)
{
	static const uint64_t pairs[][2] = { { 1, 2 }, { 42, 43 }, { 0, UINT64_MAX }, { 7, 7000 } };
	for (size_t n = 3; n <= 8; n++)
		for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
			struct plan *p = plan_dirs(n, 2, ORDER_RANDOM, "write read cycle2{pause}");
			struct schedule a, b;
			CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, pairs[k][0], &a), 0);
			CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, pairs[k][1], &b), 0);
			CU_ASSERT(phases_differing(&a, &b) > 0);
			/* and within one schedule the phases are not all shuffled alike */
			size_t alike = 0;
			for (size_t ph = 1; ph < a.nphases; ph++)
				alike += same_order(&a, 0, ph * n, n);
			CU_ASSERT(alike < a.nphases - 1);
			/* nor repetitions alike: rep 2 reshuffles the phases of rep 1 */
			size_t P = a.nphases / 2, rep_alike = 0;
			for (size_t ph = 0; ph < P; ph++)
				rep_alike += same_order(&a, ph * n, (P + ph) * n, n);
			CU_ASSERT(rep_alike < P);
			plan_schedule_free(&a);
			plan_schedule_free(&b);
			plan_del(p);
		}
}

/*
 * Each phase draws its own stream: more repetitions or another layout do not
 * change the orders already there; orders other than random ignore the seed.
 */
static void test_random_streams_independent(void)
{
	static const size_t one[] = { 5 }, two[] = { 5, 4 };
	struct plan *p2 = plan_image(one, 1, 2, ORDER_RANDOM, "write cycle2{read}");
	struct plan *p3 = plan_image(one, 1, 3, ORDER_RANDOM, "write cycle2{read}");
	struct plan *pl = plan_image(two, 2, 2, ORDER_RANDOM, "write cycle2{read}");
	struct schedule a, b, c;
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p2, 9, &a), 0);
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p3, 9, &b), 0);
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(pl, 9, &c), 0);
	size_t ok_b = 1, ok_c = 1;
	for (size_t i = 0; i < a.n; i++) {
		ok_b &= b.cells[i].volume == a.cells[i].volume && b.cells[i].phase == a.cells[i].phase;
		ok_c &= c.cells[i].volume == a.cells[i].volume && c.cells[i].phase == a.cells[i].phase;
	}
	CU_ASSERT(ok_b);
	CU_ASSERT(ok_c);
	plan_schedule_free(&a);
	plan_schedule_free(&b);
	plan_schedule_free(&c);
	plan_del(p2);
	plan_del(p3);
	plan_del(pl);

	for (size_t oi = 0; oi < NORDERS; oi++) {
		if (all_orders[oi] == ORDER_RANDOM)
			continue;
		struct plan *p = plan_dirs(4, 5, all_orders[oi], "write sweep:x=a,b{read}");
		CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 1, &a), 0);
		CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 2, &b), 0);
		CU_ASSERT(same_cells(&a, &b));
		plan_schedule_free(&a);
		plan_schedule_free(&b);
		plan_del(p);
	}
}

/* ---- paths, cycles, sweeps, bindings ------------------------------------ */

/* "path module cCYCLE var=value {chain}" for a cell. */
static void render_cell(struct strbuf *sb, const struct cell *c)
{
	sb_addf(sb, "%s %s c%u ", c->path, c->step->module->name, (unsigned)c->cycle);
	if (c->sweep_var)
		sb_addf(sb, "%s=%s", c->sweep_var, c->sweep_value);
	else
		sb_adds(sb, "-");
	sb_adds(sb, " {");
	for (const struct binding *b = c->bindings; b; b = b->outer)
		sb_addf(sb, "%s%s=%s@%d", b == c->bindings ? "" : "<", b->var, b->value,
			b->mark.line);
	sb_adds(sb, "}");
}

static const char *const nest_plain[] = {
	"1 write c0 - {}",
	"2 read c0 - {}",
	NULL,
};
static const char *const nest_cycle[] = {
	"1 write c0 - {}",
	"2.cycle1.1 pause c1 - {}",
	"2.cycle1.2 enumerate c1 - {}",
	"2.cycle2.1 pause c2 - {}",
	"2.cycle2.2 enumerate c2 - {}",
	NULL,
};
static const char *const nest_sweep[] = {
	"1.sweep1.1 fill c0 fill=90% {fill=90%@1}",
	"1.sweep1.2 write c0 fill=90% {fill=90%@1}",
	"1.sweep2.1 fill c0 fill=95% {fill=95%@2}",
	"1.sweep2.2 write c0 fill=95% {fill=95%@2}",
	NULL,
};
static const char *const nest_cycle_sweep[] = {
	"1 write c0 - {}",
	"2.cycle1.1.sweep1.1 pause c1 x=a {x=a@1}",
	"2.cycle1.1.sweep1.2 read c1 x=a {x=a@1}",
	"2.cycle1.1.sweep2.1 pause c1 x=b {x=b@2}",
	"2.cycle1.1.sweep2.2 read c1 x=b {x=b@2}",
	"2.cycle2.1.sweep1.1 pause c2 x=a {x=a@1}",
	"2.cycle2.1.sweep1.2 read c2 x=a {x=a@1}",
	"2.cycle2.1.sweep2.1 pause c2 x=b {x=b@2}",
	"2.cycle2.1.sweep2.2 read c2 x=b {x=b@2}",
	"3 write c0 - {}",
	NULL,
};
static const char *const nest_cycle3_sweep[] = {
	"1 write c0 - {}",
	"2.cycle1.1.sweep1.1 pause c1 x=a {x=a@1}",
	"2.cycle1.1.sweep1.2 read c1 x=a {x=a@1}",
	"2.cycle2.1.sweep1.1 pause c2 x=a {x=a@1}",
	"2.cycle2.1.sweep1.2 read c2 x=a {x=a@1}",
	"2.cycle3.1.sweep1.1 pause c3 x=a {x=a@1}",
	"2.cycle3.1.sweep1.2 read c3 x=a {x=a@1}",
	NULL,
};
static const char *const nest_sweep_sweep[] = {
	"1.sweep1.1.sweep1.1 read c0 y=1 {y=1@1<x=a@1}",
	"1.sweep1.1.sweep2.1 read c0 y=2 {y=2@2<x=a@1}",
	"1.sweep1.2 write c0 x=a {x=a@1}",
	"1.sweep2.1.sweep1.1 read c0 y=1 {y=1@1<x=b@2}",
	"1.sweep2.1.sweep2.1 read c0 y=2 {y=2@2<x=b@2}",
	"1.sweep2.2 write c0 x=b {x=b@2}",
	NULL,
};
static const char *const nest_sweep_cycle_cycle[] = {
	"1 read c0 - {}",
	"2.sweep1.1.cycle1.1.cycle1.1 pause c1 lvl=90% {lvl=90%@1}",
	"2.sweep1.1.cycle1.1.cycle2.1 pause c2 lvl=90% {lvl=90%@1}",
	"2.sweep1.1.cycle1.2 enumerate c1 lvl=90% {lvl=90%@1}",
	"2.sweep1.1.cycle2.1.cycle1.1 pause c1 lvl=90% {lvl=90%@1}",
	"2.sweep1.1.cycle2.1.cycle2.1 pause c2 lvl=90% {lvl=90%@1}",
	"2.sweep1.1.cycle2.2 enumerate c2 lvl=90% {lvl=90%@1}",
	NULL,
};

static const struct {
	const char *spec;
	const char *const *want;
} nest_cases[] = {
	{ "write read", nest_plain },
	{ "write cycle2{pause enumerate}", nest_cycle },
	{ "sweep:fill=90%,95%{fill write}", nest_sweep },
	{ "write cycle2{sweep:x=a,b{pause read}} write", nest_cycle_sweep },
	{ "write cycle3{sweep:x=a{pause read}}", nest_cycle3_sweep },
	{ "sweep:x=a,b{sweep:y=1,2{read} write}", nest_sweep_sweep },
	{ "read sweep:lvl=90%{cycle2{cycle2{pause} enumerate}}", nest_sweep_cycle_cycle },
};

static int check_nesting(const char *spec, const char *const *want)
{
	/* Two volumes, two reps, two layouts: every rep repeats the list. */
	static const size_t nparts[] = { 2, 3 };
	struct plan *p = plan_image(nparts, 2, 2, ORDER_COUNTERBALANCE, spec);
	struct schedule s;
	int ok = 0;
	size_t nwant = 0;
	while (want[nwant])
		nwant++;
	if (plan_schedule_build(p, 5, &s) < 0) {
		fail_at(__LINE__, "plan_schedule_build failed");
		plan_del(p);
		return 0;
	}
	struct strbuf sb = STRBUF_INIT;
	size_t i = 0;
	for (size_t block = 0; block < 2 * 2; block++) {
		size_t nv = nparts[block / 2];
		for (size_t k = 0; k < nwant; k++)
			for (size_t v = 0; v < nv; v++, i++) {
				if (i >= s.n) {
					fail_at(__LINE__, "too few cells: %zu", s.n);
					goto out;
				}
				sb_reset(&sb);
				render_cell(&sb, &s.cells[i]);
				if (strcmp(sb.buf, want[k])) {
					fail_at(__LINE__, "seq %zu: got '%s', want '%s'", i + 1, sb.buf,
						want[k]);
					goto out;
				}
			}
	}
	if (i != s.n) {
		fail_at(__LINE__, "%zu cells, want %zu", s.n, i);
		goto out;
	}
	ok = 1;
out:
	sb_release(&sb);
	plan_schedule_free(&s);
	plan_del(p);
	return ok;
}

static void test_nesting(void)
{
	for (size_t i = 0; i < sizeof(nest_cases) / sizeof(nest_cases[0]); i++) {
		set_case("nesting '%s'", nest_cases[i].spec);
		CU_ASSERT(check_nesting(nest_cases[i].spec, nest_cases[i].want));
	}
}

/* Inner sweeps point at the very binding of their enclosing value. */
static void test_binding_sharing(void)
{
	struct plan *p = plan_dirs(2, 1, ORDER_ALTERNATE, "sweep:x=a,b{sweep:y=1,2{read} write}");
	struct schedule s;
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 0, &s), 0);
	/* cells: 1.sweep1.1.sweep1.1 (2 vols), 1.sweep1.1.sweep2.1, 1.sweep1.2, ... */
	CU_ASSERT_EQUAL(s.nbindings, 2 + 2 * 2);
	CU_ASSERT_PTR_EQUAL(s.cells[0].bindings->outer, s.cells[4].bindings);
	CU_ASSERT_PTR_EQUAL(s.cells[2].bindings->outer, s.cells[4].bindings);
	CU_ASSERT_PTR_NOT_EQUAL(s.cells[0].bindings, s.cells[2].bindings);
	CU_ASSERT_PTR_EQUAL(s.cells[0].bindings, s.cells[1].bindings);
	CU_ASSERT_PTR_NULL(s.cells[4].bindings->outer);
	CU_ASSERT_STRING_EQUAL(s.cells[4].bindings->value, "a");
	CU_ASSERT_STRING_EQUAL(s.cells[10].bindings->value, "b");
	plan_schedule_free(&s);
	plan_del(p);
}

/* ---- counts and invalid plans ------------------------------------------- */

static void test_counts(void)
{
	static const struct {
		size_t nlayouts, nvol[3];
		uint32_t repeat;
		const char *spec;
		size_t cells, phases;
	} cases[] = {
		{ 0, { 2 }, 1, "write read", 4, 2 },
		{ 0, { 3 }, 2, "write cycle4{read}", 30, 10 },
		{ 1, { 4 }, 3, "sweep:v=1,2,3{write read}", 72, 18 },
		{ 2, { 2, 5 }, 2, "write cycle2{sweep:v=1,2{read}}", 70, 20 },
		{ 3, { 1, 2, 3 }, 1, "write", 6, 3 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t oi = 0; oi < NORDERS; oi++) {
			struct plan *p = cases[i].nlayouts
				? plan_image(cases[i].nvol, cases[i].nlayouts, cases[i].repeat,
					     all_orders[oi], cases[i].spec)
				: plan_dirs(cases[i].nvol[0], cases[i].repeat, all_orders[oi],
					    cases[i].spec);
			struct schedule s;
			CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 3, &s), 0);
			CU_ASSERT_EQUAL(s.n, cases[i].cells);
			CU_ASSERT_EQUAL(s.nphases, cases[i].phases);
			plan_schedule_free(&s);
			plan_del(p);
		}
}

enum breakage {
	BREAK_REPEAT, BREAK_NO_LAYOUTS, BREAK_EMPTY_LAYOUT, BREAK_NO_DIRS,
	BREAK_MODULE, BREAK_ORDER, BREAK_KIND, BREAK_HUGE,
};

static void test_invalid(void)
{
	static const struct {
		const char *what;
		const char *spec;
		int image;
		int breakage; /* -1: the spec alone is invalid */
	} cases[] = {
		{ "repeat 0", "write", 0, BREAK_REPEAT },
		{ "image without layouts", "write", 1, BREAK_NO_LAYOUTS },
		{ "layout without partitions", "write", 1, BREAK_EMPTY_LAYOUT },
		{ "dirs without dirs", "write", 0, BREAK_NO_DIRS },
		{ "module step without module", "write read", 0, BREAK_MODULE },
		{ "unknown order", "write", 0, BREAK_ORDER },
		{ "unknown step kind", "write read", 0, BREAK_KIND },
		{ "cells past 2^32", "write", 0, BREAK_HUGE },
		{ "no steps", "", 0, -1 },
		{ "cycle times 0", "cycle0{read}", 0, -1 },
		{ "empty cycle", "write cycle2{}", 0, -1 },
		{ "sweep without values", "sweep:x={read}", 0, -1 },
		{ "empty sweep", "sweep:x=1{}", 0, -1 },
		{ "nested empty", "cycle2{sweep:x=1{cycle3{}}}", 0, -1 },
		{ "phases past 2^32", "cycle4294967295{cycle4294967295{read}}", 0, -1 },
		{ "phases past 2^32 (sweep)", "cycle65536{cycle65536{sweep:x=1,2{read}}}", 0, -1 },
	};
	static const size_t two[] = { 2 };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct plan *p = cases[i].image ? plan_image(two, 1, 1, ORDER_LATIN, cases[i].spec)
						: plan_dirs(2, 1, ORDER_LATIN, cases[i].spec);
		switch (cases[i].breakage) {
		case BREAK_REPEAT: p->repeat = 0; break;
		case BREAK_NO_LAYOUTS: p->nlayouts = 0; break;
		case BREAK_EMPTY_LAYOUT: p->layouts[0].nparts = 0; break;
		case BREAK_NO_DIRS: p->target.ndirs = 0; break;
		case BREAK_MODULE: p->steps[1].module = NULL; break;
		case BREAK_ORDER: p->order = (enum plan_order)(ORDER_SEQUENTIAL + 1); break;
		case BREAK_KIND: p->steps[1].kind = (enum step_kind)(STEP_SWEEP + 1); break;
		case BREAK_HUGE: p->repeat = UINT32_MAX; break; /* x 2 volumes */
		default: break;
		}
		struct schedule s;
		memset(&s, 0xa5, sizeof(s));
		int rc = plan_schedule_build(p, 1, &s);
		set_case("invalid: %s", cases[i].what);
		if (rc != -EINVAL) {
			fail_at(__LINE__, "plan_schedule_build returned %d, want -EINVAL", rc);
		} else {
			CU_PASS("rejected");
		}
		CU_ASSERT(s.cells == NULL && s.n == 0 && s.bindings == NULL && s.nphases == 0);
		plan_schedule_free(&s); /* harmless on a rejected schedule */
		if (cases[i].breakage == BREAK_NO_LAYOUTS)
			p->nlayouts = 1;
		if (cases[i].breakage == BREAK_EMPTY_LAYOUT)
			p->layouts[0].nparts = 2;
		if (cases[i].breakage == BREAK_NO_DIRS)
			p->target.ndirs = 2;
		if (cases[i].breakage == BREAK_KIND)
			p->steps[1].kind = STEP_MODULE;
		plan_del(p);
	}
	struct schedule s;
	CU_ASSERT_EQUAL(plan_schedule_build(NULL, 1, &s), -EINVAL);
	CU_ASSERT_EQUAL(plan_schedule_build(NULL, 1, NULL), -EINVAL);
	plan_schedule_free(NULL);
}

/* A large schedule builds and is numbered to its end. */
static void test_limits_accept(void)
{
	struct plan *p = plan_dirs(1, 1000, ORDER_RANDOM, "cycle1000{read}");
	struct schedule s;
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 1, &s), 0);
	CU_ASSERT_EQUAL(s.n, 1000000);
	CU_ASSERT_EQUAL(s.cells[s.n - 1].seq, 1000000);
	CU_ASSERT_STRING_EQUAL(s.cells[s.n - 1].path, "1.cycle1000.1");
	CU_ASSERT_EQUAL(s.cells[s.n - 1].cycle, 1000);
	plan_schedule_free(&s);
	plan_del(p);
}

/* Seed 42, repetition 2, path 3.cycle2.1: SEED_COMMON's, and SEED_LAYOUT's
 * for layout L1 (what rig drew before common random numbers). */
#define SEED_COMMON_PIN UINT64_C(8107037190332837638)
#define SEED_LAYOUT_PIN UINT64_C(5876955830554682765)

/* Cells that are the same draw: the same repetition and step path. */
static int same_draw(const struct cell *a, const struct cell *b)
{
	return a->rep == b->rep && !strcmp(a->path, b->path);
}

/* Over every shape with layouts and every order: under SEED_COMMON two
 * cells share their seed exactly when they are the same draw (so every
 * layout and volume gets the same workload at a repetition, and each
 * repetition and step instance a new one); under SEED_LAYOUT, the layouts
 * of the runs before it, cells of different layouts never share it. */
static int check_seeds(const struct plan *p, const struct schedule *s)
{
	uint64_t *common = xcalloc(s->n, sizeof(*common)), *old = xcalloc(s->n, sizeof(*old));
	for (size_t i = 0; i < s->n; i++) {
		const char *ln = plan_layout_name(p, s->cells[i].layout);
		common[i] = plan_schedule_cell_seed(42, SEED_COMMON, ln, &s->cells[i]);
		old[i] = plan_schedule_cell_seed(42, SEED_LAYOUT, ln, &s->cells[i]);
	}
	int ok = 1;
	for (size_t i = 0; i < s->n && ok; i++)
		for (size_t j = i + 1; j < s->n && ok; j++) {
			const struct cell *a = &s->cells[i], *b = &s->cells[j];
			int same = same_draw(a, b);
			if ((common[i] == common[j]) != same) {
				fail_at(__LINE__, "cells %u (layout %u rep %u %s) and %u (layout %u rep "
					"%u %s): seeds %s", a->seq, a->layout, a->rep, a->path,
					b->seq, b->layout, b->rep, b->path,
					same ? "differ" : "are equal");
				ok = 0;
			}
			if (same && a->layout != b->layout && old[i] == old[j]) {
				fail_at(__LINE__, "cells %u and %u: scheme 1 ignores the layout", a->seq,
					b->seq);
				ok = 0;
			}
		}
	free(common);
	free(old);
	return ok;
}

static void test_cell_seeds(void)
{
	size_t checked = 0;
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		if (shapes[si].nlayouts < 2)
			continue;
		for (size_t oi = 0; oi < NORDERS; oi++) {
			struct plan *p = shape_plan(&shapes[si], all_orders[oi]);
			struct schedule s;
			set_case("%s, order %s", shapes[si].name, plan_order_name(all_orders[oi]));
			CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 42, &s), 0);
			CU_ASSERT(check_seeds(p, &s));
			checked += s.n;
			plan_schedule_free(&s);
			plan_del(p);
		}
	}
	CU_ASSERT(checked > 0);
	/* Both derivations pinned: a resume of a recorded run must draw as it
	 * did, so neither may change. */
	struct cell c = { .rep = 2, .path = (char *)"3.cycle2.1" };
	CU_ASSERT_EQUAL(plan_schedule_cell_seed(42, SEED_COMMON, "L1", &c),
			plan_schedule_cell_seed(42, SEED_COMMON, "L2", &c));
	CU_ASSERT_EQUAL(plan_schedule_cell_seed(42, SEED_COMMON, "L1", &c), SEED_COMMON_PIN);
	CU_ASSERT_EQUAL(plan_schedule_cell_seed(42, SEED_LAYOUT, "L1", &c), SEED_LAYOUT_PIN);
}

void register_schedule_tests(void)
{
	CU_pSuite s = test_suite("schedule");
	test_add(s, "Williams design is balanced for n = 2..12", test_williams_balanced);
	test_add(s, "Williams rows: construction, mirror, wrap", test_williams_rows);
	test_add(s, "properties of every order over plan shapes", test_properties_all_orders);
	test_add(s, "sequential keeps the interleaved phase numbers", test_sequential_phase_numbers);
	test_add(s, "random is reproducible from the seed", test_random_reproducible);
	test_add(s, "random differs across seeds and phases", test_random_differs);
	test_add(s, "random streams are independent; others ignore the seed",
		 test_random_streams_independent);
	test_add(s, "paths, cycle numbers, sweep values, binding chains", test_nesting);
	test_add(s, "nested sweeps share their outer binding", test_binding_sharing);
	test_add(s, "cell and phase counts", test_counts);
	test_add(s, "invalid plans are rejected with -EINVAL", test_invalid);
	test_add(s, "a million cells", test_limits_accept);
	test_add(s, "cell seeds: every layout the same draws; the old scheme pinned",
		 test_cell_seeds);
}
