/*
 * Target locks (platform/lock.c, prov_target_keys, the runner): one
 * run at a time on each disk, image and directory.
 *
 * The lock itself: lock file names, two lock sets of one process excluding
 * each other, the holder's record, release. End to end, on a `dirs` target
 * without root: two runs of one plan started together (one is refused
 * with exit 2, naming the other's folder, and makes no run folder; the
 * other completes), a directory reached by a link is the same directory,
 * a run killed with SIGKILL (its command still running) leaves no lock,
 * and `rig resume` is refused while another run holds the target. With the
 * fake diskutil: a second run on disk4 is refused before any diskutil
 * call, and `rig devices` names the run using it. As root, on loop
 * devices made here: the same race on a loop device as a disk target
 * (`rig devices` and `rig plan` name the run using it) and on an image (a
 * disk run on the image's loop device is refused too), a disk that
 * another program holds exclusively is refused before sgdisk, and an image
 * someone attached is refused with `losetup -d` suggested only when nothing
 * holds the loop device.
 *
 * Every rig started here gets this test process's RIG_LOCK_DIR (main.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "macos_fx.h"
#include "platform/lock.h"
#include "provision/linux/linux.h"
#include "provision_util.h"
#include "test.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* --- the lock --- */

static void test_file_names(void)
{
	struct strbuf sb = STRBUF_INIT;
	plat_lock_file_name("disk-8:16-WD-WCC4E1234567", &sb);
	CU_ASSERT_STRING_EQUAL(sb.buf, "disk-8:16-WD-WCC4E1234567.lock");
	sb_reset(&sb);
	plat_lock_file_name("image-/var/tmp/a b%.img", &sb);
	CU_ASSERT_STRING_EQUAL(sb.buf, "image-%2Fvar%2Ftmp%2Fa%20b%25.img.lock");
	sb_reset(&sb);
	plat_lock_file_name("..", &sb); /* never a name of the folder itself */
	CU_ASSERT_STRING_EQUAL(sb.buf, "%2E..lock");
	/* Long keys are cut, and keys that differ only past the cut differ. */
	struct strbuf k = STRBUF_INIT, other = STRBUF_INIT;
	sb_adds(&k, "image-");
	for (int i = 0; i < 300; i++)
		sb_addch(&k, 'x');
	sb_adds(&other, k.buf);
	sb_adds(&k, "/a");
	sb_adds(&other, "/b");
	sb_reset(&sb);
	plat_lock_file_name(k.buf, &sb);
	struct strbuf sb2 = STRBUF_INIT;
	plat_lock_file_name(other.buf, &sb2);
	CU_ASSERT_TRUE(sb.len < 200);
	CU_ASSERT_STRING_NOT_EQUAL(sb.buf, sb2.buf);
	sb_release(&sb);
	sb_release(&sb2);
	sb_release(&k);
	sb_release(&other);
}

