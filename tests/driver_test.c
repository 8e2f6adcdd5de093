/*
 * Tests of the platform drivers' descriptors (provision/driver.h) and of
 * what the rest of rig asks them: every driver is whole, file-system names
 * are unique across drivers (a plan's file systems name its platform),
 * device names, keep abilities, and the macOS query of who uses a disk
 * (lsof -F output, parsed).
 */
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "plan/platform.h"
#include "provision/driver.h"
#include "provision/engine.h"
#include "provision/macos/macos.h"
#include "provision/provision.h"
#include "test.h"

static void test_every_driver_whole(void)
{
	size_t n = 0;
	for (size_t i = 0; prov_drivers[i]; i++, n++) {
		const struct prov_driver *d = prov_drivers[i];
		const struct plan_platform *pl = d->platform;
		CU_ASSERT_PTR_NOT_NULL_FATAL(pl);
		CU_ASSERT_PTR_NOT_NULL_FATAL(pl->name);
		CU_ASSERT_PTR_EQUAL(prov_driver_of(plan_platform_find(pl->name)), d);
		CU_ASSERT_PTR_EQUAL(plan_platform_find(pl->name), pl);
		CU_ASSERT_PTR_EQUAL(prov_driver_of(pl), d);
		CU_ASSERT_PTR_NOT_NULL(pl->device_check);
		CU_ASSERT_PTR_NOT_NULL(d->devices_report);
		CU_ASSERT_PTR_NOT_NULL(d->procs_using);
		CU_ASSERT_PTR_NOT_NULL_FATAL(d->ops);
		CU_ASSERT_PTR_NOT_NULL(d->ops->prepare);
		CU_ASSERT_PTR_NOT_NULL(d->ops->provision);
		CU_ASSERT_PTR_NOT_NULL(d->ops->teardown);
		CU_ASSERT_EQUAL(!!(pl->abilities & PLAN_CAN_REMOUNT), d->ops->remount != NULL);
		CU_ASSERT_PTR_NOT_NULL(d->dry_legend);
		CU_ASSERT_PTR_NOT_NULL(d->dry_legend_image);
		/* every primitive but format (diskutil formats as it partitions) */
		const struct prov_prims *pr = d->prims;
		CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
		CU_ASSERT(pr->fit && pr->begin && pr->create_image && pr->attach && pr->open_disk &&
			  pr->partition && pr->mount && pr->conditions && pr->volume && pr->volumes &&
			  pr->unmount && pr->end_volumes && pr->detach && pr->delete_image &&
			  pr->release_disk && pr->left && pr->free_state);
		/* a resumed run: the engine decides, the driver finds, verifies, adopts */
		CU_ASSERT_PTR_NOT_NULL_FATAL(pr->resume);
		CU_ASSERT(pr->resume->find && pr->resume->verify && pr->resume->adopt);
		/* the engine drives them: the layout-level ops are its own */
		CU_ASSERT(d->ops->provision == prov_engine_provision);
		CU_ASSERT(d->ops->teardown == prov_engine_teardown);
		CU_ASSERT(d->ops->finish == prov_engine_finish);
		CU_ASSERT_PTR_NOT_NULL_FATAL(pl->fs[0].name);
		int keeps = 0;
		for (const struct plan_fs *f = pl->fs; f->name; f++) {
			/* One driver per file-system name: it decides a plan's platform. */
			CU_ASSERT_PTR_EQUAL(plan_platform_of_fs(f->name), pl);
			CU_ASSERT_PTR_EQUAL(plan_platform_fs(pl, f->name), f);
			CU_ASSERT(f->label_max > 0);
			/* an alias names one file system of one driver */
			for (const char *const *a = f->aliases; a && *a; a++)
				CU_ASSERT_PTR_EQUAL(plan_platform_of_fs(*a), pl);
			keeps |= f->keep_how != NULL;
		}
		/* A driver that keeps partitions says how, for some file system. */
		CU_ASSERT_EQUAL(keeps, !!(pl->abilities & PLAN_CAN_KEEP));
	}
	CU_ASSERT(n >= 2);
	CU_ASSERT_PTR_NULL(plan_platforms[n]); /* one platform per driver */
	CU_ASSERT_PTR_NULL(prov_driver_of(plan_platform_find("plan9")));
	CU_ASSERT_PTR_NULL(prov_driver_of(NULL));
	CU_ASSERT_PTR_NULL(prov_driver_of(plan_platform_find(NULL)));
	CU_ASSERT_PTR_NULL(plan_platform_of_fs("zfs"));
	struct strbuf names = STRBUF_INIT;
	plan_platform_names(&names);
	CU_ASSERT_STRING_EQUAL(names.buf, "linux or macos");
	sb_release(&names);
}

