/*
 * The refusal suite: dangerous targets, each one row of a table, driven
 * through the real provisioning backend (prepare, provision, teardown) on
 * a recorded machine, and judged by the command log: a refused target is
 * refused before any destructive command is spawned.
 *
 * Nothing here runs a command. The backend reads its disk facts from a
 * copy of a recorded machine (tests/fixtures/linux/, provision_ctx.sysroot)
 * and spawns through a fake (plat_spawner_fake) that only records each command
 * and plays the kernel's part: `partx --update` makes the partitions the
 * last `sgdisk --clear` wrote appear in the copy's sysfs. A row may change
 * the machine between `rig plan` and `rig run`, or after a given command
 * (another disk now answers at the path: serial, model or size differ).
 *
 * Rows are per platform: a driver per platform runs a row and returns the
 * command log. The macOS driver runs the real macOS backend in process,
 * with the fake diskutil and hdiutil of tests/tools/fake-macos/ first on PATH,
 * and judges the fake's own record of the calls (calls.log): the boot
 * disk, the disk behind the boot container (APFS physical store ->
 * ParentWholeDisk), internal and virtual disks, a partition, a volume at /
 * or under /System, a confirm that does not match, and a disk that is
 * another one at `rig run` than at `rig plan`, or changes between the
 * confirmation and partitionDisk (the identity check), an image's disk that
 * is no longer its file's, an existing image file attached by someone
 * before `hdiutil create -ov` - refused with only read-only queries in the
 * log (or the destructive commands before the change); controls are erased.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/diag.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "platform/spawn.h"
#include "provision/linux/linux.h"
#include "provision/macos/macos.h"
#include "provision/provision.h"
#include "provision_util.h"
#include "test.h"

/* A change to the recorded machine (root: the copy). */
typedef void (*change_fn)(const char *root);

struct row {
	const char *platform;    /* "linux" or "macos" */
	const char *danger;      /* in words, for failure messages */
	const char *machine;     /* tests/fixtures/linux/MACHINE; macOS: a fake machine below */
	const char *device;      /* macOS: "image" is an image target (--force) */
	const char *confirm;
	unsigned allow;          /* SAFETY_ALLOW_* */
	/* The machine changes: "plan" between `rig plan` and `rig run`, or
	 * after the first command starting with this text; NULL never. */
	const char *change_when;
	change_fn change;
	const char *refused;     /* a part of the error; NULL: a control row, not refused */
	/* The destructive commands the log must show, in order, each as its
	 * first two words, one per line ("" none). */
	const char *destructive;
	unsigned change_nth;     /* change after the Nth such command (0: the first) */
};

/* What a platform driver reports about one row. */
struct outcome {
	int rc;                  /* of the backend: 0, or the first failure */
	struct strbuf err;
	struct strbuf log;       /* every command spawned, one per line */
	struct strbuf plan_note; /* what `rig plan` said before the run ("plan" rows) */
};

/* --- changes of the recorded machine --- */

static void write_attr(const char *root, const char *rel, const char *value)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", root, rel);
	CU_ASSERT_EQUAL(test_write_file(p.buf, value), 0);
	sb_release(&p);
}

static void sdc_other_disk(const char *root)
{
	/* Another disk of another model at /dev/sdc. */
	write_attr(root, "sys/block/sdc/device/model", "WDC WD40EFRX-68N\n");
	write_attr(root, "sys/block/sdc/device/serial", "WD-WCC7K0ABCDEF\n");
}

static void sdc_new_serial(const char *root)
{
	/* Same model, another unit: only the serial tells. */
	write_attr(root, "sys/block/sdc/device/serial", "WDZ999ZZ\n");
}

static void sdc_new_size(const char *root)
{
	write_attr(root, "sys/block/sdc/size", "1953525168\n");
}

static void sdc_gone(const char *root)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/sys/block/sdc", root);
	test_rmtree(p.buf);
	sb_release(&p);
}

/* macOS: root is the fake's state folder (disks/ID: key=value facts;
 * parts/ID: a disk's partitions; see tests/tools/fake-macos/main.c). */

static void mac_set(const char *root, const char *disk, const char *key, const char *value)
{
	struct strbuf p = STRBUF_INIT, t = STRBUF_INIT;
	sb_addf(&p, "%s/disks/%s", root, disk);
	char *old = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(old);
	for (const char *l = old; *l;) {
		size_t n = strcspn(l, "\n");
		if (strncmp(l, key, strlen(key)) || l[strlen(key)] != '=')
			sb_addf(&t, "%.*s\n", (int)n, l);
		l += n + (l[n] == '\n');
	}
	if (value)
		sb_addf(&t, "%s=%s\n", key, value);
	CU_ASSERT_EQUAL(test_write_file(p.buf, t.buf), 0);
	free(old);
	sb_release(&p);
	sb_release(&t);
}

static void disk4_other_media(const char *root)
{
	mac_set(root, "disk4", "media", "Samsung PSSD T7");
}

static void disk4_new_size(const char *root)
{
	/* same media name: only the size tells */
	mac_set(root, "disk4", "size", "1000204886016");
}

static void disk4_internal(const char *root)
{
	mac_set(root, "disk4", "internal", "1");
}

