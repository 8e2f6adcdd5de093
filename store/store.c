/*
 * The results store: one SQLite database (results.db) per run folder.
 *
 * Durability is the point of this file. Every add/start/end below is its
 * own autocommitted transaction, so a sample is on disk when the call
 * returns; the database is in WAL mode (a reader such as `rig report` never
 * blocks the run, and a commit is one append to the log) with
 * synchronous=FULL: each commit fsyncs the log. NORMAL would survive a
 * crash of rig itself but may lose the last commits on a power cut or a
 * kernel panic, and a panic is exactly what a misbehaving external disk can
 * cause in the middle of an experiment. The cost is one fsync of the
 * results disk per row (well under a millisecond on an SSD); the runner
 * records samples between timed regions, never inside one.
 *
 * The schema is created in one transaction together with PRAGMA
 * application_id (marks the file as a rig store) and PRAGMA user_version
 * (STORE_SCHEMA_VERSION), so a crash during store_create leaves either no
 * store or a whole one; store_open refuses anything else with a message
 * that says which. docs/results-store.md documents every table and column;
 * keep the two in step, and bump STORE_SCHEMA_VERSION on any change that a
 * reader could notice.
 *
 * Statements are prepared once per store and cached (sqlite3_prepare_v3
 * with SQLITE_PREPARE_PERSISTENT), which matters for the hot paths
 * (samples, file samples) and costs nothing for the rest.
 *
 * Rejected: an ORM-like layer or SQL built with format strings (every value
 * goes through a bound parameter); one transaction per cell (a crash would
 * lose the samples of the cell in progress).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "store/store.h"

/* PRAGMA application_id: "rig!" in ASCII, so `file` and readers can tell a
 * rig store from any other SQLite database. */
#define STORE_APPLICATION_ID 0x72696721

/* How long a writer waits for a reader's lock (checkpoints) before failing. */
#define STORE_BUSY_MS 10000

