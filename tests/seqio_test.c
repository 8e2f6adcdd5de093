/*
 * Tests of modules/seqio.c (write and read): size distributions become
 * file sets (reproducible, in bounds, log-uniform in shape); the modules
 * run directly against a temporary folder with a recording sink (the bytes
 * on disk are the payload, sizes are exact including unaligned tails, the
 * previous set is replaced, errors and cancellation behave); and the rig
 * binary runs a write/read plan on a `dirs` target end to end (results.csv
 * rows with their units, one files.csv row per file per cell).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "modules/seqio.h"
#include "platform/payload.h"
#include "rec_sink.h"
#include "test.h"

/* --- size distributions -> file sets --- */

static void test_sizes_fixed_and_list(void)
{
	uint64_t out[7];
	struct size_dist fixed = { .kind = DIST_FIXED, .lo = 12345, .hi = 12345 };
	mod_seqio_draw_sizes(&fixed, 1, out, 7);
	for (int i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(out[i], 12345);
	uint64_t list[3] = { 1 << 20, 4 << 20, 2 << 20 };
	struct size_dist l = { .kind = DIST_LIST, .lo = 1 << 20, .hi = 4 << 20, .list = list, .nlist = 3 };
	mod_seqio_draw_sizes(&l, 1, out, 7);
	for (int i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(out[i], list[i % 3]); /* used in turn */
}

static void test_sizes_loguniform(void)
{
	enum { N = 20000 };
	uint64_t *a = xcalloc(N, sizeof(uint64_t)), *b = xcalloc(N, sizeof(uint64_t)),
		 *c = xcalloc(N, sizeof(uint64_t));
	uint64_t lo = 2ull << 20, hi = 2ull << 30;
	struct size_dist d = { .kind = DIST_LOGUNIFORM, .lo = lo, .hi = hi };
	mod_seqio_draw_sizes(&d, 77, a, N);
	mod_seqio_draw_sizes(&d, 77, b, N);
	mod_seqio_draw_sizes(&d, 78, c, N);
	CU_ASSERT_EQUAL(memcmp(a, b, N * sizeof(uint64_t)), 0); /* same seed, same set */
	CU_ASSERT_NOT_EQUAL(memcmp(a, c, N * sizeof(uint64_t)), 0);
	double sumlog = 0, l0 = log((double)lo), l1 = log((double)hi);
	size_t below_mid = 0, lowest_tenth = 0;
	uint64_t mn = UINT64_MAX, mx = 0;
	for (size_t i = 0; i < N; i++) {
		CU_ASSERT(a[i] >= lo && a[i] <= hi);
		mn = a[i] < mn ? a[i] : mn;
		mx = a[i] > mx ? a[i] : mx;
		double x = log((double)a[i]);
		sumlog += x;
		below_mid += x < (l0 + l1) / 2;
		lowest_tenth += x < l0 + (l1 - l0) / 10;
	}
	/* log(size) uniform on [l0, l1]: its mean is the middle, within a few
	 * standard errors ((l1 - l0) / sqrt(12 N) = 0.014 here). */
	double mean = sumlog / N, mid = (l0 + l1) / 2;
	CU_ASSERT(fabs(mean - mid) < 0.06);
	CU_ASSERT(below_mid > N * 0.48 && below_mid < N * 0.52);
	CU_ASSERT(lowest_tenth > N * 0.085 && lowest_tenth < N * 0.115);
	/* The whole range is used. */
	CU_ASSERT(mn < lo * 1.01);
	CU_ASSERT(mx > hi * 0.99);
	free(a);
	free(b);
	free(c);
}

/* --- the modules, run directly --- */

static void env_init(struct rec_env *e, int direct)
{
	rec_env_init(e, NULL, 123, direct, 1);
}

static void env_reset_rec(struct rec_env *e)
{
	rec_env_reset(e);
}

static void env_release(struct rec_env *e)
{
	rec_env_release(e, &mod_write);
}

/* Read every file of the set back (buffered) and check size and payload. */
static void check_on_disk(const struct seqio_set *set)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, set->payload_seed, 4096), 0);
	struct strbuf path = STRBUF_INIT;
	for (size_t i = 0; i < set->n; i++) {
		const struct seqio_file *f = &set->files[i];
		sb_reset(&path);
		sb_addf(&path, "%s/%s", set->dir, f->name);
		size_t len = 0;
		char *data = test_read_file(path.buf, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(data);
		CU_ASSERT_EQUAL(len, f->size);
		if (len == f->size) {
			size_t d = plat_payload_diff(&p, f->stream, 0, data, len);
			CU_ASSERT_EQUAL(d, len);
			if (d != len)
				fprintf(stderr, "\n%s differs from its payload at byte %zu of %zu\n",
					path.buf, d, len);
		}
		free(data);
	}
	sb_release(&path);
	plat_payload_release(&p);
}

