/*
 * The Linux platform as plans know it (plan/platform.h): its file systems
 * and a whole disk's device path. Its driver is provision/linux/.
 */
#include <stddef.h>
#include <string.h>

#include "lib/strbuf.h"
#include "plan/platform.h"

/* Every Linux file system here tells names apart by case (ext4's casefold
 * option, the case-insensitive kind, is not made by rig). */
static const struct plan_fs linux_fs[] = {
	{ .name = "ext4", .case_sensitive = 1, .label_max = 16 },
	{ .name = "xfs", .case_sensitive = 1, .label_max = 12 },
	/* snapshots: `btrfs subvolume snapshot -r`; defrag: the autodefrag
	 * mount option (provision/linux/linux_cond.c) */
	{ .name = "btrfs", .case_sensitive = 1, .label_max = 64,
	  .flags = PLAN_FS_SNAPSHOTS | PLAN_FS_DEFRAG },
	{ .name = NULL },
};

/* /dev/sdb, /dev/nvme0n1, /dev/disk/by-id/usb-WD_My_Passport_0820-0:0 */
static int linux_device_check(const char *dev, struct strbuf *why)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789/_.:+-@,=";
	size_t bad = strspn(dev, chars);
	if (strncmp(dev, "/dev/", 5) || !dev[5] || strstr(dev, "..")) {
		sb_addf(why, "invalid device '%s' for linux: give the whole disk's device path, "
			     "such as /dev/sdb", dev);
		return -1;
	}
	if (dev[bad]) {
		sb_addf(why, "invalid device '%s' for linux: character '%c' at offset %zu; a device "
			     "path has letters, digits and / _ . : + - @ , =", dev, dev[bad], bad);
		return -1;
	}
	return 0;
}

const struct plan_platform plan_platform_linux = {
	.name = "linux",
	.fs = linux_fs,
	.abilities = PLAN_CAN_REMOUNT,
	.device_check = linux_device_check,
};
