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
 * Numbers: rep_csv_add_double finds the shortest of %.15g/%.16g/%.17g that
 * reads back from one printf of 17 digits rather than printing and parsing
 * each width in turn: a report formats millions of numbers, and that was
 * several times the cost (bench/README.md).
 *
 * Rejected: a column for every volume/cell fact (the contract fixes the
 * columns; the store holds the rest), and locale-dependent numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/csv.h"
#include "store/store.h"

/* The leading columns shared by both files, in contract order. Samples a
 * resumed run superseded (an earlier attempt of a cell run again) stay in
 * the store and are not written: the files hold what counts, as a run that
 * was never interrupted would. */
#define LEAD_HEADER "run,layout,rep,step,module,volume,fs,position,offset_start," \
		    "offset_end,cycle,sweep_var,sweep_value,seq,start_utc"
#define LEAD_SELECT "c.layout, c.rep, c.step, c.module, v.name, v.fs, v.position," \
		    " v.offset_start, v.offset_end, c.cycle, c.sweep_var," \
		    " c.sweep_value, x.seq, c.start_utc"

/* pass: a sample's rank among its cell's samples of the same metric (a
 * module's passes), empty when the cell recorded the metric once. Added
 * after the contract's first columns, which stay as they were. */
static const char results_header[] = LEAD_HEADER ",metric,value,unit,cache,pass";
static const char results_sql[] =
	"SELECT " LEAD_SELECT ", x.metric, x.value, x.unit, x.cache,"
	" CASE WHEN count(*) OVER (PARTITION BY x.seq, x.metric) > 1"
	" THEN row_number() OVER (PARTITION BY x.seq, x.metric ORDER BY x.id) END"
	" FROM samples x LEFT JOIN cells c ON c.seq = x.seq"
	" LEFT JOIN volumes v ON v.id = c.volume_id"
	" WHERE x.superseded = 0"
	" ORDER BY x.seq, x.id";

static const char files_header[] =
	LEAD_HEADER ",file,bytes,seconds,rate,disk_offset_min,disk_offset_max";
static const char files_sql[] =
	"SELECT " LEAD_SELECT ", x.file, x.bytes, x.seconds, x.disk_offset_min, x.disk_offset_max"
	" FROM file_samples x LEFT JOIN cells c ON c.seq = x.seq"
	" LEFT JOIN volumes v ON v.id = c.volume_id"
	" WHERE x.superseded = 0"
	" ORDER BY x.seq, x.id";

/* Powers of ten a double holds exactly (Clinger's fast path). */
static const double exact_pow10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * Whether the decimal m * 10^k reads back as exactly a (a > 0): when m
 * fits in 53 bits and |k| <= 22, one IEEE multiplication or division is
 * correctly rounded, so it equals what strtod returns (Clinger 1990);
 * otherwise strtod decides.
 */
static int reads_back(uint64_t m, int k, double a)
{
	if (m < (1ull << 53) && k >= -22 && k <= 22)
		return (k >= 0 ? (double)m * exact_pow10[k] : (double)m / exact_pow10[-k]) == a;
	char buf[48];
	snprintf(buf, sizeof(buf), "%llue%d", (unsigned long long)m, k);
	return strtod(buf, NULL) == a;
}

/* The significant digits and decimal exponent of "%.*e" output, whatever
 * the locale's decimal point. Returns the number of digits. */
