/*
 * What the fake does to volumes: diskutil mount, unmount, unmountDisk,
 * apfs defragment and the APFS snapshots (listSnapshots, deleteSnapshot),
 * tmutil localsnapshot, isexcluded, addexclusion -v, removeexclusion -v,
 * and mdutil -i. A volume is named by its mount
 * point, its device or /dev/device. The conditions' and snapshots' outputs
 * are SYNTHESIZED (no real capture was found; the shapes follow public
 * scripts, tests/fixtures/macos/SOURCES.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake.h"
#include "lib/files.h"
#include "lib/xalloc.h"

/* The volume named by m (its line copied into *l): 1, or 0. */
static int vol_at(struct fake *fk, const char *m, struct part *l)
{
	return fake_part_find(fk, BY_ANY_NAME, m, l);
}

int fake_defragment(struct fake *fk, const char *vol, const char *how)
{
	struct part l;
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	int rc = 1;
	if (!vol_at(fk, vol, &l)) {
		printf("Could not find disk: %s\n", vol);
		goto out;
	}
	const char *v = l.f[P_VOLUME];
	if (strcmp(l.f[P_FS], "apfs")) {
		puts("Error: -69808: Some information was unavailable during an internal lookup");
		goto out;
	}
	fake_mkdir(fk, "defrag");
	fake_path(fk, &p, "defrag/%s", v);
	if (!strcmp(how, "enable") || !strcmp(how, "disable")) {
		sb_addf(&text, "%s\n", how);
		fake_write(p.buf, text.buf);
		printf("Defragmentation of APFS Volume %s is now %sd\n", v, how);
	} else if (!strcmp(how, "status")) {
		if (files_read(p.buf, &text) < 0)
			sb_adds(&text, "disable");
		while (text.len && text.buf[text.len - 1] == '\n')
			sb_setlen(&text, text.len - 1);
		printf("Defragmentation of APFS Volume %s: %sd\n", v, text.buf);
	} else {
		puts("Usage: diskutil apfs defragment <volume> enable|disable|status");
		goto out;
	}
	rc = 0;
out:
	fake_part_release(&l);
	sb_release(&p);
	sb_release(&text);
	return rc;
}

/* The lines of snaps/VOLUME (snapshot names, one a line). Caller frees. */
static char **snapshots(struct fake *fk, const char *volume, size_t *n)
{
	struct strbuf p = STRBUF_INIT;
	char **v = fake_lines(fake_path(fk, &p, "snaps/%s", volume), n);
	sb_release(&p);
	return v;
}

/* What Time Machine does between rig's commands, as faults: an hourly
 * snapshot appears on the volume, or the oldest one is thinned. */
static void time_machine_acts(struct fake *fk, const struct part *l)
{
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	fake_mkdir(fk, "snaps");
	fake_path(fk, &p, "snaps/%s", l->f[P_VOLUME]);
	if (fake_fault(fk, "snapshot-appears", l->f[P_NAME]))
		fake_append(p.buf, "com.apple.TimeMachine.2020-01-01-000000.local\n");
	size_t n;
	char **names = fake_lines(p.buf, &n);
	/* never the newest: Time Machine thins old ones */
	if (n >= 2 && fake_fault(fk, "snapshot-thinned", l->f[P_NAME])) {
		for (size_t i = 1; i < n; i++)
			sb_addf(&text, "%s\n", names[i]);
		fake_write(p.buf, text.buf);
	}
	fake_names_free(names, n);
	sb_release(&p);
	sb_release(&text);
}

int fake_list_snapshots(struct fake *fk, const char *vol)
{
	struct part l;
	if (!vol_at(fk, vol, &l)) {
		struct strbuf msg = STRBUF_INIT;
		sb_addf(&msg, "Could not find disk: %s", vol);
		plist_error(msg.buf);
		sb_release(&msg);
		return 1;
	}
	time_machine_acts(fk, &l);
	size_t n;
	char **names = snapshots(fk, l.f[P_VOLUME], &n);
	long long xid = 5353900;
	plist_head();
	puts("<dict>");
	plist_line(1, "<key>Snapshots</key>");
	plist_line(1, "<array>");
	for (size_t i = 0; i < n; i++) {
		const char *s = names[i] + strspn(names[i], " \t");
		size_t len = strlen(s);
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (!len)
			continue;
		char *name = xstrndup(s, len);
		xid += 17;
		plist_line(2, "<dict>");
		plist_bool(3, "LimitingContainerShrink", 0);
		plist_str(3, "SnapshotName", name);
		plist_num(3, "SnapshotXID", xid);
		plist_line(2, "</dict>");
		free(name);
	}
	plist_line(1, "</array>");
	puts("</dict>");
	plist_tail();
	fake_names_free(names, n);
	fake_part_release(&l);
	return 0;
}

