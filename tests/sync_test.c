/*
 * Tests of sync's copy (modules/sync_copy.c) on plain folders: new,
 * changed, unchanged and removed files and folders, a type change, the
 * temporary name and the rename (a replaced file is a new inode, a failed
 * copy leaves the old file whole and no temporary file); of the source
 * folder modules (source.c): tree and churn with `at` work once per phase
 * and make the changes churn makes on a volume, the folder's refusals,
 * sync leaving enumerate's counts; and of the plan rules that validate.
 * `rig run` of a plan with them: sync_run_test.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "modules/source.h"
#include "modules/sync_copy.h"
#include "modules/tree.h"
#include "plan/plan.h"
#include "platform/fault.h"
#include "platform/platform.h"
#include "rec_sink.h"
#include "test.h"

/* --- helpers --- */

static void put(const char *dir, const char *rel, const char *text)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", dir, rel);
	CU_ASSERT_EQUAL(test_write_file(p.buf, text), 0);
	sb_release(&p);
}

static void mk(const char *dir, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", dir, rel);
	CU_ASSERT_EQUAL(mkdir(p.buf, 0755), 0);
	sb_release(&p);
}

/* Set rel's modification time to sec (whole seconds). */
static void set_mtime(const char *dir, const char *rel, time_t sec)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", dir, rel);
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };
	CU_ASSERT_EQUAL(utimensat(AT_FDCWD, p.buf, ts, 0), 0);
	sb_release(&p);
}

static ino_t inode_of(const char *dir, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", dir, rel);
	struct stat st;
	ino_t ino = stat(p.buf, &st) == 0 ? st.st_ino : 0;
	sb_release(&p);
	return ino;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's entry names, sorted; *n of them. */
static char **names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		XGROW(v, *n + 1, cap);
		v[(*n)++] = xstrdup(de->d_name);
	}
	if (d)
		closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), names_cmp);
	return v;
}

/*
 * Whether b holds exactly what a holds: the same names, types, sizes,
 * bytes and (mtimes: 1) modification times, folders included; the first
 * difference is printed. No entry named TREE_TMP_NAME may be left in b.
 */
static int same_tree(const char *a, const char *b, int mtimes)
{
	size_t na, nb;
	char **va = names(a, &na), **vb = names(b, &nb);
	int same = na == nb;
	if (!same)
		fprintf(stderr, "\n%s has %zu entries, %s %zu\n", a, na, b, nb);
	for (size_t i = 0; same && i < na; i++) {
		struct strbuf pa = STRBUF_INIT, pb = STRBUF_INIT;
		sb_addf(&pa, "%s/%s", a, va[i]);
		sb_addf(&pb, "%s/%s", b, vb[i]);
		struct stat sa, sb;
		same = !strcmp(va[i], vb[i]) && lstat(pa.buf, &sa) == 0 && lstat(pb.buf, &sb) == 0 &&
		       (sa.st_mode & S_IFMT) == (sb.st_mode & S_IFMT);
		if (same && S_ISDIR(sa.st_mode)) {
			same = same_tree(pa.buf, pb.buf, mtimes);
		} else if (same) {
			size_t la, lb;
			char *ca = test_read_file(pa.buf, &la), *cb = test_read_file(pb.buf, &lb);
			same = ca && cb && la == lb && !memcmp(ca, cb, la);
			free(ca);
			free(cb);
		}
		if (same && mtimes) {
			struct timespec ta[2], tb[2];
			plat_stat_times(&sa, ta);
			plat_stat_times(&sb, tb);
			same = ta[1].tv_sec == tb[1].tv_sec && ta[1].tv_nsec == tb[1].tv_nsec;
		}
		if (!same)
			fprintf(stderr, "\n%s and %s differ\n", pa.buf, pb.buf);
		sb_release(&pa);
		sb_release(&pb);
	}
	for (size_t i = 0; i < nb; i++)
		if (!strcmp(vb[i], TREE_TMP_NAME)) {
			fprintf(stderr, "\n%s/%s was left behind\n", b, vb[i]);
			same = 0;
		}
	for (size_t i = 0; i < na; i++)
		free(va[i]);
	for (size_t i = 0; i < nb; i++)
		free(vb[i]);
	free(va);
	free(vb);
	return same;
}

