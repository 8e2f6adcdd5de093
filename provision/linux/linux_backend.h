/*
 * The Linux backend's own state and helpers, shared by its two files:
 * linux.c (the ops: partition table, file systems, mounts, teardown) and
 * linux_target.c (running commands, tools, the image file and loop device,
 * the disk's safety check and typed confirmation). Not for other callers:
 * they use prov_linux_ops (provision.h) and linux.h.
 */
#ifndef RIG_PROVISION_LINUX_BACKEND_H
#define RIG_PROVISION_LINUX_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "platform/spawn.h"
#include "provision/command.h"
#include "provision/engine.h"
#include "provision/linux/linux.h"
#include "provision/provision.h"
#include "provision/safety.h"

struct strbuf;

#define GUID_MARK 0x72696721u     /* "rig!": the first field of rig's disk GUIDs */
#define NODE_TIMEOUT_MS 10000     /* partition nodes appear within milliseconds */
#define UMOUNT_TRIES 10           /* 100 ms apart: a busy file system gets 1 s */

struct lvol {
	char *part;        /* /dev/loop3p1 */
	char *mnt;         /* RUN/mnt/NAME */
	int mnt_made;
	int mounted;
	const char *opts;  /* mount -o, from the plan's conditions (prov_lx_mount_option), or NULL */
	char *mkfs;        /* the mkfs command line, for the facts */
	struct prov_snap_list snaps; /* snapshots taken and not deleted (linux_cond.c) */
	unsigned snap_next;          /* the number of the last one's name */
	int snap_dir_made;
};

struct lx {
	int dry;
	int is_image;
	char *run_abs;              /* the run folder, absolute ("RUN" in dry run) */
	char *mnt_root;             /* RUN/mnt */
	int mnt_root_made;
	char *image;                /* absolute image path */
	uint64_t bytes;             /* the disk's size; 0 unknown (dry run) */
	uint32_t sector;
	struct prov_extent **fit;   /* per layout (prov_fit_layouts); NULL: the size is unknown */
	const char *root;           /* where facts are read: "" this machine, or ctx->sysroot */
	struct disk_facts facts;    /* disk targets, as last checked */
	/* The disk as checked and confirmed in prepare: every destructive
	 * command is preceded by a check that the device still is this disk. */
	struct disk_identity id;
	/* the provisioned layout */
	char *disk;                 /* /dev/loopN or the resolved disk */
	int image_made;
	int attached;
	int parts_added;
	int dio;                    /* loop direct I/O as applied: 1, 0, -1 unknown */
	struct lvol *v;
	size_t nv;
	/* a resumed run: what the killed one left, as find saw it, for verify,
	 * adopt and sweep (linux_resume.c) */
	struct lx_found {
		char *loop;             /* "loop3", reading the image; NULL: none */
		struct linux_mount *m;  /* the mounts below RUN/mnt */
		size_t nm;
	} found;
};

/* ctx->note with a format; dropped when the context has no note hook. */
void prov_lx_note(struct provision_ctx *ctx, int warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether Ctrl-C was pressed; if so, "interrupted" goes into ctx->err. */
int prov_lx_cancelled(struct provision_ctx *ctx);
/*
 * Run a command through ctx->sp in its own process group; 0 only when it
 * exited with status 0. On failure ctx->err says which command, its status
 * and the start of its output. out, when not NULL, receives the result
 * (the caller releases it), with stdout also apart.
 */
int prov_lx_run(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *out);
void prov_lx_sleep_ms(unsigned ms);
const char *prov_lx_base_name(const char *path);

/* "ext4" -> "mkfs.ext4"; NULL for a file system this backend cannot make. */
const char *prov_lx_mkfs_tool(const char *fs);
/* Every tool the plan needs is on PATH, or the error lists what is missing. */
int prov_lx_check_tools(struct provision_ctx *ctx, const struct lx *s);

/* May s->image be (re)created? Before anything changes. */
int prov_lx_check_image(struct provision_ctx *ctx, struct lx *s);
/* Create s->image sparse (replacing rig's own); sets s->image_made. */
int prov_lx_create_image(struct provision_ctx *ctx, struct lx *s);
/* Attach s->image; sets s->disk, s->attached, s->dio. */
int prov_lx_attach(struct provision_ctx *ctx, struct lx *s);
/* Is s->disk still attached to s->image? (1 in dry run) */
int prov_lx_loop_is_ours(struct provision_ctx *ctx, const struct lx *s);

/* A resumed run's find, verify, adopt and sweep (linux_resume.c; driver.h,
 * struct prov_resume_prims), for prov_engine_resume in prepare, before the
 * image or disk checks, once s->image and s->mnt_root are set. */
extern const struct prov_resume_prims prov_lx_resume_prims;
/* Forget what find saw (s->found). */
void prov_lx_found_release(struct lx *s);

/* Read the disk target's facts into s->facts and apply the safety rules. */
int prov_lx_check_disk(struct provision_ctx *ctx, struct lx *s);
/*
 * Open dev exclusively (plat_open_exclusive) into *fd: it fails (-EBUSY,
 * with "refusing to erase DEV: it is busy..." in ctx->err) while another
 * program holds the disk (a mounted file system, device mapper, RAID, or
 * an exclusive opener such as mkfs or a partitioner), and while *fd is
 * open nobody else gets the disk exclusively. *fd is -1 (and 0 returned)
 * in a dry run and on a recorded machine. Release with prov_lx_release_disk.
 */
int prov_lx_hold_disk(struct provision_ctx *ctx, const struct lx *s, const char *dev, int *fd);
void prov_lx_release_disk(int fd);
/* Remember s->facts as the disk that was checked and confirmed. */
void prov_lx_remember_identity(struct lx *s);
/*
 * Run a command that writes to the target (sgdisk, mkfs.*), immediately
 * after checking that the target is still what was checked: for a disk,
 * the same name, model, serial and size as when it was confirmed; for an
 * image, the loop device still reads rig's image. A changed target is
 * refused (-EPERM) and the command is not run. Journaled as action on
 * object (journal.h), with the identity that was seen.
 */
int prov_lx_run_destructive(struct provision_ctx *ctx, struct lx *s, const char *action,
		       const char *object, const char *const *argv);
/* Ask to type the disk's model or serial (refused without a terminal). */
int prov_lx_typed_confirmation(struct provision_ctx *ctx, struct lx *s);

/* --- volume conditions and snapshots (linux_cond.c) --- */

/* The mount option of pt's conditions ("autodefrag", "noautodefrag"), or
 * NULL: none. */
const char *prov_lx_mount_option(const struct plan_partition *pt);
/* After pt's volume is mounted: what its conditions mean here, noted
 * (indexing: nothing to do). */
void prov_lx_cond_note(struct provision_ctx *ctx, const struct plan_partition *pt);
/* pt's conditions in its facts (engine.h, prov_cond_facts), with the
 * words of this driver. */
void prov_lx_cond_facts(const struct provision_ctx *ctx, const struct plan_partition *pt,
		   struct vol_facts *f, struct prov_cond_text *t);
/* The backend's snapshot ops (provision.h). */
int prov_lx_snapshot_take(struct provision_ctx *ctx, const struct volume *vol, char **name);
int prov_lx_snapshot_drop(struct provision_ctx *ctx, const struct volume *vol, const char *name);
/* Before v is unmounted: delete the snapshots left on it and rig's folder
 * of them; a failure is a warning (they go with the file system). */
void prov_lx_snapshots_teardown(struct provision_ctx *ctx, struct lx *s, struct lvol *v);

#endif
