/*
 * Tests of the estimates and the fit check (rig/run/plan_estimate.c and the
 * modules' estimate functions).
 *
 * Suite "estimate" (anyone): exact numbers on small plans (fixed sizes, a
 * pause, repetitions, a cycle of churn, a fill on a volume of a given
 * size, test files laid out once); the draws of write and tree equal the
 * modules' own; the warnings of the fixtures in tests/fixtures/estimate
 * from `rig plan` and `rig validate`, with file:line:column; `rig run`
 * refusing a plan whose file cannot fit before writing anything.
 *
 * Suite "estimate-actual": the estimate against what a run wrote (the
 * write(2) bytes of rig and its children, /proc/self/io wchar, which
 * counts what the test process reaped): configs/quick.yaml (its folders
 * moved into the test's, a fixed seed) and, as root, the halves plan
 * configs/linux-fs-halves.yaml on a 1200M image (one repetition instead of
 * four, to stay under a minute). Within 20% of each other.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/prng.h"
#include "lib/strbuf.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/seqio.h"
#include "modules/tree.h"
#include "plan/plan.h"
#include "plan/schedule.h"
#include "provision_util.h"
#include "rig/run/plan_estimate.h"
#include "test.h"

void register_estimate_tests(void);

#define MIB (1024.0 * 1024)

struct est_fx {
	struct plan *p;
	struct schedule s;
	struct plan_est e;
	struct diag d;
};

/* Parse text, schedule it with seed and estimate; o may set the rest. */
static int estimate_text(struct est_fx *fx, const char *text, uint64_t seed, int seed_known,
			 struct plan_est_options *o)
{
	memset(fx, 0, sizeof(*fx));
	diag_init(&fx->d, "plan.yaml", text);
	fx->p = plan_parse_text("plan.yaml", text, strlen(text), NULL, &fx->d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fx->p);
	if (fx->d.nerrors) {
		diag_print(&fx->d, stderr);
		CU_FAIL_FATAL("plan invalid");
	}
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(fx->p, seed, &fx->s), 0);
	struct plan_est_options def = { .layout = -1 };
	if (!o)
		o = &def;
	o->seed = seed;
	o->seed_known = seed_known;
	diag_release(&fx->d);
	diag_init(&fx->d, "plan.yaml", text);
	return run_plan_estimate(fx->p, &fx->s, o, &fx->e, &fx->d);
}

static void fx_release(struct est_fx *fx)
{
	run_plan_estimate_release(&fx->e);
	plan_schedule_free(&fx->s);
	plan_free(fx->p);
	diag_release(&fx->d);
}

static int near(double got, double want)
{
	if (fabs(got - want) <= 1e-9 * fabs(want) + 1e-9)
		return 1;
	fprintf(stderr, "got %.9g, want %.9g\n", got, want);
	return 0;
}

/* Fixed sizes, a read of the set, a pause, two repetitions, one volume of
 * an image: bytes and files exact, time at the given rate. */
static void test_fixed_sizes(void)
{
	struct est_fx fx;
	struct plan_est_options o = { .layout = -1, .rate = 100e6 };
	CU_ASSERT_EQUAL(estimate_text(&fx,
		"rig: 1\nname: t\ntarget:\n  image: { path: /tmp/x.img, size: 2G }\n"
		"layouts:\n  - name: one\n    partitions:\n      - { name: v, fs: ext4, size: rest }\n"
		"repeat: 2\nsteps:\n  - write: { files: 3, size: 100M }\n  - read: {}\n"
		"  - pause: { time: 2s }\n", 0, 0, &o), 0);
	double set = 3 * 100 * MIB;
	CU_ASSERT(near(fx.e.total.written, 2 * set));
	CU_ASSERT(near(fx.e.total.files, 6));
	/* per repetition: the set written and read at 100 MB/s, 3 creates at
	 * 10000/s, the pause; and 2 s of provisioning for the one volume */
	double rep = 2 * set / 100e6 + 3 / PLAN_EST_FILE_OPS + 2;
	CU_ASSERT(near(fx.e.total.seconds, 2 * rep + PLAN_EST_PROVISION_S));
	CU_ASSERT(near(fx.e.layouts[0].seconds, fx.e.total.seconds));
	CU_ASSERT_EQUAL(fx.e.nwarnings, 0);
	CU_ASSERT(fx.e.sizes_known);
	fx_release(&fx);
}