static int do_sync(const char *src, const char *dst, int direct, struct sync_counts *c)
{
	volatile sig_atomic_t cancel = 0;
	struct sync_opts o = { .direct = direct, .cancel = &cancel };
	struct strbuf err = STRBUF_INIT;
	memset(c, 0, sizeof(*c));
	int rc = mod_sync_tree(src, dst, &o, c, &err);
	if (rc)
		fprintf(stderr, "\nsync_tree: %d: %s\n", rc, err.buf);
	sb_release(&err);
	return rc;
}

/* --- the copy --- */

static void test_copy(void)
{
	char *tmp = test_tmpdir();
	struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT;
	sb_addf(&src, "%s/src", tmp);
	sb_addf(&dst, "%s/dst", tmp);
	CU_ASSERT_EQUAL(mkdir(src.buf, 0755), 0);
	mk(src.buf, "d1");
	mk(src.buf, "d1/d2");
	mk(src.buf, "gone");
	mk(src.buf, "gone/inner");
	put(src.buf, "a", "alpha");
	put(src.buf, "d1/b", "bravo");
	put(src.buf, "d1/d2/c", "charlie");
	put(src.buf, "gone/inner/x", "x-ray");
	put(src.buf, "swap", "a file that becomes a folder");
	set_mtime(src.buf, "a", 1000000000);

	/* New: everything copied, times too. */
	struct sync_counts c;
	CU_ASSERT_EQUAL_FATAL(do_sync(src.buf, dst.buf, 0, &c), 0);
	CU_ASSERT_TRUE(same_tree(src.buf, dst.buf, 1));
	CU_ASSERT_EQUAL(c.copied, 5);
	CU_ASSERT_EQUAL(c.bytes, 5 + 5 + 7 + 5 + 28);
	CU_ASSERT_EQUAL(c.made, 5); /* dst, d1, d1/d2, gone, gone/inner */
	CU_ASSERT_EQUAL(c.deleted, 0);
	CU_ASSERT_EQUAL(c.dirs, 5);
	CU_ASSERT_EQUAL(c.files, 5);
	CU_ASSERT_EQUAL(c.src_bytes, c.bytes);

	/* Unchanged: nothing copied. */
	CU_ASSERT_EQUAL(do_sync(src.buf, dst.buf, 0, &c), 0);
	CU_ASSERT_EQUAL(c.copied + c.deleted + c.made, 0);

	/* Changed: one file of the same size with another time, one of another
	 * size; one that only differs in content (same size, same time) is not
	 * copied, as the quick check of rsync and CCC would not. */
	ino_t a_before = inode_of(dst.buf, "a"), b_before = inode_of(dst.buf, "d1/b");
	ino_t c_before = inode_of(dst.buf, "d1/d2/c");
	put(src.buf, "a", "ALPHA");
	set_mtime(src.buf, "a", 1000000007);
	put(src.buf, "d1/b", "bravo, longer");
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/d1/d2/c", src.buf);
	struct stat st;
	CU_ASSERT_EQUAL(stat(p.buf, &st), 0);
	put(src.buf, "d1/d2/c", "CHARLIE");
	struct timespec keep[2];
	plat_stat_times(&st, keep);
	CU_ASSERT_EQUAL(utimensat(AT_FDCWD, p.buf, keep, 0), 0);
	/* Removed and retyped: a folder with contents, a file now a folder; and
	 * a stale temporary file in the destination. */
	sb_reset(&p);
	sb_addf(&p, "%s/gone", src.buf);
	CU_ASSERT_EQUAL(test_rmtree(p.buf), 0);
	sb_reset(&p);
	sb_addf(&p, "%s/swap", src.buf);
	CU_ASSERT_EQUAL(unlink(p.buf), 0);
	mk(src.buf, "swap");
	put(src.buf, "swap/now", "a file in the folder");
	put(dst.buf, "d1/" TREE_TMP_NAME, "half a copy");
	CU_ASSERT_EQUAL(do_sync(src.buf, dst.buf, 0, &c), 0);
	CU_ASSERT_EQUAL(c.copied, 3);                    /* a, d1/b, swap/now */
	CU_ASSERT_EQUAL(c.deleted, 3 + 1 + 1);           /* gone, inner, x; swap; the stale tmp */
	CU_ASSERT_EQUAL(c.made, 1);                      /* swap/ */
	/* The replaced files are new inodes (written elsewhere, renamed over);
	 * the one the quick check passed over keeps its old bytes. */
	CU_ASSERT_NOT_EQUAL(inode_of(dst.buf, "a"), a_before);
	CU_ASSERT_NOT_EQUAL(inode_of(dst.buf, "d1/b"), b_before);
	CU_ASSERT_EQUAL(inode_of(dst.buf, "d1/d2/c"), c_before);
	sb_reset(&p);
	sb_addf(&p, "%s/d1/d2/c", dst.buf);
	char *t = test_read_file(p.buf, NULL);
	CU_ASSERT_STRING_EQUAL(t ? t : "", "charlie");
	free(t);
	/* Everything else as the source, times included. */
	put(dst.buf, "d1/d2/c", "CHARLIE");
	CU_ASSERT_EQUAL(utimensat(AT_FDCWD, p.buf, keep, 0), 0);
	CU_ASSERT_TRUE(same_tree(src.buf, dst.buf, 0));
	sb_release(&p);
	sb_release(&src);
	sb_release(&dst);
	test_rmtree(tmp);
	free(tmp);
}

