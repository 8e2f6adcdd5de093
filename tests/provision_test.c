/*
 * End-to-end tests of the Linux backend (provision/linux/linux.c) through the
 * rig binary: image targets on loop devices, run as root (CI is root).
 * Every test works in its own temporary folder and ends by checking that
 * no mount and no loop device under it is left (pt_leftovers, which also
 * removes whatever it finds, so a failing test leaves the machine clean).
 *
 * The ready plans configs/linux-ten-partitions.yaml and linux-fs-halves.yaml
 * run with their image moved into the test folder, --image-size for a
 * small image, and fewer and smaller files, so the suite takes seconds.
 * Faults: a fake mkfs.xfs that fails, SIGINT in the middle of a write,
 * SIGTERM at several moments of provisioning, a full file system. Safety:
 * images rig did not make, images in use, and loop devices as disk targets
 * (made here over the test's own image files).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision_util.h"
#include "test.h"

struct px {
	char *tmp;
	struct strbuf plan, out, img;
};

static void px_init(struct px *x, const char *plan_text)
{
	x->tmp = test_tmpdir();
	sb_init(&x->plan);
	sb_init(&x->out);
	sb_init(&x->img);
	sb_addf(&x->plan, "%s/plan.yaml", x->tmp);
	sb_addf(&x->out, "%s/out", x->tmp);
	sb_addf(&x->img, "%s/disk.img", x->tmp);
	if (plan_text) {
		/* IMG in the text stands for the image path. */
		struct strbuf t = STRBUF_INIT;
		for (const char *p = plan_text; *p;) {
			const char *at = strstr(p, "IMG");
			if (!at) {
				sb_adds(&t, p);
				break;
			}
			sb_add(&t, p, (size_t)(at - p));
			sb_adds(&t, x->img.buf);
			p = at + 3;
		}
		CU_ASSERT_EQUAL(test_write_file(x->plan.buf, t.buf), 0);
		sb_release(&t);
	}
}

/* Nothing may be left mounted or attached; then the folder goes. */
static void px_done(struct px *x)
{
	struct strbuf what = STRBUF_INIT;
	int n = pt_leftovers(x->tmp, &what);
	if (n)
		fprintf(stderr, "\nleft behind:\n%s", what.buf);
	CU_ASSERT_EQUAL(n, 0);
	sb_release(&what);
	test_rmtree(x->tmp);
	free(x->tmp);
	sb_release(&x->plan);
	sb_release(&x->out);
	sb_release(&x->img);
}

static int eq(const char *v, const char *want)
{
	int ok = v && !strcmp(v, want);
	if (!ok)
		fprintf(stderr, "\nexpected '%s', got '%s'\n", want, v ? v : "(null)");
	return ok;
}

static void check_eq(char *v, const char *want)
{
	CU_ASSERT_TRUE(eq(v, want));
	free(v);
}

static int run_ok(const char *const *args)
{
	char *out = NULL;
	int rc = test_run_rig(args, &out);
	if (rc != 0)
		fprintf(stderr, "\nrig exited %d:\n%s\n", rc, out);
	free(out);
	return rc;
}

/* --- the ready plans --- */