/* Steps without an estimate are counted and named, once each, per layout
 * and in the total. */
static void test_not_estimated(void)
{
	struct est_fx fx;
	CU_ASSERT_EQUAL(estimate_text(&fx,
		"rig: 1\nname: t\ntarget:\n  dirs: [/tmp, /var]\nrepeat: 3\nsteps:\n"
		"  - exec: { run: [\"true\"] }\n  - null: {}\n  - exec: { run: [\"false\"] }\n",
		0, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx.e.total.not_estimated, 12); /* 2 exec steps x 2 dirs x 3 */
	CU_ASSERT_EQUAL(fx.e.total.nskipped, 1);
	struct strbuf out = STRBUF_INIT;
	run_plan_estimate_format(fx.p, &fx.e, &out);
	pt_has("estimate", out.buf, "(+ 12 exec cells not estimated: their work is known only "
				    "when they run)");
	sb_release(&out);
	fx_release(&fx);
}

/* Expected sizes when the seed is unknown: n x the mean of a range, and a
 * list's files in turn. */
static void test_expected_sizes(void)
{
	struct est_fx fx;
	CU_ASSERT_EQUAL(estimate_text(&fx,
		"rig: 1\nname: t\ntarget:\n  dirs: [/tmp]\n"
		"steps:\n  - write: { files: 5, sizes: [1M, 2M] }\n"
		"  - tree: { files: 1000, dirs: 10, depth: 1, sizes: \"inverse-square(1K..1M)\" }\n"
		"  - write: { files: 4, sizes: 1M..32M }\n", 0, 0, NULL), 0);
	double lo = 1024, hi = 1024 * 1024;
	double tree = 1000 * log(hi / lo) / (1 / lo - 1 / hi);
	double range = 4 * (31 * MIB) / log(32.0);
	CU_ASSERT(near(fx.e.total.written, (1 + 2 + 1 + 2 + 1) * MIB + tree + range));
	CU_ASSERT(near(fx.e.total.files, 5 + 1000 + 4));
	CU_ASSERT_FALSE(fx.e.exact);
	fx_release(&fx);
}

/* With the run's seed, write's and tree's sizes are the modules' own draws. */
static void test_draws_match_modules(void)
{
	struct est_fx fx;
	CU_ASSERT_EQUAL(estimate_text(&fx,
		"rig: 1\nname: t\ntarget:\n  dirs: [/tmp]\n"
		"steps:\n  - write: { files: 7, sizes: 1M..64M }\n"
		"  - tree: { files: 3000, dirs: 30, depth: 2, sizes: \"inverse-square(1K..20M)\" }\n",
		42, 1, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(fx.s.n, 2);
	uint64_t ws = plan_schedule_cell_seed(42, SEED_CURRENT, "", &fx.s.cells[0]);
	uint64_t sizes[7];
	struct seqio_args wa = { 0 };
	const char *why = NULL;
	CU_ASSERT_EQUAL_FATAL(units_parse_dist("1M..64M", &wa.sizes, &why), 0);
	mod_seqio_draw_sizes(&wa.sizes, prng_derive_seed(ws, "seqio/sizes"), sizes, 7);
	double want = 0;
	for (int i = 0; i < 7; i++)
		want += (double)sizes[i];
	struct tree_args ta = { .files = 3000, .dirs = 30, .depth = 2 };
	CU_ASSERT_EQUAL_FATAL(units_parse_dist("inverse-square(1K..20M)", &ta.sizes, &why), 0);
	struct tree_state *t = mod_tree_state_new(&ta, plan_schedule_cell_seed(42, SEED_CURRENT, "", &fx.s.cells[1]),
					      "/nowhere", &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	want += (double)t->bytes;
	CU_ASSERT(near(fx.e.total.written, want));
	CU_ASSERT(fx.e.exact);
	mod_tree_state_free(t);
	units_dist_release(&wa.sizes);
	units_dist_release(&ta.sizes);
	fx_release(&fx);
}

/* churn in a cycle: round(fraction x files) files at the tree's mean size
 * each time; a test file laid out once for every randio step of its span;
 * passes of seqwrite move the span each. */
static void test_churn_and_test_files(void)
{
	struct est_fx fx;
	struct plan_est_options o = { .layout = -1, .rate = 200e6 };
	CU_ASSERT_EQUAL(estimate_text(&fx,
		"rig: 1\nname: t\ntarget:\n  dirs: [/tmp]\n"
		"steps:\n  - tree: { files: 100, dirs: 10, depth: 1, sizes: 1M }\n"
		"  - cycle:\n      times: 3\n      steps:\n        - churn: { fraction: 10% }\n"
		"  - randread: { span: 64M, time: 2s }\n"
		"  - randread: { span: 64M, time: 1s, passes: 2 }\n"
		"  - seqwrite: { block: 1M, qd: 1, span: 64M, passes: 3 }\n"
		"  - randwrite: { span: 64M, time: 1s }\n", 0, 0, &o), 0);
	/* randwrite for 1 s: 1 s x the assumed rate, said apart; each
	 * time-bound pass also completes its requests in flight at the
	 * deadline (threads x qd x block: one 4 KiB block here) */
	CU_ASSERT(near(fx.e.total.written,
		       100 * MIB + 3 * 10 * MIB + 64 * MIB + 3 * 64 * MIB + 200e6 + 4096));
	CU_ASSERT(near(fx.e.total.timed_written, 200e6));
	CU_ASSERT(near(fx.e.total.files, 100 + 30 + 1));
	struct strbuf f = STRBUF_INIT;
	run_plan_estimate_format(fx.p, &fx.e, &f);
	pt_has("format", f.buf, "(191 MiB of it by time-bound writes at the assumed rate)");
	sb_release(&f);
	double secs = (100 * MIB) / 200e6 + 110 / PLAN_EST_FILE_OPS   /* tree */
		      + 3 * ((10 * MIB) / 200e6 + 20 / PLAN_EST_FILE_OPS) /* churn */
		      + (64 * MIB) / 200e6 + 2 + 2                    /* layout, 2 s, 2 x 1 s */
		      + 3 * (64 * MIB) / 200e6                         /* seqwrite */
		      + 1                                              /* randwrite */
		      + 4 * 4096 / 200e6;                              /* 4 passes' drains */
	CU_ASSERT(near(fx.e.total.seconds, secs));
	fx_release(&fx);
}

/* A source folder off the target (the enumeration plan's shape): tree and
 * churn there count once per phase, not per volume; the first sync copies
 * the source, each later one what the churn before it changed; a cold
 * walk goes at the file system's walk rate (--assume-walk); file
 * operations on the volumes at --assume-ops' rate, those in the source
 * folder at the default one, stats from the cache at their own. */
static void test_source_sync_walk(void)
{
	struct est_fx fx;
	char *src = test_tmpdir();
	struct plan_est_walk walk[] = { { "ext4", 500 } };
	struct plan_est_options o = { .layout = -1, .rate = 200e6, .ops = 100, .walk = walk,
				      .nwalk = 1 };
	struct strbuf text = STRBUF_INIT;
	sb_addf(&text, "rig: 1\nname: t\ntarget:\n  image: { path: %s/x.img, size: 1G }\n"
		       "layouts:\n  - name: l\n    partitions:\n"
		       "      - { name: A, fs: ext4, size: 50%% }\n      - { name: B, fs: xfs, size: rest }\n"
		       "steps:\n  - tree: { files: 100, dirs: 10, depth: 1, sizes: 1M, at: %s/src }\n"
		       "  - sync: { from: %s/src }\n"
		       "  - cycle:\n      times: 2\n      steps:\n"
		       "        - churn: { fraction: 10%%, at: %s/src }\n"
		       "        - sync: { from: %s/src }\n"
		       "        - enumerate: { cache: drop }\n", src, src, src, src, src);
	CU_ASSERT_EQUAL(estimate_text(&fx, text.buf, 0, 0, &o), 0);
	/* written to the volumes: the first sync's 100 MiB, then 10 MiB per sync, on each */
	CU_ASSERT(near(fx.e.total.written, 2 * (100 * MIB + 2 * 10 * MIB)));
	CU_ASSERT(near(fx.e.total.files, 2 * (100 + 2 * 10)));
	CU_ASSERT_EQUAL(fx.e.total.not_estimated, 0);
	/* file operations in the source folder at the default rate, on the
	 * volumes at --assume-ops' 100/s; the syncs' stats from the cache */
	double secs = (100 * MIB) / 200e6 + 110 / PLAN_EST_FILE_OPS          /* tree, once */
		      + 2 * (2 * 100 * MIB / 200e6 + 200 / 100.0 + 100 / PLAN_EST_STAT_RATE)
		                                                             /* first syncs */
		      + 2 * ((10 * MIB) / 200e6 + 20 / PLAN_EST_FILE_OPS)     /* churns, once each */
		      + 4 * (2 * 10 * MIB / 200e6 + 20 / 100.0 + 200 / PLAN_EST_STAT_RATE)
		                                                             /* later syncs */
		      + 2 * (100 / 500.0) + 2 * (100 / run_plan_est_walk_rate(NULL, "xfs", NULL)) /* walks */
		      + 2 * PLAN_EST_PROVISION_S;                              /* provisioning */
	CU_ASSERT(near(fx.e.total.seconds, secs));
	struct strbuf f = STRBUF_INIT;
	run_plan_estimate_format(fx.p, &fx.e, &f);
	pt_has("walk rates said", f.buf, "cold walks: 500 entries/s on ext4 (--assume-walk)");
	pt_has("ops rate said", f.buf, "100 file operations/s (--assume-ops)");
	pt_has("walk rates said", f.buf, "on xfs (measured)");
	sb_release(&f);
	fx_release(&fx);
	/* --assume-walk's text */
	struct plan_est_walk *w = NULL;
	size_t n = 0;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL(run_plan_est_parse_walk("apfs=4300,hfs+=4e4", &w, &n, &e), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT(n == 2 && !strcmp(w[1].fs, "hfs+") && w[1].rate == 40000);
	for (size_t i = 0; i < n; i++)
		free((char *)w[i].fs);
	free(w);
	CU_ASSERT_EQUAL(run_plan_est_parse_walk("apfs=fast", &w, &n, &e), -1);
	pt_has("bad walk", e.buf, "--assume-walk takes FS=ENTRIES_PER_SECOND");
	sb_release(&e);
	sb_release(&text);
	test_rmtree(src);
	free(src);
}

/* fill on a volume of a given size (as at run time): the filler up to the
 * level, what the other data holds counted; too little left for the write
 * after it: one warning at the write's line and column, with the numbers. */
static void test_fill_to_level(void)
{
	double cap = 1000 * MIB, used = 10 * MIB;
	struct plan_est_options o = { .layout = -1, .capacity = &cap, .used = &used };
	struct est_fx fx;
	const char *text =
		"rig: 1\nname: t\ntarget:\n  dirs: [/tmp]\n"
		"steps:\n  - write: { files: 2, size: 50M }\n  - fill: { to: 50% }\n"
		"  - write: { files: 4, size: 50M }\n  - fill: { to: 95% }\n"
		"  - write: { files: 3, size: 100M }\n";
	CU_ASSERT_EQUAL(estimate_text(&fx, text, 0, 0, &o), 0);
	/* 100M, filler to 500M (400M), 200M (the set replaced), filler to 950M
	 * (+ 350M: 10 + 750 + 200 in use), then 300M that does not fit (the
	 * first set is gone: 50M free) */
	CU_ASSERT(near(fx.e.total.written, (100 + 390 + 200 + 350 + 300) * MIB));
	CU_ASSERT_EQUAL(fx.e.nwarnings, 1);
	CU_ASSERT_EQUAL_FATAL(fx.d.n, 1);
	CU_ASSERT_EQUAL(fx.d.items[0].level, DIAG_WARNING);
	CU_ASSERT_EQUAL(fx.d.items[0].mark.line, 10);
	CU_ASSERT_EQUAL(fx.d.items[0].mark.col, 5);
	pt_has("warning", fx.d.items[0].msg,
	       "write needs 300 MiB on volume tmp but only 250 MiB of its 1000 MiB is free then, "
	       "after fill to 95% (line 9): lower the level to at most 70%");
	fx_release(&fx);
}

/* The size of a volume unknown (a disk): fill's cells counted as unknown,
 * no check. */
static void test_unknown_size(void)
{
	struct est_fx fx;
	CU_ASSERT_EQUAL(estimate_text(&fx,
		"rig: 1\nname: t\ntarget:\n  disk: { device: /dev/rig-no-such-disk, confirm: X }\n"
		"layouts:\n  - name: one\n    partitions:\n      - { name: v, fs: ext4, size: rest }\n"
		"steps:\n  - fill: { to: 90% }\n  - write: { files: 1, size: 1M }\n", 0, 0, NULL), 0);
	CU_ASSERT_FALSE(fx.e.sizes_known);
	CU_ASSERT_EQUAL(fx.e.total.unknown, 1);
	CU_ASSERT(near(fx.e.total.written, MIB));
	CU_ASSERT(near(fx.e.rate, PLAN_EST_RATE_DISK));
	struct strbuf out = STRBUF_INIT;
	run_plan_estimate_format(fx.p, &fx.e, &out);
	pt_has("format", out.buf, "the size of /dev/rig-no-such-disk is not known here");
	pt_has("format", out.buf, "1 cell writing to a level of a volume whose size is unknown");
	sb_release(&out);
	fx_release(&fx);
}

static char *fixture(const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/tests/fixtures/estimate/%s", test_src(), name);
	return sb_detach(&sb);
}

/* rig plan and rig validate on the fixtures: the warnings, where. */
static void test_fixture_warnings(void)
{
	char *over = fixture("overfull-fill.yaml"), *big = fixture("big-file.yaml");
	char *out = NULL;
	const char *a1[] = { "plan", "--platform", "linux", over, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a1, &out), 0);
	pt_has("plan overfull", out,
	       "overfull-fill.yaml:18:11: warning: write needs 300 MiB on volume Work at level = "
	       "90% but only 99.1 MiB of its 991 MiB is free then, after fill to 90% (line 17) "
	       "(2 of the step's 2 cells): lower the level to at most 69%, or make the image at "
	       "least 3136M (target.image.size or --image-size)");
	pt_has("plan overfull", out, "fit      1 warning (above)");
	pt_has("plan overfull", out, "estimate sizes as the run draws them with seed 1");
	free(out);
	/* --image-size applies to the check as to the run. */
	const char *a2[] = { "plan", "--platform", "linux", "--image-size", "4G", over, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a2, &out), 0);
	pt_lacks("plan overfull 4G", out, "warning:");
	pt_has("plan overfull 4G", out, "4G (--image-size)");
	pt_has("plan overfull 4G", out, "fit      the data fits its volumes");
	free(out);
	const char *a3[] = { "validate", big, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a3, &out), 0);
	/* the partition as the Linux driver fits it on the 1G image (50% of
	 * what GPT leaves, rounded down to whole MiB: 511 MiB), less ext4's
	 * inode tables and journal */
	pt_has("validate big", out,
	       "big-file.yaml:12:5: warning: write writes a file of 600 MiB, more than volume a "
	       "holds (about 487 MiB) (2 of the step's 2 cells): give smaller sizes or a larger "
	       "partition");
	pt_has("validate big", out, "big-file.yaml:13:5: warning: tree needs 684 MiB on volume a");
	pt_has("validate big", out, "2 warnings: its data does not fit its target");
	free(out);
	const char *a4[] = { "plan", "--assume-rate", "fast", big, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a4, &out), 2);
	pt_has("bad rate", out, "--assume-rate takes a size per second");
	free(out);
	const char *a5[] = { "plan", "--assume-rate", "150MB/s", big, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a5, &out), 0);
	pt_has("rate", out, "data at 150 MB/s (--assume-rate)");
	free(out);
	free(over);
	free(big);
}

