/*
 * Fault injection (platform/fault.c) and what rig does under it.
 *
 * In process: the rules' grammar and its errors, commands failed by name
 * and occurrence through the spawner, module I/O failing with a chosen
 * errno, signals at spawn and I/O points, dry runs left alone.
 *
 * The rig binary with RIG_FAULT, on dirs targets (no root): an I/O error in
 * write, read, randwrite (both engines), an fsync error, ENOSPC in fill
 * (recorded as the level reached, as fill is designed), a signal at the
 * Nth write: each cell fails (or is interrupted), what was measured before
 * is kept, the run is marked, the work folders are gone.
 *
 * The rig binary on image targets (root): every command the Linux backend
 * runs, provisioning and teardown, failing once: a clear error naming the
 * command and its output, teardown of what was built, and no mount, loop
 * device or image left (pt_leftovers: /proc/self/mountinfo, sysfs and
 * `losetup -a`, for devices over this test's own files only). Signals
 * before and after chosen commands, an I/O error on a mounted volume, and
 * a disk target (a loop device made here) whose zap or second mkfs fails.
 * (provision_test.c has the fake failing mkfs.xfs and the timed signals.)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/fault.h"
#include "platform/spawn.h"
#include "provision_util.h"
#include "test.h"

/* --- in process --- */

static void test_grammar(void)
{
	static const char *const good[] = {
		"spawn:mkfs.ext4:3", "spawn:mkfs.ext4:3:exit=0", "spawn:losetup --detach:1:exit=32",
		"spawn:diskutil partitionDisk:2", "io:write:2:ENOSPC", "io:read:1+:EIO",
		"io:fsync:*:EDQUOT", "signal:SIGINT:before-spawn:sgdisk:1",
		"signal:SIGTERM:after-spawn:losetup --find:1", "signal:SIGKILL:io:write:40",
		"spawn:umount:1,io:write:2:EROFS,signal:SIGHUP:io:read:3+",
		"signal:SIGINT:at:started:1", "signal:SIGTERM:at:ended:*",
	};
	struct strbuf e = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		sb_reset(&e);
		int rc = plat_fault_set(good[i], &e);
		if (rc)
			fprintf(stderr, "\n'%s': %s\n", good[i], e.buf);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_TRUE(plat_fault_spec() && !strcmp(plat_fault_spec(), good[i]));
	}
	static const char *const bad[][2] = {
		{ "spawn", "spawn takes NAME:N[:exit=S]" },
		{ "spawn:mkfs.ext4:0", "'0' is not an occurrence" },
		{ "spawn:mkfs.ext4:-1", "'-1' is not an occurrence" },
		{ "spawn:mkfs.ext4:two", "'two' is not an occurrence" },
		{ "spawn:mkfs.ext4:1:exit=256", "'exit=256' is not exit=S with S in 0..255" },
		{ "spawn:mkfs.ext4:1:status=1", "is not exit=S" },
		{ "spawn: :1", "' ' is not a command name" },
		{ "io:write:1", "io takes OP:N:ERRNO" },
		{ "io:append:1:EIO", "'append' is not write, read or fsync" },
		{ "io:write:1:EPERM", "'EPERM' is not ENOSPC, EIO, EDQUOT, EROFS or EFBIG" },
		{ "signal:SIGINT:sgdisk:1", "signal takes SIG:before-spawn:NAME:N" },
		{ "signal:INT:before-spawn:sgdisk:1", "'INT' is not SIGINT" },
		{ "signal:SIGINT:during-spawn:sgdisk:1", "'during-spawn' is not before-spawn" },
		{ "signal:SIGINT:at:midway:1", "'midway' is not started or ended" },
		{ "crash:now", "'crash' is not spawn, io or signal" },
		{ "io:write:1:EIO,bogus", "rule 'bogus'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sb_reset(&e);
		CU_ASSERT_EQUAL(plat_fault_set(bad[i][0], &e), -EINVAL);
		if (!strstr(e.buf, bad[i][1]) || strncmp(e.buf, "RIG_FAULT: rule '", 17))
			fprintf(stderr, "\n'%s': expected '%s', got '%s'\n", bad[i][0], bad[i][1], e.buf);
		CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, bad[i][1]));
		/* a bad spec leaves no rule in force */
		CU_ASSERT_PTR_NULL(plat_fault_spec());
		CU_ASSERT_EQUAL(plat_fault_io_armed, 0);
	}
	CU_ASSERT_EQUAL(plat_fault_set(NULL, &e), 0);
	CU_ASSERT_PTR_NULL(plat_fault_spec());
	sb_release(&e);
}

