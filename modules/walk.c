/*
 * The stat-every-entry walks of walk.h.
 *
 * Inode order: a directory is one frame: its entries read whole into
 * `struct listing` (names in one buffer), sorted by inode number, stat'ed,
 * then its subdirectories walked, each in its own frame. Recursion depth
 * is the tree's depth; each level holds one descriptor, so a tree deeper
 * than the descriptor limit fails with EMFILE and the path, never silently.
 *
 * fts order: fts_read as it comes, counted by fts_info. The root is
 * checked to be a directory the way the inode walk's O_NOFOLLOW open
 * checks it, so both orders refuse the same roots with the same words.
 */
#include "modules/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"

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
	const struct walk_opts *o;
	struct strbuf *err;
	struct strbuf path;     /* the directory being walked, for messages */
};

static int cancelled(const struct walk_opts *o)
{
	return o->cancel && *o->cancel;
}

/* Tell the visitor about entry name of the directory being walked (NULL:
 * the directory itself). */
static void visit(struct walker *w, const char *name, const struct stat *st)
{
	if (!w->o->visit)
		return;
	if (!name) {
		w->o->visit(w->o->opaque, w->path.buf, st);
		return;
	}
	size_t len = w->path.len;
	sb_addf(&w->path, "/%s", name);
	w->o->visit(w->o->opaque, w->path.buf, st);
	sb_setlen(&w->path, len);
}

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
		if (cancelled(w->o)) {
			rc = 1;
			break;
		}
		const char *name = l.names + l.e[i].name;
		struct stat st;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = fail(w, "stat", name, errno);
			break;
		}
		visit(w, name, &st);
		if (S_ISDIR(st.st_mode)) {
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

static int walk_inode(const char *root, const struct walk_opts *o, struct walk_counts *c,
		      struct strbuf *err)
{
	struct walker w = { .c = c, .o = o, .err = err, .path = STRBUF_INIT };
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
			visit(&w, NULL, &st);
			rc = walk_dir(&w, fd);
		}
		close(fd);
	}
	sb_release(&w.path);
	return rc;
}

/* The errno the inode walk's open of root would give for fts's root entry
 * e, which is not a directory. */
static int root_errno(const FTSENT *e)
{
	switch (e->fts_info) {
	case FTS_NS:
	case FTS_DNR:
	case FTS_ERR:
		return e->fts_errno ? e->fts_errno : EIO;
	case FTS_SL:
	case FTS_SLNONE:
		return ELOOP; /* O_NOFOLLOW on a symlink */
	default:
		return ENOTDIR;
	}
}

/* Count fts's entry e and show it to the visitor: 0, or a negative errno
 * with the reason in err. */
static int fts_entry(const FTSENT *e, const struct walk_opts *o, struct walk_counts *c,
		     struct strbuf *err)
{
	if (e->fts_level == FTS_ROOTLEVEL && e->fts_info != FTS_D && e->fts_info != FTS_DP) {
		int rc = -root_errno(e);
		sb_addf(err, "cannot open directory %s: %s", e->fts_path, strerror(-rc));
		return rc;
	}
	switch (e->fts_info) {
	case FTS_D:
		c->dirs++;
		break;
	case FTS_DP:
		return 0; /* a directory again, after its entries: counted before them */
	case FTS_F:
		c->files++;
		c->bytes += (uint64_t)e->fts_statp->st_size;
		break;
	case FTS_DNR:
	case FTS_ERR:
	case FTS_NS: {
		int rc = -(e->fts_errno ? e->fts_errno : EIO);
		sb_addf(err, "cannot %s %s: %s", e->fts_info == FTS_NS ? "stat" : "read directory",
			e->fts_path, strerror(-rc));
		return rc;
	}
	default: /* symlinks, fifos, devices, sockets */
		c->other++;
		break;
	}
	if (o->visit)
		o->visit(o->opaque, e->fts_path, e->fts_statp);
	return 0;
}

static int walk_fts(const char *root, const struct walk_opts *o, struct walk_counts *c,
		    struct strbuf *err)
{
	char *paths[] = { (char *)root, NULL };
	errno = 0;
	FTS *f = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	if (!f) {
		int e = errno ? errno : EIO;
		sb_addf(err, "cannot open directory %s: %s", root, strerror(e));
		return -e;
	}
	int rc = 0;
	while (rc == 0) {
		errno = 0;
		const FTSENT *e = fts_read(f);
		if (!e) {
			if (errno) { /* NULL with errno 0 is the end of the walk */
				rc = -errno;
				sb_addf(err, "cannot walk %s: %s", root, strerror(-rc));
			}
			break;
		}
		rc = fts_entry(e, o, c, err);
		if (rc == 0 && cancelled(o))
			rc = 1;
	}
	fts_close(f);
	return rc;
}

int mod_walk_tree(const char *root, const struct walk_opts *o, struct walk_counts *c,
	      struct strbuf *err)
{
	return o->order == WALK_FTS ? walk_fts(root, o, c, err) : walk_inode(root, o, c, err);
}
