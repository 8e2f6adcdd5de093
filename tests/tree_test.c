/*
 * Tests of modules/tree.c and tree_age.c (tree, enumerate, churn): the
 * tree's shape and its inverse-square sizes as the tree draws them
 * (quantiles and means against the analytic ones), reproducibility (the
 * same seed gives the same listing and bytes in two folders, before and
 * after churn; with 1 thread and with several), enumerate's counts
 * through churn cycles and its refusal
 * of a tree that is not what was built, churn's atomicity under a
 * concurrent reader, the memory bound of a million-file plan, cancellation,
 * and what enumerate's `cache` does. `rig run` of them is tree_run_test.c.
 * Trees are small (a few thousand files) to keep the suite fast.
 */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/prng.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "modules/tree.h"
#include "plan/schedule.h"
#include "platform/payload.h"
#include "platform/platform.h"
#include "rec_sink.h"
#include "test.h"

/* --- a recording sink and a module environment --- */

static void env_init(struct rec_env *e, const char *dir, uint64_t seed)
{
	rec_env_init(e, dir, seed, 1, 0);
	/* as the runner's flush before a read step, as root */
	e->ctx.cache_method = "drop_caches";
}

static void env_reset(struct rec_env *e)
{
	rec_env_reset(e);
}

static void env_release(struct rec_env *e)
{
	rec_env_release(e, &mod_tree);
}

static int env_run(struct rec_env *e, const struct rig_module *m, const void *args)
{
	return rec_env_run(e, m, args);
}

/* enumerate's defaults (`enumerate: {}`). */
static const struct enumerate_args inode_walk = { .order = ENUMERATE_INODE };
static const struct enumerate_args fts_walk = { .order = ENUMERATE_FTS };

/* Run module m with args on e; prints the error when rc != 0. */
static struct tree_args targs(uint64_t files, uint64_t dirs, uint64_t depth, enum dist_kind kind,
			      uint64_t lo, uint64_t hi)
{
	struct tree_args a;
	memset(&a, 0, sizeof(a));
	a.files = files;
	a.dirs = dirs;
	a.depth = depth;
	a.sizes.kind = kind;
	a.sizes.lo = lo;
	a.sizes.hi = hi;
	return a;
}

/* --- shape --- */

