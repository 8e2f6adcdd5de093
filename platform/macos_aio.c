/*
 * macOS has no asynchronous engine rig uses (POSIX AIO there is limited to
 * a handful of requests per process and signals completions slowly), so
 * the random I/O modules run their portable psync engine. These stubs let
 * shared code call the queue interface without #ifdef; see aio.h.
 */
#include <errno.h>

#include "lib/strbuf.h"
#include "platform/aio.h"

const char *plat_aio_engine_name(void)
{
	return NULL;
}

int plat_aio_probe(struct strbuf *why)
{
	sb_adds(why, "no asynchronous I/O engine on this platform");
	return -ENOSYS;
}

int plat_aio_open(struct aio_queue **qp, int fd, unsigned depth, void *const *bufs, size_t len,
	     struct strbuf *why)
{
	(void)fd;
	(void)depth;
	(void)bufs;
	(void)len;
	*qp = NULL;
	sb_adds(why, "no asynchronous I/O engine on this platform");
	return -ENOSYS;
}

void plat_aio_prep(struct aio_queue *q, unsigned slot, uint64_t off, int write)
{
	(void)q;
	(void)slot;
	(void)off;
	(void)write;
}

int plat_aio_submit(struct aio_queue *q)
{
	(void)q;
	return -ENOSYS;
}

int plat_aio_wait(struct aio_queue *q, unsigned wait_nr, struct aio_completion *out, unsigned max)
{
	(void)q;
	(void)wait_nr;
	(void)out;
	(void)max;
	return -ENOSYS;
}

void plat_aio_describe(const struct aio_queue *q, struct strbuf *sb)
{
	(void)q;
	(void)sb;
}

void plat_aio_close(struct aio_queue *q)
{
	(void)q;
}
