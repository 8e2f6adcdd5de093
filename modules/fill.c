/*
 * fill and meta: fill levels as a controlled variable (the fill-levels article 004: a
 * journaled HFS+ volume slowing past 93% full) and metadata operations in
 * one big directory (the fill-levels article's folder of 288,000 files).
 *
 * fill. The level is statvfs's count of blocks in use over all blocks:
 *
 *     level = 100 * (f_blocks - f_bfree) / f_blocks        (percent)
 *
 * (both in f_frsize units, which cancel): the share of the blocks the
 * file system reports that hold something. What f_blocks covers is the
 * file system's choice: ext4 (default `bsddf`) leaves its static metadata
 * (journal, inode tables) out, so a fresh ext4 starts near 0%; others
 * count theirs as used. Blocks reserved for root (ext4's 5%) or for the
 * file system itself (ext4's 2% delalloc reserve) count as free, so `df`'s
 * Use% (used / (used + available)) reads higher, and ENOSPC comes before
 * 100% (at 96.65% on a 64 MiB ext4 as root; earlier for other users).
 *
 * Going up: filler files are written into <volume dir>/fill/, each sized
 * from what is still missing, measured again after every file: the target
 * is the block count ceil(to * f_blocks / 100); a file gets the missing
 * blocks' bytes, at most 1/64 of the volume and 1 GiB (so the per-file
 * samples trace the write rate along the level), rounded up to the I/O
 * alignment (4096, or f_frsize when larger), so the last one lands within
 * a block or two plus the file's own metadata of the target. Files are payload (never
 * zeros: a compressing or deduplicating store would not fill), written in
 * 8 MiB writes (FILL_IO; direct I/O when cache.direct, where the file
 * system allows), synced (plat_full_sync) and closed. Why 8 MiB: one write
 * at a time, and the block layer splits a large direct write into
 * requests of the device's largest size (1280 KiB on a loop device) that
 * are all in flight at once, so an 8 MiB write keeps about 7 in flight:
 * the device's sequential rate without a queue of our own. With 1 MiB
 * writes (one request in flight) the filler ran at 720-1270 MB/s on a
 * disk-backed loop device where `seqwrite` (1M, QD8) ran at 2600-3300 and
 * fio's sequential write of a new file (1M, io_uring QD8, direct) at
 * 1900-2800; with 8 MiB writes at 2300 (bench/README.md). ENOSPC or EDQUOT before the
 * target (at open, write, a short write, sync or close) ends the cell
 * successfully: the level reached is recorded with a note saying so; what
 * was written stays as filler.
 * Going down (`to` below the level): filler is removed newest first until
 * the used blocks are at most floor(to * f_blocks / 100); the last file
 * touched is truncated to give back just the excess (rounded to the
 * alignment), so the level comes down to the target too rather than a
 * whole file below it. Only filler is removed: when the rest of the used
 * space is other data, the level reached is above `to`, with a note.
 * A level within a small band of `to` either way (fill_band: two I/O
 * units and 16 blocks, what going up may overshoot by, or 0.01 points of
 * level when that is more) counts as reached: nothing is written or
 * removed. So a repeated `fill` at the same `to` (in a cycle) does
 * nothing, instead of trimming a few blocks and writing them back.
 * A file system that does not show the change at once (btrfs, ZFS commit
 * space accounting later) gets a sync() and a second look; a level that
 * still does not move ends the cell with a note instead of looping.
 *
 * Timing: `seconds` from the first statvfs to the fsync of the fill folder
 * after the last file (payload made before); `rate` = filler bytes written
 * / seconds (10^6 bytes per second), only when some were written; `level`
 * at the end, and `free` from the same statvfs: f_bavail * f_frsize, the
 * bytes a user without privileges could still write (what a fill sweep is
 * read against: ext4's blocks reserved for root count as free in `level`
 * but are not in `free`). Every filler file is also a per-file sample
 * (files.csv), so the write rate can be read against the level it was
 * written at.
 *
 * The filler is per-volume state (*ctx->volstate: the files, newest last);
 * release_state, which the runner calls when the layout is torn down,
 * removes the files and the folder. (For `dirs` targets the whole work
 * folder goes at teardown anyway; for provisioned volumes the file system
 * is unmounted after release_state.)
 * Rejected: fallocate (allocates without writing: no payload, and on
 * copy-on-write or thin storage it does not take the space the way data
 * does); one huge file (cannot come back down precisely and cheaply).
 *
 * meta. In <volume dir>/meta/ (made for the cell, removed after it):
 * `files` empty files are created (openat O_CREAT|O_EXCL, close), stat'ed
 * (fstatat) in a seeded random order (meta_order.h: no per-file memory),
 * renamed (renameat m<i> -> r<i>, in index order) and unlinked (unlinkat,
 * index order), all relative to one directory descriptor; names are
 * formatted into a stack buffer. Each phase is timed on its own and gives
 * <op>_per_s = files / seconds; create, rename and unlink include a final
 * fsync of the directory (the metadata's "final sync"; best effort where a
 * file system refuses it), stat has nothing to sync. The phases always run
 * in the order create, stat, rename, unlink (each needs the one before);
 * `ops` chooses which are run and timed, and a list in another order is a
 * plan error rather than a silent reordering. Without `create` the files
 * are created untimed first (noted); stat, rename and unlink then act on
 * them as they would have. Whatever is left when the timed phases end
 * (no `unlink`, an error, a cancel) is removed untimed, and the folder
 * with it: the volume is as before the cell.
 * stat follows the creates at once, so it measures lookups of entries the
 * kernel has cached (the common case the seed describes: ls in a huge
 * folder); a cold-cache lookup would need caches dropped in between.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/prng.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/estimate.h"
#include "modules/meta_order.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"
#include "platform/progress.h"

struct fill_args {
	double to;
};

struct meta_args {
	uint64_t files;
	struct enum_list ops;
};

enum { OP_CREATE, OP_STAT, OP_RENAME, OP_UNLINK, NOPS };
static const char *const meta_ops[] = { "create", "stat", "rename", "unlink", NULL };

static const struct rig_param fill_params[] = {
	{ .name = "to", .type = PT_PERCENT, .offset = offsetof(struct fill_args, to),
	  .required = 1, .min = 0, .max = 100,
	  .help = "the volume's used space to reach, as % of its blocks: "
		  "100 * (f_blocks - f_bfree) / f_blocks from statvfs" },
	{ .name = NULL },
};

static const struct rig_metric fill_metrics[] = {
	{ "seconds", "s", "time to write (or remove) filler", 0 },
	{ "rate", "MB/s", "filler bytes written per second", 0 },
	{ "level", "%", "used space reached", 0 },
	{ "free", "B", "space left for an unprivileged user: f_bavail * f_frsize from statvfs", 0 },
	{ NULL, NULL, NULL, 0 },
};

static const struct rig_param meta_params[] = {
	{ .name = "files", .type = PT_UINT, .offset = offsetof(struct meta_args, files),
	  .def = "10000", .min = 1, .max = 1e9, .help = "files in the one directory" },
	{ .name = "ops", .type = PT_ENUMLIST, .offset = offsetof(struct meta_args, ops),
	  .choices = meta_ops, /* not given: all of them, in this order */
	  .help = "operations to time, a subset of [create, stat, rename, unlink] in that "
		  "order (default: all)" },
	{ .name = NULL },
};

