/*
 * The time accounting (modules/run_time.c, rig/run/run_account.c,
 * reports/report_time.c, reports/html_time.c): the accountant alone, and
 * a run of the sanitized binary on a dirs target whose categories must
 * add up to its wall time, with a pause counted as pause, a tree's build
 * as setup, a null step's timed wait as measured; the measured share in
 * time.csv, report.html and results.json; the estimate the run started
 * with beside what it took, and rig plan --from it; and a version 3 store
 * read and migrated.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/run_time.h"
#include "store/store.h"
#include "test.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* --- the accountant --- */

static void test_accountant(void)
{
	struct run_time t;
	double t0 = now_s();
	mod_run_time_init(&t, RT_OTHER);
	sleep_ms(20);
	uint64_t m0 = mod_run_time_mark(&t, RT_MEASURED);
	sleep_ms(30);
	/* A store write inside the measured interval is the store's. */
	enum run_time_cat was = mod_run_time_swap(&t, RT_STORE);
	CU_ASSERT_EQUAL(was, RT_MEASURED);
	sleep_ms(10);
	mod_run_time_swap(&t, was);
	sleep_ms(10);
	uint64_t m1 = mod_run_time_mark(&t, RT_SETUP);
	/* A preparing module's measured time is setup. */
	t.measured_as = RT_SETUP;
	mod_run_time_mark(&t, RT_MEASURED);
	CU_ASSERT_EQUAL(t.cur, RT_SETUP);
	sleep_ms(10);
	uint64_t ns[RT_NCAT];
	mod_run_time_take(&t, ns);
	double wall = now_s() - t0, sum = 0;
	for (int c = 0; c < RT_NCAT; c++)
		sum += (double)ns[c] / 1e9;
	/* The categories add up to the elapsed time, less what init missed. */
	CU_ASSERT_TRUE(sum <= wall && sum > wall - 0.005);
	/* The measured interval is the module's own: the marks' timestamps
	 * less the store write inside it. */
	CU_ASSERT_EQUAL(ns[RT_MEASURED] + ns[RT_STORE], m1 - m0);
	CU_ASSERT_TRUE(ns[RT_STORE] >= 10000000u);
	CU_ASSERT_TRUE(ns[RT_SETUP] >= 10000000u);
	CU_ASSERT_TRUE(ns[RT_OTHER] >= 20000000u);
	/* Taken: the totals start again. */
	mod_run_time_take(&t, ns);
	CU_ASSERT_TRUE(ns[RT_MEASURED] == 0 && ns[RT_OTHER] == 0 && ns[RT_STORE] == 0);
	/* Without an accountant only the clock is read. */
	CU_ASSERT_TRUE(mod_run_time_mark(NULL, RT_MEASURED) > 0);
	CU_ASSERT_EQUAL(mod_run_time_swap(NULL, RT_PAUSE), RT_PAUSE);
	/* Names round-trip, unknown ones are refused. */
	for (int c = 0; c < RT_NCAT; c++)
		CU_ASSERT_EQUAL(mod_run_time_from_name(mod_run_time_name((enum run_time_cat)c)), c);
	CU_ASSERT_EQUAL(mod_run_time_from_name("measuring"), -1);
}

/* --- a run --- */

static double q_double(const char *db, const char *sql)
{
	sqlite3 *h;
	double v = NAN;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return v;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			v = sqlite3_column_double(st, 0);
		sqlite3_finalize(st);
	} else {
		fprintf(stderr, "\n%s: %s\n", sql, sqlite3_errmsg(h));
	}
	sqlite3_close(h);
	return v;
}

/* Seconds of category cat in the cells of module mod (all modules: NULL). */
static double cat_of(const char *db, const char *mod, const char *cat)
{
	char sql[512];
	if (mod)
		snprintf(sql, sizeof(sql), "SELECT coalesce(sum(t.seconds), 0) FROM time_spent t"
			 " JOIN cells c USING (seq) WHERE c.module = '%s' AND t.category = '%s'",
			 mod, cat);
	else
		snprintf(sql, sizeof(sql), "SELECT coalesce(sum(seconds), 0) FROM time_spent"
			 " WHERE category = '%s'", cat);
	return q_double(db, sql);
}