/* A copy that fails midway leaves the old file whole and no temporary file;
 * with direct I/O (where the file system takes it) files of any size copy
 * exactly, their last partial block included. */
static void test_copy_failure_and_direct(void)
{
	char *tmp = test_tmpdir();
	struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, big = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&src, "%s/src", tmp);
	sb_addf(&dst, "%s/dst", tmp);
	CU_ASSERT_EQUAL(mkdir(src.buf, 0755), 0);
	/* 2.5 MiB + 123 bytes: three 1 MiB blocks, the last one partial. */
	for (size_t i = 0; i < (5u << 19) + 123; i++)
		sb_addch(&big, (char)('a' + i % 23));
	put(src.buf, "big", big.buf);
	put(src.buf, "small", "tiny");
	struct sync_counts c;
	CU_ASSERT_EQUAL_FATAL(do_sync(src.buf, dst.buf, 1, &c), 0);
	CU_ASSERT_TRUE(same_tree(src.buf, dst.buf, 1));
	CU_ASSERT_EQUAL(c.bytes, big.len + 4);

	/* The second write of the new version fails. */
	big.buf[0] = 'Z';
	put(src.buf, "big", big.buf);
	CU_ASSERT_EQUAL(plat_fault_set("io:write:2:EIO", &err), 0);
	volatile sig_atomic_t cancel = 0;
	struct sync_opts o = { .direct = 0, .cancel = &cancel };
	memset(&c, 0, sizeof(c));
	sb_reset(&err);
	CU_ASSERT_EQUAL(mod_sync_tree(src.buf, dst.buf, &o, &c, &err), -EIO);
	plat_fault_set(NULL, &err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot write"));
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/big", dst.buf);
	size_t len = 0;
	char *t = test_read_file(p.buf, &len);
	CU_ASSERT_TRUE(t && len == big.len && t[0] == 'a' && !memcmp(t + 1, big.buf + 1, len - 1));
	free(t);
	sb_reset(&p);
	sb_addf(&p, "%s/%s", dst.buf, TREE_TMP_NAME);
	CU_ASSERT_NOT_EQUAL(access(p.buf, F_OK), 0);
	/* The next sync completes it. */
	CU_ASSERT_EQUAL(do_sync(src.buf, dst.buf, 1, &c), 0);
	CU_ASSERT_EQUAL(c.copied, 1);
	CU_ASSERT_TRUE(same_tree(src.buf, dst.buf, 1));
	sb_release(&p);
	sb_release(&src);
	sb_release(&dst);
	sb_release(&big);
	sb_release(&err);
	test_rmtree(tmp);
	free(tmp);
}

