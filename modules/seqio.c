/*
 * write and read: a set of files written whole, then read back (Stibium's
 * method, fio's sequential jobs without fio).
 *
 * write, per cell: the set's sizes are drawn from the cell's seed (the
 * same on every volume of a phase; every repetition draws afresh, so
 * repetitions sample the size distribution instead of one draw of it); the
 * previous set in <dir>/seqio is removed and the removal committed (the
 * directory fsynced) outside the timing; the payload pool is made
 * (payload.h; one stream per file, the pool seeded per volume and cell so
 * no two volumes or repetitions write identical bytes); then each file, in
 * an order shuffled from the cell's seed, is created, written in `block`
 * units straight from the pool (no copy), synced when `sync: true`, and
 * closed. The clock runs from open to close, per file; totals are sums of
 * the per-file times, so recording samples (the store syncs every row)
 * between files is not measured.
 *
 * read: drops each file's cached pages (syncing first when the set was
 * written without sync) outside the timing, then reads every file whole in
 * `block` units, in its own shuffled order, timed from open to close.
 *
 * Direct I/O and the last partial block: O_DIRECT (Linux) needs lengths and
 * offsets aligned to plat_direct_align() (4096). write sends the aligned
 * part of each file through the direct descriptor and the remaining tail
 * (fewer than 4096 bytes) through a second, buffered descriptor opened
 * inside the timing; the sync of the first descriptor makes both durable
 * (fsync and F_FULLFSYNC act on the file, not the descriptor). Sizes and
 * recorded bytes are exact. The same is done under F_NOCACHE (macOS), which
 * would not need it, so both platforms run the same code. read needs no
 * such care: an aligned direct read at the aligned end of the body returns
 * the short tail. A `block` that is not a multiple of the alignment is
 * rounded up when direct I/O is asked for, with a note. Where the file
 * system refuses direct I/O, plat_open_data falls back to buffered I/O and
 * the cell gets a note.
 * Rejected: rounding file sizes up (the plan's sizes would be wrong);
 * toggling O_DIRECT with fcntl (Linux only); padding the tail and
 * truncating (an extra metadata update inside the timing).
 *
 * Samples: one per file (files.csv), and per cell rate = total bytes /
 * total time, the median per-file rate, and the least-squares fit of time
 * on size (lib/fit.h), time = overhead + bytes / rate, which separates
 * bandwidth from per-file costs; the fit is omitted with a note when the
 * sizes do not determine a line or time does not grow with size. An
 * interrupted cell records the files it finished and no cell metrics.
 */
#include "modules/seqio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fit.h"
#include "lib/prng.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"

#define SET_MAGIC 0x73657131u /* "seq1" */

static const struct rig_metric seqio_metrics[] = {
	{ "rate", "MB/s", "total bytes / total time", 0 },
	{ "rate_median_file", "MB/s", "median of the per-file rates", 0 },
	{ "rate_fit", "MB/s", "rate from the least-squares fit time = overhead + bytes/rate (5 or more files)", 0 },
	{ "overhead_fit", "s", "per-file overhead from the same fit", 0 },
	{ "bytes", "B", "bytes transferred (set by the plan)", 1 },
	{ "seconds", "s", "total time", 0 },
	{ NULL, NULL, NULL, 0 },
};

static const struct rig_param write_params[] = {
	{ .name = "files", .type = PT_UINT, .offset = offsetof(struct seqio_args, files),
	  .def = "1", .min = 1, .max = 10000000, .help = "number of files in the set" },
	{ .name = "size", .type = PT_DIST, .offset = offsetof(struct seqio_args, sizes),
	  .def = "1G", .min = 1, .group = "size",
	  .help = "every file's size, or a list of sizes used in turn" },
	{ .name = "sizes", .type = PT_DIST, .offset = offsetof(struct seqio_args, sizes),
	  .min = 1, .group = "size",
	  .help = "a range drawn log-uniformly per file (2M..2G), a list, or inverse-square(MIN..MAX)" },
	{ .name = "block", .type = PT_SIZE, .offset = offsetof(struct seqio_args, block),
	  .def = "1M", .min = 512, .max = 1073741824.0, .help = "size of each write" },
	{ .name = "sync", .type = PT_BOOL, .offset = offsetof(struct seqio_args, sync),
	  .def = "true", .help = "fsync (F_FULLFSYNC on macOS) each file before closing it, inside the timing" },
	{ .name = NULL },
};

