/*
 * A disk target reprovisioned from whatever it holds:
 * on one loop "disk", the ten-partition plan, then the halves plan, then
 * the ten-partition plan again, then a foreign MBR table of four
 * partitions made by sfdisk followed by the halves plan. Each run must
 * complete. Before rig deleted the kernel's stale partitions first, the
 * halves after the ten failed: "partition /dev/loopNp1 did not appear
 * within 10 s after partx --update".
 *
 * The plans are configs/linux-ten-partitions.yaml and linux-fs-halves.yaml
 * scaled down (one 1 MiB file, one repetition). Needs root, the
 * provisioning tools and sfdisk; about 20 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/linux/linux.h"
#include "provision_util.h"
#include "test.h"

struct disk {
	char *tmp;
	struct strbuf img, confirm;
	char *loop;          /* /dev/loopN, ours */
};

static int disk_open(struct disk *k)
{
	memset(k, 0, sizeof(*k));
	k->tmp = test_tmpdir();
	sb_init(&k->img);
	sb_init(&k->confirm);
	sb_addf(&k->img, "%s/disk.img", k->tmp);
	/* xfs needs 300 MB: halves of 700M are 349 MiB */
	const char *mk[] = { "truncate", "-s", "700M", k->img.buf, NULL };
	if (pt_cmd(mk, NULL) != 0)
		return -1;
	const char *lo[] = { "losetup", "--find", "--show", k->img.buf, NULL };
	char *out = NULL;
	if (pt_cmd(lo, &out) != 0 || !out || strncmp(out, "/dev/loop", 9)) {
		free(out);
		return -1;
	}
	out[strcspn(out, "\n")] = '\0';
	k->loop = out;
	return 0;
}

static void disk_close(struct disk *k)
{
	if (k->loop) {
		/* rig keeps a disk's partitions; this test made the device, it removes them */
		if (prov_linux_partition_count("", strrchr(k->loop, '/') + 1)) {
			const char *px[] = { "partx", "--delete", k->loop, NULL };
			pt_cmd(px, NULL);
		}
		const char *det[] = { "losetup", "--detach", k->loop, NULL };
		char *out = NULL;
		int rc = pt_cmd(det, &out);
		if (rc != 0)
			fprintf(stderr, "\nlosetup --detach %s: %s\n", k->loop, out ? out : "");
		CU_ASSERT_EQUAL(rc, 0);
		free(out);
		free(k->loop);
	}
	/* and nothing of rig's runs: mounts, loop devices over images here */
	struct strbuf what = STRBUF_INIT;
	int n = pt_leftovers(k->tmp, &what);
	if (n)
		fprintf(stderr, "\nleft behind:\n%s", what.buf);
	CU_ASSERT_EQUAL(n, 0);
	sb_release(&what);
	test_rmtree(k->tmp);
	free(k->tmp);
	sb_release(&k->img);
	sb_release(&k->confirm);
}

/* rig run of a config on the disk, with pairs[] replaced (the first pair's
 * replacement is made here: the image line becomes this disk); its exit
 * status. */
static int run(struct disk *k, const char *config, const char **pairs, const char *name)
{
	struct strbuf target = STRBUF_INIT, plan = STRBUF_INIT, out = STRBUF_INIT;
	sb_addf(&target, "disk: { device: %s, confirm: \"%s\" }", k->loop, k->img.buf);
	pairs[1] = target.buf;
	char *text = pt_config(config, pairs);
	int rc = -1;
	if (text) {
		sb_addf(&plan, "%s/%s.yaml", k->tmp, name);
		sb_addf(&out, "%s/%s", k->tmp, name);
		test_write_file(plan.buf, text);
		const char *args[] = { "run", "-q", "--yes", "--allow", "loop", "-o", out.buf,
				       plan.buf, NULL };
		char *o = NULL;
		rc = test_run_rig(args, &o);
		if (rc != 0)
			fprintf(stderr, "\nrig run %s exited %d:\n%s\n", name, rc, o);
		free(o);
		free(text);
	}
	sb_release(&target);
	sb_release(&plan);
	sb_release(&out);
	return rc;
}

