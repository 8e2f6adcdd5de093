/*
 * A resumed run's leftovers, kept or torn down the same way for every
 * backend; see engine.h (prov_resume) and driver.h (struct
 * prov_resume_prims) for what a backend supplies.
 */
#include <stddef.h>

#include "lib/strbuf.h"
#include "provision/command.h"
#include "provision/driver.h"
#include "provision/engine.h"

/* Tear down what the state describes; a failure says whose it was. */
static int teardown_leftovers(struct provision_ctx *ctx, prov_teardown_fn teardown, size_t li)
{
	int rc = teardown(ctx, li);
	if (rc < 0) {
		struct strbuf why = STRBUF_INIT;
		sb_addf(&why, "cannot tear down what the interrupted run left: %s", ctx->err->buf);
		sb_reset(ctx->err);
		sb_adds(ctx->err, why.buf);
		sb_release(&why);
	}
	return rc;
}

/* Keep what verified: the state as after provision(layout). */
static void keep(struct provision_ctx *ctx, const struct prov_resume_prims *rp)
{
	struct strbuf kept = STRBUF_INIT;
	if (rp->adopt)
		rp->adopt(ctx, &kept);
	ctx->resume->reused = 1;
	if (kept.len)
		prov_note(ctx, 0, "kept what the interrupted run provisioned: %s", kept.buf);
	sb_release(&kept);
}

/* Provisioning starts from scratch: nothing of the killed run stays. */
static int discard(struct provision_ctx *ctx, const struct prov_resume_prims *rp,
		   prov_teardown_fn teardown, const char *what)
{
	if (what[0])
		prov_note(ctx, 0, "tear down what the interrupted run left: %s", what);
	int rc = teardown_leftovers(ctx, teardown, ctx->resume->layout);
	if (rc == 0 && rp->sweep)
		rc = rp->sweep(ctx);
	return rc;
}

int prov_resume(struct provision_ctx *ctx, const struct prov_resume_prims *rp, void *state,
		prov_teardown_fn teardown)
{
	struct provision_resume *r = ctx->resume;
	void *saved = ctx->state;
	ctx->state = state;
	struct strbuf what = STRBUF_INIT, why = STRBUF_INIT;
	int rc = rp->find(ctx, &what);
	/* without reuse nothing is kept, so nothing needs to be asked */
	if (rc == 0 && r->reuse)
		rc = rp->verify(ctx, &why);
	if (rc == 0 && r->reuse && !why.len) {
		keep(ctx, rp);
	} else if (rc == 0) {
		if (r->why && r->reuse) /* else the caller knows why */
			sb_adds(r->why, why.buf);
		rc = discard(ctx, rp, teardown, what.buf);
	}
	ctx->state = saved;
	sb_release(&what);
	sb_release(&why);
	return rc;
}

int prov_engine_resume(struct provision_ctx *ctx, void *state)
{
	return prov_resume(ctx, prov_ctx_driver(ctx)->prims->resume, state, prov_engine_teardown);
}
