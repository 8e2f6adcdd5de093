/*
 * The dirs backend: existing directories, nothing provisioned (kept forever,
 * like fio's null engine, so everything above it is tested without root).
 * Missing directories are created. Each volume works in its own folder
 * `<dir>/rig-<run id>/`, made when the layout is provisioned and removed
 * with everything in it at teardown, so a run leaves the user's
 * directories as it found them and two runs never share files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/platform.h"
#include "provision/command.h"
#include "provision/engine.h"
#include "provision/provision.h"

static void work_dir(struct strbuf *sb, const char *dir, const char *run_id)
{
	sb_addf(sb, "%s/rig-%s", dir, run_id);
}

static int dir_teardown(struct provision_ctx *ctx, size_t li);

/* --- a resumed run (driver.h, struct prov_resume_prims): nothing is
 * provisioned, so nothing is adopted or swept; the work folders are kept
 * or removed --- */

/* Commands the killed run started (an exec'd benchmark) may still work in
 * the folders; what they left is the folders themselves, said nowhere. */
static int dir_resume_find(struct provision_ctx *ctx, struct strbuf *what)
{
	(void)what;
	const struct plan_target *t = &ctx->plan->target;
	char **needles = xcalloc(t->ndirs + 1, sizeof(*needles));
	size_t n = 0;
	for (size_t i = 0; i < t->ndirs; i++) {
		struct strbuf w = STRBUF_INIT;
		work_dir(&w, t->dirs[i], ctx->run_id);
		if ((needles[n] = realpath(w.buf, NULL)))
			n++;
		sb_release(&w);
	}
	int rc = n ? prov_wait_orphans(ctx, (const char *const *)needles) : 0;
	for (size_t i = 0; i < n; i++)
		free(needles[i]);
	free(needles);
	return rc;
}

/* Kept when they are exactly the recorded volumes: the same folders, on
 * file systems of the recorded type. */
static int dir_resume_verify(struct provision_ctx *ctx, struct strbuf *why)
{
	const struct plan_target *t = &ctx->plan->target;
	const struct provision_resume *r = ctx->resume;
	if (!r->vols)
		sb_adds(why, "no volumes were recorded");
	else if (r->nvols != t->ndirs)
		sb_addf(why, "%zu volumes were recorded, the plan has %zu", r->nvols, t->ndirs);
	for (size_t i = 0; i < t->ndirs && !why->len; i++) {
		struct strbuf w = STRBUF_INIT;
		work_dir(&w, t->dirs[i], ctx->run_id);
		struct stat st;
		char fs[64];
		if (!r->vols[i].dir || strcmp(r->vols[i].dir, w.buf))
			sb_addf(why, "volume %s was recorded at %s, not %s", t->names[i],
				r->vols[i].dir ? r->vols[i].dir : "(none)", w.buf);
		else if (stat(w.buf, &st) < 0 || !S_ISDIR(st.st_mode))
			sb_addf(why, "the work folder %s is gone", w.buf);
		else if (plat_fs_type(w.buf, fs, sizeof(fs)) == 0 && r->vols[i].fs &&
			 strcmp(fs, r->vols[i].fs))
			sb_addf(why, "%s is on %s now, it was on %s", w.buf, fs, r->vols[i].fs);
		sb_release(&w);
	}
	return 0;
}

static const struct prov_resume_prims dir_resume_prims = {
	.find = dir_resume_find,
	.verify = dir_resume_verify,
};

static int dir_prepare(struct provision_ctx *ctx)
{
	const struct plan_target *t = &ctx->plan->target;
	for (size_t i = 0; i < t->ndirs; i++) {
		int rc = files_mkdirs(t->dirs[i], ctx->err);
		if (rc < 0)
			return rc;
		if (access(t->dirs[i], W_OK | X_OK) < 0) {
			int e = errno;
			sb_addf(ctx->err, "cannot write in %s: %s", t->dirs[i], strerror(e));
			return -e;
		}
	}
	return ctx->resume ? prov_resume(ctx, &dir_resume_prims, NULL, dir_teardown) : 0;
}

