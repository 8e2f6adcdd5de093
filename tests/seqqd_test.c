/*
 * Tests of seqread and seqwrite (modules/seqqd.c) and the sequential
 * side of the job they share with randread/randwrite (randio_job.c):
 * parameters refused at their file:line:column; per-pass samples and the
 * bytes a sweep moves; the test file laid out before the first pass's
 * clock and reused; what seqwrite leaves on disk with random and zero
 * data; both engines; time-limited passes; cancellation and cleanup;
 * `rig help`; and whole runs of a plan on directories.
 *
 * Modules are called directly on small files (8 MiB) in a temporary
 * directory with a recording sink. Where io_uring is unavailable the
 * io_uring runs are skipped with a message (the psync runs still run).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_util.h"
#include "lib/strbuf.h"
#include "modules/module.h"
#include "modules/randio.h"
#include "modules/seqqd.h"
#include "plan/plan.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"
#include "provision_util.h"
#include "rec_sink.h"
#include "report_util.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MIB (1u << 20)

/* --- validation: errors at the value, or at the step for cross-checks --- */

struct bad {
	const char *name;
	const char *step;  /* the step line, at line 6 of the plan */
	int line, col;
	const char *msg;   /* a substring of the first error */
};

#define HDR "rig: 1\nname: t\ntarget:\n  dirs: [/tmp/a]\nsteps:\n"

static const struct bad bad_cases[] = {
	{ "qd 0", "  - seqread: { qd: 0 }", 6, 20, "'qd' in step 'seqread' is 0, below the minimum of 1" },
	{ "qd too deep", "  - seqwrite: { qd: 4096 }", 6, 21,
	  "'qd' in step 'seqwrite' is 4096, above the maximum of 1024" },
	{ "block not 4K aligned", "  - seqread: { block: 6K }", 6, 23,
	  "'block' in step 'seqread' is 6K, not a multiple of 4K (4096 bytes)" },
	{ "block of 512 bytes", "  - seqwrite: { block: 512, span: 1M, qd: 1 }", 6, 24,
	  "'block' in step 'seqwrite' is 512, below the minimum of 4K" },
	{ "span smaller than block", "  - seqread: { block: 1M, span: 512K }", 6, 5,
	  "span (524288 bytes) is smaller than block (1048576 bytes)" },
	{ "span not whole blocks", "  - seqread: { block: 1M, span: 1536K, qd: 1 }", 6, 5,
	  "span (1572864 bytes) is not a whole number of blocks (1048576 bytes)" },
	{ "span holds fewer blocks than requests", "  - seqwrite: { block: 1M, span: 4M, qd: 2, threads: 4 }",
	  6, 5, "span holds 4 blocks, fewer than threads x qd = 8 requests in flight" },
	{ "unknown data", "  - seqread: { data: ones }", 6, 22,
	  "unknown value 'ones' for 'data' in step 'seqread' (expected one of random, zero)" },
	{ "no passes", "  - seqread: { passes: 0 }", 6, 24, "'passes' in step 'seqread' is 0, below" },
	{ "time too short", "  - seqread: { time: 10us }", 6, 22, "'time' in step 'seqread' is 10us, below" },
	{ "block from a sweep value", "  - sweep:\n      bs: [128K, 6K]\n      steps:\n"
	  "        - seqread: { block: $bs, span: 64M }", 7, 18,
	  "'block' in step 'seqread' is 6K (the value of $bs), not a multiple of 4K" },
};

static const struct diag_item *first_error(const struct diag *d)
{
	const struct diag_item *best = NULL;
	for (size_t i = 0; i < d->n; i++) {
		const struct diag_item *it = &d->items[i];
		if (it->level == DIAG_ERROR &&
		    (!best || it->mark.line < best->mark.line ||
		     (it->mark.line == best->mark.line && it->mark.col < best->mark.col)))
			best = it;
	}
	return best;
}