/* Status of one `argv` through the spawner, its output into out. */
static int spawn_status(struct spawner *sp, const char *const *argv, struct strbuf *out)
{
	struct spawn_result r;
	struct strbuf e = STRBUF_INIT;
	int rc = plat_spawn_run(sp, argv, NULL, &r, &e);
	sb_release(&e);
	if (rc < 0)
		return -1000;
	if (out) {
		sb_reset(out);
		sb_adds(out, r.output);
	}
	int st = r.exited ? r.status : -r.status;
	plat_spawn_result_release(&r);
	return st;
}

static int logged;
static void count_log(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	(void)opaque;
	(void)argv_text;
	(void)r;
	logged++;
}

static void test_spawn_faults(void)
{
	struct strbuf e = STRBUF_INIT, out = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(plat_fault_set("spawn:true:2:exit=3,spawn:echo two:1+", &e), 0);
	struct spawner sp = plat_spawner_fault(plat_spawner_real(count_log, NULL));
	const char *t[] = { "true", NULL };
	const char *t2[] = { "/bin/true", "x", NULL };
	const char *one[] = { "echo", "one", NULL };
	const char *two[] = { "echo", "two", NULL };
	logged = 0;
	CU_ASSERT_EQUAL(spawn_status(&sp, t, NULL), 0);
	/* the 2nd `true` (by its last path component) is not run */
	CU_ASSERT_EQUAL(spawn_status(&sp, t2, &out), 3);
	CU_ASSERT_STRING_EQUAL(out.buf, "true: failure injected by RIG_FAULT (spawn:true:2:exit=3)\n");
	CU_ASSERT_EQUAL(spawn_status(&sp, t, NULL), 0);
	/* names match word by word; 1+ is every one from the first */
	CU_ASSERT_EQUAL(spawn_status(&sp, one, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.buf, "one\n");
	CU_ASSERT_EQUAL(spawn_status(&sp, two, &out), 1);
	CU_ASSERT_EQUAL(spawn_status(&sp, two, &out), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, "echo: failure injected"));
	/* faked commands are logged like real ones */
	CU_ASSERT_EQUAL(logged, 6);
	/* plat_spawn_check names the command and quotes the fake output */
	sb_reset(&e);
	CU_ASSERT_EQUAL(plat_spawn_check(&sp, two, NULL, NULL, &e), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "echo two failed with exit status 1:\n"
					     "echo: failure injected by RIG_FAULT (spawn:echo two:1+)"));
	/* split output: the fake output is on stderr, stdout is empty */
	struct spawn_opts o = { .split = 1 };
	struct spawn_result r;
	sb_reset(&e);
	CU_ASSERT_EQUAL(plat_spawn_run_opts(&sp, two, NULL, &o, &r, &e), 0);
	CU_ASSERT_TRUE(r.stdout_text && !*r.stdout_text && r.stderr_text &&
		       strstr(r.stderr_text, "failure injected"));
	plat_spawn_result_release(&r);
	/* a dry run neither counts nor fakes */
	CU_ASSERT_EQUAL(plat_fault_set("spawn:true:1", &e), 0);
	struct spawner dry = plat_spawner_fault(plat_spawner_dry(NULL, NULL));
	CU_ASSERT_EQUAL(spawn_status(&dry, t, NULL), 0);
	CU_ASSERT_EQUAL(spawn_status(&sp, t, NULL), 1);
	CU_ASSERT_EQUAL(plat_fault_set(NULL, &e), 0);
	CU_ASSERT_EQUAL(spawn_status(&sp, t, NULL), 0);
	sb_release(&e);
	sb_release(&out);
}