/* rig run refuses, after provisioning and before any cell, a plan whose
 * file cannot fit; nothing of the step is written. */
static void test_run_refuses(void)
{
	char *dir = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, outdir = STRBUF_INIT, seqio = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", dir);
	sb_addf(&outdir, "%s/out", dir);
	sb_addf(&seqio, "%s/vol/seqio", dir);
	struct strbuf text = STRBUF_INIT;
	sb_addf(&text, "rig: 1\nname: huge\ntarget:\n  dirs: [%s/vol]\nsteps:\n"
		       "  - null: {}\n  - write: { files: 1, size: 100T }\n", dir);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	char *out = NULL;
	const char *a[] = { "run", "-q", "-o", outdir.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a, &out), 1);
	pt_has("run", out, "the plan's data does not fit the volumes as provisioned; nothing of "
			   "it was written:");
	pt_has("run", out, "plan.yaml:7:5: warning: write writes a file of 100 TiB, more than "
			   "volume vol holds");
	pt_has("run", out, "--no-fit-check runs it anyway");
	struct stat st;
	CU_ASSERT_NOT_EQUAL(stat(seqio.buf, &st), 0);
	free(out);
	test_rmtree(dir);
	free(dir);
	sb_release(&plan);
	sb_release(&outdir);
	sb_release(&seqio);
	sb_release(&text);
}