/* The field named col of the row of time.csv whose scope is `scope`. */
static char *csv_field(const char *csv, const char *scope, const char *col)
{
	const char *nl = strchr(csv, '\n');
	if (!nl)
		return NULL;
	int want = -1, k = 0;
	for (const char *p = csv; p < nl; k++) {
		const char *e = memchr(p, ',', (size_t)(nl - p));
		if (!e)
			e = nl;
		if ((size_t)(e - p) == strlen(col) && !strncmp(p, col, (size_t)(e - p)))
			want = k;
		p = e + 1;
	}
	if (want < 0)
		return NULL;
	for (const char *line = nl + 1; *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		/* run,scope,...: the second field is the scope (run ids have no comma) */
		const char *f = strchr(line, ',');
		if (f && f < end && !strncmp(f + 1, scope, strlen(scope)) &&
		    f[1 + strlen(scope)] == ',') {
			const char *p = line;
			for (int i = 0; i < want && p; i++) {
				p = memchr(p, ',', (size_t)(end - p));
				p = p ? p + 1 : NULL;
			}
			if (!p)
				return NULL;
			const char *e = memchr(p, ',', (size_t)(end - p));
			if (!e)
				e = end;
			char *out = xmalloc((size_t)(e - p) + 1);
			memcpy(out, p, (size_t)(e - p));
			out[e - p] = 0;
			return out;
		}
		line = *end ? end + 1 : end;
	}
	return NULL;
}

/* The number after `key` in text, or NaN. */
static double number_after(const char *text, const char *key)
{
	const char *at = text ? strstr(text, key) : NULL;
	return at ? strtod(at + strlen(key), NULL) : NAN;
}

/*
 * rig plan --from RUN: each module's cells of the run, the time the run
 * spent on them (every category of the cell), printed as measured; a plan
 * with a module the run did not have corrects only the others; a folder
 * that holds no run is refused with its reason.
 */
static void from_run(const char *tmp, const char *text, const char *run, const char *db)
{
	struct strbuf plan = STRBUF_INIT, more = STRBUF_INIT;
	sb_addf(&plan, "%s/more.yaml", tmp);
	sb_addf(&more, "%s  - write: { files: 2, size: 64K }\n", text);
	test_write_file(plan.buf, more.buf);
	const char *args[] = { "plan", "--from", run, plan.buf, NULL };
	char *o = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &o), 0);
	static const char *const mods[] = { "pause", "tree", "enumerate", "null" };
	for (size_t i = 0; i < 4; i++) {
		struct strbuf key = STRBUF_INIT, q = STRBUF_INIT;
		sb_addf(&key, "  %-10s on %-10s    2 cells took ", mods[i], "the folder");
		sb_addf(&q, "SELECT total(t.seconds) FROM time_spent t JOIN cells c ON c.seq = t.seq"
			    " WHERE c.module = '%s'", mods[i]);
		double took = number_after(o, key.buf), want = q_double(db, q.buf);
		/* printed to 3 significant digits */
		CU_ASSERT_TRUE(fabs(took / want - 1) < 0.006);
		if (!(fabs(took / want - 1) < 0.006))
			fprintf(stderr, "\n%s: printed %g s, the store has %g s\n", mods[i], took, want);
		sb_release(&key);
		sb_release(&q);
	}
	CU_ASSERT_PTR_NOT_NULL(o ? strstr(o, "from       8 of the plan's 10 cells corrected") : NULL);
	free(o);
	o = NULL;
	const char *none[] = { "plan", "--from", tmp, plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(none, &o), 1);
	CU_ASSERT_PTR_NOT_NULL(o ? strstr(o, "rig plan: --from ") : NULL);
	free(o);
	sb_release(&plan);
	sb_release(&more);
}