static void test_ten_partitions(void)
{
	struct px x;
	px_init(&x, NULL);
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "path: %s, size: 4G, keep: true", x.img.buf);
	const char *pairs[] = {
		"path: /var/tmp/rig-ten.img, size: 4G", path.buf,
		"repeat: 10", "repeat: 2",
		"write: { files: 4, sizes: 4M..64M }", "write: { files: 2, sizes: 1M..4M }",
		NULL, NULL,
	};
	char *text = pt_config("linux-ten-partitions", pairs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	test_write_file(x.plan.buf, text);
	free(text);
	const char *args[] = { "run", "-q", "--image-size", "640M", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(run_ok(args), 0);

	/* 640M: sectors 2048 .. 1310686 usable; a tenth rounds down to 63 MiB. */
	const uint64_t mib = 1 << 20, part = 63 * mib, end = (1310686ull + 1) * 512;
	struct strbuf want = STRBUF_INIT;
	for (int i = 1; i <= 10; i++)
		sb_addf(&want, "%sp%d:%d:%llu:%llu", i > 1 ? " " : "", i, i,
			(unsigned long long)(mib + (uint64_t)(i - 1) * part),
			(unsigned long long)(i < 10 ? mib + (uint64_t)i * part : end));
	check_eq(pt_run_query(x.out.buf, "SELECT group_concat(name || ':' || position || ':' || "
					 "offset_start || ':' || offset_end, ' ') FROM (SELECT * "
					 "FROM volumes ORDER BY position)"), want.buf);
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM cells WHERE status = 'done'"), "40");
	check_eq(pt_run_query(x.out.buf, "SELECT status FROM run"), "completed");
	check_eq(pt_run_query(x.out.buf, "SELECT count(DISTINCT device) FROM volumes "
					 "WHERE device LIKE '/dev/loop%p%'"), "10");
	char *facts = pt_run_query(x.out.buf, "SELECT facts_json FROM volumes WHERE position = 3");
	CU_ASSERT_TRUE(facts && strstr(facts, "\"loop_direct_io\":true") &&
		       strstr(facts, "\"mount_options\":\"rw,") &&
		       strstr(facts, "lazy_itable_init=0,lazy_journal_init=0") &&
		       strstr(facts, "\"capacity_bytes\":") && strstr(facts, "\"name\":\"p3\""));
	free(facts);
	/* results.csv carries positions and byte ranges. */
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/results.csv", x.out.buf);
	char *csv = test_read_file(p.buf, NULL);
	struct strbuf row = STRBUF_INIT;
	sb_addf(&row, ",tenths,1,1,write,p10,ext4,10,%llu,%llu,", (unsigned long long)(mib + 9 * part),
		(unsigned long long)end);
	CU_ASSERT_TRUE(csv && strstr(csv, row.buf));
	free(csv);

	/* The image was kept: sgdisk -p agrees with the plan and the store. */
	CU_ASSERT_EQUAL(access(x.img.buf, F_OK), 0);
	char *out = NULL;
	const char *sg[] = { "sgdisk", "-p", x.img.buf, NULL };
	CU_ASSERT_EQUAL(pt_cmd(sg, &out), 0);
	for (int i = 1; i <= 10; i++) {
		sb_reset(&row);
		uint64_t first = (mib + (uint64_t)(i - 1) * part) / 512;
		uint64_t last = (i < 10 ? mib + (uint64_t)i * part : end) / 512 - 1;
		sb_addf(&row, "%d %llu %llu", i, (unsigned long long)first, (unsigned long long)last);
		/* sgdisk pads columns: compare with blanks squeezed */
		struct strbuf sq = STRBUF_INIT;
		for (const char *c = out ? out : ""; *c; c++)
			if (*c != ' ' || (sq.len && sq.buf[sq.len - 1] != ' ' && sq.buf[sq.len - 1] != '\n'))
				sb_addch(&sq, *c);
		struct strbuf name = STRBUF_INIT;
		sb_addf(&name, "%s ", row.buf);
		char *at = strstr(sq.buf, name.buf);
		CU_ASSERT_PTR_NOT_NULL(at);
		if (at) {
			char *nl = strchr(at, '\n');
			struct strbuf pn = STRBUF_INIT;
			sb_addf(&pn, " 8300 p%d", i);
			CU_ASSERT_TRUE(nl && (size_t)(nl - at) >= pn.len &&
				       !strncmp(nl - pn.len, pn.buf, pn.len));
			sb_release(&pn);
		}
		sb_release(&name);
		sb_release(&sq);
	}
	CU_ASSERT_TRUE(out && strstr(out, "Disk identifier (GUID): 72696721-"));
	free(out);
	/* A second run may replace an image rig made (it carries rig's mark). */
	test_rmtree(x.out.buf);
	const char *again[] = { "run", "-q", "--image-size", "640M", "--seed", "1", "-o", x.out.buf,
				x.plan.buf, NULL };
	CU_ASSERT_EQUAL(run_ok(again), 0);
	unlink(x.img.buf);
	sb_release(&row);
	sb_release(&p);
	sb_release(&want);
	sb_release(&path);
	px_done(&x);
}

static void test_fs_halves(void)
{
	struct px x;
	px_init(&x, NULL);
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "path: %s, size: 2G", x.img.buf);
	const char *pairs[] = {
		"path: /var/tmp/rig-halves.img, size: 2G", path.buf,
		"repeat: { times: 4, provision: each }", "repeat: 2",
		"write: { files: 8, sizes: 1M..64M }", "write: { files: 2, sizes: 1M..8M }",
		"span: 256M, time: 3s", "span: 16M, time: 300ms",
		NULL, NULL,
	};
	char *text = pt_config("linux-fs-halves", pairs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	test_write_file(x.plan.buf, text);
	free(text);
	/* xfs needs 300 MB: halves of 700M are 349 MiB. */
	const char *args[] = { "run", "-q", "--image-size", "700M", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(run_ok(args), 0);
	check_eq(pt_run_query(x.out.buf, "SELECT group_concat(layout || '/' || name || '/' || fs || "
					 "'/' || position || '/' || offset_start, ' ') FROM (SELECT * "
					 "FROM volumes ORDER BY id)"),
		 "ext4-first/ext4/ext4/1/1048576 ext4-first/xfs/xfs/2/367001600 "
		 "xfs-first/xfs/xfs/1/1048576 xfs-first/ext4/ext4/2/367001600");
	/* 2 layouts x 2 reps x 3 steps x 2 volumes */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM cells WHERE status = 'done'"), "24");
	check_eq(pt_run_query(x.out.buf, "SELECT count(DISTINCT c.layout || v.name) FROM samples s "
					 "JOIN cells c ON c.seq = s.seq JOIN volumes v ON v.id = c.volume_id "
					 "WHERE s.metric = 'iops'"), "4");
	/* reprovisioned from scratch: two images made and detached, the last deleted */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'losetup --find --show --direct-io=on %'"), "2");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'losetup --detach %' AND status = 0"), "2");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'sgdisk --clear % --new=1:2048:716799 --change-name=1:xfs %'"), "1");
	CU_ASSERT_NOT_EQUAL(access(x.img.buf, F_OK), 0);
	sb_release(&path);
	px_done(&x);
}

