/*
 * rig compare across runs (reports/compare.c, html_compare.c,
 * rig/cmd/compare.c): stores made here with the store API hold a `write`
 * step with a measured rate and the bytes the plan set. Checked: the bytes
 * are left out of the statistics (no key, named on the page) and a warning
 * says when the runs wrote different amounts; a difference whose Fieller
 * interval and Welch p disagree at 5% is marked and explained under its
 * table (the values were found by search and checked with rep_stats_diff);
 * without -o the files go to a new folder compare-<first run>-<n>, never
 * into the current folder.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/strbuf.h"
#include "report_util.h"
#include "reports/compare.h"
#include "reports/stats.h"
#include "store/store.h"
#include "test.h"

void register_compare_runs_tests(void);

/* Three repetitions of the rate on volume a. Against A, B's interval
 * excludes 0 (+0.78% .. +83.5%) while Welch's p is 0.056; C's interval
 * holds 0 (-1.0% .. +104%) while p is 0.043; D agrees (both clear). */
static const double rate_a[3] = { 113.8, 106.9, 117.7 };
static const double rate_b[3] = { 150.5, 182.9, 142.9 };
static const double rate_a2[3] = { 135.6, 101.6, 138.1 };
static const double rate_c[3] = { 164.7, 182.5, 161.9 };

/* A run folder DIR/NAME with results.db: step 1 `write` on volume a, three
 * repetitions of rate[] and of bytes; on host (NULL: testhost), resumed once
 * when asked. */
static int make_host_run(const char *dir, const char *name, const double *rate, double bytes,
			 const char *host, int resumed, struct strbuf *path)
{
	struct strbuf db = STRBUF_INIT, err = STRBUF_INIT;
	sb_reset(path);
	sb_addf(path, "%s/%s", dir, name);
	mkdir(path->buf, 0777);
	sb_addf(&db, "%s/results.db", path->buf);
	struct store *s = store_create(db.buf, &err);
	if (!s) {
		fprintf(stderr, "compare fixture: %s\n", err.buf);
		sb_release(&db);
		sb_release(&err);
		return -1;
	}
	static const char plan[] = "rig: 1\nname: cmp\ntarget: { dirs: [/tmp/a] }\nrepeat: 3\n"
				   "steps:\n  - write: { files: 1, size: 1M }\n";
	struct store_run r = { .id = name, .plan_name = "cmp", .plan_file = "plan.yaml",
			       .plan_text = plan, .plan_sha256 = "ab", .seed = 42,
			       .rig_version = "0.0.0-test", .host = host ? host : "testhost", .os = "Linux",
			       .started_utc = "2024-01-02T03:04:05Z", .platform = "linux",
			       .argv = "rig run plan.yaml" };
	store_begin_run(s, &r, &err);
	struct store_volume v = { .layout = "", .name = "a", .fs = "ext4", .position = 1,
				  .dir = "/tmp/a", .facts_json = "{}" };
	store_add_volume(s, &v, &err);
	for (uint32_t rep = 1; rep <= 3; rep++) {
		struct store_cell c = { .seq = rep, .phase = rep, .layout = "", .rep = rep, .step = "1",
					.module = "write", .volume_id = v.id };
		store_cell_start(s, &c, "2024-01-02T03:04:06Z", &err);
		store_add_sample(s, rep, "rate", rate[rep - 1], "MB/s", "direct", &err);
		store_add_sample(s, rep, "bytes", bytes, "B", "direct", &err);
		store_cell_end(s, rep, "2024-01-02T03:04:07Z", "done", NULL, &err);
	}
	if (resumed) {
		struct store_resume rs = { .started_utc = "2024-01-02T04:00:00Z", .argv = "rig resume x",
					   .rig_version = "0.0.0-test", .first_unfinished = 2,
					   .from_seq = 2 };
		store_resume_begin(s, &rs, &err);
		store_resume_end(s, rs.id, "2024-01-02T05:00:00Z", "completed", &err);
	}
	store_end_run(s, "2024-01-02T06:00:00Z", "completed", NULL, &err);
	store_close(s);
	int rc = err.len ? -1 : 0;
	if (rc)
		fprintf(stderr, "compare fixture: %s\n", err.buf);
	sb_release(&db);
	sb_release(&err);
	return rc;
}

static int make_run(const char *dir, const char *name, const double *rate, double bytes,
		    struct strbuf *path)
{
	return make_host_run(dir, name, rate, bytes, NULL, 0, path);
}

