/*
 * The plists the fake prints: diskutil list, info and apfs list, in the
 * shapes of the recorded outputs in tests/fixtures/macos/ (same keys, same
 * nesting, tab indents). Values are printed as they are, not escaped: the
 * fake's names never hold XML's special characters, and the recorded
 * outputs are what it must match.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "lib/files.h"
#include "lib/xalloc.h"

#define APFS_CONTAINER_UUID "EF57347C-0000-11AA-AA11-00306543ECAC"
#define APFS_VOLUME_UUID "41504653-0000-11AA-AA11-00306543ECAC"

void plist_head(void)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
	      "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
	      "<plist version=\"1.0\">\n",
	      stdout);
}

void plist_tail(void)
{
	fputs("</plist>\n", stdout);
}

static void tabs(int n)
{
	for (int i = 0; i < n; i++)
		putchar('\t');
}

void plist_line(int n, const char *text)
{
	tabs(n);
	printf("%s\n", text);
}

void plist_str(int n, const char *key, const char *value)
{
	tabs(n);
	printf("<key>%s</key>\n", key);
	tabs(n);
	printf("<string>%s</string>\n", value);
}

void plist_int(int n, const char *key, const char *digits)
{
	tabs(n);
	printf("<key>%s</key>\n", key);
	tabs(n);
	printf("<integer>%s</integer>\n", digits);
}

void plist_num(int n, const char *key, long long v)
{
	char digits[32];
	snprintf(digits, sizeof(digits), "%lld", v);
	plist_int(n, key, digits);
}

void plist_bool(int n, const char *key, int v)
{
	tabs(n);
	printf("<key>%s</key>\n", key);
	plist_line(n, v ? "<true/>" : "<false/>");
}

void plist_error(const char *message)
{
	plist_head();
	puts("<dict>");
	plist_bool(1, "Error", 1);
	plist_str(1, "ErrorMessage", message);
	plist_int(1, "ExitCode", "1");
	puts("</dict>");
	plist_tail();
}

/* --- diskutil list -plist [ID] --- */

/* The volume of container id (IDs1): its name and mount point. */
static void container_entry(struct fake *fk, const char *id)
{
	char *store = fake_kv(fk, id, "store"), *size = fake_kv(fk, id, "size");
	struct strbuf vol = STRBUF_INIT;
	struct part l;
	sb_addf(&vol, "%ss1", id);
	fake_part_find(fk, BY_ID_OR_VOLUME, vol.buf, &l);
	const char *name = l.line ? l.f[P_NAME] : "", *mnt = l.line ? l.f[P_MOUNT] : "";
	plist_line(3, "<key>APFSPhysicalStores</key>");
	plist_line(3, "<array>");
	plist_line(4, "<dict>");
	plist_str(5, "DeviceIdentifier", store);
	plist_line(4, "</dict>");
	plist_line(3, "</array>");
	plist_line(3, "<key>APFSVolumes</key>");
	plist_line(3, "<array>");
	plist_line(4, "<dict>");
	plist_str(5, "DeviceIdentifier", vol.buf);
	if (*mnt)
		plist_str(5, "MountPoint", mnt);
	plist_line(5, "<key>MountedSnapshots</key>");
	plist_line(5, "<array/>");
	plist_bool(5, "OSInternal", 0);
	plist_int(5, "Size", size);
	plist_str(5, "VolumeName", name);
	plist_line(4, "</dict>");
	plist_line(3, "</array>");
	plist_str(3, "Content", APFS_CONTAINER_UUID);
	plist_str(3, "DeviceIdentifier", id);
	plist_bool(3, "OSInternal", 0);
	plist_line(3, "<key>Partitions</key>");
	plist_line(3, "<array/>");
	plist_int(3, "Size", size);
	fake_part_release(&l);
	sb_release(&vol);
	free(store);
	free(size);
}

/* A partition's made-up DiskUUID: the last 12 digits of its offset. */
static void disk_uuid(const char *offset)
{
	char digits[32];
	snprintf(digits, sizeof(digits), "%012lld", fake_num(offset));
	size_t n = strlen(digits);
	tabs(5);
	printf("<key>DiskUUID</key>\n");
	tabs(5);
	printf("<string>00000000-0000-4000-8000-%s</string>\n", digits + (n > 12 ? n - 12 : 0));
}