static void test_validation(void)
{
	for (size_t i = 0; i < N(bad_cases); i++) {
		const struct bad *c = &bad_cases[i];
		struct strbuf text = STRBUF_INIT;
		sb_addf(&text, HDR "%s\n", c->step);
		struct diag d;
		diag_init(&d, "plan.yaml", NULL);
		struct plan *p = plan_parse_text("plan.yaml", text.buf, text.len, NULL, &d);
		const struct diag_item *e = first_error(&d);
		if (!e || e->mark.line != c->line || e->mark.col != c->col || !strstr(e->msg, c->msg)) {
			fprintf(stderr, "\n  case '%s': want %d:%d %s\n  got ", c->name, c->line, c->col,
				c->msg);
			if (e)
				fprintf(stderr, "%d:%d %s\n", e->mark.line, e->mark.col, e->msg);
			else
				fprintf(stderr, "no error\n");
			CU_FAIL("validation case");
		}
		plan_free(p);
		diag_release(&d);
		sb_release(&text);
	}
}

/* The disk-mark set validates: every row, both directions. */
static void test_valid(void)
{
	const char *text = HDR
		"  - seqwrite: { block: 1M, qd: 8, span: 1G, passes: 3 }\n"
		"  - seqread: { block: 1M, qd: 1, span: 1G, passes: 3, time: 5s }\n"
		"  - seqread: { block: 128K, qd: 32, span: 100M, data: zero }\n"
		"  - seqwrite: { block: 4K, qd: 32, threads: 16, span: 2M }\n";
	struct diag d;
	diag_init(&d, "plan.yaml", NULL);
	struct plan *p = plan_parse_text("plan.yaml", text, strlen(text), NULL, &d);
	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	if (d.nerrors)
		diag_print(&d, stderr);
	plan_free(p);
	diag_release(&d);
}

/* --- runs of the modules, called directly --- */

struct fx {
	struct iot_vol v;
	struct rec rec;
	struct rig_sink sink;
};

static void fx_init(struct fx *f, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	rec_init(&f->rec, 0);
	f->sink = rec_sink(&f->rec);
	iot_vol_init(&f->v, seed, &f->sink);
}

static void fx_done(struct fx *f)
{
	iot_vol_done(&f->v);
	rec_release(&f->rec);
}

static int run_q(struct fx *f, const char *name, const struct seqqd_args *a, const char *engine,
		 int quiet)
{
	rec_reset(&f->rec);
	return iot_run(&f->v, name, a, engine, quiet);
}

static int run(struct fx *f, const char *name, const struct seqqd_args *a, const char *engine)
{
	return run_q(f, name, a, engine, 0);
}

/* Every value of metric `name` in recording order (at most max); the
 * unit of each asserted. Returns how many. */
static size_t values_of(const struct rec *r, const char *name, const char *unit, double *out,
			size_t max)
{
	size_t n = 0, nl = strlen(name), ul = strlen(unit);
	for (const char *l = r->metrics.buf; l && *l;) {
		const char *eol = strchr(l, '\n');
		if (!strncmp(l, name, nl) && l[nl] == '=') {
			char *end;
			double v = strtod(l + nl + 1, &end);
			CU_ASSERT(*end == ' ' && !strncmp(end + 1, unit, ul) && end[1 + ul] == '\n');
			if (n < max)
				out[n] = v;
			n++;
		}
		l = eol ? eol + 1 : NULL;
	}
	return n;
}

/* The value of note key (the last one recorded), or NULL; caller frees. */
static char *note_of(const struct rec *r, const char *key)
{
	char *found = NULL;
	size_t kl = strlen(key);
	for (const char *l = r->notes.buf; l && *l;) {
		const char *eol = strchr(l, '\n');
		if (!strncmp(l, key, kl) && l[kl] == ':' && l[kl + 1] == ' ') {
			free(found);
			found = strndup(l + kl + 2, (size_t)((eol ? eol : l + strlen(l)) - (l + kl + 2)));
		}
		l = eol ? eol + 1 : NULL;
	}
	return found;
}

