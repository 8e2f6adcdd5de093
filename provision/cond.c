/*
 * The volume conditions every driver records the same way (engine.h):
 * a partition's conditions in its facts, and the snapshots a module sees,
 * bound to the backend's snapshot ops. What a condition does on a
 * platform (the commands) is the driver's: linux_cond.c, macos_cond.c.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "plan/platform.h"
#include "provision/command.h"
#include "provision/driver.h"
#include "provision/engine.h"
#include "provision/vol_facts.h"

/* "not applied: btrfs (mapped from apfs by --fs-map) ..." */
static void not_applied(struct strbuf *sb, const struct provision_ctx *ctx,
			const struct plan_partition *pt, const char *what)
{
	const struct plan_platform *d = ctx->plan->platform;
	sb_addf(sb, "not applied: %s (mapped from %s by --fs-map) on %s %s", pt->fs,
		pt->mapped_from ? pt->mapped_from : "?", d ? d->name : "this platform", what);
}

/* An on/off condition v: its value and how it was applied (or why not). */
static void onoff(const struct provision_ctx *ctx, const struct plan_partition *pt, int v,
		  unsigned bit, const char *cannot, const char *how, struct strbuf *t,
		  const char **value, const char **applied)
{
	if (v == COND_UNSET)
		return;
	*value = v == COND_ON ? "on" : "off";
	if (pt->not_applied & bit)
		not_applied(t, ctx, pt, cannot);
	else
		sb_adds(t, how ? how : "");
	*applied = t->buf;
}

void prov_cond_facts(const struct provision_ctx *ctx, const struct plan_partition *pt,
		     const char *indexing_how, const char *defrag_how, struct vol_facts *f,
		     struct prov_cond_text *t)
{
	sb_init(&t->indexing);
	sb_init(&t->defrag);
	sb_init(&t->snapshots);
	sb_init(&t->snapshots_how);
	onoff(ctx, pt, pt->indexing, PCOND_INDEXING, "has no indexer to switch on", indexing_how,
	      &t->indexing, &f->indexing, &f->indexing_applied);
	onoff(ctx, pt, pt->defrag, PCOND_DEFRAG, "has no automatic defragmentation to set",
	      defrag_how, &t->defrag, &f->defrag, &f->defrag_applied);
	if (pt->snapshots != SNAP_UNSET) {
		if (pt->snapshots)
			sb_addf(&t->snapshots, "keep %d", pt->snapshots);
		else
			sb_adds(&t->snapshots, "none");
		f->snapshots = t->snapshots.buf;
		if (pt->not_applied & PCOND_SNAPSHOTS)
			not_applied(&t->snapshots_how, ctx, pt, "takes no snapshots");
		else if (pt->snapshots)
			sb_addf(&t->snapshots_how, "the snapshot step keeps the last %d of this volume",
				pt->snapshots);
		else
			sb_adds(&t->snapshots_how, "the snapshot step skips this volume");
		f->snapshots_applied = t->snapshots_how.buf;
	}
}

void prov_cond_text_release(struct prov_cond_text *t)
{
	sb_release(&t->indexing);
	sb_release(&t->defrag);
	sb_release(&t->snapshots);
	sb_release(&t->snapshots_how);
}

/* --- snapshots --- */

static int snap_take(void *opaque, char **name, struct strbuf *err)
{
	struct prov_snapshots *ps = opaque;
	sb_reset(ps->ctx->err);
	int rc = ps->ops->snapshot_take(ps->ctx, ps->v, name);
	if (rc < 0)
		sb_adds(err, ps->ctx->err->buf);
	return rc;
}

static int snap_drop(void *opaque, const char *name, struct strbuf *err)
{
	struct prov_snapshots *ps = opaque;
	sb_reset(ps->ctx->err);
	int rc = ps->ops->snapshot_drop(ps->ctx, ps->v, name);
	if (rc < 0)
		sb_adds(err, ps->ctx->err->buf);
	return rc;
}

static int snap_list(void *opaque, char ***names, size_t *n, struct strbuf *err)
{
	struct prov_snapshots *ps = opaque;
	sb_reset(ps->ctx->err);
	int rc = ps->ops->snapshot_list(ps->ctx, ps->v, names, n);
	if (rc < 0)
		sb_adds(err, ps->ctx->err->buf);
	return rc;
}

void prov_snapshots_init(struct prov_snapshots *ps, const struct backend_ops *ops,
			 struct provision_ctx *ctx, const struct volume *v,
			 const struct plan_partition *pt)
{
	const struct plan_platform *d = ctx->plan->platform;
	ps->ops = ops;
	ps->ctx = ctx;
	ps->v = v;
	sb_init(&ps->skip);
	ps->s.keep = pt->not_applied & PCOND_SNAPSHOTS ? SNAP_UNSET : pt->snapshots;
	ps->s.take = snap_take;
	ps->s.drop = snap_drop;
	ps->s.opaque = ps;
	if (!ops || !ops->snapshot_take || !ops->snapshot_drop) {
		sb_addf(&ps->skip, "the %s backend takes no snapshots", ops ? ops->name : "(none)");
	} else if (!plan_fs_can(d, pt->fs, PLAN_FS_SNAPSHOTS)) {
		struct strbuf can = STRBUF_INIT;
		plan_fs_with(&can, d, PLAN_FS_SNAPSHOTS);
		sb_addf(&ps->skip, "%s takes no snapshots (on %s rig takes snapshots of %s)", pt->fs,
			d ? d->name : "this platform", can.len ? can.buf : "no file system");
		sb_release(&can);
	} else {
		ps->s.list = ops->snapshot_list ? snap_list : NULL;
		if (ps->s.keep == 0)
			sb_adds(&ps->skip, "the partition says 'snapshots: none'");
	}
	ps->s.skip = ps->skip.len ? ps->skip.buf : NULL;
}

void prov_snapshots_release(struct prov_snapshots *ps)
{
	sb_release(&ps->skip);
}

void prov_snap_list_add(struct prov_snap_list *l, const char *name)
{
	XGROW(l->names, l->n + 1, l->alloc);
	l->names[l->n++] = xstrdup(name);
}

int prov_snap_list_remove(struct prov_snap_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->names[i], name))
			continue;
		free(l->names[i]);
		memmove(l->names + i, l->names + i + 1, (l->n - i - 1) * sizeof(*l->names));
		l->n--;
		return 1;
	}
	return 0;
}

void prov_snap_list_release(struct prov_snap_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

void prov_snap_list_teardown(struct provision_ctx *ctx, struct prov_snap_list *l,
			     const char *where, prov_snap_drop_fn drop, void *vol)
{
	while (l->n) {
		struct strbuf e = STRBUF_INIT;
		struct provision_ctx q = *ctx;
		q.err = &e;
		char *name = xstrdup(l->names[0]);
		if (drop(&q, vol, name) < 0) {
			prov_note(ctx, 1, "snapshot %s of %s is left to go with its file system: %s",
				  name, where, e.buf);
			prov_snap_list_remove(l, name);
		}
		free(name);
		sb_release(&e);
	}
	prov_snap_list_release(l);
}
