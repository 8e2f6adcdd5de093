/*
 * sync: copies a source tree to the volume the way a backup tool does, so
 * that the volume ages as a backup destination ages (the enumeration
 * articles 001/002: each cycle the source was changed, then Carbon Copy
 * Cloner copied it to the HFS+ and the APFS destination, then the
 * destinations were enumerated).
 *
 * The source is the tree a `tree` step with `at: DIR` built in DIR, and
 * `churn` with `at: DIR` changed (source.h); the destination is the
 * volume's tree folder, where `tree` builds on a volume, so `enumerate`
 * and `churn` work after a sync as after a tree. The copy (sync_copy.h):
 * new and changed files (size or modification time differ) written to a
 * temporary name in their folder and renamed over, what the source lacks
 * deleted, times copied; the copies honour cache.direct (the source is
 * read buffered, as a copier reads it).
 *
 * Timed: the whole copy (reading both trees' folders, stat'ing every
 * entry, deleting, copying) and one final sync of the volume, as `tree`;
 * earlier dirty data is synced first, untimed. The reads of the source
 * are in the time, as they are in a backup's: the source is the same for
 * every volume of a phase, and each volume's sync reads it, mostly from
 * the cache after the first.
 *
 * Afterwards the volume's tree state (the slot `tree` fills) is the
 * source's description, with the volume's tree as its root: `enumerate`
 * checks its counts against it. The copy's own count of the source
 * (folders, files, bytes) must equal that description, else the cell
 * fails: a source that is not what rig built makes the copy meaningless.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "modules/source.h"
#include "modules/sync_copy.h"
#include "modules/tree.h"
#include "platform/platform.h"

struct sync_args {
	char *from;
};

static const struct rig_param sync_params[] = {
	{ .name = "from", .type = PT_FOLDER, .offset = offsetof(struct sync_args, from),
	  .required = 1, .folder = FOLDER_READS,
	  .help = "the source folder: where a `tree` step with the same `at` built the tree" },
	{ .name = NULL },
};

static const struct rig_metric sync_metrics[] = {
	{ "seconds", "s", "time to make the volume's tree equal to the source, with the final sync", 0 },
	{ "files", "files", "files copied (new or changed; set by the plan and the seed)", 1 },
	{ "deleted", "entries", "files and folders deleted (the source no longer has them; set by the plan and the seed)", 1 },
	{ "bytes", "B", "bytes copied (set by the plan and the seed)", 1 },
	{ "rate", "MB/s", "bytes copied per second of the whole sync", 0 },
	{ NULL, NULL, NULL, 0 },
};

static int sync_run(struct rig_ctx *ctx, const void *a)
{
	const struct sync_args *args = a;
	int rc = mod_source_folder(ctx, args->from, 0);
	if (rc < 0)
		return rc;
	struct tree_state *t = NULL;
	rc = mod_source_load(args->from, &t, NULL, ctx->err);
	if (rc < 0)
		return rc;
	struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT;
	sb_adds(&src, t->root);
	sb_addf(&dst, "%s/%s", ctx->dir, TREE_SUBDIR);
	/* The volume's tree changes: until the copy is whole it is nothing
	 * enumerate or churn may trust. */
	mod_tree_state_free(*ctx->volstate);
	*ctx->volstate = NULL;

	struct sync_opts o = { .direct = ctx->direct_used, .cancel = ctx->cancel };
	struct sync_counts c;
	memset(&c, 0, sizeof(c));
	sync(); /* earlier steps' dirty data is not this step's to flush */
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	rc = mod_sync_tree(src.buf, dst.buf, &o, &c, ctx->err);
	if (rc == 0) {
		int fd = open(dst.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			mod_tree_sync_volume(fd);
			close(fd);
		} else {
			sync();
		}
	}
	uint64_t ns = mod_run_time_mark(ctx->time, RT_SETUP) - t0;

	if (rc == 0 && (c.dirs != t->dirs + 1 || c.files != t->files || c.src_bytes != t->bytes)) {
		sb_addf(ctx->err, "the source in %s is not what was built there: found %llu "
				  "directories, %llu files, %llu bytes, expected %llu directories "
				  "(with the root), %llu files, %llu bytes",
			src.buf, (unsigned long long)c.dirs, (unsigned long long)c.files,
			(unsigned long long)c.src_bytes, (unsigned long long)(t->dirs + 1),
			(unsigned long long)t->files, (unsigned long long)t->bytes);
		rc = -EIO;
	}
	if (ctx->direct_used && c.direct_refused) {
		cell_note(ctx, "direct", "refused by the file system: the copies were written buffered");
		ctx->direct_used = 0;
	} else if (ctx->direct_used && c.tail) {
		cell_note(ctx, "tail", "each copy's last partial block (under 4096 bytes) went through a "
				  "second, buffered descriptor: direct I/O takes whole blocks");
	}
	if (rc == 0) {
		double s = (double)ns / 1e9;
		cell_metric(ctx, "seconds", s, "s");
		cell_metric(ctx, "files", (double)c.copied, "files");
		cell_metric(ctx, "deleted", (double)c.deleted, "entries");
		cell_metric(ctx, "bytes", (double)c.bytes, "B");
		if (s > 0)
			cell_metric(ctx, "rate", (double)c.bytes / s / 1e6, "MB/s");
		/* The volume now holds the source's tree. */
		free(t->root);
		t->root = sb_detach(&dst);
		*ctx->volstate = t;
		t = NULL;
	}
	mod_tree_state_free(t);
	sb_release(&src);
	sb_release(&dst);
	return rc < 0 ? rc : 0;
}

