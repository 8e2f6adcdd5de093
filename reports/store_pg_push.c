/*
 * rig push: a run folder's SQLite store into the shared store, whole, in
 * one transaction (docs/results-store.md, "The shared store").
 *
 * The rows are read inside one read transaction of the SQLite store (a
 * live run cannot change them meanwhile) and hashed as they are sent: the
 * digest (SHA-256 of every table's rows as COPY text, without the run_no)
 * is the run's. When the run is stored already (the same host, id and
 * start), its rows are first read and hashed without sending: the same
 * digest sends nothing ("unchanged"), another (the run went on, was
 * resumed) replaces the stored copy. Hashing costs about as much as
 * reading; sending a million samples again would cost far more.
 *
 * Rows go by COPY in text format, a buffer of COPY_CHUNK bytes at a time:
 * one statement per table instead of a round trip per row (docs: about
 * 1 s per million samples to a local server). A kill of rig at any point
 * leaves the transaction uncommitted, and the server rolls it back when the
 * connection drops.
 *
 * The findings are computed here by the reports' code (the run folder's
 * findings.csv may be older than this rig, or missing) and sent by COPY
 * through the same column table findings.csv and results.json are written
 * from (columns.h), numbered strongest first.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/findings.h"
#include "reports/report_data.h"
#include "reports/summary.h"
#include "store/store.h"
#include "store/store_pg.h"
#include "store/store_pg_int.h"

/* Bytes of COPY text handed to libpq at once. */
#define COPY_CHUNK (256 * 1024)

struct push {
	struct pgstore *p;
	sqlite3 *db;
	EVP_MD_CTX *md;           /* the digest, fed every row */
	int send;                 /* 1: rows go to the server's COPY */
	struct strbuf buf;
	char run_no[24];          /* each sent row's first field */
	uint64_t rows;
	struct strbuf *err;
};

static int sqlite_fail(sqlite3 *db, const char *what, struct strbuf *err)
{
	sb_addf(err, "cannot %s: %s", what, sqlite3_errmsg(db));
	return -EIO;
}

/* Hand the buffer to the server's COPY (or drop it: hashing alone). */
static int flush(struct push *u)
{
	int rc = 0;
	if (u->send && u->buf.len && PQputCopyData(u->p->conn, u->buf.buf, (int)u->buf.len) != 1)
		rc = store_pg_fail(u->p, NULL, "send rows", u->err);
	sb_reset(&u->buf);
	return rc;
}

/*
 * Every row of table t as COPY text, in the store's order, into the digest
 * (without the run_no the server's copy starts with: the digest is the
 * run's, wherever it is stored) and, when sending, to the server.
 */
static int emit_rows(struct push *u, const struct pgs_table *t)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	sb_addf(&sql, "SELECT %s FROM %s ORDER BY %s", t->cols, t->sqlite, t->order);
	int rc = 0;
	if (sqlite3_prepare_v2(u->db, sql.buf, -1, &st, NULL) != SQLITE_OK)
		rc = sqlite_fail(u->db, "read the run's store", u->err);
	/* The table's name between its rows and the next table's. */
	EVP_DigestUpdate(u->md, t->pg, strlen(t->pg) + 1);
	int ncols = (int)strlen(t->types);
	while (rc == 0) {
		int s = sqlite3_step(st);
		if (s == SQLITE_DONE)
			break;
		if (s != SQLITE_ROW) {
			rc = sqlite_fail(u->db, "read the run's store", u->err);
			break;
		}
		if (u->send) {
			sb_adds(&u->buf, u->run_no);
			sb_addch(&u->buf, '\t');
		}
		size_t row = u->buf.len;
		for (int c = 0; c < ncols; c++) {
			if (c)
				sb_addch(&u->buf, '\t');
			if (sqlite3_column_type(st, c) == SQLITE_NULL)
				rep_pg_copy_text(&u->buf, NULL, 0);
			else if (t->types[c] == 'i')
				sb_add_int(&u->buf, sqlite3_column_int64(st, c));
			else if (t->types[c] == 'r')
				rep_pg_copy_double(&u->buf, sqlite3_column_double(st, c));
			else
				rep_pg_copy_text(&u->buf, (const char *)sqlite3_column_text(st, c),
						  (size_t)sqlite3_column_bytes(st, c));
		}
		sb_addch(&u->buf, '\n');
		EVP_DigestUpdate(u->md, u->buf.buf + row, u->buf.len - row);
		u->rows++;
		if (u->buf.len >= COPY_CHUNK)
			rc = flush(u);
	}
	sqlite3_finalize(st);
	sb_release(&sql);
	return rc;
}