/* configs/huge-folder.yaml rehearsed on an image with --fs-map hfs+=ext4,
 * scaled down: the folder built, measured at 95%, packed into an image
 * file by mke2fs -d and removed, measured again at 95%. */
static void test_huge_folder(void)
{
	struct px x;
	px_init(&x, NULL);
	struct strbuf tgt = STRBUF_INIT;
	sb_addf(&tgt, "image: { path: %s, size: 512M }", x.img.buf);
	const char *seq = "span: 100M, passes: 3, time: 5s, file: fresh }",
		   *small = "span: 4M, passes: 1, time: 200ms, file: fresh }";
	const char *pairs[] = {
		"disk:\n    device: disk4\n    confirm: \"HGST HTS721010A9E630\"", tgt.buf,
		"size: 260GB", "size: rest",
		"files: 288287, dirs: 0, depth: 0, sizes: 1K..8K", "files: 2000, dirs: 0, depth: 0, sizes: 1K..8K",
		seq, small, seq, small, seq, small, seq, small,
		"pack: { size: 2G }", "pack: { size: 24M }",
		NULL, NULL,
	};
	char *text = pt_config("huge-folder", pairs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	test_write_file(x.plan.buf, text);
	free(text);
	const char *args[] = { "run", "-q", "--fs-map", "hfs+=ext4", "-o", x.out.buf, x.plan.buf,
			       NULL };
	CU_ASSERT_EQUAL(run_ok(args), 0);
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM cells WHERE status = 'done'"), "8");
	/* the folder: 2000 files directly in it, moved into the image */
	check_eq(pt_run_query(x.out.buf, "SELECT s.value FROM samples s JOIN cells c ON c.seq = "
					 "s.seq WHERE c.module = 'pack' AND s.metric = 'files'"),
		 "2000.0");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'mke2fs -q -F -t ext4 -d %/tree %/rig-pack.img 24576k' AND "
					 "status = 0"), "1");
	/* both fills reach 95%, and both sets of tests measured there */
	check_eq(pt_run_query(x.out.buf, "SELECT group_concat(printf('%.0f', s.value), ' ') FROM "
					 "samples s JOIN cells c ON c.seq = s.seq WHERE c.module = "
					 "'fill' AND s.metric = 'level'"), "95 95");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM samples s JOIN cells c ON c.seq = "
					 "s.seq WHERE c.module IN ('seqread', 'seqwrite') AND "
					 "s.metric = 'rate'"), "4");
	CU_ASSERT_NOT_EQUAL(access(x.img.buf, F_OK), 0);
	sb_release(&tgt);
	px_done(&x);
}

/* repeat: { provision: each }: every repetition on file systems made
 * afresh, its volumes recorded as rows (units) of their own, and the
 * report says so. */
static void test_provision_each(void)
{
	struct px x;
	px_init(&x, "rig: 1\nname: each\nseed: 3\ntarget:\n  image: { path: IMG, size: 96M }\n"
		    "layouts:\n  - name: l\n    partitions:\n      - { name: a, fs: ext4, size: 50% }\n"
		    "      - { name: b, fs: ext4, size: rest }\n"
		    "repeat: { times: 2, provision: each }\nreport: { formats: [json] }\n"
		    "steps:\n  - write: { files: 1, size: 1M }\n");
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(run_ok(args), 0);
	/* one mkfs per volume per repetition, in the store and in commands.log */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'mkfs.ext4 %'"), "4");
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/commands.log", x.out.buf);
	char *log = test_read_file(p.buf, NULL);
	size_t n = 0;
	for (const char *at = log; at && (at = strstr(at, "$ mkfs.ext4 ")); at++)
		n++;
	CU_ASSERT_EQUAL(n, 4);
	free(log);
	/* the volumes of each provisioning are rows of their own, and the
	 * cells of each repetition ran on theirs */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) || ' ' || count(DISTINCT name) FROM volumes"),
		 "4 2");
	check_eq(pt_run_query(x.out.buf, "SELECT group_concat(n, ' ') FROM (SELECT count(DISTINCT "
					 "volume_id) n FROM cells GROUP BY rep ORDER BY rep)"), "2 2");
	check_eq(pt_run_query(x.out.buf, "SELECT count(DISTINCT volume_id) FROM cells"), "4");
	sb_reset(&p);
	sb_addf(&p, "%s/results.json", x.out.buf);
	char *json = test_read_file(p.buf, NULL);
	CU_ASSERT(json && strstr(json, "\"provision\":\"each\""));
	free(json);
	sb_release(&p);
	px_done(&x);
}