static int dir_teardown(struct provision_ctx *ctx, size_t li)
{
	const struct plan_target *t = &ctx->plan->target;
	int rc = 0;
	for (size_t i = 0; i < t->ndirs; i++) {
		struct strbuf w = STRBUF_INIT;
		work_dir(&w, t->dirs[i], ctx->run_id);
		struct strbuf e = STRBUF_INIT;
		int r = prov_remove_tree(w.buf, &e);
		if (r < 0) {
			sb_addf(ctx->err, "%s%s", rc ? "; " : "", e.buf);
			rc = r;
		}
		sb_release(&e);
		sb_release(&w);
	}
	return rc;
}

static int dir_provision(struct provision_ctx *ctx, size_t li, struct volume **vols, size_t *nvols)
{
	const struct plan_target *t = &ctx->plan->target;
	struct volume *v = xcalloc(t->ndirs, sizeof(*v));
	for (size_t i = 0; i < t->ndirs; i++) {
		struct strbuf w = STRBUF_INIT;
		work_dir(&w, t->dirs[i], ctx->run_id);
		if (mkdir(w.buf, 0777) < 0) {
			int e = errno;
			sb_addf(ctx->err, "cannot create work directory %s: %s", w.buf, strerror(e));
			sb_release(&w);
			for (size_t j = 0; j < i; j++)
				prov_volume_release(&v[j]);
			free(v);
			dir_teardown(ctx, li);
			return -e;
		}
		char fs[64];
		if (plat_fs_type(w.buf, fs, sizeof(fs)) < 0)
			snprintf(fs, sizeof(fs), "unknown");
		struct statvfs sv;
		struct strbuf facts = STRBUF_INIT;
		sb_adds(&facts, "{\"path\":");
		sb_add_json(&facts, t->dirs[i]);
		if (statvfs(w.buf, &sv) == 0)
			sb_addf(&facts, ",\"capacity_bytes\":%llu,\"free_bytes\":%llu",
				(unsigned long long)sv.f_blocks * sv.f_frsize,
				(unsigned long long)sv.f_bavail * sv.f_frsize);
		sb_addch(&facts, '}');
		v[i].name = xstrdup(t->names[i]);
		v[i].fs = xstrdup(fs);
		v[i].position = (uint32_t)i + 1;
		v[i].dir = sb_detach(&w);
		v[i].facts_json = sb_detach(&facts);
	}
	*vols = v;
	*nvols = t->ndirs;
	return 0;
}

/*
 * What a run locks (prov_target_keys): each directory by its device
 * and inode, so that another path to it (a link, a bind mount) is the same
 * directory. The run makes a missing directory in prepare anyway; it is
 * made here, before the lock, because a path alone would not find a run
 * that reaches the directory by another path.
 */
static int dir_keys(const struct plan *p, int create, struct target_keys *keys, struct strbuf *err)
{
	const struct plan_target *t = &p->target;
	for (size_t i = 0; i < t->ndirs; i++) {
		int rc = create ? files_mkdirs(t->dirs[i], err) : 0;
		if (rc < 0)
			return rc;
		struct stat st;
		if (stat(t->dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue; /* rig plan: not there, so nothing measures it */
		struct strbuf key = STRBUF_INIT, what = STRBUF_INIT;
		sb_addf(&key, "dir-%llu:%llu", (unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino);
		sb_addf(&what, "directory %s", t->dirs[i]);
		prov_target_keys_add(keys, key.buf, what.buf);
		sb_release(&key);
		sb_release(&what);
	}
	return 0;
}

const struct backend_ops prov_dir_ops = {
	.name = "dirs",
	.keys = dir_keys,
	.prepare = dir_prepare,
	.provision = dir_provision,
	.remount = NULL,
	.teardown = dir_teardown,
	.finish = NULL,
};
