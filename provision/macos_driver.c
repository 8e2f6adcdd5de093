/*
 * The macOS driver's descriptor (driver.h): disk images made with hdiutil
 * and whole disks, partitioned and formatted by diskutil (macos.c,
 * macos_layout.c), facts from diskutil's plists (macos_facts.c), who uses
 * a disk from lsof (macos_procs.c). Portable C: on Linux it runs the fake
 * diskutil and hdiutil of the tests.
 */
#include <string.h>

#include "../rig/util/spawn.h"
#include "../rig/util/strbuf.h"
#include "driver.h"
#include "macos.h"
#include "provision.h"

/* apfs and hfs+ are the personalities diskutil makes by default, which fold
 * case; apfsx and jhfsx are their case-sensitive ones (macos_layout.c maps
 * each name to its personality). */
/* snapshots: `tmutil localsnapshot`; defrag: `diskutil apfs defragment`
 * (macos_cond.c) */
#define MAC_APFS_FLAGS (PROV_FS_SNAPSHOTS | PROV_FS_DEFRAG)
static const struct prov_fs macos_fs[] = {
	{ "apfs", 0, "diskutil apfs resizeContainer", 64, NULL, MAC_APFS_FLAGS },
	{ "hfs+", 0, "diskutil resizeVolume", 64, NULL, 0 },
	{ "apfsx", 1, "diskutil apfs resizeContainer", 64, NULL, MAC_APFS_FLAGS },
	{ "jhfsx", 1, "diskutil resizeVolume", 64, NULL, 0 },
	{ "exfat", 0, NULL, 15, NULL, 0 },
	{ "fat32", 0, NULL, 11, ".+", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* A whole-disk identifier: disk4, not /dev/disk4 nor disk4s2. */
static int macos_device_check(const char *dev, struct strbuf *why)
{
	const char *s = dev;
	if (!strncmp(s, "/dev/r", 6))
		s += 6;
	else if (!strncmp(s, "/dev/", 5))
		s += 5;
	size_t digits = strncmp(s, "disk", 4) ? 0 : strspn(s + 4, "0123456789");
	if (!digits)
		sb_addf(why, "invalid device '%s' for macos: give a whole-disk identifier such as "
			     "disk4 (see diskutil list)", dev);
	else if (s[4 + digits])
		sb_addf(why, "device '%s' is not a whole disk: give the disk itself (disk%.*s)", dev,
			(int)digits, s + 4);
	else if (s != dev)
		sb_addf(why, "give the macos disk identifier '%s', not the device path '%s'", s, dev);
	else
		return 0;
	return -1;
}

static void macos_devices(struct strbuf *out)
{
	struct spawner sp = spawner_fault(spawner_real(NULL, NULL));
	macos_devices_report(mac_spawn_query, &sp, out);
}

const struct prov_driver prov_driver_macos = {
	.name = "macos",
	.fs = macos_fs,
	.abilities = PROV_CAN_KEEP | PROV_CAN_REMOUNT | PROV_CAN_INDEX,
	.device_check = macos_device_check,
	.devices_report = macos_devices,
	.procs_using = mac_procs_using,
	.ops = &provision_macos_ops,
};
