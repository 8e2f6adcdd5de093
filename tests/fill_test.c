/*
 * Tests of `fill` (modules/fill.c).
 *
 * Suite "fill" (anyone): on the test folder's own file system fill can
 * only be asked to go down (a level below the current one), never to
 * write: with no filler of its own it records the level, removes nothing
 * and says why. `rig run` of a plan with fill on a `dirs` target.
 *
 * Suite "fill-ext4" (root): a 64 MiB image file, attached with
 * `losetup --find --show` (the device is checked to be backed by our image
 * before mkfs touches it), mkfs.ext4, mounted under a temporary folder.
 * fill to 50%, 80%, down to 30%, up to 40% without direct I/O, then past
 * capacity (ENOSPC: the level reached, below the target, a note, success),
 * then release_state removes every filler file. Levels are checked against
 * statvfs read by the test itself. The suite's cleanup function, which
 * CUnit runs whatever the tests did, unmounts, detaches exactly the device
 * it attached, and removes the image.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "platform/spawn.h"
#include "rec_sink.h"
#include "test.h"

extern const struct rig_module mod_fill;

/* The level as the module defines it, read independently. */
static double level_of(const char *dir)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0 || !sv.f_blocks)
		return NAN;
	return 100.0 * (double)(sv.f_blocks - sv.f_bfree) / (double)sv.f_blocks;
}

/* The bytes free to an unprivileged user, read independently. */
static double free_of(const char *dir)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0)
		return NAN;
	return (double)sv.f_bavail * (double)(sv.f_frsize ? sv.f_frsize : sv.f_bsize);
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void env_init(struct rec_env *e, const char *dir, int direct)
{
	rec_env_init(e, dir, 5, direct, 1);
	e->rec.file_prefix = "f";
	e->ctx.volume = "V";
}

static void env_reset(struct rec_env *e)
{
	rec_env_reset(e);
}

static void env_release(struct rec_env *e)
{
	rec_env_release(e, &mod_fill);
}

/* fill's args: one double, `to` (bound from text like the runner does). */
static int run_fill(struct rec_env *e, const char *to)
{
	const struct rig_module *m = &mod_fill;
	struct pval vals[1];
	memset(vals, 0, sizeof(vals));
	CU_ASSERT_EQUAL_FATAL(mod_nparams(m), 1);
	vals[0].given = 1;
	vals[0].text = (char *)to;
	void *args = xcalloc(1, m->args_size);
	struct diag d;
	diag_init(&d, "test", NULL);
	struct mark at = { 1, 1, 1 };
	CU_ASSERT_EQUAL(plan_params_bind(m, vals, NULL, args, &d, at), 0);
	diag_release(&d);
	int rc = m->run(&e->ctx, args);
	plan_params_free(m, args);
	free(args);
	return rc;
}

/* --- anyone --- */

static void test_fill_down_without_filler(void)
{
	char *tmp = test_tmpdir();
	double now = level_of(tmp);
	if (!(now > 0.002)) {
		printf("\n  (the test folder's file system is %.4f%% used: nothing below to ask for)\n",
		       now);
		test_rmtree(tmp);
		free(tmp);
		return;
	}
	struct rec_env e;
	env_init(&e, tmp, 1);
	CU_ASSERT_EQUAL(run_fill(&e, "0.001%"), 0);
	CU_ASSERT_EQUAL(e.err.len, 0);
	double level = rec_get(&e.rec, "level", "%");
	CU_ASSERT(level > 0.001);
	CU_ASSERT(fabs(level - level_of(tmp)) < 1.0); /* other writers may move it a little */
	double left = rec_get(&e.rec, "free", "B"), seen = free_of(tmp);
	CU_ASSERT(left > 0 && fabs(left - seen) < 0.01 * seen + (64 << 20));
	CU_ASSERT(rec_get(&e.rec, "seconds", "s") >= 0);
	CU_ASSERT(isnan(rec_get(&e.rec, "rate", "MB/s")));   /* nothing written */
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "level: no filler left to remove"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "from: "));
	CU_ASSERT_EQUAL(e.rec.nfiles, 0);
	/* Its folder exists until the state is released. */
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/fill", tmp);
	CU_ASSERT_EQUAL(entries(p.buf), 0);
	env_release(&e);
	CU_ASSERT_EQUAL(entries(tmp), 0);
	sb_release(&p);
	test_rmtree(tmp);
	free(tmp);
}

