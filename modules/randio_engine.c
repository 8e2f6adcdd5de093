/*
 * The two engines of randread/randwrite and seqread/seqwrite (see
 * randio.h): the loops that run while the clock runs, kept side by side so
 * their costs can be compared. A loop runs one pass; randio_job.c starts
 * the threads, once per pass.
 *
 * Queue engine (io_uring via platform/aio.h), fio's io_uring loop: fill
 * the queue and submit it, then repeatedly wait for at least one
 * completion, record every completion reaped, and put a new request on
 * each freed slot, submitting each the moment it is prepared. One clock
 * read per wait stamps the completions; one per request, after its
 * payload is restamped and before it is submitted, stamps its submission.
 *
 * Why one submission per request, a system call each, rather than one per
 * batch: completions come in bunches, so batched resubmission sends the
 * device bunches, and a loop device (which hands requests to its backing
 * file from a kernel worker) with a virtio disk behind it served a steady
 * stream better than bursts of the same depth. On a virtio-backed loop
 * device most of rig's requests went in batches of 11-20; the loop device
 * then added 52-68 us per 4K read over the disk beneath it, against 18-28
 * us for fio's one-at-a-time submissions, and rig read 10-13% slower than
 * fio at QD32. Submitting one at a time removed the gap (bench/README.md); on a
 * RAM-backed loop device it was no slower.
 *
 * psync engine (portable): each worker is a thread doing one pread/pwrite
 * at a time, fio's psync engine with `qd` x `threads` jobs. Two clock reads
 * per request for writes, one for reads (the previous completion's time is
 * the next submission's: only an offset draw lies between them).
 *
 * Per request neither loop allocates, locks or shares a cache line with
 * another thread; the histogram record is a few instructions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "modules/randio.h"
#include "platform/aio.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"

void mod_randio_stream_init(struct randio_stream *s, uint64_t seed, unsigned thread, unsigned queue,
			uint64_t nblocks, uint64_t block)
{
	char label[64];
	snprintf(label, sizeof(label), "randio/%u/%u", thread, queue);
	prng_seed(&s->rng, prng_derive_seed(seed, label));
	snprintf(label, sizeof(label), "randio/%u/%u/payload", thread, queue);
	s->payload_base = prng_derive_seed(seed, label);
	snprintf(label, sizeof(label), "randio/%u/%u/slots", thread, queue);
	s->slot_base = prng_derive_seed(seed, label);
	s->nblocks = nblocks;
	s->block = block;
	s->k = 0;
	s->seq_base = s->seq_stride = s->seq_count = s->seq_i = 0;
}

void mod_randio_stream_sequential(struct randio_stream *s, uint64_t base, uint64_t stride,
			      uint64_t count)
{
	s->seq_base = base;
	s->seq_stride = stride;
	s->seq_count = count;
	s->seq_i = 0;
}

uint64_t mod_randio_payload_seed(uint64_t cell_seed, const char *volume)
{
	struct strbuf label = STRBUF_INIT;
	sb_addf(&label, "randio/payload/%s", volume ? volume : "");
	uint64_t s = prng_derive_seed(cell_seed, label.buf);
	sb_release(&label);
	return s;
}

uint64_t mod_randio_budget(uint64_t ops, unsigned n, unsigned i)
{
	return ops / n + (i < ops % n ? 1 : 0);
}

/* Report setup done (failed: 1 if it failed) and wait for the start.
 * 1: run; 0: the run was called off. */
static int gate_pass(struct randio_gate *g, int failed)
{
	pthread_mutex_lock(&g->mu);
	g->ready++;
	pthread_cond_broadcast(&g->cv);
	while (!failed && g->go == 0)
		pthread_cond_wait(&g->cv, &g->mu);
	int go = !failed && g->go > 0;
	pthread_mutex_unlock(&g->mu);
	return go;
}

static void set_error(struct randio_worker *w, int err, uint64_t off, int64_t res)
{
	if (w->err)
		return;
	w->err = err;
	w->err_off = off;
	w->err_res = res;
}

/* --- queue engine --- */

static inline void queue_issue(struct randio_worker *w, struct aio_queue *q, unsigned s)
{
	const struct randio_job *job = w->job;
	uint64_t stream;
	uint64_t off = randio_stream_next(&w->stream, &stream);
	w->issued++;
	if (job->write && !job->zero)
		plat_payload_restamp(job->payload, stream, off, w->bufs[s], job->block);
	plat_aio_prep(q, s, off, job->write);
	w->slots[s].off = off;
}

