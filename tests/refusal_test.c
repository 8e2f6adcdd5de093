/*
 * The refusal suite: dangerous targets, each one row of a table, driven
 * through the real provisioning backend (prepare, provision, teardown) on
 * a recorded machine, and judged by the command log: a refused target is
 * refused before any destructive command is spawned.
 *
 * Nothing here runs a command. The backend reads its disk facts from a
 * copy of a recorded machine (tests/fixtures/linux/, provision_ctx.sysroot)
 * and spawns through a fake (spawner.fake) that only records each command
 * and plays the kernel's part: `partx --update` makes the partitions the
 * last `sgdisk --clear` wrote appear in the copy's sysfs. A row may change
 * the machine between `rig plan` and `rig run`, or after a given command
 * (another disk now answers at the path: serial, model or size differ).
 *
 * Rows are per platform: a driver per platform runs a row and returns the
 * command log; the macOS backend adds its driver (fake diskutil/hdiutil)
 * and its rows (the boot container, internal disks) to the same table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "provision/linux.h"
#include "provision/provision.h"
#include "provision_util.h"
#include "rig/diag.h"
#include "rig/plan.h"
#include "rig/util/spawn.h"
#include "rig/util/strbuf.h"
#include "rig/util/xalloc.h"
#include "test.h"

/* A change to the recorded machine (root: the copy). */
typedef void (*change_fn)(const char *root);