static const struct cmp_key *find_key(const struct comparison *c, const char *metric)
{
	for (size_t i = 0; i < c->nkeys; i++)
		if (!strcmp(c->keys[i].metric, metric))
			return &c->keys[i];
	return NULL;
}

/* bytes is a setting: no key, no interval; named; a warning when it differs. */
static void test_settings_left_out(void)
{
	char *dir = test_tmpdir();
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(make_run(dir, "ra", rate_a, 1048576, &a), 0);
	CU_ASSERT_EQUAL_FATAL(make_run(dir, "rb", rate_b, 1048576, &b), 0);
	char *same[] = { a.buf, b.buf };
	struct comparison c;
	CU_ASSERT_EQUAL_FATAL(rep_compare_build(&c, same, 2, NULL, &e), 0);
	CU_ASSERT_PTR_NOT_NULL(find_key(&c, "rate"));
	CU_ASSERT_PTR_NULL(find_key(&c, "bytes"));
	CU_ASSERT_TRUE(c.settings && !strcmp(c.settings, "bytes"));
	CU_ASSERT_FALSE(rfx_has_warning(&c, "did not do the same work"));
	rep_compare_free(&c);

	/* The same runs but B wrote twice as much: said. */
	CU_ASSERT_EQUAL_FATAL(make_run(dir, "rb2", rate_b, 2097152, &b), 0);
	char *differ[] = { a.buf, b.buf };
	CU_ASSERT_EQUAL_FATAL(rep_compare_build(&c, differ, 2, NULL, &e), 0);
	CU_ASSERT_PTR_NULL(find_key(&c, "bytes"));
	CU_ASSERT_TRUE(rfx_has_warning(&c, "step 1 (write) on a: bytes differs, 1048576 B in A and "
				       "2097152 B in B: the runs did not do the same work"));
	rep_compare_free(&c);
	CU_ASSERT_TRUE(rep_compare_is_setting("write", "bytes"));
	CU_ASSERT_FALSE(rep_compare_is_setting("write", "rate"));
	CU_ASSERT_FALSE(rep_compare_is_setting("no-such-module", "bytes"));
	test_rmtree(dir);
	free(dir);
	sb_release(&a);
	sb_release(&b);
	sb_release(&e);
}

/* The interval and p disagree: the cell is marked and the note says why;
 * where they agree, no mark. */
static void test_fieller_welch_note(void)
{
	struct stats_summary sa, sb;
	struct rep_stats_diff d;
	double x[3], y[3];
	memcpy(x, rate_a, sizeof(x));
	memcpy(y, rate_b, sizeof(y));
	rep_stats_summarize(x, 3, &sa);
	rep_stats_summarize(y, 3, &sb);
	rep_stats_diff(&sb, &sa, &d);
	CU_ASSERT_TRUE(d.ci_low > 0 && d.p >= 0.05); /* the fixture is what it claims */
	CU_ASSERT_TRUE(rep_compare_diff_disagrees(&d));
	memcpy(x, rate_a2, sizeof(x));
	memcpy(y, rate_c, sizeof(y));
	rep_stats_summarize(x, 3, &sa);
	rep_stats_summarize(y, 3, &sb);
	rep_stats_diff(&sb, &sa, &d);
	CU_ASSERT_TRUE(d.ci_low < 0 && d.p < 0.05);
	CU_ASSERT_TRUE(rep_compare_diff_disagrees(&d));
	d.ci_low = 5, d.ci_high = 20, d.p = 0.01;
	CU_ASSERT_FALSE(rep_compare_diff_disagrees(&d));
	d.ci_low = -5, d.p = 0.4;
	CU_ASSERT_FALSE(rep_compare_diff_disagrees(&d));
	d.ci_low = NAN;
	CU_ASSERT_FALSE(rep_compare_diff_disagrees(&d));

	char *dir = test_tmpdir();
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, out = STRBUF_INIT, p = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(make_run(dir, "ra", rate_a, 1048576, &a), 0);
	CU_ASSERT_EQUAL_FATAL(make_run(dir, "rb", rate_b, 1048576, &b), 0);
	sb_addf(&out, "%s/cmp", dir);
	const char *args[] = { "compare", "-o", out.buf, a.buf, b.buf, NULL };
	char *o = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &o), 0);
	free(o);
	sb_addf(&p, "%s/compare.html", out.buf);
	char *h = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_TRUE(strstr(h, "p = 0.056<sup>&dagger;</sup>") || strstr(h, "p = 0.057<sup>&dagger;</sup>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "the interval (Fieller's) is for the ratio of the two means"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Welch's test is for the difference of the means"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Left out: bytes, quantities the plan sets"));
	free(h);
	/* A run against itself: nothing disagrees, no note. */
	const char *self[] = { "compare", "-o", out.buf, a.buf, a.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(self, &o), 0);
	free(o);
	h = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(h && !strstr(h, "&dagger;"));
	free(h);
	test_rmtree(dir);
	free(dir);
	sb_release(&a);
	sb_release(&b);
	sb_release(&out);
	sb_release(&p);
}

