/*
 * tree: a directory tree of files with a size distribution (the enumeration articles 001/002:
 * a million files in 111,000 directories three levels deep, sizes
 * following 1/x^2), built identically on every volume of a phase. The
 * tree's description, shared with enumerate and churn (tree_age.c), is in
 * tree.h.
 *
 * Shape. `dirs` directories over `depth` levels: "evenly" is taken to mean
 * an even fanout, not equal counts per level. The level sizes grow by a
 * common factor b, the root's fanout, with b + b^2 + ... + b^depth = dirs
 * (solved by bisection, rounded so the levels add up exactly and never
 * shrink), and each level's directories are shared out among the parents
 * in contiguous runs differing by at most one. 111,000 directories at
 * depth 3 give 48, 2273 and 108679 per level: every directory has 47-48
 * subdirectories. Rejected: equal counts per level (37,000 folders in the
 * root, each a chain of single subfolders: a shape no disk holds).
 * Files go to the leaf directories only (the deepest level, or the root
 * when depth is 0), contiguous runs again: the seed's "files nested three
 * directories deep"; about 9.2 per leaf there. Rejected: files in every
 * directory (the inner levels would be a few percent of the files anyway,
 * and "nested N deep" would stop being true).
 *
 * Names: directory j of level k is "d<j>-<tag>", file i "f<i>-<tag>", the
 * tag 3 to 12 characters of [a-z0-9] hashed from the tree's seed and the
 * index: unique in their directory, of varied length as real names are,
 * and computable from the index alone. Sizes: file i's size at
 * generation g is units_dist_draw with a uniform from a prng seeded by
 * (seed, i, g). Payload: payload.h's pool seeded from the tree's seed, one
 * stream per (file, generation). Nothing per file is stored but churn's
 * generation counter, so a million-file tree costs two bytes per file.
 * The same seed (the runner gives every volume of a phase the same one)
 * gives the same tree, byte for byte, on every volume and every run.
 *
 * Building (tree_build.c): untimed removal of the previous tree, then
 * timed directories, files and one final sync of the volume, on `threads`
 * threads (leaf directories in parallel; the tree the same for any
 * number). mod_tree_build does it at a given root; with `at` the root is a
 * source folder's (source.c), built once per phase.
 *
 * sync(2) flushes every file system, not only the volume; syncfs would be
 * narrower but is Linux-only and the platform layer has no call for it
 * yet (the untimed sync before the clock keeps others' dirty data out of
 * the timed one as far as it can). On macOS sync(2) does not wait; the
 * F_FULLFSYNC of the root that follows commits the volume's journal and
 * flushes the device, which is the best available without a platform call.
 */
#include "modules/tree.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/prng.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

static const struct rig_param tree_params[] = {
	{ .name = "files", .type = PT_UINT, .offset = offsetof(struct tree_args, files),
	  .def = "10000", .min = 1, .max = 1e9, .help = "number of files" },
	{ .name = "dirs", .type = PT_UINT, .offset = offsetof(struct tree_args, dirs),
	  .def = "100", .min = 0, .max = 1e8, .help = "number of directories below the root, over the levels with an even fanout" },
	{ .name = "depth", .type = PT_UINT, .offset = offsetof(struct tree_args, depth),
	  .def = "2", .min = 0, .max = 64, .help = "levels of directories below the tree's root" },
	{ .name = "sizes", .type = PT_DIST, .offset = offsetof(struct tree_args, sizes),
	  .def = "inverse-square(1K..1M)", .min = 0,
	  .help = "file sizes: fixed, a range (log-uniform), a list, or inverse-square(MIN..MAX)" },
	{ .name = "threads", .type = PT_UINT, .offset = offsetof(struct tree_args, threads),
	  .def = "4", .min = 1, .max = 64,
	  .help = "threads making the leaf directories and their files in parallel (the tree "
		  "is the same for any number)" },
	{ .name = "at", .type = PT_FOLDER, .offset = offsetof(struct tree_args, at),
	  .folder = FOLDER_MAKES,
	  .help = "build the tree in this folder (outside the target), once per phase, instead "
		  "of on the volume: a source for `sync`" },
	{ .name = NULL },
};

/* What tree_check reads (struct rig_module.check_reads). */
static const char *const tree_check_reads[] = { "depth", "dirs", NULL };

