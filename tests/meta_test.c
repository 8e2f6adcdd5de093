/*
 * Tests of `meta` (modules/fill.c) and its storage-free random order
 * (modules/meta_order.c): the permutation is one (every index once,
 * reproducible, seed-dependent, not the identity); the module, bound from
 * plan text through plan_params_bind like the runner does, records a rate for
 * each operation asked and only those, and leaves the volume's folder as
 * it found it on success, cancel and error; `rig validate` refuses ops out
 * of order; `rig run` runs a meta step on a `dirs` target.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/meta_order.h"
#include "modules/module.h"
#include "rec_sink.h"
#include "test.h"

extern const struct rig_module mod_meta;

/* --- the order --- */

static void test_perm_bijection(void)
{
	static const uint64_t sizes[] = { 1, 2, 3, 4, 5, 10, 17, 1000, 4096, 4097, 100003 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t n = sizes[k];
		unsigned char *seen = xcalloc(n, 1);
		struct perm p, q;
		mod_meta_perm_init(&p, n, 42);
		mod_meta_perm_init(&q, n, 42);
		uint64_t fixed = 0, ok = 1;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t v = mod_meta_perm_at(&p, i);
			if (v >= n || seen[v] || v != mod_meta_perm_at(&q, i)) {
				ok = 0;
				break;
			}
			seen[v] = 1;
			fixed += v == i;
		}
		CU_ASSERT_TRUE(ok);
		if (n >= 1000)
			CU_ASSERT(fixed < 10); /* about 1 expected for a random permutation */
		free(seen);
	}
	/* Another seed, another order. */
	struct perm a, b;
	mod_meta_perm_init(&a, 1000, 1);
	mod_meta_perm_init(&b, 1000, 2);
	int same = 0;
	for (uint64_t i = 0; i < 1000; i++)
		same += mod_meta_perm_at(&a, i) == mod_meta_perm_at(&b, i);
	CU_ASSERT(same < 20);
}

static void test_perm_spread(void)
{
	/* Neighbours in the order are not neighbours in the directory: the mean
	 * distance between consecutive elements is near n/3 for a random order. */
	uint64_t n = 100000;
	struct perm p;
	mod_meta_perm_init(&p, n, 7);
	double sum = 0;
	uint64_t prev = mod_meta_perm_at(&p, 0);
	for (uint64_t i = 1; i < n; i++) {
		uint64_t v = mod_meta_perm_at(&p, i);
		sum += v > prev ? (double)(v - prev) : (double)(prev - v);
		prev = v;
	}
	double mean = sum / (double)(n - 1);
	CU_ASSERT(mean > n / 3.0 * 0.95 && mean < n / 3.0 * 1.05);
}

/* --- the module --- */

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* The module's environment, and meta's arguments bound as a plan's. */
struct env {
	struct rec_env r;
	void *args;
};

/* Bind `files` and `ops` (ops NULL: not given) as plan text. */
static void env_init(struct env *e, const char *files, const char *const *ops, size_t nops)
{
	memset(e, 0, sizeof(*e));
	rec_env_init(&e->r, NULL, 9, 0, 0);
	const struct rig_module *m = &mod_meta;
	size_t np = mod_nparams(m);
	struct pval *vals = xcalloc(np, sizeof(*vals));
	struct mark marks[8];
	memset(marks, 0, sizeof(marks));
	for (size_t i = 0; i < np; i++) {
		if (!strcmp(m->params[i].name, "files") && files) {
			vals[i].given = 1;
			vals[i].text = (char *)files;
		} else if (!strcmp(m->params[i].name, "ops") && ops) {
			vals[i].given = 1;
			vals[i].is_seq = 1;
			vals[i].items = (char **)ops;
			vals[i].nitems = nops;
			vals[i].item_marks = marks;
		}
	}
	e->args = xcalloc(1, m->args_size);
	struct diag d;
	diag_init(&d, "test", NULL);
	struct mark at = { 1, 1, 1 };
	CU_ASSERT_EQUAL(plan_params_bind(m, vals, NULL, e->args, &d, at), 0);
	diag_release(&d);
	free(vals);
}

