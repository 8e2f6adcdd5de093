/*
 * Volume conditions and snapshots of the Linux driver (the flags of
 * linux_driver.c's file systems):
 *
 *   indexing  Linux has no per-volume content indexer (nothing like
 *             Spotlight watches a mounted file system), so `indexing: off`
 *             is nothing to do, recorded as such.
 *   defrag    btrfs's counterpart of APFS's automatic defragmentation is
 *             the `autodefrag` mount option: small random writes into a
 *             file are queued for rewriting in the background. `on` mounts
 *             with autodefrag, `off` with noautodefrag (the default, said
 *             explicitly), and a remount keeps it. ext4 (e4defrag) and xfs
 *             (xfs_fsr) only have offline tools: refused at validation.
 *   snapshots btrfs: `btrfs subvolume snapshot -r MOUNT
 *             MOUNT/.rig-snapshots/snap-NNNN`, deleted with `btrfs
 *             subvolume delete`. A snapshot is not recursive: the earlier
 *             ones show inside a later one as empty folders. The modules
 *             work in their own folders below the mount (tree/, fill/,
 *             seqio/, ...) and never walk .rig-snapshots.
 *
 * Snapshots left at teardown are deleted before the unmount; a failure is
 * a warning, never a stop (the file system goes with the layout: the
 * image is deleted, a disk's next layout runs mkfs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/xalloc.h"
#include "provision/driver.h"
#include "provision/journal.h"
#include "provision/linux/linux_backend.h"
#include "provision/vol_facts.h"

#define SNAP_DIR ".rig-snapshots"

const char *prov_lx_mount_option(const struct plan_partition *pt)
{
	if (pt->defrag == COND_UNSET || (pt->not_applied & PCOND_DEFRAG))
		return NULL;
	return pt->defrag == COND_ON ? "autodefrag" : "noautodefrag";
}

void prov_lx_cond_note(struct provision_ctx *ctx, const struct plan_partition *pt)
{
	if (pt->indexing == COND_OFF && !(pt->not_applied & PCOND_INDEXING))
		prov_lx_note(ctx, 0, "indexing off on %s: nothing to do, linux has no per-volume indexer",
			pt->name);
}

void prov_lx_cond_facts(const struct provision_ctx *ctx, const struct plan_partition *pt,
		   struct vol_facts *f, struct prov_cond_text *t)
{
	struct strbuf how = STRBUF_INIT;
	const char *opt = prov_lx_mount_option(pt);
	if (opt)
		sb_addf(&how, "mount -o %s", opt);
	prov_cond_facts(ctx, pt, "nothing to do: linux has no per-volume indexer", how.buf, f, t);
	sb_release(&how);
}

static struct lvol *lvol_of(struct provision_ctx *ctx, const struct volume *vol)
{
	struct lx *s = ctx->state;
	for (size_t k = 0; s && k < s->nv; k++)
		if (s->v[k].mnt && s->v[k].mounted && !strcmp(s->v[k].mnt, vol->dir))
			return &s->v[k];
	sb_addf(ctx->err, "no snapshot of %s: it is not a volume rig mounted", vol->dir);
	return NULL;
}

int prov_lx_snapshot_take(struct provision_ctx *ctx, const struct volume *vol, char **name)
{
	struct lx *s = ctx->state;
	struct lvol *v = lvol_of(ctx, vol);
	if (!v)
		return -ENOENT;
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT, nm = STRBUF_INIT;
	sb_addf(&dir, "%s/%s", v->mnt, SNAP_DIR);
	int rc = 0;
	if (!v->snap_dir_made) {
		prov_lx_note(ctx, 0, "mkdir %s (rig's snapshots; no module walks it)", dir.buf);
		if (!s->dry && mkdir(dir.buf, 0755) < 0 && errno != EEXIST) {
			rc = -errno;
			sb_addf(ctx->err, "cannot create %s: %s", dir.buf, strerror(errno));
		}
		v->snap_dir_made = rc == 0;
	}
	struct stat st;
	do { /* a resumed run may find its earlier names taken */
		sb_reset(&nm);
		sb_reset(&path);
		sb_addf(&nm, "snap-%04u", ++v->snap_next);
		sb_addf(&path, "%s/%s", dir.buf, nm.buf);
	} while (rc == 0 && !s->dry && lstat(path.buf, &st) == 0);
	if (rc == 0) {
		const char *argv[] = { "btrfs", "subvolume", "snapshot", "-r", v->mnt, path.buf, NULL };
		rc = prov_journal_run(ctx, "take-snapshot", path.buf, argv, NULL);
	}
	if (rc == 0) {
		prov_snap_list_add(&v->snaps, nm.buf);
		*name = sb_detach(&nm);
	}
	sb_release(&dir);
	sb_release(&path);
	sb_release(&nm);
	return rc;
}

static int drop(struct provision_ctx *ctx, struct lvol *v, const char *name)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s/%s", v->mnt, SNAP_DIR, name);
	const char *argv[] = { "btrfs", "subvolume", "delete", path.buf, NULL };
	int rc = prov_journal_run(ctx, "delete-snapshot", path.buf, argv, NULL);
	if (rc == 0)
		prov_snap_list_remove(&v->snaps, name);
	sb_release(&path);
	return rc;
}

int prov_lx_snapshot_drop(struct provision_ctx *ctx, const struct volume *vol, const char *name)
{
	struct lvol *v = lvol_of(ctx, vol);
	if (!v)
		return -ENOENT;
	if (strchr(name, '/') || !strncmp(name, "..", 2)) {
		sb_addf(ctx->err, "refusing to delete snapshot '%s': not a name rig gave", name);
		return -EINVAL;
	}
	return drop(ctx, v, name);
}

static int drop_fn(struct provision_ctx *ctx, void *v, const char *name)
{
	return drop(ctx, v, name);
}

void prov_lx_snapshots_teardown(struct provision_ctx *ctx, struct lx *s, struct lvol *v)
{
	prov_snap_list_teardown(ctx, &v->snaps, v->mnt, drop_fn, v);
	if (v->snap_dir_made) {
		struct strbuf dir = STRBUF_INIT;
		sb_addf(&dir, "%s/%s", v->mnt, SNAP_DIR);
		prov_lx_note(ctx, 0, "rmdir %s", dir.buf);
		if (!s->dry && rmdir(dir.buf) < 0 && errno != ENOENT)
			prov_lx_note(ctx, 1, "cannot remove %s (it goes with the file system): %s", dir.buf,
				strerror(errno));
		sb_release(&dir);
		v->snap_dir_made = 0;
	}
}
