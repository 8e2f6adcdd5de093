/* Provisioning steps shared by every driver; see engine.h. */
#include "engine.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../rig/util/strbuf.h"
#include "../rig/util/xalloc.h"
#include "command.h"
#include "journal.h"

void prov_volume_set(struct volume *v, const struct provision_ctx *ctx, size_t li, size_t k,
		     const char *dir, const char *device, uint64_t start, uint64_t end)
{
	const struct plan_partition *pt = &ctx->plan->layouts[li].parts[k];
	v->name = xstrdup(pt->name);
	v->fs = xstrdup(pt->fs);
	v->position = (uint32_t)k + 1;
	v->dir = xstrdup(dir);
	v->device = device ? xstrdup(device) : NULL;
	if (end > start) {
		v->has_offsets = 1;
		v->offset_start = start;
		v->offset_end = end;
	}
}

int prov_provision_end(struct provision_ctx *ctx, size_t li, prov_teardown_fn teardown, int rc,
		       struct volume *v, size_t n, struct volume **vols, size_t *nvols)
{
	if (rc < 0) {
		prov_undo(ctx, li, teardown, v, n);
		return rc;
	}
	*vols = v;
	*nvols = n;
	return 0;
}

int prov_resume_teardown(struct provision_ctx *ctx, void *state, prov_teardown_fn teardown,
			 size_t li)
{
	void *saved = ctx->state; /* prepare sets it only when it succeeds */
	ctx->state = state;
	int rc = teardown(ctx, li);
	ctx->state = saved;
	if (rc < 0) {
		struct strbuf why = STRBUF_INIT;
		sb_addf(&why, "cannot tear down what the interrupted run left: %s", ctx->err->buf);
		sb_reset(ctx->err);
		sb_adds(ctx->err, why.buf);
		sb_release(&why);
	}
	return rc;
}

int prov_image_end(struct provision_ctx *ctx, const char *file, const char *object, int keep,
		   const char *why)
{
	if (keep) {
		prov_note(ctx, 0, "keep %s (keep: true)", file);
		prov_journal_end(ctx, prov_journal_begin(ctx, "keep-image", object, NULL, NULL), 0);
		return 0;
	}
	prov_note(ctx, 0, "delete %s%s", file, why);
	int64_t j = prov_journal_begin(ctx, "delete-image", object, NULL, NULL);
	int rc = 0;
	if (!spawner_dry_run(ctx->sp) && unlink(file) < 0 && errno != ENOENT) {
		rc = -errno;
		sb_addf(ctx->err, "cannot delete image %s: %s", file, strerror(-rc));
	}
	prov_journal_end(ctx, j, rc);
	return rc;
}

int prov_teardown_done(struct provision_ctx *ctx, struct strbuf *acc, int rc)
{
	sb_reset(ctx->err);
	sb_adds(ctx->err, acc->buf);
	sb_release(acc);
	return rc;
}

void prov_finish(struct provision_ctx *ctx, int left, prov_teardown_fn teardown,
		 void (*free_state)(void *state))
{
	if (!ctx->state)
		return;
	if (left)
		prov_last_teardown(ctx, teardown);
	free_state(ctx->state);
	ctx->state = NULL;
}