/* --- estimate against what a run wrote --- */

static double wchar_now(void)
{
	char *io = test_read_file("/proc/self/io", NULL);
	const char *w = io ? strstr(io, "wchar: ") : NULL;
	double v = w ? strtod(w + 7, NULL) : -1;
	free(io);
	return v;
}

/* Estimate the plan file as `rig run` with these options will run it. */
static double estimate_file(const char *path, uint64_t seed, uint64_t image_size)
{
	struct diag d;
	diag_init(&d, path, NULL);
	struct plan_options po = { 0 };
	struct plan *p = plan_parse_file(path, &po, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	struct schedule s;
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, seed, &s), 0);
	struct plan_est_options o = { .seed = seed, .seed_known = 1, .image_size = image_size,
				      .layout = -1 };
	struct plan_est e;
	run_plan_estimate(p, &s, &o, &e, &d);
	CU_ASSERT_EQUAL(e.nwarnings, 0);
	double w = e.total.written;
	run_plan_estimate_release(&e);
	plan_schedule_free(&s);
	plan_free(p);
	diag_release(&d);
	return w;
}

static void compare_actual(const char *what, double est, double actual)
{
	double ratio = actual > 0 ? est / actual : 0;
	fprintf(stderr, "\n  %s: estimated %.0f bytes, written %.0f (estimate/actual %.3f)\n",
		what, est, actual, ratio);
	CU_ASSERT(actual > 0);
	CU_ASSERT(fabs(est - actual) <= 0.2 * actual);
}