/* Without -o: compare-<first run>-1, then -2; the current folder gets no file. */
static void test_default_folder(void)
{
	char *dir = test_tmpdir();
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, cwd = STRBUF_INIT, p = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(make_run(dir, "20240102T030405Z-cmp", rate_a, 1048576, &a), 0);
	CU_ASSERT_EQUAL_FATAL(make_run(dir, "rb", rate_b, 1048576, &b), 0);
	sb_addf(&cwd, "%s/work", dir);
	mkdir(cwd.buf, 0777);
	const char *args[] = { "compare", a.buf, b.buf, NULL };
	for (int n = 1; n <= 2; n++) {
		char *o = NULL;
		CU_ASSERT_EQUAL(test_run_rig_in(cwd.buf, args, &o), 0);
		sb_reset(&p);
		sb_addf(&p, "compare-20240102T030405Z-cmp-%d/compare.html", n);
		CU_ASSERT_TRUE(o && strstr(o, p.buf));
		free(o);
		sb_reset(&p);
		sb_addf(&p, "%s/compare-20240102T030405Z-cmp-%d/compare.csv", cwd.buf, n);
		struct stat st;
		CU_ASSERT_EQUAL(stat(p.buf, &st), 0);
	}
	sb_reset(&p);
	sb_addf(&p, "%s/compare.csv", cwd.buf);
	struct stat st;
	CU_ASSERT_NOT_EQUAL(stat(p.buf, &st), 0);
	test_rmtree(dir);
	free(dir);
	sb_release(&a);
	sb_release(&b);
	sb_release(&cwd);
	sb_release(&p);
}

/* Runs of one plan from two hosts, one resumed: the page tabulates each
 * run's host, OS, disk, rig version and resumes; the warnings say the hosts
 * and the resume states differ. */
static void test_across_hosts(void)
{
	char *dir = test_tmpdir();
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, e = STRBUF_INIT, out = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(make_host_run(dir, "ra", rate_a, 1048576, "lab-mac-1", 0, &a), 0);
	CU_ASSERT_EQUAL_FATAL(make_host_run(dir, "rb", rate_b, 1048576, "lab-mac-2", 1, &b), 0);
	char *runs[] = { a.buf, b.buf };
	struct comparison c;
	CU_ASSERT_EQUAL_FATAL(rep_compare_build(&c, runs, 2, NULL, &e), 0);
	CU_ASSERT_TRUE(rfx_has_warning(&c, "hosts differ: A ran on lab-mac-1, B on lab-mac-2"));
	CU_ASSERT_TRUE(rfx_has_warning(&c, "resume states differ: A ran without a stop, B was resumed"));
	CU_ASSERT_FALSE(rfx_has_warning(&c, "rig versions differ"));
	sb_addf(&out, "%s/cmp", dir);
	mkdir(out.buf, 0777);
	CU_ASSERT_EQUAL(rep_compare_write_html(&c, out.buf, &e), 0);
	sb_addch(&out, '/');
	sb_adds(&out, "compare.html");
	char *html = test_read_file(out.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(html);
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<th>host</th><th>OS</th><th>disk</th><th>rig</th>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<td>lab-mac-1</td>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<td>lab-mac-2</td>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "completed, resumed 1 time</td>"));
	free(html);
	rep_compare_free(&c);
	test_rmtree(dir);
	free(dir);
	sb_release(&a);
	sb_release(&b);
	sb_release(&e);
	sb_release(&out);
}

void register_compare_runs_tests(void)
{
	CU_pSuite s = test_suite_e2e("rig compare across runs");
	test_add(s, "quantities the plan sets are left out, and differing ones said", test_settings_left_out);
	test_add(s, "Fieller's interval against Welch's p: marked and explained", test_fieller_welch_note);
	test_add(s, "the default output is a new folder compare-<first run>-<n>", test_default_folder);
	test_add(s, "runs from several hosts: host facts, versions, resume states", test_across_hosts);
}
