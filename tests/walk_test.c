/*
 * Tests of rig/modules/walk.c, the stat-every-entry walk behind
 * `enumerate`: exact counts of directories, files, other entries and bytes
 * on a hand-made tree (symlinks counted, never followed), empty and deep
 * trees, the working directory untouched, errors that name the path, and
 * cancellation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../rig/modules/walk.h"
#include "../rig/util/strbuf.h"
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

static void test_counts(void)
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
	CU_ASSERT_EQUAL(walk_tree(d, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.dirs, 5);  /* root, a, a/b, a/b/c, e */
	CU_ASSERT_EQUAL(c.files, 4);
	CU_ASSERT_EQUAL(c.other, 3); /* two symlinks and a fifo */
	CU_ASSERT_EQUAL(c.bytes, 10 + 1000 + 0 + 123456);
	CU_ASSERT_EQUAL(err.len, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(after, sizeof(after)));
	CU_ASSERT_STRING_EQUAL(cwd, after);

	/* Counts add up over walks. */
	CU_ASSERT_EQUAL(walk_tree(d, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.files, 8);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

static void test_empty_and_wide(void)
{
	char *d = test_tmpdir();
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(walk_tree(d, &c, NULL, &err), 0);
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
	CU_ASSERT_EQUAL(walk_tree(d, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.dirs, 1);
	CU_ASSERT_EQUAL(c.files, 700);
	CU_ASSERT_EQUAL(c.bytes, want);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

static void test_deep(void)
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
	CU_ASSERT_EQUAL(walk_tree(d, &c, NULL, &err), 0);
	CU_ASSERT_EQUAL(c.dirs, 201);
	CU_ASSERT_EQUAL(c.files, 1);
	CU_ASSERT_EQUAL(c.bytes, 7);
	sb_release(&rel);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

static void test_errors(void)
{
	char *d = test_tmpdir();
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;

	char *missing = path_of(d, "missing");
	CU_ASSERT_EQUAL(walk_tree(missing, &c, NULL, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot open directory"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, missing));
	CU_ASSERT_EQUAL(c.dirs, 0);

	/* The root itself is not followed when it is a symlink. */
	make_dir(d, "real");
	make_link(d, "real", "link");
	char *link = path_of(d, "link");
	sb_reset(&err);
	int rc = walk_tree(link, &c, NULL, &err);
	CU_ASSERT(rc == -ELOOP || rc == -ENOTDIR);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, link));

	/* A file is not a directory. */
	make_file(d, "plain", 1);
	char *plain = path_of(d, "plain");
	sb_reset(&err);
	CU_ASSERT_EQUAL(walk_tree(plain, &c, NULL, &err), -ENOTDIR);

	/* An unreadable subdirectory: the error names it (not as root, who may
	 * read anything). */
	if (geteuid() != 0) {
		make_dir(d, "real/locked");
		char *locked = path_of(d, "real/locked");
		CU_ASSERT_EQUAL(chmod(locked, 0), 0);
		char *real = path_of(d, "real");
		sb_reset(&err);
		CU_ASSERT_EQUAL(walk_tree(real, &c, NULL, &err), -EACCES);
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

static void test_cancel(void)
{
	char *d = test_tmpdir();
	make_dir(d, "a");
	make_file(d, "a/f", 1);
	make_file(d, "g", 1);
	volatile sig_atomic_t cancel = 1;
	struct walk_counts c = { 0, 0, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(walk_tree(d, &c, &cancel, &err), 1);
	CU_ASSERT(c.files < 2);
	CU_ASSERT_EQUAL(err.len, 0);
	cancel = 0;
	c = (struct walk_counts){ 0, 0, 0, 0 };
	CU_ASSERT_EQUAL(walk_tree(d, &c, &cancel, &err), 0);
	CU_ASSERT_EQUAL(c.files, 2);
	sb_release(&err);
	test_rmtree(d);
	free(d);
}

void register_walk_tests(void)
{
	CU_pSuite s = test_suite("walk (enumerate's tree walk)");
	test_add(s, "counts: directories, files, bytes; links and fifos not followed", test_counts);
	test_add(s, "an empty root, a 700-entry directory", test_empty_and_wide);
	test_add(s, "200 levels deep", test_deep);
	test_add(s, "errors name the path; a symlink root is not followed", test_errors);
	test_add(s, "cancel stops the walk without an error", test_cancel);
}
