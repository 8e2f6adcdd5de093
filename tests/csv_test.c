/*
 * Tests of reports/csv.c: the exact bytes of results.csv and files.csv for
 * a store full of awkward names (commas, quotes, CR and LF, non-ASCII),
 * unknowns, out-of-order inserts and hard numbers; then the same files read
 * back by two independent RFC 4180 readers: a strict one written here, and
 * Python's csv module when python3 is installed (skipped with a message
 * otherwise). Plus number formatting and the crash-safe write.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/csv.h"
#include "reports/report.h"
#include "reports/report_data.h"
#include "reports/summary.h"
#include "store/store.h"
#include "test.h"

/* results.csv (files 0) or files.csv (1) of the run in s, written as a
 * report writes it: the run loaded, its passes numbered, its values
 * formatted. */
static int write_csv(struct store *s, int files, const char *path, struct strbuf *err)
{
	struct rdata *d = rep_rdata_load(s, err);
	if (!d)
		return -EIO;
	rep_summary_compute(d);
	rep_csv_format_values(d, 1);
	int rc = files ? rep_csv_write_files(d, path, err) : rep_csv_write_results(d, path, err);
	rep_rdata_free(d);
	return rc;
}

/* The contract (docs/plan-language.md, "Run folders"), spelled out here
 * rather than taken from csv.c, so a change to either is caught. `pass`
 * and the disk offsets came later, after the first columns, which stay as
 * they were. */