static void check_shape(uint64_t files, uint64_t dirs, unsigned depth)
{
	struct tree_args a = targs(files, dirs, depth, DIST_FIXED, 1, 1);
	const char *why = NULL;
	struct tree_state *t = mod_tree_state_new(&a, 9, "/nonexistent/tree", &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	uint64_t sum = 0;
	CU_ASSERT_EQUAL(t->level[0], 1);
	for (unsigned k = 1; k <= depth; k++) {
		CU_ASSERT(t->level[k] >= t->level[k - 1]); /* every inner directory has children */
		sum += t->level[k];
	}
	CU_ASSERT_EQUAL(sum, dirs);
	/* Files: contiguous runs over the leaves, lengths differing by at most 1. */
	uint64_t leaves = t->level[depth], mn = UINT64_MAX, mx = 0;
	CU_ASSERT_EQUAL(mod_tree_leaf_first(t, 0), 0);
	CU_ASSERT_EQUAL(mod_tree_leaf_first(t, leaves), files);
	for (uint64_t l = 0; l < leaves; l++) {
		uint64_t f0 = mod_tree_leaf_first(t, l), f1 = mod_tree_leaf_first(t, l + 1);
		mn = f1 - f0 < mn ? f1 - f0 : mn;
		mx = f1 - f0 > mx ? f1 - f0 : mx;
		if (f1 > f0) {
			CU_ASSERT_EQUAL(mod_tree_leaf_of(t, f0), l);
			CU_ASSERT_EQUAL(mod_tree_leaf_of(t, f1 - 1), l);
		}
	}
	CU_ASSERT(mx - mn <= 1);
	mod_tree_state_free(t);
}

static void test_shape(void)
{
	check_shape(1000, 0, 0);
	check_shape(7, 3, 3);      /* a chain */
	check_shape(10, 5, 3);
	check_shape(1000, 100, 2);
	check_shape(5, 100, 2);    /* fewer files than leaves */
	check_shape(100000, 11100, 3);
	for (uint64_t d = 4; d < 300; d += 7)
		check_shape(d * 3, d, 4);

	/* The enumeration article's tree (source article 001): an even fanout,
	 * about 47-48 at every level. */
	struct tree_args a = targs(1000000, 111000, 3, DIST_FIXED, 1, 1);
	const char *why = NULL;
	struct tree_state *t = mod_tree_state_new(&a, 1, "/nonexistent/tree", &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	double f1 = (double)t->level[1], f2 = (double)t->level[2] / (double)t->level[1],
	       f3 = (double)t->level[3] / (double)t->level[2];
	CU_ASSERT(f1 >= 46 && f1 <= 50 && f2 >= 46 && f2 <= 50 && f3 >= 46 && f3 <= 50);
	mod_tree_state_free(t);

	/* What the validator refuses, mod_tree_state_new refuses too. */
	a = targs(10, 2, 3, DIST_FIXED, 1, 1);
	CU_ASSERT_PTR_NULL(mod_tree_state_new(&a, 1, "/x", &why));
	a = targs(10, 2, 0, DIST_FIXED, 1, 1);
	CU_ASSERT_PTR_NULL(mod_tree_state_new(&a, 1, "/x", &why));
}

static void test_names(void)
{
	struct tree_args a = targs(3000, 120, 3, DIST_FIXED, 1, 1);
	const char *why = NULL;
	struct tree_state *t = mod_tree_state_new(&a, 5, "/nonexistent/tree", &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	char buf[TREE_PATH_MAX], name[TREE_NAME_MAX];
	size_t dl = 0, minlen = 99, maxlen = 0;
	for (uint64_t i = 0; i < t->files; i++) {
		size_t len = mod_tree_file_path(t, i, buf, &dl);
		CU_ASSERT_EQUAL(strlen(buf), len);
		CU_ASSERT(dl > 0 && buf[dl - 1] == '/' && buf[dl] == 'f');
		/* Three directories, then the file. */
		int slashes = 0;
		for (size_t c = 0; c < len; c++)
			slashes += buf[c] == '/';
		CU_ASSERT_EQUAL(slashes, 3);
		size_t nl = mod_tree_name(t, 0, i, name);
		CU_ASSERT_STRING_EQUAL(buf + dl, name);
		minlen = nl < minlen ? nl : minlen;
		maxlen = nl > maxlen ? nl : maxlen;
		/* The directory part is the leaf's path. */
		char dbuf[TREE_PATH_MAX];
		size_t dlen = mod_tree_dir_path(t, 3, mod_tree_leaf_of(t, i), dbuf);
		CU_ASSERT(dlen + 1 == dl && !strncmp(dbuf, buf, dlen));
	}
	CU_ASSERT(maxlen > minlen + 4); /* names of varied length */
	/* Another seed names things differently. */
	struct tree_state *u = mod_tree_state_new(&a, 6, "/nonexistent/tree", &why);
	char n2[TREE_NAME_MAX];
	mod_tree_name(t, 0, 17, name);
	mod_tree_name(u, 0, 17, n2);
	CU_ASSERT_STRING_NOT_EQUAL(name, n2);
	mod_tree_state_free(u);
	mod_tree_state_free(t);
}

/* --- sizes as the tree draws them --- */

static void test_inverse_square(void)
{
	enum { N = 200000 };
	const double lo = 1024.0, hi = 20.0 * 1024 * 1024 * 1024;
	struct tree_args a = targs(N, 0, 0, DIST_INVSQUARE, (uint64_t)lo, (uint64_t)hi);
	const char *why = NULL;
	struct tree_state *t = mod_tree_state_new(&a, 2024, "/nonexistent/tree", &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	/* The analytic mean of 1/x^2 on 1K..20G: log(hi/lo) / (1/lo - 1/hi), near 17 KB. */
	double mean = units_dist_mean(&t->sizes);
	CU_ASSERT(mean > 16500 && mean < 17500);

	/* Quantiles: q_p = 1 / (1/lo - p (1/lo - 1/hi)); the count of draws
	 * at or below it is binomial(N, p): within 5 standard deviations. */
	const double ps[] = { 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999 };
	enum { NP = sizeof(ps) / sizeof(ps[0]) };
	size_t below[NP] = { 0 }, below1[NP] = { 0 }, both_low = 0;
	double inv = 0, inv2 = 0;
	uint64_t mn = UINT64_MAX, mx = 0, sum = 0;
	double q[NP];
	for (int k = 0; k < NP; k++)
		q[k] = 1.0 / (1.0 / lo - ps[k] * (1.0 / lo - 1.0 / hi));
	for (uint64_t i = 0; i < N; i++) {
		uint64_t s = mod_tree_file_size(t, i, 0), s1 = mod_tree_file_size(t, i, 1);
		sum += s;
		mn = s < mn ? s : mn;
		mx = s > mx ? s : mx;
		for (int k = 0; k < NP; k++) {
			below[k] += (double)s <= q[k];
			below1[k] += (double)s1 <= q[k];
		}
		both_low += (double)s <= q[2] && (double)s1 <= q[2];
		inv += 1.0 / (double)s;
		inv2 += 1.0 / ((double)s * (double)s);
	}
	CU_ASSERT_EQUAL(sum, t->bytes);
	CU_ASSERT(mn >= (uint64_t)lo && mx <= (uint64_t)hi);
	for (int k = 0; k < NP; k++) {
		double sd = sqrt(N * ps[k] * (1 - ps[k]));
		/* rounding to whole bytes moves a draw across q by < 1 byte: negligible */
		CU_ASSERT(fabs((double)below[k] - N * ps[k]) < 5 * sd + 2);
		CU_ASSERT(fabs((double)below1[k] - N * ps[k]) < 5 * sd + 2); /* generation 1 too */
	}
	/* Generations are independent draws: both below the median a quarter of the time. */
	CU_ASSERT(fabs((double)both_low - N * 0.25) < 5 * sqrt(N * 0.25 * 0.75));
	/* The sample mean of so heavy a tail says little (its standard error is
	 * 60% of the mean at this N); 1/x has a finite variance:
	 * E[1/x] = c (1/lo^2 - 1/hi^2) / 2, E[1/x^2] = c (1/lo^3 - 1/hi^3) / 3,
	 * c = 1 / (1/lo - 1/hi). */
	double c = 1.0 / (1.0 / lo - 1.0 / hi);
	double e1 = c * (1.0 / (lo * lo) - 1.0 / (hi * hi)) / 2;
	double e2 = c * (1.0 / (lo * lo * lo) - 1.0 / (hi * hi * hi)) / 3;
	double se = sqrt((e2 - e1 * e1) / N);
	CU_ASSERT(fabs(inv / N - e1) < 5 * se);
	(void)inv2;
	mod_tree_state_free(t);

	/* A tail short enough for the sample mean: 1K..1M. */
	const double lo2 = 1024.0, hi2 = 1024.0 * 1024;
	a = targs(N, 0, 0, DIST_INVSQUARE, (uint64_t)lo2, (uint64_t)hi2);
	t = mod_tree_state_new(&a, 77, "/nonexistent/tree", &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	double m = units_dist_mean(&t->sizes);
	double c2 = 1.0 / (1.0 / lo2 - 1.0 / hi2);
	double var = c2 * (hi2 - lo2) - m * m; /* E[x^2] = c (hi - lo) */
	double smean = (double)t->bytes / N;
	CU_ASSERT(fabs(smean - m) < 5 * sqrt(var / N));
	mod_tree_state_free(t);
}

/* --- trees on disk --- */

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sorted listing of the tree below root: "path d" or "path size hash". */
static char *listing(const char *root)
{
	char *paths[] = { (char *)root, NULL };
	FTS *f = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char **lines = NULL;
	size_t n = 0, alloc = 0, rl = strlen(root);
	FTSENT *e;
	struct strbuf line = STRBUF_INIT;
	while ((e = fts_read(f))) {
		if (e->fts_info == FTS_DP)
			continue;
		sb_reset(&line);
		sb_adds(&line, e->fts_path + rl);
		if (e->fts_info == FTS_D) {
			sb_adds(&line, " d");
		} else {
			size_t len = 0;
			char *data = test_read_file(e->fts_accpath, &len);
			CU_ASSERT_PTR_NOT_NULL(data);
			sb_addf(&line, " %zu %016llx", len,
				(unsigned long long)fnv1a((const unsigned char *)data, len));
			free(data);
		}
		XGROW(lines, n + 1, alloc);
		lines[n++] = xstrdup(line.buf);
	}
	fts_close(f);
	qsort(lines, n, sizeof(char *), cmp_str);
	sb_reset(&line);
	for (size_t i = 0; i < n; i++) {
		sb_addf(&line, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	return sb_detach(&line);
}

/* Every file of t on disk has its current generation's size and payload. */
static void check_files(const struct tree_state *t)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, t->payload_seed, 4096), 0);
	char rel[TREE_PATH_MAX];
	struct strbuf path = STRBUF_INIT;
	uint64_t total = 0;
	size_t bad = 0;
	for (uint64_t i = 0; i < t->files; i++) {
		mod_tree_file_path(t, i, rel, NULL);
		sb_reset(&path);
		sb_addf(&path, "%s/%s", t->root, rel);
		size_t len = 0;
		char *data = test_read_file(path.buf, &len);
		uint64_t want = mod_tree_file_size(t, i, t->gen[i]);
		if (!data || len != want ||
		    plat_payload_check(&p, mod_tree_file_stream(i, t->gen[i]), 0, data, len) != 0) {
			if (bad++ < 3)
				fprintf(stderr, "\n%s: %zu bytes, want %llu\n", path.buf, len,
					(unsigned long long)want);
		}
		total += len;
		free(data);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(total, t->bytes);
	sb_release(&path);
	plat_payload_release(&p);
}

/* Common random numbers: the cells of two layouts at one repetition
 * (plan_schedule_cell_seed) build trees of the same names, sizes and bytes,
 * and churn them alike; the seeds of runs before (SEED_LAYOUT) did not. */
static void test_layouts_same_tree(void)
{
	char *tmp = test_tmpdir();
	const char *lay[3] = { "hfs-first", "apfs-first", "hfs-first" };
	const unsigned scheme[3] = { SEED_COMMON, SEED_COMMON, SEED_LAYOUT };
	struct cell cl = { .rep = 2, .path = (char *)"1" };
	struct tree_args a = targs(300, 12, 2, DIST_INVSQUARE, 1024, 64 << 10);
	struct churn_args ch = { .fraction = 20 };
	struct rec_env e[3];
	char *ls[3];
	for (int i = 0; i < 3; i++) {
		struct strbuf d = STRBUF_INIT;
		sb_addf(&d, "%s/%d", tmp, i);
		mkdir(d.buf, 0777);
		env_init(&e[i], d.buf, plan_schedule_cell_seed(7, scheme[i], lay[i], &cl));
		CU_ASSERT_EQUAL_FATAL(env_run(&e[i], &mod_tree, &a), 0);
		e[i].ctx.cycle = 1;
		CU_ASSERT_EQUAL(env_run(&e[i], &mod_churn, &ch), 0);
		ls[i] = listing(((struct tree_state *)e[i].state)->root);
		sb_release(&d);
	}
	CU_ASSERT_STRING_EQUAL(ls[0], ls[1]);
	CU_ASSERT_STRING_NOT_EQUAL(ls[0], ls[2]);
	for (int i = 0; i < 3; i++) {
		free(ls[i]);
		env_release(&e[i]);
	}
	test_rmtree(tmp);
	free(tmp);
}

static void test_reproducible(void)
{
	char *tmp = test_tmpdir();
	struct strbuf da = STRBUF_INIT, db = STRBUF_INIT, dc = STRBUF_INIT;
	sb_addf(&da, "%s/a", tmp);
	sb_addf(&db, "%s/b", tmp);
	sb_addf(&dc, "%s/c", tmp);
	mkdir(da.buf, 0777);
	mkdir(db.buf, 0777);
	mkdir(dc.buf, 0777);
	struct tree_args a = targs(1500, 40, 2, DIST_INVSQUARE, 1024, 256 << 10);
	struct rec_env ea, eb, ec;
	env_init(&ea, da.buf, 4242);
	env_init(&eb, db.buf, 4242);
	env_init(&ec, dc.buf, 4243);
	CU_ASSERT_EQUAL_FATAL(env_run(&ea, &mod_tree, &a), 0);
	CU_ASSERT_EQUAL_FATAL(env_run(&eb, &mod_tree, &a), 0);
	CU_ASSERT_EQUAL_FATAL(env_run(&ec, &mod_tree, &a), 0);
	const struct tree_state *ta = ea.state;
	CU_ASSERT_EQUAL(rec_get(&ea.rec, "files", "files"), 1500);
	CU_ASSERT_EQUAL(rec_get(&ea.rec, "bytes", "B"), (double)ta->bytes);
	CU_ASSERT(rec_get(&ea.rec, "seconds", "s") > 0);
	CU_ASSERT(rec_get(&ea.rec, "files_per_s", "files/s") > 0);
	CU_ASSERT(rec_get(&ea.rec, "rate", "MB/s") > 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(ea.rec.notes.buf, "shape: directories per level"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ea.rec.notes.buf, "direct: not used by tree"));

	char *la = listing(ta->root), *lb = listing(((struct tree_state *)eb.state)->root),
	     *lc = listing(((struct tree_state *)ec.state)->root);
	CU_ASSERT_STRING_EQUAL(la, lb);     /* same seed: same names, sizes, bytes */
	CU_ASSERT_STRING_NOT_EQUAL(la, lc); /* another seed: another tree */
	check_files(ta);

	/* The same churn on both: still identical. */
	struct churn_args c = { .fraction = 20 };
	ea.ctx.cycle = eb.ctx.cycle = 1;
	CU_ASSERT_EQUAL(env_run(&ea, &mod_churn, &c), 0);
	CU_ASSERT_EQUAL(env_run(&eb, &mod_churn, &c), 0);
	free(la);
	free(lb);
	la = listing(ta->root);
	lb = listing(((struct tree_state *)eb.state)->root);
	CU_ASSERT_STRING_EQUAL(la, lb);
	check_files(ta);

	/* A new tree step replaces the tree: the same listing as a fresh one. */
	CU_ASSERT_EQUAL(env_run(&ea, &mod_tree, &a), 0);
	free(lb);
	lb = listing(((struct tree_state *)ea.state)->root);
	char *fresh = listing(((struct tree_state *)eb.state)->root);
	CU_ASSERT_STRING_NOT_EQUAL(lb, fresh); /* b was churned, a is new */
	env_run(&eb, &mod_tree, &a);
	free(fresh);
	fresh = listing(((struct tree_state *)eb.state)->root);
	CU_ASSERT_STRING_EQUAL(lb, fresh);

	free(la);
	free(lb);
	free(lc);
	free(fresh);
	env_release(&ea);
	env_release(&eb);
	env_release(&ec);
	sb_release(&da);
	sb_release(&db);
	sb_release(&dc);
	test_rmtree(tmp);
	free(tmp);
}

/* Trees built with 1 thread and with several are the same: names, sizes,
 * bytes and directories (a sorted listing with sizes and content hashes),
 * whatever shape: files in the root (depth 0), one level, three levels
 * with files larger than one write (TREE_BLOCK), more leaves than files
 * (empty leaves), more threads than units of work. A layout that depended
 * on which thread took which leaves, or when, would differ here. */
static void test_threads_same_tree(void)
{
	static const struct {
		uint64_t files, dirs, depth, lo, hi;
	} shapes[] = {
		{ 700, 0, 0, 512, 64 << 10 },
		{ 900, 25, 1, 1024, 32 << 10 },
		{ 2500, 120, 3, 1024, 3 << 20 },
		{ 60, 300, 2, 100, 4096 },
	};
	static const uint64_t counts[] = { 5, 16 };
	char *tmp = test_tmpdir();
	struct strbuf dir = STRBUF_INIT;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct tree_args a = targs(shapes[s].files, shapes[s].dirs, shapes[s].depth,
					   DIST_INVSQUARE, shapes[s].lo, shapes[s].hi);
		sb_reset(&dir);
		sb_addf(&dir, "%s/s%zu-1", tmp, s);
		mkdir(dir.buf, 0777);
		struct rec_env one;
		env_init(&one, dir.buf, 77 + s);
		a.threads = 1;
		CU_ASSERT_EQUAL_FATAL(env_run(&one, &mod_tree, &a), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(one.rec.notes.buf, "threads: 1 "));
		const struct tree_state *t1 = one.state;
		char *l1 = listing(t1->root);
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			sb_reset(&dir);
			sb_addf(&dir, "%s/s%zu-%llu", tmp, s, (unsigned long long)counts[c]);
			mkdir(dir.buf, 0777);
			struct rec_env many;
			env_init(&many, dir.buf, 77 + s);
			a.threads = counts[c];
			CU_ASSERT_EQUAL_FATAL(env_run(&many, &mod_tree, &a), 0);
			const struct tree_state *tn = many.state;
			char want[32];
			snprintf(want, sizeof(want), "threads: %llu ", (unsigned long long)counts[c]);
			CU_ASSERT_PTR_NOT_NULL(strstr(many.rec.notes.buf, want));
			CU_ASSERT_EQUAL(rec_get(&many.rec, "files", "files"), (double)shapes[s].files);
			CU_ASSERT_EQUAL(rec_get(&many.rec, "bytes", "B"), (double)t1->bytes);
			char *ln = listing(tn->root);
			CU_ASSERT_STRING_EQUAL(ln, l1);
			if (strcmp(ln, l1) != 0)
				fprintf(stderr, "\nshape %zu, %llu threads: the listing differs\n", s,
					(unsigned long long)counts[c]);
			check_files(tn); /* and every file is the plan's, not only alike */
			free(ln);
			env_release(&many);
		}
		free(l1);
		env_release(&one);
	}
	sb_release(&dir);
	test_rmtree(tmp);
	free(tmp);
}

static int count_named(const char *root, const char *name)
{
	char *paths[] = { (char *)root, NULL };
	FTS *f = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR | FTS_NOSTAT, NULL);
	int n = 0;
	FTSENT *e;
	while (f && (e = fts_read(f)))
		n += !strcmp(e->fts_name, name);
	if (f)
		fts_close(f);
	return n;
}

static void test_enumerate_through_churn(void)
{
	char *tmp = test_tmpdir();
	struct rec_env e;
	env_init(&e, tmp, 99);
	struct tree_args a = targs(2000, 60, 3, DIST_INVSQUARE, 1024, 1 << 20);
	CU_ASSERT_EQUAL_FATAL(env_run(&e, &mod_tree, &a), 0);
	struct tree_state *t = e.state;
	CU_ASSERT_EQUAL_FATAL(env_run(&e, &mod_enumerate, &inode_walk), 0);
	CU_ASSERT_EQUAL(rec_get(&e.rec, "entries", "entries"), 2000 + 60 + 1);
	CU_ASSERT(rec_get(&e.rec, "seconds", "s") > 0);
	CU_ASSERT(rec_get(&e.rec, "entries_per_s", "entries/s") > 0);

	struct churn_args c = { .fraction = 10 };
	uint64_t bytes0 = t->bytes, replaced_twice = 0;
	for (uint32_t cycle = 1; cycle <= 3; cycle++) {
		e.ctx.cycle = cycle;
		CU_ASSERT_EQUAL(env_run(&e, &mod_churn, &c), 0);
		CU_ASSERT_EQUAL(rec_get(&e.rec, "files", "files"), 200);
		CU_ASSERT(rec_get(&e.rec, "files_per_s", "files/s") > 0);
		CU_ASSERT(rec_get(&e.rec, "seconds", "s") > 0);
		CU_ASSERT_EQUAL(env_run(&e, &mod_enumerate, &inode_walk), 0);
		CU_ASSERT_EQUAL(rec_get(&e.rec, "entries", "entries"), 2000 + 60 + 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "order: inode: "));
		CU_ASSERT_EQUAL(env_run(&e, &mod_enumerate, &fts_walk), 0);
		CU_ASSERT_EQUAL(rec_get(&e.rec, "entries", "entries"), 2000 + 60 + 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "order: fts: fts(3) with FTS_PHYSICAL"));
	}
	uint64_t gens = 0;
	for (uint64_t i = 0; i < t->files; i++) {
		gens += t->gen[i];
		replaced_twice += t->gen[i] >= 2;
	}
	CU_ASSERT_EQUAL(gens, 600);
	CU_ASSERT_EQUAL(t->replaced, 600);
	/* Independent selections: about 2000 x 3 x 0.1^2 x 0.9 = 54 files twice. */
	CU_ASSERT(replaced_twice > 20 && replaced_twice < 100);
	CU_ASSERT_NOT_EQUAL(t->bytes, bytes0);
	check_files(t);
	CU_ASSERT_EQUAL(count_named(t->root, ".rig-tmp"), 0);

	/* A tiny fraction still replaces one file, with a note. */
	struct churn_args tiny = { .fraction = 0.001 };
	e.ctx.cycle = 4;
	CU_ASSERT_EQUAL(env_run(&e, &mod_churn, &tiny), 0);
	CU_ASSERT_EQUAL(rec_get(&e.rec, "files", "files"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "fraction: "));
	CU_ASSERT_EQUAL(env_run(&e, &mod_enumerate, &inode_walk), 0);
	env_release(&e);
	test_rmtree(tmp);
	free(tmp);
}