static void test_remount_btrfs(void)
{
	struct px x;
	px_init(&x, "rig: 1\nname: remount\ntarget:\n  image: { path: IMG, size: 400M }\n"
		    "layouts:\n  - name: one\n    partitions:\n"
		    "      - { name: B, fs: btrfs, size: 60% }\n      - { name: E, fs: ext4, size: rest }\n"
		    "cache: { remount: true }\n"
		    "steps:\n  - write: { files: 2, size: 2M }\n  - read: {}\n");
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(run_ok(args), 0);
	check_eq(pt_run_query(x.out.buf, "SELECT group_concat(DISTINCT cache) FROM samples s JOIN "
					 "cells c ON c.seq = s.seq WHERE c.module = 'read'"),
		 "direct+remount+drop_caches");
	check_eq(pt_run_query(x.out.buf, "SELECT group_concat(DISTINCT cache) FROM samples s JOIN "
					 "cells c ON c.seq = s.seq WHERE c.module = 'write'"), "direct");
	/* mount, then umount + mount before each read */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'mount -t btrfs %'"), "2");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'mkfs.btrfs -f -q -L B %'"), "1");
	/* where the files sit: ext4's within its partition (2 write and 2 read
	 * samples), btrfs's not said (its addresses are its own), with why */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) || ' ' || count(f.disk_offset_min)"
					 " FROM file_samples f JOIN cells c ON c.seq = f.seq JOIN volumes v"
					 " ON v.id = c.volume_id WHERE v.name = 'B'"), "4 0");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) || ' ' || total(f.disk_offset_min >="
					 " v.offset_start AND f.disk_offset_max <= v.offset_end AND"
					 " f.disk_offset_max > f.disk_offset_min)"
					 " FROM file_samples f JOIN cells c ON c.seq = f.seq JOIN volumes v"
					 " ON v.id = c.volume_id WHERE v.name = 'E'"), "4 4.0");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM notes WHERE key = 'disk_offset' AND"
					 " value LIKE '%btrfs maps its own addresses%'"), "2");
	px_done(&x);
}

/* --- faults --- */

static void test_fake_mkfs_fails(void)
{
	struct px x;
	px_init(&x, "rig: 1\nname: fake-mkfs\ntarget:\n  image: { path: IMG, size: 700M }\n"
		    "layouts:\n  - name: first\n    partitions:\n      - { name: A, fs: ext4, size: 100% }\n"
		    "  - name: second\n    partitions:\n      - { name: A, fs: ext4, size: 50% }\n"
		    "      - { name: X, fs: xfs, size: rest }\n"
		    "steps:\n  - write: { files: 1, size: 1M }\n");
	struct strbuf bin = STRBUF_INIT, fake = STRBUF_INIT;
	sb_addf(&bin, "%s/bin", x.tmp);
	mkdir(bin.buf, 0755);
	sb_addf(&fake, "%s/mkfs.xfs", bin.buf);
	test_write_file(fake.buf, "#!/bin/sh\necho 'mkfs.xfs: simulated failure' >&2\nexit 1\n");
	chmod(fake.buf, 0755);
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(pt_rig(bin.buf, args, &out), 1);
	CU_ASSERT_TRUE(out && strstr(out, "cannot provision layout second: mkfs.xfs -f -q -L X "));
	CU_ASSERT_TRUE(out && strstr(out, "failed with exit status 1:\n  mkfs.xfs: simulated failure"));
	free(out);
	check_eq(pt_run_query(x.out.buf, "SELECT status FROM run"), "failed");
	/* the first layout's samples are kept */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) > 0 FROM samples s JOIN cells c ON "
					 "c.seq = s.seq WHERE c.layout = 'first'"), "1");
	/* the partial second layout was undone: A unmounted, partitions removed, detached */
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE 'umount %'"), "2");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'losetup --detach %' AND status = 0"), "2");
	CU_ASSERT_NOT_EQUAL(access(x.img.buf, F_OK), 0);
	sb_release(&bin);
	sb_release(&fake);
	px_done(&x);
}