static void tree_check(const void *a, struct diag *d, struct mark at)
{
	const struct tree_args *t = a;
	if (t->depth > 0 && t->dirs < t->depth)
		diag_error(d, at, "dirs (%llu) must be at least depth (%llu): every level needs a directory",
			   (unsigned long long)t->dirs, (unsigned long long)t->depth);
	if (t->depth == 0 && t->dirs > 0)
		diag_error(d, at, "dirs (%llu) needs depth of 1 or more",
			   (unsigned long long)t->dirs);
}

static const struct rig_metric tree_metrics[] = {
	{ "files_per_s", "files/s", "files created per second", 0 },
	{ "rate", "MB/s", "payload bytes per second", 0 },
	{ "seconds", "s", "total time", 0 },
	{ "files", "files", "files created (set by the plan)", 1 },
	{ "bytes", "B", "payload bytes written (set by the plan and the seed)", 1 },
	{ NULL, NULL, NULL, 0 },
};

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* --- the tree's description --- */

/* Level sizes n[1..depth] (n[0] = 1): a common fanout b with
 * b + ... + b^depth = dirs; every level at least the one above (so every
 * inner directory has a subdirectory) and the sum exactly dirs. */
static void plan_levels(uint64_t dirs, unsigned depth, uint64_t *n)
{
	n[0] = 1;
	if (depth == 0)
		return;
	double lo = 1.0, hi = (double)dirs;
	for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
		double mid = (lo + hi) / 2, p = 1.0, sum = 0.0;
		for (unsigned k = 1; k <= depth && sum <= (double)dirs; k++) {
			p *= mid;
			sum += p;
		}
		if (sum > (double)dirs)
			hi = mid;
		else
			lo = mid;
	}
	uint64_t left = dirs, prev = 1;
	double target = 1.0;
	for (unsigned k = 1; k <= depth; k++) {
		uint64_t nk;
		if (k == depth) {
			nk = left;
		} else {
			target *= lo;
			double r = floor(target + 0.5);
			nk = r > (double)left ? left : (uint64_t)r;
			/* The levels below must each hold at least this many. */
			uint64_t most = left / (depth - k + 1);
			if (nk > most)
				nk = most;
			if (nk < prev)
				nk = prev; /* <= most: see the invariant below */
		}
		/* left / (levels still to go) >= prev holds by induction, so
		 * every level can be at least the one above. */
		n[k] = nk;
		left -= nk;
		prev = nk;
	}
}

struct tree_state *mod_tree_state_new(const struct tree_args *a, uint64_t seed, const char *root,
				  const char **why)
{
	if (a->depth > TREE_MAX_DEPTH) {
		*why = "depth is more than 64";
		return NULL;
	}
	if (a->depth > 0 && a->dirs < a->depth) {
		*why = "dirs must be at least depth: every level needs a directory";
		return NULL;
	}
	if (a->depth == 0 && a->dirs > 0) {
		*why = "dirs needs a depth of 1 or more";
		return NULL;
	}
	struct tree_state *t = xcalloc(1, sizeof(*t));
	t->magic = TREE_MAGIC;
	t->root = xstrdup(root);
	t->seed = seed;
	t->name_key = prng_derive_seed(seed, "tree/names");
	t->size_key = prng_derive_seed(seed, "tree/sizes");
	t->payload_seed = prng_derive_seed(seed, "tree/payload");
	t->files = a->files;
	t->dirs = a->dirs;
	t->depth = (unsigned)a->depth;
	plan_levels(t->dirs, t->depth, t->level);
	t->sizes = a->sizes;
	if (a->sizes.kind == DIST_LIST) {
		t->sizes.list = xcalloc(a->sizes.nlist ? a->sizes.nlist : 1, sizeof(uint64_t));
		if (a->sizes.nlist)
			memcpy(t->sizes.list, a->sizes.list, a->sizes.nlist * sizeof(uint64_t));
	} else {
		t->sizes.list = NULL;
		t->sizes.nlist = 0;
	}
	t->gen = xcalloc(t->files ? (size_t)t->files : 1, sizeof(uint16_t));
	for (uint64_t i = 0; i < t->files; i++)
		t->bytes += mod_tree_file_size(t, i, 0);
	return t;
}

void mod_tree_state_free(void *state)
{
	struct tree_state *t = state;
	if (!t)
		return;
	free(t->root);
	free(t->sizes.list);
	free(t->gen);
	free(t);
}

