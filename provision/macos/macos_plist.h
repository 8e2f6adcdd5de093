/*
 * What diskutil and hdiutil print, parsed with libplist into plain structs:
 * `diskutil list -plist`, `diskutil info -plist` (also its error form, a
 * dict with Error/ErrorMessage), `diskutil apfs list -plist`, `hdiutil
 * attach -plist`, `hdiutil info -plist`, and the text error line
 * `Error: -69888: Couldn't unmount disk` of the mutating verbs.
 *
 * Every key is optional: what a plist does not say stays unknown (NULL
 * strings, MAC_UNKNOWN flags, has_* 0), never a guess and never a crash;
 * a buffer that is not a plist dict is an error with the reason. The
 * parsers take memory buffers and touch nothing else, so the tests feed
 * them the recorded outputs of real Macs (../shared/fixtures/macos/) and a
 * fuzz harness can call prov_mac_plist_fuzz_one() with arbitrary bytes.
 *
 * Portable C: the same code runs on macOS (the backend) and on Linux (the
 * tests, and `rig plan --platform macos`). The libplist 2.2/2.3+ difference
 * (plist_from_memory's fourth argument) is detected by the Makefile
 * (RIG_LIBPLIST_FORMAT_ARG), not by the operating system.
 */
#ifndef RIG_PROVISION_MACOS_PLIST_H
#define RIG_PROVISION_MACOS_PLIST_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

#define MAC_UNKNOWN (-1)   /* a boolean the plist did not state */

/* A partition or volume in `diskutil list -plist`. */
struct mac_entry {
	char *id;          /* DeviceIdentifier: disk4s2, disk5s1 */
	char *content;     /* Content: Apple_APFS, Apple_HFS, EFI, ...; NULL unknown */
	char *name;        /* VolumeName */
	char *mount;       /* MountPoint (a volume's; for an APFS volume also a mounted snapshot's) */
	uint64_t size;     /* Size; 0 unknown */
};

/* An AllDisksAndPartitions entry: a whole disk, or a synthesized APFS container. */
struct mac_disk {
	char *id;
	char *content;            /* GUID_partition_scheme, EF57347C-... (container), "" ... */
	char *mount;              /* a whole-disk volume's MountPoint */
	char *name;               /* ... and its VolumeName */
	uint64_t size;
	struct mac_entry *parts;  /* Partitions, in on-disk order */
	size_t nparts;
	char **stores;            /* APFSPhysicalStores[].DeviceIdentifier (newer macOS only) */
	size_t nstores;
	struct mac_entry *vols;   /* APFSVolumes */
	size_t nvols;
};

struct mac_list {
	char **whole;             /* WholeDisks */
	size_t nwhole;
	struct mac_disk *disks;
	size_t ndisks;
};

/* `diskutil info -plist X`. */
struct mac_info {
	char *error;              /* the error form: ErrorMessage (or "Error" when none); NULL otherwise */
	char *id, *node, *parent; /* DeviceIdentifier, DeviceNode, ParentWholeDisk */
	char *media;              /* MediaName ("" is kept as NULL) */
	char *bus;                /* BusProtocol */
	char *content;            /* Content */
	char *fs_type;            /* FilesystemType: apfs, hfs, msdos, exfat */
	char *fs_name;            /* FilesystemName (personality): APFS, Journaled HFS+ ... */
	char *mount;              /* MountPoint; NULL when "" (unmounted) or absent */
	char *volume;             /* VolumeName */
	char *container;          /* APFSContainerReference */
	char *virt;               /* VirtualOrPhysical: Virtual, Physical */
	char **stores;            /* APFSPhysicalStores[].APFSPhysicalStore */
	size_t nstores;
	int internal, solid_state, whole, removable, writable_media, writable;  /* 1, 0, MAC_UNKNOWN */
	uint64_t size, total_size;   /* Size, TotalSize; 0 unknown */
	uint32_t block_size;         /* DeviceBlockSize; 0 unknown */
	uint32_t alloc_block;        /* VolumeAllocationBlockSize; 0 unknown */
	int has_offset;
	uint64_t offset;             /* PartitionMapPartitionOffset, bytes */
};

/* `diskutil apfs list -plist`. */
struct mac_apfs_volume {
	char *id, *name;
	char **roles;
	size_t nroles;
	uint64_t in_use;             /* CapacityInUse */
};

