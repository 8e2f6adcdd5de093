/*
 * Tests of provision/safety.c, provision/linux/linux_facts.c, linux_devices.c and
 * linux_gpt.c, without root and without a disk: the erase rules as a table
 * of refusals against recorded machines (tests/fixtures/linux/: sysfs,
 * mountinfo, swaps and udev trees), the facts read from them, `rig
 * devices` on them, and the partition geometry of layouts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "provision/linux/linux.h"
#include "provision/safety.h"
#include "test.h"

static char *fixture(const char *machine)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/tests/fixtures/linux/%s", test_src(), machine);
	return sb_detach(&sb);
}

struct refusal {
	const char *machine;
	const char *device;
	const char *confirm;  /* NULL: the confirm rule is skipped */
	unsigned allow;
	const char *rule;     /* NULL: may be erased */
	const char *fact;     /* a part of the stated fact */
};

static const struct refusal refusals[] = {
	/* the disk that holds /, directly, through LVM, through btrfs's anonymous device */
	{ "workstation", "/dev/sda", "Samsung SSD 860 EVO 500GB", 0, "root-disk",
	  "/ is mounted from dm-0 (built on sda2)" },
	{ "workstation", "/dev/dm-0", NULL, SAFETY_ALLOW_VIRTUAL, "root-disk", "/ is mounted from dm-0" },
	{ "vm", "/dev/vda", "overlayblk", 0, "root-disk", "/ is mounted from vda" },
	{ "laptop", "/dev/nvme0n1", "20034D801234", 0, "root-disk", "/ is mounted from nvme0n1p2" },
	/* mounted: a partition of it (mount point with an escaped blank), or itself */
	{ "workstation", "/dev/sdb", "WDC WD20SPZX-22UA7T0", 0, "mounted",
	  "sdb1 is mounted on /media/back up" },
	{ "vm", "/dev/loop0", "/dev/shm/rigbench.img", SAFETY_ALLOW_LOOP, "mounted",
	  "loop0 is mounted on /mnt/rigbench" },
	/* a partition instead of the whole disk */
	{ "workstation", "/dev/sdc1", "ST2000LM007-1R81", 0, "whole-disk", "sdc1 is a partition of sdc" },
	{ "laptop", "/dev/nvme0n1p2", NULL, 0, "whole-disk", "nvme0n1p2 is a partition of nvme0n1" },
	/* confirm must equal the model or the serial, exactly (blanks around it aside) */
	{ "workstation", "/dev/sdc", "ST2000LM007", 0, "confirm",
	  "confirm \"ST2000LM007\" is neither the model (ST2000LM007-1R81) nor the serial (WDZ123AB)" },
	{ "workstation", "/dev/sdc", "st2000lm007-1r81", 0, "confirm", "is neither the model" },
	{ "workstation", "/dev/sdc", "", 0, "confirm", "is neither" },
	{ "workstation", "/dev/sdc", "ST2000LM007-1R81", 0, NULL, NULL },
	{ "workstation", "/dev/sdc", "  ST2000LM007-1R81 ", 0, NULL, NULL },
	{ "workstation", "/dev/sdc", "WDZ123AB", 0, NULL, NULL },
	{ "workstation", "/dev/sdc", NULL, 0, NULL, NULL },
	/* used otherwise */
	{ "workstation", "/dev/sdd", "Z5AB1234", 0, "in-use", "sdd2 is active swap" },
	{ "workstation", "/dev/sde", "JR10006P0ABCDE", 0, "in-use",
	  "sde1 is held by md0 (device mapper, RAID, LVM or crypt)" },
	/* read-only, no medium, does not exist */
	{ "workstation", "/dev/sr0", "DVD-RW DRU-870S", 0, "read-only", "sr0 is read-only" },
	{ "workstation", "/dev/loop4", NULL, SAFETY_ALLOW_LOOP, "no-medium", "loop4 has no medium" },
	{ "workstation", "/dev/sdz", "x", 0, "exists", "/dev/sdz: no such block device" },
	{ "workstation", "/tmp/disk.img", "x", 0, "exists", "not a device under /dev" },
	/* virtual devices and loop devices rig did not attach, and their waivers */
	{ "workstation", "/dev/ram0", NULL, 0, "virtual", "ram0 is a virtual device" },
	{ "workstation", "/dev/ram0", "x", SAFETY_ALLOW_VIRTUAL, "confirm", "model (unknown)" },
	{ "workstation", "/dev/loop3", "/var/tmp/disk.img", 0, "loop",
	  "loop3 is a loop device rig did not attach (over /var/tmp/disk.img)" },
	{ "workstation", "/dev/loop3", "/var/tmp/disk.img", SAFETY_ALLOW_LOOP, NULL, NULL },
	{ "workstation", "/dev/loop3", "/var/tmp/other.img", SAFETY_ALLOW_LOOP, "confirm",
	  "nor its backing file (/var/tmp/disk.img)" },
	{ "workstation", "/dev/loop3", "x", SAFETY_ALLOW_VIRTUAL, "loop", "rig did not attach" },
	/* free disks */
	{ "workstation", "/dev/nvme0n1", "Samsung SSD 980 PRO 1TB", 0, NULL, NULL },
	{ "laptop", "/dev/sda", "4C530001230101112345", 0, NULL, NULL },
};

