/*
 * A measured job over one test file (randio.h): what randread, randwrite,
 * seqread and seqwrite share, so that the four measure with one engine.
 * The modules declare their parameters and metrics and say what a pass
 * records; everything between is here.
 *
 * A job: (1) make sure the volume holds the test file of exactly `span`
 * bytes (payload, or zeros for data: zero, under another name), written
 * with 1 MiB sequential writes under a temporary name and renamed when
 * complete, so a file found under the final name is whole and later jobs
 * with the same span and data reuse it (different span or missing: made
 * again); none of this is timed; (2) open it for measured I/O
 * (O_DIRECT/F_NOCACHE when the plan asks, no read-ahead); (3) set up the
 * workers of the engine (randio.h, randio_engine.c): buffers and
 * histograms, all before the clock; (4) for each pass, start the workers
 * from one start line (each sets up its queue first), wait for them,
 * sync a write inside the timing, merge their histograms and hand the
 * pass to the module to record.
 *
 * Engines: io_uring at qd > 1 when the kernel allows it (platform/aio.h);
 * otherwise (qd 1, no io_uring, macOS) psync, threads x qd threads doing
 * pread/pwrite. RIG_ENGINE=psync or RIG_ENGINE=io_uring forces one (tests,
 * benchmarks; io_uring then fails rather than fall back). The engine used
 * is a note of the cell ("engine"), and so is why psync was chosen
 * ("engine_why").
 *
 * Payload of writes: every write carries a fresh payload stream; its
 * slot's buffer, filled once before the clock, gets that stream's stamps
 * (plat_payload_restamp), so every 512-byte sector written is unique. With
 * data: zero the buffers hold zeros and are never restamped.
 *
 * Timing: from the first submission to the last completion, across all
 * workers, per pass. A write also syncs the file at the end of each pass,
 * inside its timing (methodology: time the final sync of written data;
 * without it a buffered write would measure memory copies). The latency
 * percentiles are those of the requests themselves, without the sync.
 *
 * Passes: each pass is measured and recorded on its own (the disk-mark
 * tools' passes; the reports show their best beside the mean). A random
 * job's offset and payload streams continue from pass to pass, so every
 * pass reads or writes new places and a write never repeats a stamp; a
 * sequential job starts every pass at the start of each thread's share.
 *
 * Rejected: timing per worker and adding rates (a worker that started late
 * or ended early would inflate the sum); sharing one file descriptor's
 * offset (pread/pwrite and io_uring take the offset per request); one
 * payload buffer for all requests in flight (the kernel may still be
 * reading it for a write while it is refilled); plat_payload_copy of a fresh
 * window of the pool into the slot's buffer for every write (the window is
 * cache-cold: randwrite at 4K QD32 on a RAM-backed loop device fell
 * measurably below fio, bench/README.md; each slot is now filled once
 * before the clock and restamped per write, fio's scramble_buffers: see
 * randio.h); a sequential job whose threads all sweep the whole file, as
 * fio's numjobs on one file does (the threads would read each other's
 * blocks from the device's cache, and a pass would move threads x span
 * bytes); laying the file out inside the first pass of seqwrite (the
 * first pass would time block allocation, the others overwrites: fio
 * lays its file out before it starts the clock too).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/randio.h"
#include "modules/run_time.h"
#include "platform/aio.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"

const char *const mod_randio_file_choices[] = { "keep", "fresh", NULL };

/* --- per-volume state: the test files, removed at the end of the layout --- */

struct randio_state {
	char *path[2]; /* by enum randio_data */
};

void mod_randio_release(void *state)
{
	struct randio_state *s = state;
	if (!s)
		return;
	for (int i = 0; i < 2; i++) {
		if (s->path[i])
			unlink(s->path[i]);
		free(s->path[i]);
	}
	free(s);
}

static void remember_file(struct rig_ctx *ctx, enum randio_data data, const char *path)
{
	if (!ctx->volstate)
		return;
	struct randio_state *s = *ctx->volstate;
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		*ctx->volstate = s;
	}
	if (!s->path[data])
		s->path[data] = xstrdup(path);
}

