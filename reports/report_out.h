/*
 * Writing a derived file of a report crash-safely: the bytes go to a
 * temporary file next to the final name ("<path>.tmp-<pid>-<n>"), which is
 * fsynced and renamed over it, as reports/csv.c does for results.csv. A
 * reader sees the previous file or the whole new one. The caller appends to
 * `buf`; rep_rout_flush_some writes it out once it is large, so a file of any
 * size is written with bounded memory.
 */
#ifndef RIG_REPORTS_REPORT_OUT_H
#define RIG_REPORTS_REPORT_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "lib/strbuf.h"

struct rout {
	const char *path;
	struct strbuf tmp;
	struct strbuf buf;
	FILE *f;
	int err;          /* first errno seen, 0 when fine */
};

/* Open the temporary file for path. 0, or -errno with the reason in err. */
int rep_rout_open(struct rout *o, const char *path, struct strbuf *err);
/* Write buf out when it holds more than 1 MiB. */
void rep_rout_flush_some(struct rout *o);
/* Write the rest, sync, rename over path. 0, or -errno with the reason in
 * err (the temporary file is removed). Releases o either way. */
int rep_rout_commit(struct rout *o, struct strbuf *err);

/* The whole of data as path, crash-safely. */
int rep_rout_write_file(const char *path, const void *data, size_t len, struct strbuf *err);

#endif
