/*
 * Tests of provision/macos/macos_facts.c and macos_layout.c, and of the safety
 * rules (provision/safety.c) on macOS facts: the refusal table with
 * devices from the real captures of tests/fixtures/macos/ (some derived
 * from them by changing one key, said in each row), served to the facts
 * reader by a replay of argument vectors; the byte sizes of layouts; the
 * check of what diskutil made; and `rig devices --platform macos` against
 * the fake diskutil of tests/tools/fake-macos/.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/spawn.h"
#include "provision/macos/macos.h"
#include "provision/safety.h"
#include "provision_util.h"
#include "test.h"

/* --- a replay of diskutil outputs --- */

struct reply {
	const char *argv;   /* as plat_spawn_argv_text writes it */
	const char *file;   /* a fixture, or NULL: the command fails (status 1, no plist) */
	const char *from, *to; /* derived: the first `from` in the file replaced by `to` */
	const char *from2, *to2;
};

struct replay {
	const struct reply *r;
	size_t n;
};

static char *fixture_text(const char *name)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/tests/fixtures/macos/%s", test_src(), name);
	char *t = test_read_file(p.buf, NULL);
	sb_release(&p);
	return t;
}

static char *replace(char *text, const char *from, const char *to)
{
	if (!from)
		return text;
	char *at = strstr(text, from);
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	struct strbuf sb = STRBUF_INIT;
	sb_add(&sb, text, (size_t)(at - text));
	sb_adds(&sb, to);
	sb_adds(&sb, at + strlen(from));
	free(text);
	return sb_detach(&sb);
}

static int replay_query(void *opaque, const char *const *argv, char **out, struct strbuf *err)
{
	const struct replay *rp = opaque;
	struct strbuf t = STRBUF_INIT;
	plat_spawn_argv_text(&t, argv);
	for (size_t i = 0; i < rp->n; i++) {
		const struct reply *r = &rp->r[i];
		if (strcmp(r->argv, t.buf))
			continue;
		if (!r->file)
			break;
		char *text = fixture_text(r->file);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		text = replace(text, r->from, r->to);
		*out = replace(text, r->from2, r->to2);
		sb_release(&t);
		return 0;
	}
	sb_addf(err, "%s failed with exit status 1: Could not find disk", t.buf);
	sb_release(&t);
	return -1;
}

#define LIST "diskutil-list-internal-apfs-plus-usb-stick-whole-disk-fat32.plist"
#define ROOT "diskutil-info-internal-apfs-boot-snapshot-volume.plist"
#define NVME "diskutil-info-internal-nvme-ssd-whole-disk.plist"
#define USB "diskutil-info-external-usb-stick-whole-disk-fat32.plist"
#define APFS "diskutil-apfs-list-catalina-single-container-system-data.plist"
#define NOTFOUND "diskutil-info-error-could-not-find-disk.plist"

/* The machine of the first list: disk0 (internal NVMe) holds container
 * disk1 with /; disk2 is a USB stick. disk0s2's info is derived from
 * disk0's (a partition of it). */
static const struct reply machine[] = {
	{ "diskutil info -plist /", ROOT, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk0s2", NVME, "<string>disk0</string>\n\t<key>DeviceNode",
	  "<string>disk0s2</string>\n\t<key>DeviceNode", "<key>WholeDisk</key>\n\t<true/>",
	  "<key>WholeDisk</key>\n\t<false/>" },
	{ "diskutil list -plist", LIST, NULL, NULL, NULL, NULL },
	{ "diskutil apfs list -plist", APFS, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk0", NVME, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk2", USB, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk1s5s1", ROOT, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk9", NOTFOUND, NULL, NULL, NULL, NULL },
	/* derived: the stick, but internal / virtual / read-only */
	{ "diskutil info -plist disk3", USB, "<key>Internal</key>\n\t<false/>",
	  "<key>Internal</key>\n\t<true/>", "<string>disk2</string>", "<string>disk3</string>" },
	{ "diskutil info -plist disk4", USB, "<string>Physical</string>", "<string>Virtual</string>",
	  "<string>disk2</string>", "<string>disk4</string>" },
	{ "diskutil info -plist disk5", USB, "<key>WritableMedia</key>\n\t<true/>",
	  "<key>WritableMedia</key>\n\t<false/>", "<string>disk2</string>", "<string>disk5</string>" },
	/* derived: disk1, the container, as a whole disk of its own (from disk0's info) */
	{ "diskutil info -plist disk1", NVME, "<string>disk0</string>\n\t<key>DeviceNode",
	  "<string>disk1</string>\n\t<key>DeviceNode", "<string>Physical</string>",
	  "<string>Virtual</string>" },
};