/* --- the test file --- */

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const unsigned char *p = buf;
	while (len) {
		ssize_t n = fault_pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* The cell's payload pool (64 MiB of prng output: made only when the cell
 * writes payload, the file or a random-data write). Windows up to
 * max(block, fill chunk). */
static int make_payload(struct rig_ctx *ctx, struct payload *pl, uint64_t block)
{
	size_t len = block > RANDIO_FILL_CHUNK ? (size_t)block : RANDIO_FILL_CHUNK;
	int rc = plat_payload_init(pl, mod_randio_payload_seed(ctx->seed, ctx->volume), len);
	if (rc < 0)
		sb_addf(ctx->err, "cannot allocate the payload pool: %s", strerror(-rc));
	return rc;
}

/*
 * Make path a complete file of span bytes (payload, or zeros) unless it
 * already is one. *created tells which. 0, 1 when cancelled, or a negative
 * errno. Makes the payload pool *pl when it fills the file with payload.
 */
static int prepare_file(struct rig_ctx *ctx, const char *path, const struct randio_spec *sp,
			struct payload *pl, int *created, uint64_t *took_ns)
{
	struct stat st;
	uint64_t t0 = plat_clock_ns();
	*created = 0;
	*took_ns = 0;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == sp->span)
		return 0;
	*created = 1;
	if (unlink(path) < 0 && errno != ENOENT) { /* free its space before filling */
		int e = errno;
		sb_addf(ctx->err, "cannot remove %s: %s", path, strerror(e));
		return -e;
	}
	int zero = sp->data == RANDIO_DATA_ZERO, rc = 0;
	void *zeros = NULL;
	if (zero) {
		zeros = plat_alloc_io(RANDIO_FILL_CHUNK, plat_direct_align());
		if (!zeros) {
			sb_addf(ctx->err, "cannot allocate %u bytes to fill %s", RANDIO_FILL_CHUNK,
				path);
			return -ENOMEM;
		}
		memset(zeros, 0, RANDIO_FILL_CHUNK);
	} else if (!pl->pool) {
		rc = make_payload(ctx, pl, sp->block);
		if (rc < 0)
			return rc;
	}
	struct strbuf tmp = STRBUF_INIT;
	sb_addf(&tmp, "%s.tmp", path);
	int applied;
	int fd = plat_open_data(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644, ctx->direct, &applied);
	if (fd < 0) {
		sb_addf(ctx->err, "cannot create %s: %s", tmp.buf, strerror(-fd));
		sb_release(&tmp);
		free(zeros);
		return fd;
	}
	/* Direct I/O wants whole aligned blocks: write past the end, then cut. */
	uint64_t align = plat_direct_align();
	uint64_t total = applied ? (sp->span + align - 1) / align * align : sp->span;
	uint64_t stream = prng_derive_seed(ctx->seed, "randio/fill");
	for (uint64_t off = 0; off < total && rc == 0;) {
		if (*ctx->cancel) {
			rc = 1;
			break;
		}
		size_t n = total - off < RANDIO_FILL_CHUNK ? (size_t)(total - off) : RANDIO_FILL_CHUNK;
		const void *src = zero ? zeros : plat_payload_block(pl, stream, off, n);
		rc = write_all(fd, src, n, off);
		if (rc < 0) {
			sb_addf(ctx->err, "cannot write %s at offset %llu: %s", tmp.buf,
				(unsigned long long)off, strerror(-rc));
			if (rc == -ENOSPC || rc == -EDQUOT)
				sb_addf(ctx->err, " (a test file of %llu bytes needs that much free "
					"space%s)", (unsigned long long)sp->span,
					sp->fresh ? ", laid out anew after the steps before it: a fill "
						    "must leave room for it" : "");
		}
		off += n;
	}
	if (rc == 0 && total != sp->span && ftruncate(fd, (off_t)sp->span) < 0) {
		rc = -errno;
		sb_addf(ctx->err, "cannot truncate %s: %s", tmp.buf, strerror(-rc));
	}
	if (rc == 0) {
		rc = plat_fault_full_sync(fd);
		if (rc < 0)
			sb_addf(ctx->err, "cannot sync %s: %s", tmp.buf, strerror(-rc));
	}
	if (rc == 0 && !applied)
		plat_drop_file_cache(fd); /* best effort: reads must not start from the cache */
	close(fd);
	if (rc == 0 && rename(tmp.buf, path) < 0) {
		rc = -errno;
		sb_addf(ctx->err, "cannot rename %s to %s: %s", tmp.buf, path, strerror(-rc));
	}
	if (rc != 0)
		unlink(tmp.buf);
	sb_release(&tmp);
	free(zeros);
	*took_ns = plat_clock_ns() - t0;
	return rc;
}