static const struct rig_param read_params[] = {
	{ .name = "block", .type = PT_SIZE, .offset = offsetof(struct seqio_args, block),
	  .def = "1M", .min = 512, .max = 1073741824.0, .help = "size of each read" },
	{ .name = NULL },
};

void mod_seqio_draw_sizes(const struct size_dist *d, uint64_t seed, uint64_t *out, size_t n)
{
	struct prng r;
	prng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		out[i] = units_dist_draw(d, prng_uniform(&r), i);
}

static void set_free(void *state)
{
	struct seqio_set *s = state;
	if (!s)
		return;
	free(s->dir);
	free(s->files);
	free(s);
}

/* The I/O unit: `block`, rounded up to the alignment when direct I/O is
 * asked for (noted). */
static size_t io_block(struct rig_ctx *ctx, uint64_t block, size_t align)
{
	uint64_t b = block;
	if (ctx->direct && b % align) {
		b = (b + align - 1) / align * align;
		struct strbuf v = STRBUF_INIT;
		sb_addf(&v, "rounded up from %llu to %llu bytes: direct I/O needs multiples of %zu",
			(unsigned long long)block, (unsigned long long)b, align);
		cell_note(ctx, "block", v.buf);
		sb_release(&v);
	}
	return (size_t)b;
}

static void note_fallback(struct rig_ctx *ctx, const char *dir)
{
	struct strbuf v = STRBUF_INIT;
	sb_addf(&v, "refused by the file system of %s: buffered I/O used", dir);
	cell_note(ctx, "direct", v.buf);
	ctx->direct_used = 0;
	sb_release(&v);
}

/* Our file names: 'f' and digits. Anything else in the folder is left alone. */
static int is_set_name(const char *name)
{
	if (name[0] != 'f' || !name[1])
		return 0;
	for (const char *p = name + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* Remove what earlier sets left in dir and commit the removal, so freeing
 * and discarding their blocks does not happen inside the timing. */
static int clear_dir(const char *dir, struct strbuf *err)
{
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		sb_addf(err, "cannot open directory %s: %s", dir, strerror(e));
		return -e;
	}
	char **names = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_set_name(de->d_name))
			continue;
		XGROW(names, n + 1, alloc);
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	int rc = 0;
	struct strbuf path = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		sb_reset(&path);
		sb_addf(&path, "%s/%s", dir, names[i]);
		if (rc == 0 && unlink(path.buf) < 0 && errno != ENOENT) {
			rc = -errno;
			sb_addf(err, "cannot remove %s: %s", path.buf, strerror(-rc));
		}
		free(names[i]);
	}
	free(names);
	sb_release(&path);
	if (rc == 0 && n) {
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			(void)fsync(fd); /* best effort: some file systems refuse it on folders */
			close(fd);
		}
	}
	return rc;
}