/* --- the source folder modules --- */

static void env_init(struct rec_env *e, const char *dir, uint64_t seed, const char *instance)
{
	rec_env_init(e, dir, seed, 0, 0);
	e->ctx.volume = e->dir;
	e->ctx.instance = instance;
	e->ctx.cache_method = NULL;
}

static void env_release(struct rec_env *e)
{
	rec_env_release(e, &mod_tree);
}

static int env_run(struct rec_env *e, const struct rig_module *m, const void *args)
{
	return rec_env_run(e, m, args);
}

/* sync's args for `from: dir`, bound through its parameter table as a plan's
 * are (release with sync_args_free). */
static void *sync_args(const char *dir)
{
	const struct rig_module *m = &mod_sync;
	struct pval v[4];
	memset(v, 0, sizeof(v));
	v[0] = (struct pval){ .given = 1, .text = (char *)dir };
	void *args = xcalloc(1, m->args_size);
	struct diag d;
	diag_init(&d, "t", NULL);
	CU_ASSERT_EQUAL(plan_params_bind(m, v, NULL, args, &d, (struct mark){ 1, 1, 1 }), 0);
	diag_release(&d);
	return args;
}

static void sync_args_free(void *args)
{
	plan_params_free(&mod_sync, args);
	free(args);
}

static struct tree_args small_tree(char *at)
{
	struct tree_args a;
	memset(&a, 0, sizeof(a));
	a.files = 200;
	a.dirs = 12;
	a.depth = 2;
	a.sizes.kind = DIST_INVSQUARE;
	a.sizes.lo = 1024;
	a.sizes.hi = 65536;
	a.at = at;
	return a;
}

/* tree and churn with `at`: the first cell of a phase works, the others
 * note it; the changes are churn's own on a volume (the same seed gives
 * the same tree and the same replacements, byte for byte). */