/* --- engine choice --- */

/*
 * Pick the engine: RIG_ENGINE when set; else psync at qd 1 (one request at
 * a time is what a pread/pwrite loop does with the fewest instructions:
 * measured against fio, io_uring at QD1 is no faster for reads and slower
 * for O_DIRECT writes, bench/README.md); else io_uring when it works here,
 * else psync with the reason in *why. 0 or -EINVAL/-ENOSYS (err set).
 */
static int choose_engine(struct rig_ctx *ctx, uint64_t qd, enum randio_engine *e,
			 struct strbuf *why)
{
	const char *env = getenv("RIG_ENGINE");
	const char *aio = plat_aio_engine_name();
	struct strbuf probe = STRBUF_INIT;
	int rc = 0;
	if (env && *env && !strcmp(env, "psync")) {
		*e = RANDIO_PSYNC;
		sb_adds(why, "RIG_ENGINE=psync");
	} else if (env && *env && strcmp(env, "io_uring") != 0) {
		sb_addf(ctx->err, "RIG_ENGINE=%s is not an engine (io_uring or psync)", env);
		rc = -EINVAL;
	} else if (!(env && *env) && qd == 1) {
		*e = RANDIO_PSYNC;
		sb_adds(why, "qd 1: one synchronous request at a time");
	} else if (plat_aio_probe(&probe) == 0) {
		*e = RANDIO_QUEUE;
	} else if (env && *env) {
		sb_addf(ctx->err, "RIG_ENGINE=io_uring, but io_uring cannot be used here: %s",
			probe.buf);
		rc = -ENOSYS;
	} else {
		*e = RANDIO_PSYNC;
		sb_addf(why, "%s unavailable: %s", aio ? aio : "asynchronous I/O", probe.buf);
	}
	sb_release(&probe);
	return rc;
}

/* --- workers --- */

struct randio_run {
	struct randio_job job;
	struct randio_gate gate;
	struct randio_worker *w;
	unsigned nw;
	unsigned started;
};

static void free_workers(struct randio_run *r)
{
	for (unsigned i = 0; i < r->nw; i++) {
		struct randio_worker *w = &r->w[i];
		if (w->bufs && !w->unsafe_bufs)
			free(w->bufs[0]);
		free(w->bufs);
		free(w->slots);
		free(w->hist);
	}
	free(r->w);
	r->w = NULL;
}

/*
 * Where worker i's requests go. Random: its own offset stream over the
 * whole file, a share of `ops` per pass. Sequential: thread t's share of
 * the file's blocks (mod_randio_budget's split, contiguous, in thread order);
 * the queue engine's worker walks it block by block, psync worker (t, q)
 * takes blocks q, q + qd, q + 2 qd, ... of it; in a sweep (no time) each
 * takes its blocks once per pass.
 */
static void place_worker(struct randio_run *r, const struct randio_spec *sp,
			 struct randio_worker *w, unsigned i)
{
	if (!sp->sequential) {
		w->budget = r->job.ops_mode ? mod_randio_budget(sp->ops, r->nw, i) : 0;
		return;
	}
	unsigned threads = (unsigned)sp->threads;
	uint64_t nb = r->job.nblocks;
	uint64_t first = (uint64_t)w->thread * (nb / threads) +
			 (w->thread < nb % threads ? w->thread : nb % threads);
	uint64_t share = mod_randio_budget(nb, threads, w->thread);
	uint64_t q = w->queue, step = w->nslots == 1 ? sp->qd : 1;
	uint64_t count = step == 1 ? share : (share - q + step - 1) / step;
	mod_randio_stream_sequential(&w->stream, (first + q) * sp->block, step * sp->block, count);
	w->budget = r->job.ops_mode ? count : 0;
}