static void disk4_gone(const char *root)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/disks/disk4", root);
	CU_ASSERT_EQUAL(unlink(p.buf), 0);
	sb_release(&p);
}

static void image_disk_other_file(const char *root)
{
	/* the image's disk is now another image's (detached, another attached) */
	struct strbuf p = STRBUF_INIT;
	for (int n = 0; n < 64; n++) {
		sb_reset(&p);
		sb_addf(&p, "%s/disks/disk%d", root, n);
		char *t = test_read_file(p.buf, NULL);
		int image = t && strstr(t, "kind=image");
		free(t);
		if (image) {
			sb_reset(&p);
			sb_addf(&p, "disk%d", n);
			mac_set(root, p.buf, "image", "/var/tmp/someone-elses.dmg");
		}
	}
	sb_release(&p);
}

static void image_file_attached(const char *root)
{
	/* the existing image file (machine mac-image) is attached by someone */
	struct strbuf p = STRBUF_INIT, t = STRBUF_INIT;
	sb_addf(&p, "%s/disks/disk20", root);
	const char *slash = strrchr(root, '/'); /* root is TMP/fake, the image TMP/rig-test.dmg */
	sb_addf(&t, "kind=image\nsize=1048576\nmedia=Disk Image\ninternal=0\nbus=Disk Image\n"
		    "virtual=1\nimage=%.*s/rig-test.dmg\n", (int)(slash - root), root);
	CU_ASSERT_EQUAL(test_write_file(p.buf, t.buf), 0);
	sb_release(&p);
	sb_release(&t);
}

/* --- the table --- */