static void test_enumerate_mismatch(void)
{
	char *tmp = test_tmpdir();
	struct rec_env e;
	env_init(&e, tmp, 5);
	/* No tree yet. */
	CU_ASSERT_EQUAL(mod_enumerate.run(&e.ctx, &inode_walk), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "no tree to enumerate on volume A"));
	struct churn_args c = { .fraction = 5 };
	env_reset(&e);
	CU_ASSERT_EQUAL(mod_churn.run(&e.ctx, &c), -ENOENT);

	struct tree_args a = targs(300, 12, 2, DIST_FIXED, 100, 100);
	CU_ASSERT_EQUAL_FATAL(env_run(&e, &mod_tree, &a), 0);
	struct tree_state *t = e.state;
	char rel[TREE_PATH_MAX];
	struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
	mod_tree_file_path(t, 7, rel, NULL);
	sb_addf(&p, "%s/%s", t->root, rel);
	/* A file missing. */
	sb_addf(&q, "%s.moved", p.buf);
	CU_ASSERT_EQUAL(rename(p.buf, q.buf), 0);
	unlink(q.buf);
	env_reset(&e);
	CU_ASSERT_EQUAL(mod_enumerate.run(&e.ctx, &inode_walk), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "is not what was built: found 13 directories, "
						 "299 files, 29900 bytes"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "expected 13 directories (with the root), 300 files, "
						 "30000 bytes"));
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	env_reset(&e);
	CU_ASSERT_EQUAL(mod_enumerate.run(&e.ctx, &fts_walk), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "is not what was built: found 13 directories, "
						 "299 files, 29900 bytes"));
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	/* Back, but one byte longer. */
	CU_ASSERT_EQUAL(test_write_file(p.buf, ""), 0);
	char *blob = xcalloc(101, 1);
	memset(blob, 'x', 101);
	int fd = open(p.buf, O_WRONLY);
	CU_ASSERT_EQUAL(write(fd, blob, 101), 101);
	close(fd);
	free(blob);
	env_reset(&e);
	CU_ASSERT_EQUAL(mod_enumerate.run(&e.ctx, &inode_walk), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "300 files, 30001 bytes"));
	/* Right size again, plus a stray symlink. */
	CU_ASSERT_EQUAL(truncate(p.buf, 100), 0);
	CU_ASSERT_EQUAL(env_run(&e, &mod_enumerate, &inode_walk), 0);
	sb_reset(&q);
	sb_addf(&q, "%s/link", t->root);
	CU_ASSERT_EQUAL(symlink("nowhere", q.buf), 0);
	env_reset(&e);
	CU_ASSERT_EQUAL(mod_enumerate.run(&e.ctx, &inode_walk), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "and 1 other entries"));
	unlink(q.buf);

	/* A failing churn names the path and the operation: a directory is
	 * in the way of the temporary file. */
	size_t dl = 0;
	mod_tree_file_path(t, 0, rel, &dl);
	rel[dl] = 0;
	sb_reset(&q);
	sb_addf(&q, "%s/%s.rig-tmp", t->root, rel);
	CU_ASSERT_EQUAL(mkdir(q.buf, 0777), 0);
	struct churn_args all = { .fraction = 100 };
	uint64_t bytes = t->bytes;
	env_reset(&e);
	int rc = mod_churn.run(&e.ctx, &all);
	CU_ASSERT(rc < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "cannot create "));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, ".rig-tmp: "));
	CU_ASSERT_EQUAL(t->bytes, bytes);
	rmdir(q.buf);
	CU_ASSERT_EQUAL(env_run(&e, &mod_enumerate, &inode_walk), 0);
	sb_release(&p);
	sb_release(&q);
	env_release(&e);
	test_rmtree(tmp);
	free(tmp);
}