/* Two lock sets of one process stand for two runs: flock excludes them. */
static void test_two_holders(void)
{
	char *tmp = test_tmpdir();
	char *saved = xstrdup(getenv("RIG_LOCK_DIR"));
	struct strbuf dir = STRBUF_INIT, err = STRBUF_INIT, who = STRBUF_INIT;
	sb_addf(&dir, "%s/locks", tmp); /* made by the first lock */
	setenv("RIG_LOCK_DIR", dir.buf, 1);

	struct lock_set a, b;
	plat_lock_set_init(&a, "rig run");
	plat_lock_set_init(&b, "rig resume");
	CU_ASSERT_EQUAL(plat_lock_probe("dir-1:2", &who), 0);
	CU_ASSERT_EQUAL(plat_lock_take(&a, "dir-1:2", "directory /x", &err), 0);
	CU_ASSERT_EQUAL(plat_lock_take(&a, "dir-1:2", "directory /x", &err), 0); /* held: once */
	CU_ASSERT_EQUAL(a.n, 1);
	plat_lock_set_run(&a, "/somewhere/runs/20261201T141016Z-cc");
	double t0 = now_ms();
	CU_ASSERT_EQUAL(plat_lock_take(&b, "dir-1:2", "directory /x", &err), -EBUSY);
	CU_ASSERT_TRUE(now_ms() - t0 < LOCK_SETTLE_MS / 2); /* a complete record: no wait */
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "directory /x is in use by rig run /somewhere/runs/20261201T141016Z-cc "
		       "(pid %ld on ", (long)getpid());
	pt_has("refusal", err.buf, want.buf);
	pt_has("refusal", err.buf, " UTC); wait for it or stop it");
	CU_ASSERT_EQUAL(b.n, 0);
	CU_ASSERT_EQUAL(plat_lock_probe("dir-1:2", &who), 1);
	pt_has("probe", who.buf, "rig run /somewhere/runs/20261201T141016Z-cc (pid ");

	/* The record, for people looking into the folder. */
	struct strbuf file = STRBUF_INIT;
	sb_addf(&file, "%s/dir-1:2.lock", dir.buf);
	char *rec = test_read_file(file.buf, NULL);
	pt_has("record", rec, "target: directory /x\nrun: /somewhere/runs/20261201T141016Z-cc\n"
			      "command: rig run\npid: ");
	free(rec);

	/* Released: the file is emptied, the other set takes it at once. */
	plat_lock_set_release(&a);
	rec = test_read_file(file.buf, NULL);
	CU_ASSERT_STRING_EQUAL(rec ? rec : "(none)", "");
	free(rec);
	CU_ASSERT_EQUAL(plat_lock_probe("dir-1:2", &who), 0);
	sb_reset(&err);
	CU_ASSERT_EQUAL(plat_lock_take(&b, "dir-1:2", "directory /x", &err), 0);
	/* A holder that has not said which run it is (it is starting) is
	 * given time, then named as starting. */
	plat_lock_set_init(&a, "rig run");
	sb_reset(&err);
	t0 = now_ms();
	CU_ASSERT_EQUAL(plat_lock_take(&a, "dir-1:2", "directory /x", &err), -EBUSY);
	CU_ASSERT_TRUE(now_ms() - t0 >= LOCK_SETTLE_MS);
	pt_has("starting", err.buf, "directory /x is in use by a rig resume that is starting (pid ");
	plat_lock_set_release(&a);
	plat_lock_set_release(&b);

	setenv("RIG_LOCK_DIR", saved, 1);
	free(saved);
	sb_release(&want);
	sb_release(&file);
	sb_release(&dir);
	sb_release(&err);
	sb_release(&who);
	test_rmtree(tmp);
	free(tmp);
}

/* --- rig in the background --- */

struct bg {
	pid_t pid;
	char *log;    /* its stdout and stderr */
	double t0;
};

