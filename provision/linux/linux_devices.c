/*
 * `rig devices` on Linux: the disks this machine has, and for each whether
 * rig would erase it as a disk target, or which safety rule refuses it and
 * the fact behind the refusal. It reads what the backend reads
 * (prov_linux_disk_facts) and asks the same rule table (prov_safety_check) without a
 * `confirm`, so what it says is what `rig run` would do. Unattached loop
 * devices and unconfigured virtual devices (zram0 of size 0) are left out;
 * a drive without a medium is shown and refused, so a user looking for it
 * sees why. A disk a rig run is using (it holds the disk's target lock, or
 * for a loop device the lock of the image behind it) says which run.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "provision/linux/linux.h"
#include "provision/provision.h"

void prov_linux_devices_report(const char *root, struct strbuf *out)
{
	char **names;
	size_t n = prov_linux_list_disks(root, &names);
	if (!n)
		sb_adds(out, "no disks found under /sys/block\n");
	for (size_t i = 0; i < n; i++) {
		struct strbuf path = STRBUF_INIT;
		sb_addf(&path, "/dev/%s", names[i]);
		struct disk_facts f;
		prov_linux_disk_facts(root, path.buf, &f);
		if (f.is_virtual && !f.size) {
			prov_disk_facts_release(&f);
			sb_release(&path);
			free(names[i]);
			continue;
		}
		struct target_keys keys = { 0 };
		prov_linux_disk_keys(root, &f, path.buf, &keys);
		f.rig_run = prov_target_keys_holder(&keys, NULL);
		prov_target_keys_release(&keys);
		prov_safety_describe(&f, path.buf, NULL, out);
		prov_disk_facts_release(&f);
		sb_release(&path);
		free(names[i]);
	}
	free(names);
}
