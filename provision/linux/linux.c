/*
 * The Linux backend: image and disk targets. For each layout, from scratch:
 *
 *   image  create the file (sparse), `losetup --find --show --direct-io=on`
 *   both   `partx --delete` when the kernel knows partitions of the disk
 *          (whatever made them: another plan, another tool, a crash)
 *   disk   check it against the safety rules again, `sgdisk --zap-all`
 *   both   `sgdisk --clear --new... --change-name...` (sectors from
 *          linux_gpt.c, a disk GUID that marks the table as rig's),
 *          `partx --update` and wait for the partition nodes, then per
 *          partition `mkfs.*` with the partition's name as label and
 *          `mount` under RUN/mnt/NAME
 *
 * and teardown undoes it in reverse: unmount, remove the mount points, and
 * for images remove the partitions (`partx --delete`), detach the loop
 * device and delete the image unless `keep: true`. A disk keeps its last
 * partition table, as the kernel now sees it.
 *
 * The partition table (zap, clear, partx) is written while rig holds the
 * whole disk with O_EXCL (partition()); a disk target is also opened so
 * once in prepare, so a disk another program holds is refused there.
 *
 * Why partx: kernels without partition-table parsers (this project's CI
 * among them) create no loopNpK after `losetup -P` or BLKRRPART; `partx
 * --update` adds them from user space with BLKPG where they are missing and
 * leaves them alone where the kernel made them, and nodes appear without
 * udev (devtmpfs), so rig polls for them with a timeout.
 * Why --direct-io=on: otherwise the image is cached twice (the loop
 * device's pages and the image file's), and a loop device reads at page
 * cache speed; the setting the kernel actually applied is recorded per
 * volume, with a warning when it is off.
 *
 * Every command goes through the spawner: logged with its output and exit
 * status, and in dry-run mode only recorded, which is how `rig plan` lists
 * them; run-time names it cannot know there are placeholders (/dev/loopN,
 * RUN). Commands run in their own process group, so a Ctrl-C typed at the
 * terminal reaches rig alone and never kills an `umount` half-way through
 * a teardown; rig stops between commands instead (ctx->cancel).
 *
 * Teardown knows what provision did from flags set after each step, so it
 * is safe after a partial provision, after a failure in any command, and a
 * second time. Unmounting retries a busy file system, then detaches it
 * lazily (with a warning) rather than leave it mounted.
 *
 * The image file, the loop device, the tools and the disk's safety check
 * are in linux_target.c; the state both files share in linux_backend.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/platform.h"
#include "provision/command.h"
#include "provision/engine.h"
#include "provision/journal.h"
#include "provision/linux/linux_backend.h"
#include "provision/vol_facts.h"

/* --- the partition table --- */

static void disk_guid(struct strbuf *sb, const char *run_id, size_t li)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of "run_id/li" */
	struct strbuf key = STRBUF_INIT;
	sb_addf(&key, "%s/%zu", run_id ? run_id : "", li);
	for (size_t i = 0; i < key.len; i++)
		h = (h ^ (unsigned char)key.buf[i]) * 0x100000001b3ull;
	sb_release(&key);
	uint64_t h2 = h * 0x9e3779b97f4a7c15ull;
	sb_addf(sb, "%08x-%04x-4%03x-8%03x-%012llx", GUID_MARK, (unsigned)(h >> 48),
		(unsigned)(h >> 36) & 0xfff, (unsigned)(h >> 24) & 0xfff,
		(unsigned long long)(h2 & 0xffffffffffffull));
}

static int has_partitions(const struct lx *s);

/* Partition k of layout li as the fitted layout puts it, in sectors. */
static uint64_t first_sector(const struct lx *s, size_t li, size_t k)
{
	return s->fit[li][k].start / s->sector;
}

static uint64_t last_sector(const struct lx *s, size_t li, size_t k)
{
	return (s->fit[li][k].start + s->fit[li][k].bytes) / s->sector - 1;
}

