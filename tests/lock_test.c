/*
 * Target locks (rig/util/lock.c): one run at a time on each disk, image
 * and directory. The lock itself: lock file names, two lock sets of one
 * process excluding each other, the holder's record, release.
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

#include "provision/linux.h"
#include "rig/util/lock.h"
#include "rig/util/strbuf.h"
#include "rig/util/xalloc.h"
#include "tests/macos_fx.h"
#include "tests/provision_util.h"
#include "test.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* --- the lock --- */

static void test_file_names(void)
{
	struct strbuf sb = STRBUF_INIT;
	lock_file_name("disk-8:16-WD-WCC4E1234567", &sb);
	CU_ASSERT_STRING_EQUAL(sb.buf, "disk-8:16-WD-WCC4E1234567.lock");
	sb_reset(&sb);
	lock_file_name("image-/var/tmp/a b%.img", &sb);
	CU_ASSERT_STRING_EQUAL(sb.buf, "image-%2Fvar%2Ftmp%2Fa%20b%25.img.lock");
	sb_reset(&sb);
	lock_file_name("..", &sb); /* never a name of the folder itself */
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
	lock_file_name(k.buf, &sb);
	struct strbuf sb2 = STRBUF_INIT;
	lock_file_name(other.buf, &sb2);
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
	lock_set_init(&a, "rig run");
	lock_set_init(&b, "rig resume");
	CU_ASSERT_EQUAL(lock_probe("dir-1:2", &who), 0);
	CU_ASSERT_EQUAL(lock_take(&a, "dir-1:2", "directory /x", &err), 0);
	CU_ASSERT_EQUAL(lock_take(&a, "dir-1:2", "directory /x", &err), 0); /* held: once */
	CU_ASSERT_EQUAL(a.n, 1);
	lock_set_run(&a, "/somewhere/runs/20261201T141016Z-cc");
	double t0 = now_ms();
	CU_ASSERT_EQUAL(lock_take(&b, "dir-1:2", "directory /x", &err), -EBUSY);
	CU_ASSERT_TRUE(now_ms() - t0 < LOCK_SETTLE_MS / 2); /* a complete record: no wait */
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "directory /x is in use by rig run /somewhere/runs/20261201T141016Z-cc "
		       "(pid %ld on ", (long)getpid());
	pt_has("refusal", err.buf, want.buf);
	pt_has("refusal", err.buf, " UTC); wait for it or stop it");
	CU_ASSERT_EQUAL(b.n, 0);
	CU_ASSERT_EQUAL(lock_probe("dir-1:2", &who), 1);
	pt_has("probe", who.buf, "rig run /somewhere/runs/20261201T141016Z-cc (pid ");

	/* The record, for people looking into the folder. */
	struct strbuf file = STRBUF_INIT;
	sb_addf(&file, "%s/dir-1:2.lock", dir.buf);
	char *rec = test_read_file(file.buf, NULL);
	pt_has("record", rec, "target: directory /x\nrun: /somewhere/runs/20261201T141016Z-cc\n"
			      "command: rig run\npid: ");
	free(rec);

	/* Released: the file is emptied, the other set takes it at once. */
	lock_set_release(&a);
	rec = test_read_file(file.buf, NULL);
	CU_ASSERT_STRING_EQUAL(rec ? rec : "(none)", "");
	free(rec);
	CU_ASSERT_EQUAL(lock_probe("dir-1:2", &who), 0);
	sb_reset(&err);
	CU_ASSERT_EQUAL(lock_take(&b, "dir-1:2", "directory /x", &err), 0);
	/* A holder that has not said which run it is (it is starting) is
	 * given time, then named as starting. */
	lock_set_init(&a, "rig run");
	sb_reset(&err);
	t0 = now_ms();
	CU_ASSERT_EQUAL(lock_take(&a, "dir-1:2", "directory /x", &err), -EBUSY);
	CU_ASSERT_TRUE(now_ms() - t0 >= LOCK_SETTLE_MS);
	pt_has("starting", err.buf, "directory /x is in use by a rig resume that is starting (pid ");
	lock_set_release(&a);
	lock_set_release(&b);

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

void register_lock_tests(void)
{
	CU_pSuite s = test_suite("target locks");
	test_add(s, "lock file names: readable, escaped, long keys cut and hashed", test_file_names);
	test_add(s, "two holders exclude each other; the record names the run; release empties it",
		 test_two_holders);
}
