/*
 * rig compare --within (reports/compare_within.c): stores made here with
 * the store API hold known values (two file systems, two layouts with the
 * positions swapped, four repetitions), one store per disk; the rows of
 * compare-within.csv are checked against means and standard deviations
 * computed here by hand and the difference computed by rep_stats_diff from
 * those (rep_stats_diff itself is checked against mpmath in stats_test.c).
 * An incomplete run must not be pooled and must be marked; a resumed run
 * must be marked. End to end: `rig compare --within` on runs made by `rig
 * run` of a null-module plan on directories.
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

/* vals[step][layout][volume][rep]: volume 0 is E1 (ext4), 1 is X1 (xfs).
 * Layout e-first puts E1 first on the disk, x-first puts X1 first; the
 * first position is faster, so per layout X1 is -10% and +10% of E1 in
 * step 1, and 0% pooled. */
static const double vals[2][2][2][4] = {
	{ { { 100, 104, 96, 100 }, { 90, 92, 88, 90 } },
	  { { 100, 102, 98, 100 }, { 110, 114, 106, 110 } } },
	{ { { 200, 210, 190, 200 }, { 180, 185, 175, 181 } },
	  { { 200, 205, 195, 201 }, { 220, 230, 210, 222 } } },
};
static const char *const layouts[2] = { "e-first", "x-first" };
static const char *const vnames[2] = { "E1", "X1" };
static const char *const vfs[2] = { "ext4", "xfs" };

struct wfx {
	const char *model;          /* the disk's model in the device facts */
	const char *baseline;       /* report.baseline; NULL: none */
	int fail;                   /* step 2 of X1 in x-first, repetition 4, failed */
	int resumed;                /* a rig resume is recorded */
	const char *const *names;   /* the two volumes' names; NULL: E1, X1 */
};

static int make_store(const char *dir, const struct wfx *o)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT, plan = STRBUF_INIT, facts = STRBUF_INIT;
	sb_addf(&path, "%s/results.db", dir);
	struct store *s = store_create(path.buf, &err);
	if (!s)
		return -1;
	sb_adds(&plan, "rig: 1\nname: within-test\ntarget:\n  image: { path: /var/tmp/rig-within.img, size: 2G }\n"
		       "layouts:\n  - name: e-first\n    partitions:\n"
		       "      - { name: E1, fs: ext4, size: 50% }\n      - { name: X1, fs: xfs, size: rest }\n"
		       "  - name: x-first\n    partitions:\n"
		       "      - { name: X1, fs: xfs, size: 50% }\n      - { name: E1, fs: ext4, size: rest }\n"
		       "repeat: 4\nsteps:\n  - write: { files: 4, sizes: 1M..8M }\n  - read: {}\n");
	if (o->baseline)
		sb_addf(&plan, "report:\n  baseline: %s\n", o->baseline);
	const char *const *names = o->names ? o->names : vnames;
	struct store_run r = { .id = dir, .plan_name = "within-test", .plan_file = "plan.yaml",
			       .plan_text = plan.buf, .plan_sha256 = "ab", .seed = 42,
			       .rig_version = "0.0.0-test", .host = "testhost", .os = "Linux 6.1.0 x86_64",
			       .started_utc = "2024-01-02T03:04:05Z", .platform = "linux",
			       .argv = "rig run plan.yaml" };
	store_begin_run(s, &r, &err);
	sb_addf(&facts, "{\"target\":\"disk\",\"model\":\"%s\",\"serial\":\"S-%s\"}", o->model, o->model + 5);
	int64_t vid[2][2];
	for (int li = 0; li < 2; li++)
		for (int pos = 0; pos < 2; pos++) {
			int vi = li ? 1 - pos : pos;
			struct store_volume v = { .layout = layouts[li], .layout_index = (uint32_t)li,
						  .name = names[vi], .fs = vfs[vi], .position = (uint32_t)pos + 1,
						  .dir = "/mnt/x", .facts_json = facts.buf };
			store_add_volume(s, &v, &err);
			vid[li][vi] = v.id;
		}
	uint32_t seq = 0, phase = 0;
	for (int li = 0; li < 2; li++)
		for (int rep = 0; rep < 4; rep++)
			for (int st = 0; st < 2; st++) {
				phase++;
				for (int pos = 0; pos < 2; pos++) {
					int vi = li ? 1 - pos : pos;
					int failed = o->fail && li == 1 && rep == 3 && st == 1 && vi == 1;
					struct store_cell c = { .seq = ++seq, .phase = phase, .layout = layouts[li],
								.rep = (uint32_t)rep + 1, .step = st ? "2" : "1",
								.module = st ? "read" : "write",
								.volume_id = vid[li][vi] };
					store_cell_start(s, &c, "2024-01-02T03:04:06Z", &err);
					if (!failed)
						store_add_sample(s, seq, "rate", vals[st][li][vi][rep], "MB/s", "direct", &err);
					store_cell_end(s, seq, "2024-01-02T03:04:07Z", failed ? "failed" : "done",
						       failed ? "read failed" : NULL, &err);
				}
			}
	if (o->resumed) {
		struct store_resume rs = { .started_utc = "2024-01-02T05:00:00Z", .argv = "rig resume x",
					   .rig_version = "0.0.0-test", .first_unfinished = 9, .from_seq = 9,
					   .why = "test" };
		store_resume_begin(s, &rs, &err);
		store_resume_end(s, rs.id, "2024-01-02T05:10:00Z", "completed", &err);
	}
	store_end_run(s, "2024-01-02T06:00:00Z", o->fail ? "failed" : "completed",
		      o->fail ? "step 2 (read) on volume X1 failed" : NULL, &err);
	store_close(s);
	int rc = err.len ? -1 : 0;
	if (rc)
		fprintf(stderr, "within fixture: %s\n", err.buf);
	sb_release(&path);
	sb_release(&err);
	sb_release(&plan);
	sb_release(&facts);
	return rc;
}