/* Run configs/NAME.yaml with pairs replaced (dir: the test's folder) with
 * --seed 5 (and --image-size image_arg when image is not 0), and compare. */
static void run_actual(const char *name, const char *const *pairs, const char *dir,
		       uint64_t image, const char *image_arg, const char *label)
{
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", dir);
	sb_addf(&out, "%s/out", dir);
	char *text = pt_config(name, pairs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text), 0);
	double est = estimate_file(plan.buf, 5, image);
	double before = wchar_now();
	const char *args[] = { "run", "-q", "--seed", "5", "-o", out.buf, plan.buf,
			       image ? "--image-size" : NULL, image_arg, NULL };
	char *o = NULL;
	if (test_run_rig(args, &o) != 0) {
		fprintf(stderr, "%s", o ? o : "");
		CU_FAIL("rig run failed");
	}
	compare_actual(label, est, wchar_now() - before);
	free(o);
	free(text);
	sb_release(&plan);
	sb_release(&out);
}

static void test_quick_actual(void)
{
	char *dir = test_tmpdir();
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	sb_addf(&a, "%s/a", dir);
	sb_addf(&b, "%s/b", dir);
	/* One repetition and a short randread: the estimate of bytes written
	 * is per cell, so one repetition checks it as well as three. */
	const char *pairs[] = { "/var/tmp/rig-quick/a", a.buf, "/var/tmp/rig-quick/b", b.buf,
				"repeat: 3", "repeat: 1", "time: 2s", "time: 500ms", NULL };
	run_actual("quick", pairs, dir, 0, NULL, "configs/quick.yaml, seed 5, 1 repetition");
	test_rmtree(dir);
	free(dir);
	sb_release(&a);
	sb_release(&b);
}