static void physical_entry(struct fake *fk, const char *id)
{
	struct strbuf p = STRBUF_INIT;
	char *size = fake_kv(fk, id, "size");
	struct parts ps;
	plist_str(3, "Content",
		  fake_has_bytes(fake_path(fk, &p, "parts/%s", id)) ? "GUID_partition_scheme" : "");
	plist_str(3, "DeviceIdentifier", id);
	plist_bool(3, "OSInternal", 0);
	plist_line(3, "<key>Partitions</key>");
	plist_line(3, "<array>");
	fake_parts_read(fk, id, &ps);
	for (size_t i = 0; i < ps.n; i++) {
		char **f = ps.v[i].f;
		int own = !strcmp(f[P_VOLUME], f[P_ID]); /* not an APFS store */
		plist_line(4, "<dict>");
		plist_str(5, "Content", f[P_CONTENT]);
		plist_str(5, "DeviceIdentifier", f[P_ID]);
		disk_uuid(f[P_OFFSET]);
		if (own && *f[P_MOUNT])
			plist_str(5, "MountPoint", f[P_MOUNT]);
		plist_int(5, "Size", f[P_SIZE]);
		if (own && *f[P_NAME])
			plist_str(5, "VolumeName", f[P_NAME]);
		plist_line(4, "</dict>");
	}
	plist_line(3, "</array>");
	plist_int(3, "Size", size);
	fake_parts_release(&ps);
	free(size);
	sb_release(&p);
}

static void list_entry(struct fake *fk, const char *id)
{
	char *kind = fake_kv(fk, id, "kind");
	plist_line(2, "<dict>");
	if (!strcmp(kind, "container"))
		container_entry(fk, id);
	else
		physical_entry(fk, id);
	plist_line(2, "</dict>");
	free(kind);
}

int fake_list(struct fake *fk, int argc, char **argv)
{
	struct strbuf p = STRBUF_INIT;
	char **ids;
	size_t n;
	if (argc > 0) {
		char *id = fake_whole_of(argv[0]);
		if (!fake_is_file(fake_path(fk, &p, "disks/%s", id))) {
			fake_err("Could not find disk: %s\n", argv[0]);
			free(id);
			sb_release(&p);
			return 1;
		}
		ids = xmalloc(sizeof(*ids));
		ids[0] = id;
		n = 1;
	} else {
		ids = fake_disk_ids(fk, &n);
	}
	plist_head();
	puts("<dict>");
	plist_line(1, "<key>AllDisksAndPartitions</key>");
	plist_line(1, "<array>");
	for (size_t i = 0; i < n; i++)
		list_entry(fk, ids[i]);
	plist_line(1, "</array>");
	plist_line(1, "<key>WholeDisks</key>");
	plist_line(1, "<array>");
	for (size_t i = 0; i < n; i++)
		printf("\t\t<string>%s</string>\n", ids[i]);
	plist_line(1, "</array>");
	puts("</dict>");
	plist_tail();
	fake_names_free(ids, n);
	sb_release(&p);
	return 0;
}

/* --- diskutil info -plist X --- */

/* The keys every info dict has, from whole disk w's facts. */
static void disk_common(struct fake *fk, const char *w)
{
	char *bus = fake_kv(fk, w, "bus"), *internal = fake_kv(fk, w, "internal"),
	     *solid = fake_kv(fk, w, "solid");
	plist_str(1, "BusProtocol", *bus ? bus : "USB");
	plist_bool(1, "Internal", !strcmp(internal, "1"));
	if (*solid)
		plist_bool(1, "SolidState", !strcmp(solid, "1"));
	plist_int(1, "DeviceBlockSize", "512");
	free(bus);
	free(internal);
	free(solid);
}

static void info_whole_disk(struct fake *fk, const char *id)
{
	struct strbuf p = STRBUF_INIT, node = STRBUF_INIT;
	char *internal = fake_kv(fk, id, "internal"), *media = fake_kv(fk, id, "media"),
	     *size = fake_kv(fk, id, "size"), *virt = fake_kv(fk, id, "virtual");
	sb_addf(&node, "/dev/%s", id);
	disk_common(fk, id);
	plist_str(1, "Content",
		  fake_has_bytes(fake_path(fk, &p, "parts/%s", id)) ? "GUID_partition_scheme" : "");
	plist_str(1, "DeviceIdentifier", id);
	plist_str(1, "DeviceNode", node.buf);
	plist_bool(1, "Ejectable", strcmp(internal, "1") != 0);
	plist_str(1, "MediaName", media);
	plist_str(1, "MountPoint", "");
	plist_str(1, "ParentWholeDisk", id);
	plist_bool(1, "Removable", 0);
	plist_bool(1, "RemovableMedia", 0);
	plist_int(1, "Size", size);
	plist_int(1, "TotalSize", size);
	plist_str(1, "VirtualOrPhysical", !strcmp(virt, "1") ? "Virtual" : "Physical");
	plist_bool(1, "WholeDisk", 1);
	plist_bool(1, "Writable", 1);
	plist_bool(1, "WritableMedia", 1);
	free(internal);
	free(media);
	free(size);
	free(virt);
	sb_release(&p);
	sb_release(&node);
}