static const struct rig_metric meta_metrics[] = {
	{ "create_per_s", "ops/s", "files created per second", 0 },
	{ "stat_per_s", "ops/s", "files stat'ed per second, random order", 0 },
	{ "rename_per_s", "ops/s", "files renamed per second", 0 },
	{ "unlink_per_s", "ops/s", "files removed per second", 0 },
	{ NULL, NULL, NULL, 0 },
};

/* "<prefix><i>" with i zero-padded to width digits (width <= 20). */
static void index_name(char name[32], char prefix, uint64_t i, int width)
{
	char digits[21];
	int nd = 0;
	do {
		digits[nd++] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	int len = 0;
	name[len++] = prefix;
	for (int k = nd; k < width; k++)
		name[len++] = '0';
	while (nd)
		name[len++] = digits[--nd];
	name[len] = 0;
}

/* Commit a folder's entries; best effort (some file systems refuse fsync
 * on folders). */
static void sync_dir_fd(int dfd)
{
	(void)fsync(dfd);
}

/* ------------------------------------------------------------------ fill */

#define FILL_SUBDIR "fill"
#define FILL_MAGIC 0x66696c6cu          /* "fill" */
#define FILL_BLOCK (1u << 20)           /* smallest filler file */
#define FILL_IO (8u << 20)              /* write unit (see above: why 8 MiB) */
#define FILL_FILE_MAX (1ull << 30)      /* largest filler file */
#define FILL_FILE_SHARE 64              /* and at most 1/64 of the volume */
#define FILL_NAME_WIDTH 6

struct fill_file {
	uint64_t index;  /* name f<index>, and its payload stream */
	uint64_t size;   /* bytes in the file now */
};

struct fill_state {
	uint32_t magic;
	char *dir;                /* <volume dir>/fill, owned */
	struct fill_file *files;  /* oldest first */
	size_t n, alloc;
	uint64_t next;            /* index of the next file */
};

static void fill_path(struct strbuf *sb, const struct fill_state *s, uint64_t index)
{
	char name[32];
	index_name(name, 'f', index, FILL_NAME_WIDTH);
	sb_reset(sb);
	sb_addf(sb, "%s/%s", s->dir, name);
}

static void fill_release(void *state)
{
	struct fill_state *s = state;
	if (!s)
		return;
	struct strbuf path = STRBUF_INIT;
	for (size_t i = 0; i < s->n; i++) {
		fill_path(&path, s, s->files[i].index);
		(void)unlink(path.buf);
	}
	(void)rmdir(s->dir); /* fails, harmlessly, when something else was put there */
	sb_release(&path);
	free(s->dir);
	free(s->files);
	free(s);
}

struct level {
	uint64_t blocks;  /* f_blocks */
	uint64_t used;    /* f_blocks - f_bfree */
	uint64_t avail;   /* f_bavail: free to unprivileged users */
	uint64_t frsize;
};

static int get_level(const char *dir, struct level *lv, struct strbuf *err)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0) {
		int e = errno;
		sb_addf(err, "cannot measure the fill level of %s: statvfs: %s", dir, strerror(e));
		return -e;
	}
	if (!sv.f_blocks) {
		sb_addf(err, "cannot measure the fill level of %s: its file system reports no "
			     "blocks", dir);
		return -ENOTSUP;
	}
	lv->blocks = sv.f_blocks;
	lv->used = sv.f_bfree < sv.f_blocks ? sv.f_blocks - sv.f_bfree : 0;
	lv->avail = sv.f_bavail;
	lv->frsize = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
	return 0;
}

