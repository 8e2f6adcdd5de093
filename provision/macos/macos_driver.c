/*
 * The macOS driver's descriptor (driver.h), on its platform's table
 * (plan/platform_macos.c): disk images made with hdiutil
 * and whole disks, partitioned and formatted by diskutil (macos.c,
 * macos_layout.c), facts from diskutil's plists (macos_facts.c), who uses
 * a disk from lsof (macos_procs.c). Portable C: on Linux it runs the fake
 * diskutil and hdiutil of the tests.
 */
#include <string.h>

#include "lib/strbuf.h"
#include "modules/module.h"
#include "plan/platform.h"
#include "platform/spawn.h"
#include "provision/driver.h"
#include "provision/macos/macos.h"
#include "provision/provision.h"

static void macos_devices(struct strbuf *out)
{
	struct spawner sp = plat_spawner_fault(plat_spawner_real(NULL, NULL));
	prov_macos_devices_report(prov_mac_spawn_query, &sp, out);
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
	.platform = &plan_platform_macos,
	.imaging = &macos_imaging,
	.devices_report = macos_devices,
	.procs_using = prov_mac_procs_using,
	.dry_legend = "volumes stay where diskutil mounts them, /Volumes/NAME",
	.dry_legend_image = "diskN stands for the disk hdiutil attaches at run time",
	.ops = &prov_macos_ops,
	.prims = &prov_macos_prims,
};