static void info_container(struct fake *fk, const char *id)
{
	struct strbuf node = STRBUF_INIT;
	char *parent = fake_kv(fk, id, "parent"), *size = fake_kv(fk, id, "size");
	sb_addf(&node, "/dev/%s", id);
	disk_common(fk, parent);
	plist_str(1, "Content", APFS_CONTAINER_UUID);
	plist_str(1, "DeviceIdentifier", id);
	plist_str(1, "DeviceNode", node.buf);
	plist_str(1, "MediaName", "AppleAPFSMedia");
	plist_str(1, "MountPoint", "");
	plist_str(1, "ParentWholeDisk", id);
	plist_int(1, "Size", size);
	plist_int(1, "TotalSize", size);
	plist_str(1, "VirtualOrPhysical", "Virtual");
	plist_bool(1, "WholeDisk", 1);
	free(parent);
	free(size);
	sb_release(&node);
}

static const char *fs_name(const char *fs)
{
	static const char *const names[][2] = {
		{ "apfs", "APFS" }, { "hfs", "Journaled HFS+" },
		{ "exfat", "ExFAT" }, { "msdos", "MS-DOS FAT32" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(fs, names[i][0]))
			return names[i][1];
	}
	return NULL;
}

/* A partition, or an APFS volume (id is its container's IDs1) in container w. */
static void info_partition(struct fake *fk, const char *id, const char *w)
{
	struct part l;
	struct strbuf p = STRBUF_INIT, node = STRBUF_INIT, persona = STRBUF_INIT;
	fake_part_find(fk, BY_ID_OR_VOLUME, id, &l);
	char **f = l.f;
	char *phys = fake_whole_of(f[P_ID]);
	disk_common(fk, phys);
	if (!strcmp(id, f[P_ID])) {
		sb_addf(&node, "/dev/%s", f[P_ID]);
		plist_str(1, "Content", f[P_CONTENT]);
		plist_str(1, "DeviceIdentifier", f[P_ID]);
		plist_str(1, "DeviceNode", node.buf);
		plist_str(1, "ParentWholeDisk", phys);
		plist_int(1, "PartitionMapPartitionOffset", f[P_OFFSET]);
	} else {
		sb_addf(&node, "/dev/%s", id);
		plist_str(1, "APFSContainerReference", w);
		plist_line(1, "<key>APFSPhysicalStores</key>");
		plist_line(1, "<array>");
		plist_line(2, "<dict>");
		plist_str(3, "APFSPhysicalStore", f[P_ID]);
		plist_line(2, "</dict>");
		plist_line(1, "</array>");
		plist_str(1, "Content", APFS_VOLUME_UUID);
		plist_str(1, "DeviceIdentifier", id);
		plist_str(1, "DeviceNode", node.buf);
		plist_str(1, "ParentWholeDisk", w);
	}
	if (!strcmp(id, f[P_VOLUME])) {
		const char *path = fake_path(fk, &p, "personality/%s", id);
		if (fake_is_file(path)) {
			files_read(path, &persona);
			while (persona.len && persona.buf[persona.len - 1] == '\n')
				sb_setlen(&persona, persona.len - 1);
			plist_str(1, "FilesystemName", persona.buf);
		} else if (fs_name(f[P_FS])) {
			plist_str(1, "FilesystemName", fs_name(f[P_FS]));
		}
		plist_str(1, "FilesystemType", f[P_FS]);
		plist_str(1, "MountPoint", f[P_MOUNT]);
		plist_int(1, "VolumeAllocationBlockSize", "4096");
		plist_str(1, "VolumeName", f[P_NAME]);
	} else {
		plist_str(1, "MountPoint", "");
	}
	plist_int(1, "Size", f[P_SIZE]);
	plist_int(1, "TotalSize", f[P_SIZE]);
	plist_bool(1, "WholeDisk", 0);
	plist_bool(1, "Writable", 1);
	free(phys);
	fake_part_release(&l);
	sb_release(&p);
	sb_release(&node);
	sb_release(&persona);
}

