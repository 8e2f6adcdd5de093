/*
 * The copy of sync_copy.h. Directories are walked by descriptor (openat,
 * O_NOFOLLOW), paths kept only for messages and for plat_open_data, which
 * opens by path (direct I/O where the file system allows).
 */
#include "modules/sync_copy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/tree.h"
#include "platform/fault.h"
#include "platform/platform.h"

#define COPY_BLOCK TREE_BLOCK /* a multiple of any direct-I/O alignment */

struct sent {
	char *name;
	struct stat st;
	int gone;       /* destination entry deleted in pass 1 */
};

struct listing {
	struct sent *e;
	size_t n, cap;
};

struct syncer {
	const struct sync_opts *o;
	struct sync_counts *c;
	struct strbuf *err;
	struct strbuf spath, dpath;  /* the directories being synced */
	unsigned char *buf;          /* COPY_BLOCK, aligned for direct I/O */
	size_t align;
};

static int cancelled(const struct syncer *s)
{
	return s->o->cancel && *s->o->cancel;
}

static int fail(struct syncer *s, const char *call, const struct strbuf *dir, const char *name,
		int e)
{
	sb_addf(s->err, "cannot %s %s%s%s: %s", call, dir->buf, name ? "/" : "", name ? name : "",
		strerror(e));
	return -e;
}

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].name);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sent *)a)->name, ((const struct sent *)b)->name);
}

/* Read the directory open on dfd whole, each entry lstat'ed, sorted by name. */
static int list_dir(struct syncer *s, int dfd, const struct strbuf *path, struct listing *l)
{
	int fd = dup(dfd);
	if (fd < 0)
		return fail(s, "read directory", path, NULL, errno);
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return fail(s, "read directory", path, NULL, e);
	}
	int rc = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]))) {
			errno = 0;
			continue;
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 64;
			l->e = xrealloc(l->e, l->cap * sizeof(*l->e));
		}
		struct sent *e = &l->e[l->n];
		memset(e, 0, sizeof(*e));
		if (fstatat(dfd, n, &e->st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = fail(s, "stat", path, n, errno);
			break;
		}
		e->name = xstrdup(n);
		l->n++;
		errno = 0;
	}
	if (rc == 0 && errno)
		rc = fail(s, "read directory", path, NULL, errno);
	closedir(d);
	if (rc == 0 && l->n > 1)
		qsort(l->e, l->n, sizeof(*l->e), by_name);
	return rc;
}

static struct sent *find(struct listing *l, const char *name)
{
	struct sent key = { .name = (char *)name };
	return l->n ? bsearch(&key, l->e, l->n, sizeof(*l->e), by_name) : NULL;
}

/* The kind of entry, for "same type" (a folder, a regular file, other). */
static int kind(const struct stat *st)
{
	return S_ISDIR(st->st_mode) ? 1 : S_ISREG(st->st_mode) ? 2 : 3;
}

/* Whether the destination file is up to date by the quick check. */
static int same_file(const struct stat *src, const struct stat *dst)
{
	if (src->st_size != dst->st_size)
		return 0;
	struct timespec a[2], b[2];
	plat_stat_times(src, a);
	plat_stat_times(dst, b);
	if (a[1].tv_sec != b[1].tv_sec)
		return 0;
	/* A destination that keeps whole seconds (HFS+) stores none. */
	return a[1].tv_nsec == b[1].tv_nsec || b[1].tv_nsec == 0;
}

/* Delete entry name of the directory dfd (at s->dpath), a folder with all
 * it holds. */