/* Start rig with args; bin_dir first on PATH when not NULL. */
static void bg_start(struct bg *b, const char *log, const char *bin_dir, const char *const *args)
{
	const char **argv = test_rig_argv(args);
	b->log = xstrdup(log);
	b->t0 = now_ms();
	b->pid = fork();
	if (b->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int in = open("/dev/null", O_RDONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		dup2(in, 0);
		if (bin_dir) {
			struct strbuf p = STRBUF_INIT;
			sb_addf(&p, "%s:%s", bin_dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
			setenv("PATH", p.buf, 1);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	free(argv);
}

/* Its exit status (-1: killed) and output (caller frees). */
static int bg_wait(struct bg *b, char **out)
{
	int st = 0;
	waitpid(b->pid, &st, 0);
	if (out)
		*out = test_read_file(b->log, NULL);
	free(b->log);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Poll until sql on RUN/results.db gives want (up to ms). */
static int wait_query(const char *run, const char *sql, const char *want, int ms)
{
	for (int waited = 0; waited < ms; waited += 20) {
		char *v = pt_run_query(run, sql);
		int ok = v && !strcmp(v, want);
		free(v);
		if (ok)
			return 1;
		nap_ms(20);
	}
	return 0;
}

/*
 * Two runs of one plan started together (args: the same except their -o,
 * whose value is the NULL slot at index `o` of args, filled with each's
 * folder). Exactly one completes and one is refused (exit 2) naming the
 * other's folder, with no folder of its own. While the winner runs,
 * during(ctx, winner's folder) may look. Returns the winner (0 or 1), -1
 * when the outcome is wrong.
 */
static int race(const char *tmp, const char *bin_dir, const char **args, size_t o,
		const char *cells, void (*during)(void *ctx, const char *winner), void *ctx)
{
	struct strbuf run[2] = { STRBUF_INIT, STRBUF_INIT }, log[2] = { STRBUF_INIT, STRBUF_INIT };
	struct bg b[2];
	for (int i = 0; i < 2; i++) {
		sb_addf(&run[i], "%s/run%d", tmp, i + 1);
		sb_addf(&log[i], "%s/run%d.log", tmp, i + 1);
	}
	for (int i = 0; i < 2; i++) {
		args[o] = run[i].buf;
		bg_start(&b[i], log[i].buf, bin_dir, args);
	}
	args[o] = NULL;
	/* The refused one ends first, well before the other's cells. */
	int rc[2] = { -2, -2 };
	char *out[2] = { NULL, NULL };
	int winner = -1;
	for (int waited = 0; waited < 60000 && winner < 0; waited += 20) {
		for (int i = 0; i < 2 && winner < 0; i++) {
			int st;
			if (waitpid(b[i].pid, &st, WNOHANG) == b[i].pid) {
				rc[i] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
				out[i] = test_read_file(b[i].log, NULL);
				free(b[i].log);
				winner = 1 - i;
			}
		}
		if (winner < 0)
			nap_ms(20);
	}
	CU_ASSERT_TRUE_FATAL(winner >= 0);
	int loser = 1 - winner;
	if (rc[loser] != 2)
		fprintf(stderr, "\nthe first to end exited %d: %s\n", rc[loser], out[loser] ? out[loser] : "");
	CU_ASSERT_EQUAL(rc[loser], 2);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, " is in use by rig run %s (pid %ld on ", run[winner].buf, (long)b[winner].pid);
	pt_has("the refusal names the run", out[loser], want.buf);
	pt_has("the refusal", out[loser], "; wait for it or stop it");
	pt_lacks("the refusal", out[loser], "rig resume");
	CU_ASSERT_NOT_EQUAL(access(run[loser].buf, F_OK), 0); /* no run folder */
	if (during)
		during(ctx, run[winner].buf);
	rc[winner] = bg_wait(&b[winner], &out[winner]);
	if (rc[winner] != 0)
		fprintf(stderr, "\nthe run exited %d: %s\n", rc[winner], out[winner] ? out[winner] : "");
	CU_ASSERT_EQUAL(rc[winner], 0);
	char *done = pt_run_query(run[winner].buf, "SELECT count(*) || ' ' || sum(status = 'done') "
						   "|| ' ' || (SELECT status FROM run) FROM cells");
	pt_eq_text("the run's cells", done, cells);
	free(done);
	for (int i = 0; i < 2; i++) {
		free(out[i]);
		sb_release(&run[i]);
		sb_release(&log[i]);
	}
	sb_release(&want);
	return rc[loser] == 2 && rc[winner] == 0 ? winner : -1;
}

/* --- dirs --- */

static void test_race_dirs(void)
{
	char *tmp = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, text = STRBUF_INIT, d = STRBUF_INIT;
	sb_addf(&d, "%s/data", tmp); /* made by rig */
	sb_addf(&text, "rig: 1\nname: lockdirs\ntarget:\n  dirs: [\"%s\"]\n"
		       "report: { formats: [csv] }\nsteps:\n  - null: { time: 2s }\n  - null: {}\n",
		d.buf);
	sb_addf(&plan, "%s/plan.yaml", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "-o", NULL, plan.buf, NULL };
	race(tmp, NULL, args, 3, "2 2 completed", NULL, NULL);

	/* The same directory through a link is the same directory. */
	struct strbuf link = STRBUF_INIT, plan2 = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	sb_addf(&link, "%s/link", tmp);
	CU_ASSERT_EQUAL(symlink(d.buf, link.buf), 0);
	sb_reset(&text);
	sb_addf(&text, "rig: 1\nname: via-link\ntarget:\n  dirs: [\"%s\"]\n"
		       "report: { formats: [csv] }\nsteps:\n  - null: {}\n", link.buf);
	sb_addf(&plan2, "%s/plan2.yaml", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan2.buf, text.buf), 0);
	sb_addf(&a, "%s/a", tmp);
	sb_addf(&b, "%s/b", tmp);
	struct bg first;
	struct strbuf log = STRBUF_INIT;
	sb_addf(&log, "%s/a.log", tmp);
	/* The first run holds the directory in a 10-minute cell until the
	 * checks are done, however slow the machine; then Ctrl-C ends it. */
	struct strbuf plan3 = STRBUF_INIT;
	sb_reset(&text);
	sb_addf(&text, "rig: 1\nname: holder\ntarget:\n  dirs: [\"%s\"]\n"
		       "report: { formats: [csv] }\nsteps:\n  - null: { time: 600s }\n", d.buf);
	sb_addf(&plan3, "%s/plan3.yaml", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan3.buf, text.buf), 0);
	const char *run_a[] = { "run", "-q", "-o", a.buf, plan3.buf, NULL };
	bg_start(&first, log.buf, NULL, run_a);
	CU_ASSERT_TRUE(wait_query(a.buf, "SELECT count(*) FROM cells", "1", 300000));
	char *out = NULL;
	const char *run_b[] = { "run", "-q", "-o", b.buf, plan2.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(run_b, &out), 2);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "directory %s is in use by rig run %s (pid ", link.buf, a.buf);
	pt_has("a link to the directory", out, want.buf);
	free(out);
	/* rig plan says so as well. */
	const char *pl[] = { "plan", plan2.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(pl, &out), 0);
	pt_has("rig plan", out, "\nin use   directory ");
	free(out);
	kill(first.pid, SIGINT);
	CU_ASSERT_EQUAL(bg_wait(&first, NULL), 1);
	sb_release(&plan3);

	sb_release(&want);
	sb_release(&log);
	sb_release(&link);
	sb_release(&plan2);
	sb_release(&a);
	sb_release(&b);
	sb_release(&plan);
	sb_release(&text);
	sb_release(&d);
	test_rmtree(tmp);
	free(tmp);
}

/*
 * kill -9 of a run whose command (exec: sleep, in its own process group)
 * outlives it: the lock goes with the run, so a new run on the directory
 * starts at once; and `rig resume` of the killed run is refused while the
 * new one holds the directory, with nothing changed in its folder.
 */
static void test_kill_and_resume(void)
{
	char *tmp = test_tmpdir();
	struct strbuf p1 = STRBUF_INIT, p2 = STRBUF_INIT, text = STRBUF_INIT, pidf = STRBUF_INIT,
		      a = STRBUF_INIT, b = STRBUF_INIT, la = STRBUF_INIT, lb = STRBUF_INIT;
	sb_addf(&pidf, "%s/sleep.pid", tmp);
	sb_addf(&text, "rig: 1\nname: killed\ntarget:\n  dirs: [\"%s/d\"]\n"
		       "report: { formats: [csv] }\nsteps:\n"
		       "  - exec: { run: [sh, -c, \"echo $$ > %s; exec sleep 30\"] }\n",
		tmp, pidf.buf);
	sb_addf(&p1, "%s/killed.yaml", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(p1.buf, text.buf), 0);
	sb_reset(&text);
	sb_addf(&text, "rig: 1\nname: next\ntarget:\n  dirs: [\"%s/d\"]\n"
		       "report: { formats: [csv] }\nsteps:\n  - null: { time: 2s }\n", tmp);
	sb_addf(&p2, "%s/next.yaml", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(p2.buf, text.buf), 0);
	sb_addf(&a, "%s/a", tmp);
	sb_addf(&b, "%s/b", tmp);
	sb_addf(&la, "%s/a.log", tmp);
	sb_addf(&lb, "%s/b.log", tmp);

	struct bg first, second;
	const char *run_a[] = { "run", "-q", "-o", a.buf, p1.buf, NULL };
	bg_start(&first, la.buf, NULL, run_a);
	char *pid_text = NULL;
	for (int i = 0; i < 1000 && !pid_text; i++) {
		nap_ms(20);
		pid_text = test_read_file(pidf.buf, NULL);
		if (pid_text && !strchr(pid_text, '\n')) {
			free(pid_text);
			pid_text = NULL;
		}
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(pid_text);
	pid_t sleeper = (pid_t)atol(pid_text);
	free(pid_text);
	kill(first.pid, SIGKILL);
	CU_ASSERT_EQUAL(bg_wait(&first, NULL), -1);
	CU_ASSERT_EQUAL(kill(sleeper, 0), 0); /* the command lives on */

	/* How long a run takes to reach its cell on a directory no lock ever
	 * named, on this machine now: the measure of "at once" below. */
	struct bg fresh;
	struct strbuf p3 = STRBUF_INIT, c = STRBUF_INIT, lc = STRBUF_INIT;
	sb_reset(&text);
	sb_addf(&text, "rig: 1\nname: fresh\ntarget:\n  dirs: [\"%s/e\"]\n"
		       "report: { formats: [csv] }\nsteps:\n  - null: {}\n", tmp);
	sb_addf(&p3, "%s/fresh.yaml", tmp);
	sb_addf(&c, "%s/c", tmp);
	sb_addf(&lc, "%s/c.log", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(p3.buf, text.buf), 0);
	const char *run_c[] = { "run", "-q", "-o", c.buf, p3.buf, NULL };
	bg_start(&fresh, lc.buf, NULL, run_c);
	CU_ASSERT_TRUE(wait_query(c.buf, "SELECT count(*) FROM cells", "1", 300000));
	double took_fresh = now_ms() - fresh.t0;
	CU_ASSERT_EQUAL(bg_wait(&fresh, NULL), 0);

	const char *run_b[] = { "run", "-q", "-o", b.buf, p2.buf, NULL };
	bg_start(&second, lb.buf, NULL, run_b);
	/* At once: its cell starts without waiting for a lock (a holder that
	 * has not said who it is is waited for LOCK_SETTLE_MS), as soon as on
	 * a directory no lock named. */
	CU_ASSERT_TRUE(wait_query(b.buf, "SELECT count(*) FROM cells", "1", 300000));
	double took = now_ms() - second.t0;
	fprintf(stderr, "[a new run on the directory had its cell running %.0f ms after its start, "
			"one on a fresh directory %.0f ms] ", took, took_fresh);
	CU_ASSERT_TRUE(took - took_fresh < LOCK_SETTLE_MS);
	sb_release(&p3);
	sb_release(&c);
	sb_release(&lc);

	/* The killed run cannot be resumed while the new one holds the directory. */
	char *out = NULL;
	const char *res[] = { "resume", a.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res, &out), 2);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "rig resume: directory %s/d is in use by rig run %s (pid %ld on ", tmp, b.buf,
		(long)second.pid);
	pt_has("resume refused", out, want.buf);
	pt_lacks("resume refused", out, "continues it");
	free(out);
	char *v = pt_run_query(a.buf, "SELECT status || ' ' || (SELECT count(*) FROM resumes) || ' ' "
				      "|| (SELECT count(*) FROM events WHERE msg LIKE '%resume%') FROM run");
	pt_eq_text("the killed run is as it was", v, "running 0 0");
	free(v);

	CU_ASSERT_EQUAL(bg_wait(&second, &out), 0);
	free(out);
	kill(sleeper, SIGKILL);
	sb_release(&want);
	sb_release(&p1);
	sb_release(&p2);
	sb_release(&text);
	sb_release(&pidf);
	sb_release(&a);
	sb_release(&b);
	sb_release(&la);
	sb_release(&lb);
	test_rmtree(tmp);
	free(tmp);
}

