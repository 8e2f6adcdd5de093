/*
 * The macOS platform as plans know it (plan/platform.h): its file systems,
 * with the names diskutil gives them, and a whole disk's identifier. Its
 * driver is provision/macos/.
 */
#include <stddef.h>
#include <string.h>

#include "lib/strbuf.h"
#include "plan/platform.h"

/* apfs and hfs+ are the personalities diskutil makes by default, which fold
 * case; apfsx and jhfsx are their case-sensitive ones (provision/macos/macos_layout.c maps
 * each name to its personality). */
/* snapshots: `tmutil localsnapshot`; defrag: `diskutil apfs defragment`
 * (provision/macos/macos_cond.c) */
#define MAC_APFS_FLAGS (PLAN_FS_SNAPSHOTS | PLAN_FS_DEFRAG)
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
static const struct plan_fs macos_fs[] = {
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

const struct plan_platform plan_platform_macos = {
	.name = "macos",
	.fs = macos_fs,
	.abilities = PLAN_CAN_KEEP | PLAN_CAN_REMOUNT | PLAN_CAN_INDEX,
	.device_check = macos_device_check,
};