static pid_t spawn_rig(const char *const *args, const char *log)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		size_t n = 0;
		while (args[n])
			n++;
		char **argv = xcalloc(n + 2, sizeof(char *));
		argv[0] = (char *)test_rig_bin();
		for (size_t i = 0; i < n; i++)
			argv[i + 1] = (char *)args[i];
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void test_sigint_mid_write(void)
{
	struct px x;
	px_init(&x, "rig: 1\nname: sigint\ntarget:\n  image: { path: IMG, size: 1536M }\n"
		    "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: 100% }\n"
		    "steps:\n  - write: { files: 64, size: 16M }\n  - read: {}\n");
	struct strbuf log = STRBUF_INIT;
	sb_addf(&log, "%s/rig.log", x.tmp);
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	pid_t pid = spawn_rig(args, log.buf);
	/* Wait until the first files are written, then Ctrl-C. */
	char *v = NULL;
	for (int i = 0; i < 1500; i++) {
		sleep_ms(10);
		free(v);
		v = pt_run_query(x.out.buf, "SELECT count(*) FROM file_samples");
		if (v && strcmp(v, "0"))
			break;
	}
	free(v);
	time_t t0 = time(NULL);
	kill(pid, SIGINT);
	int status;
	waitpid(pid, &status, 0);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	CU_ASSERT_TRUE(time(NULL) - t0 < 20);
	check_eq(pt_run_query(x.out.buf, "SELECT status FROM run"), "interrupted");
	check_eq(pt_run_query(x.out.buf, "SELECT status FROM cells WHERE step = '1'"), "interrupted");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) > 0 AND count(*) < 64 FROM file_samples"), "1");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM cells WHERE step = '2'"), "0");
	CU_ASSERT_NOT_EQUAL(access(x.img.buf, F_OK), 0);
	sb_release(&log);
	px_done(&x);
}

static void test_sigterm_any_moment(void)
{
	/* Signals landing at different points of provisioning, measuring and
	 * teardown: each run ends interrupted (or completed), leaving nothing. */
	static const long delays_ms[] = { 0, 100, 1050, 1150, 1300, 1800, 2400 };
	for (size_t i = 0; i < sizeof(delays_ms) / sizeof(delays_ms[0]); i++) {
		struct px x;
		px_init(&x, "rig: 1\nname: sigterm\ntarget:\n  image: { path: IMG, size: 700M }\n"
			    "layouts:\n  - name: one\n    partitions:\n"
			    "      - { name: A, fs: ext4, size: 50% }\n      - { name: X, fs: xfs, size: rest }\n"
			    "  - name: two\n    partitions:\n"
			    "      - { name: X, fs: xfs, size: 50% }\n      - { name: A, fs: ext4, size: rest }\n"
			    "steps:\n  - write: { files: 2, size: 8M }\n");
		struct strbuf log = STRBUF_INIT;
		sb_addf(&log, "%s/rig.log", x.tmp);
		const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
		pid_t pid = spawn_rig(args, log.buf);
		sleep_ms(delays_ms[i]);
		kill(pid, i % 2 ? SIGTERM : SIGINT);
		int status;
		waitpid(pid, &status, 0);
		/* before rig installs its handlers a signal simply ends it: nothing
		 * is provisioned yet (the leftover check below says so) */
		CU_ASSERT_TRUE((WIFEXITED(status) && WEXITSTATUS(status) <= 1) || WIFSIGNALED(status));
		char *st = pt_run_query(x.out.buf, "SELECT status FROM run");
		CU_ASSERT_TRUE(!st || !strcmp(st, "interrupted") || !strcmp(st, "completed"));
		if (getenv("RIG_TEST_VERBOSE")) {
			char *last = pt_run_query(x.out.buf, "SELECT group_concat(substr(argv, 1, instr(argv, ' ') + 4), ', ') FROM commands");
			printf("\n  signal after %ld ms: run %s, last command %s", delays_ms[i],
			       st ? st : "(none)", last ? last : "(none)");
			free(last);
		}
		free(st);
		CU_ASSERT_NOT_EQUAL(access(x.img.buf, F_OK), 0);
		sb_release(&log);
		px_done(&x);
	}
}

static void test_enospc(void)
{
	struct px x;
	px_init(&x, "rig: 1\nname: enospc\ntarget:\n  image: { path: IMG, size: 64M }\n"
		    "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: 100% }\n"
		    "steps:\n  - write: { files: 1, size: 1M }\n  - write: { files: 1, size: 200M }\n");
	/* The fit check refuses it after provisioning, before the first cell
	 * (rig/run/run_fit.c); --no-fit-check runs it into ENOSPC. */
	struct strbuf refused = STRBUF_INIT;
	sb_addf(&refused, "%s/refused", x.tmp);
	const char *args0[] = { "run", "-q", "-o", refused.buf, x.plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args0, &out), 1);
	CU_ASSERT_TRUE(out && strstr(out, "write writes a file of 200 MiB, more than volume A "
					  "holds"));
	free(out);
	check_eq(pt_run_query(refused.buf, "SELECT count(*) FROM cells"), "0");
	sb_release(&refused);
	const char *args[] = { "run", "-q", "--no-fit-check", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 1);
	CU_ASSERT_TRUE(out && strstr(out, "No space left on device"));
	free(out);
	check_eq(pt_run_query(x.out.buf, "SELECT status FROM run"), "failed");
	check_eq(pt_run_query(x.out.buf, "SELECT status FROM cells WHERE step = '2'"), "failed");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) > 0 FROM samples s JOIN cells c ON "
					 "c.seq = s.seq WHERE c.step = '1'"), "1");
	CU_ASSERT_NOT_EQUAL(access(x.img.buf, F_OK), 0);
	px_done(&x);
}