static int count_entries(const char *dir, const char *want)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		     (!want || !strcmp(de->d_name, want));
	closedir(d);
	return n;
}

static void run_write_read(int direct)
{
	struct rec_env e;
	env_init(&e, direct);
	/* An aligned size, a tail after a body, a file smaller than one block of
	 * alignment, and one larger than the write block. */
	uint64_t list[4] = { 1 << 20, (1 << 20) + 1000, 3000, (3 << 20) + 4096 };
	struct seqio_args wa = {
		.files = 5,
		.sizes = { .kind = DIST_LIST, .lo = 3000, .hi = (3 << 20) + 4096, .list = list, .nlist = 4 },
		.block = 256 * 1024,
		.sync = 1,
	};
	uint64_t total = 0;
	for (int i = 0; i < 5; i++)
		total += list[i % 4];

	CU_ASSERT_EQUAL_FATAL(mod_write.run(&e.ctx, &wa), 0);
	CU_ASSERT_EQUAL(e.err.len, 0);
	CU_ASSERT_EQUAL(e.rec.nfiles, 5);
	CU_ASSERT_EQUAL(e.rec.file_bytes, total);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "bytes", "B"), (double)total, 0.5);
	double secs = rec_get(&e.rec, "seconds", "s");
	CU_ASSERT_DOUBLE_EQUAL(secs, e.rec.file_secs, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "rate", "MB/s"), (double)total / secs / 1e6, 1e-6);
	CU_ASSERT(rec_get(&e.rec, "rate_median_file", "MB/s") > 0);
	/* The fit: both metrics, or neither with a note (tiny files are noisy). */
	double rf = rec_get(&e.rec, "rate_fit", "MB/s"), of = rec_get(&e.rec, "overhead_fit", "s");
	CU_ASSERT_EQUAL(isnan(rf), isnan(of));
	if (isnan(rf)) {
		CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "rate_fit: omitted"));
	} else {
		CU_ASSERT(rf > 0);
	}
	/* Per-file names are the set's. */
	CU_ASSERT_EQUAL(strncmp(e.rec.names[0], "f00", 3), 0);

	const struct seqio_set *set = e.state;
	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_EQUAL(set->n, 5);
	for (size_t i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(set->files[i].size, list[i % 4]);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "%s/seqio", e.dir);
	CU_ASSERT_STRING_EQUAL(set->dir, want.buf);
	sb_release(&want);
	CU_ASSERT_EQUAL(count_entries(set->dir, NULL), 5);
	check_on_disk(set);
	if (direct && !strstr(e.rec.notes.buf, "direct: refused")) {
		CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "tail: "));
	}

	/* read it back */
	env_reset_rec(&e);
	struct seqio_args ra = { .block = 64 * 1024 };
	e.ctx.seed = 456;
	CU_ASSERT_EQUAL_FATAL(mod_read.run(&e.ctx, &ra), 0);
	CU_ASSERT_EQUAL(e.err.len, 0);
	CU_ASSERT_EQUAL(e.rec.nfiles, 5);
	CU_ASSERT_EQUAL(e.rec.file_bytes, total);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "bytes", "B"), (double)total, 0.5);
	CU_ASSERT(rec_get(&e.rec, "rate", "MB/s") > 0);
	CU_ASSERT(rec_get(&e.rec, "seconds", "s") > 0);
	CU_ASSERT_PTR_EQUAL(e.state, set); /* read leaves the set */
	env_release(&e);
}