static int digest_start(struct push *u)
{
	EVP_MD_CTX_free(u->md);
	u->md = EVP_MD_CTX_new();
	if (!u->md || !EVP_DigestInit_ex(u->md, EVP_sha256(), NULL)) {
		sb_adds(u->err, "cannot hash the run: libcrypto failed");
		return -EIO;
	}
	return 0;
}

static void digest_end(struct push *u, struct strbuf *hex)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	sb_reset(hex);
	if (EVP_DigestFinal_ex(u->md, md, &n))
		for (unsigned i = 0; i < n; i++)
			sb_addf(hex, "%02x", md[i]);
	EVP_MD_CTX_free(u->md);
	u->md = NULL;
}

/* The digest of every table, the run's row among them, sending nothing. */
static int digest(struct push *u, struct strbuf *hex)
{
	int rc = digest_start(u);
	u->send = 0;
	for (size_t i = 0; i < store_pg_ntables && rc == 0; i++)
		rc = emit_rows(u, &store_pg_tables[i]);
	sb_reset(&u->buf);
	if (rc == 0)
		digest_end(u, hex);
	u->rows = 0;
	return rc;
}

/* COPY sql FROM STDIN, fed by emit_rows of t, or by the text data. */
static int copy_in(struct push *u, const char *sql, const struct pgs_table *t, const struct strbuf *data,
		   const char *what)
{
	PGresult *res = PQexec(u->p->conn, sql);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		int rc = store_pg_fail(u->p, res, what, u->err);
		PQclear(res);
		return rc;
	}
	PQclear(res);
	int rc = 0;
	if (t)
		rc = emit_rows(u, t);
	else
		sb_add(&u->buf, data->buf, data->len);
	if (rc == 0)
		rc = flush(u);
	/* Ended with an error message when rig failed: the server then
	 * refuses the COPY, and the transaction with it. */
	if (PQputCopyEnd(u->p->conn, rc == 0 ? NULL : "rig push failed") != 1 && rc == 0)
		rc = store_pg_fail(u->p, NULL, what, u->err);
	while ((res = PQgetResult(u->p->conn))) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && rc == 0)
			rc = store_pg_fail(u->p, res, what, u->err);
		PQclear(res);
	}
	return rc;
}

/* One value of a row as COPY text: missing, NaN and an empty text are
 * NULL, as they are an empty field of findings.csv. */
static void copy_value(struct strbuf *sb, enum rep_col_kind kind, const struct rep_val *v)
{
	if (v->null || (kind == REP_TEXT && (!v->text || !*v->text)) ||
	    (kind == REP_REAL && isnan(v->real)))
		sb_adds(sb, "\\N");
	else if (kind == REP_TEXT)
		rep_pg_copy_text(sb, v->text, strlen(v->text));
	else if (kind == REP_REAL)
		rep_pg_copy_double(sb, v->real);
	else
		sb_add_int(sb, v->count);
}

/* The findings, computed by the reports' code from the run itself (its
 * folder's findings.csv may be older than this rig, or missing), each row
 * as rep_findings_table gives it, numbered from 1 strongest first. */
static int push_findings(struct push *u, struct store *s)
{
	struct strbuf e = STRBUF_INIT, sql = STRBUF_INIT, rows = STRBUF_INIT;
	struct rdata *d = rep_rdata_load(s, &e);
	if (!d) {
		sb_addf(u->err, "cannot compute the run's findings: %s", e.buf);
		sb_release(&e);
		return -EIO;
	}
	rep_summary_compute(d);
	rep_findings_compute(d);
	const struct rep_table *t = &rep_findings_table;
	sb_adds(&sql, "COPY rig.findings (run_no, rank");
	for (size_t j = 0; j < t->ncols; j++)
		sb_addf(&sql, ", %s", t->cols[j].name);
	sb_adds(&sql, ") FROM STDIN");
	struct rep_val v[REP_MAX_COLS];
	for (size_t i = 0; i < t->nrows(d); i++) {
		memset(v, 0, sizeof(v));
		t->row(d, i, v);
		sb_addf(&rows, "%s\t%zu", u->run_no, i + 1);
		for (size_t j = 0; j < t->ncols; j++) {
			sb_addch(&rows, '\t');
			copy_value(&rows, t->cols[j].kind, &v[j]);
		}
		sb_addch(&rows, '\n');
	}
	int rc = copy_in(u, sql.buf, NULL, &rows, "store the findings");
	rep_rdata_free(d);
	sb_release(&e);
	sb_release(&sql);
	sb_release(&rows);
	return rc;
}

