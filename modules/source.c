/*
 * Source folders (source.h): the folder and its state file, and the cells
 * of `tree` and `churn` with `at`.
 *
 * Once per phase. A cell compares its instance with the one the state file
 * recorded: equal, an earlier cell of the same phase (or the run before a
 * resume) did the work, and the cell records the note `source` and no
 * samples. Otherwise it does the work and records the note `source` with
 * what it did and how long it took, and no samples either: its time is
 * the source disk's, not its volume's, and the volume that happens to be
 * first in the phase (which `order` varies) would otherwise carry a figure
 * the others lack. The state file is written after the change, so a cell
 * cut off midway leaves the previous instance: `tree` then builds afresh
 * (it removes what is there first), and `churn` applies the same
 * replacements again (each file's new version is a function of its index
 * and generation, and the generations are the recorded ones), so the
 * result is the same as if it had not been cut off. With `order:
 * sequential` the cells of a phase are not together: each volume's cells
 * then find another instance recorded and rebuild and change the source
 * again, identically (a phase's cells share the seed), so every volume
 * still receives the same changes.
 *
 * The state file: a fixed header (magic, byte-order mark, the tree's
 * parameters and seed, its bytes and replacements so far, the lengths of
 * what follows), the instance, the size list of a list distribution, and
 * the per-file generations: two bytes per file.
 */
#include "modules/source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "modules/tree.h"

#define SOURCE_MAGIC "rigsrc1\n"
#define SOURCE_BOM 0x01020304u

struct source_header {
	char magic[8];
	uint32_t bom;
	uint32_t dist_kind;
	uint64_t seed, files, dirs, depth, lo, hi, nlist;
	uint64_t bytes, replaced;
	uint64_t instance_len;
};

/* --- the state file --- */

int mod_source_load(const char *dir, struct tree_state **t, char **instance, struct strbuf *err)
{
	*t = NULL;
	if (instance)
		*instance = NULL;
	struct strbuf path = STRBUF_INIT, data = STRBUF_INIT, root = STRBUF_INIT;
	sb_addf(&path, "%s/%s", dir, SOURCE_STATE);
	int rc = files_read(path.buf, &data);
	if (rc < 0 && rc != -ENOENT)
		sb_addf(err, "cannot read %s: %s", path.buf, strerror(-rc));
	if (rc == -ENOENT)
		sb_addf(err, "no tree in %s (no %s): a `tree` step with `at: %s` builds one", dir,
			SOURCE_STATE, dir);
	struct source_header h;
	if (rc == 0 && data.len < sizeof(h))
		rc = -EINVAL;
	if (rc == 0) {
		memcpy(&h, data.buf, sizeof(h));
		uint64_t want = sizeof(h);
		int ok = !memcmp(h.magic, SOURCE_MAGIC, 8) && h.bom == SOURCE_BOM &&
			 h.instance_len < 4096 && h.nlist < (1u << 20) && h.files <= 1000000000u &&
			 h.depth <= TREE_MAX_DEPTH;
		if (ok)
			want += h.instance_len + h.nlist * 8 + h.files * 2;
		if (!ok || data.len != want)
			rc = -EINVAL;
	}
	if (rc == -EINVAL)
		sb_addf(err, "%s is not a state file this rig wrote", path.buf);
	if (rc == 0) {
		const char *p = data.buf + sizeof(h);
		char *inst = xmalloc(h.instance_len + 1);
		memcpy(inst, p, h.instance_len);
		inst[h.instance_len] = 0;
		p += h.instance_len;
		struct tree_args a = { .files = h.files, .dirs = h.dirs, .depth = h.depth };
		a.sizes.kind = (enum dist_kind)h.dist_kind;
		a.sizes.lo = h.lo;
		a.sizes.hi = h.hi;
		a.sizes.nlist = (size_t)h.nlist;
		if (h.nlist) {
			a.sizes.list = xcalloc((size_t)h.nlist, sizeof(uint64_t));
			memcpy(a.sizes.list, p, (size_t)h.nlist * 8);
			p += h.nlist * 8;
		}
		sb_addf(&root, "%s/%s", dir, TREE_SUBDIR);
		const char *why = NULL;
		*t = mod_tree_state_new(&a, h.seed, root.buf, &why);
		free(a.sizes.list);
		if (!*t) {
			sb_addf(err, "%s describes no tree: %s", path.buf, why);
			rc = -EINVAL;
			free(inst);
		} else {
			memcpy((*t)->gen, p, (size_t)h.files * 2);
			(*t)->bytes = h.bytes;
			(*t)->replaced = h.replaced;
			if (instance)
				*instance = inst;
			else
				free(inst);
		}
	}
	sb_release(&path);
	sb_release(&data);
	sb_release(&root);
	return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write t as dir's state, instance the change just made (NULL: none).
 * 0 or a negative errno with the reason in err. */
static int source_save(const char *dir, const struct tree_state *t, const char *instance,
		       struct strbuf *err)
{
	if (!instance)
		instance = "";
	struct source_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SOURCE_MAGIC, 8);
	h.bom = SOURCE_BOM;
	h.dist_kind = (uint32_t)t->sizes.kind;
	h.seed = t->seed;
	h.files = t->files;
	h.dirs = t->dirs;
	h.depth = t->depth;
	h.lo = t->sizes.lo;
	h.hi = t->sizes.hi;
	h.nlist = t->sizes.nlist;
	h.bytes = t->bytes;
	h.replaced = t->replaced;
	h.instance_len = strlen(instance);
	struct strbuf data = STRBUF_INIT, path = STRBUF_INIT, tmp = STRBUF_INIT;
	sb_add(&data, &h, sizeof(h));
	sb_add(&data, instance, h.instance_len);
	if (h.nlist)
		sb_add(&data, t->sizes.list, (size_t)h.nlist * 8);
	sb_add(&data, t->gen, (size_t)t->files * 2);
	sb_addf(&path, "%s/%s", dir, SOURCE_STATE);
	sb_addf(&tmp, "%s.tmp", path.buf);
	int rc = 0;
	int fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
	} else {
		rc = write_all(fd, data.buf, data.len);
		if (rc == 0 && fsync(fd) < 0)
			rc = -errno;
		if (close(fd) < 0 && rc == 0)
			rc = -errno;
		if (rc == 0 && rename(tmp.buf, path.buf) < 0)
			rc = -errno;
		if (rc)
			unlink(tmp.buf);
	}
	if (rc)
		sb_addf(err, "cannot write %s: %s", path.buf, strerror(-rc));
	sb_release(&data);
	sb_release(&path);
	sb_release(&tmp);
	return rc;
}

