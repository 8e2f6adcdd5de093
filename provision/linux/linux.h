/*
 * What the files of the Linux backend offer each other and the tests:
 * linux_facts.c (disks and what uses them, from sysfs and the mount
 * tables), linux_devices.c (`rig devices`), linux_gpt.c (where each
 * partition of a layout goes). The backend itself is linux.c and
 * linux_target.c (state in linux_backend.h).
 *
 * These files are portable C: they read files under /sys and /proc and run
 * commands through the spawner, with no Linux-only system call, so they
 * build on macOS too, where `rig plan` can still list a Linux plan's
 * commands. Every reader takes a root prefix ("" for this machine), which
 * is how the tests point them at recorded fixtures instead of real disks.
 */
#ifndef RIG_PROVISION_LINUX_H
#define RIG_PROVISION_LINUX_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "provision/safety.h"

struct strbuf;
struct target_keys;

/* --- facts (linux_facts.c) --- */

/*
 * Facts about the device at path (/dev/sdb, /dev/disk/by-id/..., a
 * partition) from sysfs, /proc/self/mountinfo, /proc/swaps and the udev
 * database under root. With root "" the path is resolved and must be a
 * block device; with a fixture root the name is the path's last component.
 * Never fails: what cannot be read stays unknown (f->exists 0 says why).
 * The caller releases f with prov_disk_facts_release().
 */
void prov_linux_disk_facts(const char *root, const char *path, struct disk_facts *f);

/*
 * The lock keys (provision.h, prov_target_keys) of the disk f
 * describes, named what in messages: "disk-MAJ:MIN-SERIAL" of its whole
 * disk (the device number from sysfs; the serial when it has one), and for
 * a loop device also its backing file as an image, so that a run on a
 * loop device and a run on the image behind it exclude each other.
 * Nothing for a device that does not exist.
 */
void prov_linux_disk_keys(const char *root, const struct disk_facts *f, const char *what,
		     struct target_keys *keys);

/* The whole disks under root/sys/block, sorted by name (loop devices
 * without a backing file left out). Returns the count; *names and each
 * name are the caller's to free. */
size_t prov_linux_list_disks(const char *root, char ***names);

/* The loop device ("loop3") whose backing file is file, or NULL. Caller frees. */
char *prov_linux_loop_of(const char *root, const char *file);

/* The mounts below prefix (mount points prefix/...), in mount order: what
 * a killed run left under RUN/mnt. Caller frees with prov_linux_mounts_free. */
struct linux_mount {
	char *dir, *source, *fstype;
};
size_t prov_linux_mounts_under(const char *root, const char *prefix, struct linux_mount **out);
void prov_linux_mounts_free(struct linux_mount *m, size_t n);

/*
 * The processes other than this one whose arguments contain one of needles
 * (a NULL-terminated list), or whose working folder is one of them or below
 * it, from root/proc: the commands a killed run started, which outlive it
 * (they run in their own process group) and may still attach, mount or
 * write. Returns how many; what (may be NULL) gets "PID n (argv)" for each.
 */
size_t prov_linux_procs_using(const char *root, const char *const *needles, struct strbuf *what);

/* How many partitions the kernel has for disk ("loop3"). */
size_t prov_linux_partition_count(const char *root, const char *disk);

/* A sysfs attribute root/PATH, blanks at both ends removed; NULL when it
 * cannot be read. Caller frees. */
char *prov_linux_attr(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The mount options of the file system mounted on dir (mountinfo's
 * per-mount options, then ";" and the super block's), or NULL. */
char *prov_linux_mount_options(const char *root, const char *dir);
/* Whether anything is mounted on dir. */
int prov_linux_is_mounted(const char *root, const char *dir);

/*
 * `rig devices` on Linux (linux_devices.c): every disk under root with its
 * size, rotational flag, model, serial, what uses it, and whether rig would
 * erase it as a disk target or which safety rule refuses it.
 */
void prov_linux_devices_report(const char *root, struct strbuf *out);

/* The driver's primitive operations (driver.h; linux.c). */
struct prov_prims;
extern const struct prov_prims prov_linux_prims;

/* --- geometry (linux_gpt.c) --- */

#define GPT_ALIGN (1u << 20)    /* partitions start on 1 MiB boundaries */
#define GPT_ENTRIES_BYTES 16384 /* 128 entries of 128 bytes, at each end */

struct gpt_part {
	uint64_t first, last;   /* sectors, inclusive (sgdisk's numbers) */
};

/*
 * Where the partitions of layout l go on a disk of `bytes` bytes with
 * `sector`-byte sectors: in plan order from the first 1 MiB boundary, each
 * start aligned to 1 MiB. Percentages are shares of the usable space (from
 * 1 MiB to the backup table) and are rounded down to whole MiB; byte sizes
 * are kept (rounded up to a sector). The last partition takes what is left
 * up to the backup table when the layout has a `rest` or its percentages
 * add up to 100% (rounding and alignment go to it); otherwise it keeps its
 * own size and the end of the disk stays free. out has l->nparts entries.
 * Returns 0, or -ENOSPC/-EINVAL with the reason in err.
 */
int prov_gpt_layout(const struct plan_layout *l, uint64_t bytes, uint32_t sector,
	       struct gpt_part *out, struct strbuf *err);

/* The first and last usable sectors of such a disk (GPT's own tables excluded). */
void prov_gpt_usable(uint64_t bytes, uint32_t sector, uint64_t *first, uint64_t *last);

/* The name of partition n of disk dev: /dev/sdb -> /dev/sdb1, /dev/loop3 ->
 * /dev/loop3p1, /dev/nvme0n1 -> /dev/nvme0n1p1. */
void prov_linux_part_path(struct strbuf *sb, const char *dev, size_t n);

#endif