static const struct row rows[] = {
	/* the boot disk: directly, through LVM, as a whole-disk file system */
	{ "linux", "the disk holding / through LVM", "workstation", "/dev/sda",
	  "Samsung SSD 860 EVO 500GB", 0, NULL, NULL, "(rule root-disk:", "", 0 },
	{ "linux", "the boot disk of a VM, / on it directly", "vm", "/dev/vda", "overlayblk", 0,
	  NULL, NULL, "/ is mounted from vda (rule root-disk:", "", 0 },
	{ "linux", "the boot NVMe disk of a laptop (btrfs root)", "laptop", "/dev/nvme0n1",
	  "20034D801234", 0, NULL, NULL, "(rule root-disk:", "", 0 },
	{ "linux", "the device mapper volume holding /", "workstation", "/dev/dm-0", "x",
	  SAFETY_ALLOW_VIRTUAL, NULL, NULL, "(rule root-disk:", "", 0 },
	/* a mounted disk, a disk in use */
	{ "linux", "a disk with a mounted file system", "workstation", "/dev/sdb",
	  "WDC WD20SPZX-22UA7T0", 0, NULL, NULL, "sdb1 is mounted on /media/back up (rule mounted:",
	  "", 0 },
	{ "linux", "a disk with active swap", "workstation", "/dev/sdd", "Z5AB1234", 0, NULL, NULL,
	  "(rule in-use:", "", 0 },
	{ "linux", "a RAID member", "workstation", "/dev/sde", "JR10006P0ABCDE", 0, NULL, NULL,
	  "(rule in-use:", "", 0 },
	/* virtual disks, with and without the waiver for another rule */
	{ "linux", "a ram disk", "workstation", "/dev/ram0", "x", 0, NULL, NULL,
	  "ram0 is a virtual device (rule virtual:", "", 0 },
	{ "linux", "a zram device", "vm", "/dev/zram0", "x", SAFETY_ALLOW_LOOP, NULL, NULL,
	  "zram0 has no medium (size 0) (rule no-medium:", "", 0 },
	{ "linux", "a loop device rig did not attach", "workstation", "/dev/loop3",
	  "/var/tmp/disk.img", SAFETY_ALLOW_VIRTUAL, NULL, NULL, "(rule loop:", "", 0 },
	/* Internal disks: Linux cannot tell internal from external, so the
	 * internal rule is the macOS rows' (safety_test checks the rule). */
	/* a partition named instead of a whole disk */
	{ "linux", "a partition instead of its disk", "workstation", "/dev/sdc1",
	  "ST2000LM007-1R81", 0, NULL, NULL, "sdc1 is a partition of sdc; give the whole disk", "", 0 },
	{ "linux", "a partition of the boot disk", "laptop", "/dev/nvme0n1p2", "20034D801234", 0,
	  NULL, NULL, "(rule whole-disk:", "", 0 },
	/* a read-only device, a device that does not exist */
	{ "linux", "a read-only DVD drive", "workstation", "/dev/sr0", "DVD-RW DRU-870S", 0, NULL,
	  NULL, "(rule read-only:", "", 0 },
	{ "linux", "a disk that is not there", "workstation", "/dev/sdz", "x", 0, NULL, NULL,
	  "(rule exists:", "", 0 },
	/* a confirm that does not match: a prefix, another case, empty */
	{ "linux", "confirm is only a prefix of the model", "workstation", "/dev/sdc", "ST2000LM007",
	  0, NULL, NULL, "confirm \"ST2000LM007\" is neither the model", "", 0 },
	{ "linux", "confirm in another case", "workstation", "/dev/sdc", "st2000lm007-1r81", 0, NULL,
	  NULL, "(rule confirm:", "", 0 },
	{ "linux", "confirm empty", "workstation", "/dev/sdc", "", 0, NULL, NULL,
	  "refusal.yaml:4:38: error: 'confirm' is empty", "", 0 },
	/* the path names another disk at `rig run` than at `rig plan` */
	{ "linux", "another disk at the path since rig plan", "workstation", "/dev/sdc", "WDZ123AB",
	  0, "plan", sdc_other_disk, "confirm \"WDZ123AB\" is neither the model (WDC WD40EFRX-68N) "
				     "nor the serial (WD-WCC7K0ABCDEF)", "", 0 },
	/* the identity changes during provisioning: checked before every
	 * destructive command, refused before the next one */
	{ "linux", "another unit of the same model after sgdisk --zap-all", "workstation", "/dev/sdc",
	  "ST2000LM007-1R81", 0, "sgdisk --zap-all", sdc_new_serial,
	  "refusing to run sgdisk --clear --set-alignment=2048 ", "sgdisk --zap-all\n", 0 },
	{ "linux", "the size changes before mkfs", "workstation", "/dev/sdc", "WDZ123AB", 0,
	  "partx --update", sdc_new_size, "size was 2000398934016 bytes, is 1000204886016",
	  "sgdisk --zap-all\nsgdisk --clear\n", 0 },
	{ "linux", "the disk is gone before the second mkfs", "workstation", "/dev/sdc", "WDZ123AB",
	  0, "mount -t ext4 /dev/sdc1", sdc_gone, "is no longer the disk that was checked and "
						  "confirmed: it is gone",
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\n", 0 },
	/* controls: the same disk, unchanged, is erased (so the rows above can fail) */
	{ "linux", "a free disk, confirmed by its model", "workstation", "/dev/sdc",
	  "ST2000LM007-1R81", 0, NULL, NULL, NULL,
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\nmkfs.ext4 -F\n", 0 },
	{ "linux", "a free NVMe disk, confirmed by its serial", "workstation", "/dev/nvme0n1",
	  "S5GXNF0R123456", 0, NULL, NULL, NULL,
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\nmkfs.ext4 -F\n", 0 },
	{ "linux", "a loop device, waived and confirmed by its backing file", "workstation",
	  "/dev/loop3", "/var/tmp/disk.img", SAFETY_ALLOW_LOOP, NULL, NULL, NULL,
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\nmkfs.ext4 -F\n", 0 },

	/* macOS (the machines are below, at the macOS driver) */
	/* the boot disk, and the disks behind the container that holds / */
	{ "macos", "the internal boot SSD, behind the container of /", "mac", "disk0",
	  "APPLE SSD AP0512Q", SAFETY_ALLOW_INTERNAL, NULL, NULL,
	  "/ is on disk1s1 in APFS container disk1, whose physical store disk0s2 is on disk0 "
	  "(rule root-disk:", "", 0 },
	{ "macos", "the APFS container holding / itself", "mac", "disk1", "AppleAPFSMedia",
	  SAFETY_ALLOW_INTERNAL | SAFETY_ALLOW_VIRTUAL, NULL, NULL, "(rule root-disk:", "", 0 },
	{ "macos", "an external disk the Mac boots from (/ in a container on it)", "mac-extboot",
	  "disk8", "Samsung PSSD T7", 0, NULL, NULL,
	  "/ is on disk9s1 in APFS container disk9, whose physical store disk8s2 is on disk8 "
	  "(rule root-disk:", "", 0 },
	/* an internal disk, a virtual disk, a partition */
	{ "macos", "an internal disk", "mac", "disk3", "APPLE HDD ST1000DM003", 0, NULL, NULL,
	  "disk3 is an internal disk (rule internal:", "", 0 },
	{ "macos", "a virtual disk (a RAM disk)", "mac", "disk6", "RAMDisk", 0, NULL, NULL,
	  "(rule virtual:", "", 0 },
	{ "macos", "a partition instead of its disk", "mac", "disk4s2", "WDC WD20SPZX-22UA7T0", 0,
	  NULL, NULL, "device 'disk4s2' is not a whole disk: give the disk itself (disk4)", "", 0 },
	/* a volume at / or under /System on a disk that is not the boot one */
	{ "macos", "a disk with a volume mounted at /", "mac", "disk7", "LaCie Rugged", 0, NULL,
	  NULL, "disk7s2 is mounted at / (rule system-volume:", "", 0 },
	{ "macos", "a disk with a volume under /System", "mac", "disk5", "SanDisk Extreme", 0, NULL,
	  NULL, "disk5s2 is mounted at /System/Volumes/Update (rule system-volume:", "", 0 },
	/* a confirm that does not match */
	{ "macos", "confirm is only a prefix of the media name", "mac", "disk4", "WDC WD20SPZX", 0,
	  NULL, NULL, "(rule confirm:", "", 0 },
	{ "macos", "confirm in another case", "mac", "disk4", "wdc wd20spzx-22ua7t0", 0, NULL, NULL,
	  "(rule confirm:", "", 0 },
	/* another disk at the path since rig plan */
	{ "macos", "another disk at disk4 since rig plan", "mac", "disk4", "WDC WD20SPZX-22UA7T0", 0,
	  "plan", disk4_other_media, "confirm \"WDC WD20SPZX-22UA7T0\" is neither the model "
					 "(Samsung PSSD T7)", "", 0 },
	/* the identity changes after the confirmation: the rules and the
	 * confirm still pass, only the identity check before partitionDisk
	 * (or at the next layout) tells */
	{ "macos", "a disk of the same media name and another size, after the confirmation", "mac",
	  "disk4", "WDC WD20SPZX-22UA7T0", 0, "diskutil info -plist disk4", disk4_new_size,
	  "refusing to run diskutil partitionDisk disk4 GPT APFS A 1000092991488B JHFS+ B ", "", 2 },
	{ "macos", "the same disk, now internal (--allow internal), before partitionDisk", "mac",
	  "disk4", "WDC WD20SPZX-22UA7T0", SAFETY_ALLOW_INTERNAL, "diskutil info -plist disk4",
	  disk4_internal, "internal was no, is yes (rule identity:", "", 2 },
	{ "macos", "the disk is gone before partitionDisk", "mac", "disk4", "WDC WD20SPZX-22UA7T0",
	  0, "diskutil info -plist disk4", disk4_gone, "disk4 is no longer the disk that was "
						       "checked and confirmed: it is gone (Could not find disk: disk4)",
	  "", 2 },
	{ "macos", "another size between two layouts", "mac", "disk4", "WDC WD20SPZX-22UA7T0", 0,
	  "diskutil unmountDisk", disk4_new_size, "refusing to go on with disk4: disk4 is no longer "
						  "the disk that was checked and confirmed: size was "
						  "2000398934016 bytes, is 1000204886016",
	  "diskutil partitionDisk\n", 0 },
	{ "macos", "an existing image file attached by someone before hdiutil create -ov",
	  "mac-image", "image", "", 0, "hdiutil info -plist", image_file_attached,
	  "/rig-test.dmg is attached as disk20; detach it first", "", 0 },
	{ "macos", "an image's disk is another image's before partitionDisk", "mac", "image", "", 0,
	  "hdiutil attach", image_disk_other_file, "is no longer the disk of image",
	  "hdiutil create\n", 0 },
	/* controls: erased, so the rows above can fail */
	{ "macos", "a free external disk, confirmed by its media name", "mac", "disk4",
	  "WDC WD20SPZX-22UA7T0", 0, NULL, NULL, NULL,
	  "diskutil partitionDisk\ndiskutil partitionDisk\n", 0 },
	{ "macos", "an internal disk, waived", "mac", "disk3", "APPLE HDD ST1000DM003",
	  SAFETY_ALLOW_INTERNAL, NULL, NULL, NULL,
	  "diskutil partitionDisk\ndiskutil partitionDisk\n", 0 },
	{ "macos", "an existing image file, --force", "mac-image", "image", "", 0, NULL, NULL, NULL,
	  "hdiutil create\ndiskutil partitionDisk\nhdiutil create\ndiskutil partitionDisk\n", 0 },
	{ "macos", "an image target", "mac", "image", "", 0, NULL, NULL, NULL,
	  "hdiutil create\ndiskutil partitionDisk\nhdiutil create\ndiskutil partitionDisk\n", 0 },
};

/* --- the Linux driver --- */

struct fake_machine {
	const struct row *row;
	const char *root;
	struct strbuf *log;
	int changed;
	struct strbuf last_table; /* the last sgdisk --clear command */
};

/* The kernel's part of `partx --update DISK`: the partitions of the last
 * table written appear in sysfs, where they are (512-byte units). */
static void fake_partx(struct fake_machine *m, const char *disk)
{
	const char *name = strrchr(disk, '/') ? strrchr(disk, '/') + 1 : disk;
	struct strbuf ls = STRBUF_INIT;
	sb_addf(&ls, "%s/sys/block/%s/queue/logical_block_size", m->root, name);
	char *lbs = test_read_file(ls.buf, NULL);
	unsigned long long per = lbs ? strtoull(lbs, NULL, 10) / 512 : 1;
	free(lbs);
	sb_release(&ls);
	for (const char *p = m->last_table.buf; p && (p = strstr(p, "--new=")); p++) {
		unsigned n;
		unsigned long long first, last;
		if (sscanf(p, "--new=%u:%llu:%llu", &n, &first, &last) != 3)
			continue;
		struct strbuf part = STRBUF_INIT, dir = STRBUF_INIT, v = STRBUF_INIT;
		prov_linux_part_path(&part, name, n);
		sb_addf(&dir, "%s/sys/block/%s/%s", m->root, name, part.buf);
		mkdir(dir.buf, 0755);
		sb_addf(&v, "%s/start", dir.buf);
		struct strbuf num = STRBUF_INIT;
		sb_addf(&num, "%llu\n", first * per);
		test_write_file(v.buf, num.buf);
		sb_reset(&v);
		sb_reset(&num);
		sb_addf(&v, "%s/size", dir.buf);
		sb_addf(&num, "%llu\n", (last - first + 1) * per);
		test_write_file(v.buf, num.buf);
		sb_reset(&v);
		sb_addf(&v, "%s/partition", dir.buf);
		sb_reset(&num);
		sb_addf(&num, "%u\n", n);
		test_write_file(v.buf, num.buf);
		sb_release(&num);
		sb_release(&v);
		sb_release(&dir);
		sb_release(&part);
	}
}

static int fake_spawn(void *opaque, const char *const *argv, struct spawn_result *r)
{
	struct fake_machine *m = opaque;
	struct strbuf text = STRBUF_INIT;
	plat_spawn_argv_text(&text, argv);
	sb_addf(m->log, "%s\n", text.buf);
	if (!strcmp(argv[0], "sgdisk") && argv[1] && !strcmp(argv[1], "--clear")) {
		sb_reset(&m->last_table);
		sb_adds(&m->last_table, text.buf);
	}
	if (!strcmp(argv[0], "partx") && argv[1] && !strcmp(argv[1], "--update") && argv[2])
		fake_partx(m, argv[2]);
	const struct row *row = m->row;
	if (row->change && !m->changed && row->change_when && strcmp(row->change_when, "plan") &&
	    !strncmp(text.buf, row->change_when, strlen(row->change_when))) {
		row->change(m->root);
		m->changed = 1;
	}
	sb_release(&text);
	r->exited = 1;
	r->status = 0;
	r->output = xstrdup("");
	return 0;
}

static void dry_log(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	(void)opaque;
	(void)argv_text;
	(void)r;
}

static void plan_note(void *opaque, int warning, const char *text)
{
	struct strbuf *sb = opaque;
	sb_addf(sb, "%s%s\n", warning ? "! " : "# ", text);
}

/* Parse a row's plan; NULL when validation refuses it (the diagnostics in o->err). */
static struct plan *row_plan(const char *text, const struct plan_platform *platform, struct diag *d,
			     struct outcome *o)
{
	diag_init(d, "refusal.yaml", text);
	struct plan_options po = { .platform = platform };
	struct plan *p = plan_parse_text("refusal.yaml", text, strlen(text), &po, d);
	if (p && !d->nerrors)
		return p;
	/* refused by validation, before any backend is asked */
	for (size_t i = 0; i < d->n; i++) {
		char line[512];
		diag_format_item(d, i, line, sizeof(line));
		sb_addf(&o->err, "%s\n", line);
	}
	o->rc = -EINVAL;
	plan_free(p);
	return NULL;
}

/* rig plan (a dry run of prepare): what it says about the target. */
static void row_dry_plan(const struct backend_ops *ops, struct plan *p, const struct row *row,
			 const char *sysroot, struct spawner *dry, struct outcome *o)
{
	struct strbuf e = STRBUF_INIT;
	struct provision_ctx pc = { .plan = p, .run_id = "plan", .run_dir = NULL, .sp = dry,
				    .err = &e, .allow = row->allow, .sysroot = sysroot, .force = 1,
				    .note = plan_note, .note_opaque = &o->plan_note };
	if (ops->prepare(&pc) == 0)
		ops->finish(&pc);
	sb_release(&e);
}

/* rig run: prepare, then each layout provisioned and torn down, until one fails. */
static void row_run(const struct backend_ops *ops, struct provision_ctx *ctx, struct outcome *o)
{
	o->rc = ops->prepare(ctx);
	for (size_t li = 0; o->rc == 0 && li < ctx->plan->nlayouts; li++) {
		struct volume *vols = NULL;
		size_t n = 0;
		o->rc = ops->provision(ctx, li, &vols, &n);
		for (size_t i = 0; i < n; i++)
			prov_volume_release(&vols[i]);
		free(vols);
		struct strbuf te = STRBUF_INIT;
		struct provision_ctx t = *ctx;
		t.err = &te;
		if (o->rc == 0 && ops->teardown(&t, li) < 0)
			sb_addf(&o->err, "teardown: %s", te.buf);
		sb_release(&te);
	}
	if (ctx->state)
		ops->finish(ctx);
}

static int linux_driver(const struct row *row, struct outcome *o)
{
	char *tmp = test_tmpdir();
	struct strbuf root = STRBUF_INIT, run = STRBUF_INIT, fix = STRBUF_INIT, text = STRBUF_INIT;
	sb_addf(&fix, "%s/tests/fixtures/linux/%s", test_src(), row->machine);
	sb_addf(&root, "%s/machine", tmp);
	sb_addf(&run, "%s/run", tmp);
	const char *cp[] = { "cp", "-R", fix.buf, root.buf, NULL };
	CU_ASSERT_EQUAL_FATAL(pt_cmd(cp, NULL), 0);
	mkdir(run.buf, 0755);
	sb_addf(&text, "rig: 1\nname: refusal\ntarget:\n  disk: { device: %s, confirm: \"%s\" }\n"
		       "layouts:\n  - name: l\n    partitions:\n      - { name: A, fs: ext4, size: 50%% }\n"
		       "      - { name: B, fs: ext4, size: rest }\n"
		       "steps:\n  - write: { files: 1, size: 1M }\n", row->device, row->confirm);
	struct diag d;
	struct plan *p = row_plan(text.buf, NULL, &d, o);
	const struct backend_ops *ops = p ? &prov_linux_ops : NULL;

	if (ops && row->change_when && !strcmp(row->change_when, "plan")) {
		/* rig plan: what it says about the disk now; then the machine changes. */
		struct spawner dry = plat_spawner_dry(dry_log, NULL);
		dry.fake = fake_spawn; /* a dry spawner never calls it; it lets sysroot in */
		row_dry_plan(ops, p, row, root.buf, &dry, o);
		row->change(root.buf);
	}

	struct fake_machine m = { .row = row, .root = root.buf, .log = &o->log };
	sb_init(&m.last_table);
	struct spawner sp = plat_spawner_fake(fake_spawn, NULL, &m);
	struct provision_ctx ctx = { .plan = p, .run_id = "refusal", .run_dir = run.buf, .sp = &sp,
				     .err = &o->err, .yes = 1, .allow = row->allow,
				     .sysroot = root.buf };
	if (ops)
		row_run(ops, &ctx, o);
	sb_release(&m.last_table);
	plan_free(p);
	diag_release(&d);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&root);
	sb_release(&run);
	sb_release(&fix);
	sb_release(&text);
	return 0;
}

/* --- the macOS driver --- */

/*
 * The fake machines (tests/tools/fake-macos/ keeps them as files):
 *   mac          the boot disk disk0 (internal SSD; container disk1 holds /),
 *                disk3 an internal hard disk, disk4 a free external one,
 *                disk5 external with a volume at /System/Volumes/Update,
 *                disk6 a RAM disk (Virtual), disk7 external with a volume at /
 *   mac-extboot  / in container disk9 on disk8, an external SSD
 *   mac-image    mac, and a file at the image target's path (rig-test.dmg)
 */
static void mac_write(const char *root, const char *rel, const char *text)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", root, rel);
	CU_ASSERT_EQUAL(test_write_file(p.buf, text), 0);
	sb_release(&p);
}

static void mac_ctl(const char *bin, const char *const *args)
{
	struct strbuf tool = STRBUF_INIT;
	sb_addf(&tool, "%s/fake-macos", bin);
	const char *argv[12] = { tool.buf, "ctl" };
	for (size_t i = 0; args[i] && i < 8; i++)
		argv[2 + i] = args[i];
	CU_ASSERT_EQUAL(pt_cmd(argv, NULL), 0);
	sb_release(&tool);
}

static void mac_machine(const char *bin, const char *root, const char *name)
{
	struct strbuf d = STRBUF_INIT;
	const char *sub[] = { "disks", "parts", "Volumes" };
	for (size_t i = 0; i < 3; i++) {
		sb_reset(&d);
		sb_addf(&d, "%s/%s", root, sub[i]);
		CU_ASSERT_EQUAL(mkdir(d.buf, 0755), 0);
	}
	sb_release(&d);
	if (!strcmp(name, "mac-extboot")) {
		mac_write(root, "disks/disk8", "kind=physical\nsize=1000204886016\nmedia=Samsung PSSD T7\n"
					       "internal=0\nsolid=1\nbus=USB\n");
		mac_write(root, "parts/disk8", "disk8s1|EFI|msdos|EFI|20480|209715200|disk8s1|\n"
					       "disk8s2|Apple_APFS|apfs|Macintosh HD|210763776|"
					       "999994105856|disk9s1|/\n");
		mac_write(root, "disks/disk9", "kind=container\nsize=999994105856\nstore=disk8s2\n"
					       "parent=disk8\n");
		mac_write(root, "next", "10\n");
		return;
	}
	const char *boot[] = { "boot", NULL };
	mac_ctl(bin, boot);
	const char *d3[] = { "add-disk", "disk3", "1000204886016", "APPLE HDD ST1000DM003", "internal",
			     "rotational", "SATA", NULL };
	const char *d4[] = { "add-disk", "disk4", "2000398934016", "WDC WD20SPZX-22UA7T0", "external",
			     "rotational", "USB", NULL };
	const char *d5[] = { "add-disk", "disk5", "1000204886016", "SanDisk Extreme", "external",
			     "solid", "USB", NULL };
	const char *d6[] = { "add-disk", "disk6", "536870912", "RAMDisk", "external", "unknown",
			     "Disk Image", "virtual", NULL };
	const char *d7[] = { "add-disk", "disk7", "2000398934016", "LaCie Rugged", "external",
			     "rotational", "USB", NULL };
	mac_ctl(bin, d3);
	mac_ctl(bin, d4);
	mac_ctl(bin, d5);
	mac_ctl(bin, d6);
	mac_ctl(bin, d7);
	if (!strcmp(name, "mac-image"))
		mac_write(root, "../rig-test.dmg", "an image file rig did not make\n");
	mac_write(root, "parts/disk5", "disk5s1|EFI|msdos|EFI|20480|209715200|disk5s1|\n"
				       "disk5s2|Apple_HFS|hfs|Update|210763776|999994105856|disk5s2|"
				       "/System/Volumes/Update\n");
	mac_write(root, "parts/disk7", "disk7s1|EFI|msdos|EFI|20480|209715200|disk7s1|\n"
				       "disk7s2|Apple_HFS|hfs|Root|210763776|2000188194816|disk7s2|/\n");
}

struct mac_run {
	const struct row *row;
	const char *root;
	unsigned seen;
	int changed;
};

/* After each command rig runs: the machine changes after the row's one. */
static void mac_log(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	(void)r;
	struct mac_run *m = opaque;
	const struct row *row = m->row;
	if (!row->change || m->changed || !row->change_when || !strcmp(row->change_when, "plan") ||
	    strncmp(argv_text, row->change_when, strlen(row->change_when)))
		return;
	if (++m->seen < (row->change_nth ? row->change_nth : 1))
		return;
	row->change(m->root);
	m->changed = 1;
}

static int macos_driver(const struct row *row, struct outcome *o)
{
	char *tmp = test_tmpdir();
	struct strbuf root = STRBUF_INIT, bin = STRBUF_INIT, path = STRBUF_INIT, text = STRBUF_INIT,
		      calls = STRBUF_INIT;
	sb_addf(&root, "%s/fake", tmp);
	sb_adds(&bin, test_fake_macos_dir());
	sb_addf(&calls, "%s/calls.log", root.buf);
	CU_ASSERT_EQUAL_FATAL(mkdir(root.buf, 0755), 0);
	char *old_path = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	sb_addf(&path, "%s:%s", bin.buf, old_path ? old_path : "/usr/bin:/bin");
	setenv("PATH", path.buf, 1);
	setenv("RIG_FAKE_MACOS", root.buf, 1);
	mac_machine(bin.buf, root.buf, row->machine);

	sb_adds(&text, "rig: 1\nname: refusal\ntarget:\n");
	if (!strcmp(row->device, "image"))
		sb_addf(&text, "  image: { path: %s/rig-test, size: 1G }\n", tmp);
	else
		sb_addf(&text, "  disk: { device: %s, confirm: \"%s\" }\n", row->device, row->confirm);
	sb_adds(&text, "layouts:\n"
		       "  - name: l1\n    partitions:\n      - { name: A, fs: apfs, size: 50% }\n"
		       "      - { name: B, fs: hfs+, size: rest }\n"
		       "  - name: l2\n    partitions:\n      - { name: B, fs: hfs+, size: 50% }\n"
		       "      - { name: A, fs: apfs, size: rest }\n"
		       "steps:\n  - write: { files: 1, size: 1M }\n");
	struct diag d;
	struct plan *p = row_plan(text.buf, plan_platform_find("macos"), &d, o);
	if (p && row->change_when && !strcmp(row->change_when, "plan")) {
		/* rig plan reads the disk for real (the fake's queries); then it changes */
		struct spawner dry = plat_spawner_dry(dry_log, NULL);
		row_dry_plan(&prov_macos_ops, p, row, NULL, &dry, o);
		row->change(root.buf);
		unlink(calls.buf); /* the log judged is rig run's */
	}
	struct mac_run m = { .row = row, .root = root.buf };
	struct spawner sp = plat_spawner_real(mac_log, &m);
	struct provision_ctx ctx = { .plan = p, .run_id = "refusal", .run_dir = tmp, .sp = &sp,
				     .err = &o->err, .yes = 1, .force = 1, .allow = row->allow };
	if (p)
		row_run(&prov_macos_ops, &ctx, o);
	/* the fake's own record of the calls */
	char *log = test_read_file(calls.buf, NULL);
	if (log)
		sb_adds(&o->log, log);
	free(log);
	/* and nothing of rig's left mounted or attached */
	if (p && !row->refused) {
		sb_reset(&path);
		sb_addf(&path, "%s/Volumes", root.buf);
		char *ls = NULL;
		const char *argv[] = { "ls", "-A", path.buf, NULL };
		pt_cmd(argv, &ls);
		if (ls && *ls)
			sb_addf(&o->err, "left mounted: %s", ls);
		free(ls);
	}
	if (old_path)
		setenv("PATH", old_path, 1);
	free(old_path);
	unsetenv("RIG_FAKE_MACOS");
	plan_free(p);
	diag_release(&d);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&root);
	sb_release(&bin);
	sb_release(&path);
	sb_release(&text);
	sb_release(&calls);
	return 0;
}

/* --- platforms --- */

struct platform_driver {
	const char *name;
	int (*run)(const struct row *row, struct outcome *o);
	/* Commands that write to a disk: the log is judged by these. */
	const char *const *destructive;
	/* What a row refused in prepare may have run: read-only queries
	 * (NULL: nothing at all, the facts come from a recorded machine). */
	const char *const *reads;
};

static const char *const linux_destructive[] = { "sgdisk", "mkfs.", "wipefs", "dd", NULL };
static const char *const macos_destructive[] = {
	"diskutil partitionDisk", "diskutil eraseDisk", "diskutil eraseVolume",
	"diskutil apfs resizeContainer", "diskutil apfs deleteContainer", "diskutil apfs eraseVolume",
	"diskutil apfs deleteVolume",
	"diskutil zeroDisk", "diskutil secureErase", "hdiutil create", NULL
};
static const char *const macos_reads[] = {
	"diskutil info -plist ", "diskutil list -plist", "diskutil apfs list -plist",
	"hdiutil info -plist", NULL
};

static const struct platform_driver drivers[] = {
	{ "linux", linux_driver, linux_destructive, NULL },
	{ "macos", macos_driver, macos_destructive, macos_reads },
};

/* Whether a line starts with one of names. */
static int starts_any(const char *line, const char *const *names)
{
	for (size_t k = 0; names[k]; k++)
		if (!strncmp(line, names[k], strlen(names[k])))
			return 1;
	return 0;
}

/* Whether every line of log is one of the read-only queries. */
static int only_reads(const char *log, const char *const *reads)
{
	for (const char *line = log; *line;) {
		size_t n = strcspn(line, "\n");
		if (!reads || !starts_any(line, reads))
			return 0;
		line += n + (line[n] == '\n');
	}
	return 1;
}

/* The destructive commands of a log, each as its first two words. */
static void destructive_of(const char *log, const char *const *names, struct strbuf *out)
{
	for (const char *line = log; *line;) {
		size_t n = strcspn(line, "\n");
		if (starts_any(line, names)) {
			const char *sp1 = memchr(line, ' ', n);
			const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - line)) : NULL;
			size_t w = sp2 ? (size_t)(sp2 - line) : n;
			sb_add(out, line, w);
			sb_addch(out, '\n');
		}
		line += n + (line[n] == '\n');
	}
}