/* For `rig plan`: the first sync of a volume copies the whole source, a
 * later one what the source's last churn changed; each stats both trees
 * (from the cache: the walk before it read them) and writes each copied
 * file to a temporary name before the rename. */
static void sync_estimate(const void *a, struct est_cell *c)
{
	(void)a;
	const struct est_slot *src = c->source;
	if (!src)
		return;
	int first = c->slot->files == 0;
	double bytes = first ? src->bytes : src->part[0];
	double files = first ? src->files : src->part[1];
	c->written = bytes;
	c->files = files;
	c->moved = 2 * bytes; /* read from the source, written to the volume */
	c->stats = (first ? 1 : 2) * src->files;
	c->ops = 2 * files; /* created under a temporary name, renamed */
	c->need = src->bytes + (first || files == 0 ? 0 : bytes / files);
	c->largest = files > 0 ? bytes / files : 0;
	c->slot->bytes = src->bytes;
	c->slot->files = src->files;
}

const struct rig_module mod_sync = {
	.name = "sync",
	.summary = "copies a source tree to the volume as a backup tool does",
	.help = "Makes the volume's tree folder (where `tree` builds) equal to the tree that a "
		"`tree` step with `at` built in the folder `from` (and `churn` with `at` may have "
		"changed since), as rsync -a --delete or Carbon Copy Cloner do: files that are "
		"new or whose size or modification time differ are written to a temporary name "
		"in their folder and renamed over the old one, files and folders the source no "
		"longer has are deleted, times are copied. Copies honour cache.direct. Timed: the "
		"whole copy and one final sync of the volume. Afterwards `enumerate` and `churn` "
		"work on the volume's tree as after a `tree` step.",
	.kind = MOD_WRITES,
	.flags = MOD_LEAVES_NEEDS,
	/* The backup's duration: every volume of a phase receives the same changes. */
	.headline = { "seconds", -1 },
	.direct_io = 1,
	.needs = &mod_tree,
	.params = sync_params,
	.args_size = sizeof(struct sync_args),
	.metrics = sync_metrics,
	.run = sync_run,
	.estimate = sync_estimate,
	.release_state = mod_tree_state_free,
};