/* Whether snaps/VOLUME has the line name. */
static int has_snapshot(struct fake *fk, const char *volume, const char *name)
{
	size_t n;
	char **names = snapshots(fk, volume, &n);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		found |= !strcmp(names[i], name);
	fake_names_free(names, n);
	return found;
}

int fake_delete_snapshot(struct fake *fk, const char *vol, const char *by, const char *name)
{
	struct part l;
	if (!vol_at(fk, vol, &l)) {
		printf("Could not find disk: %s\n", vol);
		return 1;
	}
	const char *v = l.f[P_VOLUME];
	int rc = 1;
	if (strcmp(by, "-name")) {
		printf("fake diskutil: deleteSnapshot by %s not modelled\n", by);
	} else if (!has_snapshot(fk, v, name)) {
		puts("Error: -69863: The given APFS Snapshot was not found");
	} else {
		struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
		size_t n;
		char **names = snapshots(fk, v, &n);
		for (size_t i = 0; i < n; i++) {
			if (strcmp(names[i], name))
				sb_addf(&text, "%s\n", names[i]);
		}
		fake_write(fake_path(fk, &p, "snaps/%s", v), text.buf);
		printf("Deleting APFS Snapshot %s from APFS Volume %s\nFinished APFS operation\n", name,
		       v);
		fake_names_free(names, n);
		sb_release(&p);
		sb_release(&text);
		rc = 0;
	}
	fake_part_release(&l);
	return rc;
}

/* Whether Time Machine excludes the volume: the file tm-excluded (added
 * by tmutil addexclusion -v) or the fault tmutil-excluded. */
static int tm_excluded(struct fake *fk, const char *volume, int take_fault)
{
	struct strbuf p = STRBUF_INIT;
	size_t n;
	char **names = fake_lines(fake_path(fk, &p, "tm-excluded"), &n);
	int ex = 0;
	for (size_t i = 0; i < n; i++)
		ex |= !strcmp(names[i], volume);
	fake_names_free(names, n);
	sb_release(&p);
	return ex || (take_fault && fake_fault(fk, "tmutil-excluded", ""));
}

/* A local snapshot of date on the APFS volume of l, unless Time Machine
 * excludes it or the fault tmutil-noshot says none appears. */
static void snapshot_on(struct fake *fk, const struct part *l, const char *date, int fault_ok)
{
	if (strcmp(l->f[P_FS], "apfs") || !*l->f[P_MOUNT] || tm_excluded(fk, l->f[P_VOLUME], 0))
		return;
	if (fault_ok && (fake_fault(fk, "tmutil-excluded", "") || fake_fault(fk, "tmutil-noshot", "")))
		return;
	struct strbuf p = STRBUF_INIT, name = STRBUF_INIT;
	sb_addf(&name, "com.apple.TimeMachine.%s.local", date);
	fake_mkdir(fk, "snaps");
	if (!has_snapshot(fk, l->f[P_VOLUME], name.buf)) {
		sb_addch(&name, '\n');
		fake_append(fake_path(fk, &p, "snaps/%s", l->f[P_VOLUME]), name.buf);
	}
	sb_release(&p);
	sb_release(&name);
}

/* tmutil addexclusion -v MOUNT, removeexclusion -v MOUNT */
static int tm_exclusion(struct fake *fk, int add, int argc, char **argv)
{
	struct part l;
	if (argc < 3 || strcmp(argv[1], "-v")) {
		fake_err("fake tmutil: only volume exclusions (-v) are modelled\n");
		return 1;
	}
	if (!vol_at(fk, argv[2], &l)) {
		printf("%s: The operation couldn't be completed. Invalid argument\n", argv[2]);
		return 1;
	}
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	size_t n;
	char **names = fake_lines(fake_path(fk, &p, "tm-excluded"), &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], l.f[P_VOLUME]))
			sb_addf(&text, "%s\n", names[i]);
	if (add)
		sb_addf(&text, "%s\n", l.f[P_VOLUME]);
	fake_write(p.buf, text.buf);
	fake_names_free(names, n);
	fake_part_release(&l);
	sb_release(&p);
	sb_release(&text);
	return 0;
}

/* tmutil localsnapshot [MOUNT] (bare: every APFS volume Time Machine
 * includes), isexcluded MOUNT, addexclusion -v MOUNT, removeexclusion -v MOUNT */