static int write_table(struct provision_ctx *ctx, struct lx *s, size_t li)
{
	const struct plan_layout *l = &ctx->plan->layouts[li];
	/* The kernel's partitions go first, whatever made them (another plan,
	 * another tool, an interrupted run): `partx --update` cannot move a
	 * partition over one that stays, so ten stale partitions kept the
	 * halves' first one from appearing. */
	if (has_partitions(s)) {
		const char *del[] = { "partx", "--delete", s->disk, NULL };
		int rc = prov_journal_run(ctx, "forget-partitions", s->disk, del, NULL);
		s->parts_added = 0;
		if (rc < 0 || prov_lx_cancelled(ctx))
			return rc < 0 ? rc : -EINTR;
	}
	if (!s->is_image) {
		const char *zap[] = { "sgdisk", "--zap-all", s->disk, NULL };
		int rc = prov_lx_run_destructive(ctx, s, "partition", s->disk, zap);
		if (rc < 0 || prov_lx_cancelled(ctx))
			return rc < 0 ? rc : -EINTR;
	}
	struct strbuf *args = xcalloc(3 * l->nparts + 4, sizeof(struct strbuf));
	const char **argv = xcalloc(3 * l->nparts + 8, sizeof(char *));
	size_t n = 0, a = 0;
	argv[n++] = "sgdisk";
	argv[n++] = "--clear";
	sb_init(&args[a]);
	sb_addf(&args[a], "--set-alignment=%u", GPT_ALIGN / s->sector);
	argv[n++] = args[a++].buf;
	sb_init(&args[a]);
	sb_adds(&args[a], "--disk-guid=");
	disk_guid(&args[a], ctx->run_id, li);
	argv[n++] = args[a++].buf;
	for (size_t i = 0; i < l->nparts; i++) {
		sb_init(&args[a]);
		if (s->fit)
			sb_addf(&args[a], "--new=%zu:%llu:%llu", i + 1,
				(unsigned long long)first_sector(s, li, i),
				(unsigned long long)last_sector(s, li, i));
		else
			sb_addf(&args[a], "--new=%zu:START%zu:END%zu", i + 1, i + 1, i + 1);
		argv[n++] = args[a++].buf;
		sb_init(&args[a]);
		sb_addf(&args[a], "--change-name=%zu:%s", i + 1, l->parts[i].name);
		argv[n++] = args[a++].buf;
		sb_init(&args[a]);
		sb_addf(&args[a], "--typecode=%zu:8300", i + 1);
		argv[n++] = args[a++].buf;
	}
	argv[n++] = s->disk;
	argv[n] = NULL;
	int rc = prov_lx_run_destructive(ctx, s, "partition", s->disk, argv);
	for (size_t i = 0; i < a; i++)
		sb_release(&args[i]);
	free(args);
	free(argv);
	if (rc < 0 || prov_lx_cancelled(ctx))
		return rc < 0 ? rc : -EINTR;
	const char *px[] = { "partx", "--update", s->disk, NULL };
	s->parts_added = 1;
	rc = prov_journal_run(ctx, "add-partitions", s->disk, px, NULL);
	if (rc < 0 || prov_lx_cancelled(ctx))
		return rc < 0 ? rc : -EINTR;
	return 0;
}

/*
 * The partition table: written while rig holds the whole disk exclusively
 * (prov_lx_hold_disk), so that another program holding it is found before
 * anything is written and none gets in while the table changes. Released
 * after `partx --update`: mkfs and mount open the partitions exclusively
 * and would be refused while the whole disk is held. rig's own mounts of
 * an earlier layout are gone by then (the teardown before this layout
 * unmounted them), so rig does not refuse itself.
 */
static int partition(struct provision_ctx *ctx, struct lx *s, size_t li)
{
	int held;
	int rc = prov_lx_hold_disk(ctx, s, s->disk, &held);
	if (rc == 0)
		rc = write_table(ctx, s, li);
	prov_lx_release_disk(held);
	return rc;
}

/* Whether the kernel has made partition part: its block device node, or
 * on a recorded machine (tests) its sysfs entry. */
static int node_exists(const struct lx *s, const char *part)
{
	struct stat st;
	if (!s->root[0])
		return stat(part, &st) == 0 && S_ISBLK(st.st_mode);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/sys/block/%s/%s", s->root, prov_lx_base_name(s->disk), prov_lx_base_name(part));
	int ok = stat(p.buf, &st) == 0;
	sb_release(&p);
	return ok;
}

/* Wait for partition node k and check that the kernel put it where the
 * table says. */