/* pwrite all of buf. 0, 1 when cancelled, or a negative errno (ctx->err). */
static int put(struct rig_ctx *ctx, int fd, const void *buf, size_t len, uint64_t off,
	       const char *path)
{
	const unsigned char *b = buf;
	while (len) {
		ssize_t w = fault_pwrite(fd, b, len, (off_t)off);
		if (w < 0) {
			if (errno == EINTR) {
				if (*ctx->cancel)
					return 1;
				continue;
			}
			int e = errno;
			sb_addf(ctx->err, "cannot write %s: %s", path, strerror(e));
			return -e;
		}
		if (w == 0) {
			sb_addf(ctx->err, "cannot write %s: no progress at offset %llu", path,
				(unsigned long long)off);
			return -EIO;
		}
		b += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

struct writer {
	struct payload pay;
	size_t align;
	size_t blk;
	int sync;
};

/* Write one file whole; *ns is its time, open to close. *direct_applied and
 * *tail say what was done. 0, 1 when cancelled, or a negative errno. */
static int write_one(struct rig_ctx *ctx, struct writer *w, const char *path,
		     const struct seqio_file *f, uint64_t *ns, int *direct_applied, int *tail)
{
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	int applied = 0;
	int fd = plat_open_data(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, ctx->direct, &applied);
	if (fd < 0) {
		sb_addf(ctx->err, "cannot create %s: %s", path, strerror(-fd));
		return fd;
	}
	*direct_applied = applied;
	uint64_t body = applied ? f->size / w->align * w->align : f->size;
	int rc = 0;
	for (uint64_t off = 0; off < body && rc == 0;) {
		if (*ctx->cancel) {
			rc = 1;
			break;
		}
		size_t len = body - off < w->blk ? (size_t)(body - off) : w->blk;
		rc = put(ctx, fd, plat_payload_block(&w->pay, f->stream, off, len), len, off, path);
		off += len;
	}
	*tail = 0;
	if (rc == 0 && body < f->size) {
		int unused;
		int tfd = plat_open_data(path, O_WRONLY, 0, 0, &unused);
		if (tfd < 0) {
			sb_addf(ctx->err, "cannot open %s to write its tail: %s", path, strerror(-tfd));
			rc = tfd;
		} else {
			size_t len = (size_t)(f->size - body);
			rc = put(ctx, tfd, plat_payload_block(&w->pay, f->stream, body, len), len, body,
				 path);
			if (close(tfd) < 0 && rc == 0) {
				rc = -errno;
				sb_addf(ctx->err, "cannot close %s: %s", path, strerror(-rc));
			}
			*tail = 1;
		}
	}
	if (rc == 0 && w->sync) {
		int s = plat_fault_full_sync(fd);
		if (s < 0) {
			sb_addf(ctx->err, "cannot sync %s: %s", path, strerror(-s));
			rc = s;
		}
	}
	if (close(fd) < 0 && rc == 0) {
		rc = -errno;
		sb_addf(ctx->err, "cannot close %s: %s", path, strerror(-rc));
	}
	*ns = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The cell's metrics from per-file bytes and seconds (n files). */
static void report(struct rig_ctx *ctx, const double *bytes, const double *secs, size_t n)
{
	double tb = 0, ts = 0;
	double *rates = xcalloc(n ? n : 1, sizeof(double));
	size_t nr = 0;
	for (size_t i = 0; i < n; i++) {
		tb += bytes[i];
		ts += secs[i];
		if (secs[i] > 0)
			rates[nr++] = bytes[i] / secs[i] / 1e6;
	}
	if (ts > 0)
		cell_metric(ctx, "rate", tb / ts / 1e6, "MB/s");
	if (nr) {
		qsort(rates, nr, sizeof(double), cmp_double);
		double med = nr % 2 ? rates[nr / 2] : (rates[nr / 2 - 1] + rates[nr / 2]) / 2;
		cell_metric(ctx, "rate_median_file", med, "MB/s");
	}
	free(rates);
	struct linfit fit;
	if (fit_line(bytes, secs, n, &fit) < 0) {
		cell_note(ctx, "rate_fit", "omitted: a fit of time on size needs files of 2 or more "
				      "distinct sizes");
	} else if (n < FIT_MIN_POINTS) {
		struct strbuf v = STRBUF_INIT;
		sb_addf(&v, "omitted: a fit of time on size needs %d or more files; %zu fit a line "
			    "too closely to say anything about it", FIT_MIN_POINTS, n);
		cell_note(ctx, "rate_fit", v.buf);
		sb_release(&v);
	} else if (fit.slope <= 0) {
		struct strbuf v = STRBUF_INIT;
		sb_addf(&v, "omitted: time does not grow with size (slope %g s/B, overhead %g s)",
			fit.slope, fit.intercept);
		cell_note(ctx, "rate_fit", v.buf);
		sb_release(&v);
	} else {
		cell_metric(ctx, "rate_fit", 1.0 / fit.slope / 1e6, "MB/s");
		cell_metric(ctx, "overhead_fit", fit.intercept, "s");
	}
	cell_metric(ctx, "bytes", tb, "B");
	cell_metric(ctx, "seconds", ts, "s");
}

static uint32_t *shuffled(uint64_t seed, size_t n)
{
	uint32_t *order = xcalloc(n ? n : 1, sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	struct prng r;
	prng_seed(&r, seed);
	prng_shuffle_u32(&r, order, n);
	return order;
}

/* "f" and i in decimal, zero-padded to width digits (width <= 20). */
static void set_name(char name[24], size_t i, int width)
{
	char digits[21];
	int nd = 0;
	uint64_t v = i;
	do {
		digits[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	int len = 0;
	name[len++] = 'f';
	for (int k = nd; k < width; k++)
		name[len++] = '0';
	while (nd)
		name[len++] = digits[--nd];
	name[len] = 0;
}

static struct seqio_set *new_set(struct rig_ctx *ctx, const struct seqio_args *args, char *dir)
{
	struct seqio_set *set = xcalloc(1, sizeof(*set));
	set->magic = SET_MAGIC;
	set->dir = dir;
	set->n = (size_t)args->files;
	set->files = xcalloc(set->n ? set->n : 1, sizeof(*set->files));
	set->synced = args->sync;
	struct strbuf label = STRBUF_INIT;
	sb_addf(&label, "seqio/payload/%s", ctx->volume ? ctx->volume : "");
	set->payload_seed = prng_derive_seed(ctx->seed, label.buf);
	sb_release(&label);

	uint64_t *sizes = xcalloc(set->n ? set->n : 1, sizeof(uint64_t));
	mod_seqio_draw_sizes(&args->sizes, prng_derive_seed(ctx->seed, "seqio/sizes"), sizes, set->n);
	int width = 3;
	for (size_t m = set->n ? set->n - 1 : 0; m >= 1000; m /= 10)
		width++;
	for (size_t i = 0; i < set->n; i++) {
		struct seqio_file *f = &set->files[i];
		set_name(f->name, i, width);
		f->size = sizes[i];
		f->stream = i;
	}
	free(sizes);
	return set;
}

static int write_run(struct rig_ctx *ctx, const void *a)
{
	const struct seqio_args *args = a;
	struct strbuf dir = STRBUF_INIT;
	sb_addf(&dir, "%s/%s", ctx->dir, SEQIO_SUBDIR);

	/* Replace the previous set: forget it, remove its files. */
	set_free(*ctx->volstate);
	*ctx->volstate = NULL;
	if (mkdir(dir.buf, 0777) < 0 && errno != EEXIST) {
		int e = errno;
		sb_addf(ctx->err, "cannot create directory %s: %s", dir.buf, strerror(e));
		sb_release(&dir);
		return -e;
	}
	int rc = clear_dir(dir.buf, ctx->err);
	if (rc < 0) {
		sb_release(&dir);
		return rc;
	}

	struct seqio_set *set = new_set(ctx, args, sb_detach(&dir));
	struct writer w;
	memset(&w, 0, sizeof(w));
	w.align = plat_direct_align();
	w.blk = io_block(ctx, args->block, w.align);
	w.sync = args->sync;
	rc = plat_payload_init(&w.pay, set->payload_seed, w.blk);
	if (rc < 0) {
		sb_addf(ctx->err, "cannot allocate the payload pool for %zu-byte blocks: %s", w.blk,
			strerror(-rc));
		set_free(set);
		return rc;
	}

	size_t n = set->n;
	uint32_t *order = shuffled(prng_derive_seed(ctx->seed, "seqio/write-order"), n);
	double *bytes = xcalloc(n ? n : 1, sizeof(double));
	double *secs = xcalloc(n ? n : 1, sizeof(double));
	struct strbuf path = STRBUF_INIT;
	int noted_direct = 0, noted_tail = 0, cancelled = 0;
	rc = 0;
	for (size_t k = 0; k < n; k++) {
		if (*ctx->cancel) {
			cancelled = 1;
			break;
		}
		const struct seqio_file *f = &set->files[order[k]];
		sb_reset(&path);
		sb_addf(&path, "%s/%s", set->dir, f->name);
		uint64_t ns = 0;
		int applied = 0, tail = 0;
		rc = write_one(ctx, &w, path.buf, f, &ns, &applied, &tail);
		if (rc < 0)
			break;
		if (rc == 1) {
			cancelled = 1;
			rc = 0;
			break;
		}
		if (ctx->direct && !applied && !noted_direct) {
			note_fallback(ctx, set->dir);
			noted_direct = 1;
		}
		if (applied && tail && !noted_tail) {
			struct strbuf v = STRBUF_INIT;
			sb_addf(&v, "the last bytes of files whose size is not a multiple of %zu "
				    "went through a second, buffered descriptor (direct I/O needs "
				    "aligned lengths); sizes and bytes are exact", w.align);
			cell_note(ctx, "tail", v.buf);
			sb_release(&v);
			noted_tail = 1;
		}
		bytes[k] = (double)f->size;
		secs[k] = (double)ns / 1e9;
		mod_place_file(ctx, f->name, path.buf);
		ctx->sink->file(ctx->sink->opaque, f->name, f->size, secs[k]);
	}
	plat_payload_release(&w.pay);
	if (rc == 0 && !cancelled) {
		report(ctx, bytes, secs, n);
		*ctx->volstate = set;
		set = NULL;
	}
	set_free(set);
	sb_release(&path);
	free(order);
	free(bytes);
	free(secs);
	return rc;
}

/* Before reading: push out unsynced data and drop the files' cached pages,
 * outside the timing. */
static int drop_cached(struct rig_ctx *ctx, const struct seqio_set *set)
{
	struct strbuf path = STRBUF_INIT;
	int rc = 0, unsupported = 0;
	for (size_t i = 0; i < set->n && rc == 0; i++) {
		sb_reset(&path);
		sb_addf(&path, "%s/%s", set->dir, set->files[i].name);
		int unused;
		int fd = plat_open_data(path.buf, O_RDONLY, 0, 0, &unused);
		if (fd < 0) {
			sb_addf(ctx->err, "cannot open %s: %s", path.buf, strerror(-fd));
			rc = fd;
			break;
		}
		if (!set->synced) {
			int s = plat_fault_full_sync(fd);
			if (s < 0) {
				sb_addf(ctx->err, "cannot sync %s: %s", path.buf, strerror(-s));
				rc = s;
			}
		}
		if (rc == 0 && plat_drop_file_cache(fd) == -ENOTSUP)
			unsupported = 1;
		close(fd);
	}
	if (rc == 0 && unsupported) {
		struct strbuf v = STRBUF_INIT;
		sb_addf(&v, "per-file cache drop is not available on %s", plat_name());
		cell_note(ctx, "file_cache_drop", v.buf);
		sb_release(&v);
	}
	sb_release(&path);
	return rc;
}

/* Read one file whole; *ns is its time, open to close. */
static int read_one(struct rig_ctx *ctx, const char *path, const struct seqio_file *f,
		    void *buf, size_t blk, uint64_t *ns, int *direct_applied)
{
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	int applied = 0;
	int fd = plat_open_data(path, O_RDONLY, 0, ctx->direct, &applied);
	if (fd < 0) {
		sb_addf(ctx->err, "cannot open %s: %s", path, strerror(-fd));
		return fd;
	}
	*direct_applied = applied;
	int rc = 0;
	uint64_t got = 0;
	while (got < f->size) {
		if (*ctx->cancel) {
			rc = 1;
			break;
		}
		ssize_t r = fault_read(fd, buf, blk);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			sb_addf(ctx->err, "cannot read %s: %s", path, strerror(-rc));
			break;
		}
		if (r == 0) {
			sb_addf(ctx->err, "cannot read %s: it ends after %llu bytes, %llu were written",
				path, (unsigned long long)got, (unsigned long long)f->size);
			rc = -EIO;
			break;
		}
		got += (uint64_t)r;
	}
	if (close(fd) < 0 && rc == 0) {
		rc = -errno;
		sb_addf(ctx->err, "cannot close %s: %s", path, strerror(-rc));
	}
	*ns = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
	return rc;
}

static int read_run(struct rig_ctx *ctx, const void *a)
{
	const struct seqio_args *args = a;
	const struct seqio_set *set = *ctx->volstate;
	if (!set || set->magic != SET_MAGIC) {
		sb_addf(ctx->err, "no file set to read on volume %s: `read` reads what a `write` "
				  "step wrote on the same volume earlier in the layout",
			ctx->volume ? ctx->volume : ctx->dir);
		return -ENOENT;
	}
	size_t align = plat_direct_align();
	size_t blk = io_block(ctx, args->block, align);
	void *buf = plat_alloc_io(blk, align);
	if (!buf) {
		sb_addf(ctx->err, "cannot allocate a %zu-byte read buffer", blk);
		return -ENOMEM;
	}
	memset(buf, 0, blk); /* fault the pages in now, not inside the timing */
	mod_run_time_mark(ctx->time, RT_FLUSH);
	int rc = drop_cached(ctx, set);
	mod_run_time_mark(ctx->time, RT_SETUP);
	if (rc < 0) {
		free(buf);
		return rc;
	}

	size_t n = set->n;
	uint32_t *order = shuffled(prng_derive_seed(ctx->seed, "seqio/read-order"), n);
	double *bytes = xcalloc(n ? n : 1, sizeof(double));
	double *secs = xcalloc(n ? n : 1, sizeof(double));
	struct strbuf path = STRBUF_INIT;
	int cancelled = 0, noted_direct = 0;
	for (size_t k = 0; k < n; k++) {
		if (*ctx->cancel) {
			cancelled = 1;
			break;
		}
		const struct seqio_file *f = &set->files[order[k]];
		sb_reset(&path);
		sb_addf(&path, "%s/%s", set->dir, f->name);
		uint64_t ns = 0;
		int applied = 0;
		rc = read_one(ctx, path.buf, f, buf, blk, &ns, &applied);
		if (rc < 0)
			break;
		if (rc == 1) {
			cancelled = 1;
			rc = 0;
			break;
		}
		if (ctx->direct && !applied && !noted_direct) {
			note_fallback(ctx, set->dir);
			noted_direct = 1;
		}
		bytes[k] = (double)f->size;
		secs[k] = (double)ns / 1e9;
		mod_place_file(ctx, f->name, path.buf);
		ctx->sink->file(ctx->sink->opaque, f->name, f->size, secs[k]);
	}
	if (rc == 0 && !cancelled)
		report(ctx, bytes, secs, n);
	sb_release(&path);
	free(order);
	free(bytes);
	free(secs);
	free(buf);
	return rc;
}

/* The set a write makes: the run's draw of sizes when the seed is known,
 * else the expected total (the largest then: the distribution's bound). */
static void write_estimate(const void *a, struct est_cell *c)
{
	const struct seqio_args *args = a;
	size_t n = (size_t)args->files;
	double total = 0, largest = 0;
	if (c->exact) {
		uint64_t *sizes = xcalloc(n ? n : 1, sizeof(uint64_t));
		mod_seqio_draw_sizes(&args->sizes, prng_derive_seed(c->seed, "seqio/sizes"), sizes, n);
		for (size_t i = 0; i < n; i++) {
			total += (double)sizes[i];
			if ((double)sizes[i] > largest)
				largest = (double)sizes[i];
		}
		free(sizes);
	} else {
		total = units_dist_total(&args->sizes, n);
		largest = (double)args->sizes.hi;
	}
	/* The previous set is removed before the new one is written. */
	c->slot->bytes = total;
	c->slot->files = (double)n;
	c->written = c->moved = c->need = total;
	c->files = c->ops = (double)n;
	c->largest = largest;
}

static void read_estimate(const void *a, struct est_cell *c)
{
	(void)a;
	c->moved = c->slot->bytes;
}

const struct rig_module mod_write = {
	.name = "write",
	.summary = "sequential write of a set of files, each written whole, synced, closed",
	.help = "Writes `files` files of pseudo-random payload in `block` units, each synced "
		"and closed, in an order shuffled per repetition. Sizes are fixed (size), "
		"cycled from a list, or drawn per file from a range (sizes). Files live in "
		"the volume's folder `seqio/`; a new write replaces the previous set.",
	.kind = MOD_WRITES,
	.headline = { "rate", +1 },
	.direct_io = 1,
	.params = write_params,
	.args_size = sizeof(struct seqio_args),
	.metrics = seqio_metrics,
	.run = write_run,
	.release_state = set_free,
	.estimate = write_estimate,
};

const struct rig_module mod_read = {
	.name = "read",
	.summary = "sequential read of the set `write` left on the volume",
	.help = "Reads back, whole and in `block` units, the files the last `write` step "
		"wrote on the same volume, in an order shuffled per repetition.",
	.kind = MOD_READS,
	.headline = { "rate", +1 },
	.direct_io = 1,
	.needs = &mod_write,
	.params = read_params,
	.args_size = sizeof(struct seqio_args),
	.metrics = seqio_metrics,
	.run = read_run,
	.release_state = set_free,
	.estimate = read_estimate,
};
