/*
 * Tests of randread/randwrite (modules/randio.c, randio_engine.c) and
 * the io_uring queue (platform/linux_uring.c): offsets (aligned, in the
 * span, uniform, reproducible), work split, and whole runs of both modules
 * with both engines on an 8 MiB file in a temporary directory, called
 * directly with a fake sink. After a randwrite every block of the file is
 * checked against the payload the replayed offset streams say it must
 * hold: the fill's, or one of the writes that hit it (its writer's slot
 * buffer, restamped for the write's stream and offset), and no two
 * 512-byte sectors of the file are equal.
 * Where io_uring is unavailable the io_uring runs are skipped with a
 * message (the psync runs still run).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io_util.h"
#include "lib/strbuf.h"
#include "modules/module.h"
#include "modules/randio.h"
#include "platform/aio.h"
#include "platform/payload.h"
#include "platform/platform.h"
#include "test.h"

/* --- offsets --- */

static void test_offsets_aligned_uniform(void)
{
	enum { BINS = 64, DRAWS = 128000 };
	const uint64_t nblocks = 2048 + 7, block = 4096;
	struct randio_stream s;
	mod_randio_stream_init(&s, 12345, 0, 0, nblocks, block);
	unsigned bins[BINS] = { 0 };
	for (int i = 0; i < DRAWS; i++) {
		uint64_t stream;
		uint64_t off = randio_stream_next(&s, &stream);
		if (off % block || off >= nblocks * block)
			CU_FAIL_FATAL("offset not aligned or outside the span");
		bins[off / block * BINS / nblocks]++;
	}
	/* Chi-square against uniform, 63 degrees of freedom: 103.4 is the
	 * 0.1% critical value (the seed is fixed, so this never flakes). */
	double chi = 0;
	for (int b = 0; b < BINS; b++) {
		/* Bins hold whole blocks: expected share by block count. */
		uint64_t lo = (b * nblocks + BINS - 1) / BINS, hi = ((b + 1) * nblocks + BINS - 1) / BINS;
		double expect = (double)DRAWS * (double)(hi - lo) / (double)nblocks;
		chi += (bins[b] - expect) * (bins[b] - expect) / expect;
	}
	CU_ASSERT(chi < 103.4);
	CU_ASSERT_EQUAL(s.k, DRAWS);
}

static void test_offsets_reproducible(void)
{
	struct randio_stream a, b, c, d, e;
	mod_randio_stream_init(&a, 7, 1, 2, 1000, 512);
	mod_randio_stream_init(&b, 7, 1, 2, 1000, 512);
	mod_randio_stream_init(&c, 7, 2, 1, 1000, 512);
	mod_randio_stream_init(&d, 8, 1, 2, 1000, 512);
	mod_randio_stream_init(&e, 7, 1, 3, 1000, 512);
	int same_c = 0, same_d = 0, same_e = 0;
	uint64_t prev_pa = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t pa, pb, pc, pd, pe;
		uint64_t oa = randio_stream_next(&a, &pa), ob = randio_stream_next(&b, &pb);
		CU_ASSERT_EQUAL(oa, ob);
		CU_ASSERT_EQUAL(pa, pb);
		if (i) {
			CU_ASSERT_NOT_EQUAL(pa, prev_pa); /* a fresh payload stream per write */
		}
		prev_pa = pa;
		same_c += randio_stream_next(&c, &pc) == oa;
		same_d += randio_stream_next(&d, &pd) == oa;
		same_e += randio_stream_next(&e, &pe) == oa;
		CU_ASSERT_NOT_EQUAL(pa, pc);
		CU_ASSERT_NOT_EQUAL(pa, pe);
	}
	/* Independent streams agree about 1 time in 1000 by chance. */
	CU_ASSERT(same_c < 10);
	CU_ASSERT(same_d < 10);
	CU_ASSERT(same_e < 10);
}

