/* Provisioning steps shared by every driver; see engine.h. */
#include "provision/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/command.h"
#include "provision/driver.h"
#include "provision/journal.h"

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

/* The end of a provision: on rc < 0 the volumes v[n] are released and
 * what was done is torn down (prov_undo), and rc returned; else *vols and
 * *nvols get them and 0 is returned. */
static int provision_end(struct provision_ctx *ctx, size_t li, prov_teardown_fn teardown, int rc,
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
	if (!plat_spawner_dry_run(ctx->sp) && unlink(file) < 0 && errno != ENOENT) {
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

/* At the end of a run, when left is set (a failed teardown left
 * something): one more teardown, a warning when it fails; then free_state
 * the driver's state and forget it. */
static void finish(struct provision_ctx *ctx, int left, prov_teardown_fn teardown,
		   void (*free_state)(void *state))
{
	if (!ctx->state)
		return;
	if (left)
		prov_last_teardown(ctx, teardown);
	free_state(ctx->state);
	ctx->state = NULL;
}

/* --- the order of the primitives --- */

static const struct prov_prims *prims_of(const struct provision_ctx *ctx)
{
	return prov_ctx_driver(ctx)->prims;
}

/* rc, or -EINTR when rc is 0 and Ctrl-C was pressed. */
static int step(struct provision_ctx *ctx, int rc)
{
	return rc == 0 && prov_cancelled(ctx) ? -EINTR : rc;
}

int prov_engine_provision(struct provision_ctx *ctx, size_t li, struct volume **vols,
			  size_t *nvols)
{
	const struct prov_prims *pr = prims_of(ctx);
	size_t n = ctx->plan->layouts[li].nparts;
	int rc = pr->begin(ctx, li);
	if (rc == 0 && ctx->plan->target.kind == TARGET_IMAGE) {
		rc = step(ctx, pr->create_image(ctx));
		if (rc == 0)
			rc = pr->attach(ctx);
	} else if (rc == 0) {
		rc = pr->open_disk(ctx);
	}
	rc = step(ctx, rc);
	if (rc == 0)
		rc = step(ctx, pr->partition(ctx, li));
	for (size_t k = 0; k < n && rc == 0; k++) {
		if (pr->format)
			rc = step(ctx, pr->format(ctx, li, k));
		if (rc == 0)
			rc = step(ctx, pr->mount(ctx, li, k));
		if (rc == 0)
			rc = step(ctx, pr->conditions(ctx, li, k));
	}
	struct volume *v = xcalloc(n, sizeof(*v));
	for (size_t k = 0; k < n && rc == 0; k++)
		pr->volume(ctx, li, k, &v[k]);
	return provision_end(ctx, li, prov_engine_teardown, rc, v, n, vols, nvols);
}

int prov_engine_teardown(struct provision_ctx *ctx, size_t li)
{
	(void)li;
	if (!ctx->state)
		return 0;
	const struct prov_prims *pr = prims_of(ctx);
	int rc = 0;
	struct strbuf acc = STRBUF_INIT;
	sb_reset(ctx->err);
	for (size_t k = pr->volumes(ctx); k-- > 0;)
		prov_teardown_error(ctx, &acc, &rc, pr->unmount(ctx, k));
	pr->end_volumes(ctx);
	if (ctx->plan->target.kind == TARGET_IMAGE) {
		prov_teardown_error(ctx, &acc, &rc, pr->detach(ctx));
		prov_teardown_error(ctx, &acc, &rc, pr->delete_image(ctx));
	} else {
		prov_teardown_error(ctx, &acc, &rc, pr->release_disk(ctx));
	}
	return prov_teardown_done(ctx, &acc, rc);
}

void prov_engine_finish(struct provision_ctx *ctx)
{
	const struct prov_prims *pr = prims_of(ctx);
	finish(ctx, ctx->state && pr->left(ctx), prov_engine_teardown, pr->free_state);
}

/* --- fitting layouts --- */

struct prov_extent **prov_fit_layouts(struct provision_ctx *ctx, uint64_t total, uint32_t sector)
{
	const struct plan *p = ctx->plan;
	struct prov_extent **fits = xcalloc(p->nlayouts + 1, sizeof(*fits));
	for (size_t li = 0; li < p->nlayouts; li++) {
		const struct plan_layout *l = &p->layouts[li];
		fits[li] = xcalloc(l->nparts ? l->nparts : 1, sizeof(**fits));
		struct strbuf why = STRBUF_INIT;
		int rc = prims_of(ctx)->fit(l, total, sector, fits[li], &why);
		if (rc < 0)
			sb_addf(ctx->err, "layout %s does not fit %s (%llu bytes): %s", l->name,
				p->target.kind == TARGET_IMAGE ? "the image" : p->target.device,
				(unsigned long long)total, why.buf);
		sb_release(&why);
		if (rc < 0) {
			prov_fits_free(fits);
			return NULL;
		}
	}
	return fits;
}

void prov_fits_free(struct prov_extent **fits)
{
	for (size_t i = 0; fits && fits[i]; i++)
		free(fits[i]);
	free(fits);
}