/* The plans scaled down: one small file, one repetition, no random I/O:
 * the layouts are what is tested. */
static int run_ten(struct disk *k, const char *name)
{
	const char *pairs[] = {
		"image: { path: /var/tmp/rig-ten.img, size: 4G }", NULL,
		"repeat: 10", "repeat: 1",
		"write: { files: 4, sizes: 4M..64M }", "write: { files: 1, size: 1M }",
		NULL, NULL,
	};
	return run(k, "linux-ten-partitions", pairs, name);
}

static int run_halves(struct disk *k, const char *name)
{
	const char *pairs[] = {
		"image: { path: /var/tmp/rig-halves.img, size: 2G }", NULL,
		"repeat: { times: 4, provision: each }", "repeat: 1",
		"write: { files: 8, sizes: 1M..64M }", "write: { files: 1, size: 1M }",
		"  - randread: { block: 4K, qd: 32, span: 256M, time: 3s }\n", "",
		NULL, NULL,
	};
	return run(k, "linux-fs-halves", pairs, name);
}

static int nparts(const struct disk *k)
{
	return prov_linux_partition_count("", strrchr(k->loop, '/') + 1);
}

static void test_plans_in_turn(void)
{
	struct disk k;
	if (disk_open(&k) < 0) {
		CU_FAIL("cannot make the loop disk");
		disk_close(&k);
		return;
	}
	CU_ASSERT_EQUAL(run_ten(&k, "ten"), 0);
	CU_ASSERT_EQUAL(nparts(&k), 10);
	CU_ASSERT_EQUAL(run_halves(&k, "halves"), 0);
	CU_ASSERT_EQUAL(nparts(&k), 2);
	CU_ASSERT_EQUAL(run_ten(&k, "ten-again"), 0);
	CU_ASSERT_EQUAL(nparts(&k), 10);
	disk_close(&k);
}

/* sfdisk DEV < script (rig's spawner gives children /dev/null as input). */
static int sfdisk(const char *dev, const char *script)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(script, O_RDONLY);
		int null = open("/dev/null", O_WRONLY);
		if (fd < 0 || null < 0)
			_exit(126);
		dup2(fd, 0);
		dup2(null, 1);
		dup2(null, 2);
		execlp("sfdisk", "sfdisk", "-q", "--no-reread", dev, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_foreign_mbr(void)
{
	struct disk k;
	if (disk_open(&k) < 0) {
		CU_FAIL("cannot make the loop disk");
		disk_close(&k);
		return;
	}
	/* four partitions in a DOS table, made by another tool, known to the kernel */
	struct strbuf script = STRBUF_INIT;
	sb_addf(&script, "%s/mbr.sfdisk", k.tmp);
	test_write_file(script.buf, "label: dos\n,100M\n,100M\n,100M\n,\n");
	int rc = sfdisk(k.loop, script.buf);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	const char *px[] = { "partx", "--update", k.loop, NULL };
	pt_cmd(px, NULL);
	CU_ASSERT_EQUAL(nparts(&k), 4);
	CU_ASSERT_EQUAL(run_halves(&k, "halves"), 0);
	CU_ASSERT_EQUAL(nparts(&k), 2);
	sb_release(&script);
	disk_close(&k);
}

static int have_sfdisk(void)
{
	return access("/usr/sbin/sfdisk", X_OK) == 0 || access("/sbin/sfdisk", X_OK) == 0 ||
	       access("/usr/bin/sfdisk", X_OK) == 0;
}

void register_reprovision_tests(void)
{
	CU_pSuite s = test_suite("reprovision a disk from any state");
	if (!pt_require_provisioning(s, "loop devices"))
		return;
	test_add(s, "ten partitions, halves, ten again", test_plans_in_turn);
	if (have_sfdisk())
		test_add(s, "a foreign MBR table of four partitions", test_foreign_mbr);
	else
		printf("SKIPPED test 'a foreign MBR table of four partitions': no sfdisk (./setup)\n");
}