static int note_is(const struct rec *r, const char *key, const char *want)
{
	char *v = note_of(r, key);
	int ok = v && !strcmp(v, want);
	if (!ok)
		fprintf(stderr, "\n  note %s: want '%s', got '%s'\n", key, want, v ? v : "(none)");
	free(v);
	return ok;
}

/* The metrics of every pass, in the table's order, each pass whole. */
static void check_passes(const struct rec *r, const struct seqqd_args *a, int sweep)
{
	static const char *const names[] = { "rate", "iops", "lat_p50", "lat_p99", "lat_p999",
					     "bytes", "seconds" };
	static const char *const units[] = { "MB/s", "IO/s", "us", "us", "us", "B", "s" };
	double v[7][16];
	for (size_t m = 0; m < 7; m++) {
		size_t n = values_of(r, names[m], units[m], v[m], 16);
		CU_ASSERT_EQUAL_FATAL(n, a->passes);
	}
	/* Recorded pass by pass: the lines cycle through the table. */
	const char *l = r->metrics.buf;
	for (size_t i = 0; i < 7 * a->passes; i++) {
		CU_ASSERT_FATAL(l != NULL);
		CU_ASSERT(!strncmp(l, names[i % 7], strlen(names[i % 7])) && l[strlen(names[i % 7])] == '=');
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	double total = 0;
	for (uint64_t p = 0; p < a->passes; p++) {
		double rate = v[0][p], iops = v[1][p], bytes = v[5][p], secs = v[6][p];
		CU_ASSERT(rate > 0 && isfinite(rate) && secs > 0);
		CU_ASSERT_DOUBLE_EQUAL(rate, bytes / secs / 1e6, rate * 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(iops * (double)a->block, rate * 1e6, rate * 1e-3);
		CU_ASSERT(v[2][p] > 0 && v[2][p] <= v[3][p] && v[3][p] <= v[4][p]);
		CU_ASSERT_EQUAL(fmod(bytes, (double)a->block), 0);
		if (sweep) {
			CU_ASSERT_EQUAL(bytes, (double)a->span); /* one sweep of the file */
		} else {
			/* The deadline runs from the start line; a worker's first
			 * submission comes a thread wake-up later. */
			CU_ASSERT(secs >= 0.8 * (double)a->time_ns / 1e9);
		}
		total += bytes;
	}
	if (sweep) {
		CU_ASSERT_EQUAL(total, (double)a->span * (double)a->passes);
	}
}

static struct seqqd_args args(uint64_t block, uint64_t qd, uint64_t threads, uint64_t passes)
{
	return (struct seqqd_args){ .block = block, .qd = qd, .threads = threads,
				    .span = 8 * MIB, .passes = passes };
}

static void seq_with(const char *engine)
{
	struct fx f;
	fx_init(&f, 11);
	struct seqqd_args a = args(128 << 10, 4, 2, 3);
	CU_ASSERT_EQUAL_FATAL(run(&f, "seqwrite", &a, engine), 0);
	check_passes(&f.rec, &a, 1);
	CU_ASSERT(note_is(&f.rec, "engine", engine));
	CU_ASSERT(note_is(&f.rec, "file", "created"));
	CU_ASSERT_EQUAL(f.v.ctx.direct_used, note_of(&f.rec, "direct") ? 0 : 1);

	/* seqread uses the file seqwrite laid out: same span and data. */
	a = args(64 << 10, 8, 1, 2);
	CU_ASSERT_EQUAL_FATAL(run(&f, "seqread", &a, engine), 0);
	check_passes(&f.rec, &a, 1);
	CU_ASSERT(note_is(&f.rec, "file", "reused"));
	CU_ASSERT_PTR_NULL(note_of(&f.rec, "file_layout"));
	fx_done(&f);
}

static void test_psync(void)
{
	seq_with("psync");
}

static void test_uring(void)
{
	if (iot_have_uring())
		seq_with("io_uring");
}

/* qd 1 without RIG_ENGINE: psync, one request at a time, as randread. */
static void test_qd1(void)
{
	struct fx f;
	fx_init(&f, 12);
	struct seqqd_args a = args(1 * MIB, 1, 1, 2);
	CU_ASSERT_EQUAL_FATAL(run(&f, "seqread", &a, NULL), 0);
	check_passes(&f.rec, &a, 1);
	CU_ASSERT(note_is(&f.rec, "engine", "psync"));
	fx_done(&f);
}

/*
 * The test file is made before the clock: the layout's writes go to the
 * temporary name and all come before the first measured write (fault
 * rules count writes: with 8 layout writes of 1 MiB, the 8th is the
 * layout's last, the 9th the first pass's first), and the note says when.
 */
static void test_layout_first(void)
{
	struct strbuf err = STRBUF_INIT;
	struct seqqd_args a = args(1 * MIB, 1, 1, 1);
	for (int nth = 8; nth <= 9; nth++) {
		struct fx f;
		fx_init(&f, 13);
		char rule[64];
		snprintf(rule, sizeof(rule), "io:write:%d:EIO", nth);
		CU_ASSERT_EQUAL_FATAL(plat_fault_set(rule, &err), 0);
		int rc = run_q(&f, "seqwrite", &a, "psync", 1);
		plat_fault_set(NULL, &err);
		CU_ASSERT_EQUAL(rc, -EIO);
		struct strbuf want = STRBUF_INIT;
		if (nth == 8)
			sb_addf(&want, "cannot write %s/%s.tmp at offset %u", f.v.dir, RANDIO_FILE, 7 * MIB);
		else
			sb_addf(&want, "cannot write %s/%s at offset 0", f.v.dir, RANDIO_FILE);
		CU_ASSERT_PTR_NOT_NULL(strstr(f.v.err.buf, want.buf));
		if (!strstr(f.v.err.buf, want.buf))
			fprintf(stderr, "\n  want '%s'\n  got  '%s'\n", want.buf, f.v.err.buf);
		sb_release(&want);
		fx_done(&f);
	}
	sb_release(&err);

	struct fx f;
	fx_init(&f, 14);
	CU_ASSERT_EQUAL_FATAL(run(&f, "seqread", &a, "psync"), 0);
	char *lay = note_of(&f.rec, "file_layout");
	CU_ASSERT_PTR_NOT_NULL(lay);
	CU_ASSERT_PTR_NOT_NULL(lay ? strstr(lay, "8388608 bytes in ") : NULL);
	CU_ASSERT_PTR_NOT_NULL(lay ? strstr(lay, "before the first pass's clock") : NULL);
	free(lay);
	/* The pass measured reads of the whole file and nothing else. */
	double bytes;
	CU_ASSERT_EQUAL(values_of(&f.rec, "bytes", "B", &bytes, 1), 1);
	CU_ASSERT_EQUAL(bytes, 8.0 * MIB);
	fx_done(&f);
}

static unsigned char *read_whole(const char *path, size_t len)
{
	unsigned char *buf = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	int fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	struct stat st;
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL((size_t)st.st_size, len);
	CU_ASSERT_EQUAL(pread(fd, buf, len, 0), (ssize_t)len);
	close(fd);
	return buf;
}

/*
 * What seqwrite leaves: with data: random, one sweep overwrote every block
 * (none still holds the layout's payload) with payload whose sectors are
 * all different; with data: zero, a file of zeros under its own name, and
 * the payload file untouched by it.
 */
static void data_with(const char *engine)
{
	struct fx f;
	fx_init(&f, 15);
	struct seqqd_args a = args(256 << 10, 4, 2, 1);
	struct strbuf rnd = STRBUF_INIT, zer = STRBUF_INIT;
	sb_addf(&rnd, "%s/%s", f.v.dir, RANDIO_FILE);
	sb_addf(&zer, "%s/%s", f.v.dir, RANDIO_ZERO_FILE);

	CU_ASSERT_EQUAL_FATAL(run(&f, "seqwrite", &a, engine), 0);
	unsigned char *file = read_whole(rnd.buf, a.span);
	struct payload pl;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&pl, mod_randio_payload_seed(f.v.ctx.seed, f.v.ctx.volume), RANDIO_FILL_CHUNK), 0);
	uint64_t fill = prng_derive_seed(f.v.ctx.seed, "randio/fill");
	size_t unwritten = 0, zeros = 0;
	for (uint64_t off = 0; off < a.span; off += a.block) {
		unwritten += plat_payload_check(&pl, fill, off, file + off, (size_t)a.block) == 0;
		int z = 1;
		for (size_t i = 0; i < a.block && z; i++)
			z = file[off + i] == 0;
		zeros += z;
	}
	CU_ASSERT_EQUAL(unwritten, 0);
	CU_ASSERT_EQUAL(zeros, 0);
	CU_ASSERT_EQUAL(iot_equal_sectors(file, a.span), 0);
	plat_payload_release(&pl);

	a.data = 1; /* zero */
	CU_ASSERT_EQUAL_FATAL(run(&f, "seqwrite", &a, engine), 0);
	CU_ASSERT(note_is(&f.rec, "file", "created")); /* its own file, not the payload one */
	unsigned char *z = read_whole(zer.buf, a.span);
	size_t nonzero = 0;
	for (size_t i = 0; i < a.span; i++)
		nonzero += z[i] != 0;
	CU_ASSERT_EQUAL(nonzero, 0);
	free(z);
	unsigned char *again = read_whole(rnd.buf, a.span);
	CU_ASSERT_EQUAL(memcmp(file, again, a.span), 0);
	free(again);
	free(file);

	/* seqread with zero data reuses the zero file; random data the other. */
	CU_ASSERT_EQUAL(run(&f, "seqread", &a, engine), 0);
	CU_ASSERT(note_is(&f.rec, "file", "reused"));
	a.data = 0;
	CU_ASSERT_EQUAL(run(&f, "seqread", &a, engine), 0);
	CU_ASSERT(note_is(&f.rec, "file", "reused"));

	/* The end of the layout removes both files. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.v.state);
	mod_find("seqwrite")->release_state(f.v.state);
	f.v.state = NULL;
	CU_ASSERT_FALSE(iot_exists(&f.v, RANDIO_FILE));
	CU_ASSERT_FALSE(iot_exists(&f.v, RANDIO_ZERO_FILE));
	sb_release(&rnd);
	sb_release(&zer);
	fx_done(&f);
}

static void test_data_psync(void)
{
	data_with("psync");
}

static void test_data_uring(void)
{
	if (iot_have_uring())
		data_with("io_uring");
}

/* With `time`, each pass runs that long, wrapping around the file. */
static void test_time(void)
{
	struct fx f;
	fx_init(&f, 16);
	struct seqqd_args a = args(64 << 10, 4, 1, 2);
	a.span = 1 * MIB;
	a.time_ns = 120000000;
	const char *engines[] = { "psync", iot_have_uring() ? "io_uring" : NULL };
	for (size_t k = 0; k < N(engines) && engines[k]; k++) {
		CU_ASSERT_EQUAL_FATAL(run(&f, "seqread", &a, engines[k]), 0);
		check_passes(&f.rec, &a, 0);
		double bytes[2];
		CU_ASSERT_EQUAL(values_of(&f.rec, "bytes", "B", bytes, 2), 2);
		/* A 1 MiB file is read many times over in 120 ms. */
		CU_ASSERT(bytes[0] > (double)a.span && bytes[1] > (double)a.span);
	}
	fx_done(&f);
}

static void test_cancel(void)
{
	struct fx f;
	fx_init(&f, 17);
	struct seqqd_args a = args(1 * MIB, 2, 1, 3);
	f.v.cancel = 1;
	CU_ASSERT_EQUAL(run(&f, "seqwrite", &a, NULL), 0);
	CU_ASSERT_EQUAL(f.rec.metrics.len, 0);
	/* Cancelled during the layout: no half file under the real name. */
	CU_ASSERT_FALSE(iot_exists(&f.v, RANDIO_FILE));
	CU_ASSERT_FALSE(iot_exists(&f.v, RANDIO_FILE ".tmp"));
	fx_done(&f);
}

/* A job the validator would refuse fails at run time too (a plan is
 * checked, a direct caller may not be). */
static void test_refused_at_run(void)
{
	struct fx f;
	fx_init(&f, 18);
	struct seqqd_args a = args(1 * MIB, 8, 2, 1);
	a.span = 4 * MIB;
	CU_ASSERT_EQUAL(run_q(&f, "seqread", &a, "psync", 1), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.v.err.buf, "fewer than threads x qd = 16"));
	fx_done(&f);
}

