/*
 * The run folder and what a run writes into it as it goes; see run_dir.h.
 * Nothing from a run is ever overwritten: the folder is new (or an empty
 * one named with -o), plan.yaml and commands.log are created exclusively,
 * and a resume only appends to commands.log.
 */
#include "rig/run/run_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/timeutil.h"
#include "platform/progress.h"
#include "platform/spawn.h"
#include "store/store.h"

void run_dir_init(struct run_dir *d, struct progress *progress)
{
	memset(d, 0, sizeof(*d));
	sb_init(&d->path);
	sb_init(&d->id);
	sb_init(&d->root_made);
	d->lock_fd = -1;
	d->progress = progress;
}

static void close_all(struct run_dir *d)
{
	if (d->store)
		store_close(d->store);
	if (d->cmdlog)
		fclose(d->cmdlog);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	d->store = NULL;
	d->cmdlog = NULL;
	d->lock_fd = -1;
}

void run_dir_release(struct run_dir *d)
{
	close_all(d);
	sb_release(&d->path);
	sb_release(&d->id);
	sb_release(&d->root_made);
}

int run_dir_make(struct run_dir *d, const char *out_dir, const char *runs_root,
		 const char *plan_name, struct strbuf *err)
{
	if (out_dir) {
		sb_adds(&d->path, out_dir);
		if (mkdir(out_dir, 0777) < 0) {
			int e = errno;
			if (e != EEXIST || rmdir(out_dir) < 0 || mkdir(out_dir, 0777) < 0) {
				sb_addf(err, "cannot use %s as the run folder: %s", out_dir,
					e == EEXIST ? "it exists and is not empty (nothing from a run is overwritten)"
						    : strerror(e));
				return -1;
			}
		} else {
			d->made = 1;
		}
		const char *slash = strrchr(out_dir, '/');
		sb_adds(&d->id, slash && slash[1] ? slash + 1 : out_dir);
		return 0;
	}
	const char *root = runs_root ? runs_root : "runs";
	if (mkdir(root, 0777) == 0) {
		sb_adds(&d->root_made, root);
	} else if (errno != EEXIST) {
		int e = errno;
		sb_addf(err, "cannot create %s: %s", root, strerror(e));
		return -1;
	}
	char ts[24];
	timeutil_utc_compact(ts, sizeof(ts));
	for (int k = 1; k < 1000; k++) {
		sb_reset(&d->id);
		sb_addf(&d->id, "%s-%s", ts, plan_name);
		if (k > 1)
			sb_addf(&d->id, "-%d", k);
		sb_reset(&d->path);
		sb_addf(&d->path, "%s/%s", root, d->id.buf);
		if (mkdir(d->path.buf, 0777) == 0) {
			d->made = 1;
			return 0;
		}
		if (errno != EEXIST) {
			int e = errno;
			sb_addf(err, "cannot create run folder %s: %s", d->path.buf, strerror(e));
			return -1;
		}
	}
	sb_addf(err, "cannot create a run folder under %s: too many runs this second", root);
	return -1;
}

int run_dir_discard(struct run_dir *d, struct strbuf *err)
{
	/* What a run writes before its first cell; the reports come after. */
	static const char *const files[] = { "plan.yaml", "commands.log", "results.db",
					     "results.db-wal", "results.db-shm",
					     "results.db-journal" };
	close_all(d);
	int rc = 0;
	struct strbuf p = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", d->path.buf, files[i]);
		if (unlink(p.buf) < 0 && errno != ENOENT && rc == 0) {
			sb_addf(err, "cannot remove %s: %s", p.buf, strerror(errno));
			rc = -1;
		}
	}
	sb_release(&p);
	if (rc == 0 && d->made && rmdir(d->path.buf) < 0) {
		sb_addf(err, "the run folder %s is kept: %s", d->path.buf,
			errno == ENOTEMPTY || errno == EEXIST ? "it holds files rig did not write"
							      : strerror(errno));
		rc = -1;
	}
	if (rc == 0 && d->root_made.len)
		(void)rmdir(d->root_made.buf); /* another run's folder may be in it by now */
	return rc;
}