static void test_io_faults(void)
{
	char *tmp = test_tmpdir();
	struct strbuf p = STRBUF_INIT, e = STRBUF_INIT;
	sb_addf(&p, "%s/f", tmp);
	int fd = open(p.buf, O_RDWR | O_CREAT, 0600);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	char buf[16] = "0123456789abcdef";
	/* unarmed: the wrappers are the plain calls */
	CU_ASSERT_EQUAL(plat_fault_io_armed, 0);
	CU_ASSERT_EQUAL(fault_pwrite(fd, buf, 4, 0), 4);
	CU_ASSERT_EQUAL_FATAL(plat_fault_set("io:write:2:ENOSPC,io:read:2+:EIO,io:fsync:1:EROFS", &e), 0);
	CU_ASSERT_EQUAL(plat_fault_io_armed, 1);
	CU_ASSERT_EQUAL(fault_pwrite(fd, buf, 4, 0), 4);
	errno = 0;
	CU_ASSERT_EQUAL(fault_write(fd, buf, 4), -1);
	CU_ASSERT_EQUAL(errno, ENOSPC);
	CU_ASSERT_EQUAL(fault_pwrite(fd, buf, 8, 0), 8);
	char in[16];
	CU_ASSERT_EQUAL(fault_pread(fd, in, 4, 0), 4);
	errno = 0;
	CU_ASSERT_EQUAL(fault_pread(fd, in, 4, 0), -1);
	CU_ASSERT_EQUAL(errno, EIO);
	CU_ASSERT_EQUAL(fault_read(fd, in, 4), -1);
	/* an asynchronous request's result is replaced */
	CU_ASSERT_EQUAL(fault_io_result(FAULT_READ, 4096), -EIO);
	CU_ASSERT_EQUAL(fault_io_result(FAULT_WRITE, 4096), 4096);
	CU_ASSERT_EQUAL(plat_fault_full_sync(fd), -EROFS);
	CU_ASSERT_EQUAL(plat_fault_full_sync(fd), 0);
	/* the failed write was not done: 8 bytes, not 12 */
	struct stat st;
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 8);
	close(fd);
	CU_ASSERT_EQUAL(plat_fault_set(NULL, &e), 0);
	CU_ASSERT_EQUAL(plat_fault_io_armed, 0);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&p);
	sb_release(&e);
}

static volatile sig_atomic_t got_usr1, got_usr2;
static void on_usr1(int s)
{
	(void)s;
	got_usr1++;
}
static void on_usr2(int s)
{
	(void)s;
	got_usr2++;
}

static void test_signal_points(void)
{
	struct sigaction sa, old1, old2;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, &old1);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, &old2);
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(plat_fault_set("signal:SIGUSR1:before-spawn:true:2,"
					"signal:SIGUSR2:after-spawn:true:1,"
					"signal:SIGUSR1:io:fsync:1", &e), 0);
	struct spawner sp = plat_spawner_fault(plat_spawner_real(NULL, NULL));
	const char *t[] = { "true", NULL };
	got_usr1 = got_usr2 = 0;
	CU_ASSERT_EQUAL(spawn_status(&sp, t, NULL), 0);
	CU_ASSERT_EQUAL(got_usr1, 0);
	CU_ASSERT_EQUAL(got_usr2, 1);
	CU_ASSERT_EQUAL(spawn_status(&sp, t, NULL), 0); /* a signal rule does not fail the command */
	CU_ASSERT_EQUAL(got_usr1, 1);
	CU_ASSERT_EQUAL(got_usr2, 1);
	CU_ASSERT_EQUAL(plat_fault_io_armed, 1);
	CU_ASSERT_EQUAL(plat_fault_io(FAULT_FSYNC), 0);
	CU_ASSERT_EQUAL(got_usr1, 2);
	CU_ASSERT_EQUAL(plat_fault_set(NULL, &e), 0);
	sigaction(SIGUSR1, &old1, NULL);
	sigaction(SIGUSR2, &old2, NULL);
	sb_release(&e);
}

/* plat_spawner_fault around a fake: what reaches the fake, what is logged, and
 * when the after-spawn signal comes. */
struct decorated {
	int played;
	int logged;
	int usr2_when_logged; /* got_usr2 as the last command was logged */
};

static int play_ok(void *opaque, const char *const *argv, struct spawn_result *r)
{
	struct decorated *d = opaque;
	(void)argv;
	d->played++;
	r->exited = 1;
	r->output = xstrdup("played\n");
	return 0;
}

static void decorated_log(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	struct decorated *d = opaque;
	(void)argv_text;
	CU_ASSERT_PTR_NOT_NULL(r);
	d->logged++;
	d->usr2_when_logged = got_usr2;
}