static void test_refusal_table(void)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		char *root = fixture(r->machine);
		struct disk_facts f;
		prov_linux_disk_facts(root, r->device, &f);
		const struct safety_rule *rule = NULL;
		struct strbuf fact = STRBUF_INIT;
		int rc = prov_safety_check(&f, r->confirm, r->allow, &rule, &fact);
		int ok = r->rule ? rc == -EPERM && rule && !strcmp(rule->name, r->rule) &&
					   strstr(fact.buf, r->fact)
				 : rc == 0 && !rule && !fact.len;
		if (!ok)
			fprintf(stderr, "\n%s %s confirm '%s': expected %s '%s', got %s '%s'\n",
				r->machine, r->device, r->confirm ? r->confirm : "(none)",
				r->rule ? r->rule : "ok", r->fact ? r->fact : "",
				rule ? rule->name : "ok", fact.buf);
		CU_ASSERT_TRUE(ok);
		sb_release(&fact);
		prov_disk_facts_release(&f);
		free(root);
	}
}

static void test_rules_table(void)
{
	/* Every rule has a name and words; the waivable ones name their flag. */
	size_t n = 0, waivable = 0;
	for (const struct safety_rule *r = prov_safety_rules; r->name; r++, n++) {
		CU_ASSERT_PTR_NOT_NULL(r->what);
		if (r->waiver) {
			waivable++;
			CU_ASSERT_PTR_NOT_NULL(strstr(r->what, "--allow"));
		}
	}
	CU_ASSERT_EQUAL(n, 12); /* system-volume (macOS) is the twelfth */
	CU_ASSERT_EQUAL(waivable, 3);
	unsigned a = 0;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL(prov_safety_parse_allow("loop,virtual", &a, &e), 0);
	CU_ASSERT_EQUAL(a, SAFETY_ALLOW_LOOP | SAFETY_ALLOW_VIRTUAL);
	CU_ASSERT_EQUAL(prov_safety_parse_allow("internal", &a, &e), 0);
	CU_ASSERT_EQUAL(a, SAFETY_ALLOW_INTERNAL);
	CU_ASSERT_EQUAL(prov_safety_parse_allow("root-disk", &a, &e), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "cannot allow 'root-disk'"));
	sb_reset(&e);
	CU_ASSERT_EQUAL(prov_safety_parse_allow("loop,", &a, &e), -1);
	sb_release(&e);
	/* macOS facts: internal disks are refused unless allowed. */
	struct disk_facts f = { .exists = 1, .whole = 1, .size = 1, .internal = 1,
				.name = "disk0", .model = "APPLE SSD" };
	const struct safety_rule *rule = NULL;
	struct strbuf fact = STRBUF_INIT;
	CU_ASSERT_EQUAL(prov_safety_check(&f, "APPLE SSD", 0, &rule, &fact), -EPERM);
	CU_ASSERT_TRUE(rule && !strcmp(rule->name, "internal"));
	CU_ASSERT_EQUAL(prov_safety_check(&f, "APPLE SSD", SAFETY_ALLOW_INTERNAL, &rule, &fact), 0);
	sb_release(&fact);
}