static void test_halves_actual(void)
{
	char *dir = test_tmpdir();
	struct strbuf img = STRBUF_INIT, what = STRBUF_INIT;
	sb_addf(&img, "%s/halves.img", dir);
	const char *pairs[] = { "/var/tmp/rig-halves.img", img.buf,
				"repeat: { times: 4, provision: each }", "repeat: 1", NULL };
	run_actual("linux-fs-halves", pairs, dir, 1200ull << 20, "1200M",
		   "configs/linux-fs-halves.yaml, seed 5, 1 repetition, 1200M image");
	/* Common random numbers: the write cells of both layouts, on both
	 * volumes, wrote the same sizes (4 cells, one list of 8 sizes). */
	sb_addf(&what, "%s/out", dir);
	char *v = pt_run_query(what.buf,
			       "SELECT count(*) || ' ' || count(DISTINCT g) FROM (SELECT seq, "
			       "group_concat(bytes, ' ') g FROM (SELECT f.seq, f.bytes FROM "
			       "file_samples f JOIN cells c ON c.seq = f.seq WHERE c.module = 'write' "
			       "ORDER BY f.seq, f.file) GROUP BY seq)");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "4 1");
	free(v);
	sb_reset(&what);
	CU_ASSERT_EQUAL(pt_leftovers(dir, &what), 0);
	test_rmtree(dir);
	free(dir);
	sb_release(&img);
	sb_release(&what);
}

