/*
 * The Linux backend: image and disk targets. For each layout, from scratch:
 *
 *   image  create the file (sparse), `losetup --find --show --direct-io=on`
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
 * Images rig made carry a marker: the GPT disk GUID starts with 72696721
 * ("rig!"). An existing file without it is refused unless --force; a file
 * attached to a loop device or anything but a regular file is refused
 * always. Rejected: an extended attribute as the marker (not on every file
 * system, and a different call on macOS).
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

#include "../platform/platform.h"
#include "../rig/util/strbuf.h"
#include "../rig/util/xalloc.h"
#include "linux.h"
#include "provision.h"

#define GUID_MARK 0x72696721u     /* "rig!": the first field of rig's disk GUIDs */
#define NODE_TIMEOUT_MS 10000     /* partition nodes appear within milliseconds */
#define UMOUNT_TRIES 10           /* 100 ms apart: a busy file system gets 1 s */
#define ERR_LINES 12              /* command output kept in an error message */

struct lvol {
	char *part;        /* /dev/loop3p1 */
	char *mnt;         /* RUN/mnt/NAME */
	int mnt_made;
	int mounted;
};

struct lx {
	int dry;
	int is_image;
	char *run_abs;              /* the run folder, absolute ("RUN" in dry run) */
	char *mnt_root;             /* RUN/mnt */
	int mnt_root_made;
	char *image;                /* absolute image path */
	uint64_t bytes;             /* the disk's size; 0 unknown (dry run) */
	uint32_t sector;
	struct gpt_part **geo;      /* per layout; NULL when the size is unknown */
	struct disk_facts facts;    /* disk targets, as last checked */
	/* the provisioned layout */
	char *disk;                 /* /dev/loopN or the resolved disk */
	int image_made;
	int attached;
	int parts_added;
	int dio;                    /* loop direct I/O as applied: 1, 0, -1 unknown */
	struct lvol *v;
	size_t nv;
};

/* Never raised: commands get their own process group (spawn_opts) but are
 * never stopped half-way. */
static volatile sig_atomic_t never_cancel;

static void note(struct provision_ctx *ctx, int warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct provision_ctx *ctx, int warning, const char *fmt, ...)
{
	if (!ctx->note)
		return;
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	ctx->note(ctx->note_opaque, warning, sb.buf);
	sb_release(&sb);
}

static int cancelled(struct provision_ctx *ctx)
{
	if (ctx->cancel && *ctx->cancel) {
		sb_adds(ctx->err, "interrupted");
		return 1;
	}
	return 0;
}

/* The first lines of a command's output, for an error message. */
static void add_output_head(struct strbuf *sb, const char *out)
{
	const char *p = out;
	int lines = 0;
	while (*p && lines < ERR_LINES) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		sb_addf(sb, "\n  %.*s", (int)n, p);
		lines++;
		p = nl ? nl + 1 : p + n;
	}
	if (*p)
		sb_adds(sb, "\n  ... (the whole output is in commands.log)");
}

/*
 * Run a command; 0 only when it exited with status 0. On failure ctx->err
 * says which command, its status and the start of its output. out, when
 * not NULL, receives the result (the caller releases it), with stdout
 * also apart (losetup's warnings go to stderr, the device name to stdout).
 */