static void test_facts(void)
{
	char *root = fixture("workstation");
	struct disk_facts f;
	/* USB disk: model trimmed, serial from udev's database, rotational */
	prov_linux_disk_facts(root, "/dev/sdb", &f);
	CU_ASSERT_TRUE(f.exists && f.whole && !f.is_loop && !f.is_virtual);
	CU_ASSERT_STRING_EQUAL(f.model, "WDC WD20SPZX-22UA7T0");
	CU_ASSERT_STRING_EQUAL(f.serial, "WX12A3456789");
	CU_ASSERT_EQUAL(f.size, 3907029168ull * 512);
	CU_ASSERT_EQUAL(f.sector, 512);
	CU_ASSERT_EQUAL(f.rotational, 1);
	prov_disk_facts_release(&f);
	/* SATA: serial from VPD page 0x80 */
	prov_linux_disk_facts(root, "/dev/sdc", &f);
	CU_ASSERT_STRING_EQUAL(f.serial, "WDZ123AB");
	CU_ASSERT_PTR_NULL(f.mounted);
	CU_ASSERT_PTR_NULL(f.root_via);
	CU_ASSERT_PTR_NULL(f.in_use);
	prov_disk_facts_release(&f);
	/* NVMe: serial in device/serial, 4K sectors, solid state */
	prov_linux_disk_facts(root, "/dev/nvme0n1", &f);
	CU_ASSERT_STRING_EQUAL(f.serial, "S5GXNF0R123456");
	CU_ASSERT_EQUAL(f.sector, 4096);
	CU_ASSERT_EQUAL(f.rotational, 0);
	prov_disk_facts_release(&f);
	/* a partition: its size, its disk */
	prov_linux_disk_facts(root, "/dev/sdc1", &f);
	CU_ASSERT_TRUE(f.exists && !f.whole);
	CU_ASSERT_STRING_EQUAL(f.parent, "sdc");
	CU_ASSERT_EQUAL(f.size, 3907024896ull * 512);
	prov_disk_facts_release(&f);
	/* a loop device: its backing file */
	prov_linux_disk_facts(root, "/dev/loop3", &f);
	CU_ASSERT_TRUE(f.is_loop && !f.is_virtual);
	CU_ASSERT_STRING_EQUAL(f.loop_backing, "/var/tmp/disk.img");
	prov_disk_facts_release(&f);
	free(root);
	root = fixture("vm");
	prov_linux_disk_facts(root, "/dev/vda", &f);
	CU_ASSERT_STRING_EQUAL(f.serial, "overlayblk");
	CU_ASSERT_PTR_NULL(f.model);
	prov_disk_facts_release(&f);
	/* the loop device whose backing file is ... */
	char *loop = prov_linux_loop_of(root, "/dev/shm/rigbench.img");
	CU_ASSERT_TRUE(loop && !strcmp(loop, "loop0"));
	free(loop);
	CU_ASSERT_PTR_NULL(prov_linux_loop_of(root, "/dev/shm/other.img"));
	CU_ASSERT_EQUAL(prov_linux_partition_count(root, "vda"), 0);
	CU_ASSERT_TRUE(prov_linux_is_mounted(root, "/mnt/rigbench"));
	CU_ASSERT_FALSE(prov_linux_is_mounted(root, "/mnt"));
	char *opts = prov_linux_mount_options(root, "/");
	CU_ASSERT_TRUE(opts && !strcmp(opts, "rw,relatime;rw,discard"));
	free(opts);
	free(root);
	root = fixture("workstation");
	CU_ASSERT_EQUAL(prov_linux_partition_count(root, "sdd"), 2);
	free(root);
}

