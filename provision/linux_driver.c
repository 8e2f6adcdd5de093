/*
 * The Linux driver's descriptor (driver.h): image files on loop devices
 * and whole disks, partitioned with sgdisk and formatted with mkfs.*
 * (linux.c, linux_target.c), facts from /sys and /proc (linux_facts.c).
 */
#include <string.h>

#include "../rig/module.h"
#include "../rig/util/strbuf.h"
#include "driver.h"
#include "linux.h"
#include "provision.h"

/* Every Linux file system here tells names apart by case (ext4's casefold
 * option, the case-insensitive kind, is not made by rig). */
static const struct prov_fs linux_fs[] = {
	{ .name = "ext4", .case_sensitive = 1, .label_max = 16 },
	{ .name = "xfs", .case_sensitive = 1, .label_max = 12 },
	/* snapshots: `btrfs subvolume snapshot -r`; defrag: the autodefrag
	 * mount option (linux_cond.c) */
	{ .name = "btrfs", .case_sensitive = 1, .label_max = 64,
	  .flags = PROV_FS_SNAPSHOTS | PROV_FS_DEFRAG },
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

static void linux_devices(struct strbuf *out)
{
	linux_devices_report("", out);
}

static int linux_procs(const char *const *needles, struct strbuf *what)
{
	return linux_procs_using("", needles, what) > 0;
}

/* An ext4 image made from the folder without mounting anything. */
static const char *const linux_mkimage[] = { "mke2fs", "-q", "-F", "-t", "ext4", "-d", "{folder}",
					     "{image}", "{size}", NULL };
static const struct rig_imaging linux_imaging = {
	.ext = "img", .argv = { linux_mkimage, NULL }, .size_unit = 1024, .size_suffix = "k",
};

const struct prov_driver prov_driver_linux = {
	.name = "linux",
	.fs = linux_fs,
	.abilities = PROV_CAN_REMOUNT,
	.imaging = &linux_imaging,
	.device_check = linux_device_check,
	.devices_report = linux_devices,
	.procs_using = linux_procs,
	.dry_legend = "RUN stands for the run folder",
	.dry_legend_image = "/dev/loopN for the loop device losetup picks at run time",
	.ops = &provision_linux_ops,
	.prims = &linux_prims,
};