static double level_pct(const struct level *lv)
{
	return 100.0 * (double)lv->used / (double)lv->blocks;
}

/* The block counts that mean "at least to%" and "at most to%" (a hair of
 * slack so 50% of an even count is exactly half, not one block more). */
static uint64_t blocks_at_least(double to, uint64_t blocks)
{
	double b = ceil(to * (double)blocks / 100.0 - 1e-7);
	return b < 0 ? 0 : (uint64_t)b;
}

static uint64_t blocks_at_most(double to, uint64_t blocks)
{
	double b = floor(to * (double)blocks / 100.0 + 1e-7);
	return b < 0 ? 0 : (uint64_t)b;
}

/* The I/O unit filler sizes are rounded to: the direct-I/O alignment, or
 * the block size when larger. */
static uint64_t fill_unit(const struct level *lv)
{
	uint64_t unit = plat_direct_align();
	return lv->frsize > unit ? lv->frsize : unit;
}

/* How far from `to` (in blocks, either way) counts as there: what writing
 * up to a target may overshoot by (the last file's rounding to two units
 * and a few blocks of its metadata), and at least 0.01 points of level. */
static uint64_t fill_band(const struct level *lv)
{
	uint64_t b = 2 * fill_unit(lv) / lv->frsize + 16;
	uint64_t pts = (lv->blocks + 9999) / 10000;
	return b > pts ? b : pts;
}

