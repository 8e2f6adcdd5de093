/*
 * A resumed run on the Linux backend (rig resume; provision.h, struct
 * provision_resume): its find, verify, adopt and sweep (driver.h, struct
 * prov_resume_prims), which the engine (resume.c, prov_resume) calls in
 * prepare, before the image or disk checks.
 *
 * What can be left is found on the machine, not only in the store (a kill
 * between `losetup` and recording the volumes leaves a loop device the store
 * never heard of): the loop device whose backing file is the plan's image,
 * and every mount below RUN/mnt (mount points are only ever made there).
 * Nothing else is touched: a loop device is detached only when it reads
 * this image, a mount only unmounted when it is below this run's folder.
 *
 * Kept (image targets only) when it is exactly the recorded provisioning:
 * the image attached, the partitions where the layout puts them (sysfs
 * start and size), each recorded volume mounted at its recorded mount
 * point from its recorded partition with its file system, and nothing else
 * mounted below RUN/mnt. Disk targets are never kept: the disk's safety
 * check refuses a disk with anything mounted, and it runs before every
 * provisioning, so their mounts are removed and the layout is made again.
 */
#include <errno.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/engine.h"
#include "provision/journal.h"
#include "provision/linux/linux_backend.h"

/* Why what find saw is not exactly the recorded volumes ("" when it is). */
static int lx_verify(struct provision_ctx *ctx, struct strbuf *why)
{
	struct lx *s = ctx->state;
	const char *loop = s->found.loop;
	const struct linux_mount *m = s->found.m;
	size_t nm = s->found.nm;
	const struct provision_resume *r = ctx->resume;
	const struct plan_layout *l = &ctx->plan->layouts[r->layout];
	if (!s->is_image) {
		sb_adds(why, "a disk target is always provisioned again");
		return 0;
	}
	if (!r->vols) {
		sb_adds(why, "no volumes were recorded");
		return 0;
	}
	if (!loop) {
		sb_addf(why, "%s is not attached to a loop device", s->image);
		return 0;
	}
	if (r->nvols != l->nparts || nm != l->nparts) {
		sb_addf(why, "%zu volumes were recorded and %zu are mounted; layout %s has %zu",
			r->nvols, nm, l->name, l->nparts);
		return 0;
	}
	struct gpt_part *geo = xcalloc(l->nparts, sizeof(*geo));
	uint64_t bytes = ctx->image_size ? ctx->image_size : ctx->plan->target.image_size;
	struct strbuf e = STRBUF_INIT, disk = STRBUF_INIT, part = STRBUF_INIT, mnt = STRBUF_INIT;
	if (prov_gpt_layout(l, bytes, 512, geo, &e) < 0)
		sb_addf(why, "layout %s does not fit: %s", l->name, e.buf);
	sb_addf(&disk, "/dev/%s", loop);
	for (size_t k = 0; k < l->nparts && !why->len; k++) {
		const struct volume *v = &r->vols[k];
		sb_reset(&part);
		prov_linux_part_path(&part, disk.buf, k + 1);
		sb_reset(&mnt);
		sb_addf(&mnt, "%s/%s", s->mnt_root, l->parts[k].name);
		if (!v->device || strcmp(v->device, part.buf) || !v->dir || strcmp(v->dir, mnt.buf)) {
			sb_addf(why, "volume %s was recorded as %s on %s; now it would be %s on %s",
				l->parts[k].name, v->device ? v->device : "(none)",
				v->dir ? v->dir : "(none)", part.buf, mnt.buf);
			break;
		}
		char *start = prov_linux_attr("", "/sys/block/%s/%s/start", loop, prov_lx_base_name(part.buf));
		char *size = prov_linux_attr("", "/sys/block/%s/%s/size", loop, prov_lx_base_name(part.buf));
		if (!start || !size || strtoull(start, NULL, 10) != geo[k].first ||
		    strtoull(size, NULL, 10) != geo[k].last - geo[k].first + 1)
			sb_addf(why, "%s is not where layout %s puts it", part.buf, l->name);
		free(start);
		free(size);
		size_t j;
		for (j = 0; j < nm && strcmp(m[j].dir, mnt.buf); j++)
			;
		if (!why->len && j == nm)
			sb_addf(why, "%s is not mounted", mnt.buf);
		else if (!why->len && (strcmp(m[j].source, part.buf) || strcmp(m[j].fstype, v->fs)))
			sb_addf(why, "%s holds %s (%s), not %s (%s)", mnt.buf, m[j].source,
				m[j].fstype, part.buf, v->fs);
	}
	free(geo);
	sb_release(&e);
	sb_release(&disk);
	sb_release(&part);
	sb_release(&mnt);
	return 0;
}