static void test_fill_errors(void)
{
	struct rec_env e;
	env_init(&e, "/nonexistent-rig-test/dir", 1);
	CU_ASSERT_EQUAL(run_fill(&e, "50%"), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "cannot measure the fill level of "
					       "/nonexistent-rig-test/dir: statvfs: No such file"));
	CU_ASSERT_PTR_NULL(e.state);
	env_release(&e);
}

static void test_run_fill_plan(void)
{
	char *tmp = test_tmpdir();
	if (!(level_of(tmp) > 0.002)) {
		printf("\n  (the test folder's file system is nearly empty: skipped)\n");
		test_rmtree(tmp);
		free(tmp);
		return;
	}
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, text = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", tmp);
	sb_addf(&out, "%s/out", tmp);
	sb_addf(&p, "%s/a", tmp);
	sb_addf(&text, "rig: 1\nname: fill-e2e\ntarget:\n  dirs: [\"%s\"]\nsteps:\n"
		       "  - fill: { to: 0.001%% }\n", p.buf);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "-o", out.buf, plan.buf, NULL };
	char *o = NULL;
	int rc = test_run_rig(args, &o);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\n%s\n", o);
	free(o);
	sb_reset(&p);
	sb_addf(&p, "%s/results.csv", out.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",1,fill,a,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",level,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",%,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",free,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",B,"));
	free(csv);
	sb_reset(&p);
	sb_addf(&p, "%s/a", tmp);
	CU_ASSERT_EQUAL(entries(p.buf), 0);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&text);
	sb_release(&p);
}

/* --- root: a real, small ext4 --- */

static struct {
	char *tmp;      /* holds the image and the mount point */
	char *image;
	char *mnt;
	char *device;   /* what `losetup --find --show` printed: ours to detach */
	int mounted;
	double empty_level;
	struct rec_env e;   /* one volume's state across the tests, in order */
	int env_live;
} fx;

static int run_cmd(const char *const *argv, char **out)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	int rc = plat_spawn_check(NULL, argv, NULL, &r, &err);
	if (rc < 0)
		fprintf(stderr, "\n%s\n", err.buf);
	if (out)
		*out = rc == 0 ? xstrdup(r.output) : NULL;
	plat_spawn_result_release(&r);
	sb_release(&err);
	return rc;
}

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
}

static int suite_init(void)
{
	memset(&fx, 0, sizeof(fx));
	return 0;
}

static int suite_clean(void)
{
	if (fx.env_live)
		env_release(&fx.e);
	fx.env_live = 0;
	if (fx.mounted) {
		const char *um[] = { "umount", fx.mnt, NULL };
		if (run_cmd(um, NULL) == 0)
			fx.mounted = 0;
	}
	if (fx.device) {
		/* Exactly the device we attached; never another. If unmounting
		 * failed, -d still detaches it once it is unmounted (autoclear). */
		const char *det[] = { "losetup", "-d", fx.device, NULL };
		run_cmd(det, NULL);
		free(fx.device);
		fx.device = NULL;
	}
	if (fx.tmp && !fx.mounted)
		test_rmtree(fx.tmp);
	free(fx.tmp);
	free(fx.image);
	free(fx.mnt);
	fx.tmp = fx.image = fx.mnt = NULL;
	return 0;
}

/* A sparse 64 MiB file. */
static int truncate_image(void)
{
	FILE *f = fopen(fx.image, "wbx");
	if (!f)
		return -errno;
	int rc = ftruncate(fileno(f), 64 << 20) < 0 ? -errno : 0;
	fclose(f);
	return rc;
}

