/*
 * The stat-every-entry walk of walk.h. A directory is one frame: its
 * entries read whole into `struct listing` (names in one buffer), sorted by
 * inode number, stat'ed, then its subdirectories walked, each in its own
 * frame. Recursion depth is the tree's depth; each level holds one
 * descriptor, so a tree deeper than the descriptor limit fails with EMFILE
 * and the path, never silently.
 */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/strbuf.h"
#include "../util/xalloc.h"

struct entry {
	uint64_t ino;
	size_t name;    /* offset into listing.names */
	int is_dir;     /* set by the stat pass */
};

struct listing {
	struct entry *e;
	size_t n, cap;
	char *names;
	size_t used, size;
};

struct walker {
	struct walk_counts *c;
	volatile sig_atomic_t *cancel;
	struct strbuf *err;
	struct strbuf path;     /* the directory being walked, for messages */
};

static int fail(struct walker *w, const char *call, const char *name, int e)
{
	sb_addf(w->err, "cannot %s %s%s%s: %s", call, w->path.buf, name ? "/" : "",
		name ? name : "", strerror(e));
	return -e;
}

static void add_entry(struct listing *l, uint64_t ino, const char *name)
{
	size_t len = strlen(name) + 1;
	if (l->used + len > l->size) {
		l->size = (l->used + len) * 2;
		l->names = xrealloc(l->names, l->size);
	}
	memcpy(l->names + l->used, name, len);
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->e = xrealloc(l->e, l->cap * sizeof(*l->e));
	}
	l->e[l->n++] = (struct entry){ .ino = ino, .name = l->used, .is_dir = 0 };
	l->used += len;
}

static int by_inode(const void *a, const void *b)
{
	uint64_t x = ((const struct entry *)a)->ino, y = ((const struct entry *)b)->ino;
	return (x > y) - (x < y);
}

/* Read the directory open on dfd whole (dfd stays open). */
static int list_dir(struct walker *w, int dfd, struct listing *l)
{
	int fd = dup(dfd);
	if (fd < 0)
		return fail(w, "read directory", NULL, errno);
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return fail(w, "read directory", NULL, e);
	}
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		if (!(n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]))))
			add_entry(l, (uint64_t)de->d_ino, n);
		errno = 0;
	}
	int e = errno;
	closedir(d);
	if (e)
		return fail(w, "read directory", NULL, e);
	if (l->n > 1)
		qsort(l->e, l->n, sizeof(*l->e), by_inode);
	return 0;
}

static int walk_dir(struct walker *w, int dfd)
{
	struct listing l = { 0 };
	int rc = list_dir(w, dfd, &l);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		if (w->cancel && *w->cancel) {
			rc = 1;
			break;
		}
		const char *name = l.names + l.e[i].name;
		struct stat st;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = fail(w, "stat", name, errno);
		} else if (S_ISDIR(st.st_mode)) {
			w->c->dirs++;
			l.e[i].is_dir = 1;
		} else if (S_ISREG(st.st_mode)) {
			w->c->files++;
			w->c->bytes += (uint64_t)st.st_size;
		} else {
			w->c->other++;
		}
	}
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		if (!l.e[i].is_dir)
			continue;
		const char *name = l.names + l.e[i].name;
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			rc = fail(w, "open directory", name, errno);
			break;
		}
		size_t len = w->path.len;
		sb_addf(&w->path, "/%s", name);
		rc = walk_dir(w, fd);
		sb_setlen(&w->path, len);
		close(fd);
	}
	free(l.e);
	free(l.names);
	return rc;
}

int walk_tree(const char *root, struct walk_counts *c, volatile sig_atomic_t *cancel,
	      struct strbuf *err)
{
	struct walker w = { .c = c, .cancel = cancel, .err = err, .path = STRBUF_INIT };
	sb_adds(&w.path, root);
	int rc;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		sb_addf(err, "cannot open directory %s: %s", root, strerror(-rc));
	} else {
		struct stat st;
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			sb_addf(err, "cannot stat %s: %s", root, strerror(-rc));
		} else {
			c->dirs++;
			rc = walk_dir(&w, fd);
		}
		close(fd);
	}
	sb_release(&w.path);
	return rc;
}
