/*
 * enumerate and churn: walking the tree `tree` built, and aging it (the
 * enumeration article 001's backup tool and its 5%-per-cycle replacements). Both work on the
 * tree's state in the volume's `tree` slot (tree.h).
 *
 * enumerate walks <dir>/tree with mod_walk_tree in the step's `order` (walk.h:
 * inode, each directory's entries stat'ed in inode-number order as GNU du
 * does, the default because plans written before the choice existed must
 * keep measuring what they measured; or fts, the C library's fts(3) in
 * directory order as the enumeration article's tool walked; no symlinks
 * followed, no chdir either way), which stats every entry as backup tools
 * do, and counts directories, files and bytes; the counts must equal what
 * the tree holds (dirs + 1 for the root, files, the bytes churn keeps
 * current), else the cell fails: a tree that is not what was built makes
 * the time meaningless. Timed: the whole walk. `cache` says what the walk
 * starts from: drop (cold: the runner's flush before read-type steps, or
 * the step's own drop when the runner made none; make_cold) or keep (warm:
 * an untimed walk first; make_warm); the cell's note `cache` says which
 * was done, and when a drop could not be. The walk holds
 * the entries of the directories on the current path only, so its memory
 * follows the widest directory, not the tree.
 *
 * churn replaces round(fraction x files) files (at least one), chosen
 * with Floyd's algorithm from a prng seeded by the cell's seed, repetition
 * and cycle, so both volumes of a phase get the same replacements and
 * every cycle new ones. Each file's generation advances: its new size is
 * drawn from the same distribution and its payload is a new stream
 * (payload.h's rule for overwrites). Each replacement is atomic: write a
 * temporary file (.rig-tmp) in the file's own directory, fsync it
 * (plat_full_sync), rename it over the old name; a reader sees the old
 * file or the new one, whole. Files are replaced in index order, which is
 * directory order, as a backup tool applying changes would. Timed: the
 * replacements and one final sync of the volume (the renames and the
 * freed blocks), as `tree`; the selection and the payload pool are made
 * before the clock. The tree's expected bytes follow every replacement,
 * so an interrupted or failed churn leaves state and disk agreeing.
 * Memory: a bitmap of one bit per file while the cell runs. The
 * replacements themselves are mod_tree_churn, which churn with `at` (a
 * source folder, source.c) applies to the folder's tree the same way.
 */
#include "modules/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/prng.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "modules/walk.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"

#define TMP_NAME TREE_TMP_NAME

/* In enum enumerate_order's and enum enumerate_cache's order. */
static const char *const enumerate_orders[] = { "inode", "fts", NULL };
static const char *const enumerate_caches[] = { "drop", "keep", NULL };

static const struct rig_param enumerate_params[] = {
	{ .name = "order", .type = PT_ENUM, .offset = offsetof(struct enumerate_args, order),
	  .def = "inode", .choices = enumerate_orders,
	  .help = "inode: each directory read whole, its entries stat'ed in inode-number order "
		  "(as du); fts: fts(3), physical, entries in directory order (as the "
		  "enumeration article's tool)" },
	{ .name = "cache", .type = PT_ENUM, .offset = offsetof(struct enumerate_args, cache),
	  .def = "drop", .choices = enumerate_caches,
	  .help = "drop: a cold walk (the runner's flush before the step, else the step's own: "
		  "sync, then drop_caches or purge; needs root); keep: a warm walk (an untimed "
		  "walk in the same order just before the timed one)" },
	{ .name = NULL },
};

/* What each order is, in the cell's notes (the order is the method). */
static const char *const enumerate_order_notes[] = {
	"inode: each directory read whole, its entries stat'ed in inode-number order, then "
	"its subdirectories (as du)",
	"fts: fts(3) with FTS_PHYSICAL | FTS_NOCHDIR, entries in directory order, depth first "
	"(as the enumeration article's tool)",
};