static struct fill_state *fill_state_get(struct rig_ctx *ctx, int *rc)
{
	struct fill_state *s = *ctx->volstate;
	*rc = 0;
	if (s && s->magic == FILL_MAGIC)
		return s;
	struct strbuf dir = STRBUF_INIT;
	sb_addf(&dir, "%s/%s", ctx->dir, FILL_SUBDIR);
	if (mkdir(dir.buf, 0777) < 0 && errno != EEXIST) {
		*rc = -errno;
		sb_addf(ctx->err, "cannot create directory %s: %s", dir.buf, strerror(-*rc));
		sb_release(&dir);
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->magic = FILL_MAGIC;
	s->dir = sb_detach(&dir);
	*ctx->volstate = s;
	return s;
}

enum { FW_DONE, FW_CANCELLED, FW_FULL };

static int is_full(int e)
{
	return e == ENOSPC || e == EDQUOT;
}

/* How far a fill got, for the progress line: bytes before this file, and
 * the bytes the step is expected to write (0: unknown). */
struct fill_goal {
	uint64_t before, total;
};

/* Write one filler file of `size` bytes. FW_DONE, FW_CANCELLED, FW_FULL (the
 * volume ran out of space; *written says how far it got), or a negative
 * errno with the reason in ctx->err. *full_errno gets the errno of FW_FULL
 * (0 for a short write). */
static int fill_write_one(struct rig_ctx *ctx, struct payload *pay, const char *path,
			  uint64_t stream, uint64_t size, const struct fill_goal *goal,
			  uint64_t *written, int *applied, int *full_errno)
{
	*written = 0;
	*full_errno = 0;
	int fd = plat_open_data(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, ctx->direct, applied);
	if (fd >= 0 && ctx->direct && !*applied)
		ctx->direct_used = 0;
	if (fd < 0) {
		if (is_full(-fd)) {
			*full_errno = -fd;
			return FW_FULL;
		}
		sb_addf(ctx->err, "cannot create %s: %s", path, strerror(-fd));
		return fd;
	}
	int rc = FW_DONE;
	uint64_t off = 0;
	while (off < size) {
		if (*ctx->cancel) {
			rc = FW_CANCELLED;
			break;
		}
		size_t len = size - off < FILL_IO ? (size_t)(size - off) : FILL_IO;
		ssize_t w = fault_pwrite(fd, plat_payload_block(pay, stream, off, len), len, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (is_full(errno)) {
				*full_errno = errno;
				rc = FW_FULL;
				break;
			}
			rc = -errno;
			sb_addf(ctx->err, "cannot write %s: %s", path, strerror(-rc));
			break;
		}
		off += (uint64_t)w;
		plat_progress_work(ctx->progress, "filler", goal->before + off, goal->total, PROGRESS_BYTES);
		if ((size_t)w < len) {
			/* Short write to a regular file: no room for the rest. */
			rc = *ctx->cancel ? FW_CANCELLED : FW_FULL;
			break;
		}
	}
	*written = off;
	if (rc == FW_DONE || rc == FW_FULL) {
		int s = plat_fault_full_sync(fd);
		if (s < 0 && is_full(-s)) {
			if (rc == FW_DONE)
				*full_errno = -s;
			rc = FW_FULL;
		} else if (s < 0) {
			sb_addf(ctx->err, "cannot sync %s: %s", path, strerror(-s));
			rc = s;
		}
	}
	if (close(fd) < 0 && rc >= 0 && rc != FW_FULL) {
		if (is_full(errno)) {
			*full_errno = errno;
			rc = FW_FULL;
		} else {
			rc = -errno;
			sb_addf(ctx->err, "cannot close %s: %s", path, strerror(-rc));
		}
	}
	return rc;
}

/* The level after a change: when statvfs does not show it, sync() and look
 * again. 1 when it moved the right way (up when up), 0 when it did not. */
static int level_moved(struct rig_ctx *ctx, const struct level *before, struct level *after,
		       int up, int *rc)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		*rc = get_level(ctx->dir, after, ctx->err);
		if (*rc < 0)
			return 0;
		if (up ? after->used > before->used : after->used < before->used)
			return 1;
		if (!attempt)
			sync();
	}
	return 0;
}

static void note_stalled(struct rig_ctx *ctx, const char *what)
{
	struct strbuf v = STRBUF_INIT;
	sb_addf(&v, "the file system's used space did not change after %s, even after a sync: "
		    "stopped at the level reached (compression, deduplication or delayed space "
		    "accounting?)", what);
	cell_note(ctx, "level", v.buf);
	sb_release(&v);
}

/* The volume filled up below the level asked: the last file, if empty, is
 * no filler and goes; the level reached is noted. 0, or a negative errno. */
static int note_full(struct rig_ctx *ctx, struct fill_state *s, const char *path, uint64_t written,
		     int full_errno, double to, uint64_t bytes)
{
	if (!written) {
		(void)unlink(path);
		s->n--;
	}
	struct level now;
	int rc = get_level(ctx->dir, &now, ctx->err);
	if (rc < 0)
		return rc;
	struct strbuf v = STRBUF_INIT;
	sb_addf(&v, "the volume is full (%s) at %.3f%%, below the %g%% asked; "
		    "%llu bytes of filler written in this step",
		full_errno ? strerror(full_errno) : "a short write", level_pct(&now), to,
		(unsigned long long)bytes);
	cell_note(ctx, "full", v.buf);
	sb_release(&v);
	return 0;
}

