/*
 * results.csv and files.csv from the results store (see csv.h).
 *
 * One SQL query per file joins samples to their cell and volume; each row
 * is built in a strbuf and written out, so memory stays flat however many
 * samples a run has. Quoting is RFC 4180 (sb_add_csv: a field is quoted
 * only when it holds a comma, a quote, CR or LF). Records end with LF, not
 * the RFC's CRLF: R's write.csv and pandas' to_csv write LF on Unix, every
 * CSV reader accepts it, and `cut`/`awk` on the file do not see a stray CR
 * in the last column. docs/results-store.md states the format.
 *
 * Crash safety: the table goes to "<path>.tmp-<pid>-<n>" (same directory,
 * so the rename cannot cross file systems), is fsynced, then renamed over
 * path; the directory is synced afterwards (best effort). A reader sees the
 * old file or the whole new one, never half of it.
 *
 * Rejected: a column for every volume/cell fact (the contract fixes the
 * columns; the store holds the rest), and locale-dependent numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/csv.h"
#include "rig/store.h"
#include "rig/util/strbuf.h"
#include "rig/util/xalloc.h"

/* The leading columns shared by both files, in contract order. */
#define LEAD_HEADER "run,layout,rep,step,module,volume,fs,position,offset_start," \
		    "offset_end,cycle,sweep_var,sweep_value,seq,start_utc"
#define LEAD_SELECT "c.layout, c.rep, c.step, c.module, v.name, v.fs, v.position," \
		    " v.offset_start, v.offset_end, c.cycle, c.sweep_var," \
		    " c.sweep_value, x.seq, c.start_utc"

static const char results_header[] = LEAD_HEADER ",metric,value,unit,cache";
static const char results_sql[] =
	"SELECT " LEAD_SELECT ", x.metric, x.value, x.unit, x.cache"
	" FROM samples x LEFT JOIN cells c ON c.seq = x.seq"
	" LEFT JOIN volumes v ON v.id = c.volume_id"
	" ORDER BY x.seq, x.id";

static const char files_header[] = LEAD_HEADER ",file,bytes,seconds,rate";
static const char files_sql[] =
	"SELECT " LEAD_SELECT ", x.file, x.bytes, x.seconds"
	" FROM file_samples x LEFT JOIN cells c ON c.seq = x.seq"
	" LEFT JOIN volumes v ON v.id = c.volume_id"
	" ORDER BY x.seq, x.id";

void csv_add_double(struct strbuf *sb, double v)
{
	if (isnan(v))
		return;
	if (isinf(v)) {
		sb_adds(sb, v < 0 ? "-inf" : "inf");
		return;
	}
	/* Every decimal of at most 15 significant digits survives a trip
	 * through a double (DBL_DIG), so %.15g is already the shortest form
	 * for those; 17 digits always round-trip. */
	char buf[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* Under a locale with a decimal comma, printf follows the locale. */
	const char *dp = localeconv()->decimal_point;
	if (dp && strcmp(dp, ".") != 0 && *dp) {
		char *p = strstr(buf, dp);
		if (p) {
			size_t n = strlen(dp);
			*p = '.';
			memmove(p + 1, p + n, strlen(p + n) + 1);
		}
	}
	sb_adds(sb, buf);
}

/* Append one result column as a CSV field: NULL is an empty field. */
static void add_column(struct strbuf *sb, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		break;
	case SQLITE_INTEGER:
		sb_addf(sb, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		csv_add_double(sb, sqlite3_column_double(st, i));
		break;
	default: {
		const unsigned char *t = sqlite3_column_text(st, i);
		sb_add_csv(sb, t ? (const char *)t : "");
		break;
	}
	}
}

/* files.csv: the rate column, MB/s = 10^6 bytes per second. */
static void add_rate(struct strbuf *sb, sqlite3_stmt *st, int bytes_col, int seconds_col)
{
	if (sqlite3_column_type(st, seconds_col) == SQLITE_NULL)
		return;
	double seconds = sqlite3_column_double(st, seconds_col);
	if (!(seconds > 0))
		return;
	double bytes = (double)sqlite3_column_int64(st, bytes_col);
	csv_add_double(sb, bytes / seconds / 1e6);
}

/* The temporary file next to path; *tmp receives its name. */
static FILE *open_temp(const char *path, struct strbuf *tmp, struct strbuf *err)
{
	static unsigned counter;
	for (int tries = 0; tries < 100; tries++) {
		sb_reset(tmp);
		sb_addf(tmp, "%s.tmp-%ld-%u", path, (long)getpid(), counter++);
		int fd = open(tmp->buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		FILE *f = fdopen(fd, "w");
		if (!f) {
			int e = errno;
			close(fd);
			unlink(tmp->buf);
			errno = e;
			break;
		}
		return f;
	}
	if (err)
		sb_addf(err, "cannot write %s: cannot create %s: %s", path, tmp->buf,
			strerror(errno));
	return NULL;
}

/* fsync the directory holding path, so the rename itself is durable. */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path))
			  : xstrdup(".");
	int fd = open(dir, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: some file systems refuse it on directories */
		close(fd);
	}
	free(dir);
}