/* What X names: a mount point (anything but lowercase letters and digits)
 * or a device; NULL when nothing. Caller frees. */
static char *info_id(struct fake *fk, const char *x)
{
	int device = *x != '\0';
	for (const char *c = x; *c; c++)
		device &= (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
	if (device || !*x)
		return *x ? xstrdup(x) : NULL;
	struct part l;
	char *id = NULL;
	if (fake_part_find(fk, BY_MOUNT, x, &l) && *l.f[P_VOLUME])
		id = xstrdup(l.f[P_VOLUME]);
	fake_part_release(&l);
	return id;
}

int fake_info(struct fake *fk, const char *x)
{
	struct strbuf msg = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&msg, "Could not find disk: %s", x);
	if (fake_fault(fk, "info-error", x)) {
		plist_error(msg.buf);
		sb_release(&msg);
		return 1;
	}
	char *id = info_id(fk, x);
	struct part l;
	int is_disk = id && fake_is_file(fake_path(fk, &p, "disks/%s", id));
	if (!id || (!is_disk && !fake_part_find(fk, BY_ID_OR_VOLUME, id, &l))) {
		plist_error(msg.buf);
		free(id);
		sb_release(&msg);
		sb_release(&p);
		return 1;
	}
	if (!is_disk)
		fake_part_release(&l);
	char *w = fake_whole_of(id), *kind = fake_kv(fk, id, "kind");
	plist_head();
	puts("<dict>");
	if (is_disk && !strcmp(id, w) && strcmp(kind, "container"))
		info_whole_disk(fk, id);
	else if (is_disk)
		info_container(fk, id);
	else
		info_partition(fk, id, w);
	puts("</dict>");
	plist_tail();
	free(kind);
	free(w);
	free(id);
	sb_release(&msg);
	sb_release(&p);
	return 0;
}

/* --- diskutil apfs list -plist --- */

static void apfs_container(struct fake *fk, const char *id)
{
	char *store = fake_kv(fk, id, "store"), *size = fake_kv(fk, id, "size");
	struct part l;
	fake_part_find(fk, BY_ID_OR_VOLUME, store, &l);
	const char *psz = l.line ? l.f[P_SIZE] : "", *vol = l.line ? l.f[P_VOLUME] : "",
		   *name = l.line ? l.f[P_NAME] : "";
	plist_line(2, "<dict>");
	plist_int(3, "CapacityCeiling", size);
	plist_num(3, "CapacityFree", fake_num(size) - MIB);
	plist_str(3, "ContainerReference", id);
	plist_str(3, "DesignatedPhysicalStore", store);
	plist_bool(3, "Fusion", 0);
	plist_line(3, "<key>PhysicalStores</key>");
	plist_line(3, "<array>");
	plist_line(4, "<dict>");
	plist_str(5, "DeviceIdentifier", store);
	plist_int(5, "Size", psz);
	plist_line(4, "</dict>");
	plist_line(3, "</array>");
	plist_line(3, "<key>Volumes</key>");
	plist_line(3, "<array>");
	plist_line(4, "<dict>");
	plist_int(5, "CapacityInUse", "20480");
	plist_str(5, "DeviceIdentifier", vol);
	plist_str(5, "Name", name);
	plist_line(5, "<key>Roles</key>");
	plist_line(5, "<array/>");
	plist_line(4, "</dict>");
	plist_line(3, "</array>");
	plist_line(2, "</dict>");
	fake_part_release(&l);
	free(store);
	free(size);
}

int fake_apfs_list(struct fake *fk)
{
	size_t n;
	char **ids = fake_disk_ids(fk, &n);
	plist_head();
	puts("<dict>");
	plist_line(1, "<key>Containers</key>");
	plist_line(1, "<array>");
	for (size_t i = 0; i < n; i++) {
		char *kind = fake_kv(fk, ids[i], "kind");
		if (!strcmp(kind, "container"))
			apfs_container(fk, ids[i]);
		free(kind);
	}
	plist_line(1, "</array>");
	puts("</dict>");
	plist_tail();
	fake_names_free(ids, n);
	return 0;
}