static int run(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *out)
{
	struct spawn_opts o = { .split = 1, .cancel = &never_cancel };
	struct spawn_result r;
	struct strbuf e = STRBUF_INIT;
	int rc = spawn_run_opts(ctx->sp, argv, NULL, &o, &r, &e);
	if (rc < 0) {
		sb_adds(ctx->err, e.buf);
		sb_release(&e);
		return rc;
	}
	sb_release(&e);
	if (!r.exited || r.status != 0) {
		struct strbuf text = STRBUF_INIT;
		spawn_argv_text(&text, argv);
		if (r.exited)
			sb_addf(ctx->err, "%s failed with exit status %d", text.buf, r.status);
		else
			sb_addf(ctx->err, "%s was killed by signal %d", text.buf, r.status);
		if (r.output_len) {
			sb_addch(ctx->err, ':');
			add_output_head(ctx->err, r.output);
		}
		sb_release(&text);
		rc = -EIO;
	}
	if (out && rc == 0)
		*out = r;
	else
		spawn_result_release(&r);
	return rc;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* --- tools --- */

static int in_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	struct strbuf sb = STRBUF_INIT;
	int found = 0;
	for (const char *p = path; !found;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		sb_reset(&sb);
		sb_addf(&sb, "%.*s/%s", (int)n, n ? p : ".", name);
		found = access(sb.buf, X_OK) == 0;
		if (!c)
			break;
		p = c + 1;
	}
	sb_release(&sb);
	return found;
}

static const char *mkfs_tool(const char *fs)
{
	if (!strcmp(fs, "ext4"))
		return "mkfs.ext4";
	if (!strcmp(fs, "xfs"))
		return "mkfs.xfs";
	if (!strcmp(fs, "btrfs"))
		return "mkfs.btrfs";
	return NULL;
}

static int check_tools(struct provision_ctx *ctx, const struct lx *s)
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
			const char *t = mkfs_tool(p->layouts[li].parts[i].fs);
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
		if (!in_path(tools[k]))
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

/* An absolute path for the image: its folder resolved, its name kept. */
static char *absolute_image(const char *path, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	if (!slash)
		sb_adds(&dir, ".");
	else if (slash == path)
		sb_adds(&dir, "/");
	else
		sb_add(&dir, path, (size_t)(slash - path));
	char *real = realpath(dir.buf, NULL);
	if (!real) {
		sb_addf(err, "cannot create image %s: folder %s: %s", path, dir.buf, strerror(errno));
		sb_release(&dir);
		return NULL;
	}
	sb_release(&dir);
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", strcmp(real, "/") ? real : "", base_name(path));
	free(real);
	return sb_detach(&sb);
}

/* Before anything changes: may the image path be used? */
static int check_image(struct provision_ctx *ctx, struct lx *s)
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
		char *loop = linux_loop_of("", s->image);
		if (loop) {
			sb_addf(ctx->err, "image %s is attached to /dev/%s; detach it first "
					  "(losetup -d /dev/%s) if nothing uses it", s->image, loop, loop);
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
			note(ctx, 1, "overwriting %s, which rig did not make (--force)", s->image);
		}
	}
	struct strbuf dir = STRBUF_INIT;
	sb_add(&dir, s->image, (size_t)(strrchr(s->image, '/') - s->image));
	struct statvfs sv;
	if (statvfs(dir.len ? dir.buf : "/", &sv) == 0) {
		uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize + (uint64_t)st.st_blocks * 512;
		if (avail < s->bytes)
			note(ctx, 1, "image %s is sparse, but its file system has only %llu MiB free "
				     "for its %llu MiB: a run that writes more fails with I/O errors",
			     s->image, (unsigned long long)(avail >> 20),
			     (unsigned long long)(s->bytes >> 20));
	}
	sb_release(&dir);
	return 0;
}