static void test_write_read_direct(void)
{
	run_write_read(1);
}

static void test_write_read_buffered(void)
{
	run_write_read(0);
}

/* A new write replaces the set; files not of the set's naming stay. */
static void test_write_replaces(void)
{
	struct rec_env e;
	env_init(&e, 1);
	struct seqio_args wa = {
		.files = 4, .sizes = { .kind = DIST_FIXED, .lo = 8192, .hi = 8192 },
		.block = 4096, .sync = 0,
	};
	CU_ASSERT_EQUAL_FATAL(mod_write.run(&e.ctx, &wa), 0);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/seqio/f999", e.dir);
	test_write_file(p.buf, "left from an earlier run");
	sb_reset(&p);
	sb_addf(&p, "%s/seqio/keep.txt", e.dir);
	test_write_file(p.buf, "not ours");
	/* All sizes equal: no fit, and a note that says why. */
	CU_ASSERT(isnan(rec_get(&e.rec, "rate_fit", "MB/s")));
	CU_ASSERT(isnan(rec_get(&e.rec, "overhead_fit", "s")));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "rate_fit: omitted: a fit of time on size "
						       "needs files of 2 or more distinct sizes"));

	env_reset_rec(&e);
	wa.files = 2;
	e.ctx.seed = 124;
	CU_ASSERT_EQUAL_FATAL(mod_write.run(&e.ctx, &wa), 0);
	sb_reset(&p);
	sb_addf(&p, "%s/seqio", e.dir);
	CU_ASSERT_EQUAL(count_entries(p.buf, NULL), 3);
	CU_ASSERT_EQUAL(count_entries(p.buf, "f000"), 1);
	CU_ASSERT_EQUAL(count_entries(p.buf, "f001"), 1);
	CU_ASSERT_EQUAL(count_entries(p.buf, "keep.txt"), 1);
	const struct seqio_set *set = e.state;
	CU_ASSERT_EQUAL(set->n, 2);
	check_on_disk(set);
	/* Not synced at write: read syncs before dropping the cache, and works. */
	struct seqio_args ra = { .block = 4096 };
	CU_ASSERT_EQUAL(mod_read.run(&e.ctx, &ra), 0);
	sb_release(&p);
	env_release(&e);
}

/* Same cell seed on two volumes: the same sizes, different bytes. */
static void test_volumes_share_sizes(void)
{
	struct rec_env a, b;
	env_init(&a, 0);
	env_init(&b, 0);
	b.ctx.volume = "B";
	struct seqio_args wa = {
		.files = 3, .sizes = { .kind = DIST_LOGUNIFORM, .lo = 4096, .hi = 256 * 1024 },
		.block = 65536, .sync = 0,
	};
	CU_ASSERT_EQUAL_FATAL(mod_write.run(&a.ctx, &wa), 0);
	CU_ASSERT_EQUAL_FATAL(mod_write.run(&b.ctx, &wa), 0);
	const struct seqio_set *sa = a.state, *sb = b.state;
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(sa->files[i].size, sb->files[i].size);
	CU_ASSERT_NOT_EQUAL(sa->payload_seed, sb->payload_seed);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/f000", sa->dir);
	char *da = test_read_file(p.buf, NULL);
	sb_reset(&p);
	sb_addf(&p, "%s/f000", sb->dir);
	char *db = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(da);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	CU_ASSERT_NOT_EQUAL(memcmp(da, db, 4096), 0);
	free(da);
	free(db);
	sb_release(&p);
	env_release(&a);
	env_release(&b);
}

