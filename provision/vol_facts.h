/*
 * The facts recorded with a provisioned volume (the store's
 * volumes.facts_json), in one schema for every platform: the drivers fill
 * a struct vol_facts, and prov_vol_facts_json writes every key, null where the
 * platform does not know it or it does not apply. docs/results-store.md
 * lists the keys. Before, each backend wrote its own JSON, and the same
 * idea had two names (rotational / solid_state, gpt_name / name,
 * model / media_name), so a report of a macOS run showed no model and no
 * medium.
 */
#ifndef RIG_PROVISION_VOL_FACTS_H
#define RIG_PROVISION_VOL_FACTS_H

#include <stdint.h>

#define VF_UNKNOWN (-1) /* a tri-state or count not known */

struct vol_facts {
	const char *target;          /* "image" or "disk" */
	const char *disk;            /* /dev/loop3, /dev/sdb, disk4 */
	const char *partition;       /* /dev/loop3p1, disk4s2 */
	const char *volume;          /* the APFS volume (disk5s1); else NULL */
	const char *container;       /* the APFS container (disk5); else NULL */
	unsigned number;             /* the partition's number in the table, from 1 */
	const char *name;            /* the plan's name: GPT name and label */
	const char *image;           /* the image file (image targets) */
	const char *model, *serial;  /* the disk's (macOS: the media name is its model) */
	const char *bus;             /* usb, nvme, ata, ... as the platform names it */
	int rotational;              /* 1 hard disk, 0 solid state, VF_UNKNOWN */
	int internal;                /* 1, 0, VF_UNKNOWN */
	unsigned sector_size;        /* logical; 0 unknown */
	int has_sectors;             /* first_sector, last_sector known */
	uint64_t first_sector, last_sector;
	uint64_t partition_bytes;    /* 0 unknown */
	const char *fs;              /* as the plan names it */
	const char *format_command;  /* the mkfs command line, or NULL (diskutil formats) */
	const char *fs_personality;  /* the platform's name of it (Journaled HFS+), or NULL */
	const char *fs_type;         /* the kernel's type (hfs, ext4), or NULL */
	unsigned block_size;         /* file-system block (allocation) size; 0 unknown */
	const char *mount_point;
	const char *mount_options;   /* as mounted, or NULL */
	const char *super_options;   /* the superblock's (Linux), or NULL */
	int has_space;               /* capacity_bytes, free_bytes known */
	uint64_t capacity_bytes, free_bytes;
	int loop_direct_io;          /* image on Linux: 1, 0; else VF_UNKNOWN */
	int kept;                    /* the partition was kept from the layout before */
	const char *kept_from;       /* its layout's name, or "the disk as found" */
	const char *work_dir;        /* where the modules work */
	/* Conditions (the plan's partition keys), each NULL when the plan
	 * leaves it out: what the plan says ("off", "keep 20") and how it was
	 * applied: the command, "nothing to do: ...", or "not applied: ...". */
	const char *indexing, *indexing_applied;
	const char *defrag, *defrag_applied;
	const char *snapshots, *snapshots_applied;
};

/* One JSON object with every key of the schema, in a fixed order. */
char *prov_vol_facts_json(const struct vol_facts *f);

#endif
