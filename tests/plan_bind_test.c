/*
 * The validation of module steps by binding (plan/plan_bind.c): each
 * parameter is bound once per value of its own variables and the modules'
 * cross-checks get the combinations put together from the bound fields.
 * What it reports must be exactly what binding every combination of the
 * enclosing sweeps' values in full reports (the runner binds each cell that
 * way): an oracle here does that with plan_params_bind and m->check, and the
 * two sets of messages are compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "test.h"

void register_plan_bind_tests(void);

static struct plan *parse(const char *text, struct diag *d)
{
	struct plan_options o = { .platform = NULL };
	diag_init(d, "plan.yaml", NULL);
	return plan_parse_text("plan.yaml", text, strlen(text), &o, d);
}

/* Bind st for every combination of the values of sweeps[0..n) (innermost
 * first), the way a run binds its cells. */
static void oracle_step(const struct plan *p, const struct plan_step *st,
			const struct plan_step **sweeps, size_t n, struct diag *d)
{
	const struct rig_module *m = st->module;
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	struct binding *b = xcalloc(n + 1, sizeof(*b));
	for (;;) {
		for (size_t k = 0; k < n; k++)
			b[k] = (struct binding){ .var = sweeps[k]->var,
						 .value = sweeps[k]->values[idx[k]],
						 .mark = sweeps[k]->value_marks[idx[k]],
						 .outer = k + 1 < n ? &b[k + 1] : p->vars };
		/* A diag of its own: d drops a message it has already, and the
		 * count of errors must be this binding's. */
		struct diag one;
		diag_init(&one, d->file, NULL);
		void *args = xcalloc(1, m->args_size ? m->args_size : 1);
		if (plan_params_bind(m, st->params, n ? b : p->vars, args, &one, st->mark) == 0 && m->check)
			m->check(args, &one, st->mark);
		plan_params_free(m, args);
		free(args);
		for (size_t i = 0; i < one.n; i++)
			diag_error(d, one.items[i].mark, "%s", one.items[i].msg);
		diag_release(&one);
		size_t k = 0;
		while (k < n && ++idx[k] == sweeps[k]->nvalues)
			idx[k++] = 0;
		if (k == n)
			break;
	}
	free(b);
	free(idx);
}

static void oracle(const struct plan *p, const struct plan_step *steps, size_t nsteps,
		   const struct plan_step **sweeps, size_t n, struct diag *d)
{
	for (size_t i = 0; i < nsteps; i++) {
		const struct plan_step *st = &steps[i];
		if (st->kind == STEP_MODULE) {
			oracle_step(p, st, sweeps, n, d);
		} else if (st->kind == STEP_SWEEP && st->var) {
			const struct plan_step **inner = xcalloc(n + 2, sizeof(*inner));
			inner[0] = st;
			for (size_t k = 0; k < n; k++)
				inner[k + 1] = sweeps[k];
			oracle(p, st->steps, st->nsteps, inner, n + 1, d);
			free(inner);
		} else {
			oracle(p, st->steps, st->nsteps, sweeps, n, d);
		}
	}
}

static int has_item(const struct diag *d, const struct diag_item *it)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].level == it->level && d->items[i].mark.line == it->mark.line &&
		    d->items[i].mark.col == it->mark.col && !strcmp(d->items[i].msg, it->msg))
			return 1;
	return 0;
}

