/*
 * The Linux driver's descriptor (driver.h), on its platform's table
 * (plan/platform_linux.c): image files on loop devices
 * and whole disks, partitioned with sgdisk and formatted with mkfs.*
 * (linux.c, linux_target.c), facts from /sys and /proc (linux_facts.c).
 */
#include <string.h>

#include "lib/strbuf.h"
#include "modules/module.h"
#include "plan/platform.h"
#include "provision/driver.h"
#include "provision/linux/linux.h"
#include "provision/provision.h"

static void linux_devices(struct strbuf *out)
{
	prov_linux_devices_report("", out);
}

static int linux_procs(const char *const *needles, struct strbuf *what)
{
	return prov_linux_procs_using("", needles, what) > 0;
}

/* An ext4 image made from the folder without mounting anything. */
static const char *const linux_mkimage[] = { "mke2fs", "-q", "-F", "-t", "ext4", "-d", "{folder}",
					     "{image}", "{size}", NULL };
static const struct rig_imaging linux_imaging = {
	.ext = "img", .argv = { linux_mkimage, NULL }, .size_unit = 1024, .size_suffix = "k",
};

const struct prov_driver prov_driver_linux = {
	.platform = &plan_platform_linux,
	.imaging = &linux_imaging,
	.devices_report = linux_devices,
	.procs_using = linux_procs,
	.dry_legend = "RUN stands for the run folder",
	.dry_legend_image = "/dev/loopN for the loop device losetup picks at run time",
	.ops = &prov_linux_ops,
	.prims = &prov_linux_prims,
};
