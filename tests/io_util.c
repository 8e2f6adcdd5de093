/* The I/O suites' shared checks (tests/io_util.h). */
#include "io_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "platform/aio.h"
#include "test.h"

int iot_have_uring(void)
{
	static int known = -1;
	if (known < 0) {
		struct strbuf why = STRBUF_INIT;
		known = plat_aio_probe(&why) == 0;
		if (!known)
			printf("\n  io_uring unavailable (%s): io_uring runs skipped\n", why.buf);
		sb_release(&why);
	}
	return known;
}

static const unsigned char *sectors_base; /* qsort has no context argument */

static int cmp_sector(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return memcmp(sectors_base + i * 512, sectors_base + j * 512, 512);
}

size_t iot_equal_sectors(const unsigned char *buf, size_t len)
{
	size_t ns = len / 512, dups = 0;
	size_t *idx = malloc((ns ? ns : 1) * sizeof(*idx));
	CU_ASSERT_PTR_NOT_NULL_FATAL(idx);
	for (size_t i = 0; i < ns; i++)
		idx[i] = i;
	sectors_base = buf;
	qsort(idx, ns, sizeof(*idx), cmp_sector);
	for (size_t i = 1; i < ns; i++)
		dups += cmp_sector(&idx[i - 1], &idx[i]) == 0;
	free(idx);
	return dups;
}

void iot_vol_init(struct iot_vol *v, uint64_t seed, struct rig_sink *sink)
{
	memset(v, 0, sizeof(*v));
	v->dir = test_tmpdir();
	CU_ASSERT_PTR_NOT_NULL_FATAL(v->dir);
	sb_init(&v->err);
	v->ctx.dir = v->dir;
	v->ctx.volume = "v";
	v->ctx.seed = seed;
	v->ctx.rep = 1;
	v->ctx.direct = 1;
	v->ctx.direct_used = 1; /* as the runner sets it: direct && module->direct_io */
	v->ctx.cache_method = "direct";
	v->ctx.sink = sink;
	v->ctx.cancel = &v->cancel;
	v->ctx.volstate = &v->state;
	v->ctx.err = &v->err;
}

void iot_vol_done(struct iot_vol *v)
{
	const struct rig_module *m = mod_find("randread"); /* the job's state, any module's */
	if (v->state && m->release_state)
		m->release_state(v->state);
	v->state = NULL;
	test_rmtree(v->dir);
	free(v->dir);
	sb_release(&v->err);
}

int iot_run(struct iot_vol *v, const char *name, const void *args, const char *engine,
	    int quiet)
{
	const struct rig_module *m = mod_find(name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->run);
	sb_reset(&v->err);
	if (engine)
		setenv("RIG_ENGINE", engine, 1);
	else
		unsetenv("RIG_ENGINE");
	int rc = m->run(&v->ctx, args);
	unsetenv("RIG_ENGINE");
	if (rc < 0 && !quiet)
		fprintf(stderr, "\n  %s (%s) failed: %s\n", name, engine ? engine : "auto", v->err.buf);
	return rc;
}

int iot_exists(const struct iot_vol *v, const char *name)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s", v->dir, name);
	int yes = access(path.buf, F_OK) == 0;
	sb_release(&path);
	return yes;
}