static const struct rig_metric enumerate_metrics[] = {
	{ "seconds", "s", "time to walk and stat the whole tree", 0 },
	{ "entries_per_s", "entries/s", "entries visited per second", 0 },
	{ "entries", "entries", "files and directories visited (set by the tree)", 1 },
	{ NULL, NULL, NULL, 0 },
};

static const struct rig_param churn_params[] = {
	{ .name = "fraction", .type = PT_PERCENT, .offset = offsetof(struct churn_args, fraction),
	  .def = "5%", .min = 0.0001, .max = 100, .help = "share of the tree's files replaced" },
	{ .name = "at", .type = PT_FOLDER, .offset = offsetof(struct churn_args, at),
	  .folder = FOLDER_WORKS,
	  .help = "replace them in the tree that `tree` built in this folder, once per phase, "
		  "instead of on the volume" },
	{ .name = NULL },
};

static const struct rig_metric churn_metrics[] = {
	{ "seconds", "s", "total time", 0 },
	{ "files_per_s", "files/s", "files replaced per second", 0 },
	{ "files", "files", "files replaced (set by the plan)", 1 },
	{ NULL, NULL, NULL, 0 },
};

static struct tree_state *get_tree(struct rig_ctx *ctx, const char *module)
{
	struct tree_state *t = *ctx->volstate;
	if (t && t->magic == TREE_MAGIC)
		return t;
	sb_addf(ctx->err, "no tree to %s on volume %s: `%s` works on what a `tree` step built on "
			  "the same volume, or a step that copies a tree there, earlier in the "
			  "layout",
		module, ctx->volume ? ctx->volume : ctx->dir, module);
	return NULL;
}

/* --- enumerate --- */

/*
 * cache: drop. A stat walk reads directories and inodes, which only the
 * system-wide drop (plat_drop_caches: drop_caches, purge) or a remount
 * evicts; plat_drop_file_cache drops a file's data pages, which the walk
 * never reads, so it would make nothing colder. The runner has already
 * done one or both before this read-type step when cache.flush or
 * cache.remount asked (ctx->cache_method names them): that is the cold
 * start. Else (cache.flush: false, or the runner's drop failed) the step
 * drops the caches itself. Without root nothing can be dropped: the walk
 * runs as the runner's steps then run, and the note says it may be warm.
 */
static void make_cold(struct rig_ctx *ctx)
{
	struct strbuf v = STRBUF_INIT;
	if (ctx->cache_method && *ctx->cache_method) {
		sb_addf(&v, "cold: %s before the cell", ctx->cache_method);
	} else {
		const char *name = "the cache drop";
		struct strbuf why = STRBUF_INIT;
		mod_run_time_mark(ctx->time, RT_FLUSH);
		int rc = plat_drop_caches(ctx->sp, &name, &why);
		mod_run_time_mark(ctx->time, RT_SETUP);
		if (rc == 0)
			sb_addf(&v, "cold: %s by the step, just before the walk", name);
		else
			sb_addf(&v, "not cold: %s was asked but not applied (%s), so the walk may "
				    "be served from memory",
				name, why.len ? why.buf : rc == -EPERM ? "not root" : strerror(-rc));
		sb_release(&why);
	}
	cell_note(ctx, "cache", v.buf);
	sb_release(&v);
}

/* cache: keep. An untimed walk in the same order puts what the timed walk
 * reads in the cache, as far as memory holds it. 0, 1 when cancelled, or
 * a negative errno with the reason in ctx->err. */
static int make_warm(struct rig_ctx *ctx, const struct tree_state *t, const struct walk_opts *o)
{
	struct walk_counts c = { 0, 0, 0, 0 };
	int rc = mod_walk_tree(t->root, o, &c, ctx->err);
	if (rc)
		return rc;
	struct strbuf v = STRBUF_INIT;
	sb_adds(&v, "warm: an untimed walk in the same order just before the timed one");
	if (ctx->cache_method && *ctx->cache_method)
		sb_addf(&v, " (after the cell's %s)", ctx->cache_method);
	cell_note(ctx, "cache", v.buf);
	sb_release(&v);
	return 0;
}