static void test_budget(void)
{
	static const struct { uint64_t ops; unsigned n; } cases[] = {
		{ 2000, 1 }, { 2000, 3 }, { 7, 8 }, { 1, 64 }, { 1000001, 256 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint64_t sum = 0, mx = 0, mn = UINT64_MAX;
		for (unsigned i = 0; i < cases[k].n; i++) {
			uint64_t b = mod_randio_budget(cases[k].ops, cases[k].n, i);
			sum += b;
			mx = b > mx ? b : mx;
			mn = b < mn ? b : mn;
		}
		CU_ASSERT_EQUAL(sum, cases[k].ops);
		CU_ASSERT(mx - mn <= 1);
	}
}

/* --- runs with a fake sink --- */

struct fake_sink {
	struct {
		char name[32];
		double value;
		char unit[16];
	} m[16];
	int nm;
	struct {
		char key[32];
		char value[256];
	} n[16];
	int nn;
};

static void fs_metric(void *o, const char *name, double value, const char *unit)
{
	struct fake_sink *f = o;
	if (f->nm == 16)
		return;
	snprintf(f->m[f->nm].name, sizeof(f->m[0].name), "%s", name);
	snprintf(f->m[f->nm].unit, sizeof(f->m[0].unit), "%s", unit);
	f->m[f->nm++].value = value;
}

static void fs_file(void *o, const char *file, uint64_t bytes, double seconds)
{
	(void)o;
	(void)file;
	(void)bytes;
	(void)seconds;
	CU_FAIL("randio records no per-file samples");
}

static void fs_note(void *o, const char *key, const char *value)
{
	struct fake_sink *f = o;
	if (f->nn == 16)
		return;
	snprintf(f->n[f->nn].key, sizeof(f->n[0].key), "%s", key);
	snprintf(f->n[f->nn++].value, sizeof(f->n[0].value), "%s", value);
}

static const char *note_of(const struct fake_sink *f, const char *key)
{
	for (int i = 0; i < f->nn; i++)
		if (!strcmp(f->n[i].key, key))
			return f->n[i].value;
	return NULL;
}

static double metric_of(const struct fake_sink *f, const char *name)
{
	for (int i = 0; i < f->nm; i++)
		if (!strcmp(f->m[i].name, name))
			return f->m[i].value;
	return NAN;
}

struct fixture {
	struct iot_vol v;
	struct fake_sink sink;
	struct rig_sink rs;
};

static void fx_init(struct fixture *f, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	f->rs = (struct rig_sink){ &f->sink, fs_metric, fs_file, fs_note, NULL };
	iot_vol_init(&f->v, seed, &f->rs);
}

static void fx_done(struct fixture *f)
{
	iot_vol_done(&f->v);
}

/* Run module `name` with RIG_ENGINE=engine (NULL: unset). Clears the sink;
 * prints the error unless quiet. */
static int run_module_q(struct fixture *f, const char *name, const struct randio_args *a,
			const char *engine, int quiet)
{
	memset(&f->sink, 0, sizeof(f->sink));
	return iot_run(&f->v, name, a, engine, quiet);
}

static int run_module(struct fixture *f, const char *name, const struct randio_args *a,
		      const char *engine)
{
	return run_module_q(f, name, a, engine, 0);
}

/* The same, for runs expected to fail (no message printed). */
static int run_failing(struct fixture *f, const char *name, const struct randio_args *a,
		       const char *engine)
{
	return run_module_q(f, name, a, engine, 1);
}

static void check_metrics(const struct fake_sink *f, uint64_t block)
{
	static const char *const names[] = { "iops", "rate", "lat_p50", "lat_p99", "lat_p999" };
	static const char *const units[] = { "IO/s", "MB/s", "us", "us", "us" };
	CU_ASSERT_EQUAL_FATAL(f->nm, 5);
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_STRING_EQUAL(f->m[i].name, names[i]);
		CU_ASSERT_STRING_EQUAL(f->m[i].unit, units[i]);
		CU_ASSERT(f->m[i].value > 0 && isfinite(f->m[i].value));
	}
	double iops = metric_of(f, "iops"), rate = metric_of(f, "rate");
	CU_ASSERT_DOUBLE_EQUAL(rate, iops * (double)block / 1e6, rate * 1e-9);
	CU_ASSERT(metric_of(f, "lat_p50") <= metric_of(f, "lat_p99"));
	CU_ASSERT(metric_of(f, "lat_p99") <= metric_of(f, "lat_p999"));
}

/* The module honours cache.direct, and says so unless the file system
 * refused it (then the note and direct_used agree). */
static void check_direct(const struct fixture *f, const char *name)
{
	CU_ASSERT_EQUAL(mod_find(name)->direct_io, 1);
	CU_ASSERT_EQUAL(f->v.ctx.direct_used, note_of(&f->sink, "direct") ? 0 : 1);
}