static void test_fault_decorator(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, &old);
	struct strbuf e = STRBUF_INIT, out = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(plat_fault_set("spawn:play:2,signal:SIGUSR2:after-spawn:play:3", &e), 0);
	struct decorated d = { 0, 0, 0 };
	/* wrapped twice is wrapped once: each command is counted once */
	struct spawner sp = plat_spawner_fault(plat_spawner_fault(plat_spawner_fake(play_ok, decorated_log, &d)));
	const char *argv[] = { "play", "it", NULL };
	got_usr2 = 0;
	/* not named by a rule: handed on to the fake */
	CU_ASSERT_EQUAL(spawn_status(&sp, argv, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.buf, "played\n");
	CU_ASSERT_EQUAL(d.played, 1);
	/* named: injected, never reaches the fake, logged with its result */
	CU_ASSERT_EQUAL(spawn_status(&sp, argv, &out), 1);
	CU_ASSERT_STRING_EQUAL(out.buf, "play: failure injected by RIG_FAULT (spawn:play:2)\n");
	CU_ASSERT_EQUAL(d.played, 1);
	CU_ASSERT_EQUAL(d.logged, 2);
	/* the after-spawn signal comes once the command is in the log */
	CU_ASSERT_EQUAL(spawn_status(&sp, argv, &out), 0);
	CU_ASSERT_EQUAL(d.played, 2);
	CU_ASSERT_EQUAL(d.logged, 3);
	CU_ASSERT_EQUAL(d.usr2_when_logged, 0);
	CU_ASSERT_EQUAL(got_usr2, 1);
	/* a dry spawner is given back as it is: still a dry run */
	struct spawner dry = plat_spawner_fault(plat_spawner_dry(NULL, NULL));
	CU_ASSERT_TRUE(plat_spawner_dry_run(&dry));
	CU_ASSERT_EQUAL(plat_fault_set(NULL, &e), 0);
	sigaction(SIGUSR2, &old, NULL);
	sb_release(&e);
	sb_release(&out);
}

/* --- the rig binary on dirs targets --- */

/* Run rig with RIG_FAULT=fault (NULL: unset). */
static int rig_fault(const char *fault, const char *const *args, char **out)
{
	if (fault)
		setenv("RIG_FAULT", fault, 1);
	int rc = pt_rig(NULL, args, out);
	unsetenv("RIG_FAULT");
	return rc;
}

static int eq(char *v, const char *want)
{
	int ok = v && !strcmp(v, want);
	if (!ok)
		fprintf(stderr, "\nexpected '%s', got '%s'\n", want, v ? v : "(null)");
	free(v);
	return ok;
}

struct dx {
	char *tmp;
	struct strbuf plan, out;
};

static void dx_init(struct dx *x, const char *steps)
{
	x->tmp = test_tmpdir();
	sb_init(&x->plan);
	sb_init(&x->out);
	sb_addf(&x->plan, "%s/plan.yaml", x->tmp);
	sb_addf(&x->out, "%s/out", x->tmp);
	struct strbuf t = STRBUF_INIT;
	sb_addf(&t, "rig: 1\nname: faults\nseed: 3\ntarget:\n  dirs: [%s/a, %s/b]\nsteps:\n%s",
		x->tmp, x->tmp, steps);
	CU_ASSERT_EQUAL(test_write_file(x->plan.buf, t.buf), 0);
	sb_release(&t);
}

/* The work folders rig made in the volumes are gone. */
static int dx_clean(struct dx *x)
{
	int clean = 1;
	const char *vols[] = { "a", "b" };
	for (size_t i = 0; i < 2; i++) {
		struct strbuf d = STRBUF_INIT;
		sb_addf(&d, "%s/%s/rig-out", x->tmp, vols[i]);
		if (access(d.buf, F_OK) == 0) {
			fprintf(stderr, "\nleft behind: %s\n", d.buf);
			clean = 0;
		}
		sb_release(&d);
	}
	return clean;
}

static void dx_done(struct dx *x)
{
	test_rmtree(x->tmp);
	free(x->tmp);
	sb_release(&x->plan);
	sb_release(&x->out);
}

static char *q(struct dx *x, const char *sql)
{
	return pt_run_query(x->out.buf, sql);
}

static void test_dirs_io_errors(void)
{
	/* write: 2 files of one write each per cell; the 3rd write fails (the 2nd cell). */
	struct dx x;
	dx_init(&x, "  - write: { files: 2, size: 64K, block: 64K }\n  - read: {}\n");
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(rig_fault("io:write:3:EIO", args, &out), 1);
	CU_ASSERT_TRUE(out && strstr(out, "fault injection is active (RIG_FAULT=io:write:3:EIO)"));
	CU_ASSERT_TRUE(out && strstr(out, "Input/output error"));
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT status FROM run"), "failed"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT group_concat(status, ' ') FROM (SELECT status FROM cells "
				"ORDER BY seq)"), "done failed"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT error LIKE '%cannot write %/f000: Input/output error' "
				"FROM cells WHERE status = 'failed'"), "1"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT count(DISTINCT seq) FROM samples"), "1"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT value FROM notes WHERE key = 'fault_injection'"),
			  "io:write:3:EIO"));
	CU_ASSERT_TRUE(dx_clean(&x));

	/* read: every read fails */
	test_rmtree(x.out.buf);
	CU_ASSERT_EQUAL(rig_fault("io:read:*:EIO", args, &out), 1);
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT group_concat(module || ':' || status, ' ') FROM (SELECT * "
				"FROM cells ORDER BY seq)"), "write:done write:done read:failed"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT error LIKE '%cannot read %: Input/output error' FROM cells "
				"WHERE status = 'failed'"), "1"));
	CU_ASSERT_TRUE(dx_clean(&x));

	/* fsync: the first file's sync fails (write syncs each file) */
	test_rmtree(x.out.buf);
	CU_ASSERT_EQUAL(rig_fault("io:fsync:1:EIO", args, &out), 1);
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT error LIKE '%cannot sync %: Input/output error' FROM cells "
				"WHERE seq = 1 AND status = 'failed'"), "1"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT count(*) FROM samples"), "0"));
	CU_ASSERT_TRUE(dx_clean(&x));

	/* unset: the same plan completes (so the failures above are the rules') */
	test_rmtree(x.out.buf);
	CU_ASSERT_EQUAL(rig_fault(NULL, args, &out), 0);
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT status FROM run"), "completed"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT count(*) FROM notes WHERE key = 'fault_injection'"), "0"));
	dx_done(&x);
}