static int enumerate_run(struct rig_ctx *ctx, const void *a)
{
	const struct enumerate_args *args = a;
	const struct tree_state *t = get_tree(ctx, "enumerate");
	if (!t)
		return -ENOENT;
	cell_note(ctx, "order", enumerate_order_notes[args->order]);
	struct walk_opts o = {
		.order = args->order == ENUMERATE_FTS ? WALK_FTS : WALK_INODE,
		.cancel = ctx->cancel,
	};
	int rc = 0;
	if (args->cache == ENUMERATE_KEEP)
		rc = make_warm(ctx, t, &o);
	else
		make_cold(ctx);
	if (rc)
		return rc < 0 ? rc : 0;

	struct walk_counts c = { 0, 0, 0, 0 };
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	rc = mod_walk_tree(t->root, &o, &c, ctx->err);
	uint64_t ns = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
	if (rc)
		return rc < 0 ? rc : 0;

	if (c.dirs != t->dirs + 1 || c.files != t->files || c.bytes != t->bytes || c.other) {
		sb_addf(ctx->err, "the tree in %s is not what was built: found %llu directories, "
				  "%llu files, %llu bytes",
			t->root, (unsigned long long)c.dirs, (unsigned long long)c.files,
			(unsigned long long)c.bytes);
		if (c.other)
			sb_addf(ctx->err, " and %llu other entries", (unsigned long long)c.other);
		sb_addf(ctx->err, ", expected %llu directories (with the root), %llu files, %llu bytes",
			(unsigned long long)(t->dirs + 1), (unsigned long long)t->files,
			(unsigned long long)t->bytes);
		return -EIO;
	}
	double s = (double)ns / 1e9;
	uint64_t entries = c.dirs + c.files;
	cell_metric(ctx, "seconds", s, "s");
	if (s > 0)
		cell_metric(ctx, "entries_per_s", (double)entries / s, "entries/s");
	cell_metric(ctx, "entries", (double)entries, "entries");
	return 0;
}

/* --- churn --- */

/* k distinct files of n, uniformly (Floyd's algorithm), as bits. */
static void select_files(uint64_t *bits, uint64_t n, uint64_t k, uint64_t seed)
{
	struct prng r;
	prng_seed(&r, seed);
	for (uint64_t j = n - k; j < n; j++) {
		uint64_t x = prng_below(&r, j + 1);
		if (bits[x >> 6] >> (x & 63) & 1)
			x = j;
		bits[x >> 6] |= 1ull << (x & 63);
	}
}

struct churner {
	struct rig_ctx *ctx;
	struct tree_state *t;
	struct payload pay;
	int rootfd;
	char path[TREE_PATH_MAX];
	char tmp[TREE_PATH_MAX + sizeof(TMP_NAME)];
};

static int churn_error(struct churner *ch, const char *op, const char *path, int e)
{
	sb_addf(ch->ctx->err, "cannot %s %s/%s: %s", op, ch->t->root, path, strerror(e));
	return -e;
}