/* The same machine, but / is the USB stick's volume (derived: the stick's
 * info answers for /), so disk0's /System volumes are not the root disk's. */
static const struct reply stick_root[] = {
	{ "diskutil info -plist /", USB, NULL, NULL, NULL, NULL },
	{ "diskutil list -plist", LIST, NULL, NULL, NULL, NULL },
	{ "diskutil apfs list -plist", APFS, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk0", NVME, NULL, NULL, NULL, NULL },
};

/* / cannot be read at all. */
static const struct reply no_root[] = {
	{ "diskutil list -plist", LIST, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk2", USB, NULL, NULL, NULL, NULL },
};

/* disk0s2's info cannot be read: the store's whole disk is taken from its name. */
static const struct reply no_store[] = {
	{ "diskutil info -plist /", ROOT, NULL, NULL, NULL, NULL },
	{ "diskutil list -plist", LIST, NULL, NULL, NULL, NULL },
	{ "diskutil apfs list -plist", APFS, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk0", NVME, NULL, NULL, NULL, NULL },
};

/* diskutil apfs list cannot be read: no disk's volumes can be told. */
static const struct reply no_apfs[] = {
	{ "diskutil info -plist /", ROOT, NULL, NULL, NULL, NULL },
	{ "diskutil list -plist", LIST, NULL, NULL, NULL, NULL },
	{ "diskutil info -plist disk2", USB, NULL, NULL, NULL, NULL },
};

#define RP(a) { a, sizeof(a) / sizeof(a[0]) }

struct refusal {
	struct replay rp;
	const char *device;
	const char *confirm;
	unsigned allow;
	const char *rule;   /* NULL: may be erased */
	const char *fact;   /* a part of the stated fact */
};

static const struct refusal refusals[] = {
	/* the disk behind /: its physical store's whole disk, and the container itself */
	{ RP(machine), "disk0", "INTEL SSDPEKNW512G8", SAFETY_ALLOW_INTERNAL, "root-disk",
	  "/ is on disk1s5s1 in APFS container disk1, whose physical store disk0s2 is on disk0" },
	{ RP(machine), "disk1", "x", SAFETY_ALLOW_VIRTUAL | SAFETY_ALLOW_INTERNAL, "root-disk",
	  "/ is on disk1s5s1, a volume of APFS container disk1" },
	{ RP(no_store), "disk0", "x", SAFETY_ALLOW_INTERNAL, "root-disk",
	  "whose physical store disk0s2 is on disk0 (by its name: " },
	{ RP(no_root), "disk2", "Cruzer Fit", 0, "root-disk", "cannot tell which disk holds /" },
	{ RP(no_apfs), "disk2", "Cruzer Fit", 0, "root-disk",
	  "the volumes of the disks cannot be told: diskutil apfs list -plist failed" },
	/* a volume at / or under /System, when the disk is not the one traced from / */
	{ RP(stick_root), "disk0", "x", SAFETY_ALLOW_INTERNAL, "system-volume",
	  "disk1s1 is mounted at /System/Volumes/Data (APFS container disk1 on disk0)" },
	/* not a whole disk: the system snapshot */
	{ RP(machine), "disk1s5s1", "x", 0, "whole-disk", "disk1s5s1 is a partition of disk1" },
	/* diskutil's error dict */
	{ RP(machine), "disk9", "x", 0, "exists", "Could not find disk: /Volumes/SMB" },
	{ RP(machine), "disk7", "x", 0, "exists", "diskutil info -plist disk7 failed" },
	/* internal, virtual, read-only (derived from the stick) */
	{ RP(machine), "disk3", "Cruzer Fit", 0, "internal", "disk3 is an internal disk" },
	{ RP(machine), "disk3", "Cruzer Fit", SAFETY_ALLOW_INTERNAL, NULL, NULL },
	{ RP(machine), "disk4", "Cruzer Fit", 0, "virtual", "disk4 is a virtual device" },
	{ RP(machine), "disk5", "Cruzer Fit", 0, "read-only", "disk5 is read-only" },
	/* confirm: the media name exactly; there is no serial in diskutil's plists */
	{ RP(machine), "disk2", "SanDisk", 0, "confirm",
	  "confirm \"SanDisk\" is neither the model (Cruzer Fit) nor the serial (unknown)" },
	{ RP(machine), "disk2", "cruzer fit", 0, "confirm", "is neither the model" },
	/* the safe external disk: a mounted USB stick (partitionDisk unmounts it) */
	{ RP(machine), "disk2", "Cruzer Fit", 0, NULL, NULL },
	{ RP(machine), "disk2", " Cruzer Fit ", 0, NULL, NULL },
	/* internal before confirm: the NVMe disk of a machine booted from the stick */
	{ RP(stick_root), "disk0", "INTEL SSDPEKNW512G8", 0, "system-volume", "/System/Volumes" },
};

static void test_refusals(void)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		struct mac_system s;
		struct mac_info info;
		struct strbuf e = STRBUF_INIT, fact = STRBUF_INIT;
		struct disk_facts f;
		prov_mac_system_read(replay_query, (void *)&r->rp, &s);
		if (prov_mac_read_info(replay_query, (void *)&r->rp, r->device, &info, &e) < 0)
			info.error = xstrdup(e.buf);
		prov_mac_disk_facts(&s, r->device, &info, &f);
		const struct safety_rule *rule = NULL;
		int rc = prov_safety_check(&f, r->confirm, r->allow, &rule, &fact);
		int ok = r->rule ? rc == -EPERM && rule && !strcmp(rule->name, r->rule) &&
					   strstr(fact.buf, r->fact)
				 : rc == 0;
		if (!ok)
			fprintf(stderr, "\nrefusal row %zu (%s, confirm %s): want %s, got %s: %s\n", i,
				r->device, r->confirm, r->rule ? r->rule : "accepted",
				rule ? rule->name : "accepted", fact.buf);
		CU_ASSERT(ok);
		prov_disk_facts_release(&f);
		prov_mac_info_release(&info);
		prov_mac_system_release(&s);
		sb_release(&e);
		sb_release(&fact);
	}
}

/* The facts themselves, as `rig devices` and the report use them. */
static void test_facts(void)
{
	struct replay rp = RP(machine);
	struct mac_system s;
	prov_mac_system_read(replay_query, &rp, &s);
	CU_ASSERT_PTR_NULL(s.root_error);
	CU_ASSERT_EQUAL_FATAL(s.nroot, 2);
	CU_ASSERT_STRING_EQUAL(s.root_disks[0], "disk1");
	CU_ASSERT_STRING_EQUAL(s.root_disks[1], "disk0");
	struct mac_info info;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_read_info(replay_query, &rp, "disk2", &info, &e), 0);
	struct disk_facts f;
	prov_mac_disk_facts(&s, "disk2", &info, &f);
	CU_ASSERT(f.exists && f.whole && !f.is_virtual && !f.read_only && f.removable);
	CU_ASSERT_EQUAL(f.internal, 0);
	CU_ASSERT_EQUAL(f.rotational, -1); /* no SolidState: unknown */
	CU_ASSERT_EQUAL(f.size, 15665463296ull); /* TotalSize, not Size */
	CU_ASSERT_EQUAL(f.sector, 512);
	CU_ASSERT_STRING_EQUAL(f.model, "Cruzer Fit");
	CU_ASSERT_PTR_NULL(f.serial);
	CU_ASSERT_PTR_NULL(f.mounted); /* /Volumes/NO NAME: diskutil unmounts it itself */
	CU_ASSERT_PTR_NULL(f.system_mount);
	prov_disk_facts_release(&f);
	prov_mac_info_release(&info);
	CU_ASSERT_EQUAL_FATAL(prov_mac_read_info(replay_query, &rp, "disk0", &info, &e), 0);
	prov_mac_disk_facts(&s, "disk0", &info, &f);
	CU_ASSERT_EQUAL(f.internal, 1);
	CU_ASSERT_EQUAL(f.rotational, 0);
	CU_ASSERT_PTR_NOT_NULL(f.root_via);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.system_mount ? f.system_mount : "", "/System/Volumes/Data"));
	prov_disk_facts_release(&f);
	prov_mac_info_release(&info);
	prov_mac_system_release(&s);
	sb_release(&e);
	char *w = prov_mac_whole_of("/dev/disk12s3s1");
	CU_ASSERT_STRING_EQUAL(w, "disk12");
	free(w);
}