static void test_refusals(void)
{
	size_t ran = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		const struct platform_driver *drv = NULL;
		for (size_t k = 0; k < sizeof(drivers) / sizeof(drivers[0]); k++)
			if (!strcmp(drivers[k].name, r->platform))
				drv = &drivers[k];
		CU_ASSERT_PTR_NOT_NULL_FATAL(drv);
		struct outcome o = { 0 };
		sb_init(&o.err);
		sb_init(&o.log);
		sb_init(&o.plan_note);
		drv->run(r, &o);
		struct strbuf got = STRBUF_INIT;
		destructive_of(o.log.buf ? o.log.buf : "", drv->destructive, &got);
		int ok = r->refused ? o.rc < 0 && o.err.buf && strstr(o.err.buf, r->refused)
				    : o.rc == 0 && !o.err.len;
		ok = ok && !strcmp(got.buf ? got.buf : "", r->destructive);
		/* refused before anything was written: only queries ran (Linux: nothing) */
		if (r->refused && !*r->destructive)
			ok = ok && only_reads(o.log.buf ? o.log.buf : "", drv->reads);
		/* a "plan" row: rig plan saw the disk as it was, and let it pass */
		if (r->change_when && !strcmp(r->change_when, "plan"))
			ok = ok && o.plan_note.buf && strstr(o.plan_note.buf, "passes every safety rule");
		if (!ok)
			fprintf(stderr, "\n%s row %zu (%s): %s %s\n  rc %d, error: %s\n  expected: %s\n"
					"  destructive commands expected:\n%s  run:\n%s  log:\n%s  rig plan:\n%s",
				r->platform, i, r->danger, r->device, r->confirm, o.rc,
				o.err.buf ? o.err.buf : "", r->refused ? r->refused : "(not refused)",
				r->destructive, got.buf ? got.buf : "", o.log.buf ? o.log.buf : "",
				o.plan_note.buf ? o.plan_note.buf : "");
		CU_ASSERT_TRUE(ok);
		ran++;
		sb_release(&got);
		sb_release(&o.err);
		sb_release(&o.log);
		sb_release(&o.plan_note);
	}
	CU_ASSERT_EQUAL(ran, sizeof(rows) / sizeof(rows[0]));
}