static int wait_node(struct provision_ctx *ctx, struct lx *s, size_t li, size_t k)
{
	const char *part = s->v[k].part;
	if (s->dry)
		return 0;
	int waited = 0;
	while (!node_exists(s, part)) {
		if (waited >= NODE_TIMEOUT_MS || prov_lx_cancelled(ctx)) {
			if (waited >= NODE_TIMEOUT_MS)
				sb_addf(ctx->err, "partition %s did not appear within %d s after "
						  "partx --update %s", part, NODE_TIMEOUT_MS / 1000,
					s->disk);
			return waited >= NODE_TIMEOUT_MS ? -ETIMEDOUT : -EINTR;
		}
		prov_lx_sleep_ms(20);
		waited += 20;
	}
	if (!s->fit)
		return 0;
	char *start = prov_linux_attr(s->root, "/sys/block/%s/%s/start", prov_lx_base_name(s->disk),
				 prov_lx_base_name(part));
	char *size = prov_linux_attr(s->root, "/sys/block/%s/%s/size", prov_lx_base_name(s->disk),
				prov_lx_base_name(part));
	uint64_t per = s->sector / 512; /* sysfs counts 512-byte units */
	const struct gpt_part g = { first_sector(s, li, k), last_sector(s, li, k) };
	int ok = start && size && strtoull(start, NULL, 10) == g.first * per &&
		 strtoull(size, NULL, 10) == (g.last - g.first + 1) * per;
	if (!ok)
		sb_addf(ctx->err, "the kernel sees %s at start %s, size %s (512-byte units); the "
				  "table rig wrote says %llu, %llu", part, start ? start : "?",
			size ? size : "?", (unsigned long long)(g.first * per),
			(unsigned long long)((g.last - g.first + 1) * per));
	free(start);
	free(size);
	return ok ? 0 : -EIO;
}

/* --- file systems and mounts --- */

static int make_fs(struct provision_ctx *ctx, struct lx *s, const struct plan_partition *pt,
		   const char *part, struct strbuf *cmd)
{
	const char *argv[12];
	size_t n = 0;
	argv[n++] = prov_lx_mkfs_tool(pt->fs);
	if (!strcmp(pt->fs, "ext4")) {
		/* No background zeroing of inode tables and journal during measurements. */
		argv[n++] = "-F";
		argv[n++] = "-q";
		argv[n++] = "-L";
		argv[n++] = pt->name;
		argv[n++] = "-E";
		argv[n++] = "lazy_itable_init=0,lazy_journal_init=0";
	} else {
		argv[n++] = "-f";
		argv[n++] = "-q";
		argv[n++] = "-L";
		argv[n++] = pt->name;
	}
	argv[n++] = part;
	argv[n] = NULL;
	plat_spawn_argv_text(cmd, argv);
	return prov_lx_run_destructive(ctx, s, "format", part, argv);
}

static int do_mount(struct provision_ctx *ctx, const char *fs, struct lvol *v)
{
	const char *plain[] = { "mount", "-t", fs, v->part, v->mnt, NULL };
	const char *with[] = { "mount", "-t", fs, "-o", v->opts, v->part, v->mnt, NULL };
	const char *const *argv = v->opts ? with : plain;
	int rc = prov_journal_run(ctx, "mount", v->mnt, argv, NULL);
	if (rc == 0)
		v->mounted = 1;
	return rc;
}

/* Unmount, retrying a busy file system; at last detach it lazily, so that
 * nothing stays visible (the kernel frees it when its last user goes). */
static int try_umount(struct provision_ctx *ctx, struct lvol *v)
{
	const char *argv[] = { "umount", v->mnt, NULL };
	struct strbuf first = STRBUF_INIT;
	for (int i = 0; i < (plat_spawner_dry_run(ctx->sp) ? 1 : UMOUNT_TRIES); i++) {
		struct strbuf e = STRBUF_INIT;
		struct provision_ctx quiet = *ctx;
		quiet.err = &e;
		int rc = prov_lx_run(&quiet, argv, NULL);
		if (rc == 0 || (!plat_spawner_dry_run(ctx->sp) && !prov_linux_is_mounted("", v->mnt))) {
			sb_release(&e);
			sb_release(&first);
			v->mounted = 0;
			return 0;
		}
		if (!first.len)
			sb_adds(&first, e.buf);
		sb_release(&e);
		prov_lx_sleep_ms(100);
	}
	const char *lazy[] = { "umount", "--lazy", v->mnt, NULL };
	int rc = prov_lx_run(ctx, lazy, NULL);
	if (rc == 0) {
		v->mounted = 0;
		prov_lx_note(ctx, 1, "%s stayed busy; it was detached lazily and is freed when its last "
			     "user exits (%s)", v->mnt, first.buf);
	} else {
		sb_addf(ctx->err, "; first attempt: %s", first.buf);
	}
	sb_release(&first);
	return rc;
}