static void test_ext4_setup(void)
{
	struct strbuf sb = STRBUF_INIT;
	fx.tmp = test_tmpdir();
	sb_addf(&sb, "%s/fs.img", fx.tmp);
	fx.image = sb_detach(&sb);
	sb_addf(&sb, "%s/mnt", fx.tmp);
	fx.mnt = sb_detach(&sb);
	CU_ASSERT_EQUAL_FATAL(mkdir(fx.mnt, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(truncate_image(), 0);

	const char *att[] = { "losetup", "--find", "--show", fx.image, NULL };
	char *dev = NULL;
	CU_ASSERT_EQUAL_FATAL(run_cmd(att, &dev), 0);
	chomp(dev);
	fx.device = dev;
	CU_ASSERT_FATAL(strncmp(dev, "/dev/loop", 9) == 0);
	/* Before formatting: the device must be backed by our image. */
	const char *chk[] = { "losetup", "--list", "--noheadings", "--output", "BACK-FILE",
			      fx.device, NULL };
	char *back = NULL;
	CU_ASSERT_EQUAL_FATAL(run_cmd(chk, &back), 0);
	chomp(back);
	char *real = realpath(fx.image, NULL);
	int ours = real && !strcmp(back, real);
	if (!ours)
		fprintf(stderr, "\n%s is backed by '%s', not %s: not formatting it\n", fx.device,
			back, real ? real : fx.image);
	free(back);
	free(real);
	CU_ASSERT_FATAL(ours);

	const char *mk[] = { "mkfs.ext4", "-q", "-F", "-E", "nodiscard", fx.device, NULL };
	CU_ASSERT_EQUAL_FATAL(run_cmd(mk, NULL), 0);
	const char *mnt[] = { "mount", fx.device, fx.mnt, NULL };
	CU_ASSERT_EQUAL_FATAL(run_cmd(mnt, NULL), 0);
	fx.mounted = 1;
	fx.empty_level = level_of(fx.mnt);
	printf("\n  %s (64 MiB ext4 on %s) starts at %.3f%%\n", fx.mnt, fx.device, fx.empty_level);
	CU_ASSERT(fx.empty_level > 0 && fx.empty_level < 20);
	env_init(&fx.e, fx.mnt, 1);
	fx.env_live = 1;
}

#define READY()                                                          \
	do {                                                             \
		if (!fx.mounted || !fx.env_live) {                       \
			CU_FAIL("no test file system (setup failed)");   \
			return;                                          \
		}                                                        \
		env_reset(&fx.e);                                        \
	} while (0)

/* fill to `to` and check: success, level metric = statvfs, within tol of
 * the target on the side it should be. */
static double fill_to(const char *to, double target, int up)
{
	int rc = run_fill(&fx.e, to);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\n%s\n", fx.e.err.buf);
	double level = rec_get(&fx.e.rec, "level", "%");
	double seen = level_of(fx.mnt);
	if (fabs(level - target) >= 0.1)
		fprintf(stderr, "\nnotes:\n%s", fx.e.rec.notes.buf);
	CU_ASSERT_DOUBLE_EQUAL(level, seen, 1e-9);
	/* Nothing else writes here: free is exactly what statvfs says now. */
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&fx.e.rec, "free", "B"), free_of(fx.mnt), 0.5);
	if (up) {
		CU_ASSERT(level >= target && level - target < 0.1);
	} else {
		CU_ASSERT(level <= target && target - level < 0.1);
	}
	double secs = rec_get(&fx.e.rec, "seconds", "s");
	double rate = rec_get(&fx.e.rec, "rate", "MB/s");
	printf("\n  fill to %s: level %.4f%% in %.3f s", to, level, secs);
	if (!isnan(rate))
		printf(", %.1f MB/s, %zu files", rate, fx.e.rec.nfiles);
	return level;
}

static void test_ext4_up_50(void)
{
	READY();
	fill_to("50%", 50, 1);
	CU_ASSERT(rec_get(&fx.e.rec, "rate", "MB/s") > 0);
	CU_ASSERT(fx.e.rec.nfiles >= 20); /* files of at most 1/64 of the volume */
	CU_ASSERT(fx.e.rec.file_bytes > 20u << 20);
	CU_ASSERT_PTR_NULL(strstr(fx.e.rec.notes.buf, "full:"));
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/fill", fx.mnt);
	CU_ASSERT((size_t)entries(p.buf) == fx.e.rec.nfiles);
	sb_release(&p);
}

static void test_ext4_up_80(void)
{
	READY();
	fill_to("80%", 80, 1);
	CU_ASSERT(rec_get(&fx.e.rec, "rate", "MB/s") > 0);
}

static void test_ext4_down_30(void)
{
	READY();
	fill_to("30%", 30, 0);
	CU_ASSERT(isnan(rec_get(&fx.e.rec, "rate", "MB/s")));
	CU_ASSERT_PTR_NOT_NULL(strstr(fx.e.rec.notes.buf, "removed: "));
	CU_ASSERT_EQUAL(fx.e.rec.nfiles, 0);
}

static void test_ext4_up_buffered(void)
{
	READY();
	fx.e.ctx.direct = 0;
	fill_to("40%", 40, 1);
	CU_ASSERT_PTR_NULL(strstr(fx.e.rec.notes.buf, "direct:"));
	fx.e.ctx.direct = 1;
	/* Asking for the level it is at does nothing, both ways. */
	double now = level_of(fx.mnt);
	for (int i = 0; i < 2; i++) {
		env_reset(&fx.e);
		CU_ASSERT_EQUAL(run_fill(&fx.e, "40%"), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(fx.e.rec.notes.buf, "level: already at the level asked"));
		CU_ASSERT_DOUBLE_EQUAL(rec_get(&fx.e.rec, "level", "%"), now, 1e-9);
		CU_ASSERT_EQUAL(fx.e.rec.nfiles, 0);
	}
}