static void env_release(struct env *e)
{
	plan_params_free(&mod_meta, e->args);
	free(e->args);
	rec_env_release(&e->r, NULL); /* meta keeps no state */
}

static void test_meta_all_ops(void)
{
	struct env e;
	env_init(&e, "3000", NULL, 0);
	CU_ASSERT_EQUAL_FATAL(mod_meta.run(&e.r.ctx, e.args), 0);
	CU_ASSERT_EQUAL(e.r.err.len, 0);
	const char *names[] = { "create_per_s", "stat_per_s", "rename_per_s", "unlink_per_s" };
	for (int i = 0; i < 4; i++) {
		double v = rec_get(&e.r.rec, names[i], "ops/s");
		CU_ASSERT(v > 0 && isfinite(v));
		printf("%s%s %.0f", i ? ", " : "\n  meta on the test folder, 3000 files: ", names[i], v);
	}
	printf("\n");
	CU_ASSERT_EQUAL(e.r.rec.notes.len, 0);
	/* The volume's folder is as it was: empty. */
	CU_ASSERT_EQUAL(entries(e.r.dir), 0);
	/* Again on the same volume (the folder was removed, so it can be made). */
	sb_reset(&e.r.rec.metrics);
	CU_ASSERT_EQUAL(mod_meta.run(&e.r.ctx, e.args), 0);
	CU_ASSERT(rec_get(&e.r.rec, "unlink_per_s", "ops/s") > 0);
	CU_ASSERT_EQUAL(entries(e.r.dir), 0);
	env_release(&e);
}

static void test_meta_subsets(void)
{
	static const struct {
		const char *ops[4];
		size_t n;
		const char *want; /* metrics recorded, in order */
		int untimed_create;
	} cases[] = {
		{ { "create" }, 1, "create_per_s", 0 },
		{ { "stat" }, 1, "stat_per_s", 1 },
		{ { "stat", "unlink" }, 2, "stat_per_s unlink_per_s", 1 },
		{ { "rename" }, 1, "rename_per_s", 1 },
		{ { "create", "rename" }, 2, "create_per_s rename_per_s", 0 },
		{ { "unlink" }, 1, "unlink_per_s", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env e;
		env_init(&e, "500", cases[i].ops, cases[i].n);
		CU_ASSERT_EQUAL(mod_meta.run(&e.r.ctx, e.args), 0);
		struct strbuf got = STRBUF_INIT;
		for (const char *p = e.r.rec.metrics.buf; *p;) {
			const char *eq = strchr(p, '=');
			sb_addf(&got, "%s%.*s", got.len ? " " : "", (int)(eq - p), p);
			p = strchr(p, '\n') + 1;
		}
		if (strcmp(got.buf, cases[i].want)) {
			fprintf(stderr, "\ncase %zu: metrics '%s', want '%s'\n", i, got.buf, cases[i].want);
			CU_FAIL("meta subset metrics");
		}
		CU_ASSERT_EQUAL(!!strstr(e.r.rec.notes.buf, "create: files created untimed"),
				cases[i].untimed_create);
		CU_ASSERT_EQUAL(entries(e.r.dir), 0);
		sb_release(&got);
		env_release(&e);
	}
}

static void test_meta_one_file(void)
{
	struct env e;
	env_init(&e, "1", NULL, 0);
	CU_ASSERT_EQUAL(mod_meta.run(&e.r.ctx, e.args), 0);
	CU_ASSERT(rec_get(&e.r.rec, "stat_per_s", "ops/s") > 0);
	CU_ASSERT_EQUAL(entries(e.r.dir), 0);
	env_release(&e);
}

static void test_meta_cancel_and_errors(void)
{
	struct env e;
	env_init(&e, "2000", NULL, 0);
	/* Cancelled: nothing recorded, nothing left. */
	e.r.cancel = 1;
	CU_ASSERT_EQUAL(mod_meta.run(&e.r.ctx, e.args), 0);
	CU_ASSERT_EQUAL(e.r.rec.metrics.len, 0);
	CU_ASSERT_EQUAL(entries(e.r.dir), 0);
	e.r.cancel = 0;
	/* Its folder is in the way: an error naming it, and the folder untouched. */
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/meta", e.r.dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(p.buf, 0777), 0);
	CU_ASSERT_EQUAL(mod_meta.run(&e.r.ctx, e.args), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.r.err.buf, "cannot create directory"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.r.err.buf, "/meta: File exists"));
	CU_ASSERT_EQUAL(entries(e.r.dir), 1);
	rmdir(p.buf);
	/* A volume folder that does not exist. */
	sb_reset(&e.r.err);
	sb_reset(&p);
	sb_addf(&p, "%s/gone", e.r.dir);
	e.r.ctx.dir = p.buf;
	CU_ASSERT_EQUAL(mod_meta.run(&e.r.ctx, e.args), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.r.err.buf, "/gone/meta: No such file or directory"));
	sb_release(&p);
	env_release(&e);
}

