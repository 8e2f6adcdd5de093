/*
 * A platform driver: what the rest of rig may know about a platform that
 * provisions image and disk targets (Linux, macOS), in one descriptor.
 * The plan parser asks it which file systems exist and what a device name
 * looks like, cmd/ asks it for the disks of the machine, the runner asks
 * it for the provisioning ops, and the engine asks it who still uses a
 * disk. Nothing outside a driver's own files switches on the platform:
 * scripts/check-names fails the build when a platform name appears as a
 * string anywhere else.
 *
 * The model is libuv's split (uv-common.c beside src/unix/<os>.c) and
 * fio's engine table: a third platform is its driver file(s) defining one
 * `const struct prov_driver prov_driver_NAME`, found by the Makefile (the
 * registry is generated from the definitions, like the test suites), and
 * its platform/ file.
 */
#ifndef RIG_PROVISION_DRIVER_H
#define RIG_PROVISION_DRIVER_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct backend_ops;
struct plan_layout;
struct provision_ctx;
struct volume;

/* A file system a driver can make. */
struct prov_fs {
	const char *name;    /* as plans write it: "apfs", "ext4" */
	/* Other names a plan may give it, NULL ended (NULL: none): the
	 * platform tool's own ("jhfs+" for hfs+), compared without case;
	 * the plan keeps the name above. */
	const char *const *aliases;
	int case_sensitive;  /* names differ by case alone: 1; fold case: 0 */
	/* How a partition of it is kept and resized by a `keep: true` layout
	 * (in words, for messages), or NULL: it cannot be kept. */
	const char *keep_how;
	int label_max;       /* the longest volume name its label takes */
	const char *label_bad; /* characters its label refuses, or NULL */
	unsigned flags;      /* PROV_FS_*: what a volume of it can be asked */
};

/* What a file system can do (prov_fs.flags): the plan's partition
 * conditions and the snapshot step are checked against these, never
 * against names. */
enum {
	PROV_FS_SNAPSHOTS = 1u << 0, /* read-only snapshots (the snapshot step, `snapshots:`) */
	PROV_FS_DEFRAG = 1u << 1,    /* automatic defragmentation switched on or off (`defrag:`) */
};

/* Abilities (prov_driver.abilities). */
enum {
	PROV_CAN_KEEP = 1u << 0,    /* a layout may keep its first partition, resized */
	PROV_CAN_REMOUNT = 1u << 1, /* cache: remount between cells */
	/* A content indexer that can be switched off per volume (`indexing:`);
	 * without it `indexing: off` is nothing to do, and is recorded so. */
	PROV_CAN_INDEX = 1u << 2,
};

/*
 * Where a partition of a layout goes, as the driver would make it on a
 * target of a given size: its first byte from the start of the disk and
 * its length. A driver whose tool places partitions itself (diskutil)
 * gives the start it expects; the volume's real offset comes from the
 * tool afterwards.
 */
struct prov_extent {
	uint64_t start, bytes;
};

/*
 * A driver's primitive operations, on its state (ctx->state, made by its
 * backend's prepare). The engine (engine.h, prov_engine_provision and
 * prov_engine_teardown) calls them in one order for every platform:
 *
 *   provision  begin(li); image targets: create_image, attach; disk
 *              targets: open_disk; partition(li); then per partition k:
 *              format (NULL: partition made the file systems, as
 *              diskutil partitionDisk does), mount, conditions; and
 *              volume(k) describes what is handed to the modules.
 *              Ctrl-C is looked at between any two of them.
 *   teardown   unmount(k) for every volume, the last first; end_volumes;
 *              image targets: detach, delete_image; disk targets:
 *              release_disk.
 *
 * Each returns 0 or a negative errno with the reason in ctx->err. The
 * teardown primitives undo only what their state says was done, so they
 * are safe after a partial provision and a second time; the engine goes on
 * after a failed one and reports every failure.
 */