static const char contract_results_header[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,"
	"cycle,sweep_var,sweep_value,seq,start_utc,metric,value,unit,cache,pass";
static const char contract_files_header[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,"
	"cycle,sweep_var,sweep_value,seq,start_utc,file,bytes,seconds,rate,disk_offset_min,"
	"disk_offset_max";

#define RUN_ID "20240102T030405Z-csv-test"
#define VOL3 "line\nbreak \xc3\x9c" /* LF and a UTF-8 Ü */
#define SWEEP_VALUE "a,\"b\"\r\nc"

/* The leading columns of the three cells, as they must appear in the file. */
#define LEAD1 RUN_ID ",,1,1,write,\"a,b\",ext4,1,,,,,,1,2024-01-02T03:04:05Z,"
#define LEAD2 RUN_ID ",,1,2.cycle2.1,enumerate,\"say \"\"hi\"\"\",xfs,2,0,1073741824," \
		     "2,,,2,2024-01-02T03:04:06Z,"
#define LEAD3 RUN_ID ",,2,3.sweep1.1,fill,\"line\nbreak \xc3\x9c\",,3,,,,fill," \
		     "\"a,\"\"b\"\"\r\nc\",3,2024-01-02T03:04:07Z,"

/* The same, as the fields a reader must recover. */
#define FIELDS1 RUN_ID, "", "1", "1", "write", "a,b", "ext4", "1", "", "", "", "", "", \
		"1", "2024-01-02T03:04:05Z"
#define FIELDS2 RUN_ID, "", "1", "2.cycle2.1", "enumerate", "say \"hi\"", "xfs", "2", \
		"0", "1073741824", "2", "", "", "2", "2024-01-02T03:04:06Z"
#define FIELDS3 RUN_ID, "", "2", "3.sweep1.1", "fill", VOL3, "", "3", "", "", "", \
		"fill", SWEEP_VALUE, "3", "2024-01-02T03:04:07Z"

#define NCOLS 21        /* room for the widest file: files.csv */
#define RESULTS_COLS 20
#define FILES_COLS 21

/* Cell 2 recorded `seconds` twice (passes): numbered 1 and 2 in the
 * order measured; everything measured once has an empty pass. */
static const char *const want_results_rows[][NCOLS] = {
	{ "run", "layout", "rep", "step", "module", "volume", "fs", "position",
	  "offset_start", "offset_end", "cycle", "sweep_var", "sweep_value", "seq",
	  "start_utc", "metric", "value", "unit", "cache", "pass" },
	{ FIELDS1, "rate", "0.3333333333333333", "MB/s", "direct", "" },
	{ FIELDS1, "bytes", "2147483648", "B", "direct", "" },
	{ FIELDS1, "rate_fit", "", "MB/s", "direct", "" },
	{ FIELDS2, "seconds", "0.1", "s", "direct+drop_caches", "1" },
	{ FIELDS2, "entries_per_s", "1e+21", "1/s", "direct+drop_caches", "" },
	{ FIELDS2, "seconds", "0.2", "s", "direct+drop_caches", "2" },
	{ FIELDS3, "level", "90.5", "%", "", "" },
	{ FIELDS3, "\"quoted\", metric", "-1234.5678", "s", "none", "" },
};

static const char want_results_text[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,"
	"cycle,sweep_var,sweep_value,seq,start_utc,metric,value,unit,cache,pass\n"
	LEAD1 "rate,0.3333333333333333,MB/s,direct,\n"
	LEAD1 "bytes,2147483648,B,direct,\n"
	LEAD1 "rate_fit,,MB/s,direct,\n"
	LEAD2 "seconds,0.1,s,direct+drop_caches,1\n"
	LEAD2 "entries_per_s,1e+21,1/s,direct+drop_caches,\n"
	LEAD2 "seconds,0.2,s,direct+drop_caches,2\n"
	LEAD3 "level,90.5,%,,\n"
	LEAD3 "\"\"\"quoted\"\", metric\",-1234.5678,s,none,\n";

static const char *const want_files_rows[][NCOLS] = {
	{ "run", "layout", "rep", "step", "module", "volume", "fs", "position",
	  "offset_start", "offset_end", "cycle", "sweep_var", "sweep_value", "seq",
	  "start_utc", "file", "bytes", "seconds", "rate", "disk_offset_min", "disk_offset_max" },
	{ FIELDS1, "f1", "2000000", "0.5", "4", "1048576", "3145728" },
	{ FIELDS1, "dir/f,2", "3", "0", "", "", "" },
	{ FIELDS2, "g", "1048576", "0.25", "4.194304", "", "" },
	{ FIELDS3, "f3", "3", "3", "1e-06", "", "" },
};

static const char want_files_text[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,"
	"cycle,sweep_var,sweep_value,seq,start_utc,file,bytes,seconds,rate,disk_offset_min,"
	"disk_offset_max\n"
	LEAD1 "f1,2000000,0.5,4,1048576,3145728\n"
	LEAD1 "\"dir/f,2\",3,0,,,\n"
	LEAD2 "g,1048576,0.25,4.194304,,\n"
	LEAD3 "f3,3,3,1e-06,,\n";

#define NROWS(a) (sizeof(a) / sizeof(a[0]))

/*
 * A store whose cells and samples are inserted out of order: the files
 * must come out ordered by seq, then by insertion within a cell.
 */
static struct store *make_store(const char *path)
{
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_create(path, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct store_run r = {
		.id = RUN_ID, .plan_name = "csv-test", .seed = 7,
		.started_utc = "2024-01-02T03:04:05Z",
	};
	CU_ASSERT_EQUAL(store_begin_run(s, &r, &err), 0);
	struct store_volume v[3] = {
		{ .layout = "", .name = "a,b", .fs = "ext4", .position = 1, .dir = "/a" },
		{ .layout = "", .name = "say \"hi\"", .fs = "xfs", .position = 2,
		  .has_offsets = 1, .offset_start = 0, .offset_end = 1073741824, .dir = "/b" },
		{ .layout = NULL, .name = VOL3, .fs = NULL, .position = 3, .dir = "/c" },
	};
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(store_add_volume(s, &v[i], &err), 0);
	struct store_cell c[3] = {
		{ .seq = 1, .phase = 1, .layout = "", .rep = 1, .step = "1",
		  .module = "write", .volume_id = v[0].id },
		{ .seq = 2, .phase = 2, .layout = "", .rep = 1, .step = "2.cycle2.1",
		  .module = "enumerate", .volume_id = v[1].id, .cycle = 2 },
		{ .seq = 3, .phase = 3, .layout = "", .rep = 2, .step = "3.sweep1.1",
		  .module = "fill", .volume_id = v[2].id, .sweep_var = "fill",
		  .sweep_value = SWEEP_VALUE },
	};
	CU_ASSERT_EQUAL(store_cell_start(s, &c[2], "2024-01-02T03:04:07Z", &err), 0);
	CU_ASSERT_EQUAL(store_cell_start(s, &c[0], "2024-01-02T03:04:05Z", &err), 0);
	CU_ASSERT_EQUAL(store_cell_start(s, &c[1], "2024-01-02T03:04:06Z", &err), 0);

	CU_ASSERT_EQUAL(store_add_sample(s, 2, "seconds", 0.1, "s", "direct+drop_caches", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "rate", 1.0 / 3, "MB/s", "direct", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 3, "level", 90.5, "%", "", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "bytes", 2147483648.0, "B", "direct", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 2, "entries_per_s", 1e21, "1/s",
					 "direct+drop_caches", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "rate_fit", NAN, "MB/s", "direct", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 3, "\"quoted\", metric", -1234.5678, "s", "none",
					 &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, 2, "seconds", 0.2, "s", "direct+drop_caches", &err), 0);

	CU_ASSERT_EQUAL(store_add_file_sample(s, 3, "f3", 3, 3.0, &err), 0);
	const uint64_t at[2] = { 1048576, 3145728 };
	CU_ASSERT_EQUAL(store_add_file_sample_at(s, 1, "f1", 2000000, 0.5, at, &err), 0);
	CU_ASSERT_EQUAL(store_add_file_sample(s, 2, "g", 1048576, 0.25, &err), 0);
	CU_ASSERT_EQUAL(store_add_file_sample(s, 1, "dir/f,2", 3, 0.0, &err), 0);
	if (err.len)
		fprintf(stderr, "csv make_store: %s\n", err.buf);
	sb_release(&err);
	return s;
}

/* --- a strict RFC 4180 reader (LF or CRLF record ends) --- */

struct table {
	char ***rows;
	size_t *ncols;
	size_t n;
};

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (size_t j = 0; j < t->ncols[i]; j++)
			free(t->rows[i][j]);
		free(t->rows[i]);
	}
	free(t->rows);
	free(t->ncols);
	memset(t, 0, sizeof(*t));
}

/*
 * Parse text into t. Refuses what RFC 4180 refuses: a quote inside an
 * unquoted field, anything but a comma or a record end after a closing
 * quote, an unterminated quoted field, a bare CR outside quotes, and a
 * last record without its line end. Returns 0 or -1 (with *why set).
 */
static int csv_parse(const char *text, struct table *t, const char **why)
{
	const char *p = text;
	size_t rows_alloc = 0;
	memset(t, 0, sizeof(*t));
	while (*p) {
		char **row = NULL;
		size_t n = 0, alloc = 0;
		for (;;) {
			struct strbuf f = STRBUF_INIT;
			if (*p == '"') {
				p++;
				for (;;) {
					if (!*p) {
						*why = "unterminated quoted field";
						goto bad;
					}
					if (*p == '"') {
						if (p[1] == '"') {
							sb_addch(&f, '"');
							p += 2;
							continue;
						}
						p++;
						break;
					}
					sb_addch(&f, *p++);
				}
				if (*p != ',' && *p != '\n' && !(p[0] == '\r' && p[1] == '\n')) {
					*why = "text after a closing quote";
					goto bad;
				}
			} else {
				while (*p && *p != ',' && *p != '\n' && *p != '\r') {
					if (*p == '"') {
						*why = "quote inside an unquoted field";
						goto bad;
					}
					sb_addch(&f, *p++);
				}
				if (*p == '\r' && p[1] != '\n') {
					*why = "bare CR outside quotes";
					goto bad;
				}
			}
			XGROW(row, n + 1, alloc);
			row[n++] = sb_detach(&f);
			if (*p == ',') {
				p++;
				continue;
			}
			if (!*p) {
				*why = "last record has no line end";
				goto bad_row;
			}
			p += *p == '\r' ? 2 : 1;
			break;
bad:
			sb_release(&f);
bad_row:
			for (size_t j = 0; j < n; j++)
				free(row[j]);
			free(row);
			table_free(t);
			return -1;
		}
		XGROW(t->rows, t->n + 1, rows_alloc);
		t->ncols = xrealloc(t->ncols, rows_alloc * sizeof(*t->ncols));
		t->rows[t->n] = row;
		t->ncols[t->n] = n;
		t->n++;
	}
	return 0;
}

static void test_parser_is_strict(void)
{
	static const char *const bad[] = {
		"a,\"b\"c\n", "a,b\"c\n", "\"abc\n", "a,b", "a\rb\n",
	};
	static const char *const good[] = {
		"a,b\n", "a,b\r\n", "\"a\"\"b\",\"\"\n", "\"a\r\nb\",c\n",
	};
	for (size_t i = 0; i < NROWS(bad); i++) {
		struct table t;
		const char *why = NULL;
		CU_ASSERT_EQUAL(csv_parse(bad[i], &t, &why), -1);
		CU_ASSERT_PTR_NOT_NULL(why);
	}
	for (size_t i = 0; i < NROWS(good); i++) {
		struct table t;
		const char *why = NULL;
		CU_ASSERT_EQUAL(csv_parse(good[i], &t, &why), 0);
		CU_ASSERT_EQUAL(t.n, 1);
		CU_ASSERT_EQUAL(t.n ? t.ncols[0] : 0, 2);
		table_free(&t);
	}
	struct table t;
	const char *why = NULL;
	CU_ASSERT_EQUAL_FATAL(csv_parse("\"x\"\"y\",\"1\r\n2\"\n", &t, &why), 0);
	CU_ASSERT_STRING_EQUAL(t.rows[0][0], "x\"y");
	CU_ASSERT_STRING_EQUAL(t.rows[0][1], "1\r\n2");
	table_free(&t);
}

/* Compare a parsed table with the expected rows. */
static void check_table(const struct table *t, const char *const (*want)[NCOLS],
			size_t nwant, size_t ncols)
{
	CU_ASSERT_EQUAL(t->n, nwant);
	for (size_t i = 0; i < t->n && i < nwant; i++) {
		CU_ASSERT_EQUAL(t->ncols[i], ncols);
		for (size_t j = 0; j < t->ncols[i] && j < ncols; j++) {
			CU_ASSERT_STRING_EQUAL(t->rows[i][j], want[i][j]);
			if (strcmp(t->rows[i][j], want[i][j]))
				fprintf(stderr, "row %zu column %zu: got '%s', want '%s'\n",
					i, j, t->rows[i][j], want[i][j]);
		}
	}
}

/* --- Python's csv module as a second, independent reader --- */

static const char python_reader[] =
	"import csv, json, sys\n"
	"with open(sys.argv[1], newline='', encoding='utf-8') as f:\n"
	"    for row in csv.reader(f, strict=True):\n"
	"        print(json.dumps(row, ensure_ascii=False, separators=(',', ':')))\n";

/* Run python3 on path; 127 if python3 cannot be run. */
static int run_python(const char *path, char **out)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		setenv("PYTHONIOENCODING", "utf-8", 1);
		execlp("python3", "python3", "-c", python_reader, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t r;
	while ((r = read(fds[0], buf, sizeof(buf))) > 0)
		sb_add(&sb, buf, (size_t)r);
	close(fds[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0)
		status = -1;
	*out = sb_detach(&sb);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check_with_python(const char *path, const char *const (*want)[NCOLS],
			      size_t nwant, size_t ncols)
{
	char *out = NULL;
	int rc = run_python(path, &out);
	if (rc == 127 && !*out) {
		printf("\nSKIPPED: python3 not found; %s was read by the built-in strict"
		       " RFC 4180 reader only\n", path);
		free(out);
		return;
	}
	CU_ASSERT_EQUAL(rc, 0);
	struct strbuf expect = STRBUF_INIT;
	for (size_t i = 0; i < nwant; i++) {
		sb_addch(&expect, '[');
		for (size_t j = 0; j < ncols; j++) {
			if (j)
				sb_addch(&expect, ',');
			sb_add_json(&expect, want[i][j]);
		}
		sb_adds(&expect, "]\n");
	}
	CU_ASSERT_STRING_EQUAL(out, expect.buf);
	if (rc != 0 || strcmp(out, expect.buf))
		fprintf(stderr, "python3 csv read %s as:\n%s\nexpected:\n%s\n", path, out,
			expect.buf);
	sb_release(&expect);
	free(out);
}

/* --- tests --- */

static char *join(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", dir, name);
	return sb_detach(&sb);
}

/* Entries of dir whose name has ".tmp-": the writer's temporary files. */
static size_t count_temps(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *e;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tmp-"))
			n++;
	closedir(d);
	return n;
}

static void check_file(const char *path, const char *header, const char *want_text,
		       const char *const (*want_rows)[NCOLS], size_t nrows, size_t ncols)
{
	size_t len = 0;
	char *text = test_read_file(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(len, strlen(text)); /* no NUL bytes */
	/* The header row, byte for byte, with an LF line end. */
	CU_ASSERT_EQUAL(strncmp(text, header, strlen(header)), 0);
	CU_ASSERT_EQUAL(text[strlen(header)], '\n');
	CU_ASSERT_STRING_EQUAL(text, want_text);
	if (strcmp(text, want_text))
		fprintf(stderr, "%s is:\n%s\nexpected:\n%s\n", path, text, want_text);

	struct table t;
	const char *why = NULL;
	int rc = csv_parse(text, &t, &why);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		check_table(&t, want_rows, nrows, ncols);
		table_free(&t);
	} else {
		fprintf(stderr, "strict reader refused %s: %s\n", path, why);
	}
	check_with_python(path, want_rows, nrows, ncols);
	free(text);
}

static void test_results_csv(void)
{
	char *dir = test_tmpdir();
	char *db = join(dir, "results.db");
	char *csv = join(dir, "results.csv");
	struct strbuf err = STRBUF_INIT;
	struct store *s = make_store(db);
	store_close(s);
	s = store_open(db, 1, &err); /* reports read a closed run, read-only */
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);

	CU_ASSERT_EQUAL(write_csv(s, 0, csv, &err), 0);
	CU_ASSERT_EQUAL(err.len, 0);
	check_file(csv, contract_results_header, want_results_text, want_results_rows,
		   NROWS(want_results_rows), RESULTS_COLS);
	/* Written again: replaced whole, no temporary files left. */
	CU_ASSERT_EQUAL(write_csv(s, 0, csv, &err), 0);
	CU_ASSERT_EQUAL(count_temps(dir), 0);
	store_close(s);

	sb_release(&err);
	free(csv);
	free(db);
	test_rmtree(dir);
	free(dir);
}

static void test_files_csv(void)
{
	char *dir = test_tmpdir();
	char *db = join(dir, "results.db");
	char *csv = join(dir, "files.csv");
	struct strbuf err = STRBUF_INIT;
	struct store *s = make_store(db); /* still open for writing: a live run */

	CU_ASSERT_EQUAL(write_csv(s, 1, csv, &err), 0);
	CU_ASSERT_EQUAL(err.len, 0);
	check_file(csv, contract_files_header, want_files_text, want_files_rows,
		   NROWS(want_files_rows), FILES_COLS);
	store_close(s);

	sb_release(&err);
	free(csv);
	free(db);
	test_rmtree(dir);
	free(dir);
}

/* Formatting of the value column: shortest round trip, '.' always. */
static void test_numbers(void)
{
	static const struct { double v; const char *s; } cases[] = {
		{ 0.1, "0.1" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 2.0 / 3, "0.6666666666666666" },
		{ 100, "100" },
		{ 0, "0" },
		{ -0.0, "-0" },
		{ 123.456, "123.456" },
		{ 1e21, "1e+21" },
		{ 1e-7, "1e-07" },
		{ 9007199254740993.0, "9007199254740992" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 123456789.123, "123456789.123" },
		{ INFINITY, "inf" },
		{ -INFINITY, "-inf" },
		{ NAN, "" },
	};
	for (size_t i = 0; i < NROWS(cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		rep_csv_add_double(&sb, cases[i].v);
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i].s);
		if (strcmp(sb.buf, cases[i].s))
			fprintf(stderr, "number %zu: got '%s', want '%s'\n", i, sb.buf,
				cases[i].s);
		sb_release(&sb);
	}
	/* Random bit patterns: every finite double reads back exactly, in at
	 * most 17 significant digits (xorshift64, fixed seed). */
	uint64_t x = 0x9e3779b97f4a7c15u;
	int bad = 0;
	for (int i = 0; i < 200000 && bad < 5; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double v;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		struct strbuf sb = STRBUF_INIT;
		rep_csv_add_double(&sb, v);
		double back = strtod(sb.buf, NULL);
		if (memcmp(&back, &v, sizeof(v)) != 0 || sb.len > 24) {
			fprintf(stderr, "number %.17g printed as '%s'\n", v, sb.buf);
			bad++;
		}
		sb_release(&sb);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* Values go through the store and the file and come back bit for bit. */
static void test_values_round_trip(void)
{
	static const double values[] = {
		0.1, 1.0 / 3, 1e-300, 4.9406564584124654e-324, 6.02214076e23, 98.7654321,
		-2.5, 1e15 + 0.3, 299792458, 2.2250738585072014e-308,
	};
	char *dir = test_tmpdir();
	char *db = join(dir, "results.db");
	char *csv = join(dir, "results.csv");
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_create(db, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct store_run r = { .id = "r", .plan_name = "p", .started_utc = "t" };
	struct store_volume v = { .layout = "", .name = "v", .fs = "ext4", .position = 1 };
	CU_ASSERT_EQUAL(store_begin_run(s, &r, &err), 0);
	CU_ASSERT_EQUAL(store_add_volume(s, &v, &err), 0);
	struct store_cell c = { .seq = 1, .phase = 1, .layout = "", .rep = 1, .step = "1",
				.module = "null", .volume_id = v.id };
	CU_ASSERT_EQUAL(store_cell_start(s, &c, "t", &err), 0);
	for (size_t i = 0; i < NROWS(values); i++)
		CU_ASSERT_EQUAL(store_add_sample(s, 1, "x", values[i], "", "", &err), 0);
	CU_ASSERT_EQUAL(write_csv(s, 0, csv, &err), 0);
	store_close(s);

	char *text = test_read_file(csv, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	struct table t;
	const char *why = NULL;
	CU_ASSERT_EQUAL_FATAL(csv_parse(text, &t, &why), 0);
	CU_ASSERT_EQUAL(t.n, NROWS(values) + 1);
	for (size_t i = 0; i + 1 < t.n && i < NROWS(values); i++) {
		CU_ASSERT_STRING_EQUAL(t.rows[i + 1][0], "r");
		CU_ASSERT_STRING_EQUAL(t.rows[i + 1][16 - 1], "x");
		double back = strtod(t.rows[i + 1][16], NULL);
		CU_ASSERT(memcmp(&back, &values[i], sizeof(back)) == 0);
	}
	table_free(&t);
	free(text);

	sb_release(&err);
	free(csv);
	free(db);
	test_rmtree(dir);
	free(dir);
}

/* A store without samples gives the header alone; without a run, nothing. */
static void test_empty_and_errors(void)
{
	char *dir = test_tmpdir();
	char *db = join(dir, "results.db");
	char *csv = join(dir, "results.csv");
	char *files = join(dir, "files.csv");
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_create(db, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);

	/* No run: refused, and no file or temporary left behind. */
	CU_ASSERT_EQUAL(rep_write(s, dir, &err), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "the results store holds no run"));
	CU_ASSERT_EQUAL(access(csv, F_OK), -1);
	struct strbuf want = STRBUF_INIT;

	struct store_run r = { .id = "r", .plan_name = "p", .started_utc = "t" };
	CU_ASSERT_EQUAL(store_begin_run(s, &r, &err), 0);
	sb_reset(&err);
	CU_ASSERT_EQUAL(write_csv(s, 0, csv, &err), 0);
	CU_ASSERT_EQUAL(write_csv(s, 1, files, &err), 0);
	char *text = test_read_file(csv, NULL);
	struct strbuf hdr = STRBUF_INIT;
	sb_addf(&hdr, "%s\n", contract_results_header);
	CU_ASSERT_STRING_EQUAL(text, hdr.buf);
	free(text);
	text = test_read_file(files, NULL);
	sb_reset(&hdr);
	sb_addf(&hdr, "%s\n", contract_files_header);
	CU_ASSERT_STRING_EQUAL(text, hdr.buf);
	free(text);

	/* A directory that does not exist: named in the message. */
	sb_reset(&want);
	sb_addf(&want, "%s/missing/results.csv", dir);
	CU_ASSERT(write_csv(s, 0, want.buf, &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot write "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, want.buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "No such file or directory"));
	store_close(s);
	CU_ASSERT_EQUAL(count_temps(dir), 0);

	sb_release(&hdr);
	sb_release(&want);
	sb_release(&err);
	free(files);
	free(csv);
	free(db);
	test_rmtree(dir);
	free(dir);
}

/* Called by the runner (tests/main.c, suites.inc). */
void register_csv_tests(void);
void register_csv_tests(void)
{
	CU_pSuite s = test_suite("csv");
	test_add(s, "the test's own RFC 4180 reader is strict", test_parser_is_strict);
	test_add(s, "results.csv: contract header, quoting, empties, order, readers agree",
		 test_results_csv);
	test_add(s, "files.csv: contract header, rate, quoting, order, readers agree",
		 test_files_csv);
	test_add(s, "numbers: shortest round-trip form, inf, NaN empty", test_numbers);
	test_add(s, "values survive store -> CSV -> strtod bit for bit", test_values_round_trip);
	test_add(s, "empty store, store without run, unwritable path", test_empty_and_errors);
}
