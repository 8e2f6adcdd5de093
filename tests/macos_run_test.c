/*
 * End-to-end tests of the macOS backend (provision/macos/macos.c) on Linux: `rig
 * run --platform macos` and `rig plan --platform macos` with the fake
 * diskutil and hdiutil of tests/tools/fake-macos/ first on PATH. The fake keeps
 * the state of a fake disk (partitionDisk then list shows the new layout),
 * mounts volumes as folders under its state folder (so the modules really
 * run), logs every call, and injects faults. Each test asserts the exact
 * sequence of commands, the volume mapping stored in results.db, and that
 * nothing rig attached or mounted is left in the fake's state.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "macos_fx.h"
#include "provision_util.h"
#include "test.h"

static int run_plan(struct fx *x, const char *text, char **out)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL_FATAL(test_write_file(x->plan, text), 0);
	const char *args[] = { "run", "--platform", "macos", "--yes", "-q", "-o", x->run, x->plan, NULL };
	return pt_rig(x->bin, args, out);
}

static char *volumes(struct fx *x)
{
	return pt_run_query(x->run, "SELECT group_concat(layout || ':' || name || ':' || position || "
				    "':' || offset_start || ':' || offset_end || ':' || device, ' ') "
				    "FROM (SELECT * FROM volumes ORDER BY id)");
}

#define SAFETY_READS                                                             \
	"diskutil info -plist /\n"                                               \
	"diskutil info -plist disk0s2\n"                                         \
	"diskutil list -plist\n"                                                 \
	"diskutil apfs list -plist\n"                                            \
	"diskutil info -plist disk4\n"

static void test_halves(void)
{
	struct fx x;
	fx_init(&x, 0);
	static const char *const pairs[] = { "files: 160, sizes: 2M..2G, block: 1M",
					     "files: 2, sizes: 64K..128K, block: 64K", NULL };
	char *text = pt_config("hfs-apfs-halves", pairs), *out = NULL;
	int rc = run_plan(&x, text, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *calls = calls_from(&x, NULL);
	check_eq_text("halves: the commands", calls,
		/* prepare: the safety rules on facts read afresh */
		SAFETY_READS
		/* layout apfs-first: the rules again, the size, partition, re-read, map */
		SAFETY_READS
		"diskutil info -plist disk4\n"
		"diskutil partitionDisk disk4 GPT APFS APFS 1000092991488B JHFS+ HFS "
		"1000094040064B 'Free Space' gap R\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\n"
		"diskutil info -plist disk5s1\n"
		"diskutil info -plist disk4s3\n"
		"diskutil unmountDisk disk4\n"
		/* layout hfs-first: the order reversed, the same sizes */
		SAFETY_READS
		"diskutil info -plist disk4\n"
		"diskutil partitionDisk disk4 GPT JHFS+ HFS 1000092991488B APFS APFS "
		"1000094040064B 'Free Space' gap R\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\n"
		"diskutil info -plist disk4s3\n"
		"diskutil info -plist disk6s1\n"
		"diskutil unmountDisk disk4\n");
	char *v = volumes(&x);
	check_eq_text("halves: the volume mapping", v,
		      "apfs-first:APFS:1:210763776:1000303755264:/dev/disk5s1 "
		      "apfs-first:HFS:2:1000303755264:2000397795328:/dev/disk4s3 "
		      "hfs-first:HFS:1:210763776:1000303755264:/dev/disk4s2 "
		      "hfs-first:APFS:2:1000303755264:2000397795328:/dev/disk6s1");
	/* the modules ran in their work folder in the volumes' mount points */
	char *dir = pt_run_query(x.run, "SELECT dir FROM volumes WHERE layout = 'hfs-first' AND "
					"name = 'APFS'");
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "%s/Volumes/APFS/rig-run", x.state);
	check_eq_text("halves: work folder", dir, want.buf);
	char *cells = pt_run_query(x.run, "SELECT count(*) FROM cells WHERE status = 'done'");
	check_eq_text("halves: cells measured", cells, "8");
	char *facts = pt_run_query(x.run, "SELECT facts_json FROM volumes WHERE name = 'HFS' "
					  "AND layout = 'apfs-first'");
	/* One schema with Linux's (vol_facts.h): a hard disk is rotational. */
	check_has("halves: facts", facts, "\"model\":\"WDC WD20SPZX-22UA7T0\","
		  "\"serial\":null,\"bus\":\"USB\",\"rotational\":true,\"internal\":false,"
		  "\"sector_size\":512,");
	check_has("halves: file system", facts, "\"fs\":\"hfs+\",\"format_command\":null,"
		  "\"fs_personality\":\"Journaled HFS+\",\"fs_type\":\"hfs\"");
	check_has("halves: mount options", facts, "\"mount_options\":\"r");
	/* the run says that it did not measure macOS */
	char *warn = pt_run_query(x.run, "SELECT msg FROM events WHERE level = 'warning'");
	check_has("halves: warning", warn, "the macOS backend runs on linux here");
	free(warn);
	check_clean(&x);
	free(facts);
	free(cells);
	free(dir);
	sb_release(&want);
	free(v);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

