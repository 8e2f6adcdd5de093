/*
 * Tests of modules/walk.c, the stat-every-entry walks behind
 * `enumerate`, each case in both orders: exact counts of directories,
 * files, other entries and bytes on a hand-made tree (symlinks counted,
 * never followed), empty and deep trees, the working directory untouched,
 * errors that name the path, and cancellation. Then the orders themselves,
 * entry by entry: the fts walk against the C library's fts(3) run here on
 * the same tree, the inode walk against a plain readdir-and-sort of it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "modules/walk.h"
#include "test.h"

static char *path_of(const char *dir, const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", dir, rel);
	return sb_detach(&sb);
}

static void make_dir(const char *dir, const char *rel)
{
	char *p = path_of(dir, rel);
	CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
	free(p);
}

static void make_file(const char *dir, const char *rel, size_t size)
{
	char *p = path_of(dir, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, (off_t)size), 0);
	close(fd);
	free(p);
}

static void make_link(const char *dir, const char *target, const char *rel)
{
	char *p = path_of(dir, rel);
	CU_ASSERT_EQUAL_FATAL(symlink(target, p), 0);
	free(p);
}

static int walk(const char *root, enum walk_order order, struct walk_counts *c,
		volatile sig_atomic_t *cancel, struct strbuf *err)
{
	struct walk_opts o = { .order = order, .cancel = cancel };
	return mod_walk_tree(root, &o, c, err);
}

/* Each case below runs in both orders, as its own test. */
#define BOTH_ORDERS(fn)                                 \
	static void fn##_inode(void) { fn(WALK_INODE); } \
	static void fn##_fts(void) { fn(WALK_FTS); }