/* --- macOS, with the fake diskutil --- */

/* `rig devices --platform macos` names the run using disk4. */
static void mac_devices(struct fx *x, const char *winner)
{
	char *out = NULL;
	const char *dev[] = { "devices", "--platform", "macos", NULL };
	CU_ASSERT_EQUAL(pt_rig(x->bin, dev, &out), 0);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "in use by rig run %s (pid ", winner);
	pt_has("rig devices", out, want.buf);
	free(out);
	sb_release(&want);
}

static void test_race_macos(void)
{
	struct fx x;
	fx_init(&x, 0);
	struct strbuf text = STRBUF_INIT, first = STRBUF_INIT, second = STRBUF_INIT,
		      log = STRBUF_INIT;
	sb_addf(&text, "rig: 1\nname: lockmac\ntarget:\n  disk: { device: disk4, confirm: "
		       "\"WDC WD20SPZX-22UA7T0\" }\nlayouts:\n  - name: one\n    partitions:\n"
		       "      - { name: A, fs: apfs, size: rest }\n"
		       "report: { formats: [csv] }\nsteps:\n  - null: { time: 600s }\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(x.plan, text.buf), 0);
	/* The first run is in its cell (provisioned, no diskutil call until
	 * its teardown); the second must not reach diskutil at all. The cell
	 * would last 10 minutes, so that the refused run and `rig devices`
	 * come before the first run's teardown releases the disk however slow
	 * the machine is (with other suites beside it, the fakes for every
	 * disk are slow); once they are done, Ctrl-C ends it: interrupted,
	 * torn down. The test takes as long as its checks. */
	sb_addf(&first, "%s/first", x.dir);
	sb_addf(&second, "%s/second", x.dir);
	sb_addf(&log, "%s/first.log", x.dir);
	struct bg b;
	const char *run1[] = { "run", "--platform", "macos", "--yes", "-q", "-o", first.buf, x.plan,
			       NULL };
	bg_start(&b, log.buf, x.bin, run1);
	CU_ASSERT_TRUE(wait_query(first.buf, "SELECT count(*) FROM cells", "1", 300000));
	char *before = fx_file(&x, "calls.log"), *out = NULL;
	const char *run2[] = { "run", "--platform", "macos", "--yes", "-q", "-o", second.buf, x.plan,
			       NULL };
	CU_ASSERT_EQUAL(pt_rig(x.bin, run2, &out), 2);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "rig run: disk disk4 is in use by rig run %s (pid %ld on ", first.buf,
		(long)b.pid);
	pt_has("refused", out, want.buf);
	char *after = fx_file(&x, "calls.log");
	pt_eq_text("no diskutil call from the refused run", after, before);
	CU_ASSERT_NOT_EQUAL(access(second.buf, F_OK), 0);
	mac_devices(&x, first.buf);
	free(out);
	kill(b.pid, SIGINT);
	CU_ASSERT_EQUAL(bg_wait(&b, &out), 1);
	free(out);
	char *done = pt_run_query(first.buf, "SELECT (SELECT status FROM run) || ' ' || "
					     "group_concat(status) FROM cells");
	pt_eq_text("the first run, stopped", done, "interrupted interrupted");
	free(done);
	check_clean(&x);
	free(before);
	free(after);
	sb_release(&want);
	sb_release(&text);
	sb_release(&first);
	sb_release(&second);
	sb_release(&log);
	fx_done(&x);
}