static void test_once_per_phase(void)
{
	char *tmp = test_tmpdir();
	struct strbuf srcdir = STRBUF_INIT, va = STRBUF_INIT, vb = STRBUF_INIT, ref = STRBUF_INIT,
		      srctree = STRBUF_INIT, reftree = STRBUF_INIT;
	sb_addf(&srcdir, "%s/source/here", tmp); /* made with its parent */
	sb_addf(&va, "%s/a", tmp);
	sb_addf(&vb, "%s/b", tmp);
	sb_addf(&ref, "%s/ref", tmp);
	sb_addf(&srctree, "%s/%s", srcdir.buf, TREE_SUBDIR);
	sb_addf(&reftree, "%s/%s", ref.buf, TREE_SUBDIR);
	mkdir(va.buf, 0755);
	mkdir(vb.buf, 0755);
	mkdir(ref.buf, 0755);
	struct rec_env a, b, r;
	env_init(&a, va.buf, 77, "run/phase1");
	env_init(&b, vb.buf, 77, "run/phase1");
	env_init(&r, ref.buf, 77, NULL);
	struct tree_args at = small_tree(srcdir.buf), onvol = small_tree(NULL);

	CU_ASSERT_EQUAL_FATAL(env_run(&a, &mod_tree, &at), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.rec.notes.buf, "source: built in "));
	CU_ASSERT_EQUAL(a.rec.metrics.len, 0); /* the source disk's time is no volume's */
	CU_ASSERT_PTR_NULL(a.state);           /* nothing on the volume */
	CU_ASSERT_EQUAL(env_run(&b, &mod_tree, &at), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.rec.notes.buf, "source: done in "));
	CU_ASSERT_PTR_NULL(strstr(b.rec.notes.buf, "shape"));
	CU_ASSERT_EQUAL(b.rec.metrics.len, 0);
	/* The same tree a volume gets from the same seed. */
	CU_ASSERT_EQUAL_FATAL(env_run(&r, &mod_tree, &onvol), 0);
	CU_ASSERT_TRUE(same_tree(reftree.buf, srctree.buf, 0));

	/* Three cycles of churn: applied once per phase, as churn on a volume. */
	struct churn_args cat = { .fraction = 10, .at = srcdir.buf }, cvol = { .fraction = 10 };
	char inst[3][32];
	for (uint32_t cyc = 1; cyc <= 3; cyc++) {
		snprintf(inst[cyc - 1], sizeof(inst[0]), "run/phase%u", 10 + cyc);
		a.ctx.cycle = b.ctx.cycle = r.ctx.cycle = cyc;
		a.ctx.instance = b.ctx.instance = inst[cyc - 1];
		CU_ASSERT_EQUAL(env_run(&a, &mod_churn, &cat), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(a.rec.notes.buf, "source: replaced 20 files in "));
		CU_ASSERT_EQUAL(env_run(&b, &mod_churn, &cat), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(b.rec.notes.buf, "source: done in "));
		CU_ASSERT_EQUAL(a.rec.metrics.len + b.rec.metrics.len, 0);
		CU_ASSERT_EQUAL(env_run(&r, &mod_churn, &cvol), 0);
		CU_ASSERT_TRUE(same_tree(reftree.buf, srctree.buf, 0));
	}
	struct tree_state *t = NULL;
	char *recorded = NULL;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(mod_source_load(srcdir.buf, &t, &recorded, &err), 0);
	const struct tree_state *rt = r.state;
	CU_ASSERT_EQUAL(t->replaced, 60);
	CU_ASSERT_EQUAL(t->replaced, rt->replaced);
	CU_ASSERT_EQUAL(t->bytes, rt->bytes);
	CU_ASSERT_EQUAL(memcmp(t->gen, rt->gen, 200 * sizeof(uint16_t)), 0);
	CU_ASSERT_STRING_EQUAL(recorded, "run/phase13");
	mod_tree_state_free(t);
	free(recorded);

	/* sync copies it to each volume; enumerate then finds what it holds. */
	void *sargs = sync_args(srcdir.buf);
	struct enumerate_args en = { .order = ENUMERATE_FTS, .cache = ENUMERATE_KEEP };
	struct rec_env *vols[2] = { &a, &b };
	for (int v = 0; v < 2; v++) {
		struct rec_env *e = vols[v];
		CU_ASSERT_EQUAL_FATAL(env_run(e, &mod_sync, sargs), 0);
		CU_ASSERT_EQUAL(rec_get(&e->rec, "files", "files"), 200);
		CU_ASSERT_EQUAL(rec_get(&e->rec, "deleted", "entries"), 0);
		CU_ASSERT_EQUAL(rec_get(&e->rec, "bytes", "B"), (double)rt->bytes);
		CU_ASSERT(rec_get(&e->rec, "seconds", "s") > 0);
		CU_ASSERT(rec_get(&e->rec, "rate", "MB/s") > 0);
		struct strbuf vt = STRBUF_INIT;
		sb_addf(&vt, "%s/%s", e->dir, TREE_SUBDIR);
		CU_ASSERT_TRUE(same_tree(srctree.buf, vt.buf, 1));
		sb_release(&vt);
		CU_ASSERT_EQUAL(env_run(e, &mod_enumerate, &en), 0);
		CU_ASSERT_EQUAL(rec_get(&e->rec, "entries", "entries"), 200 + 12 + 1);
		/* A second sync has nothing to do. */
		CU_ASSERT_EQUAL(env_run(e, &mod_sync, sargs), 0);
		CU_ASSERT_EQUAL(rec_get(&e->rec, "files", "files"), 0);
	}
	/* churn on a volume after sync works on the copy. */
	CU_ASSERT_EQUAL(env_run(&a, &mod_churn, &cvol), 0);
	CU_ASSERT_EQUAL(rec_get(&a.rec, "files", "files"), 20);
	CU_ASSERT_EQUAL(env_run(&a, &mod_enumerate, &en), 0);
	/* A new tree at the folder (another phase) replaces the old one. */
	a.ctx.instance = "run/phase20";
	CU_ASSERT_EQUAL(env_run(&a, &mod_tree, &at), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.rec.notes.buf, "source: built in "));
	CU_ASSERT_EQUAL(env_run(&b, &mod_sync, sargs), 0);
	CU_ASSERT_EQUAL(rec_get(&b.rec, "deleted", "entries"), 0);
	CU_ASSERT_EQUAL(rec_get(&b.rec, "files", "files"), 200); /* every file is new again */

	sync_args_free(sargs);
	sb_release(&err);
	env_release(&a);
	env_release(&b);
	env_release(&r);
	sb_release(&srcdir);
	sb_release(&va);
	sb_release(&vb);
	sb_release(&ref);
	sb_release(&srctree);
	sb_release(&reftree);
	test_rmtree(tmp);
	free(tmp);
}