size_t mod_tree_churn_bytes(uint64_t files)
{
	return (size_t)((files + 63) / 64) * sizeof(uint64_t);
}

uint64_t mod_tree_file_size(const struct tree_state *t, uint64_t i, unsigned gen)
{
	struct prng r;
	prng_seed(&r, mix64(mix64(t->size_key ^ mix64(i)) ^ ((uint64_t)gen * GOLDEN)));
	return units_dist_draw(&t->sizes, prng_uniform(&r), (size_t)i);
}

uint64_t mod_tree_file_stream(uint64_t i, unsigned gen)
{
	return ((uint64_t)gen << 32) | i; /* files <= 1e9 < 2^32 */
}

uint64_t mod_tree_leaf_of(const struct tree_state *t, uint64_t i)
{
	uint64_t leaves = t->level[t->depth];
	return t->files ? i * leaves / t->files : 0; /* <= 1e9 * 1e8: no overflow */
}

uint64_t mod_tree_leaf_first(const struct tree_state *t, uint64_t leaf)
{
	uint64_t leaves = t->level[t->depth];
	return (leaf * t->files + leaves - 1) / leaves; /* ceil(leaf * files / leaves) */
}

static const char tag_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";

size_t mod_tree_name(const struct tree_state *t, unsigned k, uint64_t j, char buf[TREE_NAME_MAX])
{
	uint64_t h = mix64(t->name_key + (uint64_t)k * GOLDEN + mix64(j));
	uint64_t h2 = mix64(h);
	size_t len = 0;
	buf[len++] = k ? 'd' : 'f';
	char digits[20];
	int nd = 0;
	do {
		digits[nd++] = (char)('0' + j % 10);
		j /= 10;
	} while (j);
	while (nd)
		buf[len++] = digits[--nd];
	buf[len++] = '-';
	unsigned tag = 3 + (unsigned)(((h2 >> 32) * 10) >> 32); /* 3..12 */
	for (unsigned c = 0; c < tag; c++) { /* 36^12 < 2^64: h has enough */
		buf[len++] = tag_chars[h % 36];
		h /= 36;
	}
	buf[len] = 0;
	return len;
}

/* Directory indexes of the chain above directory j of level k, into idx. */
static void chain(const struct tree_state *t, unsigned k, uint64_t j, uint64_t *idx)
{
	idx[k] = j;
	for (unsigned m = k; m > 1; m--)
		idx[m - 1] = idx[m] * t->level[m - 1] / t->level[m];
}

size_t mod_tree_dir_path(const struct tree_state *t, unsigned k, uint64_t j, char buf[TREE_PATH_MAX])
{
	uint64_t idx[TREE_MAX_DEPTH + 1];
	chain(t, k, j, idx);
	size_t len = 0;
	for (unsigned m = 1; m <= k; m++) {
		if (m > 1)
			buf[len++] = '/';
		len += mod_tree_name(t, m, idx[m], buf + len);
	}
	buf[len] = 0;
	return len;
}

size_t mod_tree_file_path(const struct tree_state *t, uint64_t i, char buf[TREE_PATH_MAX],
		      size_t *dir_len)
{
	size_t len = 0;
	if (t->depth) {
		len = mod_tree_dir_path(t, t->depth, mod_tree_leaf_of(t, i), buf);
		buf[len++] = '/';
	}
	if (dir_len)
		*dir_len = len;
	return len + mod_tree_name(t, 0, i, buf + len);
}

/* --- shared by tree and churn --- */

int mod_tree_write_payload(struct rig_ctx *ctx, struct payload *pay, unsigned char *buf, int fd,
		       uint64_t stream, uint64_t size)
{
	for (uint64_t off = 0; off < size;) {
		size_t len = size - off < TREE_BLOCK ? (size_t)(size - off) : TREE_BLOCK;
		const unsigned char *p = buf;
		if (buf)
			plat_payload_copy(pay, stream, off, buf, len);
		else
			p = plat_payload_block(pay, stream, off, len);
		for (size_t done = 0; done < len;) {
			ssize_t w = fault_write(fd, p + done, len - done);
			if (w < 0) {
				if (errno != EINTR)
					return -errno;
				if (*ctx->cancel)
					return 1;
				continue;
			}
			if (w == 0)
				return -EIO;
			done += (size_t)w;
		}
		off += len;
		if (off < size && *ctx->cancel)
			return 1;
	}
	return 0;
}