/* One journal row for all the tries. */
static int do_umount(struct provision_ctx *ctx, struct lvol *v)
{
	int64_t j = prov_journal_begin(ctx, "unmount", v->mnt, NULL, v->part);
	int rc = try_umount(ctx, v);
	prov_journal_end(ctx, j, rc);
	return rc;
}

static void mkdir_mnt(struct provision_ctx *ctx, struct lx *s, struct lvol *v, int *rc)
{
	if (!s->mnt_root_made) {
		if (!s->dry && mkdir(s->mnt_root, 0755) < 0 && errno != EEXIST) {
			sb_addf(ctx->err, "cannot create %s: %s", s->mnt_root, strerror(errno));
			*rc = -errno;
			return;
		}
		s->mnt_root_made = 1;
	}
	prov_lx_note(ctx, 0, "mkdir %s", v->mnt);
	if (!s->dry && mkdir(v->mnt, 0755) < 0) {
		sb_addf(ctx->err, "cannot create mount point %s: %s", v->mnt, strerror(errno));
		*rc = -errno;
		return;
	}
	v->mnt_made = 1;
}

/* The facts recorded with a volume (vol_facts.h). */

/*
 * The bus a disk hangs on, from where the kernel put it in sysfs
 * (/sys/block/X links into the device tree: .../usb1/..., .../nvme/...,
 * .../ata3/..., .../virtio2/..., .../virtual/block/loop0): "usb", "nvme",
 * "ata", "virtio", "scsi", "mmc", "virtual", or NULL when unknown.
 */
static const char *disk_bus(const char *root, const char *disk)
{
	static const char *const buses[] = { "usb", "nvme", "ata", "virtio", "mmc", "scsi", "virtual" };
	char link[1024], target[PATH_MAX];
	snprintf(link, sizeof(link), "%s/sys/block/%s", root, disk);
	if (!realpath(link, target))
		return NULL;
	for (size_t i = 0; i < sizeof(buses) / sizeof(buses[0]); i++) {
		char pat[32];
		snprintf(pat, sizeof(pat), "/%s", buses[i]);
		if (strstr(target, pat))
			return buses[i];
	}
	return NULL;
}

static char *volume_facts(struct provision_ctx *ctx, struct lx *s, size_t li, size_t k,
			  const char *mkfs)
{
	const struct plan_partition *pt = &ctx->plan->layouts[li].parts[k];
	const struct lvol *v = &s->v[k];
	const char *disk = prov_lx_base_name(s->disk);
	char *rot = s->dry ? NULL : prov_linux_attr(s->root, "/sys/block/%s/queue/rotational", disk);
	char *opts = s->dry ? NULL : prov_linux_mount_options("", v->mnt);
	char *semi = opts ? strchr(opts, ';') : NULL;
	if (semi)
		*semi = '\0';
	struct vol_facts f = {
		.target = s->is_image ? "image" : "disk",
		.disk = s->disk,
		.partition = v->part,
		.number = (unsigned)k + 1,
		.name = pt->name,
		.image = s->is_image ? s->image : NULL,
		.model = s->is_image ? NULL : s->facts.model,
		.serial = s->is_image ? NULL : s->facts.serial,
		.bus = s->dry ? NULL : disk_bus(s->root, disk),
		.rotational = !rot ? VF_UNKNOWN : !strcmp(rot, "1"),
		.internal = VF_UNKNOWN,
		.sector_size = s->sector,
		.fs = pt->fs,
		.format_command = mkfs,
		.fs_type = pt->fs,
		.mount_point = v->mnt,
		.mount_options = opts,
		.super_options = opts ? (semi ? semi + 1 : "") : NULL,
		.loop_direct_io = s->is_image && s->dio >= 0 ? s->dio : VF_UNKNOWN,
		.kept = 0,
		.work_dir = v->mnt,
	};
	struct prov_cond_text ct;
	prov_lx_cond_facts(ctx, pt, &f, &ct);
	if (s->fit) {
		f.has_sectors = 1;
		f.first_sector = first_sector(s, li, k);
		f.last_sector = last_sector(s, li, k);
		f.partition_bytes = (f.last_sector - f.first_sector + 1) * s->sector;
	}
	struct statvfs sv;
	if (!s->dry && statvfs(v->mnt, &sv) == 0) {
		f.has_space = 1;
		f.capacity_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
		f.free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
		f.block_size = (unsigned)sv.f_bsize;
	}
	char *json = prov_vol_facts_json(&f);
	prov_cond_text_release(&ct);
	free(rot);
	free(opts);
	return json;
}