/* The plan's messages are the oracle's, and there are `want` of them. */
static void check_against_oracle(const char *name, const char *text, size_t want)
{
	struct diag d, o;
	struct plan *p = parse(text, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	diag_init(&o, "plan.yaml", NULL);
	oracle(p, p->steps, p->nsteps, NULL, 0, &o);
	size_t missing = 0, extra = 0;
	for (size_t i = 0; i < o.n; i++)
		if (!has_item(&d, &o.items[i])) {
			printf("\n%s: not reported: %d:%d %s", name, o.items[i].mark.line,
			       o.items[i].mark.col, o.items[i].msg);
			missing++;
		}
	for (size_t i = 0; i < d.n; i++)
		if (!has_item(&o, &d.items[i])) {
			printf("\n%s: reported, not by the oracle: %d:%d %s", name,
			       d.items[i].mark.line, d.items[i].mark.col, d.items[i].msg);
			extra++;
		}
	CU_ASSERT_EQUAL(missing, 0);
	CU_ASSERT_EQUAL(extra, 0);
	if (d.n != want)
		printf("\n%s: %zu messages, want %zu", name, d.n, want);
	CU_ASSERT_EQUAL(d.n, want);
	diag_release(&o);
	diag_release(&d);
	plan_free(p);
}

#define HDR "rig: 1\nname: t\ntarget:\n  dirs: [/tmp/a]\nsteps:\n  - write: { files: 2, sizes: 1M }\n"

/* Cross-checks of pairs (span against block, qd and threads), scalars of
 * one variable each, and a value bad for one parameter and not another. */
static void test_pairs(void)
{
	check_against_oracle("seqread pairs", HDR
		"  - sweep:\n"
		"      a: [4K, 8K, 16K, 1M, 3K, bad]\n"
		"      steps:\n"
		"        - sweep:\n"
		"            b: [4K, 12K, 64K, 1M, 8M]\n"
		"            steps:\n"
		"              - cycle:\n"
		"                  times: 2\n"
		"                  steps:\n"
		"                    - sweep:\n"
		"                        q: [1, 2, 64, 0]\n"
		"                        steps:\n"
		"                          - seqread: { block: $a, span: $b, qd: $q, threads: 2 }\n"
		"                          - randread: { block: $a, span: $b, time: 1s }\n"
		"                          - seqwrite: { block: $b, span: $a, qd: 4 }\n",
		44);
}

/* Lists naming several variables: each item is bound with the others'
 * values (an enum list's repeats and order, a size list). */
static void test_lists(void)
{
	check_against_oracle("lists", HDR
		"  - sweep:\n"
		"      x: [create, stat, rename, unlink, bogus]\n"
		"      steps:\n"
		"        - sweep:\n"
		"            y: [create, stat, unlink]\n"
		"            steps:\n"
		"              - meta: { files: 10, ops: [$x, $y] }\n"
		"              - meta: { files: 10, ops: [$y, $x, stat] }\n"
		"              - write: { files: 1, sizes: [$x, 1M] }\n",
		22);
	check_against_oracle("tree", HDR
		"  - sweep:\n"
		"      d: [0, 1, 2, 3, 5]\n"
		"      steps:\n"
		"        - sweep:\n"
		"            n: [0, 1, 2, 4]\n"
		"            steps:\n"
		"              - sweep:\n"
		"                  s: [1K, 3K..9K, 0]\n"
		"                  steps:\n"
		"                    - tree: { files: 100, dirs: $n, depth: $d, sizes: $s }\n"
		"                    - tree: { files: $n, dirs: $n, depth: $d, sizes: [$s, 4K] }\n",
		24);
}

/* Modules that say which parameters their check reads (check_reads):
 * when the other parameters bind for every value, each combination of the
 * read ones is checked once; when one of them fails for some value, every
 * combination. Either way the messages are those of every combination. */
static void test_check_reads(void)
{
	const char *steps =
		"  - sweep:\n"
		"      a: [4K, 8K, 1M]\n"
		"      steps:\n"
		"        - sweep:\n"
		"            b: [4K, 12K, 64K]\n"
		"            steps:\n"
		"              - sweep:\n"
		"                  q: [1, 2, 4, 8]\n"
		"                  steps:\n"
		"                    - sweep:\n"
		"                        t: [1, 2%s]\n"
		"                        steps:\n"
		"                          - randread: { block: $a, span: $b, qd: $q, passes: $t, time: 1s }\n"
		"                          - seqread: { block: $a, span: 64K, qd: $q, threads: $t }\n"
		"                          - randwrite: { block: 4K, span: $b, qd: $q, time: 1s }\n"
		"                          - tree: { files: $q, dirs: $t, depth: $t }\n";
	struct strbuf sb = STRBUF_INIT;
	sb_adds(&sb, HDR);
	sb_addf(&sb, steps, "");
	/* randread: 8K, 1M over 4K; 1M over 12K and 64K. seqread: 1M over 64K;
	 * 8K blocks: 8 in 64K, fewer than 2 x 8 in flight. */
	check_against_oracle("check_reads, all bound", sb.buf, 6);
	sb_reset(&sb);
	sb_adds(&sb, HDR);
	sb_addf(&sb, steps, ", 0");
	/* t = 0: below the minimum of passes and of threads (randread and
	 * seqread then check every combination; tree takes 0 and stays
	 * narrow), besides the six. */
	check_against_oracle("check_reads, one value bad", sb.buf, 8);
	sb_release(&sb);
}

/* The names a module's check reads are its parameters. */
static void test_check_reads_names(void)
{
	for (size_t i = 0; mod_all[i]; i++) {
		const struct rig_module *m = mod_all[i];
		for (const char *const *r = m->check_reads; r && *r; r++) {
			int found = mod_param(m, *r) != NULL;
			if (!found)
				printf("\n%s: check_reads names '%s', not a parameter", m->name, *r);
			CU_ASSERT(found);
		}
		CU_ASSERT(!m->check_reads || m->check);
	}
}

/* A value as written (not `$name`) does not use a sweep: a sweep whose
 * variable no step names gets its warning, and a sweep without a valid
 * name (an error already) is not looked at. The second plan crashed
 * before (tests/fixtures/fuzz/plan/sweep-invalid-name-literal.yaml). */
static void test_values_as_written(void)
{
	struct diag d;
	struct plan *p = parse(HDR
		"  - sweep:\n"
		"      x: [1, 2]\n"
		"      steps:\n"
		"        - null: { value: 5 }\n", &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL_FATAL(d.n, 1);
	CU_ASSERT_EQUAL(d.items[0].level, DIAG_WARNING);
	CU_ASSERT_EQUAL(d.items[0].mark.line, 8);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.items[0].msg, "sweep variable 'x' is not used by any step"));
	diag_release(&d);
	plan_free(p);
	p = parse(HDR
		"  - sweep:\n"
		"      Bad: [1, 2]\n"
		"      steps:\n"
		"        - null: { value: 5, files: $zz }\n", &d);
	CU_ASSERT_EQUAL(d.nerrors, 2);
	diag_release(&d);
	plan_free(p);
}

void register_plan_bind_tests(void)
{
	CU_pSuite s = test_suite("plan: binding sweep values");
	test_add(s, "cross-checks of every pair of values, as binding each combination", test_pairs);
	test_add(s, "lists naming several variables, as binding each combination", test_lists);
	test_add(s, "values as written use no sweep", test_values_as_written);
	test_add(s, "a check's own parameters' combinations, as binding each combination",
		 test_check_reads);
	test_add(s, "check_reads names parameters", test_check_reads_names);
}
