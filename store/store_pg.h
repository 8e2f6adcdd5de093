/*
 * The shared results store: runs loaded into a PostgreSQL database
 * (libpq), beside the SQLite store of each run folder, which stays the
 * embedded default (store/store.h). docs/results-store.md ("The shared
 * store") documents the schema; PGSTORE_SCHEMA_VERSION is its version,
 * recorded in rig.migrations and brought up to date by every push.
 *
 *   rig push RUN URL            RUN/results.db into the database, whole, in
 *                               one transaction, keyed by (host, run id)
 *   rig report/compare --db URL a run read back into a new SQLite store, so
 *                               the reports are those of a run folder
 *
 * Nothing here runs unless asked: no connection is opened before a push or
 * a --db. Credentials come from libpq's environment (PGPASSWORD,
 * PGSERVICE, PGPASSFILE...) or ~/.pgpass, never from the connection string:
 * rep_pg_check_conninfo refuses one that carries a password.
 *
 * Functions return 0 or a negative errno-style code (-EIO for the
 * database's errors, -EINVAL for refused input) with the reason in err.
 */
#ifndef RIG_STORE_PG_H
#define RIG_STORE_PG_H

#include <stddef.h>
#include <stdint.h>

#define PGSTORE_SCHEMA_VERSION 2

struct strbuf;
struct pgstore;

/* 0 when conninfo (a postgresql:// or postgres:// URL, or libpq's
 * key=value string) parses and names no password; else -EINVAL with the
 * reason (never echoing the string, which may hold the password). Opens no
 * connection. */
int rep_pg_check_conninfo(const char *conninfo, struct strbuf *err);

/* A run in the database: "[HOST/]RUN". *host is NULL without a HOST/ part
 * (any host, when one has the run). Caller frees both. -EINVAL for an
 * empty part. */
int rep_pg_parse_ref(const char *ref, char **host, char **id, struct strbuf *err);

/* Append s[0..len) escaped for COPY's text format (backslash, tab,
 * newline, carriage return); NULL appends \N. */
void rep_pg_copy_text(struct strbuf *sb, const char *s, size_t len);
/* Undo rep_pg_copy_text on one field in place: its new length, or -1 for
 * \N (NULL). Other escapes (\b \f \v, octal, hex) are decoded too. */
long rep_pg_copy_field(char *s, size_t len);
/* Append v so that it reads back as exactly v in PostgreSQL's float8
 * ("Infinity", "-Infinity"; NaN appends "NaN"). */
void rep_pg_copy_double(struct strbuf *sb, double v);

/* Connect after rep_pg_check_conninfo. NULL with the reason in err. */
struct pgstore *store_pg_connect(const char *conninfo, struct strbuf *err);
void store_pg_close(struct pgstore *p);

struct pgstore_pushed {
	const char *outcome;  /* "stored", "replaced" or "unchanged" */
	char host[256];       /* the host name it is stored under */
	char id[256];         /* the run's id */
	uint64_t rows;        /* rows sent (0 when unchanged) */
	uint64_t samples;
};

/*
 * Load the run in run_dir (its results.db) into the database, under the
 * host name host (NULL: the host the run recorded). The schema is created
 * or migrated first (its own transaction); then everything is one
 * transaction: a run already stored under the same host and id with the
 * same content is left alone ("unchanged"), one with other content of the
 * same run (the same start: e.g. resumed since) is replaced, and a
 * different run under that name is refused. A failure or a kill leaves the
 * database as it was.
 */
int rep_pg_push(struct pgstore *p, const char *run_dir, const char *host,
		 struct pgstore_pushed *out, struct strbuf *err);

/* Write the run ref ("[HOST/]RUN") into a new SQLite store at db_path
 * (must not exist), as its run folder's results.db held it. A failure
 * removes the file. */
int store_pg_pull(struct pgstore *p, const char *ref, const char *db_path, struct strbuf *err);

#endif