/* The folder rig owns, and nothing else. */
static void test_folder_refusals(void)
{
	char *tmp = test_tmpdir();
	struct strbuf vol = STRBUF_INIT, other = STRBUF_INIT, inside = STRBUF_INIT,
		      fresh = STRBUF_INIT;
	sb_addf(&vol, "%s/vol", tmp);
	sb_addf(&other, "%s/someone-elses", tmp);
	sb_addf(&inside, "%s/vol/src", tmp);
	sb_addf(&fresh, "%s/fresh", tmp);
	mkdir(vol.buf, 0755);
	mkdir(other.buf, 0755);
	put(other.buf, "precious", "keep me");
	struct rec_env e;
	env_init(&e, vol.buf, 5, "x/phase1");
	e.ctx.cancel = &e.cancel;

	struct tree_args a = small_tree(other.buf);
	CU_ASSERT_EQUAL(mod_tree.run(&e.ctx, &a), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "is not empty and rig did not make it"));
	CU_ASSERT_EQUAL(inode_of(other.buf, "precious") != 0, 1);
	sb_reset(&e.err);
	a.at = inside.buf;
	CU_ASSERT_EQUAL(mod_tree.run(&e.ctx, &a), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "inside the volume's folder"));
	sb_reset(&e.err);
	a.at = tmp; /* around the volume */
	CU_ASSERT(mod_tree.run(&e.ctx, &a) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "around the volume's folder"));
	/* churn and sync need a tree there. */
	struct churn_args c = { .fraction = 5, .at = fresh.buf };
	sb_reset(&e.err);
	CU_ASSERT_EQUAL(mod_churn.run(&e.ctx, &c), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "cannot use source folder"));
	mkdir(fresh.buf, 0755);
	put(fresh.buf, SOURCE_MARKER, "");
	sb_reset(&e.err);
	void *s = sync_args(fresh.buf);
	CU_ASSERT_EQUAL(mod_sync.run(&e.ctx, s), -ENOENT);
	sync_args_free(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "no tree in"));
	/* An empty folder is claimed. */
	struct strbuf empty = STRBUF_INIT;
	sb_addf(&empty, "%s/empty", tmp);
	mkdir(empty.buf, 0755);
	a.at = empty.buf;
	a.files = 5;
	a.dirs = 0;
	a.depth = 0;
	sb_reset(&e.err);
	CU_ASSERT_EQUAL(mod_tree.run(&e.ctx, &a), 0);
	CU_ASSERT_NOT_EQUAL(inode_of(empty.buf, SOURCE_MARKER), 0);
	sb_release(&empty);
	env_release(&e);
	sb_release(&vol);
	sb_release(&other);
	sb_release(&inside);
	sb_release(&fresh);
	test_rmtree(tmp);
	free(tmp);
}

