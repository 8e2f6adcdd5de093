/*
 * A row type's columns, said once (fio's option tables in spirit): the
 * names, their order, what each holds, and a function giving one row's
 * values. Every writer of the row type walks the same table: findings.csv
 * (csv.c), results.json (json.c) and the push to PostgreSQL
 * (store_pg_push.c) cannot disagree on a column.
 */
#ifndef RIG_REPORTS_COLUMNS_H
#define RIG_REPORTS_COLUMNS_H

#include <stddef.h>

struct rdata;

enum rep_col_kind {
	REP_TEXT,   /* a string: CSV quoted as needed, JSON a string, SQL text */
	REP_REAL,   /* a double: NaN is missing (an empty field, null, NULL) */
	REP_COUNT,  /* a whole number */
};

struct rep_col {
	const char *name;
	enum rep_col_kind kind;
};

/* One value: text, real or count by its column's kind; missing when null
 * is set (a text may also be NULL: missing). */
struct rep_val {
	const char *text;
	double real;
	long long count;
	int null;
};

struct rep_table {
	const struct rep_col *cols;
	size_t ncols;
	size_t (*nrows)(const struct rdata *d);
	/* Row i's values into out[0..ncols). */
	void (*row)(const struct rdata *d, size_t i, struct rep_val *out);
};

#define REP_MAX_COLS 32

#endif