int run_dir_use(struct run_dir *d, const char *dir, struct strbuf *err)
{
	char *abs = realpath(dir, NULL);
	if (!abs) {
		sb_addf(err, "cannot use %s as a run folder: %s", dir, strerror(errno));
		return -1;
	}
	sb_adds(&d->path, abs);
	const char *slash = strrchr(abs, '/');
	sb_adds(&d->id, slash && slash[1] ? slash + 1 : abs);
	free(abs);
	return 0;
}

int run_dir_write_plan(struct run_dir *d, const char *text, size_t len, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/plan.yaml", d->path.buf);
	int rc = 0;
	FILE *f = fopen(path.buf, "wbx");
	if (!f) {
		rc = -errno;
		sb_addf(err, "cannot create %s: %s", path.buf, strerror(-rc));
	} else {
		int ok = fwrite(text, 1, len, f) == len;
		if (fclose(f) != 0 || !ok) {
			sb_addf(err, "cannot write %s", path.buf);
			rc = -EIO;
		}
	}
	sb_release(&path);
	return rc;
}

int run_dir_lock(struct run_dir *d, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/plan.yaml", d->path.buf);
	d->lock_fd = open(path.buf, O_RDONLY | O_CLOEXEC);
	int rc = 0;
	if (d->lock_fd < 0) {
		sb_addf(err, "cannot open %s: %s", path.buf, strerror(errno));
		rc = -EIO;
	} else if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			sb_addf(err, "the run in %s is still going: another rig works in it",
				d->path.buf);
		else
			sb_addf(err, "cannot lock %s: %s", path.buf, strerror(errno));
		close(d->lock_fd);
		d->lock_fd = -1;
		rc = -EBUSY;
	}
	sb_release(&path);
	return rc;
}

int run_dir_open_log(struct run_dir *d, int append, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/commands.log", d->path.buf);
	d->cmdlog = fopen(path.buf, append ? "a" : "wx");
	if (!d->cmdlog)
		sb_addf(err, "cannot %s %s: %s", append ? "append to" : "create", path.buf,
			strerror(errno));
	sb_release(&path);
	return d->cmdlog ? 0 : -1;
}

void run_dir_log_command(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	struct run_dir *d = opaque;
	char now[40];
	timeutil_utc_iso(now, sizeof(now));
	if (d->cmdlog) {
		fprintf(d->cmdlog, "[%s] $ %s\n", now, argv_text);
		if (r) {
			if (r->output_len)
				fprintf(d->cmdlog, "%s%s", r->output,
					r->output[r->output_len - 1] == '\n' ? "" : "\n");
			fprintf(d->cmdlog, "[%s %d, %.3f s]\n\n", r->exited ? "exit" : "signal",
				r->status, r->seconds);
		}
		fflush(d->cmdlog);
	}
	if (d->store && r) {
		struct strbuf err = STRBUF_INIT;
		store_add_command(d->store, now, argv_text, r->exited ? r->status : 128 + r->status,
				  r->seconds, r->output, &err);
		sb_release(&err);
	}
}

void run_dir_note(void *opaque, int warning, const char *text)
{
	struct run_dir *d = opaque;
	if (warning) {
		run_dir_event(d, "warning", "%s", text);
	} else if (d->cmdlog) {
		char now[40];
		timeutil_utc_iso(now, sizeof(now));
		fprintf(d->cmdlog, "[%s] # %s\n\n", now, text);
		fflush(d->cmdlog);
	}
}

void run_dir_event(struct run_dir *d, const char *level, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT, err = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&msg, fmt, ap);
	va_end(ap);
	char now[40];
	timeutil_utc_iso(now, sizeof(now));
	if (d->store)
		store_add_event(d->store, now, level, msg.buf, &err);
	if (strcmp(level, "info") != 0 && !plat_progress_message(d->progress, level, msg.buf))
		fprintf(stderr, "rig: %s: %s\n", level, msg.buf);
	sb_release(&msg);
	sb_release(&err);
}