static void test_read_needs_write(void)
{
	struct rec_env e;
	env_init(&e, 1);
	struct seqio_args ra = { .block = 4096 };
	CU_ASSERT_EQUAL(mod_read.run(&e.ctx, &ra), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "no file set to read on volume A"));
	CU_ASSERT_EQUAL(e.rec.nfiles, 0);
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	env_release(&e);
}

static void test_errors_name_the_file(void)
{
	struct rec_env e;
	env_init(&e, 1);
	struct seqio_args wa = {
		.files = 2, .sizes = { .kind = DIST_FIXED, .lo = 4096, .hi = 4096 },
		.block = 4096, .sync = 1,
	};
	/* seqio is a file, not a folder. */
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/seqio", e.dir);
	test_write_file(p.buf, "x");
	CU_ASSERT(mod_write.run(&e.ctx, &wa) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, p.buf));
	CU_ASSERT_PTR_NULL(e.state);
	unlink(p.buf);

	/* A file of the set removed behind read's back. */
	sb_reset(&e.err);
	CU_ASSERT_EQUAL_FATAL(mod_write.run(&e.ctx, &wa), 0);
	sb_addf(&p, "/f001");
	unlink(p.buf);
	struct seqio_args ra = { .block = 4096 };
	CU_ASSERT_EQUAL(mod_read.run(&e.ctx, &ra), -ENOENT);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "cannot open %s: No such file or directory", p.buf);
	CU_ASSERT_STRING_EQUAL(e.err.buf, want.buf);
	sb_release(&want);
	sb_release(&p);
	env_release(&e);
}

static void test_cancel(void)
{
	struct rec_env e;
	env_init(&e, 1);
	struct seqio_args wa = {
		.files = 3, .sizes = { .kind = DIST_FIXED, .lo = 65536, .hi = 65536 },
		.block = 4096, .sync = 0,
	};
	e.cancel = 1;
	CU_ASSERT_EQUAL(mod_write.run(&e.ctx, &wa), 0);
	CU_ASSERT_EQUAL(e.rec.nfiles, 0);
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0); /* no cell metrics from a partial set */
	CU_ASSERT_PTR_NULL(e.state);
	e.cancel = 0;
	CU_ASSERT_EQUAL_FATAL(mod_write.run(&e.ctx, &wa), 0);
	env_reset_rec(&e);
	e.cancel = 1;
	struct seqio_args ra = { .block = 4096 };
	CU_ASSERT_EQUAL(mod_read.run(&e.ctx, &ra), 0);
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	env_release(&e);
}

/* With direct I/O a block that is not a multiple of the alignment is
 * rounded up, and the cell says so. */
static void test_block_rounded(void)
{
	struct rec_env e;
	env_init(&e, 1);
	struct seqio_args wa = {
		.files = 1, .sizes = { .kind = DIST_FIXED, .lo = 10000, .hi = 10000 },
		.block = 1000, .sync = 0,
	};
	CU_ASSERT_EQUAL_FATAL(mod_write.run(&e.ctx, &wa), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "block: rounded up from 1000 to 4096"));
	check_on_disk(e.state);
	env_release(&e);
}

/* --- end to end through the rig binary --- */

/* Lines of text whose module and metric columns are as given. */
static int count_rows(const char *csv, const char *module, const char *metric, const char *unit)
{
	int n = 0;
	const char *line = strchr(csv, '\n');
	while (line && line[1]) {
		line++;
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char *row = xstrndup(line, len);
		/* results.csv: module is column 5, metric 16, unit 18 (no quoted
		 * fields in this plan). */
		char *cols[20] = { 0 };
		int nc = 0;
		for (char *s = row, *c; nc < 20 && (c = strsep(&s, ",")); )
			cols[nc++] = c;
		if (nc >= 18 && !strcmp(cols[4], module) && !strcmp(cols[15], metric) &&
		    !strcmp(cols[17], unit))
			n++;
		free(row);
		line = eol;
	}
	return n;
}

