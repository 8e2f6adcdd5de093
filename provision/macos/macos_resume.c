/*
 * A resumed run on the macOS backend (rig resume; provision.h, struct
 * provision_resume): find what the killed process of this run left, and
 * whether it is exactly the recorded volumes, for macos.c's find, verify,
 * adopt and sweep (driver.h, struct prov_resume_prims), which the engine
 * (resume.c, prov_resume) calls before prepare's usual checks.
 *
 * What can be left is found on the machine, not only in the store (a kill
 * after `hdiutil attach` and before the volumes are recorded leaves an
 * attached image the store never heard of):
 *
 *   image  the disk `hdiutil info -plist` lists for the run's image file
 *          (its image-path), with its partitions and volumes
 *          (`diskutil list -plist DISK`, `diskutil apfs list -plist`,
 *          `diskutil info -plist` of each volume); or, not attached, the
 *          image file itself when the run's provisioning journal says the
 *          interrupted run created it and did not delete it (a kill right
 *          after `hdiutil create`), which prepare would else refuse as
 *          someone else's file
 *   disk   the target, when it holds exactly the layout's partitions as
 *          rig makes them (so its volumes are rig's to unmount)
 *
 * Kept (image targets only, when the resume asks to reuse) when it is
 * exactly the recorded provisioning: the layout's partitions in order,
 * types and sizes (prov_mac_layout_check), each recorded volume the same
 * identifier, mounted at its recorded mount point, at its recorded offset.
 * Disk targets are provisioned again, as on Linux: partitionDisk erases
 * what is there, after the safety rules and the typed confirmation.
 *
 * First, the commands the killed run started (their own process group)
 * are waited for (prov_wait_orphans): a late `hdiutil attach` or
 * `diskutil mount` would change what is found. On macOS there is no /proc
 * and nothing is found; the fake tools run on Linux, where it works.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/spawn.h"
#include "provision/journal.h"
#include "provision/macos/macos_resume.h"

/* A read-only query (logged); its plist parsed by parse into res. */
static int query(struct provision_ctx *ctx, const char *const *argv,
		 int (*parse)(const char *, size_t, void *, struct strbuf *), void *res)
{
	char *out = NULL;
	struct strbuf e = STRBUF_INIT;
	int rc = prov_mac_spawn_query(ctx->sp, argv, &out, &e);
	if (rc == 0 && parse(out, strlen(out), res, &e) < 0) {
		struct strbuf t = STRBUF_INIT;
		plat_spawn_argv_text(&t, argv);
		sb_addf(ctx->err, "%s printed no usable plist: %s", t.buf, e.buf);
		sb_release(&t);
		rc = -EIO;
	} else if (rc < 0) {
		sb_adds(ctx->err, e.buf);
		rc = -EIO;
	}
	free(out);
	sb_release(&e);
	return rc;
}

/* path made absolute against the working folder (caller frees). */
static char *absolute(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char cwd[4096];
	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		sb_addf(&sb, "%s/", cwd);
	sb_adds(&sb, path);
	return sb_detach(&sb);
}

/* The whole disk the image file is attached as (NULL: not attached). */
static int attached_disk(struct provision_ctx *ctx, const char *file, char **disk)
{
	const char *argv[] = { "hdiutil", "info", "-plist", NULL };
	struct mac_hdi_info h = { 0 };
	*disk = NULL;
	int rc = query(ctx, argv, prov_macos_plist_hdi_info, &h);
	for (size_t i = 0; rc == 0 && i < h.nimages && !*disk; i++) {
		if (!h.images[i].path || !files_same(h.images[i].path, file))
			continue;
		for (size_t k = 0; k < h.images[i].nents && !*disk; k++)
			if (h.images[i].ents[k].dev && !strncmp(h.images[i].ents[k].dev, "/dev/disk", 9))
				*disk = prov_mac_whole_of(h.images[i].ents[k].dev);
	}
	prov_mac_hdi_info_release(&h);
	return rc;
}

/* Volume k's facts: its diskutil info, and the partition's for APFS. */
static int vol_info(struct provision_ctx *ctx, const struct mac_made *m, struct mac_info *vol,
		    struct mac_info *part)
{
	const char *iv[] = { "diskutil", "info", "-plist", m->volume, NULL };
	const char *ip[] = { "diskutil", "info", "-plist", m->part, NULL };
	memset(vol, 0, sizeof(*vol));
	memset(part, 0, sizeof(*part));
	int rc = query(ctx, iv, prov_macos_plist_info, vol);
	if (rc == 0 && m->container)
		rc = query(ctx, ip, prov_macos_plist_info, part);
	return rc;
}