static void test_run_accounting(void)
{
	char *tmp = test_tmpdir();
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&text, "rig: 1\nname: timed\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		       "report: { formats: [html, csv, json] }\n"
		       "steps:\n"
		       "  - pause: { time: 400ms }\n"
		       "  - tree: { files: 300, dirs: 10, depth: 1, sizes: 1K..4K }\n"
		       "  - enumerate: {}\n"
		       "  - null: { time: 300ms }\n", tmp, tmp);
	double t0 = now_s();
	int rc = test_run_plan(tmp, text.buf, "3", &out);
	double wall = now_s() - t0;
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	struct strbuf dbp = STRBUF_INIT;
	sb_addf(&dbp, "%s/results.db", out.buf);
	const char *db = dbp.buf;

	/* Every category is a known one, and together they are the run's wall
	 * time: the process's, less its start (exec, the sanitizer, parsing
	 * the plan) and its exit, which no run sees. */
	double sum = q_double(db, "SELECT sum(seconds) FROM time_spent");
	CU_ASSERT_TRUE(sum <= wall);
	CU_ASSERT_TRUE(sum > wall - 0.4 - 0.1 * wall);
	if (!(sum <= wall && sum > wall - 0.4 - 0.1 * wall))
		fprintf(stderr, "\naccounted %.3f s of a %.3f s process\n", sum, wall);
	/* The ended run's rows: cells' with their seq, the layout's, the run's,
	 * the report's after the reports. */
	CU_ASSERT_EQUAL(q_double(db, "SELECT count(DISTINCT seq) FROM time_spent"), 8);
	CU_ASSERT_TRUE(q_double(db, "SELECT count(*) FROM time_spent WHERE seq IS NULL"
				    " AND layout_index = 0") >= 1);
	CU_ASSERT_TRUE(cat_of(db, NULL, "report") > 0);
	CU_ASSERT_TRUE(cat_of(db, NULL, "store") > 0);
	CU_ASSERT_TRUE(cat_of(db, NULL, "teardown") > 0);

	/* A pause is pause, nothing of it measured; so is each cell's pause. */
	double pause = cat_of(db, "pause", "pause");
	CU_ASSERT_TRUE(pause >= 0.8 && pause < 1.6);
	CU_ASSERT_EQUAL(cat_of(db, "pause", "measured"), 0);
	CU_ASSERT_EQUAL(cat_of(db, NULL, "pause"), pause);
	/* A tree's build is setup: it prepares the volume. */
	CU_ASSERT_TRUE(cat_of(db, "tree", "setup") > 0);
	CU_ASSERT_EQUAL(cat_of(db, "tree", "measured"), 0);
	/* The null step's timed wait is measured, and so is enumerate's walk. */
	double measured = cat_of(db, NULL, "measured");
	CU_ASSERT_TRUE(cat_of(db, "null", "measured") >= 0.6);
	CU_ASSERT_TRUE(cat_of(db, "enumerate", "measured") > 0);
	/* The estimate the run started with: the pause and the null wait
	 * exactly, the rest at the assumed rates. */
	double est = q_double(db, "SELECT seconds FROM estimates WHERE layout_index = 0");
	CU_ASSERT_TRUE(est >= 1.4 && est < 60);

	/* time.csv: the total row's measured share is measured over the wall
	 * time less the report; the layout's total has the estimate. */
	sb_reset(&p);
	sb_addf(&p, "%s/time.csv", out.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	static const char header[] = "run,scope,resume,layout,seq,step,module,volume,provision,"
				     "teardown,setup,flush,pause,measured,store,report,other,wall,"
				     "measured_share,estimate\n";
	CU_ASSERT_TRUE(!strncmp(csv, header, strlen(header)));
	char *share = csv_field(csv, "total", "measured_share");
	char *w = csv_field(csv, "total", "wall"), *rep = csv_field(csv, "total", "report");
	CU_ASSERT_TRUE(share && w && rep);
	if (share && w && rep) {
		double expect = measured / (strtod(w, NULL) - strtod(rep, NULL));
		CU_ASSERT_DOUBLE_EQUAL(strtod(share, NULL), expect, 1e-6);
		/* Written before the report's own time was recorded (and the
		 * store write recording it). */
		CU_ASSERT_DOUBLE_EQUAL(strtod(w, NULL), sum - cat_of(db, NULL, "report"), 0.05);
		CU_ASSERT_EQUAL(strtod(rep, NULL), 0);
		CU_ASSERT_TRUE(strtod(share, NULL) > 0.1 && strtod(share, NULL) < 0.9);
	}
	char *lest = csv_field(csv, "layout_total", "estimate");
	CU_ASSERT_TRUE(lest && fabs(strtod(lest, NULL) - est) < 1e-6);
	char *pz = csv_field(csv, "cell", "module");
	CU_ASSERT_STRING_EQUAL(pz ? pz : "", "pause"); /* the first cell's row */
	free(share);
	free(w);
	free(rep);
	free(lest);
	free(pz);
	free(csv);

	/* report.html's Methods: the breakdown, the share, the estimate. */
	sb_reset(&p);
	sb_addf(&p, "%s/report.html", out.buf);
	char *html = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(html);
	const char *m = strstr(html, "<h2 id=\"methods\">");
	const char *tm = m ? strstr(m, "<h3 id=\"time\">Where the time went</h3>") : NULL;
	CU_ASSERT_PTR_NOT_NULL(tm);
	CU_ASSERT_PTR_NOT_NULL(tm ? strstr(tm, "a measured share of <b>") : NULL);
	CU_ASSERT_PTR_NOT_NULL(tm ? strstr(tm, "<th class=\"num\">wall / estimate</th>") : NULL);
	CU_ASSERT_PTR_NOT_NULL(tm ? strstr(tm, "<th class=\"num\">pause (s)</th>") : NULL);
	CU_ASSERT_PTR_NOT_NULL(tm ? strstr(tm, "2 tree (2 cells)") : NULL);
	/* The first report cannot hold its own time; a redraw does. */
	CU_ASSERT_PTR_NOT_NULL(tm ? strstr(tm, "Report generation is recorded after") : NULL);
	free(html);
	const char *redraw[] = { "report", out.buf, NULL };
	char *o = NULL;
	CU_ASSERT_EQUAL(test_run_rig(redraw, &o), 0);
	free(o);
	html = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL(html ? strstr(html, "Writing the reports after the run took") : NULL);
	free(html);

	/* results.json carries the same totals. */
	sb_reset(&p);
	sb_addf(&p, "%s/results.json", out.buf);
	char *json = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL(json ? strstr(json, "\"time\":{\"recorded\":true,") : NULL);
	CU_ASSERT_PTR_NOT_NULL(json ? strstr(json, "\"measured_share\":") : NULL);
	free(json);

	from_run(tmp, text.buf, out.buf, db);

	sb_release(&text);
	sb_release(&out);
	sb_release(&p);
	sb_release(&dbp);
	test_rmtree(tmp);
	free(tmp);
}

