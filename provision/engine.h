/*
 * What every platform's provisioning does the same way, done once: the
 * volume a layout's partition becomes, handing the volumes out or undoing a
 * failed provision, and keeping or tearing down what a killed run left.
 * The drivers (linux*.c, macos*.c) call these around their own primitives.
 */
#ifndef RIG_PROVISION_ENGINE_H
#define RIG_PROVISION_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"
#include "provision/provision.h"

typedef int (*prov_teardown_fn)(struct provision_ctx *ctx, size_t li);

/*
 * The layout-level ops of a driver's backend (provision.h, struct
 * backend_ops), the same for every platform: the order of the primitives
 * of the plan's driver (driver.h, struct prov_prims). provision is
 * from scratch and undoes what it did when it fails; teardown is safe
 * after a partial provision and a second time; finish tears down once
 * more what a failed teardown left and frees the driver's state.
 */
int prov_engine_provision(struct provision_ctx *ctx, size_t li, struct volume **vols,
			  size_t *nvols);
int prov_engine_teardown(struct provision_ctx *ctx, size_t li);
void prov_engine_finish(struct provision_ctx *ctx);

/*
 * Every layout of ctx's plan fitted to a target of total bytes with
 * sector-byte sectors, by its driver's fit: per layout an array of its
 * partitions' extents, NULL ended (free with prov_fits_free). NULL with
 * "layout NAME does not fit WHAT (N bytes): why" in ctx->err, what being
 * "the image" or the disk's device.
 */
struct prov_extent **prov_fit_layouts(struct provision_ctx *ctx, uint64_t total, uint32_t sector);
void prov_fits_free(struct prov_extent **fits);

/* v as partition k of layout li: its name, file system and position from
 * the plan, where modules work (dir), its device (may be NULL), and its
 * byte range [start, end) when known (end > start). */
void prov_volume_set(struct volume *v, const struct provision_ctx *ctx, size_t li, size_t k,
		     const char *dir, const char *device, uint64_t start, uint64_t end);

/*
 * The end of an image file rig made: kept (keep: true) or deleted, said in
 * a note ("delete FILE" and why, e.g. " (made by the interrupted run)")
 * and journaled as keep-image or delete-image on object (the path the
 * journal knows the image by). A dry run only notes. 0, or -errno with the
 * reason in ctx->err (a file already gone is deleted).
 */
int prov_image_end(struct provision_ctx *ctx, const char *file, const char *object, int keep,
		   const char *why);

/* A teardown's last step: ctx->err says every error it collected in acc
 * (prov_teardown_error), acc is released, rc returned. */
int prov_teardown_done(struct provision_ctx *ctx, struct strbuf *acc, int rc);

/*
 * A resumed run (ctx->resume; provision.h, struct provision_resume), in a
 * backend's prepare before its checks, decided the same way for every
 * backend (resume.c) with rp, the backend's primitives (driver.h, struct
 * prov_resume_prims), on state (ctx->state while they run, the caller's
 * again afterwards: prepare sets it only when it succeeds):
 *
 *   find what the killed run left;
 *   if the resume may reuse it and it verifies as exactly the recorded
 *   volumes of resume->layout: adopt it, note "kept what the interrupted
 *   run provisioned: KEPT" (unless adopt says nothing), set
 *   resume->reused;
 *   else: why it was not kept into resume->why (when reuse was asked:
 *   else the caller knows why), note "tear down what the interrupted run
 *   left: WHAT" (unless find found nothing to say), tear it down with
 *   teardown(ctx, resume->layout) as if this process had provisioned it,
 *   then sweep.
 *
 * 0, or < 0 with the reason in ctx->err; a failed teardown says that it
 * was the killed run's leftovers that could not be torn down.
 */
int prov_resume(struct provision_ctx *ctx, const struct prov_resume_prims *rp, void *state,
		prov_teardown_fn teardown);
/* The same for a platform driver: its prims' resume (ctx's driver) and
 * prov_engine_teardown. */
int prov_engine_resume(struct provision_ctx *ctx, void *state);

/*
 * The snapshots of volume v (partition pt of the plan) as a module sees
 * them (modules/module.h, struct rig_snapshots): keep from pt, skip when its
 * file system takes none (the plan's platform driver says) or pt says
 * `none`, take and drop through the backend's ops with ctx (its spawner:
 * the run's, or `rig plan`'s dry one). Release with prov_snapshots_release.
 */
struct prov_snapshots {
	struct rig_snapshots s;      /* what the module gets: &ps->s */
	const struct backend_ops *ops;
	struct provision_ctx *ctx;
	const struct volume *v;
	struct strbuf skip;
};
void prov_snapshots_init(struct prov_snapshots *ps, const struct backend_ops *ops,
			 struct provision_ctx *ctx, const struct volume *v,
			 const struct plan_partition *pt);
void prov_snapshots_release(struct prov_snapshots *ps);

/*
 * A partition's conditions in its facts (vol_facts.h): what the plan says
 * and how the driver applied it: indexing_how and defrag_how are the
 * driver's words (the command, or why nothing was done), copied when the
 * plan gives the condition and it is applied. t holds every text f points
 * to; the caller releases it with prov_cond_text_release after f is
 * written.
 */
struct vol_facts;
struct prov_cond_text {
	struct strbuf indexing, defrag, snapshots, snapshots_how;
};
void prov_cond_facts(const struct provision_ctx *ctx, const struct plan_partition *pt,
		     const char *indexing_how, const char *defrag_how, struct vol_facts *f,
		     struct prov_cond_text *t);
void prov_cond_text_release(struct prov_cond_text *t);

/* The snapshots a driver took of one volume and has not deleted, oldest
 * first: deleted at its teardown. */
struct prov_snap_list {
	char **names;
	size_t n, alloc;
};
void prov_snap_list_add(struct prov_snap_list *l, const char *name);
/* Forget name: 1 when it was there. */
int prov_snap_list_remove(struct prov_snap_list *l, const char *name);
void prov_snap_list_release(struct prov_snap_list *l);
/* At teardown: drop(ctx, vol, name) every snapshot of l (it removes the
 * name from l); one that fails is a warning naming where (the mount), and
 * forgotten. l is empty afterwards. */
typedef int (*prov_snap_drop_fn)(struct provision_ctx *ctx, void *vol, const char *name);
void prov_snap_list_teardown(struct provision_ctx *ctx, struct prov_snap_list *l,
			     const char *where, prov_snap_drop_fn drop, void *vol);

#endif