/* The run's row into rig.runs; its run_no into u->run_no. */
static int insert_run(struct push *u, const char *host, long store_version)
{
	const struct pgs_table *t = &store_pg_tables[0];
	struct strbuf sql = STRBUF_INIT, ph = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	sb_addf(&sql, "SELECT %s FROM %s", t->cols, t->sqlite);
	if (sqlite3_prepare_v2(u->db, sql.buf, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		sb_release(&sql);
		return sqlite_fail(u->db, "read the run", u->err);
	}
	int ncols = (int)strlen(t->types), n = 4 + ncols;
	const char **params = xcalloc((size_t)n, sizeof(*params));
	char ver[24];
	snprintf(ver, sizeof(ver), "%ld", store_version);
	params[0] = host;
	params[1] = ""; /* the digest, known once every row is sent */
	params[2] = ver;
	params[3] = RIG_VERSION;
	for (int c = 0; c < ncols; c++) {
		params[4 + c] = (const char *)sqlite3_column_text(st, c); /* NULL for NULL */
		sb_addf(&ph, ", $%d", 5 + c);
	}
	sb_reset(&sql);
	sb_addf(&sql, "INSERT INTO rig.runs (host_name, digest, store_version, pushed_by, %s)"
		" VALUES ($1, $2, $3, $4%s) RETURNING run_no", t->cols, ph.buf);
	PGresult *res = PQexecParams(u->p->conn, sql.buf, n, NULL, params, NULL, NULL, 0);
	int rc = 0;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = store_pg_fail(u->p, res, "store the run", u->err);
	else
		snprintf(u->run_no, sizeof(u->run_no), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	free(params);
	sqlite3_finalize(st);
	sb_release(&sql);
	sb_release(&ph);
	return rc;
}

/* One column of the run's row as text; caller frees; NULL for NULL. */
static char *run_field(sqlite3 *db, const char *col)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	char *v = NULL;
	sb_addf(&sql, "SELECT %s FROM run", col);
	if (sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sb_release(&sql);
	return v;
}

/*
 * Inside the transaction: what is stored under (host, id) already, with
 * the digest of this run computed only then. 0 with out->outcome set
 * ("unchanged": nothing to send), or a refusal.
 */
static int check_stored(struct push *u, const char *host, const char *id, const char *started,
			struct pgstore_pushed *out)
{
	struct strbuf key = STRBUF_INIT, hex = STRBUF_INIT;
	sb_addf(&key, "%s/%s", host, id);
	const char *lock[] = { key.buf };
	/* Two pushes of one run wait for each other: the second then finds
	 * the first's rows. */
	PGresult *res = PQexecParams(u->p->conn, "SELECT pg_advisory_xact_lock(hashtext($1))", 1, NULL,
				     lock, NULL, NULL, 0);
	int rc = 0;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = store_pg_fail(u->p, res, "lock the run", u->err);
	PQclear(res);
	sb_release(&key);
	if (rc < 0)
		return rc;
	const char *params[] = { host, id };
	res = PQexecParams(u->p->conn, "SELECT run_no, digest, started_utc FROM rig.runs"
				       " WHERE host_name = $1 AND id = $2",
			   2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		rc = store_pg_fail(u->p, res, "look the run up", u->err);
	} else if (PQntuples(res) == 0) {
		out->outcome = "stored";
	} else if (strcmp(PQgetvalue(res, 0, 2), started)) {
		sb_addf(u->err, "the database holds another run as %s/%s (started %s; this one started"
			" %s): push this one under another host name (--host NAME)", host, id,
			PQgetvalue(res, 0, 2), started);
		rc = -EEXIST;
	} else if ((rc = digest(u, &hex)) == 0 && !strcmp(PQgetvalue(res, 0, 1), hex.buf)) {
		out->outcome = "unchanged";
	} else if (rc == 0) {
		/* The same run, gone on since (resumed, or pushed while running). */
		const char *no[] = { PQgetvalue(res, 0, 0) };
		PGresult *del = PQexecParams(u->p->conn, "SELECT rig.delete_run($1)", 1, NULL, no, NULL,
					     NULL, 0);
		if (PQresultStatus(del) != PGRES_TUPLES_OK)
			rc = store_pg_fail(u->p, del, "replace the run stored before", u->err);
		PQclear(del);
		out->outcome = "replaced";
	}
	PQclear(res);
	sb_release(&hex);
	return rc;
}

/* The run, hashed as it is sent; then its digest into its row. */
static int push_tables(struct push *u, struct store *s, const char *host, long version)
{
	int rc = digest_start(u);
	u->send = 0;
	if (rc == 0)
		rc = emit_rows(u, &store_pg_tables[0]);
	sb_reset(&u->buf);
	if (rc == 0)
		rc = insert_run(u, host, version);
	u->send = 1;
	for (size_t i = 1; i < store_pg_ntables && rc == 0; i++) {
		const struct pgs_table *t = &store_pg_tables[i];
		struct strbuf sql = STRBUF_INIT, what = STRBUF_INIT;
		sb_addf(&sql, "COPY rig.%s (run_no, %s) FROM STDIN", t->pg, t->cols);
		sb_addf(&what, "store the run's %s", t->pg);
		rc = copy_in(u, sql.buf, t, NULL, what.buf);
		sb_release(&sql);
		sb_release(&what);
	}
	if (rc == 0) {
		struct strbuf hex = STRBUF_INIT;
		digest_end(u, &hex);
		const char *params[] = { hex.buf, u->run_no };
		PGresult *res = PQexecParams(u->p->conn, "UPDATE rig.runs SET digest = $1 WHERE run_no = $2",
					     2, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = store_pg_fail(u->p, res, "store the run's digest", u->err);
		PQclear(res);
		sb_release(&hex);
	}
	if (rc == 0)
		rc = push_findings(u, s);
	return rc;
}

int rep_pg_push(struct pgstore *p, const char *run_dir, const char *host,
		 struct pgstore_pushed *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	struct strbuf path = STRBUF_INIT;
	struct push u = { .p = p, .buf = STRBUF_INIT, .err = err };
	char *id = NULL, *started = NULL, *run_host = NULL;
	int rc = 0, in_tx = 0;
	sb_addf(&path, "%s/results.db", run_dir);
	struct store *s = store_open(path.buf, 1, err);
	if (!s) {
		rc = -EIO;
		goto out;
	}
	u.db = store_db(s);
	long version = 0;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(u.db, "PRAGMA main.user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	/* One snapshot for both reads. */
	if (sqlite3_exec(u.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		rc = sqlite_fail(u.db, "read the run's store", err);
		goto out;
	}
	id = run_field(u.db, "id");
	started = run_field(u.db, "started_utc");
	run_host = run_field(u.db, "host");
	if (!id || !started) {
		sb_addf(err, "%s holds no run", path.buf);
		rc = -ENOENT;
		goto out;
	}
	if (!host)
		host = run_host;
	if (!host || !*host) {
		sb_adds(err, "the run records no host name: give the one to store it under (--host NAME)");
		rc = -EINVAL;
		goto out;
	}
	snprintf(out->host, sizeof(out->host), "%s", host);
	snprintf(out->id, sizeof(out->id), "%s", id);
	rc = store_pg_migrate(p, err);
	if (rc == 0)
		rc = store_pg_exec(p, "BEGIN", "begin the push", err);
	in_tx = rc == 0;
	if (rc == 0)
		rc = store_pg_check_version(p, err);
	if (rc == 0)
		rc = check_stored(&u, host, id, started, out);
	if (rc == 0 && strcmp(out->outcome, "unchanged")) {
		rc = push_tables(&u, s, host, version);
		out->rows = u.rows;
	}
	if (rc == 0)
		rc = store_pg_exec(p, "COMMIT", "commit the push", err);
	if (rc == 0 && strcmp(out->outcome, "unchanged")) {
		sqlite3_stmt *c = NULL;
		if (sqlite3_prepare_v2(u.db, "SELECT count(*) FROM samples", -1, &c, NULL) == SQLITE_OK &&
		    sqlite3_step(c) == SQLITE_ROW)
			out->samples = (uint64_t)sqlite3_column_int64(c, 0);
		sqlite3_finalize(c);
	}
	in_tx = 0;
out:
	if (in_tx && rc < 0)
		PQclear(PQexec(p->conn, "ROLLBACK"));
	if (s) {
		sqlite3_exec(u.db, "COMMIT", NULL, NULL, NULL);
		store_close(s);
	}
	free(id);
	free(started);
	free(run_host);
	sb_release(&u.buf);
	sb_release(&path);
	EVP_MD_CTX_free(u.md);
	return rc;
}