static int alloc_workers(struct randio_run *r, const struct randio_spec *sp, enum randio_engine e,
			 uint64_t seed, struct strbuf *err)
{
	unsigned threads = (unsigned)sp->threads, qd = (unsigned)sp->qd;
	r->nw = e == RANDIO_QUEUE ? threads : threads * qd;
	unsigned nslots = e == RANDIO_QUEUE ? qd : 1;
	size_t align = plat_direct_align();
	size_t bytes = (size_t)nslots * (size_t)sp->block;
	int fill = r->job.write && !r->job.zero;
	/* All buffers are touched before the clock starts: refuse what would
	 * push the machine into swap rather than measure it. */
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	double phys = pages > 0 && psize > 0 ? (double)pages * (double)psize : 0;
	if (phys > 0 && (double)bytes * r->nw > phys / 2) {
		sb_addf(err, "buffers for %u x %u requests of %llu bytes need %.0f MiB, more than "
			     "half of this machine's memory",
			r->nw, nslots, (unsigned long long)sp->block, (double)bytes * r->nw / 1048576.0);
		return -ENOMEM;
	}
	r->w = xcalloc(r->nw, sizeof(*r->w));
	for (unsigned i = 0; i < r->nw; i++) {
		struct randio_worker *w = &r->w[i];
		w->job = &r->job;
		w->gate = &r->gate;
		w->thread = e == RANDIO_QUEUE ? i : i / qd;
		w->queue = e == RANDIO_QUEUE ? 0 : i % qd;
		w->nslots = nslots;
		mod_randio_stream_init(&w->stream, seed, w->thread, w->queue, r->job.nblocks, sp->block);
		place_worker(r, sp, w, i);
		w->bufs = xcalloc(nslots, sizeof(*w->bufs));
		void *mem = plat_alloc_io(bytes, align);
		if (!mem) {
			sb_addf(err, "cannot allocate %zu bytes of I/O buffers", bytes);
			return -ENOMEM;
		}
		/* Fault the pages in now, not in the timing; payload writes fill
		 * each slot with its payload once (randio.h), then only restamp it. */
		if (!fill)
			memset(mem, 0, bytes);
		for (unsigned s = 0; s < nslots; s++) {
			w->bufs[s] = (char *)mem + (size_t)s * sp->block;
			if (fill)
				plat_payload_copy(r->job.payload, w->stream.slot_base,
					     randio_slot_offset(&w->stream, s), w->bufs[s],
					     (size_t)sp->block);
		}
		w->slots = xcalloc(nslots, sizeof(*w->slots));
		w->hist = xmalloc(sizeof(*w->hist));
		hist_reset(w->hist);
	}
	return 0;
}

/* Before each pass: the start line closed, every worker's counters empty,
 * a sequential stream back at the start of its share. */
static void reset_pass(struct randio_run *r)
{
	r->gate.ready = 0;
	r->gate.go = 0;
	r->started = 0;
	for (unsigned i = 0; i < r->nw; i++) {
		struct randio_worker *w = &r->w[i];
		w->issued = w->done = w->t_first = w->t_last = 0;
		w->stream.seq_i = 0;
		hist_reset(w->hist);
	}
}

/* Start every worker, fire the start when all are set up, wait for them.
 * 0, or a negative errno when threads could not be started (err set);
 * the workers' own errors are left in the workers. */
/* The pass is a measured interval (ctx->time) from the moment the gate
 * opens: the threads' start and their rings' setup are not. */