/* --- enumerate's cache: what each choice does --- */

/* Whether the first page of path is in the page cache; -1: cannot tell. */
static int in_cache(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	unsigned char v = 0;
	int rc = mincore(m, (size_t)page, (void *)&v); /* char * on macOS */
	munmap(m, (size_t)page);
	return rc == 0 ? v & 1 : -1;
}

/* Run enumerate with order and cache, the runner having flushed with
 * `flushed` ("" = nothing) before the cell; its note `cache` into note. */
static void enumerate_cache(struct rec_env *e, int order, int cache, const char *flushed,
			    char *note, size_t size)
{
	struct enumerate_args a = { .order = order, .cache = cache };
	e->ctx.cache_method = flushed;
	CU_ASSERT_EQUAL(env_run(e, &mod_enumerate, &a), 0);
	CU_ASSERT_EQUAL(rec_get(&e->rec, "entries", "entries"), 200 + 10 + 1);
	const char *at = strstr(e->rec.notes.buf, "cache: ");
	CU_ASSERT_PTR_NOT_NULL(at);
	size_t n = at ? strcspn(at + 7, "\n") : 0;
	snprintf(note, size, "%.*s", (int)n, at ? at + 7 : "");
}

static void test_enumerate_cache(void)
{
	char *tmp = test_tmpdir();
	struct rec_env e;
	env_init(&e, tmp, 17);
	struct tree_args a = targs(200, 10, 1, DIST_FIXED, 8192, 8192);
	CU_ASSERT_EQUAL_FATAL(env_run(&e, &mod_tree, &a), 0);
	struct tree_state *t = e.state;
	char rel[TREE_PATH_MAX], note[512];
	struct strbuf probe = STRBUF_INIT;
	mod_tree_file_path(t, 0, rel, NULL);
	sb_addf(&probe, "%s/%s", t->root, rel);
	/* A file of the tree tells whether the caches were dropped: tree wrote it
	 * through the cache, and only a drop takes it out (where the file system
	 * drops at all: tmpfs keeps its pages). */
	char fs[32] = "";
	plat_fs_type(tmp, fs, sizeof(fs));
	int probe_ok = in_cache(probe.buf) == 1 && strcmp(fs, "tmpfs") != 0;

	/* The runner flushed: drop adds nothing, and says what made it cold. */
	enumerate_cache(&e, ENUMERATE_FTS, ENUMERATE_DROP, "drop_caches", note, sizeof(note));
	CU_ASSERT_STRING_EQUAL(note, "cold: drop_caches before the cell");
	enumerate_cache(&e, ENUMERATE_INODE, ENUMERATE_DROP, "remount+drop_caches", note,
			sizeof(note));
	CU_ASSERT_STRING_EQUAL(note, "cold: remount+drop_caches before the cell");

	/* keep drops nothing and walks first: the tree's pages stay. */
	enumerate_cache(&e, ENUMERATE_FTS, ENUMERATE_KEEP, "", note, sizeof(note));
	CU_ASSERT_STRING_EQUAL(note, "warm: an untimed walk in the same order just before the "
				     "timed one");
	if (probe_ok)
		CU_ASSERT_EQUAL(in_cache(probe.buf), 1);
	enumerate_cache(&e, ENUMERATE_INODE, ENUMERATE_KEEP, "drop_caches", note, sizeof(note));
	CU_ASSERT_STRING_EQUAL(note, "warm: an untimed walk in the same order just before the "
				     "timed one (after the cell's drop_caches)");

	/* Nothing flushed before the cell: drop drops the caches itself, as
	 * root; without root it cannot, and says so. */
	enumerate_cache(&e, ENUMERATE_FTS, ENUMERATE_DROP, "", note, sizeof(note));
	if (geteuid() == 0) {
		CU_ASSERT_STRING_EQUAL(note, "cold: drop_caches by the step, just before the walk");
		if (probe_ok)
			CU_ASSERT_EQUAL(in_cache(probe.buf), 0);
	} else {
		CU_ASSERT_PTR_NOT_NULL(strstr(note, "not cold: "));
		CU_ASSERT_PTR_NOT_NULL(strstr(note, " was asked but not applied (not root), so the "
						    "walk may be served from memory"));
		if (probe_ok)
			CU_ASSERT_EQUAL(in_cache(probe.buf), 1);
	}
	if (!probe_ok)
		fprintf(stderr, "\nnote: %s (%s) cannot show a drop through the page cache\n", tmp, fs);

	/* keep checks the counts as drop does: a file missing fails the cell. */
	CU_ASSERT_EQUAL(unlink(probe.buf), 0);
	struct enumerate_args keep = { .order = ENUMERATE_FTS, .cache = ENUMERATE_KEEP };
	env_reset(&e);
	CU_ASSERT_EQUAL(mod_enumerate.run(&e.ctx, &keep), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "is not what was built"));
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	sb_release(&probe);
	env_release(&e);
	test_rmtree(tmp);
	free(tmp);
}