static inline int may_issue(const struct randio_worker *w)
{
	return !w->job->ops_mode || w->issued < w->budget;
}

/* Submit what is prepared, again if a signal interrupted the call. */
static int queue_submit(struct aio_queue *q)
{
	int rc;
	do
		rc = plat_aio_submit(q);
	while (rc == -EINTR);
	return rc;
}

void *mod_randio_queue_worker(void *arg)
{
	struct randio_worker *w = arg;
	const struct randio_job *job = w->job;
	struct aio_queue *q = NULL;
	struct strbuf why = STRBUF_INIT;
	unsigned n = w->nslots;
	struct aio_completion *comp = calloc(n, sizeof(*comp));
	int rc = comp ? plat_aio_open(&q, job->fd, n, w->bufs, job->block, &why) : -ENOMEM;
	if (rc < 0) {
		w->err = rc;
		snprintf(w->setup, sizeof(w->setup), "%s", why.len ? why.buf : strerror(-rc));
	} else {
		plat_aio_describe(q, &why);
		snprintf(w->setup, sizeof(w->setup), "%s", why.buf);
	}
	sb_release(&why);
	if (!gate_pass(w->gate, rc < 0))
		goto out;

	unsigned inflight = 0;
	for (unsigned s = 0; s < n && may_issue(w); s++) {
		queue_issue(w, q, s);
		inflight++;
	}
	uint64_t now = plat_clock_ns();
	w->t_first = now;
	for (unsigned s = 0; s < inflight; s++)
		w->slots[s].t_sub = now;
	rc = inflight ? queue_submit(q) : 0;
	int stop = 0;
	while (inflight && rc >= 0) {
		int got = plat_aio_wait(q, 1, comp, n);
		if (got < 0) {
			if (got == -EINTR)
				continue;
			rc = got;
			break;
		}
		now = plat_clock_ns();
		if (*job->cancel || (!job->ops_mode && now >= job->deadline))
			stop = 1;
		for (int i = 0; i < got && rc >= 0; i++) {
			unsigned s = comp[i].slot;
			inflight--;
			comp[i].res = fault_io_result(job->write ? FAULT_WRITE : FAULT_READ,
						      comp[i].res);
			if (comp[i].res != (int32_t)job->block) {
				set_error(w, comp[i].res < 0 ? comp[i].res : -EIO, w->slots[s].off,
					  comp[i].res);
				stop = 1;
				continue;
			}
			hist_record(w->hist, now - w->slots[s].t_sub);
			w->done++;
			if (!stop && may_issue(w)) {
				queue_issue(w, q, s);
				w->slots[s].t_sub = plat_clock_ns();
				rc = queue_submit(q);
				inflight++;
			}
		}
		w->t_last = now;
	}
	if (rc < 0) {
		/* The ring itself failed: requests may still be in flight. */
		set_error(w, rc, UINT64_MAX, 0);
		w->unsafe_bufs = 1;
	}
out:
	plat_aio_close(q);
	free(comp);
	return NULL;
}

/* --- psync engine --- */

void *mod_randio_psync_worker(void *arg)
{
	struct randio_worker *w = arg;
	const struct randio_job *job = w->job;
	void *buf = w->bufs[0];
	size_t len = (size_t)job->block;
	if (!gate_pass(w->gate, 0))
		return NULL;

	uint64_t t0 = plat_clock_ns();
	w->t_first = w->t_last = t0;
	int first = 1;
	while (may_issue(w) && !*job->cancel) {
		uint64_t stream;
		uint64_t off = randio_stream_next(&w->stream, &stream);
		w->issued++;
		if (job->write) {
			if (!job->zero)
				plat_payload_restamp(job->payload, stream, off, buf, len);
			t0 = plat_clock_ns();
		}
		if (first) {
			w->t_first = t0;
			first = 0;
		}
		ssize_t r;
		do
			r = job->write ? fault_pwrite(job->fd, buf, len, (off_t)off)
				       : fault_pread(job->fd, buf, len, (off_t)off);
		while (r < 0 && errno == EINTR && !*job->cancel);
		uint64_t t1 = plat_clock_ns();
		if (r != (ssize_t)len) {
			set_error(w, r < 0 ? -errno : -EIO, off, r);
			break;
		}
		hist_record(w->hist, t1 - t0);
		w->done++;
		w->t_last = t1;
		if (!job->ops_mode && t1 >= job->deadline)
			break;
		t0 = t1;
	}
	return NULL;
}