void mod_tree_sync_volume(int rootfd)
{
	sync();
	(void)plat_full_sync(rootfd); /* best effort: some file systems refuse it on folders */
}

static int tree_run(struct rig_ctx *ctx, const void *a)
{
	const struct tree_args *args = a;
	if (args->at)
		return mod_source_tree_run(ctx, args);
	struct strbuf root = STRBUF_INIT;
	sb_addf(&root, "%s/%s", ctx->dir, TREE_SUBDIR);

	/* Replace the previous tree: forget it, remove it (untimed). */
	mod_tree_state_free(*ctx->volstate);
	*ctx->volstate = NULL;
	struct tree_state *t;
	struct tree_built r;
	int rc = mod_tree_build(ctx, args, root.buf, &t, &r);
	sb_release(&root);
	if (rc == 0) {
		double s = (double)r.ns / 1e9;
		if (s > 0) {
			cell_metric(ctx, "files_per_s", (double)r.files / s, "files/s");
			cell_metric(ctx, "rate", (double)r.bytes / s / 1e6, "MB/s");
		}
		cell_metric(ctx, "seconds", s, "s");
		cell_metric(ctx, "files", (double)r.files, "files");
		cell_metric(ctx, "bytes", (double)r.bytes, "B");
		*ctx->volstate = t;
	}
	/* Cancelled or failed: no state, so enumerate and churn refuse the
	 * partial tree; the next tree step removes it. */
	return rc < 0 ? rc : 0;
}

/* The tree a cell builds: with the run's seed, the sizes of its files
 * exactly as mod_tree_state_new draws them; else the expected total. The
 * previous tree is removed first. With `at` it is built in the source
 * folder, once per phase, and the volume is not touched. */
static void tree_estimate(const void *a, struct est_cell *c)
{
	const struct tree_args *args = a;
	if (args->at && c->again)
		return;
	double total = 0, largest = 0;
	if (c->exact) {
		struct tree_state t = { .size_key = prng_derive_seed(c->seed, "tree/sizes"),
					.sizes = args->sizes };
		for (uint64_t i = 0; i < args->files; i++) {
			double sz = (double)mod_tree_file_size(&t, i, 0);
			total += sz;
			if (sz > largest)
				largest = sz;
		}
	} else {
		total = units_dist_total(&args->sizes, args->files);
		largest = (double)args->sizes.hi;
	}
	if (args->at && c->source) { /* off the target: time, not the volume's bytes */
		c->ops_off = (double)(args->files + args->dirs);
		c->source->bytes = total;
		c->source->files = (double)args->files;
		c->source->part[0] = c->source->part[1] = 0;
		c->moved = total;
		return;
	}
	c->ops = (double)(args->files + args->dirs);
	c->slot->bytes = total;
	c->slot->files = (double)args->files;
	c->written = c->moved = c->need = total;
	c->files = (double)args->files;
	c->largest = largest;
}

const struct rig_module mod_tree = {
	.name = "tree",
	.summary = "builds a directory tree of files with a size distribution",
	.help = "Creates `dirs` directories over `depth` levels (an even fanout: every "
		"directory has about the same number of subdirectories) and `files` files "
		"spread evenly over the leaf directories, in the volume's folder `tree/`. "
		"Names, sizes and payload all come from the seed, so every volume of a phase "
		"gets the identical tree, whatever the number of `threads` building it (leaf "
		"directories are made and filled in parallel). Timed: creating the "
		"directories and files, writing "
		"them (buffered, one write per file up to 1 MiB) and one final sync of the "
		"volume; files are not synced one by one. A new tree replaces the previous "
		"one, removed outside the timing. With `at` the tree is built in that folder "
		"(outside the target) instead, by the first cell of the phase only, as a source "
		"for `sync`; those cells record a note `source` and no samples.",
	.kind = MOD_WRITES,
	.flags = MOD_PREPARES,
	.headline = { "files_per_s", +1 },
	.params = tree_params,
	.args_size = sizeof(struct tree_args),
	.metrics = tree_metrics,
	.check = tree_check,
	.check_reads = tree_check_reads,
	.run = tree_run,
	.release_state = mod_tree_state_free,
	.estimate = tree_estimate,
};