/* Replace file i atomically. 0, 1 when cancelled, or a negative errno. */
static int replace_one(struct churner *ch, uint64_t i)
{
	struct tree_state *t = ch->t;
	unsigned gen = t->gen[i];
	if (gen == UINT16_MAX) {
		mod_tree_file_path(t, i, ch->path, NULL);
		sb_addf(ch->ctx->err, "cannot replace %s/%s again: it has been replaced %u times, "
				      "the most the tree's state counts",
			t->root, ch->path, gen);
		return -EOVERFLOW;
	}
	size_t dir_len;
	mod_tree_file_path(t, i, ch->path, &dir_len);
	memcpy(ch->tmp, ch->path, dir_len);
	memcpy(ch->tmp + dir_len, TMP_NAME, sizeof(TMP_NAME));

	uint64_t size = mod_tree_file_size(t, i, gen + 1);
	int fd = openat(ch->rootfd, ch->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return churn_error(ch, "create", ch->tmp, errno);
	int rc = mod_tree_write_payload(ch->ctx, &ch->pay, NULL, fd, mod_tree_file_stream(i, gen + 1), size);
	if (rc < 0) {
		churn_error(ch, "write", ch->tmp, -rc);
	} else if (rc == 0) {
		int s = plat_fault_full_sync(fd);
		if (s < 0)
			rc = churn_error(ch, "sync", ch->tmp, -s);
	}
	if (close(fd) < 0 && rc == 0)
		rc = churn_error(ch, "close", ch->tmp, errno);
	if (rc == 0 && renameat(ch->rootfd, ch->tmp, ch->rootfd, ch->path) < 0) {
		int e = errno;
		sb_addf(ch->ctx->err, "cannot rename %s/%s over %s/%s: %s", t->root, ch->tmp,
			t->root, ch->path, strerror(e));
		rc = -e;
	}
	if (rc) {
		(void)unlinkat(ch->rootfd, ch->tmp, 0); /* the old file is still whole */
		return rc;
	}
	t->bytes = t->bytes - mod_tree_file_size(t, i, gen) + size;
	t->gen[i] = (uint16_t)(gen + 1);
	t->replaced++;
	return 0;
}

int mod_tree_churn(struct rig_ctx *ctx, struct tree_state *t, double fraction, uint64_t *done_out,
	       uint64_t *ns_out)
{
	*done_out = *ns_out = 0;
	uint64_t n = t->files;
	double want = floor((double)n * fraction / 100.0 + 0.5);
	uint64_t k = want < 1 ? 1 : want > (double)n ? n : (uint64_t)want;
	if (n == 0)
		k = 0;
	if (want < 1 && n) {
		struct strbuf v = STRBUF_INIT;
		sb_addf(&v, "%g%% of %llu files rounds to none: one file replaced", fraction,
			(unsigned long long)n);
		ctx->sink->note(ctx->sink->opaque, "fraction", v.buf);
		sb_release(&v);
	}

	/* Untimed: the selection, the payload pool, earlier dirty data. */
	uint64_t *bits = xcalloc(mod_tree_churn_bytes(n) ? mod_tree_churn_bytes(n) / 8 : 1, 8);
	struct strbuf label = STRBUF_INIT;
	sb_addf(&label, "churn/select/rep%u/cycle%u", ctx->rep, ctx->cycle);
	select_files(bits, n, k, prng_derive_seed(ctx->seed, label.buf));
	sb_release(&label);
	struct churner *ch = xcalloc(1, sizeof(*ch));
	ch->ctx = ctx;
	ch->t = t;
	int rc = plat_payload_init(&ch->pay, t->payload_seed, TREE_BLOCK);
	if (rc < 0) {
		sb_addf(ctx->err, "cannot allocate the payload pool: %s", strerror(-rc));
		free(ch);
		free(bits);
		return rc;
	}
	ch->rootfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ch->rootfd < 0) {
		rc = -errno;
		sb_addf(ctx->err, "cannot open directory %s: %s", t->root, strerror(-rc));
		plat_payload_release(&ch->pay);
		free(ch);
		free(bits);
		return rc;
	}
	if (ctx->direct)
		ctx->sink->note(ctx->sink->opaque, "direct",
				"not used by churn: replacements are written buffered and each "
				"is synced before its rename");
	sync();

	uint64_t done = 0, words = (n + 63) / 64;
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	for (uint64_t w = 0; w < words && rc == 0; w++) {
		for (uint64_t word = bits[w]; word && rc == 0; word &= word - 1) {
			if (*ctx->cancel) {
				rc = 1;
				break;
			}
			rc = replace_one(ch, w * 64 + (uint64_t)__builtin_ctzll(word));
			if (rc == 0)
				done++;
		}
	}
	if (rc == 0)
		mod_tree_sync_volume(ch->rootfd);
	*ns_out = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
	*done_out = done;
	close(ch->rootfd);
	plat_payload_release(&ch->pay);
	free(ch);
	free(bits);
	return rc;
}