/* --- the ops --- */

static void free_state(void *state)
{
	struct lx *s = state;
	if (!s)
		return;
	free(s->run_abs);
	free(s->mnt_root);
	free(s->image);
	prov_fits_free(s->fit);
	prov_disk_facts_release(&s->facts);
	prov_disk_identity_release(&s->id);
	free(s->disk);
	free(s->v);
	prov_lx_found_release(s);
	free(s);
}

/* rig plan on a disk target: what this machine's disk would meet (the
 * safety rules, said as notes) and its size, when it can be read. */
static void lx_dry_disk(struct provision_ctx *ctx, struct lx *s)
{
	const struct plan *p = ctx->plan;
	prov_linux_disk_facts(s->root, p->target.device, &s->facts);
	const struct safety_rule *rule = NULL;
	struct strbuf fact = STRBUF_INIT;
	if (prov_safety_check(&s->facts, p->target.confirm, ctx->allow, &rule, &fact) < 0)
		prov_lx_note(ctx, 1, "on this machine rig would refuse %s: %s (rule %s)",
		     p->target.device, fact.buf, rule->name);
	else
		prov_lx_note(ctx, 0, "on this machine %s passes every safety rule (model %s, serial "
			     "%s, %llu bytes); rig run checks them again and asks to type its "
			     "model or serial unless --yes", p->target.device,
		     s->facts.model ? s->facts.model : "unknown",
		     s->facts.serial ? s->facts.serial : "unknown",
		     (unsigned long long)s->facts.size);
	sb_release(&fact);
	if (s->facts.exists && s->facts.size) {
		s->bytes = s->facts.size;
		s->sector = s->facts.sector ? s->facts.sector : 512;
	} else {
		s->sector = 512;
		prov_lx_note(ctx, 0, "the size of %s is not known here: START and END stand for the "
			     "sectors computed at run time", p->target.device);
	}
}

/* The driver's fit (driver.h): prov_gpt_layout's sectors as byte extents. */
static int lx_fit(const struct plan_layout *l, uint64_t total, uint32_t sector,
		  struct prov_extent *out, struct strbuf *why)
{
	struct gpt_part *g = xcalloc(l->nparts ? l->nparts : 1, sizeof(*g));
	int rc = prov_gpt_layout(l, total, sector, g, why);
	for (size_t k = 0; k < l->nparts && rc == 0; k++) {
		out[k].start = g[k].first * sector;
		out[k].bytes = (g[k].last - g[k].first + 1) * sector;
	}
	free(g);
	return rc;
}