/* --- an older store --- */

static void test_v3_store(void)
{
	char *tmp = test_tmpdir();
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&path, "%s/v3.db", tmp);
	struct store *s = store_create(path.buf, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(sqlite3_exec(store_db(s), V5_DOWN "DROP TABLE time_spent;"
				     " DROP TABLE estimates; PRAGMA user_version = 3;", NULL, NULL, NULL),
			SQLITE_OK);
	store_close(s);
	/* Read-only: empty tables in their place, the file unchanged. */
	s = store_open(path.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	sqlite3_stmt *st = NULL;
	CU_ASSERT_EQUAL(sqlite3_prepare_v2(store_db(s), "SELECT (SELECT count(*) FROM time_spent)"
					   " + (SELECT count(*) FROM estimates),"
					   " (SELECT user_version FROM pragma_user_version)", -1, &st,
					   NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
	CU_ASSERT_EQUAL(sqlite3_column_int(st, 0), 0);
	CU_ASSERT_EQUAL(sqlite3_column_int(st, 1), 3);
	sqlite3_finalize(st);
	store_close(s);
	/* Read-write: migrated, and the accounting can be written. */
	s = store_open(path.buf, 0, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	const char *cats[] = { "setup", "measured" };
	double secs[] = { 1.5, 2.5 };
	struct store_time t = { .layout_index = -1, .categories = cats, .seconds = secs, .n = 2 };
	CU_ASSERT_EQUAL(store_add_times(s, &t, &err), 0);
	/* A category the schema does not know is refused, nothing written. */
	const char *bad[] = { "setup", "thinking" };
	t.categories = bad;
	CU_ASSERT_EQUAL(store_add_times(s, &t, &err), -EIO);
	struct store_estimate e = { .layout_index = 0, .layout = "", .seconds = 3 };
	CU_ASSERT_EQUAL(store_add_estimate(s, &e, &err), 0);
	CU_ASSERT_EQUAL(sqlite3_prepare_v2(store_db(s), "SELECT sum(seconds),"
					   " (SELECT user_version FROM pragma_user_version)"
					   " FROM time_spent", -1, &st, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
	CU_ASSERT_DOUBLE_EQUAL(sqlite3_column_double(st, 0), 4.0, 1e-9);
	CU_ASSERT_EQUAL(sqlite3_column_int(st, 1), STORE_SCHEMA_VERSION);
	sqlite3_finalize(st);
	store_close(s);
	sb_release(&path);
	sb_release(&err);
	test_rmtree(tmp);
	free(tmp);
}

void register_run_time_tests(void)
{
	CU_pSuite s = test_suite_e2e("time accounting");
	test_suite_alone(s, "the accounted seconds against the process's wall time");
	test_add(s, "the accountant: categories add up, marks are the module's instants",
		 test_accountant);
	test_add(s, "a run records where its time went; report, time.csv, results.json, plan --from",
		 test_run_accounting);
	test_add(s, "a version 3 store: read without it, migrated to write it", test_v3_store);
}