/* --- layouts --- */

static struct plan_layout *layout_of(const char *spec, size_t n, double percent, int rest_last)
{
	struct plan_layout *l = xcalloc(1, sizeof(*l));
	l->name = xstrdup("test");
	l->parts = xcalloc(n, sizeof(*l->parts));
	l->nparts = n;
	for (size_t i = 0; i < n; i++) {
		struct strbuf nm = STRBUF_INIT;
		sb_addf(&nm, "C%zu", i + 1);
		l->parts[i].name = sb_detach(&nm);
		l->parts[i].fs = xstrdup(spec);
		l->parts[i].size_kind = rest_last && i + 1 == n ? PSIZE_REST : PSIZE_PERCENT;
		l->parts[i].percent = percent;
	}
	return l;
}

static void layout_free(struct plan_layout *l)
{
	for (size_t i = 0; i < l->nparts; i++) {
		free(l->parts[i].name);
		free(l->parts[i].fs);
	}
	free(l->parts);
	free(l->name);
	free(l);
}

static void test_sizes(void)
{
	/* ten tenths of a 2 TB disk: equal, whole MiB, and they fit */
	struct plan_layout *l = layout_of("apfs", 10, 10, 0);
	uint64_t sizes[10], total = 2000398934016ull;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_layout_sizes(l, total, sizes, &e), 0);
	uint64_t first = 210763776ull, end = (total - MAC_MIB) / MAC_MIB * MAC_MIB, sum = 0;
	for (size_t i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(sizes[i], sizes[0]);
		CU_ASSERT_EQUAL(sizes[i] % MAC_MIB, 0);
		sum += sizes[i];
	}
	CU_ASSERT(sum <= end - first);
	CU_ASSERT(end - first - sum < 10 * MAC_MIB); /* no more than rounding is lost */
	CU_ASSERT_EQUAL(sizes[0], (uint64_t)((double)(end - first) / 10) / MAC_MIB * MAC_MIB);
	layout_free(l);
	/* halves: 50% and rest; rest takes the rounding */
	l = layout_of("hfs+", 2, 50, 1);
	CU_ASSERT_EQUAL_FATAL(prov_mac_layout_sizes(l, total, sizes, &e), 0);
	CU_ASSERT(sizes[1] >= sizes[0] && sizes[1] - sizes[0] <= MAC_MIB);
	CU_ASSERT_EQUAL(sizes[0] + sizes[1], end - first);
	layout_free(l);
	/* too small for the EFI partition and one partition */
	l = layout_of("apfs", 1, 100, 0);
	CU_ASSERT_EQUAL(prov_mac_layout_sizes(l, 200 * MAC_MIB, sizes, &e), -ENOSPC);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "EFI partition"));
	layout_free(l);
	sb_release(&e);
	CU_ASSERT_STRING_EQUAL(prov_mac_format("hfs+"), "JHFS+");
	CU_ASSERT_STRING_EQUAL(prov_mac_format("fat32"), "MS-DOS FAT32");
	CU_ASSERT_STRING_EQUAL(prov_mac_format("exfat"), "ExFAT");
	CU_ASSERT_STRING_EQUAL(prov_mac_format("apfs"), "APFS");
	CU_ASSERT_PTR_NULL(prov_mac_format("ext4"));
	CU_ASSERT_STRING_EQUAL(prov_mac_fs_type("hfs+"), "hfs");
	CU_ASSERT_STRING_EQUAL(prov_mac_fs_type("fat32"), "msdos");
	CU_ASSERT(prov_mac_name_matches("fat32", "DATA", "Data"));
	CU_ASSERT(!prov_mac_name_matches("exfat", "DATA", "Data"));
	CU_ASSERT(!prov_mac_name_matches("hfs+", NULL, "Data"));
}