static int e_digits(const char *s, char *dig, int *exp10)
{
	int n = 0;
	for (; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			dig[n++] = *s;
	*exp10 = *s == 'e' ? atoi(s + 1) : 0;
	return n;
}

/* Append digits dig[0..p) (value 0.d1d2... * 10^(x+1), i.e. d1.d2... *
 * 10^x) as printf's "%.{p}g" does: fixed or scientific, trailing zeros
 * removed. */
static void add_g(struct strbuf *sb, int neg, const char *dig, int p, int x)
{
	int len = p;
	while (len > 1 && dig[len - 1] == '0')
		len--;
	if (neg)
		sb_addch(sb, '-');
	if (x < -4 || x >= p) {
		sb_addch(sb, dig[0]);
		if (len > 1) {
			sb_addch(sb, '.');
			sb_add(sb, dig + 1, (size_t)len - 1);
		}
		sb_addf(sb, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	} else if (x >= 0) {
		for (int i = 0; i <= x; i++)
			sb_addch(sb, i < len ? dig[i] : '0');
		if (len > x + 1) {
			sb_addch(sb, '.');
			sb_add(sb, dig + x + 1, (size_t)(len - x - 1));
		}
	} else {
		sb_adds(sb, "0.");
		for (int i = 0; i < -x - 1; i++)
			sb_addch(sb, '0');
		sb_add(sb, dig, (size_t)len);
	}
}

/*
 * The 17 significant digits of a > 0 correctly rounded (ties to even, as
 * glibc's printf rounds exact ties), and its decimal exponent, computed
 * exactly in 128-bit integers when 1e-6 <= a < 2^63: a = m * 2^-s with m
 * below 2^53, so m * 10^k stays below 2^127 for k <= 22. 0 when a is out
 * of that range (the caller asks printf instead). printf's multi-precision
 * digits cost far more (bench/README.md).
 */
static int digits17(double a, char *dig, int *exp10)
{
	if (!(a >= 1e-6 && a < 9.2e18))
		return 0;
	int e2;
	double fr = frexp(a, &e2);              /* a = fr * 2^e2, 0.5 <= fr < 1 */
	uint64_t m = (uint64_t)ldexp(fr, 53);   /* exact: 53 bits */
	int s = 53 - e2;                        /* a = m / 2^s */
	if (s < 0 || s > 120)
		return 0;
	int x = (int)floor(log10(a));
	for (int tries = 0; tries < 3; tries++) {
		int k = 16 - x;                 /* want a * 10^k in [1e16, 1e17) */
		if (k < 0 || k > 22)
			return 0;
		unsigned __int128 p10 = 1;
		for (int i = 0; i < k; i++)
			p10 *= 10;
		unsigned __int128 n = (unsigned __int128)m * p10;
		unsigned __int128 q = s ? n >> s : n;
		unsigned __int128 r = s ? n - (q << s) : 0;
		unsigned __int128 half = s ? (unsigned __int128)1 << (s - 1) : 0;
		if (s && (r > half || (r == half && (q & 1))))
			q++;
		if (q < 10000000000000000ull) {
			x--;
			continue;
		}
		if (q >= 100000000000000000ull) {
			if (q == 100000000000000000ull) { /* rounded up to the next power */
				q = 10000000000000000ull;
				x++;
			} else {
				x++;
				continue;
			}
		}
		uint64_t u = (uint64_t)q;
		for (int i = 16; i >= 0; i--) {
			dig[i] = (char)('0' + u % 10);
			u /= 10;
		}
		*exp10 = x;
		return 1;
	}
	return 0;
}

void rep_csv_add_double(struct strbuf *sb, double v)
{
	if (isnan(v))
		return;
	if (isinf(v)) {
		sb_adds(sb, v < 0 ? "-inf" : "inf");
		return;
	}
	/* Whole numbers below 10^15 print as such under every precision. */
	if (v == 0 || (fabs(v) < 1e15 && v == (double)(long long)v)) {
		if (v == 0)
			sb_adds(sb, signbit(v) ? "-0" : "0");
		else
			sb_addf(sb, "%lld", (long long)v);
		return;
	}
	/*
	 * The shortest of %.15g, %.16g and %.17g that reads back as exactly
	 * v. Every decimal of at most 15 significant digits survives a trip
	 * through a double (DBL_DIG), and 17 digits always do. digits17 (or
	 * one "%.16e") gives 17 correctly rounded digits; the 15- and 16-digit candidates
	 * are rounded from them, which is exact unless the dropped digits are
	 * exactly "5" or "50" (a tie at 17 digits may hide which way the exact
	 * value lies): then printf rounds the candidate itself. Candidates are
	 * checked by reads_back, so the output is what the slower
	 * printf-then-strtod search would give.
	 */
	char s17[48], d17[24];
	int x17;
	int neg = v < 0;
	double a = fabs(v);
	if (!digits17(a, d17, &x17)) {
		snprintf(s17, sizeof(s17), "%.16e", v);
		if (e_digits(s17, d17, &x17) != 17) {
			sb_adds(sb, s17); /* cannot happen for a finite double */
			return;
		}
	}
	for (int p = 15; p <= 16; p++) {
		char dig[24];
		int x = x17;
		int tie = d17[p] == '5';
		for (int i = p + 1; i < 17 && tie; i++)
			tie = d17[i] == '0';
		if (tie) {
			char sp[48];
			snprintf(sp, sizeof(sp), "%.*e", p - 1, v);
			if (e_digits(sp, dig, &x) != p)
				continue;
		} else {
			memcpy(dig, d17, (size_t)p);
			if (d17[p] >= '5') {
				int i = p - 1;
				while (i >= 0 && dig[i] == '9')
					dig[i--] = '0';
				if (i >= 0) {
					dig[i]++;
				} else {
					memmove(dig + 1, dig, (size_t)p - 1);
					dig[0] = '1';
					x++;
				}
			}
		}
		uint64_t m = 0;
		for (int i = 0; i < p; i++)
			m = m * 10 + (uint64_t)(dig[i] - '0');
		if (reads_back(m, x - (p - 1), a)) {
			add_g(sb, neg, dig, p, x);
			return;
		}
	}
	add_g(sb, neg, d17, 17, x17);
}

void rep_csv_add_next_double(struct strbuf *sb, double v)
{
	sb_addch(sb, ',');
	rep_csv_add_double(sb, v);
}

/* Append one result column as a CSV field: NULL is an empty field. */
static void add_column(struct strbuf *sb, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		break;
	case SQLITE_INTEGER:
		sb_add_int(sb, (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		rep_csv_add_double(sb, sqlite3_column_double(st, i));
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
	rep_csv_add_double(sb, bytes / seconds / 1e6);
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
 * column; with_rate adds files.csv's rate computed from the third- and
 * fourth-last selected columns (bytes, seconds), after them and before the
 * last two (the disk offsets).
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
		int tail = with_rate ? 2 : 0;
		for (int i = 0; i < ncols; i++) {
			if (with_rate && i == ncols - tail) {
				sb_addch(&row, ',');
				add_rate(&row, st, ncols - tail - 2, ncols - tail - 1);
			}
			sb_addch(&row, ',');
			add_column(&row, st, i);
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

int rep_csv_write_results(struct store *s, const char *path, struct strbuf *err)
{
	return write_table(s, path, results_header, results_sql, 0, err);
}

int rep_csv_write_files(struct store *s, const char *path, struct strbuf *err)
{
	return write_table(s, path, files_header, files_sql, 1, err);
}
