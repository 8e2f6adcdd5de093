/*
 * Tests of the shared store (rig/store_pg*.c). Without a server: the
 * connection string's password rule, run references, COPY's text format
 * both ways, exact doubles, and the table list against the SQLite store's
 * schema (every table and column, with its type), so that a new column of
 * the SQLite store cannot be left out of a push unnoticed.
 *
 * With a server ($RIG_TEST_PG_URL, which tests/pg/pg-test sets; SKIPPED
 * otherwise): a store with awkward values (tabs, newlines, backslashes,
 * quotes, infinities, -0, NULLs, the largest integers) pushed and pulled
 * back holds exactly the same rows, compared by SQL value for value.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "store/store_pg.h"
#include "store/store_pg_int.h"
#include "test.h"

static void test_conninfo(void)
{
	static const char *const ok[] = {
		"postgresql:///lab?host=/tmp/x",
		"postgres://rig@db.lab:5432/results",
		"postgresql://rig:@db.lab/results", /* an empty password is none */
		"host=/tmp dbname=lab user=rig",
		"service=lab",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		CU_ASSERT_EQUAL(rep_pg_check_conninfo(ok[i], &err), 0);
		if (err.len)
			fprintf(stderr, "%s: %s\n", ok[i], err.buf);
		sb_release(&err);
	}
	static const char *const with_pw[] = {
		"postgresql://rig:Sekr1t@db.lab/results",
		"postgresql://db.lab/results?password=Sekr1t",
		"host=db.lab password=Sekr1t dbname=results",
	};
	for (size_t i = 0; i < sizeof(with_pw) / sizeof(with_pw[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		CU_ASSERT_EQUAL(rep_pg_check_conninfo(with_pw[i], &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "~/.pgpass or in PGPASSWORD"));
		CU_ASSERT_PTR_NULL(strstr(err.buf, "Sekr1t")); /* never echoed */
		sb_release(&err);
	}
	static const char *const bad[] = { "", "runs/20240101T000000Z-quick", "postgresql://[x",
					   "postgresql://rig:Sekr1t@[db.lab/results" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		CU_ASSERT_EQUAL(rep_pg_check_conninfo(bad[i], &err), -EINVAL);
		CU_ASSERT(err.len > 0);
		CU_ASSERT_PTR_NULL(strstr(err.buf, "Sekr1t")); /* libpq quotes a bad URL whole */
		sb_release(&err);
	}
}

static void test_refs(void)
{
	char *host, *id;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(rep_pg_parse_ref("h1/fleet-quick-1a2b", &host, &id, &err), 0);
	CU_ASSERT_STRING_EQUAL(host, "h1");
	CU_ASSERT_STRING_EQUAL(id, "fleet-quick-1a2b");
	free(host);
	free(id);
	CU_ASSERT_EQUAL(rep_pg_parse_ref("20240101T000000Z-quick", &host, &id, &err), 0);
	CU_ASSERT_PTR_NULL(host);
	CU_ASSERT_STRING_EQUAL(id, "20240101T000000Z-quick");
	free(id);
	static const char *const bad[] = { "", "/run", "h1/", "results/h1/run" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sb_reset(&err);
		CU_ASSERT_EQUAL(rep_pg_parse_ref(bad[i], &host, &id, &err), -EINVAL);
		CU_ASSERT_PTR_NULL(host);
		CU_ASSERT_PTR_NULL(id);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "HOST/RUN"));
	}
	sb_release(&err);
}

static void test_copy_text(void)
{
	static const char *const cases[] = { "", "plain", "tab\there", "line\nbreak\r\n",
					     "back\\slash\\N", "\\", "µs \"quoted\" 'x'" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		rep_pg_copy_text(&sb, cases[i], strlen(cases[i]));
		CU_ASSERT_PTR_NULL(memchr(sb.buf, '\t', sb.len)); /* fields stay apart */
		CU_ASSERT_PTR_NULL(memchr(sb.buf, '\n', sb.len)); /* rows stay apart */
		long n = rep_pg_copy_field(sb.buf, sb.len);
		CU_ASSERT_EQUAL(n, (long)strlen(cases[i]));
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i]);
		sb_release(&sb);
	}
	struct strbuf sb = STRBUF_INIT;
	rep_pg_copy_text(&sb, NULL, 0);
	CU_ASSERT_STRING_EQUAL(sb.buf, "\\N");
	CU_ASSERT_EQUAL(rep_pg_copy_field(sb.buf, sb.len), -1);
	sb_reset(&sb);
	/* What the server may send besides: other escapes, octal, hex. */
	sb_adds(&sb, "\\101\\x42\\b\\f\\v\\q");
	CU_ASSERT_EQUAL(rep_pg_copy_field(sb.buf, sb.len), 6);
	CU_ASSERT_STRING_EQUAL(sb.buf, "AB\b\f\vq");
	sb_release(&sb);
}