static void randread_with(const char *engine)
{
	struct fixture f;
	fx_init(&f, 101);
	struct randio_args a = { .block = 4096, .qd = 8, .threads = 2, .span = 8 << 20,
				 .ops = 2000 };
	CU_ASSERT_EQUAL_FATAL(run_module(&f, "randread", &a, engine), 0);
	check_metrics(&f.sink, a.block);
	check_direct(&f, "randread");
	const char *e = note_of(&f.sink, "engine");
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_STRING_EQUAL(e, engine);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "file"), "created");
	if (!strcmp(engine, "io_uring")) {
		CU_ASSERT_PTR_NOT_NULL(note_of(&f.sink, "io_uring"));
	} else {
		CU_ASSERT_PTR_NOT_NULL(note_of(&f.sink, "engine_why"));
	}
	fx_done(&f);
}

static void test_randread_uring(void)
{
	if (iot_have_uring())
		randread_with("io_uring");
}

static void test_randread_psync(void)
{
	randread_with("psync");
}

/* One replayed write: where, its payload stream, and its worker's slot
 * buffers (filled from slot_base at randio_slot_offset of each slot). */
struct wr {
	uint64_t block;
	uint64_t stream;
	uint64_t slot_base;
};

static int cmp_wr(const void *x, const void *y)
{
	const struct wr *a = x, *b = y;
	return a->block < b->block ? -1 : a->block > b->block;
}

/*
 * Replay the writes the engine issued (ops mode: every worker issues
 * exactly its budget from its own stream) and check every block of the
 * file: written blocks hold one of their writers' payload (a slot buffer
 * of the writer's worker restamped for the write: which slot carried it
 * depends on completion order, so any of the worker's slots is accepted),
 * the rest the fill's. Then no two sectors of the file may be equal.
 */
static void verify_file(struct fixture *f, const struct randio_args *a, int psync)
{
	unsigned nw = psync ? (unsigned)(a->threads * a->qd) : (unsigned)a->threads;
	uint64_t nblocks = a->span / a->block;
	struct wr *w = calloc(a->ops, sizeof(*w));
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	size_t n = 0;
	for (unsigned i = 0; i < nw; i++) {
		struct randio_stream s;
		unsigned t = psync ? i / (unsigned)a->qd : i, q = psync ? i % (unsigned)a->qd : 0;
		mod_randio_stream_init(&s, f->v.ctx.seed, t, q, nblocks, a->block);
		for (uint64_t k = mod_randio_budget(a->ops, nw, i); k; k--) {
			uint64_t off = randio_stream_next(&s, &w[n].stream);
			w[n].slot_base = s.slot_base;
			w[n++].block = off / a->block;
		}
	}
	CU_ASSERT_EQUAL_FATAL(n, a->ops);
	qsort(w, n, sizeof(*w), cmp_wr);

	struct payload pl;
	size_t pool = a->block > RANDIO_FILL_CHUNK ? (size_t)a->block : RANDIO_FILL_CHUNK;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&pl, mod_randio_payload_seed(f->v.ctx.seed, f->v.ctx.volume), pool), 0);
	uint64_t fill = prng_derive_seed(f->v.ctx.seed, "randio/fill");
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s", f->v.dir, RANDIO_FILE);
	int fd = open(path.buf, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	struct stat st;
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL((uint64_t)st.st_size, a->span);
	unsigned nslots = psync ? 1 : (unsigned)a->qd;
	struct randio_stream slots; /* only for randio_slot_offset */
	mod_randio_stream_init(&slots, f->v.ctx.seed, 0, 0, nblocks, a->block);
	unsigned char *file = malloc(nblocks * a->block);
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	size_t j = 0, written = 0, bad = 0;
	for (uint64_t b = 0; b < nblocks; b++) {
		unsigned char *buf = file + b * a->block;
		CU_ASSERT_EQUAL_FATAL(pread(fd, buf, a->block, (off_t)(b * a->block)),
				      (ssize_t)a->block);
		int ok = 0, any = 0;
		for (; j < n && w[j].block == b; j++) {
			any = 1;
			for (unsigned sl = 0; sl < nslots && !ok; sl++)
				ok = plat_payload_check_restamped(&pl, w[j].slot_base,
							     randio_slot_offset(&slots, sl),
							     w[j].stream, b * a->block, buf,
							     a->block) == 0;
		}
		if (!any)
			ok = plat_payload_check(&pl, fill, b * a->block, buf, a->block) == 0;
		written += any;
		bad += !ok;
	}
	/* (A fresh plat_payload_copy per write would fail here: its non-stamp bytes
	 * are another window of the pool than the slots', except when two
	 * streams' rotations happen to line up, a few blocks in 3000.) */
	CU_ASSERT_EQUAL(bad, 0);
	/* 3000 writes over 2048 blocks hit about 77% of them. */
	CU_ASSERT(written > nblocks / 2);
	/* Slot buffers are reused, but every sector's stamp is its own. */
	CU_ASSERT_EQUAL(iot_equal_sectors(file, nblocks * a->block), 0);
	close(fd);
	free(file);
	sb_release(&path);
	plat_payload_release(&pl);
	free(w);
}

