/*
 * A run of the shared store back into a SQLite store of its own, for
 * `rig report --db` and `rig compare --db`: the same tables, rows and
 * values as the run folder's results.db held when it was pushed, so the
 * reports, which read that store alone, are those of the run folder by
 * construction (tests/pg/pg-test diffs them).
 *
 * Each table comes by COPY (SELECT ...) TO STDOUT in text format, in one
 * read-only REPEATABLE READ transaction (a push committing meanwhile is
 * not half seen), and goes into the new store in one SQLite transaction.
 * Doubles travel as text with extra_float_digits = 3, which reads back to
 * the same bits.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "store/store_pg.h"
#include "store/store_pg_int.h"

/* The run_no of the run ref names, or -ENOENT / -EINVAL with the reason. */
static int find_run(struct pgstore *p, const char *ref, char *run_no, size_t size,
		    struct strbuf *err)
{
	char *host = NULL, *id = NULL;
	int rc = rep_pg_parse_ref(ref, &host, &id, err);
	if (rc < 0)
		return rc;
	const char *params[] = { id, host };
	PGresult *res = PQexecParams(p->conn, "SELECT run_no, host_name FROM rig.runs WHERE id = $1"
					      " AND ($2::text IS NULL OR host_name = $2)"
					      " ORDER BY host_name",
				     2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		rc = store_pg_fail(p, res, "look the run up", err);
	} else if (PQntuples(res) == 0) {
		sb_addf(err, "the database holds no run %s", ref);
		rc = -ENOENT;
	} else if (PQntuples(res) > 1) {
		sb_addf(err, "%d runs in the database are called %s; give one as HOST/RUN:", PQntuples(res),
			id);
		for (int i = 0; i < PQntuples(res); i++)
			sb_addf(err, " %s/%s", PQgetvalue(res, i, 1), id);
		rc = -EINVAL;
	} else {
		snprintf(run_no, size, "%s", PQgetvalue(res, 0, 0));
	}
	PQclear(res);
	free(host);
	free(id);
	return rc;
}

/* One COPY row (without its newline) into the bound insert. */
static int insert_row(sqlite3 *db, sqlite3_stmt *ins, const struct pgs_table *t, char *row, size_t len,
		      struct strbuf *err)
{
	int ncols = (int)strlen(t->types), c = 0;
	size_t start = 0;
	for (size_t i = 0; i <= len && c < ncols; i++) {
		if (i < len && row[i] != '\t')
			continue;
		long n = rep_pg_copy_field(row + start, i - start);
		if (n < 0)
			sqlite3_bind_null(ins, c + 1);
		else if (t->types[c] == 'i')
			sqlite3_bind_int64(ins, c + 1, strtoll(row + start, NULL, 10));
		else if (t->types[c] == 'r')
			sqlite3_bind_double(ins, c + 1, strtod(row + start, NULL));
		else
			sqlite3_bind_text(ins, c + 1, row + start, (int)n, SQLITE_TRANSIENT);
		c++;
		start = i + 1;
	}
	int rc = 0;
	if (c != ncols) {
		sb_addf(err, "cannot read the run's %s: a row has %d columns, expected %d", t->pg, c, ncols);
		rc = -EIO;
	} else if (sqlite3_step(ins) != SQLITE_DONE) {
		sb_addf(err, "cannot write the run's %s: %s", t->sqlite, sqlite3_errmsg(db));
		rc = -EIO;
	}
	sqlite3_reset(ins);
	sqlite3_clear_bindings(ins);
	return rc;
}

/* Table t of run run_no into db. */
static int pull_table(struct pgstore *p, sqlite3 *db, const struct pgs_table *t, const char *run_no,
		      struct strbuf *err)
{
	struct strbuf sql = STRBUF_INIT, what = STRBUF_INIT;
	sqlite3_stmt *ins = NULL;
	int rc = 0;
	sb_addf(&what, "read the run's %s", t->pg);
	sb_addf(&sql, "INSERT INTO %s (%s) VALUES (?", t->sqlite, t->cols);
	for (size_t c = 1; c < strlen(t->types); c++)
		sb_adds(&sql, ", ?");
	sb_adds(&sql, ")");
	if (sqlite3_prepare_v2(db, sql.buf, -1, &ins, NULL) != SQLITE_OK) {
		sb_addf(err, "cannot write the run's %s: %s", t->sqlite, sqlite3_errmsg(db));
		rc = -EIO;
		goto out;
	}
	sb_reset(&sql);
	sb_addf(&sql, "COPY (SELECT %s FROM rig.%s WHERE run_no = %s ORDER BY %s) TO STDOUT", t->cols,
		t->pg, run_no, t->order);
	PGresult *res = PQexec(p->conn, sql.buf);
	if (PQresultStatus(res) != PGRES_COPY_OUT) {
		rc = store_pg_fail(p, res, what.buf, err);
		PQclear(res);
		goto out;
	}
	PQclear(res);
	char *row = NULL;
	int n;
	while ((n = PQgetCopyData(p->conn, &row, 0)) > 0) {
		if (rc == 0) /* read on after a failure: the COPY must end */
			rc = insert_row(db, ins, t, row, n && row[n - 1] == '\n' ? (size_t)n - 1 : (size_t)n,
					err);
		PQfreemem(row);
	}
	if (n == -2 && rc == 0)
		rc = store_pg_fail(p, NULL, what.buf, err);
	while ((res = PQgetResult(p->conn))) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && rc == 0)
			rc = store_pg_fail(p, res, what.buf, err);
		PQclear(res);
	}
out:
	sqlite3_finalize(ins);
	sb_release(&sql);
	sb_release(&what);
	return rc;
}

static void unlink_store(const char *path)
{
	static const char *const ext[] = { "", "-wal", "-shm", "-journal" };
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		sb_reset(&sb);
		sb_addf(&sb, "%s%s", path, ext[i]);
		unlink(sb.buf);
	}
	sb_release(&sb);
}

int store_pg_pull(struct pgstore *p, const char *ref, const char *db_path, struct strbuf *err)
{
	char run_no[24];
	struct store *s = NULL;
	int rc = store_pg_exec(p, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "begin reading", err);
	if (rc < 0)
		return rc;
	rc = store_pg_check_version(p, err);
	if (rc == 0)
		rc = find_run(p, ref, run_no, sizeof(run_no), err);
	if (rc == 0) {
		s = store_create(db_path, err);
		if (!s)
			rc = -EIO;
	}
	sqlite3 *db = s ? store_db(s) : NULL;
	if (rc == 0 && sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		sb_addf(err, "cannot write %s: %s", db_path, sqlite3_errmsg(db));
		rc = -EIO;
	}
	for (size_t i = 0; i < store_pg_ntables && rc == 0; i++)
		rc = pull_table(p, db, &store_pg_tables[i], run_no, err);
	if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		sb_addf(err, "cannot write %s: %s", db_path, sqlite3_errmsg(db));
		rc = -EIO;
	}
	PQclear(PQexec(p->conn, "COMMIT"));
	if (s)
		store_close(s);
	if (rc < 0 && s)
		unlink_store(db_path);
	return rc;
}
