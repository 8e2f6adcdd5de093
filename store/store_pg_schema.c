/*
 * The shared store's schema (docs/results-store.md, "The shared store"):
 * the tables push and pull copy, the connection, and the migrations.
 *
 * Every table lives in schema rig. rig.migrations has a row per migration
 * applied (version, when, by which rig); a push applies the missing ones in
 * order, each in the same transaction as its row, under an advisory lock
 * so that two pushes never race to create a table. A database whose
 * version is newer than this rig's is refused by push and by --db alike.
 * Readers (--db) never migrate: they need the version they know.
 *
 * The columns mirror the SQLite store's (version 5) under the same names,
 * so one list per table drives both directions and a pulled run is the
 * pushed one by construction. Integers are bigint (SQLite's are 64-bit),
 * reals double precision, JSON and times text as the run recorded them
 * (json or timestamptz would reformat them, and the reports read them
 * back). Each run is one row of rig.runs keyed by (host_name, id); its rows
 * elsewhere carry its run_no, first column of their primary keys, and
 * rig.delete_run(run_no) removes them all.
 *
 * Rejected: one schema per run (a lab queries across runs); foreign keys
 * to rig.runs (ON DELETE CASCADE) or between a run's tables: the server
 * checks a foreign key by a trigger per row, which made a million samples
 * take 23 s to push instead of 3 s, and the SQLite store checked the
 * references when the rows were written; jsonb (reorders keys: a pulled
 * run would differ).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "store/store_pg.h"
#include "store/store_pg_int.h"

const struct pgs_table store_pg_tables[] = {
	{ "run", "runs",
	  "id, plan_name, plan_file, plan_text, plan_sha256, seed, seed_drawn, rig_version, host,"
	  " os, platform, argv, started_utc, ended_utc, status, error, options_json",
	  "ttttttitttttttttt", "id" },
	{ "volumes", "volumes",
	  "id, layout, layout_index, name, fs, position, offset_start, offset_end, device, dir,"
	  " facts_json",
	  "itittiiittt", "id" },
	{ "cells", "cells",
	  "seq, phase, layout, rep, step, module, volume_id, cycle, sweep_var, sweep_value,"
	  " start_utc, end_utc, status, error, attempts",
	  "iitittiitttttti", "seq" },
	{ "samples", "samples", "id, seq, metric, value, unit, cache, superseded", "iitrtti", "id" },
	{ "file_samples", "file_samples",
	  "id, seq, file, bytes, seconds, superseded, disk_offset_min, disk_offset_max", "iitiriii",
	  "id" },
	{ "notes", "notes", "id, seq, key, value, superseded", "iitti", "id" },
	{ "commands", "commands", "id, start_utc, argv, status, seconds, output", "ittirt", "id" },
	{ "events", "events", "id, utc, level, msg", "ittt", "id" },
	{ "resumes", "resumes",
	  "id, started_utc, ended_utc, argv, rig_version, first_unfinished, from_seq,"
	  " reprovisioned, why, status",
	  "ittttiiitt", "id" },
	{ "journal", "journal",
	  "id, action, object, argv, identity, state, started_utc, ended_utc", "ittttttt", "id" },
	{ "time_spent", "time_spent", "id, resume_id, layout_index, layout, seq, category, seconds",
	  "iiititr", "id" },
	{ "estimates", "estimates",
	  "layout_index, layout, seconds, written_bytes, files, not_estimated, assumed_rate,"
	  " provision_s",
	  "itrrrirr", "layout_index" },
};
const size_t store_pg_ntables = sizeof(store_pg_tables) / sizeof(store_pg_tables[0]);

/* pg_advisory_xact_lock's key for migrations: "rig!" in ASCII. */
#define PGS_LOCK_MIGRATE 1919510305

/* A run's rows in the other tables: rig.runs.run_no, without a foreign
 * key (see the top). */
#define RUN_NO "  run_no        bigint NOT NULL,\n"