/* --- refusals --- */

static const char small_plan[] =
	"rig: 1\nname: small\ntarget:\n  image: { path: IMG, size: 64M }\n"
	"layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: 100% }\n"
	"steps:\n  - write: { files: 1, size: 1M }\n";

static void test_image_not_ours(void)
{
	struct px x;
	px_init(&x, small_plan);
	struct strbuf precious = STRBUF_INIT;
	for (int i = 0; i < 100; i++)
		sb_adds(&precious, "precious data, not an image rig made\n");
	test_write_file(x.img.buf, precious.buf);
	const char *args[] = { "run", "-q", "-o", x.out.buf, x.plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 2); /* refused when prepared: not started */
	CU_ASSERT_TRUE(out && strstr(out, "exists and was not made by rig; pass --force"));
	free(out);
	char *keep = test_read_file(x.img.buf, NULL);
	CU_ASSERT_TRUE(keep && !strcmp(keep, precious.buf));
	free(keep);
	sb_release(&precious);
	CU_ASSERT_NOT_EQUAL(access(x.out.buf, F_OK), 0); /* and no run folder left */

	/* attached to a loop device: refused even with --force */
	const char *lo[] = { "losetup", "--find", "--show", x.img.buf, NULL };
	char *dev = NULL;
	if (pt_cmd(lo, &dev) == 0 && dev) {
		dev[strcspn(dev, "\n")] = '\0';
		test_rmtree(x.out.buf);
		const char *force[] = { "run", "-q", "--force", "-o", x.out.buf, x.plan.buf, NULL };
		CU_ASSERT_EQUAL(test_run_rig(force, &out), 2);
		CU_ASSERT_TRUE(out && strstr(out, "is attached to /dev/loop"));
		CU_ASSERT_NOT_EQUAL(access(x.out.buf, F_OK), 0);
		free(out);
		const char *det[] = { "losetup", "--detach", dev, NULL };
		CU_ASSERT_EQUAL(pt_cmd(det, NULL), 0);
	}
	free(dev);

	/* --force: overwritten, and deleted afterwards */
	test_rmtree(x.out.buf);
	const char *force[] = { "run", "-q", "--force", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(force, &out), 0);
	CU_ASSERT_TRUE(out && strstr(out, "overwriting"));
	free(out);
	CU_ASSERT_NOT_EQUAL(access(x.img.buf, F_OK), 0);

	/* not a regular file: refused with or without --force */
	mkdir(x.img.buf, 0755);
	test_rmtree(x.out.buf);
	CU_ASSERT_EQUAL(test_run_rig(force, &out), 2);
	CU_ASSERT_TRUE(out && strstr(out, "is not a regular file"));
	CU_ASSERT_NOT_EQUAL(access(x.out.buf, F_OK), 0);
	free(out);
	rmdir(x.img.buf);
	px_done(&x);
}