/* --- churn atomicity under a concurrent reader --- */

struct reader {
	const struct tree_state *t;
	const uint16_t *gen_before;  /* a snapshot: the reader never reads t->gen */
	volatile int stop;
	uint64_t seed;
	size_t reads, new_seen, bad, missing;
	char first_bad[256];
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct payload p;
	if (plat_payload_init(&p, r->t->payload_seed, 4096) < 0)
		return NULL;
	struct prng rng;
	prng_seed(&rng, r->seed);
	char rel[TREE_PATH_MAX];
	struct strbuf path = STRBUF_INIT;
	size_t cap = 8 << 20;
	unsigned char *buf = xmalloc(cap);
	while (!r->stop) {
		uint64_t i = prng_below(&rng, r->t->files);
		mod_tree_file_path(r->t, i, rel, NULL);
		sb_reset(&path);
		sb_addf(&path, "%s/%s", r->t->root, rel);
		int fd = open(path.buf, O_RDONLY);
		if (fd < 0) {
			r->missing++;
			continue;
		}
		size_t len = 0;
		ssize_t n;
		while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
			len += (size_t)n;
		close(fd);
		r->reads++;
		unsigned g = r->gen_before[i];
		int ok = 0;
		for (unsigned v = g; v <= g + 1 && !ok; v++) {
			if (len == mod_tree_file_size(r->t, i, v) &&
			    plat_payload_check(&p, mod_tree_file_stream(i, v), 0, buf, len) == 0) {
				ok = 1;
				r->new_seen += v > g;
			}
		}
		if (!ok && r->bad++ == 0)
			snprintf(r->first_bad, sizeof(r->first_bad), "%s: %zu bytes, generation %u is %llu",
				 path.buf, len, g, (unsigned long long)mod_tree_file_size(r->t, i, g));
	}
	free(buf);
	sb_release(&path);
	plat_payload_release(&p);
	return NULL;
}