/* Mean and sample standard deviation, the textbook two passes. */
static void by_hand(const double *x, size_t n, struct stats_summary *s)
{
	memset(s, 0, sizeof(*s));
	double sum = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	s->n = n;
	s->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->sd = sqrt(ss / (double)(n - 1));
}

/* The CSV, parsed, with its columns found by name. */
struct wcsv {
	char ***rows;
	size_t n;
};

static int col(const struct wcsv *t, const char *name)
{
	for (int j = 0; t->rows[0][j]; j++)
		if (!strcmp(t->rows[0][j], name))
			return j;
	CU_FAIL("a column of compare-within.csv is missing");
	return 0;
}

static const char *cell(const struct wcsv *t, size_t row, const char *name)
{
	return t->rows[row][col(t, name)];
}

static double num(const struct wcsv *t, size_t row, const char *name)
{
	const char *s = cell(t, row, name);
	return *s ? strtod(s, NULL) : NAN;
}

/* The row of (run label, step, layout; "" with pooled yes: pooled); 0 when none. */
static size_t find_row(const struct wcsv *t, const char *run, const char *step, const char *layout, int pooled)
{
	for (size_t i = 1; i < t->n; i++)
		if (!strcmp(cell(t, i, "run_label"), run) && !strcmp(cell(t, i, "step"), step) &&
		    !strcmp(cell(t, i, "layout"), layout) && !strcmp(cell(t, i, "pooled"), pooled ? "yes" : "no"))
			return i;
	return 0;
}

