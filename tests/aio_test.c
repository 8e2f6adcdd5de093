/*
 * Tests of the asynchronous I/O queue itself (platform/aio.h, on Linux
 * platform/linux_uring.c), below the randread/randwrite engine: that a
 * prepared request goes nowhere until plat_aio_submit, that plat_aio_wait with
 * nothing to wait for returns at once, and that every completion names its
 * own slot, with its own data, when the reads come back in any order.
 * Skipped with a message where the queue cannot be opened (no io_uring
 * here, or a build without an engine).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "platform/aio.h"
#include "platform/platform.h"
#include "test.h"

enum { DEPTH = 8, BLOCK = 4096, BLOCKS = 16 };

struct qfx {
	char *dir;
	char path[512];
	int fd;
	void *bufs[DEPTH];
	struct aio_queue *q;
};

/* A file of BLOCKS blocks, block b filled with the byte 'a' + b, and a
 * queue of DEPTH slots on it. 0, or 1 when there is no queue here (a
 * message says why). */
static int qfx_init(struct qfx *x)
{
	memset(x, 0, sizeof(*x));
	struct strbuf why = STRBUF_INIT;
	if (plat_aio_probe(&why) < 0) {
		printf("\n  no asynchronous I/O queue here (%s): skipped\n", why.buf);
		sb_release(&why);
		return 1;
	}
	x->dir = test_tmpdir();
	snprintf(x->path, sizeof(x->path), "%s/q.dat", x->dir);
	x->fd = open(x->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(x->fd >= 0);
	char block[BLOCK];
	for (int b = 0; b < BLOCKS; b++) {
		memset(block, 'a' + b, sizeof(block));
		CU_ASSERT_FATAL(pwrite(x->fd, block, BLOCK, (off_t)b * BLOCK) == BLOCK);
	}
	for (int i = 0; i < DEPTH; i++) {
		x->bufs[i] = plat_alloc_io(BLOCK, BLOCK);
		CU_ASSERT_PTR_NOT_NULL_FATAL(x->bufs[i]);
		memset(x->bufs[i], 0, BLOCK);
	}
	int rc = plat_aio_open(&x->q, x->fd, DEPTH, x->bufs, BLOCK, &why);
	if (rc < 0)
		printf("\n  plat_aio_open: %s\n", why.buf);
	sb_release(&why);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	return 0;
}

static void qfx_done(struct qfx *x)
{
	plat_aio_close(x->q);
	for (int i = 0; i < DEPTH; i++)
		free(x->bufs[i]);
	close(x->fd);
	test_rmtree(x->dir);
	free(x->dir);
}

/* Wait until n completions are in (at most 2 * n calls), storing them in out. */
static int collect(struct aio_queue *q, struct aio_completion *out, int n)
{
	int got = 0;
	for (int calls = 0; got < n && calls < 2 * n; calls++) {
		int r = plat_aio_wait(q, 1, out + got, (unsigned)(n - got));
		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

static void test_submit_then_wait(void)
{
	struct qfx x;
	if (qfx_init(&x))
		return;
	struct aio_completion out[DEPTH];

	/* Nothing in flight: no wait, no completion. */
	CU_ASSERT_EQUAL(plat_aio_wait(x.q, 0, out, DEPTH), 0);

	/* Slot i reads block BLOCKS - 1 - i; prepared, not yet submitted. */
	for (int i = 0; i < DEPTH; i++)
		plat_aio_prep(x.q, (unsigned)i, (uint64_t)(BLOCKS - 1 - i) * BLOCK, 0);
	CU_ASSERT_EQUAL(plat_aio_wait(x.q, 0, out, DEPTH), 0);
	for (int i = 0; i < DEPTH; i++)
		CU_ASSERT_EQUAL(((unsigned char *)x.bufs[i])[0], 0);

	CU_ASSERT_EQUAL_FATAL(plat_aio_submit(x.q), 0);
	CU_ASSERT_EQUAL_FATAL(collect(x.q, out, DEPTH), DEPTH);
	int seen[DEPTH] = { 0 };
	for (int k = 0; k < DEPTH; k++) {
		unsigned s = out[k].slot;
		CU_ASSERT_FATAL(s < DEPTH);
		CU_ASSERT_EQUAL(out[k].res, BLOCK);
		seen[s]++;
		const unsigned char *p = x.bufs[s];
		unsigned char want = (unsigned char)('a' + BLOCKS - 1 - (int)s);
		CU_ASSERT(p[0] == want && p[BLOCK - 1] == want);
	}
	for (int i = 0; i < DEPTH; i++)
		CU_ASSERT_EQUAL(seen[i], 1);
	qfx_done(&x);
}

static void test_one_at_a_time(void)
{
	struct qfx x;
	if (qfx_init(&x))
		return;
	struct aio_completion out[DEPTH];

	/* As the engine does: each request submitted on its own, the slot
	 * reused as soon as it completes; a write, then a read of it back. */
	memset(x.bufs[3], 'Z', BLOCK);
	plat_aio_prep(x.q, 3, 5 * BLOCK, 1);
	CU_ASSERT_EQUAL_FATAL(plat_aio_submit(x.q), 0);
	for (unsigned i = 0; i < 3; i++) {
		plat_aio_prep(x.q, i, (uint64_t)i * BLOCK, 0);
		CU_ASSERT_EQUAL_FATAL(plat_aio_submit(x.q), 0);
	}
	CU_ASSERT_EQUAL_FATAL(collect(x.q, out, 4), 4);
	for (int k = 0; k < 4; k++)
		CU_ASSERT_EQUAL(out[k].res, BLOCK);

	memset(x.bufs[3], 0, BLOCK);
	plat_aio_prep(x.q, 3, 5 * BLOCK, 0);
	CU_ASSERT_EQUAL_FATAL(plat_aio_submit(x.q), 0);
	CU_ASSERT_EQUAL_FATAL(collect(x.q, out, 1), 1);
	CU_ASSERT_EQUAL(out[0].slot, 3);
	CU_ASSERT_EQUAL(out[0].res, BLOCK);
	const unsigned char *p = x.bufs[3];
	CU_ASSERT(p[0] == 'Z' && p[BLOCK - 1] == 'Z');
	for (unsigned i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(((unsigned char *)x.bufs[i])[0], 'a' + i);

	/* A read past the end completes with 0 bytes, reported as such. */
	plat_aio_prep(x.q, 0, (uint64_t)BLOCKS * BLOCK, 0);
	CU_ASSERT_EQUAL_FATAL(plat_aio_submit(x.q), 0);
	CU_ASSERT_EQUAL_FATAL(collect(x.q, out, 1), 1);
	CU_ASSERT_EQUAL(out[0].slot, 0);
	CU_ASSERT_EQUAL(out[0].res, 0);
	qfx_done(&x);
}

void register_aio_tests(void)
{
	CU_pSuite s = test_suite("aio queue");
	test_add(s, "prepared is not submitted; submit, then every slot completes with its data",
		 test_submit_then_wait);
	test_add(s, "one submission per request, slots reused, a write read back",
		 test_one_at_a_time);
}