static void test_counts(enum walk_order order)
{
	char *d = test_tmpdir();
	make_dir(d, "a");
	make_dir(d, "a/b");
	make_dir(d, "a/b/c");
	make_dir(d, "e");
	make_file(d, "top", 10);
	make_file(d, "a/f1", 1000);
	make_file(d, "a/b/f2", 0);
	make_file(d, "a/b/c/f3", 123456);
	make_link(d, "a", "e/to-a");         /* a followed link would count a's tree twice */
	make_link(d, "/nonexistent", "e/dangling");
	char *fifo = path_of(d, "e/fifo");
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0644), 0);
	free(fifo);

	char cwd[PATH_MAX], after[PATH_MAX];
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof(cwd)));
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(walk(d, order, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.dirs, 5);  /* root, a, a/b, a/b/c, e */
	CU_ASSERT_EQUAL(c.files, 4);
	CU_ASSERT_EQUAL(c.other, 3); /* two symlinks and a fifo */
	CU_ASSERT_EQUAL(c.bytes, 10 + 1000 + 0 + 123456);
	CU_ASSERT_EQUAL(err.len, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(after, sizeof(after)));
	CU_ASSERT_STRING_EQUAL(cwd, after);

	/* Counts add up over walks. */
	CU_ASSERT_EQUAL(walk(d, order, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.files, 8);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

static void test_empty_and_wide(enum walk_order order)
{
	char *d = test_tmpdir();
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(walk(d, order, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.dirs, 1);
	CU_ASSERT_EQUAL(c.files + c.other + c.bytes, 0);

	/* A directory wider than the listing's first allocation, with names of
	 * every length up to 200 bytes (the names buffer grows many times). */
	uint64_t want = 0;
	for (int i = 0; i < 700; i++) {
		char name[256];
		int len = snprintf(name, sizeof(name), "%d", i);
		int want_len = 1 + i % 200 > len ? 1 + i % 200 : len;
		memset(name + len, 'y', (size_t)(want_len - len));
		name[want_len] = '\0';
		make_file(d, name, (size_t)i);
		want += (uint64_t)i;
	}
	c = (struct walk_counts){ 0, 0, 0, 0 };
	CU_ASSERT_EQUAL(walk(d, order, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.dirs, 1);
	CU_ASSERT_EQUAL(c.files, 700);
	CU_ASSERT_EQUAL(c.bytes, want);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

static void test_deep(enum walk_order order)
{
	char *d = test_tmpdir();
	struct strbuf rel = STRBUF_INIT;
	for (int i = 0; i < 200; i++) {
		sb_addf(&rel, "%sd%d", i ? "/" : "", i);
		make_dir(d, rel.buf);
	}
	sb_adds(&rel, "/leaf");
	make_file(d, rel.buf, 7);
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(walk(d, order, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.dirs, 201);
	CU_ASSERT_EQUAL(c.files, 1);
	CU_ASSERT_EQUAL(c.bytes, 7);
	sb_release(&rel);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

static void test_errors(enum walk_order order)
{
	char *d = test_tmpdir();
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;

	char *missing = path_of(d, "missing");
	CU_ASSERT_EQUAL(walk(missing, order, &c, NULL, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot open directory"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, missing));
	CU_ASSERT_EQUAL(c.dirs, 0);

	/* The root itself is not followed when it is a symlink. */
	make_dir(d, "real");
	make_link(d, "real", "link");
	char *link = path_of(d, "link");
	sb_reset(&err);
	int rc = walk(link, order, &c, NULL, &err);
	CU_ASSERT(rc == -ELOOP || rc == -ENOTDIR);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, link));

	/* A file is not a directory. */
	make_file(d, "plain", 1);
	char *plain = path_of(d, "plain");
	sb_reset(&err);
	CU_ASSERT_EQUAL(walk(plain, order, &c, NULL, &err), -ENOTDIR);

	/* An unreadable subdirectory: the error names it (not as root, who may
	 * read anything). */
	if (geteuid() != 0) {
		make_dir(d, "real/locked");
		char *locked = path_of(d, "real/locked");
		CU_ASSERT_EQUAL(chmod(locked, 0), 0);
		char *real = path_of(d, "real");
		sb_reset(&err);
		CU_ASSERT_EQUAL(walk(real, order, &c, NULL, &err), -EACCES);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "real/locked"));
		CU_ASSERT_EQUAL(chmod(locked, 0755), 0);
		free(real);
		free(locked);
	}
	free(missing);
	free(link);
	free(plain);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

static void test_cancel(enum walk_order order)
{
	char *d = test_tmpdir();
	make_dir(d, "a");
	make_file(d, "a/f", 1);
	make_file(d, "g", 1);
	volatile sig_atomic_t cancel = 1;
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(walk(d, order, &c, &cancel, &err), 1);
	CU_ASSERT(c.files < 2);
	CU_ASSERT_EQUAL(err.len, 0);
	cancel = 0;
	c = (struct walk_counts){ 0, 0, 0, 0 };
	CU_ASSERT_EQUAL(walk(d, order, &c, &cancel, &err), 0);
	CU_ASSERT_EQUAL(c.files, 2);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

BOTH_ORDERS(test_counts)
BOTH_ORDERS(test_empty_and_wide)
BOTH_ORDERS(test_deep)
BOTH_ORDERS(test_errors)
BOTH_ORDERS(test_cancel)

/* --- the orders, entry by entry --- */

struct seen {
	char **path;
	uint64_t *ino;
	size_t n, cap;
};

static void seen_add(struct seen *s, const char *path, uint64_t ino)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->path = realloc(s->path, s->cap * sizeof(*s->path));
		s->ino = realloc(s->ino, s->cap * sizeof(*s->ino));
		CU_ASSERT_FATAL(s->path && s->ino);
	}
	s->path[s->n] = strdup(path);
	s->ino[s->n++] = ino;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->path[i]);
	free(s->path);
	free(s->ino);
	memset(s, 0, sizeof(*s));
}

static void on_visit(void *opaque, const char *path, const struct stat *st)
{
	seen_add(opaque, path, (uint64_t)st->st_ino);
}

/* The same walk as the seen list, or the first difference on stderr. */
static int same_walk(const char *what, const struct seen *got, const struct seen *want)
{
	for (size_t i = 0; i < got->n && i < want->n; i++) {
		if (strcmp(got->path[i], want->path[i])) {
			fprintf(stderr, "\n%s: entry %zu is %s, expected %s\n", what, i, got->path[i],
				want->path[i]);
			return 0;
		}
	}
	if (got->n != want->n) {
		fprintf(stderr, "\n%s: %zu entries, expected %zu\n", what, got->n, want->n);
		return 0;
	}
	return 1;
}

/* What the C library's fts gives on root, physical and without chdir, as
 * the article's tool walked: every entry once (not the postorder visits of
 * directories). */
static void libc_fts(const char *root, struct seen *s)
{
	char *paths[] = { (char *)root, NULL };
	FTS *f = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	FTSENT *e;
	while ((e = fts_read(f)))
		if (e->fts_info != FTS_DP)
			seen_add(s, e->fts_path, (uint64_t)e->fts_statp->st_ino);
	fts_close(f);
}

struct named {
	char *name;
	uint64_t ino;
};

static int by_ino(const void *a, const void *b)
{
	uint64_t x = ((const struct named *)a)->ino, y = ((const struct named *)b)->ino;
	return (x > y) - (x < y);
}

/* The inode order by hand: a directory's entries sorted by the inode
 * numbers readdir gives, all of them, then each subdirectory in turn. */
static void by_hand(const char *dir, struct seen *s)
{
	DIR *d = opendir(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	struct named *v = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n].name = path_of(dir, de->d_name);
		v[n++].ino = (uint64_t)de->d_ino;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), by_ino);
	for (size_t i = 0; i < n; i++)
		seen_add(s, v[i].name, v[i].ino);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (lstat(v[i].name, &st) == 0 && S_ISDIR(st.st_mode))
			by_hand(v[i].name, s);
		free(v[i].name);
	}
	free(v);
}

/* A tree whose directory order is neither name nor creation order on most
 * file systems: names made in a scrambled order, some removed and made
 * again (so inode numbers are reused out of order), subdirectories mixed
 * with files, a symlink and a fifo. */
static char *scrambled_tree(void)
{
	char *d = test_tmpdir();
	const char *tops[] = { "m", "b", "x", "a" };
	for (int t = 0; t < 4; t++) {
		make_dir(d, tops[t]);
		for (int i = 0; i < 60; i++) {
			char rel[64];
			snprintf(rel, sizeof(rel), "%s/f%02d", tops[t], (i * 37) % 60);
			make_file(d, rel, (size_t)i);
			if (i % 13 == 5) {
				snprintf(rel, sizeof(rel), "%s/s%02d", tops[t], i);
				make_dir(d, rel);
				snprintf(rel, sizeof(rel), "%s/s%02d/leaf", tops[t], i);
				make_file(d, rel, 3);
			}
		}
		for (int i = 0; i < 60; i += 7) {
			char rel[64];
			snprintf(rel, sizeof(rel), "%s/f%02d", tops[t], i);
			char *p = path_of(d, rel);
			CU_ASSERT_EQUAL(unlink(p), 0);
			free(p);
			make_file(d, rel, 1);
		}
	}
	make_link(d, "m", "x/to-m");
	char *fifo = path_of(d, "b/fifo");
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0644), 0);
	free(fifo);
	make_file(d, "top", 5);
	return d;
}

