/*
 * The Linux backend's helpers (see linux_backend.h and linux.c for the
 * whole): running commands, finding the tools, the image file and its loop
 * device, and the disk target's safety check and typed confirmation.
 *
 * Commands run through the spawner in their own process group (a cancel
 * flag that is never raised), so a Ctrl-C typed at the terminal reaches
 * rig alone and never kills an `umount` half-way through a teardown.
 * Errors quote the first lines of a command's output; commands.log has all.
 *
 * Images rig made carry a mark: the GPT disk GUID starts with 72696721
 * ("rig!"). An existing file without it is refused unless --force; a file
 * attached to a loop device, or anything but a regular file, always.
 * Rejected: an extended attribute as the mark (not on every file system,
 * and a different call on macOS).
 */
#include <errno.h>
#include <fcntl.h>
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
#include "provision/journal.h"
#include "provision/linux/linux_backend.h"

/* The shared command helpers (command.c) under the names linux.c uses. */
void prov_lx_note(struct provision_ctx *ctx, int warning, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	prov_vnote(ctx, warning, fmt, ap);
	va_end(ap);
}

int prov_lx_cancelled(struct provision_ctx *ctx)
{
	return prov_cancelled(ctx);
}

int prov_lx_run(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *out)
{
	return prov_run(ctx, argv, out);
}

void prov_lx_sleep_ms(unsigned ms)
{
	prov_sleep_ms(ms);
}

const char *prov_lx_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* --- tools --- */

const char *prov_lx_mkfs_tool(const char *fs)
{
	if (!strcmp(fs, "ext4"))
		return "mkfs.ext4";
	if (!strcmp(fs, "xfs"))
		return "mkfs.xfs";
	if (!strcmp(fs, "btrfs"))
		return "mkfs.btrfs";
	return NULL;
}

int prov_lx_check_tools(struct provision_ctx *ctx, const struct lx *s)
{
	const struct plan *p = ctx->plan;
	const char *tools[16];
	size_t n = 0;
	tools[n++] = "sgdisk";
	tools[n++] = "partx";
	tools[n++] = "mount";
	tools[n++] = "umount";
	if (s->is_image)
		tools[n++] = "losetup";
	for (size_t li = 0; li < p->nlayouts; li++) {
		for (size_t i = 0; i < p->layouts[li].nparts; i++) {
			const char *t = prov_lx_mkfs_tool(p->layouts[li].parts[i].fs);
			if (!t) {
				sb_addf(ctx->err, "the Linux backend cannot make file system '%s'",
					p->layouts[li].parts[i].fs);
				return -EINVAL;
			}
			size_t k;
			for (k = 0; k < n && strcmp(tools[k], t); k++)
				;
			if (k == n && n < sizeof(tools) / sizeof(tools[0]))
				tools[n++] = t;
		}
	}
	struct strbuf missing = STRBUF_INIT;
	for (size_t k = 0; k < n; k++)
		if (!prov_in_path(tools[k]))
			sb_addf(&missing, "%s%s", missing.len ? ", " : "", tools[k]);
	if (missing.len) {
		sb_addf(ctx->err, "missing tools: %s (Debian packages gdisk, util-linux, "
				  "e2fsprogs, xfsprogs, btrfs-progs; ./setup installs them)",
			missing.buf);
		sb_release(&missing);
		return -ENOENT;
	}
	sb_release(&missing);
	return 0;
}

/* --- images --- */

/* Whether the file holds a GPT whose disk GUID carries rig's mark. */
static int image_is_rigs(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int yes = 0;
	static const unsigned sectors[] = { 512, 4096 };
	for (size_t i = 0; i < 2 && !yes; i++) {
		unsigned char h[72];
		if (pread(fd, h, sizeof(h), (off_t)sectors[i]) != (ssize_t)sizeof(h))
			continue;
		uint32_t g = (uint32_t)h[56] | (uint32_t)h[57] << 8 | (uint32_t)h[58] << 16 |
			     (uint32_t)h[59] << 24;
		yes = !memcmp(h, "EFI PART", 8) && g == GUID_MARK;
	}
	close(fd);
	return yes;
}

/*
 * The image is attached to /dev/LOOP by someone else; say so, and what to
 * do. No rig run is using it: this run holds the image's lock, which a run
 * on the image, or on its loop device as a disk, also takes. So detaching
 * is suggested only when nothing is mounted from it and nothing holds it
 * exclusively; otherwise what uses it is named (a killed rig run leaves its
 * image attached and mounted under its folder; its `rig resume` cleans up).
 */