/* Version 1: the SQLite store's version 4, per run, and the findings. */
static const char migrate_v1_sql[] =
	"CREATE TABLE rig.runs (\n"
	"  run_no        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
	"  host_name     text NOT NULL,\n"
	"  digest        text NOT NULL,\n"
	"  store_version integer NOT NULL,\n"
	"  pushed_utc    timestamptz NOT NULL DEFAULT now(),\n"
	"  pushed_by     text,\n"
	"  id            text NOT NULL,\n"
	"  plan_name     text NOT NULL,\n"
	"  plan_file     text,\n"
	"  plan_text     text,\n"
	"  plan_sha256   text,\n"
	"  seed          text NOT NULL,\n"
	"  seed_drawn    bigint NOT NULL,\n"
	"  rig_version   text,\n"
	"  host          text,\n"
	"  os            text,\n"
	"  platform      text,\n"
	"  argv          text,\n"
	"  started_utc   text NOT NULL,\n"
	"  ended_utc     text,\n"
	"  status        text NOT NULL,\n"
	"  error         text,\n"
	"  options_json  text,\n"
	"  UNIQUE (host_name, id)\n"
	");\n"
	"CREATE INDEX runs_id ON rig.runs (id);\n"
	"CREATE TABLE rig.volumes (\n" RUN_NO
	"  id bigint NOT NULL, layout text NOT NULL, layout_index bigint NOT NULL,\n"
	"  name text NOT NULL, fs text, position bigint NOT NULL, offset_start bigint,\n"
	"  offset_end bigint, device text, dir text, facts_json text,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.cells (\n" RUN_NO
	"  seq bigint NOT NULL, phase bigint NOT NULL, layout text NOT NULL, rep bigint NOT NULL,\n"
	"  step text NOT NULL, module text NOT NULL, volume_id bigint NOT NULL, cycle bigint,\n"
	"  sweep_var text, sweep_value text, start_utc text NOT NULL, end_utc text,\n"
	"  status text NOT NULL, error text, attempts bigint NOT NULL,\n"
	"  PRIMARY KEY (run_no, seq)\n"
	");\n"
	"CREATE TABLE rig.samples (\n" RUN_NO
	"  id bigint NOT NULL, seq bigint NOT NULL, metric text NOT NULL,\n"
	"  value double precision, unit text NOT NULL, cache text NOT NULL,\n"
	"  superseded bigint NOT NULL,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.file_samples (\n" RUN_NO
	"  id bigint NOT NULL, seq bigint NOT NULL, file text NOT NULL, bytes bigint NOT NULL,\n"
	"  seconds double precision NOT NULL, superseded bigint NOT NULL,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.notes (\n" RUN_NO
	"  id bigint NOT NULL, seq bigint, key text NOT NULL, value text,\n"
	"  superseded bigint NOT NULL,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.commands (\n" RUN_NO
	"  id bigint NOT NULL, start_utc text NOT NULL, argv text NOT NULL,\n"
	"  status bigint NOT NULL, seconds double precision, output text,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.events (\n" RUN_NO
	"  id bigint NOT NULL, utc text NOT NULL, level text NOT NULL, msg text NOT NULL,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.resumes (\n" RUN_NO
	"  id bigint NOT NULL, started_utc text NOT NULL, ended_utc text, argv text,\n"
	"  rig_version text, first_unfinished bigint NOT NULL, from_seq bigint NOT NULL,\n"
	"  reprovisioned bigint NOT NULL, why text, status text NOT NULL,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.journal (\n" RUN_NO
	"  id bigint NOT NULL, action text NOT NULL, object text NOT NULL, argv text,\n"
	"  identity text, state text NOT NULL, started_utc text NOT NULL, ended_utc text,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.time_spent (\n" RUN_NO
	"  id bigint NOT NULL, resume_id bigint, layout_index bigint, layout text, seq bigint,\n"
	"  category text NOT NULL, seconds double precision NOT NULL,\n"
	"  PRIMARY KEY (run_no, id)\n"
	");\n"
	"CREATE TABLE rig.estimates (\n" RUN_NO
	"  layout_index bigint NOT NULL, layout text NOT NULL, seconds double precision NOT NULL,\n"
	"  written_bytes double precision, files double precision, not_estimated bigint NOT NULL,\n"
	"  assumed_rate double precision, provision_s double precision,\n"
	"  PRIMARY KEY (run_no, layout_index)\n"
	");\n"
	"CREATE TABLE rig.findings (\n" RUN_NO
	"  rank bigint NOT NULL, step text NOT NULL, metric text NOT NULL, kind text NOT NULL,\n"
	"  groups text, estimate double precision, unit text, ci_low double precision,\n"
	"  ci_high double precision, p double precision, n bigint NOT NULL,\n"
	"  verdict text NOT NULL, sentence text,\n"
	"  PRIMARY KEY (run_no, rank)\n"
	");\n"
	"CREATE FUNCTION rig.delete_run(n bigint) RETURNS void LANGUAGE sql AS $$\n"
	"  DELETE FROM rig.volumes WHERE run_no = n; DELETE FROM rig.cells WHERE run_no = n;\n"
	"  DELETE FROM rig.samples WHERE run_no = n; DELETE FROM rig.file_samples WHERE run_no = n;\n"
	"  DELETE FROM rig.notes WHERE run_no = n; DELETE FROM rig.commands WHERE run_no = n;\n"
	"  DELETE FROM rig.events WHERE run_no = n; DELETE FROM rig.resumes WHERE run_no = n;\n"
	"  DELETE FROM rig.journal WHERE run_no = n; DELETE FROM rig.time_spent WHERE run_no = n;\n"
	"  DELETE FROM rig.estimates WHERE run_no = n; DELETE FROM rig.findings WHERE run_no = n;\n"
	"  DELETE FROM rig.runs WHERE run_no = n\n"
	"$$;\n";

