/*
 * `rig devices` on Linux: the disks this machine has, and for each whether
 * rig would erase it as a disk target, or which safety rule refuses it and
 * the fact behind the refusal. It reads what the backend reads
 * (linux_disk_facts) and asks the same rule table (safety_check) without a
 * `confirm`, so what it says is what `rig run` would do. Unattached loop
 * devices and unconfigured virtual devices (zram0 of size 0) are left out;
 * a drive without a medium is shown and refused, so a user looking for it
 * sees why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rig/util/strbuf.h"
#include "linux.h"

static void human_size(struct strbuf *sb, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		sb_addf(sb, "%llu B", (unsigned long long)bytes);
	else
		sb_addf(sb, "%.1f %s", v, units[u]);
}

void linux_devices_report(const char *root, struct strbuf *out)
{
	char **names;
	size_t n = linux_list_disks(root, &names);
	if (!n)
		sb_adds(out, "no disks found under /sys/block\n");
	for (size_t i = 0; i < n; i++) {
		struct strbuf path = STRBUF_INIT, size = STRBUF_INIT, fact = STRBUF_INIT;
		sb_addf(&path, "/dev/%s", names[i]);
		struct disk_facts f;
		linux_disk_facts(root, path.buf, &f);
		if (f.is_virtual && !f.size) {
			disk_facts_release(&f);
			sb_release(&path);
			free(names[i]);
			continue;
		}
		human_size(&size, f.size);
		sb_addf(out, "%-14s %10s  %-12s", path.buf, size.buf,
			f.rotational == 1 ? "rotational" : f.rotational == 0 ? "solid state" : "");
		if (f.is_loop)
			sb_addf(out, "  loop over %s", f.loop_backing ? f.loop_backing : "?");
		else
			sb_addf(out, "  model %s, serial %s", f.model ? f.model : "-",
				f.serial ? f.serial : "-");
		sb_addch(out, '\n');
		const struct safety_rule *rule = NULL;
		int ok = safety_check(&f, NULL, 0, &rule, &fact) == 0;
		const char *used[] = { f.root_via, f.mounted, f.in_use };
		for (size_t k = 0; k < 3; k++)
			if (used[k] && strcmp(used[k], fact.buf))
				sb_addf(out, "%16s%s\n", "", used[k]);
		if (ok) {
			sb_addf(out, "%16srig may erase it: a disk target with device: %s and confirm: ",
				"", path.buf);
			if (f.model)
				sb_addf(out, "\"%s\"%s", f.model, f.serial ? " or " : "");
			if (f.serial)
				sb_addf(out, "\"%s\"", f.serial);
			if (!f.model && !f.serial)
				sb_adds(out, "(none possible: neither model nor serial is known)");
			sb_addch(out, '\n');
		} else {
			sb_addf(out, "%16srig refuses it: %s (rule %s", "", fact.buf, rule->name);
			if (rule->waiver)
				sb_addf(out, "; --allow %s waives it",
					rule->waiver == SAFETY_ALLOW_LOOP ? "loop"
					: rule->waiver == SAFETY_ALLOW_VIRTUAL ? "virtual" : "internal");
			sb_adds(out, ")\n");
		}
		disk_facts_release(&f);
		sb_release(&path);
		sb_release(&size);
		sb_release(&fact);
		free(names[i]);
	}
	free(names);
}
