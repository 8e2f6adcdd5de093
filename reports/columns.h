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
	REP_BOOL,   /* count != 0: CSV yes/no, JSON true/false */
};

/* Where a column is written (rep_col.only; 0: everywhere). */
enum { REP_CSV = 1, REP_JSON = 2 };

struct rep_col {
	const char *name;
	enum rep_col_kind kind;
	unsigned only;      /* REP_CSV or REP_JSON: that writer's alone; 0: every writer's */
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

#define REP_MAX_COLS 48 /* the most columns a table has (each table asserts it) */

#endif