static void test_device_names(void)
{
	static const struct {
		const char *driver, *dev, *why; /* why: NULL accepted, else part of the reason */
	} rows[] = {
		{ "linux", "/dev/sdb", NULL },
		{ "linux", "/dev/disk/by-id/usb-WD_My_Passport_0820-0:0", NULL },
		{ "linux", "sdb", "give the whole disk's device path" },
		{ "linux", "/dev/../etc/passwd", "give the whole disk's device path" },
		{ "linux", "/dev/sd b", "character ' ' at offset 7" },
		{ "macos", "disk4", NULL },
		{ "macos", "disk4s2", "is not a whole disk: give the disk itself (disk4)" },
		{ "macos", "/dev/rdisk4", "give the macos disk identifier 'disk4'" },
		{ "macos", "/dev/sdb", "give a whole-disk identifier such as disk4" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct plan_platform *d = plan_platform_find(rows[i].driver);
		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		struct strbuf why = STRBUF_INIT;
		int rc = d->device_check(rows[i].dev, &why);
		if (rows[i].why) {
			CU_ASSERT_EQUAL(rc, -1);
			CU_ASSERT_PTR_NOT_NULL(strstr(why.buf, rows[i].why));
		} else {
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_EQUAL(why.len, 0);
		}
		sb_release(&why);
	}
}

/* lsof -F pcn as macOS prints it: a p line per process, c its command,
 * then f and n lines per open file (fcwd for the working folder). */
static const char lsof_text[] =
	"p1\ncl aunchd\nfcwd\nn/\nftxt\nn/sbin/launchd\n"
	"p412\nchdiutil\nfcwd\nn/Users/me\nf3\nn/Users/me/rig/a.dmg\n"
	"p413\ncrig\nfcwd\nn/Volumes/A/rig-20261201\n"
	"p414\ncfind\nfcwd\nn/Volumes/AB\nf4\nn/Users/me/rig/a.dmg2\n"
	"p500\ncself\nfcwd\nn/Volumes/A\n";

static void test_lsof_users(void)
{
	const char *needles[] = { "/Users/me/rig/a.dmg", "/Volumes/A", NULL };
	struct strbuf what = STRBUF_INIT;
	/* hdiutil holds the image, rig works below the volume; /Volumes/AB and
	 * a.dmg2 are other names; 500 is this process. */
	CU_ASSERT_EQUAL(prov_mac_lsof_users(lsof_text, 500, needles, &what), 2);
	CU_ASSERT_STRING_EQUAL(what.buf, "PID 412 (hdiutil), PID 413 (rig)");
	CU_ASSERT_EQUAL(prov_mac_lsof_users(lsof_text, 413, needles, NULL), 2); /* 500 now counts */
	const char *none[] = { "/Volumes/B", NULL };
	CU_ASSERT_EQUAL(prov_mac_lsof_users(lsof_text, 1, none, NULL), 0);
	CU_ASSERT_EQUAL(prov_mac_lsof_users("", 1, needles, NULL), 0);
	CU_ASSERT_EQUAL(prov_mac_lsof_users("lsof: WARNING: can't stat()\n", 1, needles, NULL), 0);
	sb_release(&what);
}

/* The Linux driver finds a process by an argument (as /proc shows it). */
static void test_linux_procs(void)
{
	const struct prov_driver *d = prov_driver_of(plan_platform_find("linux"));
	char *dir = test_tmpdir();
	struct strbuf needle = STRBUF_INIT;
	sb_addf(&needle, "%s/held", dir);
	pid_t pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		execlp("sh", "sh", "-c", "sleep 30", "sh", needle.buf, (char *)NULL);
		_exit(127);
	}
	const char *needles[] = { needle.buf, NULL };
	struct strbuf what = STRBUF_INIT;
	int found = 0;
	for (int i = 0; i < 100 && !found; i++) { /* until the child has exec'd */
		sb_reset(&what);
		found = d->procs_using(needles, &what);
		if (!found)
			usleep(10000);
	}
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(what.buf, "sh -c sleep 30 sh"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CU_ASSERT_EQUAL(d->procs_using(needles, NULL), 0);
	sb_release(&what);
	sb_release(&needle);
	test_rmtree(dir);
	free(dir);
}

void register_driver_tests(void)
{
	CU_pSuite s = test_suite("platform drivers (descriptors)");
	test_add(s, "every driver is whole; file systems name one driver", test_every_driver_whole);
	test_add(s, "device names each driver accepts and refuses", test_device_names);
	test_add(s, "macOS: who uses a disk, from lsof -F", test_lsof_users);
	test_add(s, "Linux: who uses a disk, from /proc", test_linux_procs);
}