static void test_end_to_end(void)
{
	char *tmp = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, text = STRBUF_INIT, out = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", tmp);
	sb_addf(&out, "%s/out", tmp);
	sb_addf(&text,
		"rig: 1\nname: seqio\nseed: 9\n"
		"target:\n  dirs: [\"%s/a\", \"%s/b\"]\n  names: [A, B]\n"
		"repeat: 2\n"
		"steps:\n"
		"  - write: { files: 3, sizes: 64K..1M, block: 64K }\n"
		"  - read: { block: 128K }\n",
		tmp, tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "-o", out.buf, plan.buf, NULL };
	char *log = NULL;
	int rc = test_run_rig(args, &log);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", log);
	free(log);

	sb_addf(&p, "%s/results.csv", out.buf);
	char *res = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(res);
	/* 2 volumes x 2 repetitions = 4 cells of each module. */
	static const char *const mods[] = { "write", "read" };
	for (int m = 0; m < 2; m++) {
		CU_ASSERT_EQUAL(count_rows(res, mods[m], "rate", "MB/s"), 4);
		CU_ASSERT_EQUAL(count_rows(res, mods[m], "rate_median_file", "MB/s"), 4);
		CU_ASSERT_EQUAL(count_rows(res, mods[m], "bytes", "B"), 4);
		CU_ASSERT_EQUAL(count_rows(res, mods[m], "seconds", "s"), 4);
		/* The fit when time grew with size, else a note: never half. */
		CU_ASSERT_EQUAL(count_rows(res, mods[m], "rate_fit", "MB/s"),
				count_rows(res, mods[m], "overhead_fit", "s"));
	}
	free(res);

	sb_reset(&p);
	sb_addf(&p, "%s/files.csv", out.buf);
	char *files = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(files);
	int lines = 0;
	for (const char *s = files; *s; s++)
		lines += *s == '\n';
	CU_ASSERT_EQUAL(lines, 1 + 3 * 4 * 2); /* header, 3 files x 4 cells x 2 modules */
	CU_ASSERT_PTR_NOT_NULL(strstr(files, ",file,bytes,seconds,rate,disk_offset_min,"
					    "disk_offset_max\n"));
	/* a dirs target: where the files sit on the disk is not known (empty) */
	size_t rows = 0, empty = 0;
	for (const char *s = strchr(files, '\n'); s && s[1]; s = strchr(s + 1, '\n')) {
		const char *e = strchr(s + 1, '\n');
		rows++;
		empty += e && e - s > 2 && e[-1] == ',' && e[-2] == ',';
	}
	CU_ASSERT_EQUAL(empty, rows);
	free(files);

	sb_release(&plan);
	sb_release(&text);
	sb_release(&out);
	sb_release(&p);
	test_rmtree(tmp);
	free(tmp);
}

void register_seqio_tests(void)
{
	CU_pSuite s = test_suite_e2e("seqio (write, read)");
	test_add(s, "fixed sizes and lists used in turn", test_sizes_fixed_and_list);
	test_add(s, "log-uniform sizes: seeded, in bounds, uniform in log", test_sizes_loguniform);
	test_add(s, "write then read, direct: exact sizes, payload on disk", test_write_read_direct);
	test_add(s, "write then read, buffered", test_write_read_buffered);
	test_add(s, "a new write replaces the set; equal sizes give no fit", test_write_replaces);
	test_add(s, "volumes of a phase share sizes, not bytes", test_volumes_share_sizes);
	test_add(s, "read without a write fails clearly", test_read_needs_write);
	test_add(s, "errors name the file and the operation", test_errors_name_the_file);
	test_add(s, "cancellation records no cell metrics", test_cancel);
	test_add(s, "direct I/O rounds an unaligned block up, with a note", test_block_rounded);
	test_add(s, "rig run: write/read plan on dirs, results.csv and files.csv", test_end_to_end);
}