static int fill_up(struct rig_ctx *ctx, struct fill_state *s, double to, uint64_t *bytes,
		   uint64_t *ns_total, int *cancelled)
{
	struct level lv;
	int rc = get_level(ctx->dir, &lv, ctx->err);
	if (rc < 0)
		return rc;
	uint64_t target = blocks_at_least(to, lv.blocks);
	uint64_t unit = fill_unit(&lv);
	uint64_t max_file = lv.blocks * lv.frsize / FILL_FILE_SHARE;
	if (max_file > FILL_FILE_MAX)
		max_file = FILL_FILE_MAX;
	if (max_file < FILL_BLOCK)
		max_file = FILL_BLOCK;
	struct payload pay;
	struct strbuf label = STRBUF_INIT;
	sb_addf(&label, "fill/payload/%s", ctx->volume ? ctx->volume : "");
	rc = plat_payload_init(&pay, prng_derive_seed(ctx->seed, label.buf), FILL_IO);
	sb_release(&label);
	if (rc < 0) {
		sb_addf(ctx->err, "cannot allocate the payload pool: %s", strerror(-rc));
		return rc;
	}
	struct strbuf path = STRBUF_INIT;
	int noted_direct = 0;
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	struct fill_goal goal = { 0, lv.used < target ? (target - lv.used) * lv.frsize : 0 };
	plat_progress_work(ctx->progress, "filler", 0, goal.total, PROGRESS_BYTES);
	while (lv.used < target) {
		if (*ctx->cancel) {
			*cancelled = 1;
			break;
		}
		uint64_t need = (target - lv.used) * lv.frsize;
		if (need > max_file)
			need = max_file;
		need = (need + unit - 1) / unit * unit;
		XGROW(s->files, s->n + 1, s->alloc);
		struct fill_file *f = &s->files[s->n];
		f->index = s->next++;
		f->size = 0;
		s->n++; /* listed before it exists: release removes it whatever happens */
		fill_path(&path, s, f->index);
		uint64_t written = 0, f0 = plat_clock_ns();
		int applied = 0, full_errno = 0;
		goal.before = *bytes;
		rc = fill_write_one(ctx, &pay, path.buf, f->index, need, &goal, &written, &applied,
				    &full_errno);
		uint64_t fns = plat_clock_ns() - f0;
		f->size = written;
		*bytes += written;
		if (rc < 0)
			break;
		if (ctx->direct && !applied && !noted_direct && rc != FW_FULL) {
			struct strbuf v = STRBUF_INIT;
			sb_addf(&v, "refused by the file system of %s: buffered I/O used", s->dir);
			cell_note(ctx, "direct", v.buf);
			sb_release(&v);
			noted_direct = 1;
		}
		if (written) {
			mod_place_file(ctx, path.buf + strlen(s->dir) + 1, path.buf);
			ctx->sink->file(ctx->sink->opaque, path.buf + strlen(s->dir) + 1, written,
					(double)fns / 1e9);
		}
		if (rc == FW_CANCELLED) {
			*cancelled = 1;
			break;
		}
		if (rc == FW_FULL) {
			rc = note_full(ctx, s, path.buf, written, full_errno, to, *bytes);
			break;
		}
		struct level before = lv;
		if (!level_moved(ctx, &before, &lv, 1, &rc)) {
			if (rc == 0)
				note_stalled(ctx, "writing filler");
			break;
		}
	}
	int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		sync_dir_fd(dfd);
		close(dfd);
	}
	*ns_total = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
	plat_payload_release(&pay);
	sb_release(&path);
	return rc;
}