static void test_copy_double(void)
{
	const double cases[] = { 0.1, 1.0 / 3, -0.0, 0, 1e300, 5e-324, 123456789012345678.0,
				 -2.5, INFINITY, -INFINITY };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		rep_pg_copy_double(&sb, cases[i]);
		double back = strtod(sb.buf, NULL); /* PostgreSQL's float8in reads the same */
		CU_ASSERT_EQUAL(memcmp(&back, &cases[i], sizeof(back)), 0);
		if (isinf(cases[i]))
			CU_ASSERT_STRING_EQUAL(sb.buf, cases[i] > 0 ? "Infinity" : "-Infinity");
		sb_release(&sb);
	}
	struct strbuf sb = STRBUF_INIT;
	rep_pg_copy_double(&sb, NAN);
	CU_ASSERT_STRING_EQUAL(sb.buf, "NaN");
	sb_release(&sb);
}

static char *store_in(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", dir, name);
	return sb_detach(&sb);
}

/* Every table and column of a new SQLite store is in the list, typed. */
static void test_tables_match_store(void)
{
	char *dir = test_tmpdir();
	char *path = store_in(dir, "results.db");
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_create(path, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st = NULL;
	size_t ntables = 0;
	CU_ASSERT_EQUAL(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
					   -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		ntables = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	CU_ASSERT_EQUAL(ntables, store_pg_ntables);
	for (size_t i = 0; i < store_pg_ntables; i++) {
		const struct pgs_table *t = &store_pg_tables[i];
		struct strbuf sql = STRBUF_INIT, want = STRBUF_INIT, got = STRBUF_INIT;
		sb_addf(&sql, "SELECT name, type FROM pragma_table_info('%s') ORDER BY cid", t->sqlite);
		CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL), SQLITE_OK);
		size_t ncols = 0;
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *type = (const char *)sqlite3_column_text(st, 1);
			sb_addf(&got, "%s%s:%c", ncols++ ? ", " : "", sqlite3_column_text(st, 0),
				!strcmp(type, "INTEGER") ? 'i' : !strcmp(type, "REAL") ? 'r' : 't');
		}
		sqlite3_finalize(st);
		/* The list's columns in its order, each with its letter. */
		const char *c = t->cols;
		for (size_t k = 0; k < strlen(t->types); k++) {
			size_t n = strcspn(c, ",");
			sb_addf(&want, "%s%.*s:%c", k ? ", " : "", (int)n, c, t->types[k]);
			c += n;
			c += strspn(c, ", ");
		}
		CU_ASSERT_EQUAL(*c, '\0');
		if (strcmp(want.buf, got.buf))
			fprintf(stderr, "\n%s: list %s\n%s: store %s\n", t->sqlite, want.buf, t->sqlite, got.buf);
		CU_ASSERT_STRING_EQUAL(want.buf, got.buf);
		sb_release(&sql);
		sb_release(&want);
		sb_release(&got);
	}
	store_close(s);
	sb_release(&err);
	free(path);
	test_rmtree(dir);
	free(dir);
}

/* --- with a server ------------------------------------------------------ */

static const char *server_url(void)
{
	const char *url = getenv("RIG_TEST_PG_URL");
	if (!url || !*url) {
		printf("\n  SKIPPED: no PostgreSQL server ($RIG_TEST_PG_URL; tests/pg/pg-test sets it)\n");
		return NULL;
	}
	return url;
}

