/*
 * What the files of the macOS backend offer each other and the tests:
 * macos_facts.c (what the safety rules need to know about a disk, from
 * diskutil's plists), macos_layout.c (the byte sizes of a layout and the
 * check of what diskutil made), and `rig devices` on macOS. The backend
 * itself is macos.c (prov_macos_ops). The parsers are macos_plist.h.
 *
 * All of it is portable C that runs commands through a query function, so
 * the tests give it recorded outputs and fake tools, and `rig plan` and
 * `rig devices` run on Linux with `--platform macos`.
 */
#ifndef RIG_PROVISION_MACOS_H
#define RIG_PROVISION_MACOS_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "provision/engine.h"
#include "provision/macos/macos_plist.h"
#include "provision/safety.h"

struct strbuf;
struct spawner;
struct target_keys;

/*
 * A read-only query: run argv and give its stdout in *out (caller frees),
 * also when the command failed (diskutil prints its error dict on stdout).
 * Returns 0 when the command ran, or -1 with the reason in err.
 */
typedef int (*mac_query_fn)(void *opaque, const char *const *argv, char **out, struct strbuf *err);

/* The query through a spawner (logged as every command; never dry). */
int prov_mac_spawn_query(void *spawner, const char *const *argv, char **out, struct strbuf *err);

/* --- facts (macos_facts.c) --- */

/* What is known about the whole machine: the disks behind /, and every
 * disk's volumes and mount points. */
struct mac_system {
	char *root_error;          /* set when the disk behind / cannot be told: every disk is refused */
	char **root_disks;         /* whole disks that hold /, with how in root_why */
	char **root_why;
	size_t nroot;
	struct mac_list list;      /* diskutil list -plist */
	struct mac_apfs apfs;      /* diskutil apfs list -plist */
};

/*
 * Read the system: `diskutil info -plist /`, `diskutil info -plist STORE`
 * for each physical store of its APFS container (-> ParentWholeDisk),
 * `diskutil list -plist` and `diskutil apfs list -plist`. Never fails:
 * what cannot be read is kept as the reason (root_error) or left empty.
 */
void prov_mac_system_read(mac_query_fn q, void *opaque, struct mac_system *s);
void prov_mac_system_release(struct mac_system *s);

/*
 * The facts of the device `path` (disk4) from its `diskutil info -plist`
 * and the system; a pure function, so the tests give it fixtures and
 * devices derived from them. Caller releases f.
 */
void prov_mac_disk_facts(const struct mac_system *s, const char *path, const struct mac_info *info,
		    struct disk_facts *f);

/* `diskutil info -plist path`, parsed; -1 (reason in err) when it printed no plist. */
int prov_mac_read_info(mac_query_fn q, void *opaque, const char *path, struct mac_info *info,
		  struct strbuf *err);

/* `rig devices` on macOS: every whole disk with its facts and verdict. */
void prov_macos_devices_report(mac_query_fn q, void *opaque, struct strbuf *out);

/* The lock key (provision.h, prov_target_keys) of disk identifier id
 * (its whole disk), named what in messages: "disk-disk4". */
void prov_mac_disk_keys(const char *id, const char *what, struct target_keys *keys);

/* The whole disk of an identifier by its name: disk4s2 -> disk4. Caller frees. */
char *prov_mac_whole_of(const char *id);

/* --- layouts (macos_layout.c) --- */

#define MAC_MIB 1048576ull
#define MAC_EFI_BYTES 209715200ull  /* the EFI partition diskutil puts first on GPT */
#define MAC_EFI_START 20480ull      /* where it starts (sector 40 of 512 bytes) */

/* diskutil's name of a plan file system: APFS, JHFS+, ExFAT, MS-DOS FAT32. */
const char *prov_mac_format(const char *fs);
/* What `diskutil info` calls it (FilesystemType) and the GPT Content of its partition. */
const char *prov_mac_fs_type(const char *fs);
const char *prov_mac_content(const char *fs);
/* Whether fs is made as an APFS container (apfs, apfsx). */
int prov_mac_is_apfs(const char *fs);

/*
 * The byte size of each partition of layout l on a disk of TotalSize
 * total: the space after the EFI partition (from the first 1 MiB boundary)
 * up to 1 MiB before the end, shares of it rounded down to whole MiB (so
 * equal shares are exactly equal), byte sizes as written, `rest` what is
 * left in whole MiB. 0 or -ENOSPC with the reason in err.
 */
int prov_mac_layout_sizes(const struct plan_layout *l, uint64_t total, uint64_t *sizes,
		     struct strbuf *err);
/* The driver's primitive operations (driver.h; macos.c). */
extern const struct prov_prims prov_macos_prims;

/* The driver's fit (driver.h): those sizes, each partition starting at the
 * next MiB after the one before it, as diskutil places them. */