static void attached_elsewhere(struct provision_ctx *ctx, const struct lx *s, const char *loop)
{
	struct strbuf dev = STRBUF_INIT;
	sb_addf(&dev, "/dev/%s", loop);
	struct disk_facts f;
	prov_linux_disk_facts("", dev.buf, &f);
	int fd = f.mounted || f.in_use ? -EBUSY : plat_open_exclusive(dev.buf);
	if (fd >= 0) {
		close(fd);
		sb_addf(ctx->err, "image %s is attached to %s, which no rig run uses and nothing "
				  "is mounted from; detach it (losetup -d %s) if nothing else uses it, "
				  "or `rig resume` the run that left it", s->image, dev.buf, dev.buf);
	} else {
		sb_addf(ctx->err, "image %s is attached to %s and in use: %s; rig leaves it "
				  "alone (a killed rig run leaves its image so; `rig resume` of that run "
				  "cleans up)", s->image, dev.buf,
			f.mounted ? f.mounted : f.in_use ? f.in_use
			: "another program holds it exclusively");
	}
	prov_disk_facts_release(&f);
	sb_release(&dev);
}

/* Before anything changes: may the image path be used? */
int prov_lx_check_image(struct provision_ctx *ctx, struct lx *s)
{
	struct stat st;
	if (lstat(s->image, &st) < 0) {
		if (errno != ENOENT) {
			sb_addf(ctx->err, "cannot use image %s: %s", s->image, strerror(errno));
			return -errno;
		}
		st.st_blocks = 0;
	} else {
		if (!S_ISREG(st.st_mode)) {
			sb_addf(ctx->err, "image %s exists and is not a regular file; rig never "
					  "overwrites it", s->image);
			return -EEXIST;
		}
		char *loop = prov_linux_loop_of("", s->image);
		if (loop) {
			attached_elsewhere(ctx, s, loop);
			free(loop);
			return -EBUSY;
		}
		if (!image_is_rigs(s->image)) {
			if (!ctx->force) {
				sb_addf(ctx->err, "image %s exists and was not made by rig; pass "
						  "--force to overwrite it, or choose another path",
					s->image);
				return -EEXIST;
			}
			prov_lx_note(ctx, 1, "overwriting %s, which rig did not make (--force)", s->image);
		}
	}
	struct strbuf dir = STRBUF_INIT;
	sb_add(&dir, s->image, (size_t)(strrchr(s->image, '/') - s->image));
	struct statvfs sv;
	if (statvfs(dir.len ? dir.buf : "/", &sv) == 0) {
		uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize + (uint64_t)st.st_blocks * 512;
		if (avail < s->bytes)
			prov_lx_note(ctx, 1, "image %s is sparse, but its file system has only %llu MiB free "
				     "for its %llu MiB: a run that writes more fails with I/O errors",
			     s->image, (unsigned long long)(avail >> 20),
			     (unsigned long long)(s->bytes >> 20));
	}
	sb_release(&dir);
	return 0;
}