static void test_ext4_past_capacity(void)
{
	READY();
	int rc = run_fill(&fx.e, "100%");
	CU_ASSERT_EQUAL(rc, 0); /* a result, not a failure */
	if (rc)
		fprintf(stderr, "\n%s\n", fx.e.err.buf);
	double level = rec_get(&fx.e.rec, "level", "%");
	CU_ASSERT(level < 100 && level > 90);
	CU_ASSERT_DOUBLE_EQUAL(level, level_of(fx.mnt), 1e-9);
	/* Full for root is beyond full for anyone else: ext4's reserved blocks
	 * are not in free. */
	double left = rec_get(&fx.e.rec, "free", "B");
	CU_ASSERT_DOUBLE_EQUAL(left, free_of(fx.mnt), 0.5);
	CU_ASSERT(left >= 0 && left < 0.05 * (64 << 20));
	CU_ASSERT_PTR_NOT_NULL(strstr(fx.e.rec.notes.buf, "full: the volume is full ("));
	CU_ASSERT(rec_get(&fx.e.rec, "rate", "MB/s") > 0);
	printf("\n  fill to 100%%: ENOSPC at %.4f%%", level);
	const char *n = strstr(fx.e.rec.notes.buf, "full: ");
	if (n)
		printf(" (%.*s)", (int)(strchr(n, '\n') - n), n);
	/* And back down from full. */
	env_reset(&fx.e);
	fill_to("60%", 60, 0);
	/* Buffered writes run out too (ext4 says so at write time). */
	env_reset(&fx.e);
	fx.e.ctx.direct = 0;
	CU_ASSERT_EQUAL(run_fill(&fx.e, "100%"), 0);
	fx.e.ctx.direct = 1;
	CU_ASSERT_PTR_NOT_NULL(strstr(fx.e.rec.notes.buf, "full: the volume is full ("));
	CU_ASSERT(rec_get(&fx.e.rec, "level", "%") > 90);
	env_reset(&fx.e);
	fill_to("60%", 60, 0);
}

static void test_ext4_cancel(void)
{
	READY();
	fx.e.cancel = 1;
	double before = level_of(fx.mnt);
	CU_ASSERT_EQUAL(run_fill(&fx.e, "90%"), 0);
	CU_ASSERT_EQUAL(fx.e.rec.metrics.len, 0);
	CU_ASSERT(fabs(level_of(fx.mnt) - before) < 0.1);
	fx.e.cancel = 0;
}

static void test_ext4_release(void)
{
	READY();
	CU_ASSERT_PTR_NOT_NULL_FATAL(fx.e.state);
	mod_fill.release_state(fx.e.state);
	fx.e.state = NULL;
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/fill", fx.mnt);
	struct stat st;
	CU_ASSERT(stat(p.buf, &st) < 0 && errno == ENOENT);
	sb_release(&p);
	double level = level_of(fx.mnt);
	printf("\n  after release: %.4f%% (empty: %.4f%%)\n", level, fx.empty_level);
	CU_ASSERT(fabs(level - fx.empty_level) < 0.2);
	/* Only lost+found is left. */
	CU_ASSERT_EQUAL(entries(fx.mnt), 1);
}

void register_fill_tests(void)
{
	CU_pSuite s = test_suite_e2e("fill");
	test_add(s, "asked to go down with no filler: level recorded, nothing removed",
		 test_fill_down_without_filler);
	test_add(s, "a volume folder that is not there", test_fill_errors);
	test_add(s, "rig run: fill on a dirs target", test_run_fill_plan);

	CU_pSuite r = CU_add_suite("fill-ext4", suite_init, suite_clean);
	if (!r) {
		fprintf(stderr, "cannot add suite fill-ext4\n");
		exit(1);
	}
	if (!test_require_root(r, "losetup, mkfs.ext4 and mount of a 64 MiB image"))
		return;
	test_add(r, "attach, format and mount a 64 MiB ext4 image", test_ext4_setup);
	test_add(r, "fill to 50%", test_ext4_up_50);
	test_add(r, "fill to 80%", test_ext4_up_80);
	test_add(r, "down to 30%: newest filler removed", test_ext4_down_30);
	test_add(r, "up to 40% with buffered I/O; the same level again", test_ext4_up_buffered);
	test_add(r, "past capacity: ENOSPC is a recorded level, not a failure", test_ext4_past_capacity);
	test_add(r, "cancelled before it starts", test_ext4_cancel);
	test_add(r, "release_state removes the filler", test_ext4_release);
}