static int fill_down(struct rig_ctx *ctx, struct fill_state *s, double to, uint64_t *ns_total,
		     int *cancelled, uint64_t *removed)
{
	struct level lv;
	int rc = get_level(ctx->dir, &lv, ctx->err);
	if (rc < 0)
		return rc;
	uint64_t target = blocks_at_most(to, lv.blocks);
	uint64_t unit = fill_unit(&lv);
	struct strbuf path = STRBUF_INIT;
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	while (lv.used > target) {
		if (*ctx->cancel) {
			*cancelled = 1;
			break;
		}
		if (!s->n) {
			struct strbuf v = STRBUF_INIT;
			sb_addf(&v, "no filler left to remove: the level stays at %.3f%%, above the "
				    "%g%% asked (the rest is not filler)", level_pct(&lv), to);
			cell_note(ctx, "level", v.buf);
			sb_release(&v);
			break;
		}
		struct fill_file *f = &s->files[s->n - 1];
		uint64_t excess = (lv.used - target) * lv.frsize;
		fill_path(&path, s, f->index);
		uint64_t keep = f->size > excess ? (f->size - excess) / unit * unit : 0;
		uint64_t freed = f->size - keep;
		if (keep == 0) {
			if (unlink(path.buf) < 0 && errno != ENOENT) {
				rc = -errno;
				sb_addf(ctx->err, "cannot remove %s: %s", path.buf, strerror(-rc));
				break;
			}
			*removed += f->size;
			s->n--;
		} else {
			if (truncate(path.buf, (off_t)keep) < 0) {
				rc = -errno;
				sb_addf(ctx->err, "cannot truncate %s: %s", path.buf, strerror(-rc));
				break;
			}
			*removed += f->size - keep;
			f->size = keep;
		}
		struct level before = lv;
		if (freed < lv.frsize) {
			/* Nothing that holds a block went: no change to wait for. */
			rc = get_level(ctx->dir, &lv, ctx->err);
			if (rc < 0)
				break;
		} else if (!level_moved(ctx, &before, &lv, 0, &rc)) {
			if (rc == 0 && s->n)
				note_stalled(ctx, "removing filler");
			if (rc < 0 || s->n)
				break;
		}
	}
	int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		sync_dir_fd(dfd);
		close(dfd);
	}
	*ns_total = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
	sb_release(&path);
	return rc;
}

static int fill_run(struct rig_ctx *ctx, const void *a)
{
	const struct fill_args *args = a;
	struct level lv;
	int rc = get_level(ctx->dir, &lv, ctx->err);
	if (rc < 0)
		return rc;
	struct fill_state *s = fill_state_get(ctx, &rc);
	if (!s)
		return rc;
	struct strbuf v = STRBUF_INIT;
	sb_addf(&v, "%.3f%% (%llu of %llu blocks of %llu bytes)", level_pct(&lv),
		(unsigned long long)lv.used, (unsigned long long)lv.blocks,
		(unsigned long long)lv.frsize);
	cell_note(ctx, "from", v.buf);
	uint64_t bytes = 0, removed = 0, ns = 0;
	int cancelled = 0;
	uint64_t band = fill_band(&lv);
	if (lv.used + band < blocks_at_least(args->to, lv.blocks)) {
		rc = fill_up(ctx, s, args->to, &bytes, &ns, &cancelled);
	} else if (lv.used > blocks_at_most(args->to, lv.blocks) + band) {
		rc = fill_down(ctx, s, args->to, &ns, &cancelled, &removed);
	} else {
		sb_reset(&v);
		sb_addf(&v, "already at the level asked (within %llu blocks, %.4f points): "
			    "nothing written or removed",
			(unsigned long long)band, 100.0 * (double)band / (double)lv.blocks);
		cell_note(ctx, "level", v.buf);
	}
	if (rc < 0 || cancelled) {
		sb_release(&v);
		return rc;
	}
	rc = get_level(ctx->dir, &lv, ctx->err);
	if (rc < 0) {
		sb_release(&v);
		return rc;
	}
	if (removed) {
		sb_reset(&v);
		sb_addf(&v, "%llu bytes of filler removed (newest first)",
			(unsigned long long)removed);
		cell_note(ctx, "removed", v.buf);
	}
	double secs = (double)ns / 1e9;
	cell_metric(ctx, "seconds", secs, "s");
	if (bytes && secs > 0)
		cell_metric(ctx, "rate", (double)bytes / secs / 1e6, "MB/s");
	cell_metric(ctx, "level", level_pct(&lv), "%");
	cell_metric(ctx, "free", (double)lv.avail * (double)lv.frsize, "B");
	sb_release(&v);
	return 0;
}

/* ------------------------------------------------------------------ meta */

#define META_SUBDIR "meta"

struct meta_run {
	struct rig_ctx *ctx;
	const char *dir;     /* <volume dir>/meta */
	int dfd;
	uint64_t n;
	int width;
	uint64_t created;    /* m0..m<created-1> exist (or r<i> for i < renamed) */
	uint64_t renamed;
	uint64_t unlinked;   /* the first `unlinked` are gone */
};

static int op_error(struct meta_run *m, const char *what, const char *name, int e)
{
	sb_addf(m->ctx->err, "cannot %s %s/%s: %s", what, m->dir, name, strerror(e));
	return -e;
}