struct row {
	const char *platform;    /* "linux"; "macos" rows come with the macOS backend */
	const char *danger;      /* in words, for failure messages */
	const char *machine;     /* tests/fixtures/PLATFORM/MACHINE */
	const char *device;
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

/* --- the table --- */

static const struct row rows[] = {
	/* the boot disk: directly, through LVM, as a whole-disk file system */
	{ "linux", "the disk holding / through LVM", "workstation", "/dev/sda",
	  "Samsung SSD 860 EVO 500GB", 0, NULL, NULL, "(rule root-disk:", "" },
	{ "linux", "the boot disk of a VM, / on it directly", "vm", "/dev/vda", "overlayblk", 0,
	  NULL, NULL, "/ is mounted from vda (rule root-disk:", "" },
	{ "linux", "the boot NVMe disk of a laptop (btrfs root)", "laptop", "/dev/nvme0n1",
	  "20034D801234", 0, NULL, NULL, "(rule root-disk:", "" },
	{ "linux", "the device mapper volume holding /", "workstation", "/dev/dm-0", "x",
	  SAFETY_ALLOW_VIRTUAL, NULL, NULL, "(rule root-disk:", "" },
	/* a mounted disk, a disk in use */
	{ "linux", "a disk with a mounted file system", "workstation", "/dev/sdb",
	  "WDC WD20SPZX-22UA7T0", 0, NULL, NULL, "sdb1 is mounted on /media/back up (rule mounted:",
	  "" },
	{ "linux", "a disk with active swap", "workstation", "/dev/sdd", "Z5AB1234", 0, NULL, NULL,
	  "(rule in-use:", "" },
	{ "linux", "a RAID member", "workstation", "/dev/sde", "JR10006P0ABCDE", 0, NULL, NULL,
	  "(rule in-use:", "" },
	/* virtual disks, with and without the waiver for another rule */
	{ "linux", "a ram disk", "workstation", "/dev/ram0", "x", 0, NULL, NULL,
	  "ram0 is a virtual device (rule virtual:", "" },
	{ "linux", "a zram device", "vm", "/dev/zram0", "x", SAFETY_ALLOW_LOOP, NULL, NULL,
	  "zram0 has no medium (size 0) (rule no-medium:", "" },
	{ "linux", "a loop device rig did not attach", "workstation", "/dev/loop3",
	  "/var/tmp/disk.img", SAFETY_ALLOW_VIRTUAL, NULL, NULL, "(rule loop:", "" },
	/* Internal disks: Linux cannot tell internal from external, so the
	 * internal rule is the macOS rows' (safety_test checks the rule). */
	/* a partition named instead of a whole disk */
	{ "linux", "a partition instead of its disk", "workstation", "/dev/sdc1",
	  "ST2000LM007-1R81", 0, NULL, NULL, "sdc1 is a partition of sdc; give the whole disk", "" },
	{ "linux", "a partition of the boot disk", "laptop", "/dev/nvme0n1p2", "20034D801234", 0,
	  NULL, NULL, "(rule whole-disk:", "" },
	/* a read-only device, a device that does not exist */
	{ "linux", "a read-only DVD drive", "workstation", "/dev/sr0", "DVD-RW DRU-870S", 0, NULL,
	  NULL, "(rule read-only:", "" },
	{ "linux", "a disk that is not there", "workstation", "/dev/sdz", "x", 0, NULL, NULL,
	  "(rule exists:", "" },
	/* a confirm that does not match: a prefix, another case, empty */
	{ "linux", "confirm is only a prefix of the model", "workstation", "/dev/sdc", "ST2000LM007",
	  0, NULL, NULL, "confirm \"ST2000LM007\" is neither the model", "" },
	{ "linux", "confirm in another case", "workstation", "/dev/sdc", "st2000lm007-1r81", 0, NULL,
	  NULL, "(rule confirm:", "" },
	{ "linux", "confirm empty", "workstation", "/dev/sdc", "", 0, NULL, NULL,
	  "refusal.yaml:4:38: error: 'confirm' is empty", "" },
	/* the path names another disk at `rig run` than at `rig plan` */
	{ "linux", "another disk at the path since rig plan", "workstation", "/dev/sdc", "WDZ123AB",
	  0, "plan", sdc_other_disk, "confirm \"WDZ123AB\" is neither the model (WDC WD40EFRX-68N) "
				     "nor the serial (WD-WCC7K0ABCDEF)", "" },
	/* the identity changes during provisioning: checked before every
	 * destructive command, refused before the next one */
	{ "linux", "another unit of the same model after sgdisk --zap-all", "workstation", "/dev/sdc",
	  "ST2000LM007-1R81", 0, "sgdisk --zap-all", sdc_new_serial,
	  "refusing to run sgdisk --clear --set-alignment=2048 ", "sgdisk --zap-all\n" },
	{ "linux", "the size changes before mkfs", "workstation", "/dev/sdc", "WDZ123AB", 0,
	  "partx --update", sdc_new_size, "size was 2000398934016 bytes, is 1000204886016",
	  "sgdisk --zap-all\nsgdisk --clear\n" },
	{ "linux", "the disk is gone before the second mkfs", "workstation", "/dev/sdc", "WDZ123AB",
	  0, "mount -t ext4 /dev/sdc1", sdc_gone, "is no longer the disk that was checked and "
						  "confirmed: it is gone",
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\n" },
	/* controls: the same disk, unchanged, is erased (so the rows above can fail) */
	{ "linux", "a free disk, confirmed by its model", "workstation", "/dev/sdc",
	  "ST2000LM007-1R81", 0, NULL, NULL, NULL,
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\nmkfs.ext4 -F\n" },
	{ "linux", "a free NVMe disk, confirmed by its serial", "workstation", "/dev/nvme0n1",
	  "S5GXNF0R123456", 0, NULL, NULL, NULL,
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\nmkfs.ext4 -F\n" },
	{ "linux", "a loop device, waived and confirmed by its backing file", "workstation",
	  "/dev/loop3", "/var/tmp/disk.img", SAFETY_ALLOW_LOOP, NULL, NULL, NULL,
	  "sgdisk --zap-all\nsgdisk --clear\nmkfs.ext4 -F\nmkfs.ext4 -F\n" },
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
		linux_part_path(&part, name, n);
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
	spawn_argv_text(&text, argv);
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
	diag_init(&d, "refusal.yaml", text.buf);
	struct plan_options po = { 0 };
	struct plan *p = plan_parse_text("refusal.yaml", text.buf, text.len, &po, &d);
	const struct backend_ops *ops = &provision_linux_ops;
	if (!p || d.nerrors) {
		/* refused by validation, before any backend is asked */
		for (size_t i = 0; i < d.n; i++) {
			char line[512];
			diag_format_item(&d, i, line, sizeof(line));
			sb_addf(&o->err, "%s\n", line);
		}
		o->rc = -EINVAL;
		ops = NULL;
	}

	if (ops && row->change_when && !strcmp(row->change_when, "plan")) {
		/* rig plan: what it says about the disk now; then the machine changes. */
		struct spawner dry = { .dry_run = 1, .log = dry_log };
		struct strbuf e = STRBUF_INIT;
		struct provision_ctx pc = { .plan = p, .run_id = "plan", .run_dir = NULL, .sp = &dry,
					    .err = &e, .allow = row->allow, .sysroot = root.buf,
					    .note = plan_note, .note_opaque = &o->plan_note };
		dry.fake = fake_spawn; /* never called in dry-run mode; lets sysroot in */
		if (ops->prepare(&pc) == 0)
			ops->finish(&pc);
		sb_release(&e);
		row->change(root.buf);
	}

	struct fake_machine m = { .row = row, .root = root.buf, .log = &o->log };
	sb_init(&m.last_table);
	struct spawner sp = { .fake = fake_spawn, .opaque = &m };
	struct provision_ctx ctx = { .plan = p, .run_id = "refusal", .run_dir = run.buf, .sp = &sp,
				     .err = &o->err, .yes = 1, .allow = row->allow,
				     .sysroot = root.buf };
	if (ops)
		o->rc = ops->prepare(&ctx);
	if (ops && o->rc == 0) {
		struct volume *vols = NULL;
		size_t n = 0;
		o->rc = ops->provision(&ctx, 0, &vols, &n);
		for (size_t i = 0; i < n; i++)
			volume_release(&vols[i]);
		free(vols);
		struct strbuf te = STRBUF_INIT;
		struct provision_ctx t = ctx;
		t.err = &te;
		if (o->rc == 0 && ops->teardown(&t, 0) < 0)
			sb_addf(&o->err, "teardown: %s", te.buf);
		sb_release(&te);
		ops->finish(&ctx);
	}
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

/* --- platforms --- */

struct platform_driver {
	const char *name;
	int (*run)(const struct row *row, struct outcome *o);
	/* Commands that write to a disk: the log is judged by these. */
	const char *const *destructive;
};

static const char *const linux_destructive[] = { "sgdisk", "mkfs.", "wipefs", "dd", NULL };

static const struct platform_driver drivers[] = {
	{ "linux", linux_driver, linux_destructive },
};

/* The destructive commands of a log, each as its first two words. */
static void destructive_of(const char *log, const char *const *names, struct strbuf *out)
{
	for (const char *line = log; *line;) {
		size_t n = strcspn(line, "\n");
		int hit = 0;
		for (size_t k = 0; names[k] && !hit; k++)
			hit = !strncmp(line, names[k], strlen(names[k]));
		if (hit) {
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
		/* refused in prepare: nothing at all was spawned */
		if (r->refused && !*r->destructive)
			ok = ok && !o.log.len;
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
	struct spawner sp = { 0 };
	struct provision_ctx ctx = { .plan = p, .run_id = "r", .run_dir = "/tmp", .sp = &sp,
				     .err = &e, .yes = 1, .sysroot = root.buf };
	CU_ASSERT_EQUAL(provision_linux_ops.prepare(&ctx), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, "need a spawner that runs nothing"));
	CU_ASSERT_PTR_NULL(ctx.state);
	sb_release(&e);
	sb_release(&root);
	plan_free(p);
	diag_release(&d);
}

void register_refusal_tests(void)
{
	CU_pSuite s = test_suite("refusal suite: dangerous targets, judged by the command log");
	test_add(s, "every row refused before a destructive command (or erased: controls)",
		 test_refusals);
	test_add(s, "a recorded machine needs a spawner that runs nothing", test_sysroot_needs_fake);
}