/* A run with values that COPY's text format and doubles must carry. */
static void awkward_store(const char *path)
{
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_create(path, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	const struct store_run r = {
		.id = "awkward", .plan_name = "tab\tand\nnewline", .plan_text = "a: \\\\ b\r\n",
		.seed = UINT64_MAX, .host = "h\\1", .started_utc = "2024-01-01T00:00:00Z",
		.options_json = "{\"vars\": [\"x=\\t\"]}",
	};
	CU_ASSERT_EQUAL(store_begin_run(s, &r, &err), 0);
	struct store_volume v = { .layout = "", .name = "a", .position = 1, .has_offsets = 1,
				  .offset_start = 0, .offset_end = (uint64_t)INT64_MAX, .dir = "/x\ty" };
	CU_ASSERT_EQUAL(store_add_volume(s, &v, &err), 0);
	struct store_cell c = { .seq = 1, .phase = 1, .layout = "", .rep = 1, .step = "1",
				.module = "null", .volume_id = v.id, .sweep_var = "n", .sweep_value = "\\N" };
	CU_ASSERT_EQUAL(store_cell_start(s, &c, "2024-01-01T00:00:01Z", &err), 0);
	const double vals[] = { 0.1, 1.0 / 3, -0.0, INFINITY, -INFINITY, NAN, 1e-310, 1.7976931348623157e308 };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		CU_ASSERT_EQUAL(store_add_sample(s, 1, "m\\", vals[i], "µs", "\n", &err), 0);
	CU_ASSERT_EQUAL(store_add_file_sample(s, 1, "dir/f\"1\"", (uint64_t)INT64_MAX, 0.25, &err), 0);
	CU_ASSERT_EQUAL(store_add_note(s, 0, "run note", NULL, &err), 0);
	CU_ASSERT_EQUAL(store_add_command(s, "2024-01-01T00:00:02Z", "sh -c 'x'", -1, NAN, "out\r\n\t", &err), 0);
	CU_ASSERT_EQUAL(store_cell_end(s, 1, "2024-01-01T00:00:03Z", "done", NULL, &err), 0);
	CU_ASSERT_EQUAL(store_end_run(s, "2024-01-01T00:00:04Z", "completed", NULL, &err), 0);
	if (err.len)
		fprintf(stderr, "%s\n", err.buf);
	store_close(s);
	sb_release(&err);
}

static void test_round_trip(void)
{
	const char *url = server_url();
	if (!url)
		return;
	char *dir = test_tmpdir();
	char *run = store_in(dir, "awkward"), *path = store_in(run, "results.db");
	char *back = store_in(dir, "back.db");
	CU_ASSERT_EQUAL_FATAL(mkdir(run, 0777), 0);
	awkward_store(path);
	struct strbuf err = STRBUF_INIT;
	struct pgstore *p = store_pg_connect(url, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	struct pgstore_pushed out;
	CU_ASSERT_EQUAL(rep_pg_push(p, run, "unit-test", &out, &err), 0);
	CU_ASSERT(!strcmp(out.outcome, "stored") || !strcmp(out.outcome, "unchanged"));
	CU_ASSERT_EQUAL(rep_pg_push(p, run, "unit-test", &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(out.outcome, "unchanged");
	CU_ASSERT_EQUAL(store_pg_pull(p, "unit-test/awkward", back, &err), 0);
	if (err.len)
		fprintf(stderr, "%s\n", err.buf);
	/* Both ways, every table: the same rows, value for value. */
	sqlite3 *db = NULL;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
	struct strbuf sql = STRBUF_INIT;
	sb_addf(&sql, "ATTACH '%s' AS b", back);
	CU_ASSERT_EQUAL(sqlite3_exec(db, sql.buf, NULL, NULL, NULL), SQLITE_OK);
	for (size_t i = 0; i < store_pg_ntables; i++) {
		const char *t = store_pg_tables[i].sqlite;
		sb_reset(&sql);
		sb_addf(&sql, "SELECT (SELECT count(*) FROM main.%s), (SELECT count(*) FROM b.%s),"
			" (SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM b.%s)),"
			" (SELECT count(*) FROM (SELECT * FROM b.%s EXCEPT SELECT * FROM main.%s))",
			t, t, t, t, t, t);
		sqlite3_stmt *st = NULL;
		CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL), SQLITE_OK);
		CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
		CU_ASSERT_EQUAL(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
		CU_ASSERT_EQUAL(sqlite3_column_int64(st, 2), 0);
		CU_ASSERT_EQUAL(sqlite3_column_int64(st, 3), 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	/* A missing run and an existing file are refused; nothing is left. */
	sb_reset(&err);
	char *none = store_in(dir, "none.db");
	CU_ASSERT_EQUAL(store_pg_pull(p, "unit-test/no-such-run", none, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "no run unit-test/no-such-run"));
	CU_ASSERT_NOT_EQUAL(access(none, F_OK), 0);
	CU_ASSERT(store_pg_pull(p, "unit-test/awkward", back, &err) < 0);
	store_pg_close(p);
	sb_release(&sql);
	sb_release(&err);
	free(none);
	free(back);
	free(path);
	free(run);
	test_rmtree(dir);
	free(dir);
}

void register_store_pg_tests(void);
void register_store_pg_tests(void)
{
	CU_pSuite s = test_suite("shared store");
	test_add(s, "a connection string with a password is refused, never echoed", test_conninfo);
	test_add(s, "run references are RUN or HOST/RUN", test_refs);
	test_add(s, "COPY text escapes and unescapes every byte that matters", test_copy_text);
	test_add(s, "doubles travel exactly, infinities as PostgreSQL spells them", test_copy_double);
	test_add(s, "the table list is the SQLite store's schema, column for column",
		 test_tables_match_store);
	test_add(s, "push and pull of awkward values give back the same rows (server)",
		 test_round_trip);
}
