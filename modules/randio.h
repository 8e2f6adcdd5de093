/*
 * The I/O engine of randread and randwrite (modules/randio.c) and of
 * seqread and seqwrite (modules/seqqd.c): a measured job over one test
 * file (modules/randio_job.c) and its two engines
 * (modules/randio_engine.c); what the modules and the tests share.
 *
 * A run is a set of workers, each a thread with its own offset stream,
 * buffers, histogram and counters (nothing shared while the clock runs
 * but the read-only job and the payload pool):
 *  - queue engine (io_uring through platform/aio.h): one worker per
 *    `threads`, each keeping `qd` requests in flight on its own queue;
 *  - psync engine (portable): `threads` x `qd` workers, each doing one
 *    pread/pwrite at a time.
 * Worker (t, q) draws offsets from the stream labelled "randio/t/q" of the
 * cell's seed; the queue engine's worker t uses (t, 0), so at qd 1 both
 * engines issue exactly the same offsets. A sequential job gives each
 * thread a contiguous share of the file; its queue engine's worker walks
 * the share block after block, its psync workers (t, q) take every qd-th
 * block from the q-th on, so the qd requests in flight are neighbours as
 * they are in a queue. The k-th write of a worker (over all passes)
 * carries payload stream (payload base of (t, q)) + k: every write puts
 * fresh stamps on disk, and a test can replay which stream wrote a block.
 *
 * Write buffers are filled once, before the clock: slot i of worker (t, q)
 * with plat_payload_copy of stream slot_base(t, q) at offset i * block (so the
 * slots of a worker hold different windows of the pool). Each write then
 * only restamps its slot's buffer for (its stream, its offset)
 * (plat_payload_restamp: 8 stamps per 4 KiB, no cold pool bytes pulled into
 * the cache); plat_payload_check_restamped verifies a block against
 * (slot_base, i * block) for some slot i of the writer (which slot carried
 * a request depends on completion order). With data: zero the buffers
 * hold zeros and are never restamped.
 */
#ifndef RIG_RANDIO_H
#define RIG_RANDIO_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "lib/histogram.h"
#include "lib/prng.h"

struct rig_ctx;
struct payload;
struct aio_queue;

struct randio_args {
	uint64_t block;
	uint64_t qd;
	uint64_t threads;
	uint64_t span;
	uint64_t time_ns;
	uint64_t ops;    /* 0: run for time_ns */
	uint64_t passes; /* each measured and recorded apart; 0 counts as 1 */
	int fresh;       /* file: 0 keep, 1 fresh */
};

/* The test file in the volume's directory; created whole under a
 * temporary name and renamed, so a file with this name is always full.
 * Payload (data: random); the file of zeros (data: zero) has its own name,
 * so neither is ever taken for the other. */
#define RANDIO_FILE "rig-randio.dat"
#define RANDIO_ZERO_FILE "rig-randio-zero.dat"
/* The sequential writes that fill it (before the clock starts). */
#define RANDIO_FILL_CHUNK (1u << 20)
/* The `file` parameter of the four modules: keep (0) or fresh (1). */
extern const char *const mod_randio_file_choices[];
#define RANDIO_FILE_HELP \
	"keep: the test file is laid out once and reused by later steps of the same span " \
	"and data on the volume; fresh: it is removed and laid out anew before the cell and " \
	"removed after it, as the disk-mark tools make theirs, so it lands in the free space " \
	"of the moment (a fill sweep)"
/* The metrics of the test file's place every job records, in the modules'
 * lists (module.h: struct rig_metric). */
#define RANDIO_PLACE_METRICS \
	{ "file_at", "%", "where the test file's bytes sit on average: % of the volume's bytes", 0 }, \
	{ "file_at_min", "%", "where the test file's data starts: % of the volume's bytes", 0 }, \
	{ "file_at_max", "%", "where the test file's data ends: % of the volume's bytes", 0 }
/* The psync engine refuses more threads than this (threads x qd). */
#define RANDIO_MAX_PSYNC_WORKERS 4096

/* --- offsets and payload streams (deterministic from the seed) --- */

struct randio_stream {
	struct prng rng;
	uint64_t nblocks;
	uint64_t block;
	uint64_t payload_base;
	uint64_t slot_base; /* payload stream the slot buffers are filled from */
	uint64_t k;      /* requests drawn so far (over every pass) */
	/* Sequential (seq_count > 0): request i of a pass is at
	 * seq_base + (i mod seq_count) * seq_stride. */
	uint64_t seq_base, seq_stride, seq_count;
	uint64_t seq_i;  /* where the next request of this pass is, in [0, seq_count) */
};

void mod_randio_stream_init(struct randio_stream *s, uint64_t seed, unsigned thread, unsigned queue,
			uint64_t nblocks, uint64_t block);
/* Make an initialized stream sequential: count offsets base, base +
 * stride, ..., then from base again (payload streams are unchanged). */
void mod_randio_stream_sequential(struct randio_stream *s, uint64_t base, uint64_t stride,
			      uint64_t count);

/* The next request's byte offset (block-aligned, in [0, nblocks * block))
 * and, in *stream, the payload stream a write there carries (a fresh one
 * per request, sequential or not). */
static inline uint64_t randio_stream_next(struct randio_stream *s, uint64_t *stream)
{
	*stream = s->payload_base + s->k++;
	if (s->seq_count) {
		uint64_t off = s->seq_base + s->seq_i * s->seq_stride;
		if (++s->seq_i == s->seq_count)
			s->seq_i = 0;
		return off;
	}
	return prng_below(&s->rng, s->nblocks) * s->block;
}