static void test_sysroot_needs_fake(void)
{
	/* A recorded machine with a spawner that would run commands: refused. */
	const char *text = "rig: 1\nname: r\ntarget:\n  disk: { device: /dev/sdc, confirm: WDZ123AB }\n"
			   "layouts:\n  - name: l\n    partitions:\n      - { name: A, fs: ext4, size: rest }\n"
			   "steps:\n  - write: {}\n";
	struct diag d;
	diag_init(&d, "r.yaml", text);
	struct plan_options po = { 0 };
	struct plan *p = plan_parse_text("r.yaml", text, strlen(text), &po, &d);
	CU_ASSERT_TRUE_FATAL(p && d.nerrors == 0);
	struct strbuf root = STRBUF_INIT, e = STRBUF_INIT;
	sb_addf(&root, "%s/tests/fixtures/linux/workstation", test_src());
	struct spawner sp = plat_spawner_real(NULL, NULL);
	struct provision_ctx ctx = { .plan = p, .run_id = "r", .run_dir = "/tmp", .sp = &sp,
				     .err = &e, .yes = 1, .sysroot = root.buf };
	CU_ASSERT_EQUAL(prov_linux_ops.prepare(&ctx), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "need a spawner that runs nothing"));
	CU_ASSERT_PTR_NULL(ctx.state);
	sb_release(&e);
	sb_release(&root);
	plan_free(p);
	diag_release(&d);
}

void register_refusal_tests(void)
{
	CU_pSuite s = test_suite_e2e("refusal suite: dangerous targets, judged by the command log");
	test_add(s, "every row refused before a destructive command (or erased: controls)",
		 test_refusals);
	test_add(s, "a recorded machine needs a spawner that runs nothing", test_sysroot_needs_fake);
}