static void test_churn_atomic(void)
{
	char *tmp = test_tmpdir();
	struct rec_env e;
	env_init(&e, tmp, 31337);
	/* Few, larger files, all replaced in every cycle: the reader opens the
	 * file being written often enough to catch a writer that is not atomic
	 * (an in-place rewrite fails this test within a cycle or two). */
	struct tree_args a = targs(12, 0, 0, DIST_LOGUNIFORM, 1 << 20, 4 << 20);
	CU_ASSERT_EQUAL_FATAL(env_run(&e, &mod_tree, &a), 0);
	struct tree_state *t = e.state;
	uint16_t *snap = xcalloc(t->files, sizeof(uint16_t));
	size_t reads = 0, new_seen = 0;
	for (uint32_t cycle = 1; cycle <= 6; cycle++) {
		memcpy(snap, t->gen, t->files * sizeof(uint16_t));
		struct reader r;
		memset(&r, 0, sizeof(r));
		r.t = t;
		r.gen_before = snap;
		r.seed = cycle;
		pthread_t th;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, reader_main, &r), 0);
		struct churn_args c = { .fraction = 100 };
		e.ctx.cycle = cycle;
		CU_ASSERT_EQUAL(env_run(&e, &mod_churn, &c), 0);
		r.stop = 1;
		pthread_join(th, NULL);
		CU_ASSERT_EQUAL(r.bad, 0);
		CU_ASSERT_EQUAL(r.missing, 0);
		if (r.bad)
			fprintf(stderr, "\ncycle %u: %zu partial reads of %zu; first: %s\n", cycle,
				r.bad, r.reads, r.first_bad);
		reads += r.reads;
		new_seen += r.new_seen;
	}
	CU_ASSERT(reads > 0);
	if (new_seen == 0) /* the reader should have met some new versions */
		fprintf(stderr, "\nnote: the reader saw no replaced file in %zu reads\n", reads);
	check_files(t);
	free(snap);
	env_release(&e);
	test_rmtree(tmp);
	free(tmp);
}