static int close_to(double got, double want)
{
	if (isnan(want))
		return isnan(got);
	return fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

/* Check row against values x (compared) and b (reference) computed here. */
static void check_row(const struct wcsv *t, size_t row, const double *x, size_t nx, const double *b, size_t nb)
{
	CU_ASSERT_TRUE_FATAL(row > 0);
	struct stats_summary sx, sb;
	by_hand(x, nx, &sx);
	by_hand(b, nb, &sb);
	struct rep_stats_diff df;
	rep_stats_diff(&sx, &sb, &df);
	CU_ASSERT_EQUAL(num(t, row, "n"), (double)nx);
	CU_ASSERT_EQUAL(num(t, row, "ref_n"), (double)nb);
	CU_ASSERT_TRUE(close_to(num(t, row, "mean"), sx.mean));
	CU_ASSERT_TRUE(close_to(num(t, row, "sd"), sx.sd));
	CU_ASSERT_TRUE(close_to(num(t, row, "ref_mean"), sb.mean));
	CU_ASSERT_TRUE(close_to(num(t, row, "ref_sd"), sb.sd));
	CU_ASSERT_TRUE(close_to(num(t, row, "diff_pct"), 100 * sx.mean / sb.mean - 100));
	CU_ASSERT_TRUE(close_to(num(t, row, "pct_of_reference"), 100 * sx.mean / sb.mean));
	CU_ASSERT_TRUE(close_to(num(t, row, "diff_ci_low"), df.ci_low));
	CU_ASSERT_TRUE(close_to(num(t, row, "diff_ci_high"), df.ci_high));
	CU_ASSERT_TRUE(close_to(num(t, row, "p_value"), df.p));
	CU_ASSERT_TRUE(isfinite(df.ci_low) && isfinite(df.p));
}

/* Three disks: A complete, B failed in its last layout, C resumed. */
struct three {
	char *dir;
	char *runs[3];
	struct comparison c;
	struct wcsv t;
	char *html;
};

static void three_open(struct three *f, const char *against, const char *baseline,
		       const char *const *names)
{
	memset(f, 0, sizeof(*f));
	f->dir = test_tmpdir();
	const struct wfx fx[3] = { { "Disk <A> & co", baseline, 0, 0, names }, { "Disk B", baseline, 1, 0, names },
				   { "Disk C", baseline, 0, 1, names } };
	for (int i = 0; i < 3; i++) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/run-%c", f->dir, 'a' + i);
		mkdir(p.buf, 0777);
		CU_ASSERT_EQUAL_FATAL(make_store(p.buf, &fx[i]), 0);
		f->runs[i] = sb_detach(&p);
	}
	struct strbuf err = STRBUF_INIT, p = STRBUF_INIT;
	struct compare_opts o = { 1, against };
	CU_ASSERT_EQUAL_FATAL(rep_compare_build(&f->c, f->runs, 3, &o, &err), 0);
	sb_addf(&p, "%s/compare-within.csv", f->dir);
	CU_ASSERT_EQUAL_FATAL(rep_compare_within_write_csv(&f->c, p.buf, &err), 0);
	char *text = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(rfx_csv_parse(text, &f->t.rows), 0);
	free(text);
	while (f->t.rows[f->t.n])
		f->t.n++;
	CU_ASSERT_EQUAL_FATAL(rep_compare_within_write_html(&f->c, f->dir, &err), 0);
	sb_reset(&p);
	sb_addf(&p, "%s/compare.html", f->dir);
	f->html = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->html);
	sb_release(&err);
	sb_release(&p);
}

static void three_close(struct three *f)
{
	rep_compare_free(&f->c);
	rfx_csv_free(f->t.rows);
	free(f->html);
	test_rmtree(f->dir);
	free(f->dir);
	for (int i = 0; i < 3; i++)
		free(f->runs[i]);
}

