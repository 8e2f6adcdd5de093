/*
 * Tests of store/store.c: a full round trip through a real SQLite file,
 * refusal of wrong files and versions, appending after a reopen, and
 * durability (a second connection, and a child process that dies without
 * closing the store, both see every sample the moment the call returned).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "test.h"

/* --- helpers --- */

static char *db_path(const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/results.db", dir);
	return sb_detach(&sb);
}

/* Run a query expected to return one row; the first column as text
 * (NULL for SQL NULL or no row). Caller frees. */
static char *q_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char *r = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
		return NULL;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		r = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r;
}

static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t r = -999;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
		return r;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		r = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return r;
}

static double q_double(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	double r = -999;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return r;
	if (sqlite3_step(st) == SQLITE_ROW)
		r = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return r;
}

static int q_is_null(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int r = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return r;
	if (sqlite3_step(st) == SQLITE_ROW)
		r = sqlite3_column_type(st, 0) == SQLITE_NULL;
	sqlite3_finalize(st);
	return r;
}

#define ASSERT_Q_TEXT(db, sql, want)                                           \
	do {                                                                   \
		char *got_ = q_text((db), (sql));                              \
		CU_ASSERT_PTR_NOT_NULL(got_);                                  \
		if (got_) {                                                    \
			CU_ASSERT_STRING_EQUAL(got_, (want));                  \
			if (strcmp(got_, (want)))                              \
				fprintf(stderr, "%s: got '%s', want '%s'\n",  \
					(sql), got_, (want));                  \
		}                                                              \
		free(got_);                                                    \
	} while (0)

static const struct store_run test_run = {
	.id = "20240101T000000Z-quick",
	.plan_name = "quick",
	.plan_file = "configs/quick.yaml",
	.plan_text = "rig: 1\nname: quick\n",
	.plan_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	.seed = UINT64_MAX, /* all 64 bits must survive */
	.seed_drawn = 1,
	.rig_version = "0.1.0",
	.host = "testhost",
	.os = "Linux 6.1.0 x86_64",
	.started_utc = "2024-01-01T00:00:00Z",
	.platform = "linux",
	.argv = "rig run configs/quick.yaml",
};