static void test_disk_target_on_loop(void)
{
	/* A loop device made here, over this test's own image, as a disk target. */
	struct px x;
	px_init(&x, NULL);
	struct strbuf backing = STRBUF_INIT;
	sb_addf(&backing, "%s/backing.img", x.tmp);
	int fd = open(backing.buf, O_RDWR | O_CREAT | O_EXCL, 0600);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, 400 << 20), 0);
	close(fd);
	const char *lo[] = { "losetup", "--find", "--show", "--direct-io=on", backing.buf, NULL };
	char *dev = NULL;
	CU_ASSERT_EQUAL_FATAL(pt_cmd(lo, &dev), 0);
	dev[strcspn(dev, "\n")] = '\0';
	struct strbuf text = STRBUF_INIT;
	sb_addf(&text, "rig: 1\nname: disk\ntarget:\n  disk: { device: %s, confirm: \"%s\" }\n"
		       "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: 40%% }\n"
		       "      - { name: B, fs: ext4, size: rest }\n"
		       "steps:\n  - write: { files: 1, size: 1M }\n", dev, backing.buf);
	test_write_file(x.plan.buf, text.buf);
	char *out = NULL;
	/* not attached by rig */
	const char *a1[] = { "run", "-q", "--yes", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a1, &out), 2); /* refused: not started */
	CU_ASSERT_NOT_EQUAL(access(x.out.buf, F_OK), 0);
	CU_ASSERT_TRUE(out && strstr(out, "refusing to erase") && strstr(out, "(rule loop:"));
	free(out);
	/* allowed, but no typed confirmation possible (stdin is not a terminal) */
	test_rmtree(x.out.buf);
	const char *a2[] = { "run", "-q", "--allow", "loop", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a2, &out), 2); /* refused: not started */
	CU_ASSERT_NOT_EQUAL(access(x.out.buf, F_OK), 0);
	CU_ASSERT_TRUE(out && strstr(out, "needs a typed confirmation"));
	free(out);
	/* a confirm that does not match */
	sb_reset(&text);
	sb_addf(&text, "rig: 1\nname: disk\ntarget:\n  disk: { device: %s, confirm: \"WDC\" }\n"
		       "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: 100%% }\n"
		       "steps:\n  - write: { files: 1, size: 1M }\n", dev);
	struct strbuf bad = STRBUF_INIT;
	sb_addf(&bad, "%s/bad.yaml", x.tmp);
	test_write_file(bad.buf, text.buf);
	test_rmtree(x.out.buf);
	const char *a3[] = { "run", "-q", "--yes", "--allow", "loop", "-o", x.out.buf, bad.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a3, &out), 2); /* refused: not started */
	CU_ASSERT_NOT_EQUAL(access(x.out.buf, F_OK), 0);
	CU_ASSERT_TRUE(out && strstr(out, "(rule confirm:"));
	free(out);
	/* everything given: runs, leaves the device attached (it is not rig's) */
	test_rmtree(x.out.buf);
	const char *a4[] = { "run", "-q", "--yes", "--allow", "loop", "-o", x.out.buf, x.plan.buf, NULL };
	CU_ASSERT_EQUAL(run_ok(a4), 0);
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
					 "'sgdisk --zap-all %'"), "1");
	check_eq(pt_run_query(x.out.buf, "SELECT count(*) FROM commands WHERE argv LIKE 'losetup %'"),
		 "0");
	char *facts = pt_run_query(x.out.buf, "SELECT facts_json FROM volumes WHERE position = 2");
	CU_ASSERT_TRUE(facts && strstr(facts, "\"target\":\"disk\""));
	free(facts);
	char *b = NULL;
	struct strbuf sys = STRBUF_INIT;
	sb_addf(&sys, "/sys/block/%s/loop/backing_file", strrchr(dev, '/') + 1);
	b = test_read_file(sys.buf, NULL);
	CU_ASSERT_TRUE(b && !strncmp(b, backing.buf, backing.len));
	free(b);
	/* the test's own cleanup: partitions, then the device */
	const char *px_[] = { "partx", "--delete", dev, NULL };
	pt_cmd(px_, NULL);
	const char *det[] = { "losetup", "--detach", dev, NULL };
	CU_ASSERT_EQUAL(pt_cmd(det, NULL), 0);
	free(dev);
	sb_release(&sys);
	sb_release(&bad);
	sb_release(&text);
	sb_release(&backing);
	px_done(&x);
}

/* --- rig plan lists the commands (no root needed) --- */

