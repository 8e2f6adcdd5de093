/* Running a backend's commands; see command.h. */
#include "provision/command.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/safety.h"

/* Never raised: commands get their own process group (spawn_opts) but are
 * never stopped half-way. */
static volatile sig_atomic_t never_cancel;

void prov_vnote(struct provision_ctx *ctx, int warning, const char *fmt, va_list ap)
{
	if (!ctx->note)
		return;
	struct strbuf sb = STRBUF_INIT;
	sb_vaddf(&sb, fmt, ap);
	ctx->note(ctx->note_opaque, warning, sb.buf);
	sb_release(&sb);
}

void prov_note(struct provision_ctx *ctx, int warning, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	prov_vnote(ctx, warning, fmt, ap);
	va_end(ap);
}

int prov_cancelled(struct provision_ctx *ctx)
{
	if (ctx->cancel && *ctx->cancel) {
		sb_adds(ctx->err, "interrupted");
		return 1;
	}
	return 0;
}

/* The first PROV_ERR_LINES lines of out, each on its own indented line. */
static void prov_output_head(struct strbuf *sb, const char *out)
{
	const char *p = out;
	int lines = 0;
	while (*p && lines < PROV_ERR_LINES) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		sb_addf(sb, "\n  %.*s", (int)n, p);
		lines++;
		p = nl ? nl + 1 : p + n;
	}
	if (*p)
		sb_adds(sb, "\n  ... (the whole output is in commands.log)");
}

int prov_run_result(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *r)
{
	struct spawn_opts o = { .split = 1, .cancel = &never_cancel };
	struct strbuf e = STRBUF_INIT;
	int rc = plat_spawn_run_opts(ctx->sp, argv, NULL, &o, r, &e);
	if (rc < 0) {
		memset(r, 0, sizeof(*r));
		sb_adds(ctx->err, e.buf);
		sb_release(&e);
		return rc;
	}
	sb_release(&e);
	if (!r->exited || r->status != 0) {
		struct strbuf text = STRBUF_INIT;
		plat_spawn_argv_text(&text, argv);
		if (r->exited)
			sb_addf(ctx->err, "%s failed with exit status %d", text.buf, r->status);
		else
			sb_addf(ctx->err, "%s was killed by signal %d", text.buf, r->status);
		if (r->output_len) {
			sb_addch(ctx->err, ':');
			prov_output_head(ctx->err, r->output);
		}
		sb_release(&text);
		rc = -EIO;
	}
	return rc;
}

int prov_run(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *out)
{
	struct spawn_result r;
	int rc = prov_run_result(ctx, argv, &r);
	if (out && rc == 0)
		*out = r;
	else
		plat_spawn_result_release(&r);
	return rc;
}

void prov_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? -1 : 0;
}

int prov_remove_tree(const char *path, struct strbuf *err)
{
	struct stat st;
	if (lstat(path, &st) < 0 && errno == ENOENT)
		return 0;
	if (nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS) < 0) {
		int e = errno;
		sb_addf(err, "cannot remove %s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/* An absolute path for the image: its folder resolved, its name kept. */
char *prov_absolute_image(const char *path, struct strbuf *err)
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
	sb_addf(&sb, "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : path);
	free(real);
	return sb_detach(&sb);
}

int prov_in_path(const char *name)
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

int prov_typed_confirmation(struct provision_ctx *ctx, const struct disk_facts *f)
{
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
	if (!fgets(line, sizeof(line), stdin) || !prov_safety_confirm_matches(f, line)) {
		sb_addf(ctx->err, "the typed confirmation does not match %s; nothing was changed",
			f->path);
		return -EPERM;
	}
	return 0;
}

void prov_teardown_error(struct provision_ctx *ctx, struct strbuf *acc, int *rc, int r)
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

void prov_undo(struct provision_ctx *ctx, size_t li,
	       int (*teardown)(struct provision_ctx *ctx, size_t li), struct volume *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		prov_volume_release(&v[k]);
	free(v);
	struct strbuf keep = STRBUF_INIT, terr = STRBUF_INIT;
	sb_adds(&keep, ctx->err->buf);
	struct provision_ctx t = *ctx;
	t.err = &terr;
	if (teardown(&t, li) < 0)
		sb_addf(&keep, "; cleaning up also failed: %s", terr.buf);
	sb_reset(ctx->err);
	sb_adds(ctx->err, keep.buf);
	sb_release(&keep);
	sb_release(&terr);
}

void prov_last_teardown(struct provision_ctx *ctx,
			int (*teardown)(struct provision_ctx *ctx, size_t li))
{
	struct strbuf e = STRBUF_INIT;
	struct provision_ctx t = *ctx;
	t.err = &e;
	if (teardown(&t, 0) < 0)
		prov_note(ctx, 1, "cleaning up at the end of the run failed: %s", e.buf);
	sb_release(&e);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void prov_disk_identity_take(struct disk_identity *id, const struct disk_facts *f)
{
	prov_disk_identity_release(id);
	id->taken = 1;
	id->name = dup_or_null(f->name);
	id->model = dup_or_null(f->model);
	id->serial = dup_or_null(f->serial);
	id->size = f->size;
	id->whole = f->whole;
	id->is_virtual = f->is_virtual;
	id->internal = f->internal;
}

void prov_disk_identity_release(struct disk_identity *id)
{
	free(id->name);
	free(id->model);
	free(id->serial);
	memset(id, 0, sizeof(*id));
}

static int same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* One fact of the identity compared; a difference is described in why. */
static void compare(struct strbuf *why, const char *what, const char *was, const char *now)
{
	if (same_text(was, now))
		return;
	sb_addf(why, "%s%s was %s, is %s", why->len ? ", " : "", what, was ? was : "unknown",
		now ? now : "unknown");
}

static const char *yes_no(int v)
{
	return v == 1 ? "yes" : v == 0 ? "no" : "unknown";
}

int prov_same_disk(struct provision_ctx *ctx, const struct disk_identity *id,
		   const struct disk_facts *now, const char *dev, const char *const *argv)
{
	struct strbuf why = STRBUF_INIT;
	if (!now->exists) {
		sb_addf(&why, "it is gone (%s)", now->missing ? now->missing : "no such device");
	} else {
		compare(&why, "name", id->name, now->name);
		compare(&why, "model", id->model, now->model);
		compare(&why, "serial", id->serial, now->serial);
		if (now->size != id->size)
			sb_addf(&why, "%ssize was %llu bytes, is %llu", why.len ? ", " : "",
				(unsigned long long)id->size, (unsigned long long)now->size);
		if (!now->whole != !id->whole)
			sb_addf(&why, "%sit was %sa whole disk, is %s", why.len ? ", " : "",
				id->whole ? "" : "not ", now->whole ? "one" : "not");
		compare(&why, "virtual", yes_no(id->is_virtual), yes_no(now->is_virtual));
		compare(&why, "internal", yes_no(id->internal), yes_no(now->internal));
	}
	int ok = !why.len;
	if (!ok) {
		struct strbuf cmd = STRBUF_INIT;
		if (argv)
			plat_spawn_argv_text(&cmd, argv);
		sb_addf(ctx->err, "refusing to %s%s: %s is no longer the disk that was checked "
				  "and confirmed: %s (rule identity: the disk's name, model, serial "
				  "and size are checked again before every command that writes to it)",
			argv ? "run " : "go on with ", argv ? cmd.buf : dev, dev, why.buf);
		sb_release(&cmd);
	}
	sb_release(&why);
	return ok;
}