/* --- the folder --- */

/* Make dir and its missing parents. */
/* 1 when dir has no entries, 0 when it has, or a negative errno. */
static int is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct dirent *de;
	int empty = 1;
	while (empty && (de = readdir(d)))
		empty = de->d_name[0] == '.' &&
			(!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]));
	closedir(d);
	return empty;
}

static int path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return 1;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

int mod_source_folder(struct rig_ctx *ctx, const char *dir, int create)
{
	struct strbuf marker = STRBUF_INIT;
	sb_addf(&marker, "%s/%s", dir, SOURCE_MARKER);
	int rc = 0;
	struct stat st;
	if (dir[0] != '/') {
		sb_addf(ctx->err, "source folder %s is not an absolute path", dir);
		rc = -EINVAL;
	} else if (stat(dir, &st) < 0) {
		rc = -errno;
		if (rc != -ENOENT || !create)
			sb_addf(ctx->err, "cannot use source folder %s: %s%s", dir, strerror(-rc),
				rc == -ENOENT ? " (a `tree` step with `at` makes it)" : "");
		else if ((rc = files_mkdirs(dir, NULL)) < 0)
			sb_addf(ctx->err, "cannot create source folder %s: %s", dir, strerror(-rc));
	} else if (!S_ISDIR(st.st_mode)) {
		sb_addf(ctx->err, "source folder %s is not a folder", dir);
		rc = -ENOTDIR;
	}
	/* Inside the volume's folder, or around it: refused. */
	char *real = rc == 0 ? realpath(dir, NULL) : NULL;
	char *vol = rc == 0 && ctx->dir ? realpath(ctx->dir, NULL) : NULL;
	if (real && vol && (path_within(real, vol) || path_within(vol, real))) {
		sb_addf(ctx->err, "source folder %s is %s the volume's folder %s: a source folder "
				  "must be outside the target", dir,
			path_within(real, vol) ? "inside" : "around", ctx->dir);
		rc = -EINVAL;
	}
	free(real);
	free(vol);
	if (rc == 0 && access(marker.buf, F_OK) < 0) {
		int empty = create ? is_empty(dir) : 0;
		if (empty < 0) {
			rc = empty;
			sb_addf(ctx->err, "cannot read source folder %s: %s", dir, strerror(-rc));
		} else if (!empty) {
			sb_addf(ctx->err, "source folder %s %s: rig owns a source folder and replaces "
					  "what is in it; give a new or empty folder", dir,
				create ? "is not empty and rig did not make it (it has no " SOURCE_MARKER
					 ")"
				       : "was not made by rig (it has no " SOURCE_MARKER "; a `tree` "
					 "step with `at` makes it)");
			rc = -EEXIST;
		} else {
			int fd = open(marker.buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			static const char text[] =
				"This folder was made by rig for a source tree (`tree ... at:`);\n"
				"rig replaces what is in it. Delete the folder when done.\n";
			if (fd < 0 || write_all(fd, text, sizeof(text) - 1) < 0) {
				rc = -errno;
				sb_addf(ctx->err, "cannot write %s: %s", marker.buf, strerror(-rc));
			}
			if (fd >= 0)
				close(fd);
		}
	}
	sb_release(&marker);
	return rc;
}

/* --- once per phase --- */

/* Whether the recorded instance is this cell's (a NULL instance never is). */
static int done_already(const struct rig_ctx *ctx, const char *recorded)
{
	return ctx->instance && recorded && !strcmp(ctx->instance, recorded);
}

static void note_done(struct rig_ctx *ctx, const char *dir)
{
	struct strbuf v = STRBUF_INIT;
	sb_addf(&v, "done in %s by an earlier cell of this phase (a step with `at` works in its "
		    "folder once per phase): nothing done here, nothing measured",
		dir);
	cell_note(ctx, "source", v.buf);
	sb_release(&v);
}

int mod_source_tree_run(struct rig_ctx *ctx, const struct tree_args *args)
{
	const char *dir = args->at;
	int rc = mod_source_folder(ctx, dir, 1);
	if (rc < 0)
		return rc;
	struct tree_state *t = NULL;
	char *recorded = NULL;
	struct strbuf ignore = STRBUF_INIT, path = STRBUF_INIT, root = STRBUF_INIT;
	if (mod_source_load(dir, &t, &recorded, &ignore) == 0 && done_already(ctx, recorded)) {
		note_done(ctx, dir);
		goto out;
	}
	mod_tree_state_free(t);
	t = NULL;
	/* No state while the tree is being built: sync and churn refuse it. */
	sb_addf(&path, "%s/%s", dir, SOURCE_STATE);
	if (unlink(path.buf) < 0 && errno != ENOENT) {
		rc = -errno;
		sb_addf(ctx->err, "cannot remove %s: %s", path.buf, strerror(-rc));
		goto out;
	}
	sb_addf(&root, "%s/%s", dir, TREE_SUBDIR);
	struct tree_built r;
	rc = mod_tree_build(ctx, args, root.buf, &t, &r);
	if (rc == 0)
		rc = source_save(dir, t, ctx->instance, ctx->err);
	if (rc == 0) {
		struct strbuf v = STRBUF_INIT;
		sb_addf(&v, "built in %s by this cell, for every volume of the phase (not on this "
			    "volume, so no samples): %llu files, %llu bytes in %.3f s",
			root.buf, (unsigned long long)r.files, (unsigned long long)r.bytes,
			(double)r.ns / 1e9);
		cell_note(ctx, "source", v.buf);
		sb_release(&v);
	}
out:
	mod_tree_state_free(t);
	free(recorded);
	sb_release(&ignore);
	sb_release(&path);
	sb_release(&root);
	return rc < 0 ? rc : 0;
}

int mod_source_churn_run(struct rig_ctx *ctx, const struct churn_args *args)
{
	const char *dir = args->at;
	int rc = mod_source_folder(ctx, dir, 0);
	if (rc < 0)
		return rc;
	struct tree_state *t = NULL;
	char *recorded = NULL;
	rc = mod_source_load(dir, &t, &recorded, ctx->err);
	if (rc < 0)
		return rc;
	if (done_already(ctx, recorded)) {
		note_done(ctx, dir);
	} else {
		uint64_t done, ns;
		rc = mod_tree_churn(ctx, t, args->fraction, &done, &ns);
		if (rc == 0)
			rc = source_save(dir, t, ctx->instance, ctx->err);
		if (rc == 0) {
			struct strbuf v = STRBUF_INIT;
			sb_addf(&v, "replaced %llu files in %s by this cell, for every volume of the "
				    "phase (not on this volume, so no samples), in %.3f s",
				(unsigned long long)done, t->root, (double)ns / 1e9);
			cell_note(ctx, "source", v.buf);
			sb_release(&v);
		}
	}
	mod_tree_state_free(t);
	free(recorded);
	return rc < 0 ? rc : 0;
}