static void test_plan_lists_commands(void)
{
	char *out = NULL;
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/configs/linux-fs-halves.yaml", test_src());
	const char *args[] = { "plan", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 0);
	static const char *const want[] = {
		"RUN stands for the run folder, /dev/loopN for the loop device",
		"layout ext4-first (gpt): 1:ext4 ext4 50%, 2:xfs xfs rest\n"
		"  provision (again before every repetition):\n"
		"    # create the sparse file /var/tmp/rig-halves.img of 2147483648 bytes\n"
		"    $ losetup --find --show --direct-io=on /var/tmp/rig-halves.img\n"
		"    $ sgdisk --clear --set-alignment=2048 --disk-guid=72696721-",
		" --new=1:2048:2097151 --change-name=1:ext4 --typecode=1:8300 "
		"--new=2:2097152:4194270 --change-name=2:xfs --typecode=2:8300 /dev/loopN\n"
		"    $ partx --update /dev/loopN\n",
		"    $ mkfs.ext4 -F -q -L ext4 -E lazy_itable_init=0,lazy_journal_init=0 /dev/loopNp1\n"
		"    # mkdir RUN/mnt/ext4\n    $ mount -t ext4 /dev/loopNp1 RUN/mnt/ext4\n",
		"  teardown of layout xfs-first:\n    $ umount RUN/mnt/ext4\n    # rmdir RUN/mnt/ext4\n"
		"    $ umount RUN/mnt/xfs\n    # rmdir RUN/mnt/xfs\n    $ partx --delete /dev/loopN\n"
		"    $ losetup --detach /dev/loopN\n    # delete /var/tmp/rig-halves.img\n",
		/* the schedule is still there */
		"ext4-first  rep 2\n  seq    7-8     step 1              write      xfs ext4",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!out || !strstr(out, want[i]))
			fprintf(stderr, "\nrig plan lacks:\n%s\n", want[i]);
		CU_ASSERT_TRUE(out && strstr(out, want[i]));
	}
	free(out);
	/* A disk that does not exist here: placeholders and the reason. */
	char *tmp = test_tmpdir();
	sb_reset(&p);
	sb_addf(&p, "%s/disk.yaml", tmp);
	test_write_file(p.buf, "rig: 1\nname: d\ntarget:\n  disk: { device: /dev/sdzz, confirm: X }\n"
			       "layouts:\n  - name: l\n    partitions:\n      - { name: A, fs: ext4, size: rest }\n"
			       "steps:\n  - write: {}\n");
	const char *dargs[] = { "plan", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(dargs, &out), 0);
	CU_ASSERT_TRUE(out && strstr(out, "! on this machine rig would refuse /dev/sdzz: /dev/sdzz: "));
	CU_ASSERT_TRUE(out && strstr(out, "(rule exists)"));
	CU_ASSERT_TRUE(out && strstr(out, "$ sgdisk --zap-all /dev/sdzz\n"));
	CU_ASSERT_TRUE(out && strstr(out, "--new=1:START1:END1 --change-name=1:A"));
	CU_ASSERT_TRUE(out && strstr(out, "$ mount -t ext4 /dev/sdzz1 RUN/mnt/A"));
	free(out);
	/* A macOS plan on a machine without diskutil: the commands, with the
	 * sizes left to run time (tests/macos_run_test.c has them exact). */
	sb_reset(&p);
	sb_addf(&p, "%s/configs/hfs-apfs-halves.yaml", test_src());
	const char *margs[] = { "plan", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(margs, &out), 0);
	CU_ASSERT_TRUE(out && strstr(out, "provision with the macos backend"));
	CU_ASSERT_TRUE(out && strstr(out, "$ diskutil partitionDisk disk4 GPT APFS APFS S1B JHFS+ "
					  "HFS S2B 'Free Space' gap R\n"));
	free(out);
	/* Nothing was made: the image path stays free. */
	CU_ASSERT_NOT_EQUAL(access("/var/tmp/rig-halves.img", F_OK), 0);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&p);
}

static void test_run_options(void)
{
	char *out = NULL;
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/configs/quick.yaml", test_src());
	const char *a1[] = { "run", "--image-size", "512M", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a1, &out), 2);
	CU_ASSERT_TRUE(out && strstr(out, "--image-size applies to image targets only"));
	free(out);
	const char *a2[] = { "run", "--image-size", "1.5G", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a2, &out), 2);
	CU_ASSERT_TRUE(out && strstr(out, "--image-size takes a size"));
	free(out);
	const char *a3[] = { "run", "--allow", "root-disk", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(a3, &out), 2);
	CU_ASSERT_TRUE(out && strstr(out, "cannot allow 'root-disk'"));
	free(out);
	const char *a4[] = { "devices", NULL };
	CU_ASSERT_EQUAL(test_run_rig(a4, &out), 0);
	CU_ASSERT_TRUE(out && (strstr(out, "rig refuses it") || strstr(out, "rig may erase it")));
	free(out);
	sb_release(&p);
}

void register_provision_tests(void)
{
	CU_pSuite c = test_suite_e2e("provisioning: rig plan and options (no root)");
	test_add(c, "rig plan lists the backend's exact commands", test_plan_lists_commands);
	test_add(c, "--image-size, --allow, rig devices", test_run_options);

	CU_pSuite s = test_suite("provisioning image and disk targets (Linux, root)");
	if (!pt_require_provisioning(s, "loop devices, partitions, mkfs and mount"))
		return;
	test_add(s, "linux-ten-partitions: volumes, positions, byte ranges, sgdisk -p",
		 test_ten_partitions);
	test_add(s, "linux-fs-halves in both orders, reprovisioned", test_fs_halves);
	test_add(s, "huge-folder rehearsed: measured, packed into an image, measured", test_huge_folder);
	test_add(s, "repeat: provision: each: a mkfs per volume per repetition, volumes per "
		    "provisioning", test_provision_each);
	test_add(s, "cache.remount and btrfs", test_remount_btrfs);
	test_add(s, "a failing mkfs.xfs: partial layout undone, samples kept", test_fake_mkfs_fails);
	test_add(s, "SIGINT in the middle of a write", test_sigint_mid_write);
	test_add(s, "SIGINT/SIGTERM at any moment leave nothing behind", test_sigterm_any_moment);
	test_add(s, "ENOSPC fails the run and keeps samples", test_enospc);
	test_add(s, "images rig did not make, in use, not files", test_image_not_ours);
	test_add(s, "a loop device as a disk target: refusals, then a run", test_disk_target_on_loop);
}