/* The check of a re-read layout against the plan, on the real captures:
 * disk0 of the first list is EFI + one APFS store of container disk1
 * (Catalina's apfs list has one volume in a container with five). */
static void test_check(void)
{
	char *lt = fixture_text(LIST), *at = fixture_text(APFS);
	struct mac_list ml;
	struct mac_apfs ma;
	struct strbuf e = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_list(lt, strlen(lt), &ml, &e), 0);
	CU_ASSERT_EQUAL_FATAL(prov_mac_parse_apfs(at, strlen(at), &ma, &e), 0);
	struct plan_layout *l = layout_of("apfs", 1, 100, 0);
	struct prov_extent fit[1] = { { 0, 511900434432ull } };
	struct mac_made made[1] = { { 0 } };
	/* five volumes where rig expects one */
	CU_ASSERT_EQUAL(prov_mac_layout_check(l, fit, "disk0", &ml, &ma, made, &e), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "APFS container disk1 on disk0s2 has 1 physical "
					     "store(s) and 5 volume(s)"));
	prov_mac_made_release(made, 1);
	sb_reset(&e);
	/* a size that differs by more than alignment */
	fit[0].bytes = 400000000000ull;
	CU_ASSERT_EQUAL(prov_mac_layout_check(l, fit, "disk0", &ml, &ma, made, &e), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "disk0s2 (C1) has 511900434432 bytes; rig asked for "
					     "400000000000"));
	prov_mac_made_release(made, 1);
	sb_reset(&e);
	/* the wrong type */
	free(l->parts[0].fs);
	l->parts[0].fs = xstrdup("hfs+");
	CU_ASSERT_EQUAL(prov_mac_layout_check(l, fit, "disk0", &ml, &ma, made, &e), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "partition 1 of disk0 (disk0s2) is Apple_APFS; "
					     "layout test wants Apple_HFS (C1)"));
	prov_mac_made_release(made, 1);
	sb_reset(&e);
	/* the wrong number of partitions */
	layout_free(l);
	l = layout_of("apfs", 2, 50, 0);
	CU_ASSERT_EQUAL(prov_mac_layout_check(l, fit, "disk0", &ml, &ma, made, &e), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "disk0 has 1 partition(s) after its EFI partition; "
					     "layout test has 2"));
	layout_free(l);
	prov_mac_list_release(&ml);
	prov_mac_apfs_release(&ma);
	sb_release(&e);
	free(lt);
	free(at);
}