/* A store with a run, two volumes and `ncells` cells alternating over them. */
static struct store *make_store(const char *path, int64_t vid[2], uint32_t ncells)
{
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_create(path, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(store_begin_run(s, &test_run, &err), 0);
	struct store_volume a = {
		.layout = "apfs-first", .layout_index = 0, .name = "APFS", .fs = "apfs",
		.position = 1, .has_offsets = 1, .offset_start = 20480,
		.offset_end = UINT64_C(1000204886016), .device = "/dev/disk4s2",
		.dir = "/Volumes/APFS", .facts_json = "{\"model\":\"WDC\"}",
	};
	struct store_volume b = {
		.layout = "apfs-first", .layout_index = 0, .name = "HFS", .fs = "hfs+",
		.position = 2, .dir = "/Volumes/HFS",
	};
	CU_ASSERT_EQUAL(store_add_volume(s, &a, &err), 0);
	CU_ASSERT_EQUAL(store_add_volume(s, &b, &err), 0);
	CU_ASSERT(a.id > 0 && b.id > 0 && a.id != b.id);
	vid[0] = a.id;
	vid[1] = b.id;
	for (uint32_t i = 1; i <= ncells; i++) {
		struct store_cell c = {
			.seq = i, .phase = (i + 1) / 2, .layout = "apfs-first", .rep = 1,
			.step = "1", .module = "write", .volume_id = vid[(i - 1) % 2],
		};
		CU_ASSERT_EQUAL(store_cell_start(s, &c, "2024-01-01T00:00:01Z", &err), 0);
	}
	if (err.len)
		fprintf(stderr, "make_store: %s\n", err.buf);
	sb_release(&err);
	return s;
}

/* --- tests --- */

static void test_round_trip(void)
{
	char *dir = test_tmpdir();
	char *path = db_path(dir);
	struct strbuf err = STRBUF_INIT;
	int64_t vid[2];
	struct store *s = make_store(path, vid, 0);

	struct store_cell c1 = {
		.seq = 1, .phase = 1, .layout = "apfs-first", .rep = 1, .step = "2.cycle3.1",
		.module = "enumerate", .volume_id = vid[0], .cycle = 3,
	};
	struct store_cell c2 = {
		.seq = 2, .phase = 1, .layout = "apfs-first", .rep = 1, .step = "3.sweep1.2",
		.module = "write", .volume_id = vid[1], .sweep_var = "fill",
		.sweep_value = "90%",
	};
	CU_ASSERT_EQUAL(store_cell_start(s, &c1, "2024-01-01T00:00:01Z", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "seconds", 1.5, "s", "direct", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "entries_per_s", 0.1, "1/s", "direct", &err), 0);
	CU_ASSERT_EQUAL(store_add_note(s, 1, "used_before", "12%", &err), 0);
	CU_ASSERT_EQUAL(store_cell_end(s, 1, "2024-01-01T00:00:02Z", "done", NULL, &err), 0);
	CU_ASSERT_EQUAL(store_cell_start(s, &c2, "2024-01-01T00:00:03Z", &err), 0);
	CU_ASSERT_EQUAL(store_add_file_sample(s, 2, "f0001", 2097152, 0.25, &err), 0);
	CU_ASSERT_EQUAL(store_add_file_sample(s, 2, "f0002", UINT64_C(2147483648), 3.0, &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 2, "rate", 123.456, "MB/s", NULL, &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 2, "rate_fit", NAN, "MB/s", "", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 2, "overhead_fit", INFINITY, "s", "", &err), 0);
	CU_ASSERT_EQUAL(store_cell_end(s, 2, "2024-01-01T00:00:04Z", "failed",
				       "cannot write f0003: No space left on device", &err), 0);
	CU_ASSERT_EQUAL(store_add_note(s, 0, "cache", "direct only: not root", &err), 0);
	CU_ASSERT_EQUAL(store_add_command(s, "2024-01-01T00:00:00Z", "mkfs.ext4 -F /dev/loop0",
					  0, 0.75, "mke2fs 1.47.0\n", &err), 0);
	CU_ASSERT_EQUAL(store_add_event(s, "2024-01-01T00:00:00Z", "warning",
					"cannot drop caches: not root", &err), 0);
	CU_ASSERT_EQUAL(store_end_run(s, "2024-01-01T00:01:00Z", "completed", NULL, &err), 0);
	if (err.len)
		fprintf(stderr, "round trip: %s\n", err.buf);
	CU_ASSERT_EQUAL(err.len, 0);
	store_close(s);

	s = store_open(path, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	sqlite3 *db = store_db(s);
	CU_ASSERT_EQUAL(q_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ASSERT_Q_TEXT(db, "PRAGMA journal_mode", "wal");
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM run"), 1);
	ASSERT_Q_TEXT(db, "SELECT id FROM run", test_run.id);
	ASSERT_Q_TEXT(db, "SELECT plan_name FROM run", "quick");
	ASSERT_Q_TEXT(db, "SELECT plan_text FROM run", test_run.plan_text);
	ASSERT_Q_TEXT(db, "SELECT plan_sha256 FROM run", test_run.plan_sha256);
	ASSERT_Q_TEXT(db, "SELECT seed FROM run", "18446744073709551615");
	CU_ASSERT_EQUAL(q_int(db, "SELECT seed_drawn FROM run"), 1);
	ASSERT_Q_TEXT(db, "SELECT os FROM run", "Linux 6.1.0 x86_64");
	ASSERT_Q_TEXT(db, "SELECT platform FROM run", "linux");
	ASSERT_Q_TEXT(db, "SELECT argv FROM run", test_run.argv);
	ASSERT_Q_TEXT(db, "SELECT status FROM run", "completed");
	ASSERT_Q_TEXT(db, "SELECT ended_utc FROM run", "2024-01-01T00:01:00Z");
	CU_ASSERT_EQUAL(q_is_null(db, "SELECT error FROM run"), 1);

	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM volumes"), 2);
	CU_ASSERT_EQUAL(q_int(db, "SELECT offset_end FROM volumes WHERE name = 'APFS'"),
			INT64_C(1000204886016));
	CU_ASSERT_EQUAL(q_is_null(db, "SELECT offset_start FROM volumes WHERE name = 'HFS'"), 1);
	CU_ASSERT_EQUAL(q_is_null(db, "SELECT device FROM volumes WHERE name = 'HFS'"), 1);
	ASSERT_Q_TEXT(db, "SELECT facts_json FROM volumes WHERE name = 'APFS'",
		      "{\"model\":\"WDC\"}");
	CU_ASSERT_EQUAL(q_int(db, "SELECT position FROM volumes WHERE name = 'HFS'"), 2);

	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM cells"), 2);
	CU_ASSERT_EQUAL(q_int(db, "SELECT cycle FROM cells WHERE seq = 1"), 3);
	CU_ASSERT_EQUAL(q_is_null(db, "SELECT cycle FROM cells WHERE seq = 2"), 1);
	CU_ASSERT_EQUAL(q_is_null(db, "SELECT sweep_var FROM cells WHERE seq = 1"), 1);
	ASSERT_Q_TEXT(db, "SELECT sweep_value FROM cells WHERE seq = 2", "90%");
	ASSERT_Q_TEXT(db, "SELECT step FROM cells WHERE seq = 1", "2.cycle3.1");
	ASSERT_Q_TEXT(db, "SELECT status FROM cells WHERE seq = 1", "done");
	ASSERT_Q_TEXT(db, "SELECT status FROM cells WHERE seq = 2", "failed");
	ASSERT_Q_TEXT(db, "SELECT error FROM cells WHERE seq = 2",
		      "cannot write f0003: No space left on device");
	ASSERT_Q_TEXT(db, "SELECT end_utc FROM cells WHERE seq = 1", "2024-01-01T00:00:02Z");

	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM samples"), 5);
	CU_ASSERT_EQUAL(q_double(db, "SELECT value FROM samples WHERE metric = 'entries_per_s'"),
			0.1);
	CU_ASSERT_EQUAL(q_double(db, "SELECT value FROM samples WHERE metric = 'rate'"), 123.456);
	ASSERT_Q_TEXT(db, "SELECT unit FROM samples WHERE metric = 'rate'", "MB/s");
	ASSERT_Q_TEXT(db, "SELECT cache FROM samples WHERE metric = 'seconds'", "direct");
	ASSERT_Q_TEXT(db, "SELECT cache FROM samples WHERE metric = 'rate'", "");
	CU_ASSERT_EQUAL(q_is_null(db, "SELECT value FROM samples WHERE metric = 'rate_fit'"), 1);
	CU_ASSERT(isinf(q_double(db, "SELECT value FROM samples WHERE metric = 'overhead_fit'")));

	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM file_samples"), 2);
	CU_ASSERT_EQUAL(q_int(db, "SELECT bytes FROM file_samples WHERE file = 'f0002'"),
			INT64_C(2147483648));
	CU_ASSERT_EQUAL(q_double(db, "SELECT seconds FROM file_samples WHERE file = 'f0001'"),
			0.25);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM notes"), 2);
	ASSERT_Q_TEXT(db, "SELECT value FROM notes WHERE seq = 1 AND key = 'used_before'", "12%");
	ASSERT_Q_TEXT(db, "SELECT value FROM notes WHERE seq IS NULL", "direct only: not root");
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM commands"), 1);
	ASSERT_Q_TEXT(db, "SELECT output FROM commands", "mke2fs 1.47.0\n");
	CU_ASSERT_EQUAL(q_double(db, "SELECT seconds FROM commands"), 0.75);
	CU_ASSERT_EQUAL(q_int(db, "SELECT status FROM commands"), 0);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM events"), 1);
	ASSERT_Q_TEXT(db, "SELECT level || ': ' || msg FROM events",
		      "warning: cannot drop caches: not root");

	/* Read-only means read-only. */
	sb_reset(&err);
	CU_ASSERT_EQUAL(store_add_event(s, "2024-01-01T00:02:00Z", "info", "x", &err), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot record an event in results store "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "readonly"));
	store_close(s);

	sb_release(&err);
	free(path);
	test_rmtree(dir);
	free(dir);
}

/* Set a header field of an existing store with a raw connection. */
static void set_pragma(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void expect_open_fails(const char *path, int readonly, const char *want1,
			      const char *want2)
{
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_open(path, readonly, &err);
	CU_ASSERT_PTR_NULL(s);
	if (s)
		store_close(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, want1));
	if (want2)
		CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, want2));
	if (!strstr(err.buf, want1) || (want2 && !strstr(err.buf, want2)))
		fprintf(stderr, "open error was: %s\n", err.buf);
	sb_release(&err);
}

static void test_wrong_files(void)
{
	char *dir = test_tmpdir();
	char *path = db_path(dir);
	struct strbuf msg = STRBUF_INIT;

	/* Missing. */
	sb_addf(&msg, "cannot open results store %s: No such file or directory", path);
	expect_open_fails(path, 1, msg.buf, NULL);

	/* Newer and older schema versions. */
	int64_t vid[2];
	store_close(make_store(path, vid, 0));
	sb_reset(&msg);
	sb_addf(&msg, "cannot open results store %s: schema version %d is newer", path,
		STORE_SCHEMA_VERSION + 1);
	set_pragma(path, "PRAGMA user_version = 6");
	expect_open_fails(path, 1, msg.buf, "use a newer rig");
	expect_open_fails(path, 0, msg.buf, NULL);
	set_pragma(path, "PRAGMA user_version = 0");
	expect_open_fails(path, 0, "schema version 0 is older than the version this rig reads (5)",
			  NULL);
	set_pragma(path, V5_DOWN "PRAGMA user_version = 4");
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_open(path, 0, &err);
	CU_ASSERT_PTR_NOT_NULL(s);
	store_close(s);

	/* Another application's SQLite database. */
	set_pragma(path, "PRAGMA application_id = 42");
	expect_open_fails(path, 1, "not a rig results store", "application_id 42");

	/* Not a database at all, and an empty file. */
	struct strbuf txtpath = STRBUF_INIT;
	sb_addf(&txtpath, "%s/results.csv", dir);
	char *txt = sb_detach(&txtpath);
	CU_ASSERT_EQUAL(test_write_file(txt, "run,layout\nthis is a csv file, not sqlite\n"), 0);
	expect_open_fails(txt, 1, "not a rig results store", NULL);
	expect_open_fails(txt, 0, "not a rig results store", NULL);
	CU_ASSERT_EQUAL(test_write_file(txt, ""), 0);
	expect_open_fails(txt, 1, "not a rig results store", NULL);

	/* A directory. */
	expect_open_fails(dir, 1, "not a regular file", NULL);

	sb_release(&err);
	sb_release(&msg);
	free(txt);
	free(path);
	test_rmtree(dir);
	free(dir);
}

static void test_create_refuses_existing(void)
{
	char *dir = test_tmpdir();
	char *path = db_path(dir);
	struct strbuf err = STRBUF_INIT;

	CU_ASSERT_EQUAL(test_write_file(path, "precious"), 0);
	struct store *s = store_create(path, &err);
	CU_ASSERT_PTR_NULL(s);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "cannot create results store %s: the file already exists", path);
	CU_ASSERT_STRING_EQUAL(err.buf, want.buf);
	char *text = test_read_file(path, NULL);
	CU_ASSERT_STRING_EQUAL(text, "precious");
	free(text);

	/* A real store is not overwritten either. */
	unlink(path);
	s = store_create(path, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	store_close(s);
	sb_reset(&err);
	CU_ASSERT_PTR_NULL(store_create(path, &err));
	CU_ASSERT_STRING_EQUAL(err.buf, want.buf);

	/* A directory that does not exist: named, and nothing left behind. */
	sb_reset(&err);
	sb_reset(&want);
	sb_addf(&want, "%s/nope/results.db", dir);
	CU_ASSERT_PTR_NULL(store_create(want.buf, &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot create results store "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "No such file or directory"));

	sb_release(&want);
	sb_release(&err);
	free(path);
	test_rmtree(dir);
	free(dir);
}

/* Misuse is refused with the thing named, and leaves the store usable. */
static void test_errors(void)
{
	char *dir = test_tmpdir();
	char *path = db_path(dir);
	struct strbuf err = STRBUF_INIT;
	int64_t vid[2];
	struct store *s = make_store(path, vid, 1);

	/* A sample for a cell that was never started: foreign key. */
	CU_ASSERT_EQUAL(store_add_sample(s, 99, "rate", 1, "MB/s", "", &err), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf,
				      "cannot record sample 'rate' of cell 99 in results store "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "FOREIGN KEY"));
	sb_reset(&err);
	CU_ASSERT_EQUAL(store_add_file_sample(s, 99, "f", 1, 1, &err), -EIO);
	sb_reset(&err);
	/* A cell on a volume that does not exist. */
	struct store_cell c = { .seq = 5, .phase = 3, .layout = "", .rep = 1, .step = "1",
				.module = "null", .volume_id = 12345 };
	CU_ASSERT_EQUAL(store_cell_start(s, &c, "t", &err), -EIO);
	sb_reset(&err);
	/* The same seq twice. */
	c.volume_id = vid[0];
	c.seq = 1;
	CU_ASSERT_EQUAL(store_cell_start(s, &c, "t", &err), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot record the start of cell 1 in results"
					      " store "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "UNIQUE constraint failed: cells.seq"));
	sb_reset(&err);
	/* Ending a cell that was not started. */
	CU_ASSERT_EQUAL(store_cell_end(s, 7, "t", "done", NULL, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot record the end of cell 7 in results store "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "the cell was never started"));
	sb_reset(&err);
	/* Statuses outside the documented sets. */
	CU_ASSERT_EQUAL(store_cell_end(s, 1, "t", "finished", NULL, &err), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "CHECK constraint failed"));
	sb_reset(&err);
	CU_ASSERT_EQUAL(store_end_run(s, "t", "ok", NULL, &err), -EIO);
	sb_reset(&err);
	/* A second run. */
	CU_ASSERT_EQUAL(store_begin_run(s, &test_run, &err), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "holds exactly one run"));
	sb_reset(&err);
	/* Byte counts beyond SQLite's signed integers. */
	CU_ASSERT_EQUAL(store_add_file_sample(s, 1, "f", UINT64_MAX, 1, &err), -ERANGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "18446744073709551615"));
	sb_reset(&err);

	/* Still usable after all that, with nothing half-written. */
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "rate", 2, "MB/s", "", &err), 0);
	CU_ASSERT_EQUAL(store_cell_end(s, 1, "t", "done", NULL, &err), 0);
	CU_ASSERT_EQUAL(q_int(store_db(s), "SELECT count(*) FROM samples"), 1);
	CU_ASSERT_EQUAL(q_int(store_db(s), "SELECT count(*) FROM file_samples"), 0);
	CU_ASSERT_EQUAL(q_int(store_db(s), "SELECT count(*) FROM cells"), 1);
	CU_ASSERT_EQUAL(q_int(store_db(s), "SELECT count(*) FROM run"), 1);
	store_close(s);

	/* store_end_run without store_begin_run */
	unlink(path);
	s = store_create(path, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(store_end_run(s, "t", "failed", "x", &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "no run was begun"));
	store_close(s);

	sb_release(&err);
	free(path);
	test_rmtree(dir);
	free(dir);
}