static int churn_run(struct rig_ctx *ctx, const void *a)
{
	const struct churn_args *args = a;
	if (args->at)
		return mod_source_churn_run(ctx, args);
	struct tree_state *t = get_tree(ctx, "churn");
	if (!t)
		return -ENOENT;
	uint64_t done, ns;
	int rc = mod_tree_churn(ctx, t, args->fraction, &done, &ns);
	if (rc)
		return rc < 0 ? rc : 0;
	double s = (double)ns / 1e9;
	cell_metric(ctx, "seconds", s, "s");
	if (s > 0)
		cell_metric(ctx, "files_per_s", (double)done / s, "files/s");
	cell_metric(ctx, "files", (double)done, "files");
	return 0;
}

/* A walk stats every file: from a cold cache at the file system's walk
 * rate; with cache: keep, twice from the cache (the untimed warm-up, then
 * the walk). */
static void enumerate_estimate(const void *a, struct est_cell *c)
{
	const struct enumerate_args *args = a;
	if (args->cache == ENUMERATE_KEEP)
		c->stats = 2 * c->slot->files;
	else
		c->walk = c->slot->files;
}

/* The files churn replaces, each at the tree's mean size now (the new
 * sizes come from the same distribution), written under a temporary name
 * beside the old file before the rename: the tree holds one more file at
 * the peak. */
static void churn_estimate(const void *a, struct est_cell *c)
{
	const struct churn_args *args = a;
	if (args->at && c->again) /* in the source folder, once per phase */
		return;
	struct est_slot *s = args->at && c->source ? c->source : c->slot;
	double n = s->files;
	double k = floor(n * args->fraction / 100.0 + 0.5);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	double mean = n > 0 ? s->bytes / n : 0;
	c->moved = k * mean;
	if (s == c->source) { /* what the next sync of each volume copies */
		c->ops_off = 2 * k;
		s->part[0] = k * mean;
		s->part[1] = k;
		return;
	}
	c->ops = 2 * k;
	c->written = k * mean;
	c->files = k;
	c->need = c->slot->bytes + mean;
	c->largest = mean;
}

const struct rig_module mod_enumerate = {
	.name = "enumerate",
	.summary = "walks the whole tree, stats every entry, checks the counts",
	.help = "Walks the tree the last `tree` step built (no symlinks followed, no chdir), "
		"stats every entry as backup tools do, and checks the counts of directories, "
		"files and bytes against what the tree holds after any churn: a mismatch fails "
		"the cell. entries counts the files and the directories, the tree's root "
		"included. `order` is the walk, `cache` the state it starts from: cold (the "
		"runner's flush before read steps, or the step's own drop when the plan's "
		"cache.flush made none) or warm (an untimed walk first). Each cell's notes "
		"`order` and `cache` say what was done, and when a drop could not be.",
	.kind = MOD_READS,
	/* As the source article plots it: the time to walk the tree. */
	.headline = { "seconds", -1 },
	.needs = &mod_tree,
	.params = enumerate_params,
	.args_size = sizeof(struct enumerate_args),
	.metrics = enumerate_metrics,
	.run = enumerate_run,
	.release_state = mod_tree_state_free,
	.estimate = enumerate_estimate,
};

const struct rig_module mod_churn = {
	.name = "churn",
	.summary = "replaces a random fraction of the tree's files, each atomically",
	.help = "Replaces `fraction` of the tree's files (at least one), chosen by the seed per "
		"repetition and cycle and the same on every volume: each new version has a new "
		"size from the tree's distribution and new payload, is written to a temporary "
		"name in the file's directory, synced and renamed over the old one. Timed: the "
		"replacements and one final sync of the volume. With `at` it replaces them in "
		"the tree `tree` built in that folder instead, by the first cell of the phase "
		"only (the same files and versions churn would make on a volume); those cells "
		"record a note `source` and no samples.",
	.kind = MOD_WRITES,
	.headline = { "files_per_s", +1 },
	.needs = &mod_tree,
	.params = churn_params,
	.args_size = sizeof(struct churn_args),
	.metrics = churn_metrics,
	.run = churn_run,
	.release_state = mod_tree_state_free,
	.estimate = churn_estimate,
};
