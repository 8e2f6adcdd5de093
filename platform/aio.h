/*
 * An asynchronous I/O queue for the random I/O modules (randread,
 * randwrite): io_uring on Linux (platform/linux_uring.c), nothing on macOS
 * (platform/macos_aio.c returns -ENOSYS, and the modules use their
 * portable psync engine, a pool of threads doing pread/pwrite).
 *
 * The queue is deliberately small: a fixed set of `depth` slots, each with
 * its own buffer given at open time (so the engine can register them with
 * the kernel once), a prepare call that makes no system call, a submit
 * call, and a call that waits for completions. The caller keeps the queue
 * full by preparing and submitting a new request on every slot as soon as
 * it completes, one at a time (see modules/randio_engine.c for why not
 * in batches).
 *
 * A queue is used by one thread: the thread that opened it (io_uring's
 * SINGLE_ISSUER mode depends on that).
 */
#ifndef RIG_PLATFORM_AIO_H
#define RIG_PLATFORM_AIO_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct aio_queue;

struct aio_completion {
	uint32_t slot; /* the slot given to plat_aio_prep */
	int32_t res;   /* bytes transferred, or a negative errno */
};

/* The engine's name as notes record it ("io_uring"), or NULL without one. */
const char *plat_aio_engine_name(void);

/*
 * Can queues be opened here? 0, or a negative errno with the reason in why:
 * -ENOSYS when this build has no engine (macOS) or the kernel refuses the
 * system call (old kernel, seccomp), -EPERM when it is disabled by policy,
 * -ENOTSUP when the kernel lacks the read/write operations.
 */
int plat_aio_probe(struct strbuf *why);

/*
 * Open a queue of `depth` slots on fd; slot i reads into / writes from
 * bufs[i] (len bytes; bufs must outlive the queue and stay at the same
 * addresses). 0 or a negative errno with the reason in why. Registration
 * of buffers and file with the kernel is attempted and silently skipped
 * when refused (plat_aio_describe tells what was used).
 */
int plat_aio_open(struct aio_queue **qp, int fd, unsigned depth, void *const *bufs, size_t len,
	     struct strbuf *why);

/* Prepare a read (write == 0) or write of slot's whole buffer at byte
 * offset off. No system call; the slot must not be in flight. */
void plat_aio_prep(struct aio_queue *q, unsigned slot, uint64_t off, int write);

/*
 * Submit every prepared request now, without waiting; completions the
 * kernel already has are collected for the next plat_aio_wait. 0 or a negative
 * errno (-EINTR: a signal arrived; call again).
 */
int plat_aio_submit(struct aio_queue *q);

/*
 * Wait until at least wait_nr requests have completed (0: do not wait),
 * then store up to max completions in out. Returns how many were stored,
 * or a negative errno (-EINTR: a signal arrived; nothing was lost, call
 * again). Does not submit: requests prepared and not submitted stay so.
 */
int plat_aio_wait(struct aio_queue *q, unsigned wait_nr, struct aio_completion *out, unsigned max);

/* Append what the queue uses ("registered buffers, registered file, ...")
 * to sb, for the notes recorded with a cell. */
void plat_aio_describe(const struct aio_queue *q, struct strbuf *sb);

/* Close the queue. Requests still in flight are cancelled by the kernel;
 * their buffers may still be written to until they complete, so callers
 * wait for every slot before closing when they can. */
void plat_aio_close(struct aio_queue *q);

#endif