static void randwrite_with(const char *engine, unsigned qd, unsigned threads)
{
	struct fixture f;
	fx_init(&f, 202 + qd);
	struct randio_args a = { .block = 4096, .qd = qd, .threads = threads, .span = 8 << 20,
				 .ops = 3000 };
	CU_ASSERT_EQUAL_FATAL(run_module(&f, "randwrite", &a, engine), 0);
	check_metrics(&f.sink, a.block);
	check_direct(&f, "randwrite");
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "engine"), engine);
	verify_file(&f, &a, !strcmp(engine, "psync"));
	fx_done(&f);
}

static void test_randwrite_uring(void)
{
	if (iot_have_uring()) {
		randwrite_with("io_uring", 16, 2);
		randwrite_with("io_uring", 1, 1);
	}
}

static void test_randwrite_psync(void)
{
	randwrite_with("psync", 4, 2);
	randwrite_with("psync", 1, 1);
}

static void test_reuse(void)
{
	struct fixture f;
	fx_init(&f, 303);
	struct randio_args a = { .block = 4096, .qd = 2, .threads = 1, .span = 8 << 20,
				 .ops = 200 };
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s", f.v.dir, RANDIO_FILE);
	struct stat st;

	CU_ASSERT_EQUAL(run_module(&f, "randread", &a, "psync"), 0);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "file"), "created");
	CU_ASSERT_EQUAL(run_module(&f, "randwrite", &a, "psync"), 0);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "file"), "reused");
	CU_ASSERT_EQUAL(run_module(&f, "randread", &a, NULL), 0);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "file"), "reused");

	/* Another span: made again, exactly that long (not a multiple of
	 * the block or the direct-I/O alignment). */
	a.span = (4 << 20) + 1000;
	CU_ASSERT_EQUAL(run_module(&f, "randread", &a, "psync"), 0);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "file"), "created");
	CU_ASSERT_EQUAL(stat(path.buf, &st), 0);
	CU_ASSERT_EQUAL((uint64_t)st.st_size, a.span);

	/* Missing: made again. */
	CU_ASSERT_EQUAL(unlink(path.buf), 0);
	CU_ASSERT_EQUAL(run_module(&f, "randread", &a, "psync"), 0);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "file"), "created");
	check_metrics(&f.sink, a.block);

	/* The end of the layout removes it. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.v.state);
	mod_find("randwrite")->release_state(f.v.state);
	f.v.state = NULL;
	CU_ASSERT_EQUAL(stat(path.buf, &st), -1);
	sb_release(&path);
	fx_done(&f);
}

static double now_s(void)
{
	return (double)plat_clock_ns() / 1e9;
}

/* Without RIG_ENGINE: psync at qd 1, io_uring above when it works. */
static void test_auto_engine(void)
{
	struct fixture f;
	fx_init(&f, 707);
	struct randio_args a = { .block = 4096, .qd = 1, .threads = 1, .span = 8 << 20,
				 .ops = 100 };
	CU_ASSERT_EQUAL_FATAL(run_module(&f, "randread", &a, NULL), 0);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "engine"), "psync");
	CU_ASSERT_PTR_NOT_NULL(note_of(&f.sink, "engine_why"));
	a.qd = 4;
	CU_ASSERT_EQUAL_FATAL(run_module(&f, "randread", &a, NULL), 0);
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "engine"), iot_have_uring() ? "io_uring" : "psync");
	fx_done(&f);
}

