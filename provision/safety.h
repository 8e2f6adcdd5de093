/*
 * Which disks rig may erase, and why not: one table of rules, shared by the
 * Linux backend, the macOS backend and `rig devices`. Facts in (gathered
 * per platform: sysfs and the mount tables on Linux, diskutil's plists on
 * macOS), verdict out: the first rule the disk breaks, and the fact that
 * breaks it, in words a user can check ("sdb1 is mounted on /media/x").
 *
 * The facts of macOS disks come from provision/macos/macos_facts.c: the disk
 * behind / traced through its APFS container's physical stores, Internal,
 * VirtualOrPhysical, WholeDisk, the mount points of every volume on the
 * disk (its APFS containers' included), MediaName.
 *
 * The rules never look at the system themselves, so every refusal is
 * tested against recorded facts (tests/fixtures/linux/) and no real disk
 * is ever at risk in a test.
 */
#ifndef RIG_SAFETY_H
#define RIG_SAFETY_H

#include <stdint.h>

struct strbuf;

/* What is known about one device. Strings are owned (prov_disk_facts_release),
 * NULL when unknown or not applicable. */
struct disk_facts {
	char *path;          /* as given: /dev/sdb, /dev/disk/by-id/..., disk4 */
	char *name;          /* the system's name: sdb, loop3, disk4 */
	int exists;          /* a block device the system knows */
	char *missing;       /* !exists: why ("no such file", "not a block device") */
	int whole;           /* a whole disk, not a partition */
	char *parent;        /* a partition's disk */
	int is_loop;
	char *loop_backing;  /* a loop device's backing file */
	int loop_by_rig;     /* attached by this rig process */
	int is_virtual;      /* nothing physical behind it: ram, zram, dm, md, nbd (not loop) */
	int internal;        /* 1 internal, 0 external, -1 unknown (Linux cannot tell; macOS: `Internal`) */
	char *root_via;      /* the disk holds /: how ("/ is mounted from vda1") */
	char *mounted;       /* a file system of the disk is mounted ("sdb1 on /media/x"); Linux:
	                      * macOS's partitionDisk unmounts the disk's volumes itself */
	char *system_mount;  /* a volume of the disk is mounted at / or under /System (macOS:
	                      * "disk1s1 is mounted at /System/Volumes/Data") */
	char *in_use;        /* used otherwise: swap, device mapper, RAID ("sdd2 is active swap") */
	char *rig_run;       /* `rig devices` only: the rig run holding the disk's target lock
	                      * ("rig run runs/X (pid 4242 on h, started 14:10:16 UTC)"); not a
	                      * rule: a run holds its own disk's lock while it checks the rules */
	int read_only;
	uint64_t size;       /* bytes; 0: no medium */
	uint32_t sector;     /* logical sector size in bytes, 0 unknown */
	int rotational;      /* 1, 0, or -1 unknown */
	int removable;
	char *model;
	char *serial;
};

void prov_disk_facts_release(struct disk_facts *f);

/* Rules a command-line option may waive (`--allow loop,virtual`). */
enum safety_allow {
	SAFETY_ALLOW_LOOP = 1,     /* a loop device rig did not attach */
	SAFETY_ALLOW_VIRTUAL = 2,  /* ram, zram, dm, md, nbd */
	SAFETY_ALLOW_INTERNAL = 4, /* an internal disk (macOS) */
};

struct safety_rule {
	const char *name;   /* "root-disk", "mounted", ... */
	unsigned waiver;    /* the SAFETY_ALLOW_* flag that waives it; 0: never waived */
	const char *what;   /* the rule in words, for help and `rig devices` */
};

/* The table, in the order rules are checked; terminated by name == NULL. */
extern const struct safety_rule prov_safety_rules[];

/*
 * Check a device against every rule, in order. Returns 0 when rig may
 * erase it, or -EPERM with *rule set to the first rule it breaks and the
 * fact that breaks it added to fact. confirm NULL skips the confirm rule
 * (`rig devices` asks whether a disk could be erased at all); allow is a
 * set of SAFETY_ALLOW_* flags.
 */
int prov_safety_check(const struct disk_facts *f, const char *confirm, unsigned allow,
		 const struct safety_rule **rule, struct strbuf *fact);

/* Whether s equals the disk's model or serial, or a loop device's backing
 * file (surrounding blanks ignored on both sides, case kept). */
int prov_safety_confirm_matches(const struct disk_facts *f, const char *s);

/*
 * `rig devices`' lines for one disk (Linux and macOS): path, size, solid
 * state or rotational, model and serial (or a loop device's backing file),
 * extra when not NULL; what uses it (the rig run using it first); and whether rig may erase it as a disk
 * target (with the confirm to write) or which rule refuses it and why.
 */
void prov_safety_describe(const struct disk_facts *f, const char *path, const char *extra,
		     struct strbuf *out);

/* "loop,virtual" -> SAFETY_ALLOW_* flags; -1 with the reason in err. */
int prov_safety_parse_allow(const char *list, unsigned *out, struct strbuf *err);

#endif