int prov_lx_create_image(struct provision_ctx *ctx, struct lx *s)
{
	prov_lx_note(ctx, 0, "create the sparse file %s of %llu bytes", s->image,
	     (unsigned long long)s->bytes);
	if (s->dry) {
		s->image_made = 1;
		return 0;
	}
	struct stat st;
	if (lstat(s->image, &st) == 0) {
		/* Checked in prepare: ours (or --force), regular, not attached. */
		if (!S_ISREG(st.st_mode) || unlink(s->image) < 0) {
			sb_addf(ctx->err, "cannot replace image %s: %s", s->image,
				S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file");
			return -EEXIST;
		}
	}
	/* Journaled before the file exists: a kill right after creating it
	 * leaves a row that says whose it is. */
	int64_t j = prov_journal_begin(ctx, "create-image", s->image, NULL, NULL);
	int rc = 0;
	int fd = open(s->image, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		sb_addf(ctx->err, "cannot create image %s: %s", s->image, strerror(errno));
		rc = -errno;
	} else {
		s->image_made = 1;
		if (ftruncate(fd, (off_t)s->bytes) < 0) {
			rc = -errno;
			sb_addf(ctx->err, "cannot size image %s: %s", s->image, strerror(-rc));
		}
		close(fd);
	}
	prov_journal_end(ctx, j, rc);
	return rc;
}

/* Does the loop device still read our image? Checked before anything is
 * written to it or detached. */
int prov_lx_loop_is_ours(struct provision_ctx *ctx, const struct lx *s)
{
	if (s->dry)
		return 1;
	char *b = prov_linux_attr("", "/sys/block/%s/loop/backing_file", prov_lx_base_name(s->disk));
	size_t n = strlen(s->image);
	int ok = b && !strncmp(b, s->image, n) && (!b[n] || !strcmp(b + n, " (deleted)"));
	if (!ok)
		sb_addf(ctx->err, "%s is not attached to %s (its backing file is %s); "
				  "rig leaves it alone", s->disk, s->image, b ? b : "none");
	free(b);
	return ok;
}

int prov_lx_attach(struct provision_ctx *ctx, struct lx *s)
{
	const char *argv[] = { "losetup", "--find", "--show", "--direct-io=on", s->image, NULL };
	struct spawn_result r;
	int rc = prov_journal_run(ctx, "attach", s->image, argv, &r);
	if (rc < 0)
		return rc;
	const char *dev = r.stdout_text ? r.stdout_text : "";
	size_t n = strcspn(dev, "\n");
	if (s->dry) {
		s->disk = xstrdup("/dev/loopN");
	} else if (n > 5 && !strncmp(dev, "/dev/", 5)) {
		s->disk = xstrndup(dev, n);
	} else {
		sb_addf(ctx->err, "losetup printed no device name for %s: %s", s->image, r.output);
		plat_spawn_result_release(&r);
		return -EIO;
	}
	plat_spawn_result_release(&r);
	s->attached = 1;
	if (!prov_lx_loop_is_ours(ctx, s))
		return -EIO;
	s->dio = -1;
	if (!s->dry) {
		char *d = prov_linux_attr("", "/sys/block/%s/loop/dio", prov_lx_base_name(s->disk));
		s->dio = d ? atoi(d) : -1;
		free(d);
		if (s->dio != 1)
			prov_lx_note(ctx, 1, "direct I/O is off on %s (the file system of %s may not support "
				     "it): the image is cached twice and reads may be served from memory",
			     s->disk, s->image);
	}
	return 0;
}

/* --- disks --- */

int prov_lx_check_disk(struct provision_ctx *ctx, struct lx *s)
{
	const struct plan_target *t = &ctx->plan->target;
	prov_disk_facts_release(&s->facts);
	prov_linux_disk_facts(s->root, t->device, &s->facts);
	const struct safety_rule *rule = NULL;
	struct strbuf fact = STRBUF_INIT;
	int rc = prov_safety_check(&s->facts, t->confirm, ctx->allow, &rule, &fact);
	if (rc < 0)
		sb_addf(ctx->err, "refusing to erase %s: %s (rule %s: %s)", t->device, fact.buf,
			rule->name, rule->what);
	sb_release(&fact);
	return rc;
}

int prov_lx_hold_disk(struct provision_ctx *ctx, const struct lx *s, const char *dev, int *fd)
{
	*fd = -1;
	if (s->dry || s->root[0])
		return 0;
	int rc = plat_open_exclusive(dev);
	if (rc >= 0) {
		*fd = rc;
		return 0;
	}
	if (rc == -EBUSY)
		sb_addf(ctx->err, "refusing to erase %s: it is busy: another program holds it "
				  "exclusively (a mounted file system, device mapper or RAID, or a tool "
				  "such as mkfs or a partitioner); rig leaves it alone", dev);
	else
		sb_addf(ctx->err, "cannot open %s exclusively: %s", dev, strerror(-rc));
	return rc;
}

void prov_lx_release_disk(int fd)
{
	if (fd >= 0)
		close(fd);
}

void prov_lx_remember_identity(struct lx *s)
{
	prov_disk_identity_take(&s->id, &s->facts);
}

/* Is the disk target still the disk that was confirmed? */
static int same_disk(struct provision_ctx *ctx, struct lx *s, const char *const *argv)
{
	const char *dev = ctx->plan->target.device;
	struct disk_facts now;
	prov_linux_disk_facts(s->root, dev, &now);
	int ok = prov_same_disk(ctx, &s->id, &now, dev, argv);
	prov_disk_facts_release(&now);
	return ok;
}

int prov_lx_run_destructive(struct provision_ctx *ctx, struct lx *s, const char *action,
		       const char *object, const char *const *argv)
{
	if (!s->dry) {
		if (s->is_image ? !prov_lx_loop_is_ours(ctx, s) : !same_disk(ctx, s, argv))
			return -EPERM;
	}
	struct strbuf seen = STRBUF_INIT;
	if (s->is_image)
		sb_addf(&seen, "%s reads %s", s->disk, s->image);
	else
		prov_identity_text(&seen, &s->id);
	int64_t j = prov_journal_begin(ctx, action, object, argv, seen.buf);
	sb_release(&seen);
	int rc = prov_lx_run(ctx, argv, NULL);
	prov_journal_end(ctx, j, rc);
	return rc;
}

int prov_lx_typed_confirmation(struct provision_ctx *ctx, struct lx *s)
{
	return prov_typed_confirmation(ctx, &s->facts);
}