/* --- root: a loop device as a disk, an image --- */

/* A loop device over a file of this test (caller detaches it). */
static char *make_loop(const char *tmp, const char *name, int mib, struct strbuf *backing)
{
	sb_addf(backing, "%s/%s", tmp, name);
	int fd = open(backing->buf, O_RDWR | O_CREAT | O_EXCL, 0600);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, (off_t)mib << 20), 0);
	close(fd);
	const char *lo[] = { "losetup", "--find", "--show", "--direct-io=on", backing->buf, NULL };
	char *dev = NULL;
	if (pt_cmd(lo, &dev) != 0) {
		free(dev);
		return NULL;
	}
	dev[strcspn(dev, "\n")] = '\0';
	return dev;
}

static void drop_loop(char *dev)
{
	if (!dev)
		return;
	const char *px[] = { "partx", "--delete", dev, NULL };
	pt_cmd(px, NULL);
	const char *det[] = { "losetup", "--detach", dev, NULL };
	CU_ASSERT_EQUAL(pt_cmd(det, NULL), 0);
	free(dev);
}

struct disk_look {
	const char *dev, *plan;
};

static void disk_during(void *ctx, const char *winner)
{
	const struct disk_look *l = ctx;
	char *out = NULL;
	struct strbuf want = STRBUF_INIT;
	const char *dev[] = { "devices", NULL };
	CU_ASSERT_EQUAL(test_run_rig(dev, &out), 0);
	sb_addf(&want, "%s ", l->dev);
	pt_has("rig devices lists the disk", out, want.buf);
	const char *line = out ? strstr(out, want.buf) : NULL;
	sb_reset(&want);
	sb_addf(&want, "\n                in use by rig run %s (pid ", winner);
	pt_has("rig devices", line, want.buf);
	free(out);
	const char *pl[] = { "plan", l->plan, NULL };
	CU_ASSERT_EQUAL(test_run_rig(pl, &out), 0);
	sb_reset(&want);
	sb_addf(&want, "\nin use   disk %s is in use by rig run %s (pid ", l->dev, winner);
	pt_has("rig plan", out, want.buf);
	free(out);
	sb_release(&want);
}