struct prov_prims {
	/* Where the partitions of l go on a target of total bytes with
	 * sector-byte sectors (out: l's nparts extents); 0, or -ENOSPC /
	 * -EINVAL with the reason in why. Pure: `rig plan` and the estimates
	 * use it too. */
	int (*fit)(const struct plan_layout *l, uint64_t total, uint32_t sector,
		   struct prov_extent *out, struct strbuf *why);
	int (*begin)(struct provision_ctx *ctx, size_t li);
	int (*create_image)(struct provision_ctx *ctx);
	int (*attach)(struct provision_ctx *ctx);
	int (*open_disk)(struct provision_ctx *ctx);
	int (*partition)(struct provision_ctx *ctx, size_t li);
	int (*format)(struct provision_ctx *ctx, size_t li, size_t k);
	int (*mount)(struct provision_ctx *ctx, size_t li, size_t k);
	int (*conditions)(struct provision_ctx *ctx, size_t li, size_t k);
	void (*volume)(struct provision_ctx *ctx, size_t li, size_t k, struct volume *v);
	size_t (*volumes)(const struct provision_ctx *ctx); /* how many the state holds */
	int (*unmount)(struct provision_ctx *ctx, size_t k);
	void (*end_volumes)(struct provision_ctx *ctx);
	int (*detach)(struct provision_ctx *ctx);
	int (*delete_image)(struct provision_ctx *ctx);
	int (*release_disk)(struct provision_ctx *ctx);
	/* Whether a teardown left something (the end of the run tries once more). */
	int (*left)(const struct provision_ctx *ctx);
	void (*free_state)(void *state);
};

struct rig_imaging;
struct prov_driver {
	const char *name;            /* "linux": --platform, the store, messages */
	const struct prov_fs *fs;    /* the file systems it makes, name == NULL ends */
	unsigned abilities;          /* PROV_CAN_* */
	const struct rig_imaging *imaging; /* a disk image of a folder (module.h), or NULL */
	/*
	 * Is dev a whole-disk name of this platform ("/dev/sdb", "disk4")?
	 * 0, or -1 with the reason in why (a sentence naming dev, for the
	 * plan's error at its line and column).
	 */
	int (*device_check)(const char *dev, struct strbuf *why);
	/* Append the machine's disks and whether rig may erase them (rig
	 * devices). Reads only. */
	void (*devices_report)(struct strbuf *out);
	/*
	 * Which processes other than this one name one of needles (NULL
	 * ended) in their arguments or work below one of them: 1 with a
	 * list "PID (COMMAND)" in what, 0 for none (also when the platform
	 * cannot tell). The resumed run's wait for orphans (provision.c).
	 */
	int (*procs_using)(const char *const *needles, struct strbuf *what);
	/* What `rig plan`'s printed commands leave to the run, after "nothing
	 * is run here; " ("RUN stands for the run folder"), and what an image
	 * target adds ("/dev/loopN for the loop device losetup picks at run
	 * time"). */
	const char *dry_legend, *dry_legend_image;
	/* Provisioning of image and disk targets: the layout-level ops the
	 * runner calls (provision.h); provision, teardown and finish are the
	 * engine's, driving prims. */
	const struct backend_ops *ops;
	const struct prov_prims *prims;
};

/* Every driver built in, NULL ended (generated: build/.../drivers.inc). */
extern const struct prov_driver *const prov_drivers[];

/* The driver called name, or NULL. */
const struct prov_driver *prov_driver_find(const char *name);
/* The driver of the machine rig runs on (plat_name()); NULL where there is none. */
const struct prov_driver *prov_driver_host(void);
/* "linux or macos": the names of the drivers, for messages. */
void prov_driver_names(struct strbuf *sb);
/* d's file system called name or one of its aliases, or NULL. */
const struct prov_fs *prov_driver_fs(const struct prov_driver *d, const char *name);
/* The first driver (in prov_drivers order) that can make fs, or NULL. */
const struct prov_driver *prov_driver_of_fs(const char *fs);
/* d's file system fs has every flag of want (PROV_FS_*): 1, else 0 (also
 * for a file system d does not make). */
int prov_fs_can(const struct prov_driver *d, const char *fs, unsigned want);
/* "apfs, apfsx": d's file systems with every flag of want; "" for none. */
void prov_fs_with(struct strbuf *sb, const struct prov_driver *d, unsigned want);

#endif