static void test_ten_containers(void)
{
	struct fx x;
	fx_init(&x, 0);
	static const char *const pairs[] = { "repeat: 10", "repeat: 1\ncache: { flush: false }",
					     "files: 20, sizes: 2M..2G", "files: 1, sizes: 64K", NULL };
	char *text = pt_config("ten-containers", pairs), *out = NULL;
	static const char *const ten = "ST2000LM007-1R8174";
	/* ten-containers.yaml confirms with its own disk's model */
	ctl(&x, "add-disk", "disk4", "2000398934016", ten, "external", "rotational", "USB");
	int rc = run_plan(&x, text, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *calls = calls_from(&x, "diskutil partitionDisk");
	check_eq_text("ten: the commands", calls,
		"diskutil partitionDisk disk4 GPT APFS C1 200017969152B APFS C2 200017969152B "
		"APFS C3 200017969152B APFS C4 200017969152B APFS C5 200017969152B APFS C6 "
		"200017969152B APFS C7 200017969152B APFS C8 200017969152B APFS C9 200017969152B "
		"APFS C10 200017969152B 'Free Space' gap R\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\ndiskutil info -plist disk5s1\n"
		"diskutil info -plist disk4s3\ndiskutil info -plist disk6s1\n"
		"diskutil info -plist disk4s4\ndiskutil info -plist disk7s1\n"
		"diskutil info -plist disk4s5\ndiskutil info -plist disk8s1\n"
		"diskutil info -plist disk4s6\ndiskutil info -plist disk9s1\n"
		"diskutil info -plist disk4s7\ndiskutil info -plist disk10s1\n"
		"diskutil info -plist disk4s8\ndiskutil info -plist disk11s1\n"
		"diskutil info -plist disk4s9\ndiskutil info -plist disk12s1\n"
		"diskutil info -plist disk4s10\ndiskutil info -plist disk13s1\n"
		"diskutil info -plist disk4s11\ndiskutil info -plist disk14s1\n"
		"diskutil unmountDisk disk4\n");
	char *v = volumes(&x);
	check_eq_text("ten: the volume mapping", v,
		      "tenths:C1:1:210763776:200228732928:/dev/disk5s1 "
		      "tenths:C2:2:200228732928:400246702080:/dev/disk6s1 "
		      "tenths:C3:3:400246702080:600264671232:/dev/disk7s1 "
		      "tenths:C4:4:600264671232:800282640384:/dev/disk8s1 "
		      "tenths:C5:5:800282640384:1000300609536:/dev/disk9s1 "
		      "tenths:C6:6:1000300609536:1200318578688:/dev/disk10s1 "
		      "tenths:C7:7:1200318578688:1400336547840:/dev/disk11s1 "
		      "tenths:C8:8:1400336547840:1600354516992:/dev/disk12s1 "
		      "tenths:C9:9:1600354516992:1800372486144:/dev/disk13s1 "
		      "tenths:C10:10:1800372486144:2000390455296:/dev/disk14s1");
	char *cont = pt_run_query(x.run, "SELECT count(DISTINCT json_extract(facts_json, "
					 "'$.container')) FROM volumes");
	check_eq_text("ten: ten containers", cont, "10");
	char *cells = pt_run_query(x.run, "SELECT count(*) FROM cells WHERE status = 'done'");
	check_eq_text("ten: cells measured", cells, "20");
	check_clean(&x);
	free(cells);
	free(cont);
	free(v);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

/* An image target: two volumes, remount before read, detach busy twice. */
static char *image_plan_in(const char *dir, const char *extra)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "rig: 1\nname: image-ab\nseed: 1\ntarget:\n  image: { path: %s/rig-test, "
		     "size: 2G }\nlayouts:\n  - name: ab\n    partitions:\n"
		     "      - { name: A, fs: apfs, size: 50%% }\n"
		     "      - { name: B, fs: exfat, size: rest }\n"
		     "cache: { flush: false, remount: true }\n%s"
		     "steps:\n  - write: { files: 1, size: 64K }\n  - read: {}\n", dir, extra);
	return sb_detach(&sb);
}