static void test_race_disk(void)
{
	char *tmp = test_tmpdir();
	struct strbuf backing = STRBUF_INIT, text = STRBUF_INIT, plan = STRBUF_INIT,
		      what = STRBUF_INIT;
	char *dev = make_loop(tmp, "disk.img", 300, &backing);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	sb_addf(&text, "rig: 1\nname: lockdisk\ntarget:\n  disk: { device: %s, confirm: \"%s\" }\n"
		       "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: rest }\n"
		       "report: { formats: [csv] }\ncache: { flush: false }\n"
		       "steps:\n  - null: { time: 3s }\n", dev, backing.buf);
	sb_addf(&plan, "%s/plan.yaml", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "--yes", "--allow", "loop", "-o", NULL, plan.buf, NULL };
	struct disk_look look = { dev, plan.buf };
	race(tmp, NULL, args, 6, "1 1 completed", disk_during, &look);

	/* Another program holds the disk exclusively: refused before sgdisk. */
	int fd = open(dev, O_RDONLY | O_EXCL);
	CU_ASSERT_TRUE(fd >= 0);
	struct strbuf out_dir = STRBUF_INIT;
	sb_addf(&out_dir, "%s/busy", tmp);
	const char *busy[] = { "run", "-q", "--yes", "--allow", "loop", "-o", out_dir.buf, plan.buf,
			       NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(busy, &out), 2);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "refusing to erase %s: it is busy: another program holds it exclusively", dev);
	pt_has("held exclusively", out, want.buf);
	free(out);
	/* Refused when prepared: nothing provisioned, no run folder left. */
	CU_ASSERT_NOT_EQUAL(access(out_dir.buf, F_OK), 0);
	if (fd >= 0)
		close(fd);

	drop_loop(dev);
	CU_ASSERT_EQUAL(pt_leftovers(tmp, &what), 0);
	sb_release(&want);
	sb_release(&out_dir);
	sb_release(&backing);
	sb_release(&text);
	sb_release(&plan);
	sb_release(&what);
	test_rmtree(tmp);
	free(tmp);
}

