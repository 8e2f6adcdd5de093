/*
 * The io_uring engine behind platform/aio.h (liburing), what fio's
 * io_uring engine does, minus the options rig does not need.
 *
 * Speed matters here more than anywhere else in rig: on a RAM-backed
 * device the kernel does only a few microseconds of work per request, so
 * every system call and cache miss on our side shows up in the result.
 *  - One io_uring_enter per request submitted, as fio makes: the caller
 *    submits each request the moment it has prepared it (plat_aio_submit, which
 *    also moves completions the kernel has ready into the completion
 *    ring), and plat_aio_wait enters the kernel only when no completion is
 *    there yet. Batching submissions saves system calls but read slower
 *    than fio on a virtio-backed loop device (randio_engine.c says why),
 *    and no faster on a RAM-backed one (bench/README.md).
 *  - The slot buffers and the file are registered with the kernel when it
 *    allows (READ_FIXED/WRITE_FIXED, IOSQE_FIXED_FILE): no page pinning
 *    and no file-table lookup per request. Refusal (RLIMIT_MEMLOCK on old
 *    kernels) falls back to plain READ/WRITE silently; plat_aio_describe says.
 *  - The ring is set up with SINGLE_ISSUER|DEFER_TASKRUN (6.1+): the
 *    kernel runs completion work when we wait rather than interrupting the
 *    thread; older kernels get COOP_TASKRUN (5.19+) or no flags.
 * Rejected: SQPOLL (a kernel thread spinning on a core: on a two-core
 * machine it steals the CPU the device emulation needs, and fio does not
 * use it by default either); IOPOLL (needs a polled block device).
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "lib/strbuf.h"
#include "platform/aio.h"

struct aio_queue {
	struct io_uring ring;
	int fd;             /* the fd, or 0 (its index) when registered */
	int fixed_file;
	int fixed_bufs;
	unsigned setup_flags;
	unsigned depth;
	size_t len;
	void *const *bufs;
};

const char *plat_aio_engine_name(void)
{
	return "io_uring";
}

/* Ring setup flags, fastest first; a kernel that does not know a flag
 * answers EINVAL and we try the next set. */
static const unsigned setup_flags[] = {
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_COOP_TASKRUN,
	0,
};

static int ring_init(struct io_uring *ring, unsigned depth, unsigned *used)
{
	int rc = -EINVAL;
	for (size_t i = 0; i < sizeof(setup_flags) / sizeof(setup_flags[0]); i++) {
		struct io_uring_params p;
		memset(&p, 0, sizeof(p));
		p.flags = setup_flags[i];
		rc = io_uring_queue_init_params(depth, ring, &p);
		if (rc == 0) {
			*used = setup_flags[i];
			return 0;
		}
		if (rc != -EINVAL)
			break;
	}
	return rc;
}

int plat_aio_probe(struct strbuf *why)
{
	struct io_uring ring;
	unsigned used;
	int rc = ring_init(&ring, 4, &used);
	if (rc < 0) {
		sb_addf(why, "io_uring_queue_init: %s", strerror(-rc));
		return rc == -EPERM || rc == -EACCES ? -EPERM : rc;
	}
	struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
	int ok = probe && io_uring_opcode_supported(probe, IORING_OP_READ) &&
		 io_uring_opcode_supported(probe, IORING_OP_WRITE);
	if (probe)
		io_uring_free_probe(probe);
	io_uring_queue_exit(&ring);
	if (!ok) {
		sb_adds(why, "this kernel's io_uring lacks IORING_OP_READ/WRITE (needs Linux 5.6)");
		return -ENOTSUP;
	}
	return 0;
}

int plat_aio_open(struct aio_queue **qp, int fd, unsigned depth, void *const *bufs, size_t len,
	     struct strbuf *why)
{
	*qp = NULL;
	struct aio_queue *q = calloc(1, sizeof(*q));
	if (!q) {
		sb_adds(why, "out of memory for the io_uring queue");
		return -ENOMEM;
	}
	int rc = ring_init(&q->ring, depth, &q->setup_flags);
	if (rc < 0) {
		sb_addf(why, "io_uring_queue_init(%u): %s", depth, strerror(-rc));
		free(q);
		return rc;
	}
	q->fd = fd;
	q->depth = depth;
	q->len = len;
	q->bufs = bufs;

	if (io_uring_register_files(&q->ring, &fd, 1) == 0) {
		q->fixed_file = 1;
		q->fd = 0;
	}
	struct iovec *iov = calloc(depth, sizeof(*iov));
	if (iov) {
		for (unsigned i = 0; i < depth; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = len;
		}
		/* Registered buffers must be at most 1 GiB each. */
		if (len <= (1u << 30) && io_uring_register_buffers(&q->ring, iov, depth) == 0)
			q->fixed_bufs = 1;
		free(iov);
	}
	*qp = q;
	return 0;
}

void plat_aio_prep(struct aio_queue *q, unsigned slot, uint64_t off, int write)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	if (!sqe) {
		/* Cannot happen while at most `depth` requests are prepared
		 * between submissions; push the ring out and retry anyway. */
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe)
			abort();
	}
	void *buf = q->bufs[slot];
	unsigned len = (unsigned)q->len;
	if (q->fixed_bufs) {
		if (write)
			io_uring_prep_write_fixed(sqe, q->fd, buf, len, off, (int)slot);
		else
			io_uring_prep_read_fixed(sqe, q->fd, buf, len, off, (int)slot);
	} else if (write) {
		io_uring_prep_write(sqe, q->fd, buf, len, off);
	} else {
		io_uring_prep_read(sqe, q->fd, buf, len, off);
	}
	if (q->fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, slot);
}

int plat_aio_submit(struct aio_queue *q)
{
	/* With DEFER_TASKRUN, completions reach the ring only when the
	 * thread enters the kernel asking for events: this call does, so the
	 * next plat_aio_wait usually finds them without a system call. */
	int rc = io_uring_submit_and_get_events(&q->ring);
	return rc < 0 ? rc : 0;
}

int plat_aio_wait(struct aio_queue *q, unsigned wait_nr, struct aio_completion *out, unsigned max)
{
	struct io_uring_cqe *first;
	int rc = io_uring_wait_cqe_nr(&q->ring, &first, wait_nr);
	if (rc == -EAGAIN && wait_nr == 0)
		return 0;
	if (rc < 0)
		return rc;
	unsigned head, n = 0;
	struct io_uring_cqe *cqe;
	io_uring_for_each_cqe(&q->ring, head, cqe) {
		if (n == max)
			break;
		out[n].slot = (uint32_t)io_uring_cqe_get_data64(cqe);
		out[n].res = cqe->res;
		n++;
	}
	io_uring_cq_advance(&q->ring, n);
	return (int)n;
}

void plat_aio_describe(const struct aio_queue *q, struct strbuf *sb)
{
	sb_addf(sb, "depth %u, %s buffers, %s file, %s", q->depth,
		q->fixed_bufs ? "registered" : "plain", q->fixed_file ? "registered" : "plain",
		(q->setup_flags & IORING_SETUP_DEFER_TASKRUN) ? "defer_taskrun"
		: (q->setup_flags & IORING_SETUP_COOP_TASKRUN) ? "coop_taskrun"
							       : "default taskrun");
}

void plat_aio_close(struct aio_queue *q)
{
	if (!q)
		return;
	io_uring_queue_exit(&q->ring);
	free(q);
}