static int create_image(struct provision_ctx *ctx, struct lx *s)
{
	note(ctx, 0, "create the sparse file %s of %llu bytes", s->image,
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
	int fd = open(s->image, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		sb_addf(ctx->err, "cannot create image %s: %s", s->image, strerror(errno));
		return -errno;
	}
	s->image_made = 1;
	if (ftruncate(fd, (off_t)s->bytes) < 0) {
		int e = errno;
		close(fd);
		sb_addf(ctx->err, "cannot size image %s: %s", s->image, strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

/* Does the loop device still read our image? Checked before anything is
 * written to it or detached. */
static int loop_is_ours(struct provision_ctx *ctx, const struct lx *s)
{
	if (s->dry)
		return 1;
	char *b = linux_attr("", "/sys/block/%s/loop/backing_file", base_name(s->disk));
	size_t n = strlen(s->image);
	int ok = b && !strncmp(b, s->image, n) && (!b[n] || !strcmp(b + n, " (deleted)"));
	if (!ok)
		sb_addf(ctx->err, "%s is not attached to %s (its backing file is %s); "
				  "rig leaves it alone", s->disk, s->image, b ? b : "none");
	free(b);
	return ok;
}

static int attach(struct provision_ctx *ctx, struct lx *s)
{
	const char *argv[] = { "losetup", "--find", "--show", "--direct-io=on", s->image, NULL };
	struct spawn_result r;
	int rc = run(ctx, argv, &r);
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
		spawn_result_release(&r);
		return -EIO;
	}
	spawn_result_release(&r);
	s->attached = 1;
	if (!loop_is_ours(ctx, s))
		return -EIO;
	s->dio = -1;
	if (!s->dry) {
		char *d = linux_attr("", "/sys/block/%s/loop/dio", base_name(s->disk));
		s->dio = d ? atoi(d) : -1;
		free(d);
		if (s->dio != 1)
			note(ctx, 1, "direct I/O is off on %s (the file system of %s may not support "
				     "it): the image is cached twice and reads may be served from memory",
			     s->disk, s->image);
	}
	return 0;
}

/* --- disks --- */

static int check_disk(struct provision_ctx *ctx, struct lx *s)
{
	const struct plan_target *t = &ctx->plan->target;
	disk_facts_release(&s->facts);
	linux_disk_facts("", t->device, &s->facts);
	const struct safety_rule *rule = NULL;
	struct strbuf fact = STRBUF_INIT;
	int rc = safety_check(&s->facts, t->confirm, ctx->allow, &rule, &fact);
	if (rc < 0)
		sb_addf(ctx->err, "refusing to erase %s: %s (rule %s: %s)", t->device, fact.buf,
			rule->name, rule->what);
	sb_release(&fact);
	return rc;
}

static int typed_confirmation(struct provision_ctx *ctx, struct lx *s)
{
	const struct disk_facts *f = &s->facts;
	if (!isatty(STDIN_FILENO)) {
		sb_addf(ctx->err, "erasing %s needs a typed confirmation: run rig in a terminal, "
				  "or pass --yes", f->path);
		return -EPERM;
	}
	fprintf(stderr, "rig: this ERASES everything on %s (%s): %llu bytes, model %s, serial %s\n"
			"rig: type its model or serial to go on: ",
		f->path, f->name, (unsigned long long)f->size, f->model ? f->model : "unknown",
		f->serial ? f->serial : "unknown");
	fflush(stderr);
	char line[512];
	if (!fgets(line, sizeof(line), stdin) || !safety_confirm_matches(f, line)) {
		sb_addf(ctx->err, "the typed confirmation does not match %s; nothing was changed",
			f->path);
		return -EPERM;
	}
	return 0;
}

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

static int partition(struct provision_ctx *ctx, struct lx *s, size_t li)
{
	const struct plan_layout *l = &ctx->plan->layouts[li];
	if (!s->is_image) {
		const char *zap[] = { "sgdisk", "--zap-all", s->disk, NULL };
		int rc = run(ctx, zap, NULL);
		if (rc < 0 || cancelled(ctx))
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
		if (s->geo)
			sb_addf(&args[a], "--new=%zu:%llu:%llu", i + 1,
				(unsigned long long)s->geo[li][i].first,
				(unsigned long long)s->geo[li][i].last);
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
	int rc = run(ctx, argv, NULL);
	for (size_t i = 0; i < a; i++)
		sb_release(&args[i]);
	free(args);
	free(argv);
	if (rc < 0 || cancelled(ctx))
		return rc < 0 ? rc : -EINTR;
	const char *px[] = { "partx", "--update", s->disk, NULL };
	s->parts_added = 1;
	rc = run(ctx, px, NULL);
	if (rc < 0 || cancelled(ctx))
		return rc < 0 ? rc : -EINTR;
	return 0;
}

/* Wait for partition node k and check that the kernel put it where the
 * table says. */
static int wait_node(struct provision_ctx *ctx, struct lx *s, size_t li, size_t k)
{
	const char *part = s->v[k].part;
	if (s->dry)
		return 0;
	struct stat st;
	int waited = 0;
	while (stat(part, &st) < 0 || !S_ISBLK(st.st_mode)) {
		if (waited >= NODE_TIMEOUT_MS || cancelled(ctx)) {
			if (waited >= NODE_TIMEOUT_MS)
				sb_addf(ctx->err, "partition %s did not appear within %d s after "
						  "partx --update %s", part, NODE_TIMEOUT_MS / 1000,
					s->disk);
			return waited >= NODE_TIMEOUT_MS ? -ETIMEDOUT : -EINTR;
		}
		sleep_ms(20);
		waited += 20;
	}
	if (!s->geo)
		return 0;
	char *start = linux_attr("", "/sys/block/%s/%s/start", base_name(s->disk), base_name(part));
	char *size = linux_attr("", "/sys/block/%s/%s/size", base_name(s->disk), base_name(part));
	uint64_t per = s->sector / 512; /* sysfs counts 512-byte units */
	const struct gpt_part *g = &s->geo[li][k];
	int ok = start && size && strtoull(start, NULL, 10) == g->first * per &&
		 strtoull(size, NULL, 10) == (g->last - g->first + 1) * per;
	if (!ok)
		sb_addf(ctx->err, "the kernel sees %s at start %s, size %s (512-byte units); the "
				  "table rig wrote says %llu, %llu", part, start ? start : "?",
			size ? size : "?", (unsigned long long)(g->first * per),
			(unsigned long long)((g->last - g->first + 1) * per));
	free(start);
	free(size);
	return ok ? 0 : -EIO;
}

/* --- file systems and mounts --- */

static int make_fs(struct provision_ctx *ctx, const struct plan_partition *pt, const char *part,
		   struct strbuf *cmd)
{
	const char *argv[12];
	size_t n = 0;
	argv[n++] = mkfs_tool(pt->fs);
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
	spawn_argv_text(cmd, argv);
	return run(ctx, argv, NULL);
}

static int do_mount(struct provision_ctx *ctx, const char *fs, struct lvol *v)
{
	const char *argv[] = { "mount", "-t", fs, v->part, v->mnt, NULL };
	int rc = run(ctx, argv, NULL);
	if (rc == 0)
		v->mounted = 1;
	return rc;
}

/* Unmount, retrying a busy file system; at last detach it lazily, so that
 * nothing stays visible (the kernel frees it when its last user goes). */
static int do_umount(struct provision_ctx *ctx, struct lvol *v)
{
	const char *argv[] = { "umount", v->mnt, NULL };
	struct strbuf first = STRBUF_INIT;
	for (int i = 0; i < (ctx->sp->dry_run ? 1 : UMOUNT_TRIES); i++) {
		struct strbuf e = STRBUF_INIT;
		struct provision_ctx quiet = *ctx;
		quiet.err = &e;
		int rc = run(&quiet, argv, NULL);
		if (rc == 0 || (!ctx->sp->dry_run && !linux_is_mounted("", v->mnt))) {
			sb_release(&e);
			sb_release(&first);
			v->mounted = 0;
			return 0;
		}
		if (!first.len)
			sb_adds(&first, e.buf);
		sb_release(&e);
		sleep_ms(100);
	}
	const char *lazy[] = { "umount", "--lazy", v->mnt, NULL };
	int rc = run(ctx, lazy, NULL);
	if (rc == 0) {
		v->mounted = 0;
		note(ctx, 1, "%s stayed busy; it was detached lazily and is freed when its last "
			     "user exits (%s)", v->mnt, first.buf);
	} else {
		sb_addf(ctx->err, "; first attempt: %s", first.buf);
	}
	sb_release(&first);
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
	note(ctx, 0, "mkdir %s", v->mnt);
	if (!s->dry && mkdir(v->mnt, 0755) < 0) {
		sb_addf(ctx->err, "cannot create mount point %s: %s", v->mnt, strerror(errno));
		*rc = -errno;
		return;
	}
	v->mnt_made = 1;
}

/* The facts recorded with a volume (docs/architecture.md lists them). */
static char *volume_facts(struct provision_ctx *ctx, struct lx *s, size_t li, size_t k,
			  const char *mkfs)
{
	const struct plan_partition *pt = &ctx->plan->layouts[li].parts[k];
	const struct lvol *v = &s->v[k];
	struct strbuf j = STRBUF_INIT;
	sb_adds(&j, "{\"target\":");
	sb_add_json(&j, s->is_image ? "image" : "disk");
	sb_adds(&j, ",\"disk\":");
	sb_add_json(&j, s->disk);
	sb_adds(&j, ",\"partition\":");
	sb_add_json(&j, v->part);
	sb_addf(&j, ",\"number\":%zu,\"gpt_name\":", k + 1);
	sb_add_json(&j, pt->name);
	sb_addf(&j, ",\"sector_size\":%u", s->sector);
	if (s->geo)
		sb_addf(&j, ",\"first_sector\":%llu,\"last_sector\":%llu",
			(unsigned long long)s->geo[li][k].first, (unsigned long long)s->geo[li][k].last);
	if (s->is_image) {
		sb_adds(&j, ",\"image\":");
		sb_add_json(&j, s->image);
		sb_addf(&j, ",\"loop_direct_io\":%s",
			s->dio == 1 ? "true" : s->dio == 0 ? "false" : "null");
	}
	const char *disk = base_name(s->disk);
	char *rot = s->dry ? NULL : linux_attr("", "/sys/block/%s/queue/rotational", disk);
	sb_addf(&j, ",\"rotational\":%s", !rot ? "null" : !strcmp(rot, "1") ? "true" : "false");
	free(rot);
	if (!s->is_image) {
		sb_adds(&j, ",\"model\":");
		if (s->facts.model)
			sb_add_json(&j, s->facts.model);
		else
			sb_adds(&j, "null");
		sb_adds(&j, ",\"serial\":");
		if (s->facts.serial)
			sb_add_json(&j, s->facts.serial);
		else
			sb_adds(&j, "null");
	}
	sb_adds(&j, ",\"mkfs\":");
	sb_add_json(&j, mkfs);
	char *opts = s->dry ? NULL : linux_mount_options("", v->mnt);
	if (opts) {
		char *semi = strchr(opts, ';');
		if (semi)
			*semi = '\0';
		sb_adds(&j, ",\"mount_options\":");
		sb_add_json(&j, opts);
		sb_adds(&j, ",\"super_options\":");
		sb_add_json(&j, semi ? semi + 1 : "");
		free(opts);
	}
	struct statvfs sv;
	if (!s->dry && statvfs(v->mnt, &sv) == 0)
		sb_addf(&j, ",\"capacity_bytes\":%llu,\"free_bytes\":%llu,\"block_size\":%lu",
			(unsigned long long)sv.f_blocks * sv.f_frsize,
			(unsigned long long)sv.f_bavail * sv.f_frsize, (unsigned long)sv.f_bsize);
	sb_addch(&j, '}');
	return sb_detach(&j);
}

/* --- the ops --- */

static void free_state(struct lx *s)
{
	if (!s)
		return;
	free(s->run_abs);
	free(s->mnt_root);
	free(s->image);
	if (s->geo) {
		for (size_t i = 0; s->geo[i]; i++)
			free(s->geo[i]);
		free(s->geo);
	}
	disk_facts_release(&s->facts);
	free(s->disk);
	free(s->v);
	free(s);
}

static int layouts_fit(struct provision_ctx *ctx, struct lx *s)
{
	const struct plan *p = ctx->plan;
	s->geo = xcalloc(p->nlayouts + 1, sizeof(*s->geo));
	for (size_t li = 0; li < p->nlayouts; li++) {
		s->geo[li] = xcalloc(p->layouts[li].nparts, sizeof(struct gpt_part));
		struct strbuf e = STRBUF_INIT;
		if (gpt_layout(&p->layouts[li], s->bytes, s->sector, s->geo[li], &e) < 0) {
			sb_addf(ctx->err, "layout %s does not fit %s: %s", p->layouts[li].name,
				s->is_image ? "the image" : ctx->plan->target.device, e.buf);
			sb_release(&e);
			return -ENOSPC;
		}
		sb_release(&e);
	}
	return 0;
}

static int lx_prepare(struct provision_ctx *ctx)
{
	const struct plan *p = ctx->plan;
	struct lx *s = xcalloc(1, sizeof(*s));
	s->dry = ctx->sp && ctx->sp->dry_run;
	s->is_image = p->target.kind == TARGET_IMAGE;
	s->dio = -1;
	int rc = 0;
	if (!s->dry) {
		if (strcmp(plat_name(), "linux")) {
			sb_addf(ctx->err, "the Linux backend runs on Linux only, not on %s", plat_name());
			rc = -ENOTSUP;
		} else if (geteuid() != 0) {
			sb_addf(ctx->err, "provisioning %s targets needs root (loop devices, partitions, "
					  "mkfs, mount); run rig as root, or use a dirs target",
				s->is_image ? "image" : "disk");
			rc = -EPERM;
		} else {
			rc = check_tools(ctx, s);
		}
		if (rc == 0 && !(s->run_abs = realpath(ctx->run_dir, NULL))) {
			sb_addf(ctx->err, "cannot resolve the run folder %s: %s", ctx->run_dir,
				strerror(errno));
			rc = -errno;
		}
	} else {
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
				  : absolute_image(p->target.image_path, ctx->err);
		if (!s->image)
			rc = -ENOENT;
		else if (!s->dry)
			rc = check_image(ctx, s);
	} else if (s->dry) {
		linux_disk_facts("", p->target.device, &s->facts);
		const struct safety_rule *rule = NULL;
		struct strbuf fact = STRBUF_INIT;
		if (safety_check(&s->facts, p->target.confirm, ctx->allow, &rule, &fact) < 0)
			note(ctx, 1, "on this machine rig would refuse %s: %s (rule %s)",
			     p->target.device, fact.buf, rule->name);
		else
			note(ctx, 0, "on this machine %s passes every safety rule; rig run asks to "
				     "type its model or serial unless --yes", p->target.device);
		sb_release(&fact);
		if (s->facts.exists && s->facts.size) {
			s->bytes = s->facts.size;
			s->sector = s->facts.sector ? s->facts.sector : 512;
		} else {
			s->sector = 512;
			note(ctx, 0, "the size of %s is not known here: START and END stand for the "
				     "sectors computed at run time", p->target.device);
		}
	} else {
		rc = check_disk(ctx, s);
		if (rc == 0 && !ctx->yes)
			rc = typed_confirmation(ctx, s);
		s->bytes = s->facts.size;
		s->sector = s->facts.sector ? s->facts.sector : 512;
	}
	if (rc == 0 && s->bytes)
		rc = layouts_fit(ctx, s);
	if (rc < 0) {
		free_state(s);
		return rc;
	}
	ctx->state = s;
	return 0;
}

static int lx_teardown(struct provision_ctx *ctx, size_t li);

static int lx_provision(struct provision_ctx *ctx, size_t li, struct volume **vols, size_t *nvols)
{
	struct lx *s = ctx->state;
	const struct plan_layout *l = &ctx->plan->layouts[li];
	int rc = 0;
	s->v = xcalloc(l->nparts, sizeof(*s->v));
	s->nv = l->nparts;
	if (s->is_image) {
		rc = create_image(ctx, s);
		if (rc == 0)
			rc = attach(ctx, s);
	} else {
		if (!s->dry) {
			rc = check_disk(ctx, s);
		}
		if (rc == 0) {
			char *real = s->dry ? NULL : realpath(ctx->plan->target.device, NULL);
			s->disk = real ? real : xstrdup(ctx->plan->target.device);
		}
	}
	if (rc == 0 && cancelled(ctx))
		rc = -EINTR;
	if (rc == 0)
		rc = partition(ctx, s, li);
	for (size_t k = 0; k < l->nparts && rc == 0; k++) {
		struct strbuf sb = STRBUF_INIT;
		linux_part_path(&sb, s->disk, k + 1);
		s->v[k].part = sb_detach(&sb);
		sb_addf(&sb, "%s/%s", s->mnt_root, l->parts[k].name);
		s->v[k].mnt = sb_detach(&sb);
	}
	if (rc == 0) {
		note(ctx, 0, "wait for %s ... %s to appear (up to %d s)", s->v[0].part,
		     s->v[l->nparts - 1].part, NODE_TIMEOUT_MS / 1000);
		for (size_t k = 0; k < l->nparts && rc == 0; k++)
			rc = wait_node(ctx, s, li, k);
	}
	struct volume *v = xcalloc(l->nparts, sizeof(*v));
	for (size_t k = 0; k < l->nparts && rc == 0; k++) {
		const struct plan_partition *pt = &l->parts[k];
		struct strbuf mkfs = STRBUF_INIT;
		rc = make_fs(ctx, pt, s->v[k].part, &mkfs);
		if (rc == 0 && cancelled(ctx))
			rc = -EINTR;
		if (rc == 0)
			mkdir_mnt(ctx, s, &s->v[k], &rc);
		if (rc == 0)
			rc = do_mount(ctx, pt->fs, &s->v[k]);
		if (rc == 0 && cancelled(ctx))
			rc = -EINTR;
		if (rc == 0) {
			v[k].name = xstrdup(pt->name);
			v[k].fs = xstrdup(pt->fs);
			v[k].position = (uint32_t)k + 1;
			v[k].dir = xstrdup(s->v[k].mnt);
			v[k].device = xstrdup(s->v[k].part);
			if (s->geo) {
				v[k].has_offsets = 1;
				v[k].offset_start = s->geo[li][k].first * s->sector;
				v[k].offset_end = (s->geo[li][k].last + 1) * s->sector;
			}
			v[k].facts_json = volume_facts(ctx, s, li, k, mkfs.buf);
		}
		sb_release(&mkfs);
	}
	if (rc < 0) {
		for (size_t k = 0; k < l->nparts; k++)
			volume_release(&v[k]);
		free(v);
		/* Undo what was done; the reason stays the first failure. */
		struct strbuf keep = STRBUF_INIT;
		sb_adds(&keep, ctx->err->buf);
		struct strbuf terr = STRBUF_INIT;
		struct provision_ctx t = *ctx;
		t.err = &terr;
		if (lx_teardown(&t, li) < 0)
			sb_addf(&keep, "; cleaning up also failed: %s", terr.buf);
		sb_reset(ctx->err);
		sb_adds(ctx->err, keep.buf);
		sb_release(&keep);
		sb_release(&terr);
		return rc;
	}
	*vols = v;
	*nvols = l->nparts;
	return 0;
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

/* Keep the first error; later ones are appended. */
static void teardown_error(struct provision_ctx *ctx, struct strbuf *acc, int *rc, int r)
{
	if (r >= 0)
		return;
	if (acc->len)
		sb_adds(acc, "; ");
	sb_adds(acc, ctx->err->buf);
	sb_reset(ctx->err);
	if (*rc == 0)
		*rc = r;
}

static int has_partitions(const struct lx *s)
{
	return s->dry ? s->parts_added : linux_partition_count("", base_name(s->disk)) > 0;
}

static int lx_teardown(struct provision_ctx *ctx, size_t li)
{
	(void)li;
	struct lx *s = ctx->state;
	if (!s)
		return 0;
	int rc = 0;
	struct strbuf acc = STRBUF_INIT;
	sb_reset(ctx->err);
	for (size_t k = s->nv; k-- > 0;) {
		struct lvol *v = &s->v[k];
		if (v->mounted)
			teardown_error(ctx, &acc, &rc, do_umount(ctx, v));
		if (v->mnt_made && !v->mounted) {
			note(ctx, 0, "rmdir %s", v->mnt);
			if (!s->dry && rmdir(v->mnt) < 0 && errno != ENOENT) {
				sb_addf(ctx->err, "cannot remove mount point %s: %s", v->mnt,
					strerror(errno));
				teardown_error(ctx, &acc, &rc, -errno);
			}
			v->mnt_made = 0;
		}
	}
	int all_unmounted = 1;
	for (size_t k = 0; k < s->nv; k++) {
		all_unmounted = all_unmounted && !s->v[k].mounted;
		free(s->v[k].part);
		free(s->v[k].mnt);
	}
	if (s->mnt_root_made && all_unmounted) {
		if (!s->dry)
			rmdir(s->mnt_root); /* fails harmlessly when not empty */
		s->mnt_root_made = 0;
	}
	free(s->v);
	s->v = NULL;
	s->nv = 0;
	if (s->is_image && s->attached) {
		if (has_partitions(s)) {
			const char *argv[] = { "partx", "--delete", s->disk, NULL };
			teardown_error(ctx, &acc, &rc, run(ctx, argv, NULL));
		}
		if (loop_is_ours(ctx, s)) {
			const char *argv[] = { "losetup", "--detach", s->disk, NULL };
			int r = run(ctx, argv, NULL);
			teardown_error(ctx, &acc, &rc, r);
			if (r == 0)
				s->attached = 0;
		} else {
			teardown_error(ctx, &acc, &rc, -EIO);
			s->attached = 0; /* not ours any more: never touch it again */
		}
	}
	s->parts_added = 0;
	if (s->is_image && s->image_made && !s->attached) {
		if (ctx->plan->target.keep) {
			note(ctx, 0, "keep %s (keep: true)", s->image);
		} else {
			note(ctx, 0, "delete %s", s->image);
			if (!s->dry && unlink(s->image) < 0 && errno != ENOENT) {
				sb_addf(ctx->err, "cannot delete image %s: %s", s->image, strerror(errno));
				teardown_error(ctx, &acc, &rc, -errno);
			}
		}
		s->image_made = 0;
	}
	if (!s->attached) {
		free(s->disk);
		s->disk = NULL;
	}
	sb_reset(ctx->err);
	sb_adds(ctx->err, acc.buf);
	sb_release(&acc);
	return rc;
}

static void lx_finish(struct provision_ctx *ctx)
{
	struct lx *s = ctx->state;
	if (!s)
		return;
	/* Anything a failed teardown left: one more try. */
	if (s->nv || s->attached || s->image_made) {
		struct strbuf e = STRBUF_INIT;
		struct provision_ctx t = *ctx;
		t.err = &e;
		if (lx_teardown(&t, 0) < 0)
			note(ctx, 1, "cleaning up at the end of the run failed: %s", e.buf);
		sb_release(&e);
	}
	free_state(s);
	ctx->state = NULL;
}

const struct backend_ops provision_linux_ops = {
	.name = "linux",
	.prepare = lx_prepare,
	.provision = lx_provision,
	.remount = lx_remount,
	.teardown = lx_teardown,
	.finish = lx_finish,
};