static void test_dirs_random_io(void)
{
	/* randread through both engines: the 100th read fails (the file's
	 * preparation only writes, so every read counted is the engine's). */
	static const char *const engines[] = { "psync", "io_uring" };
	for (size_t i = 0; i < 2; i++) {
		struct dx x;
		dx_init(&x, "  - randread: { block: 4K, qd: 4, span: 4M, ops: 2000 }\n");
		setenv("RIG_ENGINE", engines[i], 1);
		const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
		char *out = NULL;
		int rc = rig_fault("io:read:100:EIO", args, &out);
		unsetenv("RIG_ENGINE");
		if (rc != 1)
			fprintf(stderr, "\n%s: rig exited %d:\n%s\n", engines[i], rc, out);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_TRUE(out && strstr(out, "Input/output error"));
		free(out);
		CU_ASSERT_TRUE(eq(q(&x, "SELECT status FROM run"), "failed"));
		CU_ASSERT_TRUE(eq(q(&x, "SELECT group_concat(status, ' ') FROM cells"), "failed"));
		CU_ASSERT_TRUE(dx_clean(&x));
		dx_done(&x);
	}
}

static void test_dirs_fill_enospc(void)
{
	/* fill as designed: ENOSPC before the level ends the cell successfully,
	 * with the level reached and a note. */
	struct dx x;
	dx_init(&x, "  - fill: { to: 99% }\n");
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	char *out = NULL;
	int rc = rig_fault("io:write:3+:ENOSPC", args, &out);
	if (rc != 0)
		fprintf(stderr, "\nrig exited %d:\n%s\n", rc, out);
	CU_ASSERT_EQUAL(rc, 0);
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT group_concat(status, ' ') FROM cells"), "done done"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT count(*) FROM notes WHERE key = 'full' AND value LIKE "
				"'the volume is full (No space left on device)%'"), "2"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT count(*) FROM samples WHERE metric = 'level'"), "2"));
	CU_ASSERT_TRUE(dx_clean(&x));
	dx_done(&x);
}

static void test_dirs_signal_at_write(void)
{
	/* Ctrl-C at the 3rd write, deterministically: interrupted, kept. */
	struct dx x;
	dx_init(&x, "  - write: { files: 2, size: 64K, block: 64K }\n");
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(rig_fault("signal:SIGINT:io:write:3", args, &out), 1);
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT status FROM run"), "interrupted"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT group_concat(status, ' ') FROM (SELECT status FROM cells "
				"ORDER BY seq)"), "done interrupted"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT count(DISTINCT seq) FROM samples"), "1"));
	CU_ASSERT_TRUE(dx_clean(&x));
	dx_done(&x);
}