struct mac_container {
	char *ref;                   /* ContainerReference: disk5 */
	char *designated;            /* DesignatedPhysicalStore */
	uint64_t ceiling, free;      /* CapacityCeiling, CapacityFree */
	struct mac_entry *stores;    /* PhysicalStores: id and Size */
	size_t nstores;
	struct mac_apfs_volume *vols;
	size_t nvols;
};

struct mac_apfs {
	struct mac_container *c;
	size_t n;
};

/* `hdiutil attach -plist` (system-entities) and `hdiutil info -plist` (images). */
struct mac_entity {
	char *dev;                   /* dev-entry: /dev/disk6s1 */
	char *hint;                  /* content-hint */
	char *mount;                 /* mount-point, NULL when not mounted */
	char *kind;                  /* volume-kind */
};

struct mac_image {
	char *path;                  /* image-path */
	struct mac_entity *ents;
	size_t nents;
};

struct mac_attach {
	struct mac_entity *ents;
	size_t nents;
};

struct mac_hdi_info {
	struct mac_image *images;    /* none when the plist has no `images` key */
	size_t nimages;
};

/* `diskutil apfs resizeContainer STORE limits -plist` (docs/architecture.md
 * gives the sources of these keys). */
struct mac_limits {
	char *type;                  /* Type: APFSPhysicalStore */
	uint64_t current;            /* CurrentSize */
	uint64_t min_preferred;      /* MinimumSizePreferred */
	uint64_t min_noguard;        /* MinimumSizeNoGuard */
	uint64_t max;                /* MaximumSize */
	int has_current, has_min_preferred, has_min_noguard, has_max;
};

/*
 * Each parser: 0 and *out filled, or -1 with the reason in err (not a
 * plist, not a dict, or diskutil's error dict: "Could not find disk: x").
 * prov_mac_parse_info also returns 0 for the error dict, with out->error set,
 * so a caller can tell "no such disk" from garbage. The *_release
 * functions free what a parser filled (also after a failed parse).
 */
int prov_mac_parse_list(const char *buf, size_t len, struct mac_list *out, struct strbuf *err);
int prov_mac_parse_info(const char *buf, size_t len, struct mac_info *out, struct strbuf *err);
int prov_mac_parse_apfs(const char *buf, size_t len, struct mac_apfs *out, struct strbuf *err);
int prov_mac_parse_attach(const char *buf, size_t len, struct mac_attach *out, struct strbuf *err);
int prov_mac_parse_hdi_info(const char *buf, size_t len, struct mac_hdi_info *out, struct strbuf *err);
int prov_mac_parse_limits(const char *buf, size_t len, struct mac_limits *out, struct strbuf *err);
void prov_mac_limits_release(struct mac_limits *l);
void prov_mac_list_release(struct mac_list *l);
void prov_mac_info_release(struct mac_info *i);
void prov_mac_apfs_release(struct mac_apfs *a);
void prov_mac_attach_release(struct mac_attach *a);
void prov_mac_hdi_info_release(struct mac_hdi_info *h);

/*
 * The last `Error: -NNNNN: message` line of a command's text output:
 * 1 with *code (negative) and the message added to msg, 0 when there is
 * none.
 */
int prov_mac_error_line(const char *text, long *code, struct strbuf *msg);

/*
 * `hdiutil create`'s `created: PATH` line: the image file it really made
 * (hdiutil adds the extension it wants). NULL when absent; caller frees.
 */
char *prov_mac_created_path(const char *text);

/* `diskutil apfs listSnapshots -plist VOLUME`: Snapshots[].SnapshotName
 * (the form is in tests/fixtures/macos/, transcribed; see SOURCES.md). */
struct mac_snapshots {
	char **names;
	size_t n;
};
int prov_mac_parse_snapshots(const char *buf, size_t len, struct mac_snapshots *out, struct strbuf *err);
void prov_mac_snapshots_release(struct mac_snapshots *s);
/* The date on tmutil localsnapshot's line `Created local snapshot with
 * date: 2021-06-03-085732` (caller frees), or NULL. */
char *prov_mac_tmutil_date(const char *text);

/* Lookups in a parsed list: the entry (partition or volume) or disk with
 * that identifier, NULL when absent. */
const struct mac_disk *prov_mac_list_disk(const struct mac_list *l, const char *id);
const struct mac_container *prov_mac_apfs_with_store(const struct mac_apfs *a, const char *store);

/* The fuzz entry: every parser above over the same bytes, results freed.
 * Returns how many of them accepted the input. */
int prov_mac_plist_fuzz_one(const uint8_t *data, size_t size);

#endif