static int delete_entry(struct syncer *s, int dfd, const char *name, int is_dir)
{
	if (!is_dir) {
		if (unlinkat(dfd, name, 0) < 0)
			return fail(s, "delete", &s->dpath, name, errno);
		s->c->deleted++;
		return 0;
	}
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(s, "open directory", &s->dpath, name, errno);
	size_t len = s->dpath.len;
	sb_addf(&s->dpath, "/%s", name);
	struct listing l = { 0 };
	int rc = list_dir(s, fd, &s->dpath, &l);
	for (size_t i = 0; rc == 0 && i < l.n; i++)
		rc = delete_entry(s, fd, l.e[i].name, S_ISDIR(l.e[i].st.st_mode));
	listing_free(&l);
	close(fd);
	sb_setlen(&s->dpath, len);
	if (rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		rc = fail(s, "delete directory", &s->dpath, name, errno);
	if (rc == 0)
		s->c->deleted++;
	return rc;
}

/* Read exactly len bytes (the source may not shrink while it is copied). */
static int read_full(struct syncer *s, int fd, size_t len, const char *name)
{
	for (size_t done = 0; done < len;) {
		ssize_t r = fault_read(fd, s->buf + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail(s, "read", &s->spath, name, errno);
		if (r == 0) {
			sb_addf(s->err, "cannot copy %s/%s: it became shorter while it was copied",
				s->spath.buf, name);
			return -EIO;
		}
		done += (size_t)r;
	}
	return 0;
}

static int write_full(struct syncer *s, int fd, size_t len, uint64_t off)
{
	for (size_t done = 0; done < len;) {
		ssize_t w = fault_pwrite(fd, s->buf + done, len - done, (off_t)(off + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail(s, "write", &s->dpath, TREE_TMP_NAME, errno);
		if (w == 0)
			return fail(s, "write", &s->dpath, TREE_TMP_NAME, EIO);
		done += (size_t)w;
	}
	return 0;
}

/* The body of a copy: src (open) into fd, the temporary file at tmp
 * (opened with direct I/O when applied). */
static int copy_data(struct syncer *s, int src, int fd, int applied, const char *tmp,
		     const char *name, uint64_t size)
{
	int rc = 0;
	for (uint64_t off = 0; off < size && rc == 0;) {
		size_t len = size - off < COPY_BLOCK ? (size_t)(size - off) : COPY_BLOCK;
		rc = read_full(s, src, len, name);
		if (rc)
			break;
		if (applied && len % s->align) {
			/* The last partial block: direct I/O takes whole blocks only. */
			int unused, tfd = plat_open_data(tmp, O_WRONLY, 0, 0, &unused);
			if (tfd < 0)
				return fail(s, "open", &s->dpath, TREE_TMP_NAME, -tfd);
			rc = write_full(s, tfd, len, off);
			if (close(tfd) < 0 && rc == 0)
				rc = fail(s, "close", &s->dpath, TREE_TMP_NAME, errno);
			s->c->tail = 1;
		} else {
			rc = write_full(s, fd, len, off);
		}
		off += len;
	}
	return rc;
}

/* Copy source file name (of sfd) to the destination folder dfd: a
 * temporary name, then renamed over. */
static int copy_file(struct syncer *s, int sfd, int dfd, const char *name, const struct stat *st)
{
	int src = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return fail(s, "open", &s->spath, name, errno);
	struct strbuf tmp = STRBUF_INIT;
	sb_addf(&tmp, "%s/%s", s->dpath.buf, TREE_TMP_NAME);
	int applied = 0;
	int fd = plat_open_data(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC, st->st_mode & 07777,
				s->o->direct, &applied);
	int rc = 0;
	if (fd < 0) {
		rc = fail(s, "create", &s->dpath, TREE_TMP_NAME, -fd);
	} else {
		if (s->o->direct && !applied)
			s->c->direct_refused = 1;
		rc = copy_data(s, src, fd, applied, tmp.buf, name, (uint64_t)st->st_size);
		struct timespec times[2];
		plat_stat_times(st, times);
		if (rc == 0 && futimens(fd, times) < 0)
			rc = fail(s, "set the times of", &s->dpath, TREE_TMP_NAME, errno);
		if (close(fd) < 0 && rc == 0)
			rc = fail(s, "close", &s->dpath, TREE_TMP_NAME, errno);
		if (rc == 0 && renameat(dfd, TREE_TMP_NAME, dfd, name) < 0) {
			int e = errno;
			sb_addf(s->err, "cannot rename %s over %s/%s: %s", tmp.buf, s->dpath.buf, name,
				strerror(e));
			rc = -e;
		}
		if (rc)
			(void)unlinkat(dfd, TREE_TMP_NAME, 0); /* the old file is still whole */
	}
	close(src);
	sb_release(&tmp);
	if (rc == 0) {
		s->c->copied++;
		s->c->bytes += (uint64_t)st->st_size;
	}
	return rc;
}

static int sync_dir(struct syncer *s, int sfd, int dfd);

/* Source folder e of sfd: made in dfd when missing, synced, given its times. */
static int sync_subdir(struct syncer *s, int sfd, int dfd, const struct sent *e, int exists)
{
	if (!exists) {
		if (mkdirat(dfd, e->name, e->st.st_mode & 07777) < 0)
			return fail(s, "create directory", &s->dpath, e->name, errno);
		s->c->made++;
	}
	int cs = openat(sfd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cs < 0)
		return fail(s, "open directory", &s->spath, e->name, errno);
	int cd = openat(dfd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cd < 0) {
		int rc = fail(s, "open directory", &s->dpath, e->name, errno);
		close(cs);
		return rc;
	}
	size_t sl = s->spath.len, dl = s->dpath.len;
	sb_addf(&s->spath, "/%s", e->name);
	sb_addf(&s->dpath, "/%s", e->name);
	int rc = sync_dir(s, cs, cd);
	sb_setlen(&s->spath, sl);
	sb_setlen(&s->dpath, dl);
	close(cs);
	close(cd);
	if (rc == 0) {
		struct timespec times[2];
		plat_stat_times(&e->st, times);
		if (utimensat(dfd, e->name, times, AT_SYMLINK_NOFOLLOW) < 0)
			rc = fail(s, "set the times of", &s->dpath, e->name, errno);
	}
	return rc;
}

static int sync_dir(struct syncer *s, int sfd, int dfd)
{
	struct listing src = { 0 }, dst = { 0 };
	int rc = list_dir(s, sfd, &s->spath, &src);
	if (rc == 0)
		rc = list_dir(s, dfd, &s->dpath, &dst);
	/* 1. What the source lacks, or has as another type. */
	for (size_t i = 0; rc == 0 && i < dst.n; i++) {
		struct sent *d = &dst.e[i];
		const struct sent *m = find(&src, d->name);
		if (m && kind(&m->st) == kind(&d->st))
			continue;
		if (cancelled(s))
			rc = 1;
		else
			rc = delete_entry(s, dfd, d->name, S_ISDIR(d->st.st_mode));
		d->gone = 1;
	}
	/* 2. The source's entries in name order. */
	for (size_t i = 0; rc == 0 && i < src.n; i++) {
		const struct sent *e = &src.e[i];
		const struct sent *d = find(&dst, e->name);
		int exists = d && !d->gone;
		if (cancelled(s)) {
			rc = 1;
		} else if (S_ISDIR(e->st.st_mode)) {
			s->c->dirs++;
			rc = sync_subdir(s, sfd, dfd, e, exists);
		} else if (S_ISREG(e->st.st_mode)) {
			s->c->files++;
			s->c->src_bytes += (uint64_t)e->st.st_size;
			if (!exists || !same_file(&e->st, &d->st))
				rc = copy_file(s, sfd, dfd, e->name, &e->st);
		} else {
			sb_addf(s->err, "cannot copy %s/%s: sync copies folders and regular files only",
				s->spath.buf, e->name);
			rc = -ENOTSUP;
		}
	}
	listing_free(&src);
	listing_free(&dst);
	return rc;
}

int mod_sync_tree(const char *src, const char *dst, const struct sync_opts *o, struct sync_counts *c,
	      struct strbuf *err)
{
	struct syncer s = { .o = o, .c = c, .err = err, .spath = STRBUF_INIT, .dpath = STRBUF_INIT };
	sb_adds(&s.spath, src);
	sb_adds(&s.dpath, dst);
	s.align = plat_direct_align();
	int rc = 0, sfd = -1, dfd = -1;
	struct stat st;
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || fstat(sfd, &st) < 0) {
		rc = -errno;
		sb_addf(err, "cannot open directory %s: %s", src, strerror(-rc));
		goto out;
	}
	if (mkdir(dst, st.st_mode & 07777) == 0)
		c->made++;
	else if (errno != EEXIST) {
		rc = -errno;
		sb_addf(err, "cannot create directory %s: %s", dst, strerror(-rc));
		goto out;
	}
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		sb_addf(err, "cannot open directory %s: %s", dst, strerror(-rc));
		goto out;
	}
	s.buf = plat_alloc_io(COPY_BLOCK, s.align);
	if (!s.buf) {
		rc = -ENOMEM;
		sb_addf(err, "cannot allocate the copy buffer: %s", strerror(ENOMEM));
		goto out;
	}
	c->dirs++;
	rc = sync_dir(&s, sfd, dfd);
	if (rc == 0) {
		struct timespec times[2];
		plat_stat_times(&st, times);
		if (futimens(dfd, times) < 0) {
			rc = -errno;
			sb_addf(err, "cannot set the times of %s: %s", dst, strerror(-rc));
		}
	}
out:
	free(s.buf);
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	sb_release(&s.spath);
	sb_release(&s.dpath);
	return rc;
}