/* --- the binary --- */

static void test_validate_order(void)
{
	char *tmp = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, text = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", tmp);
	sb_addf(&text, "rig: 1\nname: meta-order\ntarget:\n  dirs: [\"%s/a\"]\nsteps:\n"
		       "  - meta: { files: 10, ops: [create, unlink, stat] }\n", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "validate", plan.buf, NULL };
	char *o = NULL;
	CU_ASSERT_NOT_EQUAL(test_run_rig(args, &o), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(o, "'ops' of step 'meta' lists stat after unlink"));
	free(o);
	/* In order, a subset is fine. */
	sb_reset(&text);
	sb_addf(&text, "rig: 1\nname: meta-order\ntarget:\n  dirs: [\"%s/a\"]\nsteps:\n"
		       "  - meta: { files: 10, ops: [stat, unlink] }\n", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	CU_ASSERT_EQUAL(test_run_rig(args, &o), 0);
	free(o);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&plan);
	sb_release(&text);
}

static void test_run_meta_plan(void)
{
	char *tmp = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, text = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", tmp);
	sb_addf(&out, "%s/out", tmp);
	sb_addf(&p, "%s/a", tmp);
	sb_addf(&text, "rig: 1\nname: meta-e2e\ntarget:\n  dirs: [\"%s\"]\nsteps:\n"
		       "  - meta: { files: 400 }\n  - meta: { files: 50, ops: [rename] }\n", p.buf);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "--seed", "1", "-o", out.buf, plan.buf, NULL };
	char *o = NULL;
	int rc = test_run_rig(args, &o);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\n%s\n", o);
	free(o);
	sb_reset(&p);
	sb_addf(&p, "%s/results.csv", out.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",1,meta,a,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",create_per_s,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",unlink_per_s,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",2,meta,a,"));
	int lines = 0;
	for (const char *c = csv; *c; c++)
		lines += *c == '\n';
	CU_ASSERT_EQUAL(lines, 1 + 4 + 1);
	free(csv);
	sb_reset(&p);
	sb_addf(&p, "%s/a", tmp);
	CU_ASSERT_EQUAL(entries(p.buf), 0);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&text);
	sb_release(&p);
}

void register_meta_tests(void)
{
	CU_pSuite s = test_suite_e2e("meta");
	test_add(s, "random order: a reproducible permutation", test_perm_bijection);
	test_add(s, "random order: consecutive elements spread out", test_perm_spread);
	test_add(s, "all ops: four rates, folder left empty", test_meta_all_ops);
	test_add(s, "subsets of ops: only those recorded; untimed create", test_meta_subsets);
	test_add(s, "one file", test_meta_one_file);
	test_add(s, "cancel and errors leave the folder as found", test_meta_cancel_and_errors);
	test_add(s, "rig validate: ops out of order", test_validate_order);
	test_add(s, "rig run: meta on a dirs target", test_run_meta_plan);
}