static int lx_prepare(struct provision_ctx *ctx)
{
	const struct plan *p = ctx->plan;
	struct lx *s = xcalloc(1, sizeof(*s));
	s->dry = plat_spawner_dry_run(ctx->sp);
	s->is_image = p->target.kind == TARGET_IMAGE;
	s->dio = -1;
	s->root = ctx->sysroot ? ctx->sysroot : "";
	int rc = 0;
	if (s->root[0] && !(ctx->sp && ctx->sp->fake)) {
		/* A recorded machine's device names must never reach a real command. */
		sb_adds(ctx->err, "facts of a recorded machine need a spawner that runs nothing");
		rc = -EINVAL;
	} else if (!s->dry && !s->root[0]) {
		if (strcmp(plat_name(), "linux")) {
			sb_addf(ctx->err, "the Linux backend runs on Linux only, not on %s", plat_name());
			rc = -ENOTSUP;
		} else if (geteuid() != 0) {
			sb_addf(ctx->err, "provisioning %s targets needs root (loop devices, partitions, "
					  "mkfs, mount); run rig as root, or use a dirs target",
				s->is_image ? "image" : "disk");
			rc = -EPERM;
		} else {
			rc = prov_lx_check_tools(ctx, s);
		}
	}
	if (rc == 0 && !s->dry && !(s->run_abs = realpath(ctx->run_dir, NULL))) {
		sb_addf(ctx->err, "cannot resolve the run folder %s: %s", ctx->run_dir,
			strerror(errno));
		rc = -errno;
	} else if (rc == 0 && s->dry) {
		s->run_abs = xstrdup(ctx->run_dir ? ctx->run_dir : "RUN");
	}
	if (rc < 0) {
		free_state(s);
		return rc;
	}
	struct strbuf mr = STRBUF_INIT;
	sb_addf(&mr, "%s/mnt", s->run_abs);
	s->mnt_root = sb_detach(&mr);
	if (s->is_image) {
		s->bytes = ctx->image_size ? ctx->image_size : p->target.image_size;
		s->sector = 512; /* a loop device's default */
		s->image = s->dry ? xstrdup(p->target.image_path)
				  : prov_absolute_image(p->target.image_path, ctx->err);
		if (!s->image)
			rc = -ENOENT;
		else if (!s->dry && ctx->resume)
			rc = prov_engine_resume(ctx, s);
		if (rc == 0 && s->image && !s->dry && !(ctx->resume && ctx->resume->reused))
			rc = prov_lx_check_image(ctx, s);
	} else if (s->dry) {
		lx_dry_disk(ctx, s);
	} else {
		rc = ctx->resume ? prov_engine_resume(ctx, s) : 0;
		if (rc == 0)
			rc = prov_lx_check_disk(ctx, s);
		int held = -1;
		if (rc == 0)
			rc = prov_lx_hold_disk(ctx, s, p->target.device, &held); /* busy: said now */
		prov_lx_release_disk(held);
		if (rc == 0 && !ctx->yes)
			rc = prov_lx_typed_confirmation(ctx, s);
		if (rc == 0)
			prov_lx_remember_identity(s);
		if (rc == 0 && s->facts.serial &&
		    !prov_safety_confirm_matches(&(struct disk_facts){ .serial = s->facts.serial },
					    p->target.confirm))
			prov_lx_note(ctx, 1, "confirm names %s by its model; another disk of the same "
				     "model at this path would pass too: confirm: \"%s\" (its serial) "
				     "names this one disk", p->target.device, s->facts.serial);
		s->bytes = s->facts.size;
		s->sector = s->facts.sector ? s->facts.sector : 512;
	}
	if (rc == 0 && s->bytes && !(s->fit = prov_fit_layouts(ctx, s->bytes, s->sector)))
		rc = -ENOSPC;
	if (rc < 0) {
		free_state(s);
		return rc;
	}
	ctx->state = s;
	return 0;
}

/* --- the primitives (driver.h), in the engine's order --- */

static int lx_begin(struct provision_ctx *ctx, size_t li)
{
	struct lx *s = ctx->state;
	s->v = xcalloc(ctx->plan->layouts[li].nparts, sizeof(*s->v));
	s->nv = ctx->plan->layouts[li].nparts;
	return 0;
}

static int lx_create(struct provision_ctx *ctx)
{
	return prov_lx_create_image(ctx, ctx->state);
}

static int lx_attach_image(struct provision_ctx *ctx)
{
	return prov_lx_attach(ctx, ctx->state);
}

/* The disk again against the safety rules, by its resolved name. */
static int lx_open_disk(struct provision_ctx *ctx)
{
	struct lx *s = ctx->state;
	int rc = s->dry ? 0 : prov_lx_check_disk(ctx, s);
	if (rc == 0) {
		char *real = s->dry || s->root[0] ? NULL : realpath(ctx->plan->target.device, NULL);
		s->disk = real ? real : xstrdup(ctx->plan->target.device);
	}
	return rc;
}