static int run_workers(struct randio_run *r, enum randio_engine e, uint64_t time_ns,
		       struct run_time *time, struct strbuf *err)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	size_t stack = 512u << 10;
	if (stack < (size_t)PTHREAD_STACK_MIN)
		stack = (size_t)PTHREAD_STACK_MIN;
	pthread_attr_setstacksize(&attr, stack);
	pthread_t *tid = xcalloc(r->nw, sizeof(*tid));
	void *(*body)(void *) = e == RANDIO_QUEUE ? mod_randio_queue_worker : mod_randio_psync_worker;
	int rc = 0;
	for (r->started = 0; r->started < r->nw; r->started++) {
		int e2 = pthread_create(&tid[r->started], &attr, body, &r->w[r->started]);
		if (e2) {
			sb_addf(err, "cannot start I/O thread %u of %u: %s", r->started + 1, r->nw,
				strerror(e2));
			rc = -e2;
			break;
		}
	}
	pthread_attr_destroy(&attr);

	pthread_mutex_lock(&r->gate.mu);
	while (r->gate.ready < r->started)
		pthread_cond_wait(&r->gate.cv, &r->gate.mu);
	int ok = rc == 0;
	for (unsigned i = 0; i < r->started; i++)
		if (r->w[i].err)
			ok = 0;
	if (ok)
		r->job.deadline = mod_run_time_mark(time, RT_MEASURED) + time_ns;
	r->gate.go = ok ? 1 : -1;
	pthread_cond_broadcast(&r->gate.cv);
	pthread_mutex_unlock(&r->gate.mu);

	for (unsigned i = 0; i < r->started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	return rc;
}

/* The message for a worker's error. */
static void worker_error(const struct randio_worker *w, int write, int started, int direct,
			 const char *path, struct strbuf *err)
{
	const char *op = write ? "write" : "read";
	if (!started) {
		sb_addf(err, "cannot set up io_uring on %s: %s", path, w->setup);
	} else if (w->err_off == UINT64_MAX) {
		sb_addf(err, "io_uring wait failed on %s: %s", path, strerror(-w->err));
	} else if (w->err_res >= 0) {
		sb_addf(err, "short %s of %s at offset %llu: %lld of %llu bytes", op, path,
			(unsigned long long)w->err_off, (long long)w->err_res,
			(unsigned long long)w->job->block);
	} else {
		sb_addf(err, "cannot %s %s at offset %llu: %s", op, path,
			(unsigned long long)w->err_off, strerror(-w->err));
		if (w->err == -EINVAL && direct)
			sb_addf(err, " (with direct I/O, block must be a multiple of the device's "
				     "sector size)");
	}
}

/* What a job needs before it starts: 0, or -EINVAL with the reason. */
static int check_spec(struct rig_ctx *ctx, const struct randio_spec *sp, enum randio_engine e,
		      const char *why)
{
	if (!sp->block || !sp->qd || !sp->threads || sp->span < sp->block) {
		sb_addf(ctx->err, "a job needs block, qd and threads of at least 1 and a span of at "
				  "least one block");
		return -EINVAL;
	}
	if (e == RANDIO_PSYNC && sp->threads * sp->qd > RANDIO_MAX_PSYNC_WORKERS) {
		sb_addf(ctx->err, "the psync engine (%s) would need threads x qd = %llu threads; "
				  "at most %u",
			why, (unsigned long long)(sp->threads * sp->qd), RANDIO_MAX_PSYNC_WORKERS);
		return -EINVAL;
	}
	if (sp->sequential && sp->span / sp->block < sp->threads * sp->qd) {
		sb_addf(ctx->err, "span holds %llu blocks, fewer than threads x qd = %llu",
			(unsigned long long)(sp->span / sp->block),
			(unsigned long long)(sp->threads * sp->qd));
		return -EINVAL;
	}
	return 0;
}

/*
 * One pass: run the workers, sync a write, merge. 0 with *out filled, 1
 * when cancelled (nothing to record), or a negative errno (err set).
 */