int fake_tmutil(struct fake *fk, int argc, char **argv)
{
	if (argc >= 1 && (!strcmp(argv[0], "addexclusion") || !strcmp(argv[0], "removeexclusion")))
		return tm_exclusion(fk, argv[0][0] == 'a', argc, argv);
	if (argc >= 2 && !strcmp(argv[0], "isexcluded")) {
		struct part l;
		if (!vol_at(fk, argv[1], &l)) {
			printf("%s: No such file or directory\n", argv[1]);
			return 1;
		}
		printf("[%s]    %s\n", tm_excluded(fk, l.f[P_VOLUME], 1) ? "Excluded" : "Included",
		       argv[1]);
		fake_part_release(&l);
		return 0;
	}
	if (argc < 1 || strcmp(argv[0], "localsnapshot")) {
		fake_err("fake tmutil: verb not modelled: ");
		for (int i = 0; i < argc; i++)
			fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
		fputc('\n', stderr);
		return 1;
	}
	char date[64];
	time_t now = time(NULL);
	strftime(date, sizeof(date), "%Y-%m-%d-%H%M%S", localtime(&now));
	if (argc > 1 && *argv[1]) {
		struct part l;
		if (!vol_at(fk, argv[1], &l)) {
			printf("%s: not a volume\n", argv[1]);
			return 22;
		}
		snapshot_on(fk, &l, date, 1);
		fake_part_release(&l);
	} else {
		int faulted = fake_fault(fk, "tmutil-noshot", "");
		size_t nd;
		char **disks = fake_disk_ids(fk, &nd);
		for (size_t d = 0; d < nd && !faulted; d++) {
			struct parts ps;
			if (fake_parts_read(fk, disks[d], &ps) < 0)
				continue;
			for (size_t i = 0; i < ps.n; i++)
				snapshot_on(fk, &ps.v[i], date, 0);
			fake_parts_release(&ps);
		}
		fake_names_free(disks, nd);
	}
	printf("Created local snapshot with date: %s\n", date);
	return 0;
}

/* mdutil -i on|off MOUNT */
int fake_mdutil(struct fake *fk, int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "-i")) {
		fake_err("fake mdutil: only -i is modelled\n");
		return 1;
	}
	const char *how = argc > 1 ? argv[1] : "", *mount = argc > 2 ? argv[2] : "";
	struct part l;
	if (!vol_at(fk, mount, &l)) {
		printf("%s: could not resolve volume\n", mount);
		return 1;
	}
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	fake_mkdir(fk, "mdutil");
	sb_addf(&text, "%s\n", how);
	fake_write(fake_path(fk, &p, "mdutil/%s", l.f[P_VOLUME]), text.buf);
	printf("%s:\n\tIndexing %s.\n", mount, !strcmp(how, "on") ? "enabled" : "disabled");
	fake_part_release(&l);
	sb_release(&p);
	sb_release(&text);
	return 0;
}

/* diskutil unmountDisk [force] DISK */
int fake_unmount_disk(struct fake *fk, const char *disk)
{
	struct strbuf p = STRBUF_INIT;
	if (!strncmp(disk, "/dev/", 5))
		disk += 5;
	if (!fake_is_file(fake_path(fk, &p, "disks/%s", disk))) {
		fake_err("Could not find disk: %s\n", disk);
		sb_release(&p);
		return 1;
	}
	struct parts ps;
	fake_parts_read(fk, disk, &ps);
	for (size_t i = 0; i < ps.n; i++) {
		if (*ps.v[i].f[P_VOLUME])
			fake_unmount(fk, ps.v[i].f[P_VOLUME]);
	}
	printf("Unmount of all volumes on %s was successful\n", disk);
	fake_parts_release(&ps);
	sb_release(&p);
	return 0;
}

int fake_unmount_verb(struct fake *fk, const char *vol)
{
	struct part l;
	if (!fake_part_find(fk, BY_ID_OR_VOLUME, vol, &l)) {
		fake_err("Could not find disk: %s\n", vol);
		return 1;
	}
	fake_unmount(fk, vol);
	printf("Volume %s on %s unmounted\n", l.f[P_NAME], vol);
	fake_part_release(&l);
	return 0;
}

int fake_mount_verb(struct fake *fk, const char *vol)
{
	struct part l;
	if (!fake_part_find(fk, BY_ID_OR_VOLUME, vol, &l)) {
		fake_err("Could not find disk: %s\n", vol);
		return 1;
	}
	if (!*l.f[P_MOUNT])
		free(fake_mount(fk, vol, l.f[P_NAME]));
	printf("Volume %s on %s mounted\n", l.f[P_NAME], vol);
	fake_part_release(&l);
	return 0;
}