struct prov_extent;
int prov_mac_fit(const struct plan_layout *l, uint64_t total, uint32_t sector, struct prov_extent *out,
	    struct strbuf *why);

/* Whether a volume name diskutil reports is the plan's (case ignored for
 * fat32, whose labels are capitals). */
int prov_mac_name_matches(const char *fs, const char *got, const char *want);

/* One partition as diskutil made it, matched to the plan. */
struct mac_made {
	char *part;       /* disk4s2 */
	char *volume;     /* disk5s1 (APFS) or the partition (others) */
	char *container;  /* disk5 (APFS) or NULL */
	uint64_t size;    /* the partition's */
};

/*
 * Check the re-read layout of disk against the plan: after the EFI
 * partition, exactly the plan's partitions in its order, each of the
 * expected type and within 2 MiB of its size (fit, from prov_mac_fit), each APFS one the only store
 * of a container holding one volume of the plan's name. Fills made[] (the
 * caller releases with prov_mac_made_release) or returns -EIO with what differs.
 */
int prov_mac_layout_check(const struct plan_layout *l, const struct prov_extent *fit, const char *disk,
		     const struct mac_list *list, const struct mac_apfs *apfs,
		     struct mac_made *made, struct strbuf *err);
void prov_mac_made_release(struct mac_made *m, size_t n);

/*
 * What disk holds, for messages: each partition after EFI with its type,
 * size and name (an APFS one: its container and volume names). "nothing
 * after EFI" when empty; what diskutil did not list when the disk is absent.
 */
void prov_mac_disk_describe(const char *disk, const struct mac_list *list, const struct mac_apfs *apfs,
		       struct strbuf *sb);

/*
 * Whether disk is the state a layout that keeps kp starts from: exactly one
 * partition besides EFI, of kp's type, whose volume is named kp->name (an
 * APFS one: the only store of a container holding exactly one volume, of
 * that name). 1 with *kept filled (the caller releases it); 0 with why
 * saying what differs.
 */
int prov_mac_keep_start(const struct plan_partition *kp, const char *disk, const struct mac_list *list,
		   const struct mac_apfs *apfs, struct mac_made *kept, struct strbuf *why);

/*
 * The processes in lsof -F pcn output (text) other than self that have a
 * needle, or anything below one, open or as their working folder: how
 * many; what (may be NULL) gets "PID n (command)" for each (macos_procs.c).
 */
size_t prov_mac_lsof_users(const char *text, long self, const char *const *needles,
		      struct strbuf *what);
/* The driver's procs_using (driver.h): lsof through a real spawner. */
int prov_mac_procs_using(const char *const *needles, struct strbuf *what);

/* --- volume conditions and snapshots (macos_cond.c) --- */

struct provision_ctx;
struct vol_facts;
struct prov_cond_text;
struct mac_snaps;
/* pt's conditions on the volume mounted at mount (mdutil, diskutil apfs
 * defragment; `snapshots: none` on APFS: the volume out of Time Machine,
 * `tmutil addexclusion -v`, once, recorded in sn): after provisioning and
 * after each remount. */
int prov_mac_cond_apply(struct provision_ctx *ctx, const struct plan_partition *pt, const char *mount,
		   struct mac_snaps *sn);
/* pt's conditions in its facts (engine.h, prov_cond_facts). */
void prov_mac_cond_facts(const struct provision_ctx *ctx, const struct plan_partition *pt,
		    const char *mount, struct vol_facts *f, struct prov_cond_text *t);
/* The snapshots the run took of one volume and has not deleted. */
struct mac_snaps {
	struct prov_snap_list l;
	uint64_t last_ns;     /* when the last was taken (tmutil's dates are seconds) */
	unsigned taken;       /* how many were taken (a dry run's placeholder dates) */
	int included;         /* tmutil isexcluded said [Included] (checked before the first) */
	int excluded;         /* the run excluded the volume from Time Machine (none) */
};
/* A Time Machine local snapshot (bare `tmutil localsnapshot`, which
 * snapshots every APFS volume Time Machine includes), found on the volume
 * by its date; before the first, `tmutil isexcluded MOUNT` must say
 * [Included], else the step is refused with the fix. */
int prov_mac_snapshot_take(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn,
		      char **name);
/* diskutil apfs deleteSnapshot, then listSnapshots until the name is gone
 * (APFS deletes in the background): the next step starts without it. */
int prov_mac_snapshot_drop(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn,
		      const char *name);
/* The names diskutil apfs listSnapshots gives for the volume now, the
 * run's and any other (Time Machine's hourly ones): 0; 1 in a dry run
 * (the command listed, nothing known); or -EIO with the reason. */
int prov_mac_snapshot_list(struct provision_ctx *ctx, const char *mount, char ***names, size_t *n);
/* Before the volume goes: delete those left (a failure is a warning), and
 * take the volume out of Time Machine's exclusions again if the run put
 * it there. */
void prov_mac_snapshots_teardown(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn);

#endif