/* The table, then every partition's node where the table puts it. */
static int lx_partition(struct provision_ctx *ctx, size_t li)
{
	struct lx *s = ctx->state;
	const struct plan_layout *l = &ctx->plan->layouts[li];
	int rc = partition(ctx, s, li);
	for (size_t k = 0; k < l->nparts && rc == 0; k++) {
		struct strbuf sb = STRBUF_INIT;
		prov_linux_part_path(&sb, s->disk, k + 1);
		s->v[k].part = sb_detach(&sb);
		sb_addf(&sb, "%s/%s", s->mnt_root, l->parts[k].name);
		s->v[k].mnt = sb_detach(&sb);
	}
	if (rc == 0) {
		prov_lx_note(ctx, 0, "wait for %s ... %s to appear (up to %d s)", s->v[0].part,
			s->v[l->nparts - 1].part, NODE_TIMEOUT_MS / 1000);
		for (size_t k = 0; k < l->nparts && rc == 0; k++)
			rc = wait_node(ctx, s, li, k);
	}
	return rc;
}

static int lx_format(struct provision_ctx *ctx, size_t li, size_t k)
{
	struct lx *s = ctx->state;
	struct strbuf mkfs = STRBUF_INIT;
	int rc = make_fs(ctx, s, &ctx->plan->layouts[li].parts[k], s->v[k].part, &mkfs);
	s->v[k].mkfs = sb_detach(&mkfs);
	return rc;
}

static int lx_mount(struct provision_ctx *ctx, size_t li, size_t k)
{
	struct lx *s = ctx->state;
	const struct plan_partition *pt = &ctx->plan->layouts[li].parts[k];
	int rc = 0;
	mkdir_mnt(ctx, s, &s->v[k], &rc);
	s->v[k].opts = prov_lx_mount_option(pt);
	return rc == 0 ? do_mount(ctx, pt->fs, &s->v[k]) : rc;
}

static int lx_conditions(struct provision_ctx *ctx, size_t li, size_t k)
{
	prov_lx_cond_note(ctx, &ctx->plan->layouts[li].parts[k]);
	return 0;
}

static void lx_volume(struct provision_ctx *ctx, size_t li, size_t k, struct volume *v)
{
	struct lx *s = ctx->state;
	prov_volume_set(v, ctx, li, k, s->v[k].mnt, s->v[k].part,
			s->fit ? s->fit[li][k].start : 0,
			s->fit ? s->fit[li][k].start + s->fit[li][k].bytes : 0);
	v->facts_json = volume_facts(ctx, s, li, k, s->v[k].mkfs);
}

static int lx_remount(struct provision_ctx *ctx, struct volume *vol)
{
	struct lx *s = ctx->state;
	for (size_t k = 0; s && k < s->nv; k++) {
		struct lvol *v = &s->v[k];
		if (!v->mnt || strcmp(v->mnt, vol->dir))
			continue;
		int rc = v->mounted ? do_umount(ctx, v) : 0;
		if (rc == 0)
			rc = do_mount(ctx, vol->fs, v);
		return rc;
	}
	sb_addf(ctx->err, "cannot remount %s: not mounted by rig", vol->dir);
	return -ENOENT;
}

static int has_partitions(const struct lx *s)
{
	return s->dry ? s->parts_added : prov_linux_partition_count("", prov_lx_base_name(s->disk)) > 0;
}

static size_t lx_volumes(const struct provision_ctx *ctx)
{
	return ((const struct lx *)ctx->state)->nv;
}