static void test_devices_report(void)
{
	char *root = fixture("workstation");
	struct strbuf out = STRBUF_INIT;
	prov_linux_devices_report(root, &out);
	/* Unattached loop devices are left out; the rest all say yes or why not. */
	CU_ASSERT_PTR_NULL(strstr(out.buf, "/dev/loop4"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, "/dev/loop3"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, "rig refuses it: / is mounted from dm-0 (built on sda2) "
					       "(rule root-disk)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, "rig may erase it: a disk target with device: /dev/sdc "
					       "and confirm: \"ST2000LM007-1R81\" or \"WDZ123AB\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, "(rule loop; --allow loop waives it)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, "1.8 TiB"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out.buf, "rotational"));
	int devices = 0;
	for (const char *p = out.buf; (p = strstr(p, "\n/dev/")); p++)
		devices++;
	CU_ASSERT_EQUAL(devices + (strncmp(out.buf, "/dev/", 5) == 0), 11);
	sb_release(&out);
	free(root);
}

/* --- geometry --- */

static struct plan_layout *layout(size_t n, const enum psize_kind *kinds, const double *vals)
{
	struct plan_layout *l = calloc(1, sizeof(*l));
	l->name = "l";
	l->parts = calloc(n, sizeof(*l->parts));
	l->nparts = n;
	for (size_t i = 0; i < n; i++) {
		l->parts[i].name = "p";
		l->parts[i].fs = "ext4";
		l->parts[i].size_kind = kinds[i];
		if (kinds[i] == PSIZE_PERCENT)
			l->parts[i].percent = vals[i];
		else if (kinds[i] == PSIZE_BYTES)
			l->parts[i].bytes = (uint64_t)vals[i];
	}
	return l;
}

static void free_layout(struct plan_layout *l)
{
	free(l->parts);
	free(l);
}

static void test_gpt_ten_tenths(void)
{
	enum psize_kind k[10];
	double v[10];
	for (int i = 0; i < 10; i++) {
		k[i] = PSIZE_PERCENT;
		v[i] = 10;
	}
	struct plan_layout *l = layout(10, k, v);
	struct gpt_part g[10];
	struct strbuf e = STRBUF_INIT;
	uint64_t bytes = 4ull << 30;
	CU_ASSERT_EQUAL_FATAL(prov_gpt_layout(l, bytes, 512, g, &e), 0);
	uint64_t first, last;
	prov_gpt_usable(bytes, 512, &first, &last);
	CU_ASSERT_EQUAL(first, 2048);
	CU_ASSERT_EQUAL(last, bytes / 512 - 34);
	/* usable = 4 GiB - 1 MiB - 16.5 KiB: a tenth is 409.5 MiB, rounded down to 409 MiB */
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(g[i].first % 2048, 0);
		if (i < 9)
			CU_ASSERT_EQUAL(g[i].last - g[i].first + 1, 409ull * 2048);
		if (i)
			CU_ASSERT_EQUAL(g[i].first, g[i - 1].last + 1);
	}
	CU_ASSERT_EQUAL(g[0].first, 2048);
	CU_ASSERT_EQUAL(g[9].last, last); /* rounding and alignment go to the last */
	sb_release(&e);
	free_layout(l);
}