struct image_look {
	const char *tmp, *image;
};

/* While an image run holds the image: a disk run on its loop device is
 * refused too (it locks the backing file as an image). */
static void image_during(void *ctx, const char *winner)
{
	const struct image_look *l = ctx;
	char *loop = NULL;
	for (int i = 0; i < 500 && !loop; i++) {
		loop = prov_linux_loop_of("", l->image);
		if (!loop)
			nap_ms(20);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
	struct strbuf text = STRBUF_INIT, plan = STRBUF_INIT, out_dir = STRBUF_INIT,
		      want = STRBUF_INIT;
	sb_addf(&text, "rig: 1\nname: onloop\ntarget:\n  disk: { device: /dev/%s, confirm: \"%s\" }\n"
		       "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: rest }\n"
		       "steps:\n  - null: {}\n", loop, l->image);
	sb_addf(&plan, "%s/onloop.yaml", l->tmp);
	sb_addf(&out_dir, "%s/onloop", l->tmp);
	CU_ASSERT_EQUAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "--yes", "--allow", "loop", "-o", out_dir.buf, plan.buf,
			       NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 2);
	sb_addf(&want, "disk /dev/%s (the loop device of image %s) is in use by rig run %s (pid ",
		loop, l->image, winner);
	pt_has("a disk run on the image's loop device", out, want.buf);
	CU_ASSERT_NOT_EQUAL(access(out_dir.buf, F_OK), 0);
	free(out);
	free(loop);
	sb_release(&text);
	sb_release(&plan);
	sb_release(&out_dir);
	sb_release(&want);
}

