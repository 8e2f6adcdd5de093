/*
 * Inside the shared store (rig/store_pg*.c): the tables both directions
 * copy, the connection, and the schema's migrations.
 */
#ifndef RIG_STORE_PG_INT_H
#define RIG_STORE_PG_INT_H

#include <libpq-fe.h>
#include <stddef.h>

struct strbuf;

/*
 * A table of the SQLite store (schema version 4) and its PostgreSQL twin
 * in schema rig: the same columns under the same names, each PostgreSQL
 * row with the run_no of its run in front. One letter per column says its
 * type: t text, i integer (bigint), r real (double precision).
 */
struct pgs_table {
	const char *sqlite;   /* "run", "samples", ... */
	const char *pg;       /* "runs", "samples", ... (in schema rig) */
	const char *cols;     /* "id, seq, metric, ..." */
	const char *types;    /* "iitrtti" */
	const char *order;    /* the rows' order: "id" */
};

/* The run first, then its tables in an order that satisfies SQLite's
 * foreign keys (volumes before cells before samples...). */
extern const struct pgs_table store_pg_tables[];
extern const size_t store_pg_ntables;

struct pgstore {
	PGconn *conn;
};

/* "WHAT: the server's message" into err; -EIO. res may be NULL. */
int store_pg_fail(struct pgstore *p, PGresult *res, const char *what, struct strbuf *err);
/* Run sql (no parameters, no rows wanted); 0 or -EIO with what failed. */
int store_pg_exec(struct pgstore *p, const char *sql, const char *what, struct strbuf *err);

/* Create schema rig or bring it to PGSTORE_SCHEMA_VERSION, in a
 * transaction of its own under an advisory lock, so two pushes never
 * migrate at once. */
int store_pg_migrate(struct pgstore *p, struct strbuf *err);
/* Inside a transaction: 0 when schema rig exists at a version this rig
 * reads, -ENOENT when there is none, else -EINVAL or -EIO with the reason. */
int store_pg_check_version(struct pgstore *p, struct strbuf *err);

#endif