/*
 * Whether disk holds layout li's partitions as rig makes them: made[] (n
 * of them) filled when it does; why says what differs. < 0: diskutil
 * could not tell.
 */
static int read_layout(struct provision_ctx *ctx, const char *disk, size_t li,
		       struct mac_made **made, struct strbuf *why)
{
	const struct plan_layout *l = &ctx->plan->layouts[li];
	const char *info[] = { "diskutil", "info", "-plist", disk, NULL };
	const char *list[] = { "diskutil", "list", "-plist", disk, NULL };
	const char *apfs[] = { "diskutil", "apfs", "list", "-plist", NULL };
	struct mac_info di = { 0 };
	struct mac_list ml = { 0 };
	struct mac_apfs ma = { 0 };
	struct prov_extent *fit = xcalloc(l->nparts + 1, sizeof(*fit));
	struct strbuf e = STRBUF_INIT;
	*made = NULL;
	int rc = query(ctx, info, prov_macos_plist_info, &di);
	if (rc == 0)
		rc = query(ctx, list, prov_macos_plist_list, &ml);
	if (rc == 0)
		rc = query(ctx, apfs, prov_macos_plist_apfs, &ma);
	uint64_t total = di.total_size ? di.total_size : di.size;
	if (rc == 0 && prov_mac_fit(l, total, 512, fit, &e) < 0) {
		sb_addf(why, "layout %s does not fit %s: %s", l->name, disk, e.buf);
	} else if (rc == 0) {
		*made = xcalloc(l->nparts + 1, sizeof(**made));
		if (prov_mac_layout_check(l, fit, disk, &ml, &ma, *made, &e) < 0) {
			sb_addf(why, "%s does not hold layout %s: %s", disk, l->name, e.buf);
			prov_mac_made_release(*made, l->nparts);
			free(*made);
			*made = NULL;
		}
	}
	prov_mac_info_release(&di);
	prov_mac_list_release(&ml);
	prov_mac_apfs_release(&ma);
	free(fit);
	sb_release(&e);
	return rc;
}

/* Why the volumes made[] are not exactly the recorded ones ("" when they are). */
static int verify(struct provision_ctx *ctx, const struct mac_made *made, char **mounts,
		  struct strbuf *why)
{
	const struct provision_resume *r = ctx->resume;
	const struct plan_layout *l = &ctx->plan->layouts[r->layout];
	if (!r->vols || r->nvols != l->nparts) {
		sb_addf(why, "%zu volumes were recorded; layout %s has %zu", r->vols ? r->nvols : 0,
			l->name, l->nparts);
		return 0;
	}
	int rc = 0;
	for (size_t k = 0; k < l->nparts && rc == 0 && !why->len; k++) {
		const struct volume *v = &r->vols[k];
		struct mac_info vi, pi;
		rc = vol_info(ctx, &made[k], &vi, &pi);
		const struct mac_info *part = made[k].container ? &pi : &vi;
		struct strbuf dev = STRBUF_INIT, work = STRBUF_INIT;
		sb_addf(&dev, "/dev/%s", made[k].volume);
		if (vi.mount) /* the work folder macos.c makes there */
			sb_addf(&work, "%s/rig-%s", vi.mount, ctx->run_id);
		if (rc < 0)
			;
		else if (!v->device || strcmp(v->device, dev.buf))
			sb_addf(why, "volume %s was recorded as %s; now it is %s", l->parts[k].name,
				v->device ? v->device : "(none)", dev.buf);
		else if (!vi.mount || !v->dir || strcmp(work.buf, v->dir))
			sb_addf(why, "%s is mounted at %s, its work folder recorded as %s", dev.buf,
				vi.mount ? vi.mount : "(nowhere)", v->dir ? v->dir : "(nowhere)");
		else if (!v->has_offsets || !part->has_offset || part->offset != v->offset_start ||
			 part->offset + made[k].size != v->offset_end)
			sb_addf(why, "%s is not at the recorded offset", made[k].part);
		else
			mounts[k] = xstrdup(vi.mount);
		sb_release(&dev);
		sb_release(&work);
		prov_mac_info_release(&vi);
		prov_mac_info_release(&pi);
	}
	return rc;
}