static void test_dirs_signal_at_run_edges(void)
{
	/* A signal where the run's row is written but the target not yet
	 * prepared: not started, the folder rig made removed, exit 1. */
	struct dx x;
	dx_init(&x, "  - write: { files: 2, size: 64K, block: 64K }\n");
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(rig_fault("signal:SIGTERM:at:started:1", args, &out), 1);
	CU_ASSERT_TRUE(out && strstr(out, "interrupted before the target was prepared (nothing "
					  "was provisioned or measured; the run folder"));
	free(out);
	CU_ASSERT_NOT_EQUAL(access(x.out.buf, F_OK), 0);
	CU_ASSERT_TRUE(dx_clean(&x));

	/* Where the run's end is recorded and the reports not yet written:
	 * completed, with its reports. */
	CU_ASSERT_EQUAL(rig_fault("signal:SIGINT:at:ended:1", args, &out), 0);
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT status FROM run"), "completed"));
	struct strbuf f = STRBUF_INIT;
	sb_addf(&f, "%s/results.csv", x.out.buf);
	CU_ASSERT_EQUAL(access(f.buf, R_OK), 0);
	sb_reset(&f);
	sb_addf(&f, "%s/report.html", x.out.buf);
	CU_ASSERT_EQUAL(access(f.buf, R_OK), 0);
	sb_release(&f);

	/* rig resume interrupted where it has reopened the log: the run is left
	 * as it was, and resumes later. */
	test_rmtree(x.out.buf);
	CU_ASSERT_EQUAL(rig_fault("signal:SIGINT:io:write:3", args, &out), 1);
	free(out);
	const char *resume[] = { "resume", "-q", x.out.buf, NULL };
	CU_ASSERT_EQUAL(rig_fault("signal:SIGTERM:at:started:1", resume, &out), 1);
	CU_ASSERT_TRUE(out && strstr(out, "rig resume: interrupted before the target was prepared"));
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT status FROM run"), "interrupted"));
	CU_ASSERT_TRUE(eq(q(&x, "SELECT group_concat(status, ' ') FROM (SELECT status FROM cells "
				"ORDER BY seq)"), "done interrupted"));
	CU_ASSERT_EQUAL(rig_fault(NULL, resume, &out), 0);
	free(out);
	CU_ASSERT_TRUE(eq(q(&x, "SELECT status FROM run"), "completed"));
	CU_ASSERT_TRUE(dx_clean(&x));
	dx_done(&x);
}

static void test_bad_spec(void)
{
	char *tmp = test_tmpdir();
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/configs/quick.yaml", test_src());
	const char *args[] = { "validate", p.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(rig_fault("spawn:mkfs.ext4", args, &out), 2);
	CU_ASSERT_TRUE(out && strstr(out, "rig: RIG_FAULT: rule 'spawn:mkfs.ext4': spawn takes "
					  "NAME:N[:exit=S]"));
	free(out);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&p);
}

/* --- the rig binary on image targets (root) --- */

static const char image_plan[] =
	"rig: 1\nname: faults\ntarget:\n  image: { path: IMG, size: 700M }\n"
	"layouts:\n  - name: one\n    partitions:\n"
	"      - { name: A, fs: ext4, size: 50% }\n      - { name: X, fs: xfs, size: rest }\n"
	"steps:\n  - write: { files: 1, size: 1M }\n";

struct ix {
	char *tmp;
	struct strbuf plan, out, img;
};

static void ix_init(struct ix *x)
{
	x->tmp = test_tmpdir();
	sb_init(&x->plan);
	sb_init(&x->out);
	sb_init(&x->img);
	sb_addf(&x->plan, "%s/plan.yaml", x->tmp);
	sb_addf(&x->out, "%s/out", x->tmp);
	sb_addf(&x->img, "%s/disk.img", x->tmp);
	struct strbuf t = STRBUF_INIT;
	for (const char *p = image_plan; *p; p++) {
		if (!strncmp(p, "IMG", 3)) {
			sb_adds(&t, x->img.buf);
			p += 2;
		} else {
			sb_addch(&t, *p);
		}
	}
	CU_ASSERT_EQUAL(test_write_file(x->plan.buf, t.buf), 0);
	sb_release(&t);
}

/* Nothing of this test is mounted or attached, the image is gone. */
static void ix_done(struct ix *x, const char *what)
{
	struct strbuf left = STRBUF_INIT;
	int n = pt_leftovers(x->tmp, &left);
	if (n)
		fprintf(stderr, "\n%s left behind:\n%s", what, left.buf);
	CU_ASSERT_EQUAL(n, 0);
	if (access(x->img.buf, F_OK) == 0) {
		fprintf(stderr, "\n%s left the image %s\n", what, x->img.buf);
		CU_FAIL("image left behind");
	}
	sb_release(&left);
	test_rmtree(x->tmp);
	free(x->tmp);
	sb_release(&x->plan);
	sb_release(&x->out);
	sb_release(&x->img);
}

struct cmd_fault {
	const char *rule;
	const char *command;   /* how the error names it */
	int provisioning;      /* fails provisioning: no sample */
	const char *status;    /* the run's status */
};