/* A committed sample is visible to an independent connection at once. */
static void test_durable_second_connection(void)
{
	char *dir = test_tmpdir();
	char *path = db_path(dir);
	struct strbuf err = STRBUF_INIT;
	int64_t vid[2];
	struct store *s = make_store(path, vid, 1);

	sqlite3 *other = NULL;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &other, SQLITE_OPEN_READONLY, NULL),
			      SQLITE_OK);
	CU_ASSERT_EQUAL(q_int(other, "SELECT count(*) FROM samples"), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "rate", 98.25, "MB/s", "direct", &err), 0);
	CU_ASSERT_EQUAL(q_int(other, "SELECT count(*) FROM samples"), 1);
	CU_ASSERT_EQUAL(q_double(other, "SELECT value FROM samples"), 98.25);
	CU_ASSERT_EQUAL(store_add_file_sample(s, 1, "f1", 4096, 0.5, &err), 0);
	CU_ASSERT_EQUAL(q_int(other, "SELECT bytes FROM file_samples"), 4096);
	ASSERT_Q_TEXT(other, "SELECT status FROM cells WHERE seq = 1", "running");
	CU_ASSERT_EQUAL(store_cell_end(s, 1, "t", "done", NULL, &err), 0);
	ASSERT_Q_TEXT(other, "SELECT status FROM cells WHERE seq = 1", "done");
	/* The run's connection uses synchronous=FULL (see store.c). */
	CU_ASSERT_EQUAL(q_int(store_db(s), "PRAGMA synchronous"), 2);
	CU_ASSERT_EQUAL(q_int(store_db(s), "PRAGMA foreign_keys"), 1);
	sqlite3_close(other);
	store_close(s);

	sb_release(&err);
	free(path);
	test_rmtree(dir);
	free(dir);
}