/* Walk root in order, every entry into *got; returns how many it counted. */
static uint64_t walk_seen(const char *root, enum walk_order order, struct seen *got)
{
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	struct walk_opts o = { .order = order, .visit = on_visit, .opaque = got };
	CU_ASSERT_EQUAL(mod_walk_tree(root, &o, &c, &err), 0);
	CU_ASSERT_EQUAL(err.len, 0);
	sb_release(&err);
	return c.dirs + c.files + c.other;
}

static void test_fts_order(void)
{
	char *d = scrambled_tree();
	struct seen got = { 0 }, want = { 0 };
	uint64_t counted = walk_seen(d, WALK_FTS, &got);
	libc_fts(d, &want);
	CU_ASSERT_TRUE(same_walk("fts order", &got, &want));
	for (size_t i = 0; i < got.n && i < want.n; i++)
		CU_ASSERT_EQUAL(got.ino[i], want.ino[i]);
	CU_ASSERT_EQUAL(counted, want.n);
	CU_ASSERT_STRING_EQUAL(got.path[0], d);
	seen_free(&got);
	seen_free(&want);
	test_rmtree(d);
	free(d);
}

static void test_inode_order(void)
{
	char *d = scrambled_tree();
	struct seen got = { 0 }, want = { 0 };
	uint64_t counted = walk_seen(d, WALK_INODE, &got);
	struct stat st;
	CU_ASSERT_EQUAL_FATAL(lstat(d, &st), 0);
	seen_add(&want, d, (uint64_t)st.st_ino);
	by_hand(d, &want);
	CU_ASSERT_TRUE(same_walk("inode order", &got, &want));
	CU_ASSERT_EQUAL(counted, want.n);

	/* Both orders visit the same entries, each once. */
	struct seen fts = { 0 };
	libc_fts(d, &fts);
	CU_ASSERT_EQUAL(fts.n, got.n);
	size_t found = 0;
	for (size_t i = 0; i < fts.n; i++)
		for (size_t k = 0; k < got.n; k++)
			found += !strcmp(fts.path[i], got.path[k]);
	CU_ASSERT_EQUAL(found, fts.n);
	seen_free(&got);
	seen_free(&want);
	seen_free(&fts);
	test_rmtree(d);
	free(d);
}

void register_walk_tests(void)
{
	CU_pSuite s = test_suite("walk (enumerate's tree walk)");
	test_add(s, "counts: directories, files, bytes; links and fifos not followed (inode order)",
		 test_counts_inode);
	test_add(s, "counts: directories, files, bytes; links and fifos not followed (fts order)",
		 test_counts_fts);
	test_add(s, "an empty root, a 700-entry directory (inode order)", test_empty_and_wide_inode);
	test_add(s, "an empty root, a 700-entry directory (fts order)", test_empty_and_wide_fts);
	test_add(s, "200 levels deep (inode order)", test_deep_inode);
	test_add(s, "200 levels deep (fts order)", test_deep_fts);
	test_add(s, "errors name the path; a symlink root is not followed (inode order)",
		 test_errors_inode);
	test_add(s, "errors name the path; a symlink root is not followed (fts order)",
		 test_errors_fts);
	test_add(s, "cancel stops the walk without an error (inode order)", test_cancel_inode);
	test_add(s, "cancel stops the walk without an error (fts order)", test_cancel_fts);
	test_add(s, "fts order is the C library's fts(3), entry by entry", test_fts_order);
	test_add(s, "inode order: each directory's entries by inode number, then its subdirectories",
		 test_inode_order);
}