/* Version 2: the SQLite store's version 5 (where each file's data sits on
 * the disk) and the findings' units (the provisioned volumes a row rests
 * on). */
static const char migrate_v2_sql[] =
	"ALTER TABLE rig.file_samples ADD COLUMN disk_offset_min bigint,\n"
	"  ADD COLUMN disk_offset_max bigint;\n"
	"ALTER TABLE rig.findings ADD COLUMN units bigint;\n";

/* In order; a migration's index + 1 is its version. Never edit one that
 * has shipped: add the next. */
static const struct {
	const char *what;
	const char *sql;
} migrations[] = {
	{ "runs of SQLite store version 4, and their findings", migrate_v1_sql },
	{ "where files sit on the disk (store version 5), the findings' units", migrate_v2_sql },
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == PGSTORE_SCHEMA_VERSION,
	       "a migration per schema version");

int store_pg_fail(struct pgstore *p, PGresult *res, const char *what, struct strbuf *err)
{
	const char *msg = res ? PQresultErrorMessage(res) : "";
	if (!msg || !*msg)
		msg = PQerrorMessage(p->conn);
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	if (err)
		sb_addf(err, "cannot %s: %.*s", what, (int)n, msg);
	return -EIO;
}

int store_pg_exec(struct pgstore *p, const char *sql, const char *what, struct strbuf *err)
{
	PGresult *res = PQexec(p->conn, sql);
	int rc = 0;
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = store_pg_fail(p, res, what, err);
	PQclear(res);
	return rc;
}

struct pgstore *store_pg_connect(const char *conninfo, struct strbuf *err)
{
	if (rep_pg_check_conninfo(conninfo, err) < 0)
		return NULL;
	/* expand_dbname: the dbname may be a whole URL; rig's name for the
	 * server's logs; never a prompt (libpq has none). */
	const char *const keys[] = { "dbname", "application_name", NULL };
	const char *const vals[] = { conninfo, "rig", NULL };
	struct pgstore *p = xcalloc(1, sizeof(*p));
	p->conn = PQconnectdbParams(keys, vals, 1);
	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
		const char *m = p->conn ? PQerrorMessage(p->conn) : "out of memory";
		size_t n = strlen(m);
		while (n && m[n - 1] == '\n')
			n--;
		sb_addf(err, "cannot connect to the database: %.*s", (int)n, m);
		if (p->conn && PQconnectionNeedsPassword(p->conn))
			sb_adds(err, " (give the password in ~/.pgpass or PGPASSWORD)");
		store_pg_close(p);
		return NULL;
	}
	/* Exact doubles both ways; UTF-8 as the SQLite store holds text. */
	if (store_pg_exec(p, "SET extra_float_digits = 3; SET client_encoding = 'UTF8';"
			    " SET client_min_messages = warning",
			 "configure the connection", err) < 0) {
		store_pg_close(p);
		return NULL;
	}
	return p;
}