/* --- plans --- */

static void test_plans_validate(void)
{
	static const char *const ok[] = {
		/* the lead's plan */
		"rig: 1\nname: t\ntarget:\n  dirs: [/tmp/a, /tmp/b]\nsteps:\n"
		"  - tree:  { files: 1000000, dirs: 111000, depth: 3, sizes: \"inverse-square(1K..20G)\","
		" at: /var/tmp/rig-source }\n"
		"  - sync:  { from: /var/tmp/rig-source }\n"
		"  - cycle:\n      times: 20\n      steps:\n"
		"        - pause:     { time: 10s }\n"
		"        - enumerate: { order: fts }\n"
		"        - churn:     { fraction: 5%, at: /var/tmp/rig-source }\n"
		"        - sync:      { from: /var/tmp/rig-source }\n",
		/* the same folder written differently; churn on the volume after sync */
		"rig: 1\nname: t\ntarget:\n  dirs: [/tmp/a]\nsteps:\n"
		"  - tree: { at: /var/tmp//src/ }\n  - sync: { from: /var/tmp/src }\n"
		"  - churn: {}\n  - enumerate: {}\n",
		/* an image's folder holds the source */
		"rig: 1\nname: t\ntarget:\n  image: { path: /var/tmp/x.img, size: 1G }\n"
		"layouts:\n  - name: l\n    partitions:\n      - { name: A, fs: ext4, size: rest }\n"
		"steps:\n  - tree: { at: /var/tmp }\n  - sync: { from: /var/tmp }\n",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct diag d;
		diag_init(&d, "plan.yaml", NULL);
		struct plan *p = plan_parse_text("plan.yaml", ok[i], strlen(ok[i]), NULL, &d);
		if (d.nerrors) {
			char m[512];
			diag_format_item(&d, 0, m, sizeof(m));
			fprintf(stderr, "\nplan %zu: %s\n", i, m);
		}
		CU_ASSERT_EQUAL(d.nerrors, 0);
		diag_release(&d);
		plan_free(p);
	}
	/* rig help's words come from the structs. */
	struct strbuf sb = STRBUF_INIT;
	mod_describe_needs(&mod_sync, &sb);
	CU_ASSERT_STRING_EQUAL(sb.buf, "Needs an earlier 'tree' step with 'at' the same folder as 'from'.");
	sb_reset(&sb);
	mod_describe_needs(&mod_enumerate, &sb);
	CU_ASSERT_STRING_EQUAL(sb.buf, "Needs an earlier 'tree' step on the same volume or a 'sync' "
				       "step (it leaves there what 'tree' leaves).");
	sb_reset(&sb);
	mod_describe_needs(&mod_churn, &sb);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb.buf, "; with 'at', an earlier 'tree' step with 'at' the same folder."));
	sb_release(&sb);
}

void register_sync_tests(void)
{
	CU_pSuite s = test_suite("sync: the copy, source folders, plans");
	test_add(s, "copy: new, unchanged, changed, removed, retyped; rename over", test_copy);
	test_add(s, "copy: a failed copy leaves the old file whole; direct I/O and tails",
		 test_copy_failure_and_direct);
	test_add(s, "tree and churn at a folder: once per phase, churn's own changes; sync, enumerate",
		 test_once_per_phase);
	test_add(s, "source folders: refusals, an empty folder claimed", test_folder_refusals);
	test_add(s, "plans with source folders validate; rig help's needs", test_plans_validate);
}