void register_estimate_tests(void)
{
	CU_pSuite s = test_suite("estimate");
	test_add(s, "cells without an estimate: counted and named", test_not_estimated);
	test_add(s, "fixed sizes, a read, a pause, repetitions: exact", test_fixed_sizes);
	test_add(s, "expected sizes without the seed", test_expected_sizes);
	test_add(s, "with the seed: write's and tree's own draws", test_draws_match_modules);
	test_add(s, "churn in a cycle, test files laid out once, passes", test_churn_and_test_files);
	test_add(s, "a source folder: once per phase; sync copies the changes; walk rates",
		 test_source_sync_walk);
	test_add(s, "fill to a level on a known volume; the write after it warned", test_fill_to_level);
	test_add(s, "a disk of unknown size: no check, said", test_unknown_size);
	test_add(s, "rig plan and validate: the fixtures' warnings", test_fixture_warnings);
	test_add(s, "rig run refuses a file larger than its volume", test_run_refuses);
	CU_pSuite q = test_suite_e2e("estimate-actual");
	test_add(q, "configs/quick.yaml: estimate within 20% of the bytes written", test_quick_actual);
	CU_pSuite h = test_suite("estimate-actual-halves");
	if (pt_require_provisioning(h, "loop devices for configs/linux-fs-halves.yaml"))
		test_add(h, "configs/linux-fs-halves.yaml: estimate within 20% of the bytes written",
			 test_halves_actual);
}