static void test_help(void)
{
	static const char *const mods[] = { "seqread", "seqwrite" };
	for (size_t i = 0; i < N(mods); i++) {
		const char *args_[] = { "help", mods[i], NULL };
		char *out = NULL;
		CU_ASSERT_EQUAL(test_run_rig(args_, &out), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(out);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "a multiple of 4096 bytes"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "  passes "));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "choice: random, zero, default random"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "The report's headline: rate, higher is better"));
		free(out);
	}
	const struct rig_module *r = mod_find("seqread"), *w = mod_find("seqwrite");
	CU_ASSERT_EQUAL(r->kind, MOD_READS);
	CU_ASSERT_EQUAL(w->kind, MOD_WRITES);
	CU_ASSERT_EQUAL(r->flags, 0); /* touches the volume, sets no level */
	CU_ASSERT_EQUAL(r->direct_io, 1);
	CU_ASSERT_PTR_NULL(r->needs); /* seqread lays out its own file */
}

/* The median of n values (sorted in place). */
static double median_of(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * configs/diskmark.yaml, scaled down (16 MiB file, 100 ms passes, two
 * repetitions), run by the binary on a directory: every test gives three
 * passes per cell; the file is laid out by the first cell and reused by
 * every other (one file for the set, as the tools have); summary.csv's
 * best of passes for SEQ1M Q8T1 is the median over the repetitions of each
 * cell's fastest pass, recomputed here from results.csv's pass column;
 * nothing is left in the directory.
 */
static void test_diskmark_plan(void)
{
	char *tmp = test_tmpdir();
	struct strbuf dir = STRBUF_INIT, plan = STRBUF_INIT, out = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&dir, "%s/disk", tmp);
	sb_addf(&plan, "%s/plan.yaml", tmp);
	sb_addf(&out, "%s/run", tmp);
	const char *pairs[2 * 23 + 2];
	size_t np = 0;
	pairs[np++] = "/var/tmp/rig-diskmark/disk";
	pairs[np++] = dir.buf;
	pairs[np++] = "repeat: 1";
	pairs[np++] = "repeat: 2";
	for (int i = 0; i < 10; i++) {
		pairs[np++] = "span: 1G, passes: 3, time: 5s";
		pairs[np++] = "span: 16M, passes: 3, time: 100ms";
	}
	pairs[np++] = "formats: [html, csv]";
	pairs[np++] = "formats: [csv]";
	pairs[np++] = NULL;
	pairs[np++] = NULL;
	char *text = pt_config("diskmark", pairs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text), 0);
	free(text);
	CU_ASSERT_EQUAL(test_run_plan_file(plan.buf, out.buf), 0);

	/* 10 steps x 2 repetitions, each cell 3 passes of its headline. */
	char *v = pt_run_query(out.buf, "SELECT count(*) FROM samples WHERE metric = 'rate'");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "60");
	free(v);
	v = pt_run_query(out.buf, "SELECT group_concat(value, ' ') FROM (SELECT value FROM notes "
				  "WHERE key = 'file' ORDER BY seq)");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "created reused reused reused reused reused reused reused "
				       "reused reused reused reused reused reused reused reused reused "
				       "reused reused reused");
	free(v);
	v = pt_run_query(out.buf, "SELECT count(*) FROM notes WHERE key = 'file_layout'");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
	free(v);

	/* Best of passes of step 1 (SEQ1M Q8T1 read) from results.csv. */
	sb_addf(&p, "%s/results.csv", out.buf);
	char *csv = test_read_file(p.buf, NULL);
	char ***rows = NULL;
	CU_ASSERT_TRUE_FATAL(csv && rfx_csv_parse(csv, &rows) == 0);
	double best[2] = { -1, -1 };
	int passes[2] = { 0, 0 };
	for (size_t r = 1; rows[r]; r++) {
		if (strcmp(rows[r][3], "1") || strcmp(rows[r][15], "rate"))
			continue;
		int rep = atoi(rows[r][2]) - 1;
		CU_ASSERT_FATAL(rep == 0 || rep == 1);
		CU_ASSERT_EQUAL(atoi(rows[r][19]), ++passes[rep]); /* pass 1, 2, 3 in order */
		double x = strtod(rows[r][16], NULL);
		if (x > best[rep])
			best[rep] = x;
	}
	CU_ASSERT(passes[0] == 3 && passes[1] == 3);
	double want = median_of(best, 2);
	rfx_csv_free(rows);
	free(csv);
	sb_reset(&p);
	sb_addf(&p, "%s/summary.csv", out.buf);
	csv = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE_FATAL(csv && rfx_csv_parse(csv, &rows) == 0);
	int found = 0;
	for (size_t r = 1; rows[r]; r++) {
		if (strcmp(rows[r][2], "1") || strcmp(rows[r][10], "rate"))
			continue;
		found = 1;
		CU_ASSERT_STRING_EQUAL(rows[r][12], "6");  /* n: 2 cells x 3 passes */
		CU_ASSERT_STRING_EQUAL(rows[r][32], "3");  /* passes */
		CU_ASSERT_DOUBLE_EQUAL(strtod(rows[r][33], NULL), want, want * 1e-12);
	}
	CU_ASSERT(found);
	rfx_csv_free(rows);
	free(csv);

	/* The layout's end removed the file and the run's work folder: the
	 * directory rig made is empty. */
	DIR *dh = opendir(dir.buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dh);
	size_t left = 0;
	for (struct dirent *e; (e = readdir(dh));)
		left += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dh);
	CU_ASSERT_EQUAL(left, 0);
	sb_release(&dir);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&p);
	test_rmtree(tmp);
	free(tmp);
}