static int measure_pass(struct rig_ctx *ctx, struct randio_run *r, const struct randio_spec *sp,
			enum randio_engine e, int direct, const char *path, struct randio_pass *out)
{
	reset_pass(r);
	int rc = run_workers(r, e, sp->time_ns, ctx->time, ctx->err);
	if (rc < 0 || !sp->write)
		mod_run_time_mark(ctx->time, RT_SETUP);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < r->nw; i++) {
		if (r->w[i].err) {
			worker_error(&r->w[i], sp->write, r->gate.go > 0, direct, path, ctx->err);
			rc = r->w[i].err;
			break;
		}
	}
	if (*ctx->cancel || rc < 0)
		mod_run_time_mark(ctx->time, RT_SETUP);
	if (*ctx->cancel)
		return 1;
	if (rc < 0)
		return rc;

	uint64_t sync_ns = 0;
	if (sp->write) {
		/* Still measured: the sync is in the pass's seconds. */
		uint64_t t = plat_clock_ns();
		rc = plat_fault_full_sync(r->job.fd);
		sync_ns = mod_run_time_mark(ctx->time, RT_SETUP) - t;
		if (rc < 0) {
			sb_addf(ctx->err, "cannot sync %s: %s", path, strerror(-rc));
			return rc;
		}
	}

	struct histogram *h = xmalloc(sizeof(*h));
	hist_reset(h);
	uint64_t done = 0, t0 = UINT64_MAX, t1 = 0;
	for (unsigned i = 0; i < r->nw; i++) {
		const struct randio_worker *w = &r->w[i];
		if (!w->done)
			continue;
		hist_merge(h, w->hist);
		done += w->done;
		if (w->t_first < t0)
			t0 = w->t_first;
		if (w->t_last > t1)
			t1 = w->t_last;
	}
	if (!done || t1 <= t0) {
		sb_addf(ctx->err, "no %s of %s completed", sp->write ? "write" : "read", path);
		free(h);
		return -EIO;
	}
	out->done = done;
	out->bytes = done * sp->block;
	out->seconds = (double)(t1 - t0 + sync_ns) / 1e9;
	out->lat_p50 = hist_percentile(h, 50) / 1e3;
	out->lat_p99 = hist_percentile(h, 99) / 1e3;
	out->lat_p999 = hist_percentile(h, 99.9) / 1e3;
	free(h);
	return 0;
}

int mod_randio_job_run(struct rig_ctx *ctx, const struct randio_spec *sp)
{
	struct strbuf path = STRBUF_INIT, why = STRBUF_INIT;
	struct payload pl;
	memset(&pl, 0, sizeof(pl));
	struct randio_run r;
	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.gate.mu, NULL);
	pthread_cond_init(&r.gate.cv, NULL);
	int fd = -1, rc, created = 0, direct = 0;
	uint64_t layout_ns = 0;
	enum randio_engine engine = RANDIO_PSYNC;
	int zero = sp->data == RANDIO_DATA_ZERO;

	sb_addf(&path, "%s/%s", ctx->dir, zero ? RANDIO_ZERO_FILE : RANDIO_FILE);
	rc = choose_engine(ctx, sp->qd, &engine, &why);
	if (rc == 0)
		rc = check_spec(ctx, sp, engine, why.buf);
	if (rc < 0)
		goto out;
	remember_file(ctx, sp->data, path.buf);
	if (sp->fresh && unlink(path.buf) < 0 && errno != ENOENT) {
		rc = -errno;
		sb_addf(ctx->err, "cannot remove %s to lay it out anew: %s", path.buf, strerror(-rc));
		goto out;
	}
	rc = prepare_file(ctx, path.buf, sp, &pl, &created, &layout_ns);
	if (rc != 0) {
		rc = rc > 0 ? 0 : rc; /* cancelled: nothing measured */
		goto out;
	}
	mod_place_file(ctx, NULL, path.buf); /* the file_at metrics */
	fd = plat_open_data(path.buf, sp->write ? O_RDWR : O_RDONLY, 0, ctx->direct, &direct);
	if (fd < 0) {
		rc = fd;
		sb_addf(ctx->err, "cannot open %s: %s", path.buf, strerror(-rc));
		goto out;
	}
	plat_no_readahead(fd);
	if (ctx->direct && !direct)
		ctx->direct_used = 0; /* the cache column: buffered after all */

	r.job.fd = fd;
	r.job.write = sp->write;
	r.job.zero = zero;
	r.job.block = sp->block;
	r.job.nblocks = sp->span / sp->block;
	r.job.qd = (unsigned)sp->qd;
	r.job.ops_mode = sp->sequential ? sp->time_ns == 0 : sp->ops > 0;
	if (sp->write && !zero && !pl.pool) {
		rc = make_payload(ctx, &pl, sp->block);
		if (rc < 0)
			goto out;
	}
	r.job.payload = &pl;
	r.job.cancel = ctx->cancel;
	rc = alloc_workers(&r, sp, engine, ctx->seed, ctx->err);
	if (rc < 0)
		goto out;

	uint64_t passes = sp->passes ? sp->passes : 1;
	for (uint64_t k = 1; k <= passes; k++) {
		struct randio_pass p = { .pass = (uint32_t)k };
		rc = measure_pass(ctx, &r, sp, engine, direct, path.buf, &p);
		if (rc != 0) {
			rc = rc > 0 ? 0 : rc; /* cancelled: the passes recorded stay */
			break;
		}
		if (k == 1) {
			cell_note(ctx, "engine", engine == RANDIO_QUEUE ? plat_aio_engine_name() : "psync");
			if (why.len)
				cell_note(ctx, "engine_why", why.buf);
			if (engine == RANDIO_QUEUE)
				cell_note(ctx, "io_uring", r.w[0].setup);
			if (ctx->direct && !direct)
				cell_note(ctx, "direct", "refused by the file system: buffered I/O");
			cell_note(ctx, "file", created ? "created" : "reused");
			if (created) {
				struct strbuf lay = STRBUF_INIT;
				sb_addf(&lay, "%llu bytes in %.3f s, before the first pass's clock",
					(unsigned long long)sp->span, (double)layout_ns / 1e9);
				cell_note(ctx, "file_layout", lay.buf);
				sb_release(&lay);
			}
		}
		sp->record(ctx, &p);
	}
