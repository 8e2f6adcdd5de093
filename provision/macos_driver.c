/*
 * The macOS driver's descriptor (driver.h): disk images made with hdiutil
 * and whole disks, partitioned and formatted by diskutil (macos.c,
 * macos_layout.c), facts from diskutil's plists (macos_facts.c), who uses
 * a disk from lsof (macos_procs.c). Portable C: on Linux it runs the fake
 * diskutil and hdiutil of the tests.
 */
#include <string.h>

#include "../rig/module.h"
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
/* Aliases: the personalities and short names of `diskutil listFilesystems`
 * (macos-reference.md, [LFS]), which users copy from diskutil; matched
 * without case, as diskutil matches them. Plain "HFS+" is not one: diskutil
 * makes it without a journal, rig's hfs+ is Journaled HFS+. */
static const char *const apfs_names[] = { "APFS", "APFSI", NULL };
static const char *const apfsx_names[] = { "APFSX", "Case-sensitive APFS", NULL };
static const char *const hfs_names[] = { "JHFS+", "Journaled HFS+", NULL };
static const char *const jhfsx_names[] = { "JHFSX", "Case-sensitive Journaled HFS+", NULL };
static const char *const exfat_names[] = { "ExFAT", NULL };
static const char *const fat32_names[] = { "FAT32", "MS-DOS FAT32", NULL };
static const struct prov_fs macos_fs[] = {
	{ .name = "apfs", .aliases = apfs_names, .keep_how = "diskutil apfs resizeContainer",
	  .label_max = 64, .flags = MAC_APFS_FLAGS },
	{ .name = "hfs+", .aliases = hfs_names, .keep_how = "diskutil resizeVolume",
	  .label_max = 64 },
	{ .name = "apfsx", .aliases = apfsx_names, .case_sensitive = 1,
	  .keep_how = "diskutil apfs resizeContainer", .label_max = 64, .flags = MAC_APFS_FLAGS },
	{ .name = "jhfsx", .aliases = jhfsx_names, .case_sensitive = 1,
	  .keep_how = "diskutil resizeVolume", .label_max = 64 },
	{ .name = "exfat", .aliases = exfat_names, .label_max = 15 },
	{ .name = "fat32", .aliases = fat32_names, .label_max = 11, .label_bad = ".+" },
	{ .name = NULL },
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

/* A read/write HFS+ image of the folder, then resized (the article 004's
 * item1.dmg: `hdiutil resize -size 2g`); hdiutil's `b` is 512-byte sectors. */
static const char *const macos_mkimage[] = { "hdiutil", "create", "-srcfolder", "{folder}",
					     "-format", "UDRW", "-fs", "HFS+", "-volname", "rig-pack",
					     "-ov", "{image}", NULL };
static const char *const macos_resize[] = { "hdiutil", "resize", "-size", "{size}", "{image}",
					    NULL };
static const struct rig_imaging macos_imaging = {
	.ext = "dmg", .argv = { macos_mkimage, macos_resize }, .size_unit = 512,
	.size_suffix = "b",
};

const struct prov_driver prov_driver_macos = {
	.name = "macos",
	.fs = macos_fs,
	.abilities = PROV_CAN_KEEP | PROV_CAN_REMOUNT | PROV_CAN_INDEX,
	.imaging = &macos_imaging,
	.device_check = macos_device_check,
	.devices_report = macos_devices,
	.procs_using = mac_procs_using,
	.dry_legend = "volumes stay where diskutil mounts them, /Volumes/NAME",
	.dry_legend_image = "diskN stands for the disk hdiutil attaches at run time",
	.ops = &provision_macos_ops,
	.prims = &macos_prims,
};