/* A failed query, or the wait for the killed run's commands, said as
 * what keeps the resume from telling what was left. */
static int cannot_tell(struct provision_ctx *ctx, int rc)
{
	struct strbuf keep = STRBUF_INIT;
	sb_addf(&keep, "cannot tell what the interrupted run left: %s", ctx->err->buf);
	sb_reset(ctx->err);
	sb_adds(ctx->err, keep.buf);
	sb_release(&keep);
	return rc;
}

/* The commands the killed run started on the run folder or the target:
 * waited for before anything is looked at. */
static int wait_commands(struct provision_ctx *ctx, const char *image_file)
{
	const struct plan_target *t = &ctx->plan->target;
	/* Absolute paths only: a relative one ("run") would match any command. */
	char *run = realpath(ctx->run_dir, NULL);
	char *img = image_file ? absolute(image_file) : NULL;
	char *base = image_file ? absolute(t->image_path) : NULL;
	const char *all[3] = { run, image_file ? img : t->device, base }, *needles[4] = { 0 };
	for (size_t k = 0, n = 0; k < 3; k++)
		if (all[k])
			needles[n++] = all[k];
	int rc = prov_wait_orphans(ctx, needles);
	free(run);
	free(img);
	free(base);
	return rc;
}

/* An image target: the disk it is attached as, or the bare file the
 * killed run made; why it cannot be kept when it is not attached. */
static int find_image(struct provision_ctx *ctx, const char *image_file, const char *image_key,
		      struct mac_leftover *lo, struct strbuf *why)
{
	int rc = attached_disk(ctx, image_file, &lo->disk);
	struct stat st;
	if (rc == 0 && !lo->disk && lstat(image_file, &st) == 0 && S_ISREG(st.st_mode))
		lo->image_made = prov_journal_image_made(ctx, image_key);
	if (rc == 0 && lo->disk) {
		/* partitionDisk or mount of the attached disk, still running */
		const char *more[] = { lo->disk, NULL };
		rc = prov_wait_orphans(ctx, more);
		lo->image_made = 1;
	}
	if (rc == 0 && !lo->disk)
		sb_addf(why, "%s is not attached", image_file);
	return rc;
}

int prov_mac_resume_find(struct provision_ctx *ctx, const char *image_file, const char *image_key,
			 struct mac_leftover *lo)
{
	const struct provision_resume *r = ctx->resume;
	const struct plan_target *t = &ctx->plan->target;
	memset(lo, 0, sizeof(*lo));
	struct strbuf why = STRBUF_INIT;
	int rc = wait_commands(ctx, image_file);
	if (rc == 0 && image_file)
		rc = find_image(ctx, image_file, image_key, lo, &why);
	if (rc == 0 && (lo->disk || !image_file))
		rc = read_layout(ctx, lo->disk ? lo->disk : t->device, r->layout, &lo->made, &why);
	if (lo->made)
		lo->n = ctx->plan->layouts[r->layout].nparts;
	if (rc == 0 && !image_file) {
		if (lo->made)
			lo->disk = xstrdup(t->device);
		sb_reset(&why);
		sb_adds(&why, "a disk target is always provisioned again");
	}
	lo->why = sb_detach(&why);
	if (rc < 0) {
		prov_mac_leftover_release(lo);
		return cannot_tell(ctx, rc);
	}
	return 0;
}

int prov_mac_resume_verify(struct provision_ctx *ctx, struct mac_leftover *lo, struct strbuf *why)
{
	if (!lo->made || (lo->why && lo->why[0])) {
		sb_adds(why, lo->why && lo->why[0] ? lo->why : "the layout was not found");
		return 0;
	}
	char **mounts = xcalloc(lo->n, sizeof(*mounts));
	int rc = verify(ctx, lo->made, mounts, why);
	if (rc == 0 && !why->len) {
		lo->mounts = mounts;
		return 0;
	}
	for (size_t k = 0; k < lo->n; k++)
		free(mounts[k]);
	free(mounts);
	return rc < 0 ? cannot_tell(ctx, rc) : 0;
}

void prov_mac_leftover_release(struct mac_leftover *lo)
{
	free(lo->disk);
	if (lo->made)
		prov_mac_made_release(lo->made, lo->n);
	free(lo->made);
	for (size_t k = 0; k < lo->n && lo->mounts; k++)
		free(lo->mounts[k]);
	free(lo->mounts);
	free(lo->why);
	memset(lo, 0, sizeof(*lo));
}