static void test_time_limit(void)
{
	struct fixture f;
	fx_init(&f, 404);
	struct randio_args a = { .block = 4096, .qd = 4, .threads = 1, .span = 8 << 20,
				 .time_ns = 150000000 };
	/* The file first, so the timed call below is all I/O. */
	struct randio_args prep = a;
	prep.time_ns = 0;
	prep.ops = 1;
	CU_ASSERT_EQUAL_FATAL(run_module(&f, "randread", &prep, NULL), 0);
	const char *engines[] = { "psync", iot_have_uring() ? "io_uring" : NULL };
	for (int k = 0; k < 2 && engines[k]; k++) {
		double t0 = now_s();
		CU_ASSERT_EQUAL(run_module(&f, "randread", &a, engines[k]), 0);
		double dt = now_s() - t0;
		CU_ASSERT(dt >= 0.15);
		CU_ASSERT(dt < 5);
		check_metrics(&f.sink, a.block);
	}
	fx_done(&f);
}

/* Passes: each records its five metrics, pass by pass; the notes are the
 * cell's, once. */
static void test_passes(void)
{
	struct fixture f;
	fx_init(&f, 808);
	struct randio_args a = { .block = 4096, .qd = 4, .threads = 1, .span = 8 << 20,
				 .ops = 500, .passes = 3 };
	CU_ASSERT_EQUAL_FATAL(run_module(&f, "randread", &a, "psync"), 0);
	CU_ASSERT_EQUAL_FATAL(f.sink.nm, 15);
	for (int i = 0; i < 15; i++) {
		CU_ASSERT_STRING_EQUAL(f.sink.m[i].name, f.sink.m[i % 5].name);
		CU_ASSERT(f.sink.m[i].value > 0);
	}
	CU_ASSERT_STRING_EQUAL(note_of(&f.sink, "file"), "created");
	/* Notes once per cell, not per pass. */
	int files = 0;
	for (int i = 0; i < f.sink.nn; i++)
		files += !strcmp(f.sink.n[i].key, "file");
	CU_ASSERT_EQUAL(files, 1);
	fx_done(&f);
}

static void test_cancel(void)
{
	struct fixture f;
	fx_init(&f, 505);
	struct randio_args a = { .block = 4096, .qd = 4, .threads = 2, .span = 8 << 20,
				 .time_ns = 10000000000ull };
	f.v.cancel = 1;
	CU_ASSERT_EQUAL(run_module(&f, "randread", &a, NULL), 0);
	CU_ASSERT_EQUAL(f.sink.nm, 0);
	/* Cancelled during the fill: no half file left under the real name. */
	CU_ASSERT_FALSE(iot_exists(&f.v, RANDIO_FILE));
	fx_done(&f);
}

static void test_errors(void)
{
	struct fixture f;
	fx_init(&f, 606);
	struct randio_args a = { .block = 4096, .qd = 1, .threads = 1, .span = 8 << 20,
				 .ops = 10 };
	CU_ASSERT_EQUAL(run_failing(&f, "randread", &a, "bogus"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.v.err.buf, "RIG_ENGINE=bogus"));

	struct strbuf missing = STRBUF_INIT;
	sb_addf(&missing, "%s/no/such/dir", f.v.dir);
	f.v.ctx.dir = missing.buf;
	int rc = run_failing(&f, "randwrite", &a, "psync");
	CU_ASSERT_EQUAL(rc, -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.v.err.buf, missing.buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(f.v.err.buf, "cannot create"));
	f.v.ctx.dir = f.v.dir;
	sb_release(&missing);
	fx_done(&f);
}

void register_randio_tests(void)
{
	CU_pSuite s = test_suite("randio");
	test_add(s, "offsets: block-aligned, in the span, uniform", test_offsets_aligned_uniform);
	test_add(s, "offsets: reproducible from the seed, independent streams",
		 test_offsets_reproducible);
	test_add(s, "ops split among workers", test_budget);
	test_add(s, "randread with io_uring", test_randread_uring);
	test_add(s, "randread with psync", test_randread_psync);
	test_add(s, "randwrite with io_uring: every block is the payload expected",
		 test_randwrite_uring);
	test_add(s, "randwrite with psync: every block is the payload expected",
		 test_randwrite_psync);
	test_add(s, "test file reused for the same span, made again otherwise", test_reuse);
	test_add(s, "engine without RIG_ENGINE: psync at qd 1, io_uring above", test_auto_engine);
	test_add(s, "time limit", test_time_limit);
	test_add(s, "passes: each recorded apart, notes once", test_passes);
	test_add(s, "cancel before the start", test_cancel);
	test_add(s, "errors name the file and the operation", test_errors);
}