static char *image_plan(struct fx *x, const char *extra)
{
	return image_plan_in(x->dir, extra);
}

static void test_image_busy_detach(void)
{
	struct fx x;
	fx_init(&x, 1);
	ctl(&x, "fault", "detach-busy", "2", NULL, NULL, NULL, NULL);
	char *text = image_plan(&x, ""), *out = NULL;
	int rc = run_plan(&x, text, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *calls = calls_from(&x, NULL);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want,
		"hdiutil create -sectors 4194304 -layout NONE -type UDIF %s/rig-test\n"
		"hdiutil attach -nomount -plist %s/rig-test.dmg\n"
		"diskutil info -plist disk2\n"
		/* identity: disk2 is still the image's, right before it is partitioned */
		"hdiutil info -plist\n"
		"diskutil partitionDisk disk2 GPT APFS A 967835648B ExFAT B 967835648B "
		"'Free Space' gap R\n"
		"diskutil list -plist disk2\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk2s2\n"
		"diskutil info -plist disk3s1\n"
		"diskutil info -plist disk2s3\n"
		/* cache.remount before the read step, each volume */
		"diskutil unmount disk3s1\ndiskutil mount disk3s1\ndiskutil info -plist disk3s1\n"
		"diskutil unmount disk2s3\ndiskutil mount disk2s3\ndiskutil info -plist disk2s3\n"
		/* busy twice, then detached without -force */
		"hdiutil detach disk2\nhdiutil detach disk2\nhdiutil detach disk2\n"
		/* and checked: nothing attached any more */
		"hdiutil info -plist\n",
		x.dir, x.dir);
	check_eq_text("image: the commands", calls, want.buf);
	char *v = volumes(&x);
	check_eq_text("image: the volume mapping", v,
		      "ab:A:1:210763776:1178599424:/dev/disk3s1 "
		      "ab:B:2:1178599424:2146435072:/dev/disk2s3");
	char *facts = pt_run_query(x.run, "SELECT facts_json FROM volumes WHERE name = 'B'");
	sb_reset(&want);
	sb_addf(&want, "\"image\":\"%s/rig-test.dmg\"", x.dir);
	CU_ASSERT(facts && strstr(facts, want.buf));
	CU_ASSERT(facts && strstr(facts, "\"fs_personality\":\"ExFAT\""));
	sb_reset(&want);
	sb_addf(&want, "%s/rig-test.dmg", x.dir);
	CU_ASSERT_NOT_EQUAL(access(want.buf, F_OK), 0); /* removed: keep is false */
	check_clean(&x);
	free(facts);
	free(v);
	sb_release(&want);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

static void test_detach_force(void)
{
	struct fx x;
	fx_init(&x, 1);
	ctl(&x, "fault", "detach-busy", "9", NULL, NULL, NULL, NULL);
	char *text = image_plan(&x, ""), *out = NULL;
	CU_ASSERT_EQUAL(run_plan(&x, text, &out), 0);
	char *calls = calls_from(&x, "hdiutil detach");
	check_eq_text("busy: the detaches", calls,
		      "hdiutil detach disk2\nhdiutil detach disk2\nhdiutil detach disk2\n"
		      "hdiutil detach disk2 -force\nhdiutil info -plist\n");
	char *warn = pt_run_query(x.run, "SELECT group_concat(msg, '|') FROM events WHERE "
					 "level = 'warning'");
	CU_ASSERT(warn && strstr(warn, "disk2 stayed busy; it was detached with "
						    "-force (hdiutil detach disk2 failed with exit "
						    "status 16:"));
	check_clean(&x);
	free(warn);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

/* Case-sensitive APFS and HFS+: partitionDisk is given the personalities by
 * their exact names, and the volumes' facts say what was made. */
static void test_case_sensitive(void)
{
	struct fx x;
	fx_init(&x, 1);
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "rig: 1\nname: cs\nseed: 1\ntarget:\n  image: { path: %s/cs.dmg, size: 2G }\n"
		     "layouts:\n  - name: one\n    partitions:\n"
		     "      - { name: X, fs: apfsx, size: 50%% }\n"
		     "      - { name: H, fs: jhfsx, size: rest }\n"
		     "cache: { flush: false }\nsteps:\n  - write: { files: 1, size: 64K }\n", x.dir);
	char *out = NULL;
	int rc = run_plan(&x, sb.buf, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *calls = calls_from(&x, "diskutil partitionDisk");
	check_has("case-sensitive: partitionDisk", calls,
		  "diskutil partitionDisk disk2 GPT 'Case-sensitive APFS' X ");
	check_has("case-sensitive: partitionDisk", calls, " 'Case-sensitive Journaled HFS+' H ");
	char *facts = pt_run_query(x.run, "SELECT group_concat(json_extract(facts_json,"
					  " '$.fs_personality'), '|') FROM volumes ORDER BY position");
	check_eq_text("case-sensitive: personalities", facts,
		      "Case-sensitive APFS|Case-sensitive Journaled HFS+");
	check_clean(&x);
	free(facts);
	free(calls);
	free(out);
	sb_release(&sb);
	fx_done(&x);
}

/* FAT32: diskutil gives it a label in capitals; the volume keeps the plan's name. */
static void test_fat32(void)
{
	struct fx x;
	fx_init(&x, 1);
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "rig: 1\nname: fat\nseed: 1\ntarget:\n  image: { path: %s/fat.dmg, size: 1G }\n"
		     "layouts:\n  - name: one\n    partitions:\n"
		     "      - { name: Data, fs: fat32, size: rest }\n"
		     "cache: { flush: false }\nsteps:\n  - write: { files: 1, size: 64K }\n", x.dir);
	char *out = NULL;
	int rc = run_plan(&x, sb.buf, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *calls = calls_from(&x, "diskutil partitionDisk");
	check_eq_text("fat32: the commands", calls,
		      "diskutil partitionDisk disk2 GPT 'MS-DOS FAT32' Data 861929472B 'Free Space' gap R\n"
		      "diskutil list -plist disk2\ndiskutil apfs list -plist\n"
		      "diskutil info -plist disk2s2\nhdiutil detach disk2\nhdiutil info -plist\n");
	char *v = volumes(&x);
	check_eq_text("fat32: the volume", v, "one:Data:1:210763776:1072693248:/dev/disk2s2");
	char *facts = pt_run_query(x.run, "SELECT facts_json FROM volumes");
	check_has("fat32: facts", facts, "\"fs_personality\":\"MS-DOS FAT32\",\"fs_type\":\"msdos\"");
	check_clean(&x);
	free(facts);
	free(v);
	free(calls);
	free(out);
	sb_release(&sb);
	fx_done(&x);
}

/* An image file that is attached already is never touched. */
static void test_image_attached(void)
{
	struct fx x;
	fx_init(&x, 1);
	struct strbuf img = STRBUF_INIT, tool = STRBUF_INIT;
	sb_addf(&img, "%s/rig-test.dmg", x.dir);
	sb_addf(&tool, "%s/hdiutil", x.bin);
	CU_ASSERT_EQUAL(test_write_file(img.buf, "not a real image"), 0);
	const char *attach[] = { tool.buf, "attach", "-nomount", img.buf, NULL };
	CU_ASSERT_EQUAL(pt_cmd(attach, NULL), 0);
	char *text = image_plan(&x, ""), *out = NULL;
	const char *args[] = { "run", "--platform", "macos", "--force", "-q", "-o", x.run, x.plan,
			       NULL };
	CU_ASSERT_EQUAL_FATAL(test_write_file(x.plan, text), 0);
	CU_ASSERT_EQUAL(pt_rig(x.bin, args, &out), 2); /* refused when prepared */
	CU_ASSERT_NOT_EQUAL(access(x.run, F_OK), 0);   /* and no run folder left */
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "image %s is attached as disk2; detach it first (hdiutil detach disk2)",
		img.buf);
	check_has("attached image: the refusal", out, want.buf);
	char *calls = calls_from(&x, "hdiutil info");
	check_eq_text("attached image: reads only", calls, "hdiutil info -plist\n");
	free(calls);
	free(out);
	free(text);
	/* The plan's path through a symlinked folder (a Mac's /var/tmp is
	 * /private/var/tmp), hdiutil's the resolved one: the same image,
	 * refused the same way even with --force. */
	struct strbuf via = STRBUF_INIT, through = STRBUF_INIT;
	sb_addf(&via, "%s/via", x.dir);
	CU_ASSERT_EQUAL(symlink(x.dir, via.buf), 0);
	sb_addf(&through, "%s/rig-test.dmg", via.buf);
	text = image_plan_in(via.buf, "");
	CU_ASSERT_EQUAL_FATAL(test_write_file(x.plan, text), 0);
	sb_reset(&want);
	sb_addf(&want, "image %s is attached as disk2; detach it first", through.buf);
	const char *plain[] = { "run", "--platform", "macos", "-q", "-o", x.run, x.plan, NULL };
	for (int force = 0; force < 2; force++) {
		out = NULL;
		CU_ASSERT_EQUAL(pt_rig(x.bin, force ? args : plain, &out), 2);
		CU_ASSERT_NOT_EQUAL(access(x.run, F_OK), 0);
		check_has("attached image through a symlink: the refusal", out, want.buf);
		free(out);
	}
	calls = calls_from(&x, NULL);
	CU_ASSERT_PTR_NULL(calls ? strstr(calls, "hdiutil create") : "no log");
	free(calls);
	out = NULL;
	char *left = test_read_file(img.buf, NULL);
	check_eq_text("attached image: untouched", left, "not a real image");
	free(left);
	sb_release(&via);
	sb_release(&through);
	sb_release(&want);
	free(out);
	free(text);
	sb_release(&img);
	sb_release(&tool);
	fx_done(&x);
}

static void test_partition_fails(void)
{
	struct fx x;
	fx_init(&x, 0);
	ctl(&x, "fault", "partitionDisk-69888", "1", NULL, NULL, NULL, NULL);
	static const char *const pairs[] = { "files: 160, sizes: 2M..2G, block: 1M",
					     "files: 1, sizes: 64K..128K, block: 64K", NULL };
	char *text = pt_config("hfs-apfs-halves", pairs), *out = NULL;
	CU_ASSERT_EQUAL(run_plan(&x, text, &out), 1);
	/* what diskutil said, with the command that failed, then its output */
	check_has("partitionDisk fails: the message", out,
		  "rig run: cannot provision layout apfs-first: diskutil partitionDisk "
		  "disk4 GPT APFS APFS 1000092991488B JHFS+ HFS 1000094040064B "
		  "'Free Space' gap R: error -69888: Couldn't unmount disk; diskutil "
		  "partitionDisk disk4 GPT APFS APFS 1000092991488B JHFS+ HFS "
		  "1000094040064B 'Free Space' gap R failed with exit status 1:\n"
		  "  Started partitioning on disk4\n  Unmounting disk\n"
		  "  Error: -69888: Couldn't unmount disk\n");
	/* cleanup attempted: the disk is unmounted; nothing else ran */
	char *calls = calls_from(&x, "diskutil partitionDisk");
	check_eq_text("partitionDisk fails: after it", calls,
		      "diskutil partitionDisk disk4 GPT APFS APFS 1000092991488B JHFS+ HFS "
		      "1000094040064B 'Free Space' gap R\n"
		      "diskutil unmountDisk disk4\n");
	check_clean(&x);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

static void test_info_fails(void)
{
	struct fx x;
	fx_init(&x, 1);
	ctl(&x, "fault", "info-error", "1", "disk2", NULL, NULL, NULL);
	char *text = image_plan(&x, ""), *out = NULL;
	CU_ASSERT_EQUAL(run_plan(&x, text, &out), 1);
	check_has("info fails: the message", out,
		  "rig run: cannot provision layout ab: diskutil info -plist disk2: "
		  "Could not find disk: disk2; diskutil info -plist disk2 failed with "
		  "exit status 1:");
	char *calls = calls_from(&x, "diskutil info -plist disk2");
	check_eq_text("info fails: after it", calls,
		      "diskutil info -plist disk2\nhdiutil detach disk2\nhdiutil info -plist\n");
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/rig-test.dmg", x.dir);
	CU_ASSERT_NOT_EQUAL(access(p.buf, F_OK), 0); /* the image rig made is gone */
	check_clean(&x);
	sb_release(&p);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

static void test_refused(void)
{
	struct fx x;
	fx_init(&x, 1);
	ctl(&x, "add-disk", "disk4", "2000398934016", "WDC WD20SPZX-22UA7T0", "internal",
	    "rotational", "SATA");
	static const char *const pairs[] = { "files: 160", "files: 1", NULL };
	char *text = pt_config("hfs-apfs-halves", pairs), *out = NULL;
	CU_ASSERT_EQUAL(run_plan(&x, text, &out), 2);
	CU_ASSERT(out && strstr(out, "cannot prepare the target: refusing to erase "
						  "disk4: disk4 is an internal disk (rule internal: "
						  "an external disk (--allow internal))"));
	CU_ASSERT_NOT_EQUAL(access(x.run, F_OK), 0); /* nothing to resume: no run folder */
	char *calls = calls_from(&x, NULL);
	check_eq_text("refused: reads only", calls, SAFETY_READS);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

/* rig plan --platform macos: every config that targets macOS, its commands. */
static void test_plan_configs(void)
{
	struct fx x;
	fx_init(&x, 0);
	ctl(&x, "add-disk", "disk6", "2000398934016", "WDC WD20EFRX-68EUZN0", "external",
	    "rotational", "USB");
	static const struct {
		const char *config, *want[3];
	} plans[] = {
		{ "hfs-apfs-halves", {
			"$ diskutil partitionDisk disk4 GPT APFS APFS 1000092991488B JHFS+ HFS "
			"1000094040064B 'Free Space' gap R\n",
			"$ diskutil partitionDisk disk4 GPT JHFS+ HFS 1000092991488B APFS APFS "
			"1000094040064B 'Free Space' gap R\n",
			"# on this machine disk4 passes every safety rule" } },
		{ "ten-containers", {
			"APFS C9 200017969152B APFS C10 200017969152B 'Free Space' gap R\n",
			"$ diskutil apfs list -plist\n",
			"! on this machine rig would refuse disk4: confirm \"ST2000LM007-1R8174\" is "
			"neither the model (WDC WD20SPZX-22UA7T0)" } },
		{ "enumeration-churn", {
			"$ diskutil partitionDisk disk6 GPT JHFS+ HFS 1000092991488B APFS APFS "
			"1000094040064B 'Free Space' gap R\n",
			"$ diskutil unmountDisk disk6\n", NULL } },
		{ "fill-levels", {
			"$ diskutil partitionDisk disk4 GPT 'Case-sensitive Journaled HFS+' Share "
			"260000000000B 'Free Space' gap R\n",
			"$ diskutil partitionDisk disk4 GPT JHFS+ Share 260000000000B 'Free Space' gap R\n",
			NULL } },
		{ "fill-levels-image", {
			"$ hdiutil create -sectors 83886080 -layout NONE -type UDIF /var/tmp/rig-fill.dmg\n"
			"    $ hdiutil attach -nomount -plist /var/tmp/rig-fill.dmg\n"
			"    $ diskutil info -plist diskN\n"
			"    $ diskutil partitionDisk diskN GPT 'Case-sensitive Journaled HFS+' Share "
			"42737860608B 'Free Space' gap R\n",
			"$ hdiutil detach diskN\n    # delete /var/tmp/rig-fill.dmg\n",
			"$ diskutil partitionDisk diskN GPT JHFS+ Share 42737860608B 'Free Space' gap R\n" } },
		{ "huge-folder", {
			"$ diskutil partitionDisk disk4 GPT JHFS+ work 260000000000B 'Free Space' gap R\n",
			"  seq 5          step 5              pack       work\n"
			"    $ hdiutil create -srcfolder /Volumes/work/rig-RUN/tree -format UDRW -fs HFS+ "
			"-volname rig-pack -ov /Volumes/work/rig-RUN/rig-pack.dmg\n"
			"    $ hdiutil resize -size 4194304b /Volumes/work/rig-RUN/rig-pack.dmg\n",
			NULL } },
		{ "apfs-grown-halves", {
			"    $ diskutil apfs resizeContainer disk4s2 limits -plist\n"
			"    $ diskutil info -plist disk4\n"
			"    # keep disk4s2 (apfs 'APFS') of layout apfs-whole: not a fresh file "
			"system; its data stays, and it is resized to 1000092991488B\n"
			"    $ diskutil apfs resizeContainer disk4s2 1000092991488B JHFS+ HFS "
			"1000094040064B 'Free Space' gap R\n",
			"$ diskutil info -plist disk4\n"
			"    # keep disk4s2 (hfs+ 'HFS') of layout hfs-whole: not a fresh file system; "
			"its data stays, and it is resized to 1000092991488B\n"
			"    $ diskutil resizeVolume disk4s2 1000092991488B APFS APFS 1000094040064B "
			"'Free Space' gap R\n",
			"1:HFS hfs+ 50% kept (resized, not made), 2:APFS apfs rest" } },
	};
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/configs/%s.yaml", test_src(), plans[i].config);
		const char *args[] = { "plan", "--platform", "macos", p.buf, NULL };
		char *out = NULL;
		CU_ASSERT_EQUAL(pt_rig(x.bin, args, &out), 0);
		for (size_t k = 0; k < 3 && plans[i].want[k]; k++)
			check_has(plans[i].config, out, plans[i].want[k]);
		free(out);
		sb_release(&p);
	}
	/* rig plan ran nothing that changes: reads only */
	char *calls = calls_from(&x, NULL);
	CU_ASSERT_PTR_NOT_NULL(calls);
	CU_ASSERT_PTR_NULL(calls ? strstr(calls, "partitionDisk") : NULL);
	CU_ASSERT_PTR_NULL(calls ? strstr(calls, "resize") : NULL);
	CU_ASSERT_PTR_NULL(calls ? strstr(calls, "hdiutil") : NULL);
	free(calls);
	check_clean(&x);
	fx_done(&x);
}

/*
 * Fault injection (RIG_FAULT, platform/fault.h) on the macOS backend: every
 * command of the halves plan (a disk target, two layouts) and of an image
 * plan (remount between steps) failing once. Each must end the run with an
 * error naming the command and its output, tear down what was built, and
 * leave nothing mounted or attached in the fake's state (check_clean), the
 * image file deleted, and the faked command once in rig's command log with
 * its injected output. Signals before and after chosen commands: the run
 * is interrupted and torn down alike.
 */
struct mac_fault {
	const char *plan;     /* "halves" or "image" */
	const char *rule;
	const char *names;    /* how the error names the failed command; NULL: a signal rule */
	const char *status;   /* the run's */
};

static void test_every_command_fails_once(void)
{
	static const struct mac_fault rows[] = {
		/* the halves: prepare's reads, then per layout the rules again, the
		 * identity read, partitionDisk, the re-reads, the volumes, unmountDisk */
		{ "halves", "spawn:diskutil info:1", "diskutil info -plist /", NULL },
		{ "halves", "spawn:diskutil list:1", "the volumes of the disks cannot be told: "
						     "diskutil list -plist", NULL },
		{ "halves", "spawn:diskutil apfs list:1", "the volumes of the disks cannot be told: "
							  "diskutil apfs list -plist", NULL },
		{ "halves", "spawn:diskutil info -plist disk4:1", "diskutil info -plist disk4", NULL },
		{ "halves", "spawn:diskutil info -plist disk4:3", "diskutil info -plist disk4", "failed" },
		{ "halves", "spawn:diskutil partitionDisk:1", "diskutil partitionDisk disk4 GPT APFS APFS",
		  "failed" },
		{ "halves", "spawn:diskutil partitionDisk:2", "diskutil partitionDisk disk4 GPT JHFS+ HFS",
		  "failed" },
		{ "halves", "spawn:diskutil list -plist disk4:1", "diskutil list -plist disk4", "failed" },
		{ "halves", "spawn:diskutil apfs list:3", "diskutil apfs list -plist", "failed" },
		{ "halves", "spawn:diskutil info -plist disk4s2:1", "diskutil info -plist disk4s2",
		  "failed" },
		{ "halves", "spawn:diskutil info -plist disk5s1:1", "diskutil info -plist disk5s1",
		  "failed" },
		{ "halves", "spawn:diskutil unmountDisk:1", "diskutil unmountDisk disk4", "failed" },
		/* the image: create, attach, the size and identity reads, partitionDisk,
		 * the re-reads, the volumes, remount, detach and its check */
		{ "image", "spawn:hdiutil create:1", "hdiutil create -sectors 4194304", "failed" },
		{ "image", "spawn:hdiutil attach:1", "hdiutil attach -nomount -plist", "failed" },
		{ "image", "spawn:diskutil info -plist disk2:1", "diskutil info -plist disk2", "failed" },
		{ "image", "spawn:hdiutil info:1", "hdiutil info -plist", "failed" },
		{ "image", "spawn:diskutil partitionDisk:1", "diskutil partitionDisk disk2 GPT APFS A",
		  "failed" },
		{ "image", "spawn:diskutil list:1", "diskutil list -plist disk2", "failed" },
		{ "image", "spawn:diskutil apfs list:1", "diskutil apfs list -plist", "failed" },
		{ "image", "spawn:diskutil info -plist disk3s1:1", "diskutil info -plist disk3s1",
		  "failed" },
		{ "image", "spawn:diskutil unmount:1", "diskutil unmount disk3s1", "failed" },
		{ "image", "spawn:diskutil mount:1", "diskutil mount disk3s1", "failed" },
		{ "image", "spawn:hdiutil detach:1", "hdiutil detach disk2", "failed" },
		{ "image", "spawn:hdiutil info:2", "hdiutil info -plist", "failed" },
		/* signals at commands: interrupted, torn down alike */
		{ "halves", "signal:SIGINT:before-spawn:diskutil partitionDisk:1", NULL, "interrupted" },
		{ "halves", "signal:SIGTERM:after-spawn:diskutil partitionDisk:2", NULL, "interrupted" },
		{ "image", "signal:SIGTERM:after-spawn:hdiutil attach:1", NULL, "interrupted" },
		{ "image", "signal:SIGINT:after-spawn:diskutil partitionDisk:1", NULL, "interrupted" },
		{ "image", "signal:SIGINT:before-spawn:diskutil mount:1", NULL, "interrupted" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct mac_fault *r = &rows[i];
		struct fx x;
		fx_init(&x, strcmp(r->plan, "halves") != 0); /* the image: disk2 */
		char *text = NULL;
		if (!strcmp(r->plan, "halves")) {
			static const char *const pairs[] = { "files: 160, sizes: 2M..2G, block: 1M",
							     "files: 1, sizes: 64K, block: 64K", NULL };
			text = pt_config("hfs-apfs-halves", pairs);
		} else {
			text = image_plan(&x, "");
		}
		char *out = NULL;
		setenv("RIG_FAULT", r->rule, 1);
		int rc = run_plan(&x, text, &out);
		unsetenv("RIG_FAULT");
		struct strbuf want = STRBUF_INIT;
		sb_addf(&want, "failure injected by RIG_FAULT (%s)", r->rule);
		/* Without a status: prepare failed, the run not started (exit
		 * 2, no run folder); else the run failed or was interrupted. */
		int want_rc = r->status ? 1 : 2;
		int ok = rc == want_rc && out &&
			 (!r->names || (strstr(out, r->names) && strstr(out, want.buf)));
		if (!r->status)
			ok = ok && access(x.run, F_OK) != 0;
		char *st = r->status ? pt_run_query(x.run, "SELECT status FROM run") : NULL;
		if (r->status)
			ok = ok && st && !strcmp(st, r->status);
		/* rig's command log has the faked command with its output, once */
		char *faked = r->status ? pt_run_query(x.run, "SELECT count(*) FROM commands WHERE "
							     "output LIKE '%failure injected%'")
					: NULL;
		if (r->status && r->names)
			ok = ok && faked && !strcmp(faked, "1");
		free(faked);
		if (!ok)
			fprintf(stderr, "\n%s %s: rig exited %d (want %d), run %s (want %s):\n%s\n", r->plan,
				r->rule, rc, want_rc, st ? st : "-", r->status ? r->status : "-",
				out ? out : "");
		CU_ASSERT_TRUE(ok);
		check_clean(&x);
		sb_reset(&want);
		sb_addf(&want, "%s/rig-test.dmg", x.dir);
		if (access(want.buf, F_OK) == 0) {
			fprintf(stderr, "\n%s %s: the image is left\n", r->plan, r->rule);
			CU_FAIL("image left behind");
		}
		free(st);
		sb_release(&want);
		free(out);
		free(text);
		fx_done(&x);
	}
}

void register_macos_run_tests(void)
{
	CU_pSuite s = test_suite_e2e("macos backend end to end (fake diskutil and hdiutil)");
	test_add(s, "rig run: hfs-apfs-halves, both orders", test_halves);
	test_add(s, "rig run: ten containers", test_ten_containers);
	test_add(s, "rig run: image target, remount, detach busy twice", test_image_busy_detach);
	test_add(s, "rig run: detach always busy: -force, with a warning", test_detach_force);
	test_add(s, "rig run: fat32, whose label comes back in capitals", test_fat32);
	test_add(s, "rig run: case-sensitive APFS and HFS+ by their personalities",
		 test_case_sensitive);
	test_add(s, "rig run: an attached image file is refused", test_image_attached);
	test_add(s, "rig run: partitionDisk fails with -69888", test_partition_fails);
	test_add(s, "rig run: diskutil info errors", test_info_fails);
	test_add(s, "rig run: an internal disk is refused before any change", test_refused);
	test_add(s, "rig plan --platform macos: every macOS config", test_plan_configs);
	test_add(s, "RIG_FAULT: every command failing once: named, torn down, nothing left",
		 test_every_command_fails_once);
}