void register_seqqd_tests(void)
{
	CU_pSuite s = test_suite_e2e("seqqd (seqread, seqwrite)");
	test_add(s, "parameters refused at their file:line:column", test_validation);
	test_add(s, "the disk-mark rows validate", test_valid);
	test_add(s, "psync: per-pass samples, a sweep moves span bytes, seqread reuses the file",
		 test_psync);
	test_add(s, "io_uring: per-pass samples, a sweep moves span bytes, seqread reuses the file",
		 test_uring);
	test_add(s, "qd 1 uses psync", test_qd1);
	test_add(s, "the test file is laid out before the first pass's clock", test_layout_first);
	test_add(s, "psync: seqwrite overwrites every block; random and zero data", test_data_psync);
	test_add(s, "io_uring: seqwrite overwrites every block; random and zero data",
		 test_data_uring);
	test_add(s, "time: each pass runs that long and wraps", test_time);
	test_add(s, "cancel during the layout leaves no file", test_cancel);
	test_add(s, "a span too small for the requests in flight fails at run time",
		 test_refused_at_run);
	test_add(s, "rig help seqread/seqwrite, kinds and flags", test_help);
	test_add(s, "rig run configs/diskmark.yaml scaled down: passes, one file, best of passes",
		 test_diskmark_plan);
}