/* 0, 1 when cancelled, or a negative errno. */
static int do_create(struct meta_run *m)
{
	char name[32];
	for (uint64_t i = m->created; i < m->n; i++) {
		if (*m->ctx->cancel)
			return 1;
		index_name(name, 'm', i, m->width);
		int fd = openat(m->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return op_error(m, "create", name, errno);
		m->created = i + 1;
		if (close(fd) < 0)
			return op_error(m, "close", name, errno);
	}
	sync_dir_fd(m->dfd);
	return 0;
}

static int do_stat(struct meta_run *m)
{
	char name[32];
	struct perm p;
	mod_meta_perm_init(&p, m->n, prng_derive_seed(m->ctx->seed, "meta/stat-order"));
	for (uint64_t k = 0; k < m->n; k++) {
		if (*m->ctx->cancel)
			return 1;
		index_name(name, 'm', mod_meta_perm_at(&p, k), m->width);
		struct stat st;
		if (fstatat(m->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return op_error(m, "stat", name, errno);
	}
	return 0;
}

static int do_rename(struct meta_run *m)
{
	char from[32], to[32];
	for (uint64_t i = 0; i < m->n; i++) {
		if (*m->ctx->cancel)
			return 1;
		index_name(from, 'm', i, m->width);
		index_name(to, 'r', i, m->width);
		if (renameat(m->dfd, from, m->dfd, to) < 0)
			return op_error(m, "rename", from, errno);
		m->renamed = i + 1;
	}
	sync_dir_fd(m->dfd);
	return 0;
}

static int do_unlink(struct meta_run *m)
{
	char name[32];
	for (uint64_t i = m->unlinked; i < m->created; i++) {
		if (*m->ctx->cancel)
			return 1;
		index_name(name, i < m->renamed ? 'r' : 'm', i, m->width);
		if (unlinkat(m->dfd, name, 0) < 0)
			return op_error(m, "remove", name, errno);
		m->unlinked = i + 1;
	}
	sync_dir_fd(m->dfd);
	return 0;
}

/* Untimed: whatever the phases left, and the folder. Keeps the first error. */
static int meta_cleanup(struct meta_run *m, int rc)
{
	volatile sig_atomic_t no_cancel = 0;
	volatile sig_atomic_t *saved = m->ctx->cancel;
	m->ctx->cancel = &no_cancel; /* clean up even after Ctrl-C */
	int c = do_unlink(m);
	m->ctx->cancel = saved;
	close(m->dfd);
	if (c < 0 && rc >= 0)
		rc = c;
	if (rmdir(m->dir) < 0 && rc >= 0) {
		rc = -errno;
		sb_addf(m->ctx->err, "cannot remove directory %s: %s", m->dir, strerror(-rc));
	}
	return rc;
}

static int meta_run_cell(struct rig_ctx *ctx, const void *a)
{
	const struct meta_args *args = a;
	int want[NOPS] = { 0 };
	if (!args->ops.n) {
		for (int k = 0; k < NOPS; k++)
			want[k] = 1;
	}
	for (size_t i = 0; i < args->ops.n; i++)
		want[args->ops.items[i]] = 1;

	struct strbuf dir = STRBUF_INIT;
	sb_addf(&dir, "%s/%s", ctx->dir, META_SUBDIR);
	if (mkdir(dir.buf, 0777) < 0) {
		int e = errno;
		sb_addf(ctx->err, "cannot create directory %s: %s", dir.buf, strerror(e));
		sb_release(&dir);
		return -e;
	}
	struct meta_run m = { .ctx = ctx, .dir = dir.buf, .n = args->files, .width = 1 };
	for (uint64_t v = m.n - 1; v >= 10; v /= 10)
		m.width++;
	m.dfd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m.dfd < 0) {
		int e = errno;
		sb_addf(ctx->err, "cannot open directory %s: %s", dir.buf, strerror(e));
		(void)rmdir(dir.buf);
		sb_release(&dir);
		return -e;
	}
	static int (*const phase[NOPS])(struct meta_run *) = { do_create, do_stat, do_rename,
								do_unlink };
	static const char *const metric_name[NOPS] = { "create_per_s", "stat_per_s",
						       "rename_per_s", "unlink_per_s" };
	int rc = 0;
	if (!want[OP_CREATE]) {
		cell_note(ctx, "create", "files created untimed: `create` is not in ops");
		rc = do_create(&m);
	}
	for (int k = 0; k < NOPS && rc == 0; k++) {
		if (!want[k])
			continue;
		uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
		rc = phase[k](&m);
		double secs = (double)(mod_run_time_mark(ctx->time, RT_SETUP) - t0) / 1e9;
		if (rc == 0 && secs > 0)
			cell_metric(ctx, metric_name[k], (double)m.n / secs, "ops/s");
	}
	rc = meta_cleanup(&m, rc < 0 ? rc : 0);
	sb_release(&dir);
	return rc;
}

/* What meta_check reads (struct rig_module.check_reads). */
static const char *const meta_check_reads[] = { "ops", NULL };

/* ops run in table order; a list in another order would not be honoured. */
static void meta_check(const void *a, struct diag *d, struct mark at)
{
	const struct meta_args *args = a;
	for (size_t i = 1; i < args->ops.n; i++) {
		if (args->ops.items[i] < args->ops.items[i - 1]) {
			diag_error(d, at, "'ops' of step 'meta' lists %s after %s: the operations run "
					  "in the order create, stat, rename, unlink (each needs the "
					  "one before); list them in that order",
				   meta_ops[args->ops.items[i]], meta_ops[args->ops.items[i - 1]]);
			return;
		}
	}
}

/* Filler up to the level (or removed down to it) on a volume of known
 * size; the level counts everything on the volume, as statvfs does. */
static void fill_estimate(const void *a, struct est_cell *c)
{
	const struct fill_args *args = a;
	struct est_slot *s = c->slot;
	if (c->capacity <= 0) {
		c->unknown = 1;
		return;
	}
	double used = c->others + s->bytes, target = args->to / 100.0 * c->capacity;
	double max_file = c->capacity / FILL_FILE_SHARE;
	if (max_file > (double)FILL_FILE_MAX)
		max_file = (double)FILL_FILE_MAX;
	if (max_file < FILL_BLOCK)
		max_file = FILL_BLOCK;
	if (target > used) {
		double add = target - used;
		c->written = c->moved = add;
		c->files = ceil(add / max_file);
		c->largest = add < max_file ? add : max_file;
		s->bytes += add;
		s->files += c->files;
	} else if (target < used) {
		double drop = used - target < s->bytes ? used - target : s->bytes;
		c->ops = s->bytes > 0 ? ceil(drop / max_file) : 0;
		s->files = s->bytes > drop ? ceil((s->bytes - drop) / max_file) : 0;
		s->bytes -= drop;
	}
	c->need = s->bytes;
}

/* Empty files, created and removed in the cell: operations, no data. */
static void meta_estimate(const void *a, struct est_cell *c)
{
	const struct meta_args *args = a;
	double kinds = 2; /* create and unlink happen whatever `ops` times */
	for (size_t i = 0; i < args->ops.n; i++)
		kinds += args->ops.items[i] == OP_STAT || args->ops.items[i] == OP_RENAME;
	c->files = (double)args->files;
	c->ops = kinds * (double)args->files;
}

const struct rig_module mod_fill = {
	.name = "fill",
	.direct_io = 1,
	.summary = "writes filler until the volume's used space reaches a level",
	.help = "Writes large filler files of payload (synced; direct I/O when cache.direct) "
		"into the volume's folder `fill/` until the used share of the volume, "
		"100 * (f_blocks - f_bfree) / f_blocks from statvfs, reaches `to`; each file is "
		"sized from what is still missing, so the level lands within a few blocks. A "
		"lower `to` removes filler, newest first (the last file truncated to fit). "
		"Running out of space first is a result, not an error: the level reached is "
		"recorded with a note. Beside the level it records `free`, the bytes still "
		"available to an unprivileged user (f_bavail * f_frsize). Filler is removed "
		"when the layout is torn down.",
	.kind = MOD_WRITES,
	.flags = MOD_SETS_LEVEL | MOD_PREPARES,
	.headline = { "rate", +1 },
	.params = fill_params,
	.args_size = sizeof(struct fill_args),
	.metrics = fill_metrics,
	.run = fill_run,
	.release_state = fill_release,
	.estimate = fill_estimate,
};

const struct rig_module mod_meta = {
	.name = "meta",
	.summary = "metadata operations in one large directory",
	.help = "Creates `files` empty files in one directory, stats them in a seeded random "
		"order, renames each and unlinks each, timing each operation kind (create, "
		"rename and unlink include a final fsync of the directory). `ops` chooses the "
		"operations timed, in that order; without `create` the files are created "
		"untimed. The directory is removed at the end of the step.",
	.kind = MOD_WRITES,
	.headline = { "create_per_s", +1 },
	.params = meta_params,
	.args_size = sizeof(struct meta_args),
	.metrics = meta_metrics,
	.check = meta_check,
	.check_reads = meta_check_reads,
	.run = meta_run_cell,
	.estimate = meta_estimate,
};