out:
	if (r.w)
		free_workers(&r);
	if (fd >= 0)
		close(fd);
	if (sp->fresh)
		unlink(path.buf); /* like the tools, after the test: not there for the next step */
	plat_payload_release(&pl);
	pthread_mutex_destroy(&r.gate.mu);
	pthread_cond_destroy(&r.gate.cv);
	sb_release(&path);
	sb_release(&why);
	return rc;
}

/* --- estimates --- */

void mod_randio_estimate(const struct randio_spec *sp, struct est_cell *c)
{
	struct est_slot *s = c->slot;
	double span = (double)sp->span;
	int d = sp->data == RANDIO_DATA_ZERO;
	if (sp->fresh && s->part[d] > 0) { /* removed first, laid out anew below */
		s->bytes -= s->part[d];
		s->files -= 1;
		s->part[d] = 0;
	}
	if (s->part[d] != span) { /* the old file is removed before the new one is laid out */
		s->bytes += span - s->part[d];
		s->files += s->part[d] > 0 ? 0 : 1;
		s->part[d] = span;
		c->written += span;
		c->moved += span;
		c->files += 1;
	}
	c->need = s->bytes;
	c->largest = span;
	if (sp->fresh) { /* removed after the cell */
		s->bytes -= span;
		s->files -= 1;
		s->part[d] = 0;
	}
	double passes = sp->passes ? (double)sp->passes : 1;
	if (sp->time_ns) {
		c->seconds += passes * (double)sp->time_ns / 1e9;
		if (sp->write)
			c->write_seconds += passes * (double)sp->time_ns / 1e9;
		/* A pass ends when the requests in flight at its deadline have
		 * completed: threads x qd blocks more (seen on the synthetic
		 * disk: 4 MiB at QD32 of 128 KiB, 40 ms a pass at 100 MB/s). */
		double drain = (double)sp->threads * (double)sp->qd * (double)sp->block;
		drain = passes * (drain < span ? drain : span);
		c->moved += drain;
		if (sp->write)
			c->written += drain;
		return;
	}
	double bytes = passes * (sp->ops ? (double)sp->ops * (double)sp->block : span);
	c->moved += bytes;
	if (sp->write)
		c->written += bytes;
}