/* Where slot `slot`'s buffer is filled from: stream s->slot_base at this
 * offset (block-aligned, so its stamps sit where the writes' do). */
static inline uint64_t randio_slot_offset(const struct randio_stream *s, unsigned slot)
{
	return (uint64_t)slot * s->block;
}

/* The payload pool's seed for a cell on a volume (rig_ctx.volume; NULL
 * as ""): the volume's name is mixed in, so no two volumes of a phase
 * write the same bytes (the cell seed is the same on all). */
uint64_t mod_randio_payload_seed(uint64_t cell_seed, const char *volume);

/* Worker i's share of ops requests among n workers (ops/n, the first
 * ops%n get one more). The same split gives thread t of a sequential job
 * its share of the file's blocks. */
uint64_t mod_randio_budget(uint64_t ops, unsigned n, unsigned i);

/* --- the engines --- */

enum randio_engine { RANDIO_QUEUE, RANDIO_PSYNC };

/* What every worker reads and nobody writes while the clock runs. */
struct randio_job {
	int fd;
	int write;
	int zero;                      /* writes carry zeros: buffers are never restamped */
	uint64_t block;
	uint64_t nblocks;
	unsigned qd;
	int ops_mode;                  /* each worker runs its budget (ops given, or one
	                                * sweep of a sequential job) */
	uint64_t deadline;             /* time mode: stop issuing at this clock value */
	const struct payload *payload; /* writes */
	volatile sig_atomic_t *cancel;
};

/* The start line: workers set up (queues, page faults) before anyone's
 * clock starts; the coordinator fires the start when all are ready. */
struct randio_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned ready;  /* workers that finished setup (successfully or not) */
	int go;          /* 1: start; -1: abort (a worker failed setup) */
};

struct randio_slot {
	uint64_t t_sub;                /* when it was submitted (clock ns) */
	uint64_t off;                  /* its offset */
};

struct randio_worker {
	const struct randio_job *job;
	struct randio_gate *gate;
	unsigned thread, queue;
	unsigned nslots;               /* requests in flight: qd (queue) or 1 (psync) */
	struct randio_stream stream;
	uint64_t budget;               /* ops mode: requests to issue in a pass */
	uint64_t issued;               /* requests issued in this pass */
	void **bufs;                   /* nslots buffers of block bytes, aligned */
	struct randio_slot *slots;     /* nslots: the request in flight on each */
	struct histogram *hist;        /* latencies, ns */
	/* results of a pass */
	uint64_t done;                 /* completed requests */
	uint64_t t_first, t_last;      /* first submission, last completion */
	int err;                       /* negative errno, 0 */
	uint64_t err_off;              /* the offset that failed */
	int64_t err_res;               /* bytes transferred by a short request */
	int unsafe_bufs;               /* requests may still be in flight: do not free bufs */
	char setup[200];               /* the reason setup failed; queue features otherwise */
};

/* Thread bodies (pthread start routines); the worker is the argument.
 * Each runs one pass: setup, the start line, its requests. */
void *mod_randio_queue_worker(void *arg);
void *mod_randio_psync_worker(void *arg);

/* --- a measured job (randio_job.c) --- */

enum randio_data { RANDIO_DATA_RANDOM, RANDIO_DATA_ZERO };

/* What one pass measured. */
struct randio_pass {
	uint32_t pass;                 /* from 1 */
	uint64_t done;                 /* requests completed */
	uint64_t bytes;                /* done x block */
	double seconds;                /* first submission to last completion, with the
	                                * final sync of a write inside it */
	double lat_p50, lat_p99, lat_p999; /* per request, us, without the sync */
};

struct randio_spec {
	uint64_t block, qd, threads, span;
	uint64_t time_ns;              /* per pass; 0: ops (random) or one sweep (sequential) */
	uint64_t ops;                  /* random: requests per pass, 0 to run for time_ns */
	uint64_t passes;               /* 0 counts as 1 */
	int write;
	int sequential;
	enum randio_data data;
	/* file: fresh. The test file is removed and laid out anew before the
	 * passes and removed after them (the disk-mark tools' way: it lands in
	 * the free space of the moment and is not there for the next step);
	 * 0: kept and reused by later jobs of the same span and data. */
	int fresh;
	/* Record a pass's samples through ctx->sink; called after each pass,
	 * outside the timing. */
	void (*record)(struct rig_ctx *ctx, const struct randio_pass *p);
};

/*
 * Run a job: the test file (made untimed unless a whole one of this span
 * and data is there), then `passes` passes, each from one start line and
 * recorded as it ends; notes (engine, file) once, after the first. 0 (also
 * when cancelled: what was recorded stays), or a negative errno with the
 * reason in ctx->err. The file's path goes into the per-volume state, so
 * that mod_randio_release removes it at the end of the layout.
 */
int mod_randio_job_run(struct rig_ctx *ctx, const struct randio_spec *spec);
/* release_state of every module that runs jobs. */
void mod_randio_release(void *state);
/* What a job does to its volume (modules/estimate.h): the test file laid out
 * when the slot does not hold one of this span and data, then the passes.
 * The slot is mod_randread's, which every module running jobs
 * names in files_of: they share the test file. */
struct est_cell;
void mod_randio_estimate(const struct randio_spec *spec, struct est_cell *c);
struct rig_module;
extern const struct rig_module mod_randread; /* owns the test file (files_of) */

#endif