/* Remove the mount points left below RUN/mnt (empty folders only). */
static void remove_mount_points(struct provision_ctx *ctx, struct lx *s)
{
	DIR *d = opendir(s->mnt_root);
	if (!d)
		return;
	struct dirent *e;
	struct strbuf p = STRBUF_INIT;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sb_reset(&p);
		sb_addf(&p, "%s/%s", s->mnt_root, e->d_name);
		if (rmdir(p.buf) == 0)
			prov_lx_note(ctx, 0, "rmdir %s (left by the interrupted run)", p.buf);
	}
	closedir(d);
	sb_release(&p);
	rmdir(s->mnt_root);
}

/* The mount points and the loop device found as this process's own. */
static void load(struct lx *s)
{
	const struct lx_found *f = &s->found;
	s->v = xcalloc(f->nm ? f->nm : 1, sizeof(*s->v));
	s->nv = f->nm;
	for (size_t k = 0; k < f->nm; k++) {
		s->v[k].part = xstrdup(f->m[k].source);
		s->v[k].mnt = xstrdup(f->m[k].dir);
		s->v[k].mnt_made = 1;
		s->v[k].mounted = 1;
	}
	if (f->loop) {
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "/dev/%s", f->loop);
		s->disk = sb_detach(&sb);
		s->attached = 1;
		s->image_made = 1;
	}
}

static int lx_find(struct provision_ctx *ctx, struct strbuf *what)
{
	struct lx *s = ctx->state;
	/* First the commands the killed run left running: a late `losetup`
	 * would attach the image after we looked, a late `mount` mount. */
	const char *needles[4] = { s->mnt_root, s->is_image ? s->image : NULL, NULL, NULL };
	int rc = prov_wait_orphans(ctx, needles);
	if (rc < 0)
		return rc;
	char *loop = s->is_image ? prov_linux_loop_of("", s->image) : NULL;
	struct strbuf dev = STRBUF_INIT;
	if (!s->is_image)
		sb_adds(&dev, ctx->plan->target.device);
	else if (loop)
		sb_addf(&dev, "/dev/%s", loop);
	if (dev.len) { /* sgdisk, partx, mkfs on the device or its partitions */
		needles[s->is_image ? 2 : 1] = dev.buf;
		rc = prov_wait_orphans(ctx, needles);
	}
	sb_release(&dev);
	if (rc < 0) {
		free(loop);
		return rc;
	}
	s->found.loop = loop;
	s->found.nm = prov_linux_mounts_under("", s->mnt_root, &s->found.m);
	load(s);
	if (s->found.nm || loop)
		sb_addf(what, "%zu mounts%s%s", s->found.nm, loop ? ", loop device /dev/" : "",
			loop ? loop : "");
	return 0;
}

/* The state as after provision(layout): the recorded volumes, in their
 * order, over the loop device find put there. */
static void lx_adopt(struct provision_ctx *ctx, struct strbuf *kept)
{
	struct lx *s = ctx->state;
	const struct provision_resume *r = ctx->resume;
	for (size_t k = 0; k < s->nv; k++) {
		free(s->v[k].part);
		free(s->v[k].mnt);
	}
	free(s->v);
	s->parts_added = 1;
	s->mnt_root_made = 1;
	char *d = prov_linux_attr("", "/sys/block/%s/loop/dio", s->found.loop);
	s->dio = d ? atoi(d) : -1;
	free(d);
	s->v = xcalloc(r->nvols, sizeof(*s->v));
	s->nv = r->nvols;
	for (size_t k = 0; k < r->nvols; k++) {
		s->v[k].part = xstrdup(r->vols[k].device);
		s->v[k].mnt = xstrdup(r->vols[k].dir);
		s->v[k].mnt_made = 1;
		s->v[k].mounted = 1;
		/* a remount keeps the plan's conditions (defrag's mount option) */
		if (k < ctx->plan->layouts[r->layout].nparts)
			s->v[k].opts = prov_lx_mount_option(&ctx->plan->layouts[r->layout].parts[k]);
	}
	sb_addf(kept, "%s with %zu mounted volumes", s->disk, s->nv);
	prov_lx_found_release(s);
}

/* After the teardown: the empty mount points below RUN/mnt, and an image
 * file the killed run made and never attached (else prepare would refuse
 * it as someone else's file). */
static int lx_sweep(struct provision_ctx *ctx)
{
	struct lx *s = ctx->state;
	remove_mount_points(ctx, s);
	int rc = 0;
	struct stat st;
	if (s->is_image && !s->found.loop && lstat(s->image, &st) == 0 && S_ISREG(st.st_mode) &&
	    prov_journal_image_made(ctx, s->image)) {
		rc = prov_image_end(ctx, s->image, s->image, 0, " (made by the interrupted "
				    "run, not yet partitioned)");
	}
	prov_lx_found_release(s);
	return rc;
}

void prov_lx_found_release(struct lx *s)
{
	free(s->found.loop);
	prov_linux_mounts_free(s->found.m, s->found.nm);
	memset(&s->found, 0, sizeof(s->found));
}

const struct prov_resume_prims prov_lx_resume_prims = {
	.find = lx_find,
	.verify = lx_verify,
	.adopt = lx_adopt,
	.sweep = lx_sweep,
};