void store_pg_close(struct pgstore *p)
{
	if (!p)
		return;
	PQfinish(p->conn);
	free(p);
}

/* The newest version applied, 0 when rig.migrations is missing, -1 on error. */
static long applied_version(struct pgstore *p, struct strbuf *err)
{
	PGresult *res = PQexec(p->conn, "SELECT to_regclass('rig.migrations') IS NOT NULL");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		store_pg_fail(p, res, "read the schema version", err);
		PQclear(res);
		return -1;
	}
	int exists = PQgetvalue(res, 0, 0)[0] == 't';
	PQclear(res);
	if (!exists)
		return 0;
	res = PQexec(p->conn, "SELECT coalesce(max(version), 0) FROM rig.migrations");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		store_pg_fail(p, res, "read the schema version", err);
		PQclear(res);
		return -1;
	}
	long v = strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

static int newer_than_ours(long v, struct strbuf *err)
{
	sb_addf(err, "the database's rig schema is version %ld, newer than this rig's (%d);"
		" use a newer rig", v, PGSTORE_SCHEMA_VERSION);
	return -EINVAL;
}

int store_pg_check_version(struct pgstore *p, struct strbuf *err)
{
	long v = applied_version(p, err);
	if (v < 0)
		return -EIO;
	if (v == 0) {
		sb_adds(err, "the database holds no rig results (no schema rig: push a run first)");
		return -ENOENT;
	}
	if (v > PGSTORE_SCHEMA_VERSION)
		return newer_than_ours(v, err);
	if (v < PGSTORE_SCHEMA_VERSION) {
		sb_addf(err, "the database's rig schema is version %ld, older than this rig's (%d);"
			" a rig push migrates it", v, PGSTORE_SCHEMA_VERSION);
		return -EINVAL;
	}
	return 0;
}

int store_pg_migrate(struct pgstore *p, struct strbuf *err)
{
	struct strbuf sql = STRBUF_INIT;
	int rc = store_pg_exec(p, "BEGIN", "begin the migration", err);
	if (rc == 0) {
		sb_addf(&sql, "SELECT pg_advisory_xact_lock(%d);\n"
			"CREATE SCHEMA IF NOT EXISTS rig;\n"
			"CREATE TABLE IF NOT EXISTS rig.migrations (\n"
			"  version     integer PRIMARY KEY,\n"
			"  applied_utc timestamptz NOT NULL DEFAULT now(),\n"
			"  rig_version text NOT NULL,\n"
			"  what        text NOT NULL\n"
			");\n", PGS_LOCK_MIGRATE);
		rc = store_pg_exec(p, sql.buf, "create schema rig", err);
	}
	long v = rc == 0 ? applied_version(p, err) : -1;
	if (v < 0)
		rc = -EIO;
	else if (v > PGSTORE_SCHEMA_VERSION)
		rc = newer_than_ours(v, err);
	for (long i = v; rc == 0 && i < PGSTORE_SCHEMA_VERSION; i++) {
		char what[64];
		snprintf(what, sizeof(what), "migrate schema rig to version %ld", i + 1);
		rc = store_pg_exec(p, migrations[i].sql, what, err);
		if (rc == 0) {
			char ver[24];
			snprintf(ver, sizeof(ver), "%ld", i + 1);
			const char *params[] = { ver, RIG_VERSION, migrations[i].what };
			PGresult *res = PQexecParams(p->conn,
						     "INSERT INTO rig.migrations (version, rig_version, what)"
						     " VALUES ($1, $2, $3)",
						     3, NULL, params, NULL, NULL, 0);
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				rc = store_pg_fail(p, res, what, err);
			PQclear(res);
		}
	}
	if (rc == 0)
		rc = store_pg_exec(p, "COMMIT", "commit the migration", err);
	else
		PQclear(PQexec(p->conn, "ROLLBACK"));
	sb_release(&sql);
	return rc;
}