/* --- memory --- */

static void test_memory_bound(void)
{
	/* The enumeration article's plan: planned (not created), churn's extra counted too. */
	struct tree_args a = targs(1000000, 111000, 3, DIST_INVSQUARE, 1024, 20ull << 30);
	const char *why = NULL;
	struct tree_state *t = mod_tree_state_new(&a, 2019, "/nonexistent/rig/tree", &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	/* what stays resident between steps: the state, its root, its size
	 * list, a generation count per file; and what a churn cell adds */
	size_t bytes = sizeof(*t) + strlen(t->root) + 1 + t->sizes.nlist * sizeof(uint64_t) +
		       (size_t)t->files * sizeof(*t->gen) + mod_tree_churn_bytes(t->files);
	double per_file = (double)bytes / 1e6;
	CU_ASSERT(per_file < 64);
	CU_ASSERT(per_file < 4); /* what the design promises: 2 bytes + a bit */
	/* A million files of 1/x^2 on 1K..20G: about 17 GB, heavy tail and all. */
	CU_ASSERT(t->bytes > 8e9 && t->bytes < 60e9);
	CU_ASSERT_NOT_EQUAL(access("/nonexistent/rig", F_OK), 0);
	mod_tree_state_free(t);
}

/* --- cancellation --- */

static void test_cancel(void)
{
	char *tmp = test_tmpdir();
	struct rec_env e;
	env_init(&e, tmp, 3);
	struct tree_args a = targs(500, 10, 2, DIST_FIXED, 4096, 4096);
	e.cancel = 1;
	CU_ASSERT_EQUAL(env_run(&e, &mod_tree, &a), 0);
	CU_ASSERT_PTR_NULL(e.state); /* a partial tree is not a tree */
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	e.cancel = 0;
	CU_ASSERT_EQUAL_FATAL(env_run(&e, &mod_tree, &a), 0);
	struct churn_args c = { .fraction = 50 };
	e.cancel = 1;
	CU_ASSERT_EQUAL(env_run(&e, &mod_churn, &c), 0);
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	CU_ASSERT_EQUAL(env_run(&e, &mod_enumerate, &inode_walk), 0);
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	e.cancel = 0;
	CU_ASSERT_EQUAL(env_run(&e, &mod_enumerate, &inode_walk), 0);
	CU_ASSERT_EQUAL(rec_get(&e.rec, "entries", "entries"), 511);
	env_release(&e);
	test_rmtree(tmp);
	free(tmp);
}

void register_tree_tests(void)
{
	CU_pSuite s = test_suite("tree, enumerate, churn");
	test_add(s, "the shape: even fanout, files spread over the leaves", test_shape);
	test_add(s, "names: unique paths from the index, varied lengths, from the seed", test_names);
	test_add(s, "inverse-square sizes as the tree draws them: quantiles and means",
		 test_inverse_square);
	test_add(s, "the same seed gives the same tree in two folders, churned alike",
		 test_reproducible);
	test_add(s, "two layouts' cells at a repetition build and churn the same tree",
		 test_layouts_same_tree);
	test_add(s, "1 thread or several build the same tree (listing, sizes, content hashes)",
		 test_threads_same_tree);
	test_add(s, "enumerate counts what the tree holds through churn cycles",
		 test_enumerate_through_churn);
	test_add(s, "enumerate fails on a tree that is not what was built; errors name paths",
		 test_enumerate_mismatch);
	test_add(s, "enumerate cache: drop is cold (the runner's flush or its own), keep is warm",
		 test_enumerate_cache);
	test_add(s, "churn is atomic under a concurrent reader", test_churn_atomic);
	test_add(s, "a million-file plan costs < 64 bytes per file", test_memory_bound);
	test_add(s, "cancellation stops cleanly", test_cancel);
}