static int read_run_id(struct store *s, const char *path, char **id, struct strbuf *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st = NULL;
	int ret = 0;
	if (sqlite3_prepare_v2(db, "SELECT id FROM run", -1, &st, NULL) != SQLITE_OK) {
		ret = -EIO;
	} else {
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW && sqlite3_column_text(st, 0)) {
			*id = xstrdup((const char *)sqlite3_column_text(st, 0));
		} else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
			if (err)
				sb_addf(err, "cannot write %s: the results store holds no run", path);
			sqlite3_finalize(st);
			return -ENOENT;
		} else {
			ret = -EIO;
		}
	}
	if (ret < 0 && err)
		sb_addf(err, "cannot write %s: cannot read the run from the results store: %s",
			path, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return ret;
}

/* -errno of a failed library call, never 0 (fwrite need not set errno). */
static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

/*
 * Write header, then for every row of sql: the run id and every selected
 * column; with_rate adds files.csv's rate computed from the last two
 * selected columns (bytes, seconds).
 */
static int write_table(struct store *s, const char *path, const char *header,
		       const char *sql, int with_rate, struct strbuf *err)
{
	char *run_id = NULL;
	int ret = read_run_id(s, path, &run_id, err);
	if (ret < 0)
		return ret;

	sqlite3 *db = store_db(s);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		if (err)
			sb_addf(err, "cannot write %s: cannot query the results store: %s",
				path, sqlite3_errmsg(db));
		free(run_id);
		return -EIO;
	}

	struct strbuf tmp = STRBUF_INIT;
	FILE *f = open_temp(path, &tmp, err);
	if (!f) {
		sqlite3_finalize(st);
		sb_release(&tmp);
		free(run_id);
		return -EIO;
	}

	struct strbuf row = STRBUF_INIT;
	sb_addf(&row, "%s\n", header);
	int ncols = sqlite3_column_count(st);
	int rc, reported = 0;
	errno = 0;
	while (ret == 0 && (rc = sqlite3_step(st)) != SQLITE_DONE) {
		if (rc != SQLITE_ROW) {
			if (err)
				sb_addf(err, "cannot write %s: cannot query the results store: %s",
					path, sqlite3_errmsg(db));
			ret = -EIO;
			reported = 1;
			break;
		}
		sb_add_csv(&row, run_id);
		for (int i = 0; i < ncols; i++) {
			sb_addch(&row, ',');
			add_column(&row, st, i);
		}
		if (with_rate) {
			sb_addch(&row, ',');
			add_rate(&row, st, ncols - 2, ncols - 1);
		}
		sb_addch(&row, '\n');
		/* Flush in large pieces, not per row. */
		if (row.len >= 65536) {
			if (fwrite(row.buf, 1, row.len, f) != row.len)
				ret = neg_errno();
			sb_reset(&row);
		}
	}
	if (ret == 0 && row.len && fwrite(row.buf, 1, row.len, f) != row.len)
		ret = neg_errno();
	if (ret == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		ret = neg_errno();
	if (fclose(f) != 0 && ret == 0)
		ret = neg_errno();
	if (ret == 0 && rename(tmp.buf, path) != 0)
		ret = neg_errno();
	if (ret < 0) {
		if (err && !reported)
			sb_addf(err, "cannot write %s: %s", path, strerror(-ret));
		unlink(tmp.buf);
	} else {
		sync_dir(path);
	}
	sb_release(&row);
	sb_release(&tmp);
	sqlite3_finalize(st);
	free(run_id);
	return ret;
}

int csv_write_results(struct store *s, const char *path, struct strbuf *err)
{
	return write_table(s, path, results_header, results_sql, 0, err);
}

int csv_write_files(struct store *s, const char *path, struct strbuf *err)
{
	return write_table(s, path, files_header, files_sql, 1, err);
}