static void test_gpt_mixed(void)
{
	/* 100M, 25%, rest, 10% on 1 GiB: the rest is computed, the last fills up. */
	enum psize_kind k[] = { PSIZE_BYTES, PSIZE_PERCENT, PSIZE_REST, PSIZE_PERCENT };
	double v[] = { 100 << 20, 25, 0, 10 };
	struct plan_layout *l = layout(4, k, v);
	struct gpt_part g[4];
	struct strbuf e = STRBUF_INIT;
	uint64_t bytes = 1ull << 30, first, last;
	prov_gpt_usable(bytes, 512, &first, &last);
	uint64_t usable = (last + 1 - first) * 512;
	CU_ASSERT_EQUAL_FATAL(prov_gpt_layout(l, bytes, 512, g, &e), 0);
	CU_ASSERT_EQUAL(g[0].last - g[0].first + 1, 100ull * 2048);
	CU_ASSERT_EQUAL((g[1].last - g[1].first + 1) * 512, (uint64_t)(usable * 0.25) >> 20 << 20);
	CU_ASSERT_EQUAL(g[3].last, last);
	CU_ASSERT_EQUAL(g[2].first, g[1].last + 1);
	sb_release(&e);
	free_layout(l);

	/* Percentages under 100% and no rest: the end of the disk stays free. */
	enum psize_kind k2[] = { PSIZE_PERCENT, PSIZE_PERCENT };
	double v2[] = { 30, 30 };
	l = layout(2, k2, v2);
	CU_ASSERT_EQUAL_FATAL(prov_gpt_layout(l, bytes, 512, g, &e), 0);
	CU_ASSERT_EQUAL(g[0].last - g[0].first, g[1].last - g[1].first);
	CU_ASSERT_TRUE(g[1].last < last - 2048 * 100);
	free_layout(l);

	/* 4K sectors: the same bytes, an eighth of the sector numbers. */
	enum psize_kind k3[] = { PSIZE_PERCENT, PSIZE_REST };
	double v3[] = { 50, 0 };
	l = layout(2, k3, v3);
	CU_ASSERT_EQUAL_FATAL(prov_gpt_layout(l, bytes, 4096, g, &e), 0);
	CU_ASSERT_EQUAL(g[0].first, 256);
	prov_gpt_usable(bytes, 4096, &first, &last);
	CU_ASSERT_EQUAL(last, bytes / 4096 - 6);
	CU_ASSERT_EQUAL(g[1].last, last);
	free_layout(l);

	/* Byte sizes that do not fit, and a share under 1 MiB. */
	enum psize_kind k4[] = { PSIZE_BYTES, PSIZE_BYTES };
	double v4[] = { 600 << 20, 600 << 20 };
	l = layout(2, k4, v4);
	sb_reset(&e);
	CU_ASSERT_EQUAL(prov_gpt_layout(l, bytes, 512, g, &e), -ENOSPC);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "do not fit"));
	free_layout(l);
	enum psize_kind k5[] = { PSIZE_PERCENT, PSIZE_REST };
	double v5[] = { 0.01, 0 };
	l = layout(2, k5, v5);
	sb_reset(&e);
	CU_ASSERT_EQUAL(prov_gpt_layout(l, 64 << 20, 512, g, &e), -ENOSPC);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "less than 1 MiB"));
	free_layout(l);
	sb_release(&e);
}

static void test_part_path(void)
{
	const char *cases[][2] = {
		{ "/dev/sdb", "/dev/sdb3" },
		{ "/dev/loop7", "/dev/loop7p3" },
		{ "/dev/loopN", "/dev/loopNp3" },
		{ "/dev/nvme0n1", "/dev/nvme0n1p3" },
		{ "/dev/mmcblk0", "/dev/mmcblk0p3" },
		{ "/dev/vda", "/dev/vda3" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		prov_linux_part_path(&sb, cases[i][0], 3);
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i][1]);
		sb_release(&sb);
	}
}

void register_safety_tests(void)
{
	CU_pSuite s = test_suite("safety rules and disk facts (recorded machines)");
	test_add(s, "a table of refusals: root disk, mounted, partition, confirm, ...", test_refusal_table);
	test_add(s, "the rule table and --allow", test_rules_table);
	test_add(s, "facts: model, serial (sysfs, VPD, udev), sizes, loop backing", test_facts);
	test_add(s, "rig devices says yes or why not for every disk", test_devices_report);
	CU_pSuite g = test_suite("GPT geometry");
	test_add(g, "ten tenths: equal, aligned, the last takes the rounding", test_gpt_ten_tenths);
	test_add(g, "bytes, percentages, rest, 4K sectors, refusals", test_gpt_mixed);
	test_add(g, "partition device names", test_part_path);
}