enum stmt_id {
	ST_RUN,
	ST_END_RUN,
	ST_VOLUME,
	ST_CELL_START,
	ST_CELL_END,
	ST_SAMPLE,
	ST_FILE_SAMPLE,
	ST_NOTE,
	ST_COMMAND,
	ST_EVENT,
	ST_REOPEN_RUN,
	ST_RESUME,
	ST_END_RESUME,
	ST_CELL_RESTART,
	ST_SUPERSEDE_SAMPLES,
	ST_SUPERSEDE_FILES,
	ST_SUPERSEDE_NOTES,
	ST_JOURNAL,
	ST_JOURNAL_END,
	ST_JOURNAL_LAST,
	ST_TIME,
	ST_ESTIMATE,
	ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_RUN] = "INSERT INTO run (id, plan_name, plan_file, plan_text, plan_sha256,"
		   " seed, seed_drawn, rig_version, host, os, platform, argv,"
		   " started_utc, status, options_json) VALUES"
		   " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'running', ?14)",
	[ST_END_RUN] = "UPDATE run SET ended_utc = ?1, status = ?2, error = ?3",
	[ST_VOLUME] = "INSERT INTO volumes (layout, layout_index, name, fs, position,"
		      " offset_start, offset_end, device, dir, facts_json) VALUES"
		      " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_CELL_START] = "INSERT INTO cells (seq, phase, layout, rep, step, module,"
			  " volume_id, cycle, sweep_var, sweep_value, start_utc, status)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'running')",
	[ST_CELL_END] = "UPDATE cells SET end_utc = ?2, status = ?3, error = ?4"
			" WHERE seq = ?1",
	[ST_SAMPLE] = "INSERT INTO samples (seq, metric, value, unit, cache)"
		      " VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_FILE_SAMPLE] = "INSERT INTO file_samples (seq, file, bytes, seconds, disk_offset_min,"
			   " disk_offset_max) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_NOTE] = "INSERT INTO notes (seq, key, value) VALUES (?1, ?2, ?3)",
	[ST_COMMAND] = "INSERT INTO commands (start_utc, argv, status, seconds, output)"
		       " VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_EVENT] = "INSERT INTO events (utc, level, msg) VALUES (?1, ?2, ?3)",
	[ST_REOPEN_RUN] = "UPDATE run SET ended_utc = NULL, status = 'running', error = NULL",
	[ST_RESUME] = "INSERT INTO resumes (started_utc, argv, rig_version, first_unfinished,"
		      " from_seq, reprovisioned, why, status)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running')",
	[ST_END_RESUME] = "UPDATE resumes SET ended_utc = ?2, status = ?3 WHERE id = ?1",
	/* A cell run again: the row describes its last attempt. */
	[ST_CELL_RESTART] = "UPDATE cells SET phase = ?2, layout = ?3, rep = ?4, step = ?5,"
			    " module = ?6, volume_id = ?7, cycle = ?8, sweep_var = ?9,"
			    " sweep_value = ?10, start_utc = ?11, end_utc = NULL,"
			    " status = 'running', error = NULL, attempts = attempts + 1"
			    " WHERE seq = ?1",
	[ST_SUPERSEDE_SAMPLES] = "UPDATE samples SET superseded = 1 WHERE seq = ?1 AND superseded = 0",
	[ST_SUPERSEDE_FILES] = "UPDATE file_samples SET superseded = 1"
			       " WHERE seq = ?1 AND superseded = 0",
	[ST_SUPERSEDE_NOTES] = "UPDATE notes SET superseded = 1 WHERE seq = ?1 AND superseded = 0",
	[ST_JOURNAL] = "INSERT INTO journal (action, object, argv, identity, state, started_utc)"
		       " VALUES (?1, ?2, ?3, ?4, 'begun', ?5)",
	[ST_JOURNAL_END] = "UPDATE journal SET state = ?2, ended_utc = ?3 WHERE id = ?1",
	/* The newest row about an object whose action matches (rowids grow). */
	[ST_JOURNAL_LAST] = "SELECT action, state FROM journal WHERE object = ?1"
			    " AND action GLOB ?2 ORDER BY id DESC LIMIT 1",
	[ST_TIME] = "INSERT INTO time_spent (resume_id, layout_index, layout, seq, category,"
		    " seconds) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_ESTIMATE] = "INSERT INTO estimates (layout_index, layout, seconds, written_bytes,"
			" files, not_estimated, assumed_rate, provision_s)"
			" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
};

/*
 * Schema version 1, as rig 0.1 created it. A new store is made by running
 * this and then every migration (migrate_v2_sql and any after it), so a
 * migrated old store and a new one are the same schema by construction.
 * Statuses are checked by the database so that a typo in a caller fails
 * loudly instead of producing rows no report recognizes.
 */
static const char schema_v1_sql[] =
	"CREATE TABLE run (\n"
	"  id           TEXT NOT NULL PRIMARY KEY,\n"
	"  plan_name    TEXT NOT NULL,\n"
	"  plan_file    TEXT,\n"
	"  plan_text    TEXT,\n"
	"  plan_sha256  TEXT,\n"
	"  seed         TEXT NOT NULL,\n"
	"  seed_drawn   INTEGER NOT NULL CHECK (seed_drawn IN (0, 1)),\n"
	"  rig_version  TEXT,\n"
	"  host         TEXT,\n"
	"  os           TEXT,\n"
	"  platform     TEXT,\n"
	"  argv         TEXT,\n"
	"  started_utc  TEXT NOT NULL,\n"
	"  ended_utc    TEXT,\n"
	"  status       TEXT NOT NULL CHECK (status IN"
	" ('running', 'completed', 'failed', 'interrupted')),\n"
	"  error        TEXT\n"
	");\n"
	"CREATE TRIGGER run_one_row BEFORE INSERT ON run\n"
	"  WHEN (SELECT count(*) FROM run) > 0\n"
	"  BEGIN SELECT RAISE(ABORT, 'a results store holds exactly one run'); END;\n"
	"CREATE TABLE volumes (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  layout       TEXT NOT NULL,\n"
	"  layout_index INTEGER NOT NULL,\n"
	"  name         TEXT NOT NULL,\n"
	"  fs           TEXT,\n"
	"  position     INTEGER NOT NULL,\n"
	"  offset_start INTEGER,\n"
	"  offset_end   INTEGER,\n"
	"  device       TEXT,\n"
	"  dir          TEXT,\n"
	"  facts_json   TEXT\n"
	");\n"
	"CREATE TABLE cells (\n"
	"  seq          INTEGER PRIMARY KEY,\n"
	"  phase        INTEGER NOT NULL,\n"
	"  layout       TEXT NOT NULL,\n"
	"  rep          INTEGER NOT NULL,\n"
	"  step         TEXT NOT NULL,\n"
	"  module       TEXT NOT NULL,\n"
	"  volume_id    INTEGER NOT NULL REFERENCES volumes (id),\n"
	"  cycle        INTEGER,\n"
	"  sweep_var    TEXT,\n"
	"  sweep_value  TEXT,\n"
	"  start_utc    TEXT NOT NULL,\n"
	"  end_utc      TEXT,\n"
	"  status       TEXT NOT NULL CHECK (status IN"
	" ('running', 'done', 'failed', 'interrupted')),\n"
	"  error        TEXT\n"
	");\n"
	"CREATE INDEX cells_volume ON cells (volume_id);\n"
	"CREATE TABLE samples (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  seq          INTEGER NOT NULL REFERENCES cells (seq),\n"
	"  metric       TEXT NOT NULL,\n"
	"  value        REAL,\n"
	"  unit         TEXT NOT NULL,\n"
	"  cache        TEXT NOT NULL\n"
	");\n"
	"CREATE INDEX samples_seq ON samples (seq);\n"
	"CREATE TABLE file_samples (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  seq          INTEGER NOT NULL REFERENCES cells (seq),\n"
	"  file         TEXT NOT NULL,\n"
	"  bytes        INTEGER NOT NULL,\n"
	"  seconds      REAL NOT NULL\n"
	");\n"
	"CREATE INDEX file_samples_seq ON file_samples (seq);\n"
	"CREATE TABLE notes (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  seq          INTEGER REFERENCES cells (seq),\n"
	"  key          TEXT NOT NULL,\n"
	"  value        TEXT\n"
	");\n"
	"CREATE INDEX notes_seq ON notes (seq);\n"
	"CREATE TABLE commands (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  start_utc    TEXT NOT NULL,\n"
	"  argv         TEXT NOT NULL,\n"
	"  status       INTEGER NOT NULL,\n"
	"  seconds      REAL,\n"
	"  output       TEXT\n"
	");\n"
	"CREATE TABLE events (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  utc          TEXT NOT NULL,\n"
	"  level        TEXT NOT NULL,\n"
	"  msg          TEXT NOT NULL\n"
	");\n";

/*
 * Version 1 -> 2: resume. The run's options (to run the plan again exactly
 * as parsed), how many times each cell was started, superseded samples
 * (measured by an attempt of a cell that was later run again: kept, never
 * counted), and one row per `rig resume`.
 */
static const char migrate_v2_sql[] =
	"ALTER TABLE run ADD COLUMN options_json TEXT;\n"
	"ALTER TABLE cells ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;\n"
	"ALTER TABLE samples ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0"
	" CHECK (superseded IN (0, 1));\n"
	"ALTER TABLE file_samples ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0"
	" CHECK (superseded IN (0, 1));\n"
	"ALTER TABLE notes ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0"
	" CHECK (superseded IN (0, 1));\n"
	"CREATE TABLE resumes (\n"
	"  id               INTEGER PRIMARY KEY,\n"
	"  started_utc      TEXT NOT NULL,\n"
	"  ended_utc        TEXT,\n"
	"  argv             TEXT,\n"
	"  rig_version      TEXT,\n"
	"  first_unfinished INTEGER NOT NULL,\n"
	"  from_seq         INTEGER NOT NULL,\n"
	"  reprovisioned    INTEGER NOT NULL CHECK (reprovisioned IN (0, 1)),\n"
	"  why              TEXT,\n"
	"  status           TEXT NOT NULL CHECK (status IN"
	" ('running', 'completed', 'failed', 'interrupted'))\n"
	");\n";

/*
 * Version 2 -> 3: the provisioning journal. Every action that attaches,
 * writes to or removes part of the target is a row written before it runs
 * (state 'begun') and updated after ('done' or 'failed'), so that teardown
 * and `rig resume` know what a killed run had made without reading the
 * human record (commands.log).
 */
static const char migrate_v3_sql[] =
	"CREATE TABLE journal (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  action       TEXT NOT NULL,\n"
	"  object       TEXT NOT NULL,\n"
	"  argv         TEXT,\n"
	"  identity     TEXT,\n"
	"  state        TEXT NOT NULL CHECK (state IN ('begun', 'done', 'failed')),\n"
	"  started_utc  TEXT NOT NULL,\n"
	"  ended_utc    TEXT\n"
	");\n"
	"CREATE INDEX journal_object ON journal (object);\n";

/*
 * Version 3 -> 4: the time accounting. Where the wall time of the run (and
 * of each resume) went, per cell, per layout and for the run around them,
 * by category (modules/run_time.h); and the estimate of `rig plan` the run
 * started with, per layout, to compare with.
 */
static const char migrate_v4_sql[] =
	"CREATE TABLE time_spent (\n"
	"  id           INTEGER PRIMARY KEY,\n"
	"  resume_id    INTEGER REFERENCES resumes (id),\n"
	"  layout_index INTEGER,\n"
	"  layout       TEXT,\n"
	"  seq          INTEGER REFERENCES cells (seq),\n"
	"  category     TEXT NOT NULL CHECK (category IN ('provision', 'teardown', 'setup',"
	" 'flush', 'pause', 'measured', 'store', 'report', 'other')),\n"
	"  seconds      REAL NOT NULL\n"
	");\n"
	"CREATE INDEX time_spent_seq ON time_spent (seq);\n"
	"CREATE TABLE estimates (\n"
	"  layout_index  INTEGER PRIMARY KEY,\n"
	"  layout        TEXT NOT NULL,\n"
	"  seconds       REAL NOT NULL,\n"
	"  written_bytes REAL,\n"
	"  files         REAL,\n"
	"  not_estimated INTEGER NOT NULL,\n"
	"  assumed_rate  REAL,\n"
	"  provision_s   REAL\n"
	");\n";

/*
 * Version 4 -> 5: where each file's data sits on the whole disk, the
 * lowest and highest byte offset (FIEMAP, F_LOG2PHYS_EXT, plus the
 * partition's start); NULL where that cannot be said.
 */
static const char migrate_v5_sql[] =
	"ALTER TABLE file_samples ADD COLUMN disk_offset_min INTEGER;\n"
	"ALTER TABLE file_samples ADD COLUMN disk_offset_max INTEGER;\n";

/* An older store opened read-only: a view with the version 5 columns
 * shadows its file_samples (for a version 1 store with the version 2
 * column too). */
static const char shadow_v4_sql[] =
	"CREATE TEMP VIEW file_samples AS SELECT *, NULL AS disk_offset_min,"
	" NULL AS disk_offset_max FROM main.file_samples;\n";
static const char shadow_v4_from_v1_sql[] =
	"CREATE TEMP VIEW file_samples AS SELECT *, 0 AS superseded, NULL AS disk_offset_min,"
	" NULL AS disk_offset_max FROM main.file_samples;\n";

/* An older store opened read-only: empty tables in temp shadow what it
 * lacks (before version 4: the time accounting). */
static const char shadow_v3_sql[] =
	"CREATE TEMP TABLE time_spent (id INTEGER PRIMARY KEY, resume_id INTEGER,"
	" layout_index INTEGER, layout TEXT, seq INTEGER, category TEXT, seconds REAL);\n"
	"CREATE TEMP TABLE estimates (layout_index INTEGER PRIMARY KEY, layout TEXT,"
	" seconds REAL, written_bytes REAL, files REAL, not_estimated INTEGER,"
	" assumed_rate REAL, provision_s REAL);\n";

/* An older store opened read-only: an empty journal in temp shadows the
 * missing table. */
static const char shadow_v2_sql[] =
	"CREATE TEMP TABLE journal (id INTEGER PRIMARY KEY, action TEXT, object TEXT,"
	" argv TEXT, identity TEXT, state TEXT, started_utc TEXT, ended_utc TEXT);\n";

/*
 * A version 1 store opened read-only (rig report of an old run) is not
 * changed: temporary views with the version 2 columns shadow its tables
 * (SQLite looks names up in temp before main), so readers see version 2.
 */
static const char shadow_v1_sql[] =
	"CREATE TEMP VIEW run AS SELECT *, NULL AS options_json FROM main.run;\n"
	"CREATE TEMP VIEW cells AS SELECT *, 1 AS attempts FROM main.cells;\n"
	"CREATE TEMP VIEW samples AS SELECT *, 0 AS superseded FROM main.samples;\n"
	"CREATE TEMP VIEW notes AS SELECT *, 0 AS superseded FROM main.notes;\n"
	"CREATE TEMP TABLE resumes (id INTEGER PRIMARY KEY, started_utc TEXT, ended_utc TEXT,"
	" argv TEXT, rig_version TEXT, first_unfinished INTEGER, from_seq INTEGER,"
	" reprovisioned INTEGER, why TEXT, status TEXT);\n";

struct store {
	sqlite3 *db;
	char *path;
	int readonly;
	sqlite3_stmt *stmt[ST_COUNT];
};

/* "cannot WHAT in results store PATH: sqlite's message" */
static int db_fail(struct store *s, struct strbuf *err, const char *what)
{
	if (err)
		sb_addf(err, "cannot %s in results store %s: %s", what, s->path,
			sqlite3_errmsg(s->db));
	return -EIO;
}

static sqlite3_stmt *stmt_get(struct store *s, enum stmt_id id, struct strbuf *err,
			      const char *what)
{
	if (!s->stmt[id] &&
	    sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
			       &s->stmt[id], NULL) != SQLITE_OK) {
		db_fail(s, err, what);
		return NULL;
	}
	return s->stmt[id];
}

/* Run a bound statement to completion; always leaves it reset and unbound. */
static int stmt_run(struct store *s, sqlite3_stmt *st, struct strbuf *err,
		    const char *what)
{
	int rc = sqlite3_step(st);
	int ret = 0;
	if (rc != SQLITE_DONE)
		ret = db_fail(s, err, what); /* errmsg is valid until the reset */
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

/* Bind helpers: a NULL string binds SQL NULL. Bind errors surface at step. */
static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_double(sqlite3_stmt *st, int i, double v)
{
	/* SQLite stores NaN as NULL anyway; say so explicitly. */
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* SQLite integers are signed 64-bit: refuse what does not fit. */
static int bind_u64(struct store *s, sqlite3_stmt *st, int i, uint64_t v,
		    struct strbuf *err, const char *what)
{
	if (v > (uint64_t)INT64_MAX) {
		sqlite3_clear_bindings(st);
		if (err)
			sb_addf(err, "cannot %s in results store %s: %" PRIu64
				" does not fit a 64-bit signed integer", what, s->path, v);
		return -ERANGE;
	}
	sqlite3_bind_int64(st, i, (sqlite3_int64)v);
	return 0;
}

static void unlink_db_files(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	unlink(path);
	sb_addf(&sb, "%s-wal", path);
	unlink(sb.buf);
	sb_reset(&sb);
	sb_addf(&sb, "%s-shm", path);
	unlink(sb.buf);
	sb_reset(&sb);
	sb_addf(&sb, "%s-journal", path);
	unlink(sb.buf);
	sb_release(&sb);
}

static void store_free(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

/* Per-connection settings: these pragmas are not stored in the file. */
static int configure(struct store *s, struct strbuf *err, const char *what)
{
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	if (sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(s, err, what);
	if (!s->readonly &&
	    sqlite3_exec(s->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(s, err, what);
	return 0;
}

static struct store *store_alloc(const char *path, int readonly)
{
	struct store *s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(path);
	s->readonly = readonly;
	return s;
}

struct store *store_create(const char *path, struct strbuf *err)
{
	/* O_EXCL: refuse an existing file without a window for a race. */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		if (err)
			sb_addf(err, "cannot create results store %s: %s", path,
				errno == EEXIST ? "the file already exists" : strerror(errno));
		return NULL;
	}
	close(fd);

	struct store *s = store_alloc(path, 0);
	struct strbuf sql = STRBUF_INIT;
	int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	/* WAL is a property of the file (persists); it cannot be set inside a
	 * transaction. On a file system without shared memory (some network
	 * mounts) SQLite keeps a rollback journal: still durable, only readers
	 * then wait for writers. */
	if (sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	if (configure(s, NULL, "create") < 0)
		goto fail;
	sb_adds(&sql, "BEGIN IMMEDIATE;\n");
	sb_adds(&sql, schema_v1_sql);
	sb_adds(&sql, migrate_v2_sql);
	sb_adds(&sql, migrate_v3_sql);
	sb_adds(&sql, migrate_v4_sql);
	sb_adds(&sql, migrate_v5_sql);
	sb_addf(&sql, "PRAGMA application_id = %d;\n", STORE_APPLICATION_ID);
	sb_addf(&sql, "PRAGMA user_version = %d;\n", STORE_SCHEMA_VERSION);
	sb_adds(&sql, "COMMIT;\n");
	rc = sqlite3_exec(s->db, sql.buf, NULL, NULL, NULL);
	sb_release(&sql);
	if (rc != SQLITE_OK)
		goto fail;
	return s;

fail:
	if (err)
		sb_addf(err, "cannot create results store %s: %s", path,
			s->db ? sqlite3_errmsg(s->db) : "out of memory");
	store_free(s);
	unlink_db_files(path);
	return NULL;
}

/*
 * The first read of the file (*st: its row). SQLite can answer it
 * SQLITE_BUSY without calling the busy handler, when another connection is
 * recovering the WAL a killed writer left, or closing it as the last one, at
 * that instant (seen: rig resume refused with "database is locked" while a
 * test read the store of the run it had just killed); a user's sqlite3 or
 * rig report beside a starting resume is such a reader. Retried for up to
 * STORE_BUSY_MS, as the busy handler waits.
 */
static int first_read(struct store *s, sqlite3_stmt **st)
{
	for (int waited = 0;; waited += 10) {
		int rc = sqlite3_prepare_v2(s->db, "PRAGMA application_id", -1, st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(*st);
		if (rc == SQLITE_ROW)
			return 0;
		if ((rc & 0xff) != SQLITE_BUSY || waited >= STORE_BUSY_MS)
			return -1;
		sqlite3_finalize(*st);
		*st = NULL;
		sqlite3_sleep(10);
	}
}

/* 0 if the open database is a rig store of our schema version or of an
 * older one we migrate (*ver says which). */
static int check_schema(struct store *s, int64_t *version, struct strbuf *err)
{
	sqlite3_stmt *st = NULL;
	int64_t app = 0, ver = 0;
	/* The first read is where SQLite notices a file that is no database. */
	if (first_read(s, &st) < 0) {
		if (err)
			sb_addf(err, "cannot open results store %s: not a rig results store (%s)",
				s->path, sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return -EINVAL;
	}
	app = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(s, err, "read the schema version");
	}
	ver = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);

	if (app != STORE_APPLICATION_ID) {
		if (err)
			sb_addf(err, "cannot open results store %s: not a rig results store"
				" (an SQLite database with application_id %" PRId64
				", expected %d)", s->path, app, STORE_APPLICATION_ID);
		return -EINVAL;
	}
	*version = ver;
	if (ver >= 1 && ver < STORE_SCHEMA_VERSION)
		return 0; /* migrated by store_open */
	if (ver != STORE_SCHEMA_VERSION) {
		if (err)
			sb_addf(err, "cannot open results store %s: schema version %" PRId64
				" is %s than the version this rig reads (%d); %s", s->path, ver,
				ver > STORE_SCHEMA_VERSION ? "newer" : "older",
				STORE_SCHEMA_VERSION,
				ver > STORE_SCHEMA_VERSION ? "use a newer rig"
							   : "use the rig that wrote it");
		return -EINVAL;
	}
	return 0;
}

/*
 * Bring an older store (version ver) to the current version: in the file,
 * in one transaction, when opened for writing; as temporary views and
 * tables when read-only.
 */
/* What makes a store of version ver (older than this one) read as this
 * version on a read-only connection: temporary views and tables. */
static void shadow_sql(int64_t ver, struct strbuf *sql)
{
	if (ver < 2)
		sb_adds(sql, shadow_v1_sql);
	if (ver < 3)
		sb_adds(sql, shadow_v2_sql);
	if (ver < 4)
		sb_adds(sql, shadow_v3_sql);
	if (ver < 5)
		sb_adds(sql, ver < 2 ? shadow_v4_from_v1_sql : shadow_v4_sql);
}

static int migrate(struct store *s, int64_t ver, struct strbuf *err)
{
	struct strbuf sql = STRBUF_INIT;
	if (s->readonly) {
		shadow_sql(ver, &sql);
	} else {
		sb_adds(&sql, "BEGIN IMMEDIATE;\n");
		if (ver < 2)
			sb_adds(&sql, migrate_v2_sql);
		if (ver < 3)
			sb_adds(&sql, migrate_v3_sql);
		if (ver < 4)
			sb_adds(&sql, migrate_v4_sql);
		sb_adds(&sql, migrate_v5_sql);
		sb_addf(&sql, "PRAGMA user_version = %d;\n", STORE_SCHEMA_VERSION);
		sb_adds(&sql, "COMMIT;\n");
	}
	int rc = sqlite3_exec(s->db, sql.buf, NULL, NULL, NULL);
	sb_release(&sql);
	if (rc != SQLITE_OK) {
		if (err)
			sb_addf(err, "cannot open results store %s: cannot migrate schema version %"
				PRId64 " to %d: %s", s->path, ver, STORE_SCHEMA_VERSION,
				sqlite3_errmsg(s->db));
		if (!s->readonly)
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -EIO;
	}
	return 0;
}

struct store *store_open(const char *path, int readonly, struct strbuf *err)
{
	struct stat st;
	/* SQLite's "unable to open database file" does not say why. */
	if (stat(path, &st) < 0) {
		if (err)
			sb_addf(err, "cannot open results store %s: %s", path, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		if (err)
			sb_addf(err, "cannot open results store %s: not a regular file", path);
		return NULL;
	}
	struct store *s = store_alloc(path, readonly);
	int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		if (err)
			sb_addf(err, "cannot open results store %s: %s", path,
				s->db ? sqlite3_errmsg(s->db) : "out of memory");
		store_free(s);
		return NULL;
	}
	int64_t ver = 0;
	if (check_schema(s, &ver, err) < 0 || configure(s, err, "configure the connection") < 0 ||
	    (ver < STORE_SCHEMA_VERSION && migrate(s, ver, err) < 0)) {
		store_free(s);
		return NULL;
	}
	return s;
}

void store_close(struct store *s)
{
	store_free(s);
}

int store_reader_setup(struct sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int64_t ver = 0;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		ver = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (ver < 1 || ver >= STORE_SCHEMA_VERSION)
		return 0;
	struct strbuf sql = STRBUF_INIT;
	shadow_sql(ver, &sql);
	int rc = sqlite3_exec(db, sql.buf, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
	sb_release(&sql);
	return rc;
}

struct sqlite3 *store_db(struct store *s)
{
	return s->db;
}

int store_begin_run(struct store *s, const struct store_run *r, struct strbuf *err)
{
	const char *what = "record the run";
	sqlite3_stmt *st = stmt_get(s, ST_RUN, err, what);
	if (!st)
		return -EIO;
	char seed[24];
	/* Text, not INTEGER: a seed uses all 64 bits, SQLite integers are signed. */
	snprintf(seed, sizeof(seed), "%" PRIu64, r->seed);
	bind_text(st, 1, r->id);
	bind_text(st, 2, r->plan_name);
	bind_text(st, 3, r->plan_file);
	bind_text(st, 4, r->plan_text);
	bind_text(st, 5, r->plan_sha256);
	bind_text(st, 6, seed);
	sqlite3_bind_int(st, 7, r->seed_drawn ? 1 : 0);
	bind_text(st, 8, r->rig_version);
	bind_text(st, 9, r->host);
	bind_text(st, 10, r->os);
	bind_text(st, 11, r->platform);
	bind_text(st, 12, r->argv);
	bind_text(st, 13, r->started_utc);
	bind_text(st, 14, r->options_json);
	return stmt_run(s, st, err, what);
}

int store_end_run(struct store *s, const char *ended_utc, const char *status,
		  const char *error, struct strbuf *err)
{
	const char *what = "record the end of the run";
	sqlite3_stmt *st = stmt_get(s, ST_END_RUN, err, what);
	if (!st)
		return -EIO;
	bind_text(st, 1, ended_utc);
	bind_text(st, 2, status);
	bind_text(st, 3, error);
	int ret = stmt_run(s, st, err, what);
	if (ret == 0 && sqlite3_changes(s->db) != 1) {
		if (err)
			sb_addf(err, "cannot %s in results store %s: no run was begun", what,
				s->path);
		return -ENOENT;
	}
	return ret;
}

int store_add_volume(struct store *s, struct store_volume *v, struct strbuf *err)
{
	const char *what = "record a volume";
	sqlite3_stmt *st = stmt_get(s, ST_VOLUME, err, what);
	if (!st)
		return -EIO;
	bind_text(st, 1, v->layout ? v->layout : "");
	sqlite3_bind_int64(st, 2, v->layout_index);
	bind_text(st, 3, v->name);
	bind_text(st, 4, v->fs);
	sqlite3_bind_int64(st, 5, v->position);
	if (v->has_offsets) {
		int ret = bind_u64(s, st, 6, v->offset_start, err, what);
		if (ret == 0)
			ret = bind_u64(s, st, 7, v->offset_end, err, what);
		if (ret < 0)
			return ret;
	}
	bind_text(st, 8, v->device);
	bind_text(st, 9, v->dir);
	bind_text(st, 10, v->facts_json);
	int ret = stmt_run(s, st, err, what);
	if (ret == 0)
		v->id = sqlite3_last_insert_rowid(s->db);
	return ret;
}

/* The columns of a cell row shared by its first start and a restart. */
static void bind_cell(sqlite3_stmt *st, const struct store_cell *c, const char *start_utc)
{
	sqlite3_bind_int64(st, 1, c->seq);
	sqlite3_bind_int64(st, 2, c->phase);
	bind_text(st, 3, c->layout ? c->layout : "");
	sqlite3_bind_int64(st, 4, c->rep);
	bind_text(st, 5, c->step);
	bind_text(st, 6, c->module);
	sqlite3_bind_int64(st, 7, c->volume_id);
	if (c->cycle)
		sqlite3_bind_int64(st, 8, c->cycle);
	if (c->sweep_var) {
		bind_text(st, 9, c->sweep_var);
		bind_text(st, 10, c->sweep_value);
	}
	bind_text(st, 11, start_utc);
}

int store_cell_start(struct store *s, const struct store_cell *c,
		     const char *start_utc, struct strbuf *err)
{
	char what[64];
	snprintf(what, sizeof(what), "record the start of cell %" PRIu32, c->seq);
	sqlite3_stmt *st = stmt_get(s, ST_CELL_START, err, what);
	if (!st)
		return -EIO;
	bind_cell(st, c, start_utc);
	return stmt_run(s, st, err, what);
}

int store_cell_restart(struct store *s, const struct store_cell *c, const char *start_utc,
		       uint64_t *superseded, struct strbuf *err)
{
	char what[64];
	snprintf(what, sizeof(what), "record the restart of cell %" PRIu32, c->seq);
	static const enum stmt_id marks[] = { ST_SUPERSEDE_SAMPLES, ST_SUPERSEDE_FILES,
					      ST_SUPERSEDE_NOTES };
	*superseded = 0;
	/* One transaction: a crash leaves either the old attempt counted or the
	 * new one started, never a finished cell whose samples are superseded. */
	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(s, err, what);
	int rc = 0;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]) && rc == 0; i++) {
		sqlite3_stmt *st = stmt_get(s, marks[i], err, what);
		if (!st) {
			rc = -EIO;
			break;
		}
		sqlite3_bind_int64(st, 1, c->seq);
		rc = stmt_run(s, st, err, what);
		if (rc == 0 && marks[i] == ST_SUPERSEDE_SAMPLES)
			*superseded = (uint64_t)sqlite3_changes(s->db);
	}
	if (rc == 0) {
		sqlite3_stmt *st = stmt_get(s, ST_CELL_RESTART, err, what);
		if (!st)
			rc = -EIO;
		else {
			bind_cell(st, c, start_utc);
			rc = stmt_run(s, st, err, what);
			if (rc == 0 && sqlite3_changes(s->db) != 1) {
				if (err)
					sb_addf(err, "cannot %s in results store %s: the cell was"
						" never started", what, s->path);
				rc = -ENOENT;
			}
		}
	}
	if (rc == 0 && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = db_fail(s, err, what);
	if (rc < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int store_cell_end(struct store *s, uint32_t seq, const char *end_utc,
		   const char *status, const char *error, struct strbuf *err)
{
	char what[64];
	snprintf(what, sizeof(what), "record the end of cell %" PRIu32, seq);
	sqlite3_stmt *st = stmt_get(s, ST_CELL_END, err, what);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, seq);
	bind_text(st, 2, end_utc);
	bind_text(st, 3, status);
	bind_text(st, 4, error);
	int ret = stmt_run(s, st, err, what);
	if (ret == 0 && sqlite3_changes(s->db) != 1) {
		if (err)
			sb_addf(err, "cannot %s in results store %s: the cell was never"
				" started", what, s->path);
		return -ENOENT;
	}
	return ret;
}

int store_add_sample(struct store *s, uint32_t seq, const char *metric,
		     double value, const char *unit, const char *cache,
		     struct strbuf *err)
{
	char what[160];
	snprintf(what, sizeof(what), "record sample '%.100s' of cell %" PRIu32,
		 metric ? metric : "(null)", seq);
	sqlite3_stmt *st = stmt_get(s, ST_SAMPLE, err, what);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, seq);
	bind_text(st, 2, metric);
	bind_double(st, 3, value);
	bind_text(st, 4, unit ? unit : "");
	bind_text(st, 5, cache ? cache : "");
	return stmt_run(s, st, err, what);
}

int store_add_file_sample(struct store *s, uint32_t seq, const char *file,
			  uint64_t bytes, double seconds, struct strbuf *err)
{
	return store_add_file_sample_at(s, seq, file, bytes, seconds, NULL, err);
}

int store_add_file_sample_at(struct store *s, uint32_t seq, const char *file, uint64_t bytes,
			     double seconds, const uint64_t *at, struct strbuf *err)
{
	char what[160];
	snprintf(what, sizeof(what), "record file sample '%.100s' of cell %" PRIu32,
		 file ? file : "(null)", seq);
	sqlite3_stmt *st = stmt_get(s, ST_FILE_SAMPLE, err, what);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, seq);
	bind_text(st, 2, file);
	int ret = bind_u64(s, st, 3, bytes, err, what);
	if (ret < 0)
		return ret;
	bind_double(st, 4, seconds);
	for (int i = 0; i < 2; i++) {
		if (!at) {
			sqlite3_bind_null(st, 5 + i);
		} else if ((ret = bind_u64(s, st, 5 + i, at[i], err, what)) < 0) {
			sqlite3_reset(st);
			return ret;
		}
	}
	return stmt_run(s, st, err, what);
}

int store_add_note(struct store *s, uint32_t seq, const char *key,
		   const char *value, struct strbuf *err)
{
	const char *what = "record a note";
	sqlite3_stmt *st = stmt_get(s, ST_NOTE, err, what);
	if (!st)
		return -EIO;
	if (seq)
		sqlite3_bind_int64(st, 1, seq);
	bind_text(st, 2, key);
	bind_text(st, 3, value);
	return stmt_run(s, st, err, what);
}

int store_add_command(struct store *s, const char *start_utc, const char *argv_text,
		      int status, double seconds, const char *output, struct strbuf *err)
{
	const char *what = "record a command";
	sqlite3_stmt *st = stmt_get(s, ST_COMMAND, err, what);
	if (!st)
		return -EIO;
	bind_text(st, 1, start_utc);
	bind_text(st, 2, argv_text);
	sqlite3_bind_int(st, 3, status);
	bind_double(st, 4, seconds);
	bind_text(st, 5, output);
	return stmt_run(s, st, err, what);
}

int store_add_event(struct store *s, const char *utc, const char *level,
		    const char *msg, struct strbuf *err)
{
	const char *what = "record an event";
	sqlite3_stmt *st = stmt_get(s, ST_EVENT, err, what);
	if (!st)
		return -EIO;
	bind_text(st, 1, utc);
	bind_text(st, 2, level);
	bind_text(st, 3, msg);
	return stmt_run(s, st, err, what);
}

int store_resume_begin(struct store *s, struct store_resume *r, struct strbuf *err)
{
	const char *what = "record the resume";
	sqlite3_stmt *re = stmt_get(s, ST_REOPEN_RUN, err, what);
	sqlite3_stmt *st = stmt_get(s, ST_RESUME, err, what);
	if (!re || !st)
		return -EIO;
	int rc = stmt_run(s, re, err, what);
	if (rc < 0)
		return rc;
	bind_text(st, 1, r->started_utc);
	bind_text(st, 2, r->argv);
	bind_text(st, 3, r->rig_version);
	sqlite3_bind_int64(st, 4, r->first_unfinished);
	sqlite3_bind_int64(st, 5, r->from_seq);
	sqlite3_bind_int(st, 6, r->reprovisioned ? 1 : 0);
	bind_text(st, 7, r->why);
	rc = stmt_run(s, st, err, what);
	if (rc == 0)
		r->id = sqlite3_last_insert_rowid(s->db);
	return rc;
}

int store_resume_end(struct store *s, int64_t id, const char *ended_utc, const char *status,
		     struct strbuf *err)
{
	const char *what = "record the end of the resume";
	sqlite3_stmt *st = stmt_get(s, ST_END_RESUME, err, what);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, ended_utc);
	bind_text(st, 3, status);
	return stmt_run(s, st, err, what);
}

int store_journal_begin(struct store *s, const struct store_journal *j, int64_t *id,
			struct strbuf *err)
{
	const char *what = "record a provisioning action";
	sqlite3_stmt *st = stmt_get(s, ST_JOURNAL, err, what);
	if (!st)
		return -EIO;
	bind_text(st, 1, j->action);
	bind_text(st, 2, j->object);
	bind_text(st, 3, j->argv);
	bind_text(st, 4, j->identity);
	bind_text(st, 5, j->started_utc);
	int rc = stmt_run(s, st, err, what);
	if (rc == 0)
		*id = sqlite3_last_insert_rowid(s->db);
	return rc;
}

int store_journal_end(struct store *s, int64_t id, int ok, const char *ended_utc,
		      struct strbuf *err)
{
	const char *what = "record the end of a provisioning action";
	sqlite3_stmt *st = stmt_get(s, ST_JOURNAL_END, err, what);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, ok ? "done" : "failed");
	bind_text(st, 3, ended_utc);
	return stmt_run(s, st, err, what);
}

int store_journal_last(struct store *s, const char *object, const char *actions,
		       char **action, char **state, struct strbuf *err)
{
	const char *what = "read the provisioning journal";
	sqlite3_stmt *st = stmt_get(s, ST_JOURNAL_LAST, err, what);
	*action = *state = NULL;
	if (!st)
		return -EIO;
	bind_text(st, 1, object);
	bind_text(st, 2, actions);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*action = xstrdup((const char *)sqlite3_column_text(st, 0));
		*state = xstrdup((const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(s, err, what);
	return rc == SQLITE_ROW;
}

int store_add_times(struct store *s, const struct store_time *t, struct strbuf *err)
{
	const char *what = "record where the time went";
	sqlite3_stmt *st = stmt_get(s, ST_TIME, err, what);
	if (!st)
		return -EIO;
	/* One transaction, one fsync, for all the categories of a scope. */
	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(s, err, what);
	int rc = 0;
	for (size_t i = 0; i < t->n && rc == 0; i++) {
		if (t->resume_id)
			sqlite3_bind_int64(st, 1, t->resume_id);
		if (t->layout_index >= 0) {
			sqlite3_bind_int64(st, 2, t->layout_index);
			bind_text(st, 3, t->layout ? t->layout : "");
		}
		if (t->seq)
			sqlite3_bind_int64(st, 4, t->seq);
		bind_text(st, 5, t->categories[i]);
		bind_double(st, 6, t->seconds[i]);
		rc = stmt_run(s, st, err, what);
	}
	if (rc == 0 && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = db_fail(s, err, what);
	if (rc < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int store_add_estimate(struct store *s, const struct store_estimate *e, struct strbuf *err)
{
	const char *what = "record the estimate";
	sqlite3_stmt *st = stmt_get(s, ST_ESTIMATE, err, what);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, e->layout_index);
	bind_text(st, 2, e->layout ? e->layout : "");
	bind_double(st, 3, e->seconds);
	bind_double(st, 4, e->written_bytes);
	bind_double(st, 5, e->files);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)e->not_estimated);
	bind_double(st, 7, e->assumed_rate);
	bind_double(st, 8, e->provision_s);
	return stmt_run(s, st, err, what);
}