static void test_every_command_fails_once(void)
{
	static const struct cmd_fault cases[] = {
		{ "spawn:losetup --find:1", "losetup --find --show --direct-io=on ", 1, "failed" },
		{ "spawn:sgdisk:1:exit=4", "sgdisk --clear --set-alignment=2048 ", 1, "failed" },
		{ "spawn:partx --update:1", "partx --update /dev/loop", 1, "failed" },
		{ "spawn:mkfs.ext4:1", "mkfs.ext4 -F -q -L A ", 1, "failed" },
		{ "spawn:mkfs.xfs:1", "mkfs.xfs -f -q -L X ", 1, "failed" },
		{ "spawn:mount:1:exit=32", "mount -t ext4 /dev/loop", 1, "failed" },
		{ "spawn:mount:2:exit=32", "mount -t xfs /dev/loop", 1, "failed" },
		/* teardown: a busy umount is retried; partx and losetup fail the run
		 * but the end of the run tries again and detaches */
		{ "spawn:umount:1:exit=32", NULL, 0, "completed" },
		{ "spawn:partx --delete:1", "partx --delete /dev/loop", 0, "failed" },
		{ "spawn:losetup --detach:1", "losetup --detach /dev/loop", 0, "failed" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cmd_fault *c = &cases[i];
		struct ix x;
		ix_init(&x);
		const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
		char *out = NULL;
		int rc = rig_fault(c->rule, args, &out);
		int want = strcmp(c->status, "completed") ? 1 : 0;
		int ok = rc == want;
		if (c->command) /* the failing command, its status and its (injected) output */
			ok = ok && out && strstr(out, c->command) && strstr(out, "failed with exit status") &&
			     strstr(out, "failure injected by RIG_FAULT");
		char *st = pt_run_query(x.out.buf, "SELECT status FROM run");
		ok = ok && st && !strcmp(st, c->status);
		char *samples = pt_run_query(x.out.buf, "SELECT count(*) FROM samples");
		ok = ok && samples && (c->provisioning ? !strcmp(samples, "0") : strcmp(samples, "0"));
		/* the fake failure is in the command log with its output */
		char *logged_fault = pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE output LIKE "
							"'%failure injected by RIG_FAULT%'");
		ok = ok && logged_fault && !strcmp(logged_fault, "1");
		if (!ok)
			fprintf(stderr, "\n%s: rig exited %d, run %s, %s samples, %s faked:\n%s\n", c->rule,
				rc, st ? st : "?", samples ? samples : "?",
				logged_fault ? logged_fault : "?", out ? out : "");
		CU_ASSERT_TRUE(ok);
		free(st);
		free(samples);
		free(logged_fault);
		free(out);
		ix_done(&x, c->rule);
	}
}

static void test_signals_at_commands(void)
{
	static const char *const rules[] = {
		"signal:SIGINT:before-spawn:sgdisk:1",
		"signal:SIGTERM:after-spawn:losetup --find:1",
		"signal:SIGINT:after-spawn:mkfs.xfs:1",
		"signal:SIGTERM:before-spawn:mount:2",
	};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct ix x;
		ix_init(&x);
		const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
		char *out = NULL;
		int rc = rig_fault(rules[i], args, &out);
		char *st = pt_run_query(x.out.buf, "SELECT status FROM run");
		int ok = rc == 1 && st && !strcmp(st, "interrupted");
		if (!ok)
			fprintf(stderr, "\n%s: rig exited %d, run %s:\n%s\n", rules[i], rc, st ? st : "?",
				out ? out : "");
		CU_ASSERT_TRUE(ok);
		free(st);
		free(out);
		ix_done(&x, rules[i]);
	}
}

static void test_image_io_error(void)
{
	struct ix x;
	ix_init(&x);
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	char *out = NULL;
	/* each 1M file is 1 write; the 2nd volume's write fails */
	CU_ASSERT_EQUAL(rig_fault("io:write:2:EIO", args, &out), 1);
	CU_ASSERT_TRUE(out && strstr(out, "Input/output error"));
	free(out);
	CU_ASSERT_TRUE(eq(pt_run_query(x.out.buf, "SELECT status FROM run"), "failed"));
	CU_ASSERT_TRUE(eq(pt_run_query(x.out.buf, "SELECT group_concat(status, ' ') FROM (SELECT status "
					     "FROM cells ORDER BY seq)"), "done failed"));
	CU_ASSERT_TRUE(eq(pt_run_query(x.out.buf, "SELECT count(DISTINCT seq) FROM samples"), "1"));
	ix_done(&x, "io:write:2:EIO");
}