/*
 * A child process records samples and dies without closing the store (no
 * checkpoint, no cleanup, as after a crash or SIGKILL). Everything it
 * recorded before dying is there, and the store can be appended to.
 */
static void test_durable_after_crash(void)
{
	char *dir = test_tmpdir();
	char *path = db_path(dir);
	struct strbuf err = STRBUF_INIT;

	fflush(NULL);
	pid_t pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		int64_t vid[2];
		struct strbuf e = STRBUF_INIT;
		struct store *s = store_create(path, &e);
		if (!s || store_begin_run(s, &test_run, &e) < 0)
			_exit(2);
		struct store_volume v = { .layout = "", .name = "a", .fs = "ext4",
					  .position = 1, .dir = "/tmp" };
		if (store_add_volume(s, &v, &e) < 0)
			_exit(3);
		vid[0] = v.id;
		struct store_cell c = { .seq = 1, .phase = 1, .layout = "", .rep = 1,
					.step = "1", .module = "write", .volume_id = vid[0] };
		if (store_cell_start(s, &c, "t0", &e) < 0)
			_exit(4);
		for (int i = 0; i < 100; i++)
			if (store_add_sample(s, 1, "rate", i + 0.5, "MB/s", "direct", &e) < 0)
				_exit(5);
		kill(getpid(), SIGKILL); /* no store_close, no atexit */
		_exit(6);
	}
	int status = 0;
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	struct store *s = store_open(path, 0, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	sqlite3 *db = store_db(s);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM samples"), 100);
	CU_ASSERT_EQUAL(q_double(db, "SELECT sum(value) FROM samples"), 5000.0);
	ASSERT_Q_TEXT(db, "SELECT status FROM cells WHERE seq = 1", "running");
	ASSERT_Q_TEXT(db, "SELECT status FROM run", "running");
	/* Append (what a resumed run does): mark the cell, go on, end the run. */
	CU_ASSERT_EQUAL(store_cell_end(s, 1, "t1", "interrupted", NULL, &err), 0);
	int64_t volume = q_int(db, "SELECT id FROM volumes");
	struct store_cell c2 = { .seq = 2, .phase = 1, .layout = "", .rep = 1,
				 .step = "1", .module = "write", .volume_id = volume };
	CU_ASSERT_EQUAL(store_cell_start(s, &c2, "t2", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 2, "rate", 7, "MB/s", "direct", &err), 0);
	CU_ASSERT_EQUAL(store_cell_end(s, 2, "t3", "done", NULL, &err), 0);
	CU_ASSERT_EQUAL(store_end_run(s, "t4", "completed", NULL, &err), 0);
	if (err.len)
		fprintf(stderr, "after crash: %s\n", err.buf);
	store_close(s);

	s = store_open(path, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(q_int(store_db(s), "SELECT count(*) FROM samples"), 101);
	CU_ASSERT_EQUAL(q_int(store_db(s), "SELECT count(*) FROM cells WHERE status = 'done'"), 1);
	ASSERT_Q_TEXT(store_db(s), "SELECT status FROM run", "completed");
	store_close(s);

	sb_release(&err);
	free(path);
	test_rmtree(dir);
	free(dir);
}

/* Called by the runner (tests/main.c, suites.inc). */
void register_store_tests(void);
void register_store_tests(void)
{
	CU_pSuite s = test_suite("store");
	test_add(s, "round trip: every table written, reopened read-only, read back",
		 test_round_trip);
	test_add(s, "missing, foreign, non-database and wrong-version files are refused",
		 test_wrong_files);
	test_add(s, "store_create refuses an existing file", test_create_refuses_existing);
	test_add(s, "misuse is refused with a message, store stays usable", test_errors);
	test_add(s, "a sample is visible to a second connection when the call returns",
		 test_durable_second_connection);
	test_add(s, "samples survive a killed writer; the store reopens to append",
		 test_durable_after_crash);
}