static void test_within_numbers(void)
{
	struct three f;
	three_open(&f, NULL, "E1", NULL); /* the reference: each run's report.baseline */
	const struct wcsv *t = &f.t;
	CU_ASSERT_STRING_EQUAL(t->rows[0][0], "run_label");
	/* Per layout: A, B, C each 2 steps x 2 layouts; pooled: A and C, 2 steps. */
	CU_ASSERT_EQUAL(t->n, 1 + 3 * 4 + 2 * 2);
	for (int st = 0; st < 2; st++) {
		const char *step = st ? "2" : "1";
		for (int li = 0; li < 2; li++) {
			size_t row = find_row(t, "A", step, layouts[li], 0);
			check_row(t, row, vals[st][li][1], 4, vals[st][li][0], 4);
			CU_ASSERT_STRING_EQUAL(cell(t, row, "reference"), "E1");
			CU_ASSERT_STRING_EQUAL(cell(t, row, "volume"), "X1");
			CU_ASSERT_STRING_EQUAL(cell(t, row, "fs"), "xfs");
			CU_ASSERT_STRING_EQUAL(cell(t, row, "metric"), "rate");
		}
		/* Pooled over the two layouts: both sides' eight values. */
		double x[8], b[8];
		for (int i = 0; i < 8; i++) {
			x[i] = vals[st][i / 4][1][i % 4];
			b[i] = vals[st][i / 4][0][i % 4];
		}
		check_row(t, find_row(t, "A", step, "", 1), x, 8, b, 8);
		check_row(t, find_row(t, "C", step, "", 1), x, 8, b, 8);
	}
	/* The numbers the table was built for: -10%, +10%, 0 pooled. */
	CU_ASSERT_TRUE(close_to(num(t, find_row(t, "A", "1", "e-first", 0), "diff_pct"), -10));
	CU_ASSERT_TRUE(close_to(num(t, find_row(t, "A", "1", "x-first", 0), "diff_pct"), 10));
	CU_ASSERT_TRUE(close_to(num(t, find_row(t, "A", "1", "", 1), "diff_pct"), 0));
	size_t a1 = find_row(t, "A", "1", "e-first", 0);
	CU_ASSERT_STRING_EQUAL(cell(t, a1, "disk"), "Disk <A> & co serial S-<A> & co");
	CU_ASSERT_STRING_EQUAL(cell(t, a1, "status"), "completed");
	CU_ASSERT_STRING_EQUAL(cell(t, a1, "resumes"), "0");

	/* B failed in x-first: per layout only, never pooled, even step 1
	 * whose cells all completed; its failed cell is missing from n. */
	for (size_t i = 1; i < t->n; i++)
		if (!strcmp(cell(t, i, "run_label"), "B"))
			CU_ASSERT_STRING_EQUAL(cell(t, i, "pooled"), "no");
	CU_ASSERT_EQUAL(find_row(t, "B", "1", "", 1), 0);
	check_row(t, find_row(t, "B", "2", "x-first", 0), vals[1][1][1], 3, vals[1][1][0], 4);
	size_t b1 = find_row(t, "B", "1", "e-first", 0);
	CU_ASSERT_STRING_EQUAL(cell(t, b1, "status"), "failed");
	CU_ASSERT_STRING_EQUAL(cell(t, b1, "failed_cells"), "1");
	CU_ASSERT_TRUE(rfx_has_warning(&f.c, "run B: 1 of 32 cells did not complete: its layouts are shown "
					 "apart, not pooled"));
	CU_ASSERT_TRUE(rfx_has_warning(&f.c, "run B did not complete (failed)"));
	/* Different disks are what this mode tabulates: no warning for them. */
	CU_ASSERT_FALSE(rfx_has_warning(&f.c, "disks differ"));

	/* C was resumed: said in its rows. */
	CU_ASSERT_STRING_EQUAL(cell(t, find_row(t, "C", "1", "e-first", 0), "resumes"), "1");

	/* The page: one row per disk, marked; everything escaped. */
	const char *h = f.html;
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Disk &lt;A&gt; &amp; co serial"));
	CU_ASSERT_PTR_NULL(strstr(h, "<A>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "<b>incomplete</b>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "layouts not pooled"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "<b>resumed</b>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Run C was resumed 1 time"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Run B did not complete"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "<span class=\"small\">not pooled</span>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "\xe2\x88\x92" "10.0%")); /* A, e-first */
	const char *rowb = strstr(h, "Disk B serial");
	const char *rowc = strstr(h, "Disk C serial");
	CU_ASSERT_TRUE(rowb && rowc && rowb < rowc);
	CU_ASSERT_TRUE(rowb && rowc && !strstr(rowc, "<b>incomplete</b>")); /* C is complete */
	three_close(&f);
}

static void test_within_reference(void)
{
	/* Case-insensitive, volume names first: x1 is the volume X1. */
	struct three f;
	three_open(&f, "x1", "E1", NULL);
	size_t row = find_row(&f.t, "A", "1", "e-first", 0);
	CU_ASSERT_TRUE_FATAL(row > 0);
	CU_ASSERT_STRING_EQUAL(cell(&f.t, row, "reference"), "X1");
	CU_ASSERT_STRING_EQUAL(cell(&f.t, row, "volume"), "E1");
	check_row(&f.t, row, vals[0][0][0], 4, vals[0][0][1], 4);
	three_close(&f);

	/* Then file systems: EXT4 is ext4; rows name the other file system. */
	three_open(&f, "EXT4", NULL, NULL);
	row = find_row(&f.t, "C", "2", "", 1);
	CU_ASSERT_TRUE_FATAL(row > 0);
	CU_ASSERT_STRING_EQUAL(cell(&f.t, row, "reference"), "ext4");
	CU_ASSERT_STRING_EQUAL(cell(&f.t, row, "volume"), "");
	CU_ASSERT_STRING_EQUAL(cell(&f.t, row, "fs"), "xfs");
	CU_ASSERT_EQUAL(f.c.nwarnings, 2); /* B did not complete, and is not pooled */
	three_close(&f);

	/* A volume named like another volume's file system is the volume:
	 * here "xfs" is an ext4 volume, compared with X1 (xfs). */
	static const char *const named_xfs[2] = { "xfs", "X1" };
	three_open(&f, "XFS", NULL, named_xfs);
	row = find_row(&f.t, "A", "1", "e-first", 0);
	CU_ASSERT_TRUE_FATAL(row > 0);
	CU_ASSERT_STRING_EQUAL(cell(&f.t, row, "reference"), "xfs");
	CU_ASSERT_STRING_EQUAL(cell(&f.t, row, "volume"), "X1");
	check_row(&f.t, row, vals[0][0][1], 4, vals[0][0][0], 4);
	three_close(&f);

	/* Neither: a warning per run, and no rows. */
	three_open(&f, "apfs", "E1", NULL);
	CU_ASSERT_EQUAL(f.t.n, 1);
	CU_ASSERT_TRUE(rfx_has_warning(&f.c, "run A has no volume or file system named 'apfs'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(f.html, "No run has a volume or file system to compare"));
	three_close(&f);

	/* No --against and no report.baseline: said, no rows. */
	three_open(&f, NULL, NULL, NULL);
	CU_ASSERT_EQUAL(f.t.n, 1);
	CU_ASSERT_TRUE(rfx_has_warning(&f.c, "run C: no reference: its plan's report.baseline is not set"));
	three_close(&f);
}

/* docs/reports.md lists the columns rig writes. */
static void test_within_columns_documented(void)
{
	struct strbuf path = STRBUF_INIT, doc = STRBUF_INIT;
	sb_addf(&path, "%s/docs/reports.md", test_src());
	char *text = test_read_file(path.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	const char *sec = strstr(text, "### File systems within each run");
	const char *block = sec ? strstr(sec, "```\nrun_label,") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(block);
	/* The block's lines joined: it wraps where the header does not. */
	for (const char *q = block + 4; *q && strncmp(q, "```", 3); q++)
		if (*q != '\n')
			sb_addch(&doc, *q);
	CU_ASSERT_STRING_EQUAL(doc.buf, rep_compare_within_csv_header);
	free(text);
	sb_release(&path);
	sb_release(&doc);
}

/* --- end to end --- */

static void run_plan(const char *dir, const char *name, int seed)
{
	struct strbuf t = STRBUF_INIT, plan = STRBUF_INIT, out = STRBUF_INIT;
	sb_addf(&plan, "%s/%s.yaml", dir, name);
	sb_addf(&t, "rig: 1\nname: e2e-within\nseed: %d\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		    "repeat: 3\nsteps:\n  - null: { value: 5 }\n  - null: { value: 7 }\n"
		    "report:\n  baseline: a\n  formats: [csv]\n", seed, dir, dir);
	test_write_file(plan.buf, t.buf);
	sb_addf(&out, "%s/%s", dir, name);
	const char *args[] = { "run", "-q", "-o", out.buf, plan.buf, NULL };
	char *o = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &o), 0);
	free(o);
	sb_release(&t);
	sb_release(&plan);
	sb_release(&out);
}

static void test_within_cli(void)
{
	char *dir = test_tmpdir();
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, out = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&a, "%s/r1", dir);
	sb_addf(&b, "%s/r2", dir);
	sb_addf(&out, "%s/cmp", dir);
	run_plan(dir, "r1", 1);
	run_plan(dir, "r2", 2);
	const char *args[] = { "compare", "--within", "--against", "B", "-o", out.buf, a.buf, b.buf, NULL };
	char *o = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &o), 0);
	CU_ASSERT(o && strstr(o, "compare-within.csv"));
	CU_ASSERT(o && strstr(o, "warning: seeds differ"));
	free(o);
	sb_addf(&p, "%s/compare-within.csv", out.buf);
	char *text = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	struct wcsv t = { NULL, 0 };
	CU_ASSERT_EQUAL(rfx_csv_parse(text, &t.rows), 0);
	while (t.rows[t.n])
		t.n++;
	/* 2 runs x 2 steps x 2 metrics (value, seconds); one unnamed layout. */
	CU_ASSERT_EQUAL(t.n, 1 + 2 * 2 * 2);
	for (size_t i = 1; i < t.n; i++) {
		CU_ASSERT_STRING_EQUAL(cell(&t, i, "reference"), "b");
		CU_ASSERT_STRING_EQUAL(cell(&t, i, "volume"), "a");
		CU_ASSERT_STRING_EQUAL(cell(&t, i, "disk"), "existing directories");
		CU_ASSERT_STRING_EQUAL(cell(&t, i, "pooled"), "no");
		CU_ASSERT_STRING_EQUAL(cell(&t, i, "n"), "3");
		if (!strcmp(cell(&t, i, "metric"), "value"))
			CU_ASSERT_STRING_EQUAL(cell(&t, i, "diff_pct"), "0");
	}
	rfx_csv_free(t.rows);
	free(text);
	sb_reset(&p);
	sb_addf(&p, "%s/compare.html", out.buf);
	text = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(text && strstr(text, "Difference from the reference, per run"));
	free(text);

	/* The help says it; misuse is a usage error. */
	const char *help[] = { "compare", "--help", NULL };
	CU_ASSERT_EQUAL(test_run_rig(help, &o), 0);
	CU_ASSERT(o && strstr(o, "--within") && strstr(o, "--against"));
	free(o);
	/* (-o: should a check fail and rig write, not into the test's folder) */
	const char *bad[] = { "compare", "--against", "b", "-o", out.buf, a.buf, b.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(bad, &o), 2);
	free(o);
	const char *none[] = { "compare", "--within", "--against", "zfs", "-o", out.buf, a.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(none, &o), 1);
	CU_ASSERT(o && strstr(o, "no volume or file system named 'zfs'"));
	free(o);
	test_rmtree(dir);
	free(dir);
	sb_release(&a);
	sb_release(&b);
	sb_release(&out);
	sb_release(&p);
}

void register_compare_tests(void)
{
	CU_pSuite s = test_suite_e2e("rig compare --within");
	test_add(s, "numbers against values computed by hand; incomplete and resumed runs",
		 test_within_numbers);
	test_add(s, "the reference: volume names, then file systems, then baselines", test_within_reference);
	test_add(s, "compare-within.csv's columns as docs/reports.md lists them", test_within_columns_documented);
	test_add(s, "end to end through rig", test_within_cli);
}