static void test_race_image(void)
{
	char *tmp = test_tmpdir();
	struct strbuf text = STRBUF_INIT, plan = STRBUF_INIT, image = STRBUF_INIT,
		      what = STRBUF_INIT;
	sb_addf(&image, "%s/i.img", tmp);
	sb_addf(&text, "rig: 1\nname: lockimage\ntarget:\n  image: { path: \"%s\", size: 64M }\n"
		       "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: rest }\n"
		       "report: { formats: [csv] }\ncache: { flush: false }\n"
		       "steps:\n  - null: { time: 3s }\n", image.buf);
	sb_addf(&plan, "%s/plan.yaml", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "-o", NULL, plan.buf, NULL };
	struct image_look look = { tmp, image.buf };
	race(tmp, NULL, args, 3, "1 1 completed", image_during, &look);
	CU_ASSERT_NOT_EQUAL(access(image.buf, F_OK), 0); /* deleted by the run that made it */

	/* The image attached by someone else: detaching is suggested only when
	 * nothing holds the loop device. */
	struct strbuf backing = STRBUF_INIT, out_dir = STRBUF_INIT, want = STRBUF_INIT;
	char *dev = make_loop(tmp, "i.img", 64, &backing);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	int fd = open(dev, O_RDONLY | O_EXCL);
	CU_ASSERT_TRUE(fd >= 0);
	sb_addf(&out_dir, "%s/held", tmp);
	const char *again[] = { "run", "-q", "--force", "-o", out_dir.buf, plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(again, &out), 2);
	sb_addf(&want, "image %s is attached to %s and in use: another program holds it "
		       "exclusively; rig leaves it alone", image.buf, dev);
	pt_has("attached and held", out, want.buf);
	pt_lacks("attached and held", out, "losetup -d");
	free(out);
	if (fd >= 0)
		close(fd);
	CU_ASSERT_NOT_EQUAL(access(out_dir.buf, F_OK), 0); /* refused: no run folder left */
	CU_ASSERT_EQUAL(test_run_rig(again, &out), 2);
	sb_reset(&want);
	sb_addf(&want, "which no rig run uses and nothing is mounted from; detach it (losetup -d %s)",
		dev);
	pt_has("attached, not held", out, want.buf);
	free(out);
	drop_loop(dev);
	sb_release(&backing);
	sb_release(&out_dir);
	sb_release(&want);
	CU_ASSERT_EQUAL(pt_leftovers(tmp, &what), 0);
	sb_release(&text);
	sb_release(&plan);
	sb_release(&image);
	sb_release(&what);
	test_rmtree(tmp);
	free(tmp);
}

void register_lock_tests(void)
{
	CU_pSuite s = test_suite_e2e("target locks");
	test_add(s, "lock file names: readable, escaped, long keys cut and hashed", test_file_names);
	test_add(s, "two holders exclude each other; the record names the run; release empties it",
		 test_two_holders);
	test_add(s, "two runs on one directory: one refused naming the other, one completes",
		 test_race_dirs);
	test_add(s, "kill -9 leaves no lock; rig resume refused while another run holds the target",
		 test_kill_and_resume);
	CU_pSuite m = test_suite_e2e("target locks: macos fakes");
	test_add(m, "a second run on disk4 is refused before any diskutil call", test_race_macos);
	CU_pSuite r = test_suite("target locks (root: loop disk, image)");
	if (!pt_require_provisioning(r, "loop devices, mkfs and mount"))
		return;
	test_add(r, "two runs on one loop disk: one refused; rig devices and rig plan name the run",
		 test_race_disk);
	test_add(r, "two runs on one image: one refused, a disk run on its loop device too; "
		    "detaching a loop device in use is never suggested", test_race_image);
}