static void test_disk_target_faults(void)
{
	/* A disk target: a loop device this test makes over its own file
	 * (rig may erase it with --allow loop and confirm = the backing file). */
	char *tmp = test_tmpdir();
	struct strbuf backing = STRBUF_INIT, plan = STRBUF_INIT, out = STRBUF_INIT, text = STRBUF_INIT;
	sb_addf(&backing, "%s/backing.img", tmp);
	sb_addf(&plan, "%s/plan.yaml", tmp);
	sb_addf(&out, "%s/out", tmp);
	int fd = open(backing.buf, O_RDWR | O_CREAT | O_EXCL, 0600);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, 300 << 20), 0);
	close(fd);
	const char *lo[] = { "losetup", "--find", "--show", backing.buf, NULL };
	char *dev = NULL;
	CU_ASSERT_EQUAL_FATAL(pt_cmd(lo, &dev), 0);
	dev[strcspn(dev, "\n")] = '\0';
	sb_addf(&text, "rig: 1\nname: disk\ntarget:\n  disk: { device: %s, confirm: \"%s\" }\n"
		       "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: 50%% }\n"
		       "      - { name: B, fs: ext4, size: rest }\n"
		       "steps:\n  - write: { files: 1, size: 1M }\n", dev, backing.buf);
	test_write_file(plan.buf, text.buf);
	const char *args[] = { "run", "-q", "--yes", "--allow", "loop", "-o", out.buf, plan.buf, NULL };
	char *o = NULL;
	/* the zap fails: nothing else writes to the disk */
	CU_ASSERT_EQUAL(rig_fault("spawn:sgdisk --zap-all:1", args, &o), 1);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "sgdisk --zap-all %s failed with exit status 1:\n  sgdisk: failure injected", dev);
	CU_ASSERT_TRUE(o && strstr(o, want.buf));
	free(o);
	CU_ASSERT_TRUE(eq(pt_run_query(out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
						"'mkfs%' OR argv LIKE 'sgdisk --clear%'"), "0"));
	/* the second mkfs fails: the first volume is unmounted again */
	test_rmtree(out.buf);
	CU_ASSERT_EQUAL(rig_fault("spawn:mkfs.ext4:2", args, &o), 1);
	CU_ASSERT_TRUE(o && strstr(o, "mkfs.ext4 -F -q -L B "));
	free(o);
	CU_ASSERT_TRUE(eq(pt_run_query(out.buf, "SELECT group_concat(substr(argv, 1, "
						"instr(argv, ' ') - 1), ' ') FROM commands"),
			  "sgdisk sgdisk partx mkfs.ext4 mount mkfs.ext4 umount"));
	struct strbuf left = STRBUF_INIT;
	/* the test's own cleanup: partitions, then the device; then nothing may be left */
	const char *px[] = { "partx", "--delete", dev, NULL };
	pt_cmd(px, NULL);
	const char *det[] = { "losetup", "--detach", dev, NULL };
	CU_ASSERT_EQUAL(pt_cmd(det, NULL), 0);
	int n = pt_leftovers(tmp, &left);
	if (n)
		fprintf(stderr, "\nleft behind:\n%s", left.buf);
	CU_ASSERT_EQUAL(n, 0);
	free(dev);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&left);
	sb_release(&want);
	sb_release(&backing);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&text);
}

void register_fault_tests(void)
{
	CU_pSuite s = test_suite_e2e("fault injection (RIG_FAULT)");
	test_add(s, "rules: grammar and errors", test_grammar);
	test_add(s, "commands failed by name and occurrence, dry runs left alone", test_spawn_faults);
	test_add(s, "plat_spawner_fault: injects, logs, else hands on to the spawner it wraps",
		 test_fault_decorator);
	test_add(s, "module I/O fails with the chosen errno", test_io_faults);
	test_add(s, "signals before and after commands and at I/O", test_signal_points);
	test_add(s, "rig refuses a bad RIG_FAULT", test_bad_spec);
	test_add(s, "dirs: EIO in write, read, fsync fails the cell, keeps samples", test_dirs_io_errors);
	test_add(s, "dirs: EIO in randread, both engines", test_dirs_random_io);
	test_add(s, "dirs: ENOSPC in fill is the level reached", test_dirs_fill_enospc);
	test_add(s, "dirs: SIGINT at the 3rd write", test_dirs_signal_at_write);
	test_add(s, "dirs: SIGINT/SIGTERM after the run's row, before the reports",
		 test_dirs_signal_at_run_edges);

	CU_pSuite r = test_suite("fault injection on image targets (Linux, root)");
	if (!pt_require_provisioning(r, "loop devices, partitions, mkfs and mount"))
		return;
	test_add(r, "every command failing once: named, torn down, nothing left",
		 test_every_command_fails_once);
	test_add(r, "signals before and after chosen commands", test_signals_at_commands);
	test_add(r, "EIO on a mounted volume", test_image_io_error);
	test_add(r, "a disk target: the zap or the second mkfs failing", test_disk_target_faults);
}