/* Snapshots, the mount, the mount point. */
static int lx_unmount(struct provision_ctx *ctx, size_t k)
{
	struct lx *s = ctx->state;
	struct lvol *v = &s->v[k];
	if (v->mounted)
		prov_lx_snapshots_teardown(ctx, s, v);
	if (v->mounted) {
		int rc = do_umount(ctx, v);
		if (rc < 0)
			return rc;
	}
	if (v->mnt_made && !v->mounted) {
		v->mnt_made = 0;
		prov_lx_note(ctx, 0, "rmdir %s", v->mnt);
		if (!s->dry && rmdir(v->mnt) < 0 && errno != ENOENT) {
			int rc = -errno;
			sb_addf(ctx->err, "cannot remove mount point %s: %s", v->mnt, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Forget the volumes; RUN/mnt goes when nothing is mounted below it. */
static void lx_end_volumes(struct provision_ctx *ctx)
{
	struct lx *s = ctx->state;
	int all_unmounted = 1;
	for (size_t k = 0; k < s->nv; k++) {
		all_unmounted = all_unmounted && !s->v[k].mounted;
		free(s->v[k].part);
		free(s->v[k].mnt);
		free(s->v[k].mkfs);
		prov_snap_list_release(&s->v[k].snaps);
	}
	if (s->mnt_root_made && all_unmounted) {
		if (!s->dry)
			rmdir(s->mnt_root); /* fails harmlessly when not empty */
		s->mnt_root_made = 0;
	}
	free(s->v);
	s->v = NULL;
	s->nv = 0;
}

/* The kernel's partitions of the image's loop device, then the loop device. */
static int lx_detach(struct provision_ctx *ctx)
{
	struct lx *s = ctx->state;
	int rc = 0;
	struct strbuf acc = STRBUF_INIT;
	if (s->attached && has_partitions(s)) {
		const char *argv[] = { "partx", "--delete", s->disk, NULL };
		prov_teardown_error(ctx, &acc, &rc,
				    prov_journal_run(ctx, "forget-partitions", s->disk, argv, NULL));
	}
	if (s->attached && prov_lx_loop_is_ours(ctx, s)) {
		const char *argv[] = { "losetup", "--detach", s->disk, NULL };
		int r = prov_journal_run(ctx, "detach", s->image, argv, NULL);
		prov_teardown_error(ctx, &acc, &rc, r);
		if (r == 0)
			s->attached = 0;
	} else if (s->attached) {
		prov_teardown_error(ctx, &acc, &rc, -EIO);
		s->attached = 0; /* not ours any more: never touch it again */
	}
	s->parts_added = 0;
	if (!s->attached) {
		free(s->disk);
		s->disk = NULL;
	}
	return prov_teardown_done(ctx, &acc, rc);
}

static int lx_delete_image(struct provision_ctx *ctx)
{
	struct lx *s = ctx->state;
	if (!s->image_made || s->attached)
		return 0;
	s->image_made = 0;
	return prov_image_end(ctx, s->image, s->image, ctx->plan->target.keep, "");
}

/* A disk keeps its last partition table, as the kernel now sees it. */
static int lx_leave_disk(struct provision_ctx *ctx)
{
	struct lx *s = ctx->state;
	s->parts_added = 0;
	free(s->disk);
	s->disk = NULL;
	return 0;
}

static int lx_left(const struct provision_ctx *ctx)
{
	const struct lx *s = ctx->state;
	return s->nv || s->attached || s->image_made;
}

/* What a run locks (prov_target_keys): the image file, or the disk. */
static int lx_keys(const struct plan *p, int create, struct target_keys *keys, struct strbuf *err)
{
	(void)create;
	const struct plan_target *t = &p->target;
	if (t->kind == TARGET_IMAGE) {
		char *abs = prov_absolute_image(t->image_path, err);
		if (!abs)
			return -ENOENT;
		prov_target_keys_image(keys, abs, NULL);
		free(abs);
		return 0;
	}
	struct disk_facts f;
	struct strbuf what = STRBUF_INIT;
	prov_linux_disk_facts("", t->device, &f);
	sb_addf(&what, "disk %s", t->device);
	prov_linux_disk_keys("", &f, what.buf, keys);
	sb_release(&what);
	prov_disk_facts_release(&f);
	return 0;
}

const struct backend_ops prov_linux_ops = {
	.name = "linux",
	.keys = lx_keys,
	.prepare = lx_prepare,
	.provision = prov_engine_provision,
	.remount = lx_remount,
	.snapshot_take = prov_lx_snapshot_take,
	.snapshot_drop = prov_lx_snapshot_drop,
	.teardown = prov_engine_teardown,
	.finish = prov_engine_finish,
};

const struct prov_prims prov_linux_prims = {
	.fit = lx_fit,
	.begin = lx_begin,
	.create_image = lx_create,
	.attach = lx_attach_image,
	.open_disk = lx_open_disk,
	.partition = lx_partition,
	.format = lx_format,
	.mount = lx_mount,
	.conditions = lx_conditions,
	.volume = lx_volume,
	.volumes = lx_volumes,
	.unmount = lx_unmount,
	.end_volumes = lx_end_volumes,
	.detach = lx_detach,
	.delete_image = lx_delete_image,
	.release_disk = lx_leave_disk,
	.resume = &prov_lx_resume_prims,
	.left = lx_left,
	.free_state = free_state,
};