/* --- rig devices --platform macos, against the fake diskutil --- */

static char *fake_bin(void)
{
	return xstrdup(test_fake_macos_dir());
}

static int fake_ctl(const char *bin, const char *const *args)
{
	const char *argv[12];
	struct strbuf tool = STRBUF_INIT;
	sb_addf(&tool, "%s/fake-macos", bin);
	size_t n = 0;
	argv[n++] = tool.buf;
	argv[n++] = "ctl";
	for (size_t i = 0; args[i] && n < 11; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	int rc = pt_cmd(argv, NULL);
	sb_release(&tool);
	return rc;
}

static void test_devices(void)
{
	char *dir = test_tmpdir(), *bin = fake_bin();
	setenv("RIG_FAKE_MACOS", dir, 1);
	const char *boot[] = { "boot", NULL };
	const char *usb[] = { "add-disk", "disk4", "2000398934016", "WDC WD20SPZX-22UA7T0",
			      "external", "rotational", "USB", NULL };
	const char *inner[] = { "add-disk", "disk6", "1000204886016", "Samsung SSD 870",
				"internal", "solid", "SATA", NULL };
	CU_ASSERT_EQUAL_FATAL(fake_ctl(bin, boot), 0);
	CU_ASSERT_EQUAL_FATAL(fake_ctl(bin, usb), 0);
	CU_ASSERT_EQUAL_FATAL(fake_ctl(bin, inner), 0);
	const char *args[] = { "devices", "--platform", "macos", NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(pt_rig(bin, args, &out), 0);
	static const char *const want[] = {
		"disk0           465.9 GiB  solid state   model APPLE SSD AP0512Q, serial -, "
		"internal, Apple Fabric, Physical\n",
		"rig refuses it: / is on disk1s1 in APFS container disk1, whose physical store "
		"disk0s2 is on disk0 (rule root-disk)\n",
		"rig refuses it: / is on disk1s1, a volume of APFS container disk1 (rule root-disk)\n",
		"disk4             1.8 TiB  rotational    model WDC WD20SPZX-22UA7T0, serial -, "
		"external, USB, Physical\n",
		"rig may erase it: a disk target with device: disk4 and confirm: \"WDC WD20SPZX-22UA7T0\"\n",
		"rig refuses it: disk6 is an internal disk (rule internal; --allow internal waives it)\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int found = out && strstr(out, want[i]);
		if (!found)
			fprintf(stderr, "\nrig devices lacks: %s\nin:\n%s\n", want[i], out ? out : "");
		CU_ASSERT(found);
	}
	free(out);
	/* A macOS before 10.13, whose diskutil has no apfs verb: every disk
	 * refused, saying which macOS rig needs. */
	const char *pre_apfs[] = { "fault", "no-apfs", "9", NULL };
	CU_ASSERT_EQUAL_FATAL(fake_ctl(bin, pre_apfs), 0);
	CU_ASSERT_EQUAL(pt_rig(bin, args, &out), 0);
	static const char old_mac[] = "diskutil apfs list -plist failed with exit status 1: "
				      "diskutil: did not recognize verb \"apfs\"";
	static const char needs[] = "rig needs macOS 10.13, High Sierra, or later";
	CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, old_mac) : NULL);
	CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, needs) : NULL);
	CU_ASSERT_PTR_NULL(out ? strstr(out, "rig may erase it") : "no output");
	if (!out || !strstr(out, old_mac))
		fprintf(stderr, "\nrig devices on a pre-APFS Mac:\n%s\n", out ? out : "");
	free(out);
	/* the real captures, replayed (a fresh state: no fake disks at all) */
	test_rmtree(dir);
	free(dir);
	dir = test_tmpdir();
	setenv("RIG_FAKE_MACOS", dir, 1);
	struct strbuf rp = STRBUF_INIT, fx = STRBUF_INIT;
	sb_addf(&rp, "%s/replay", dir);
	test_write_file(rp.buf,
			"diskutil info -plist /\t" ROOT "\t0\n"
			"diskutil list -plist\t" LIST "\t0\n"
			"diskutil apfs list -plist\t" APFS "\t0\n"
			"diskutil info -plist disk0\t" NVME "\t0\n"
			"diskutil info -plist disk2\t" USB "\t0\n"
			"diskutil info -plist disk1\t" NOTFOUND "\t1\n");
	sb_addf(&fx, "%s/tests/fixtures/macos", test_src());
	setenv("RIG_FAKE_MACOS_FIXTURES", fx.buf, 1);
	CU_ASSERT_EQUAL(pt_rig(bin, args, &out), 0);
	static const char *const want2[] = {
		("disk0           476.9 GiB  solid state   model INTEL SSDPEKNW512G8, serial -, "
		 "internal, PCI-Express, Physical\n"),
		/* disk0s2 is not in the replay: its disk is taken from its name */
		"whose physical store disk0s2 is on disk0 (by its name: ",
		"rig refuses it: disk1: Could not find disk: /Volumes/SMB (rule exists)\n",
		"disk2            14.6 GiB                model Cruzer Fit, serial -, external, USB, Physical\n",
		"rig may erase it: a disk target with device: disk2 and confirm: \"Cruzer Fit\"\n",
	};
	for (size_t i = 0; i < sizeof(want2) / sizeof(want2[0]); i++) {
		int found = out && strstr(out, want2[i]);
		if (!found)
			fprintf(stderr, "\nrig devices (replay) lacks: %s\nin:\n%s\n", want2[i], out ? out : "");
		CU_ASSERT(found);
	}
	free(out);
	unsetenv("RIG_FAKE_MACOS_FIXTURES");
	unsetenv("RIG_FAKE_MACOS");
	sb_release(&rp);
	sb_release(&fx);
	test_rmtree(dir);
	free(dir);
	free(bin);
}

void register_macos_safety_tests(void)
{
	CU_pSuite s = test_suite_e2e("macos safety and layouts (recorded Macs, fake diskutil)");
	test_add(s, "the refusal table: every rule from fixture-derived devices", test_refusals);
	test_add(s, "facts: root trace, internal, solid state unknown, TotalSize", test_facts);
	test_add(s, "layout sizes in bytes from TotalSize", test_sizes);
	test_add(s, "the re-read layout checked against the plan", test_check);
	test_add(s, "rig devices --platform macos (fake state and replayed captures)", test_devices);
}
