/*
 * Provisioning backends: turn one layout of a plan into mounted volumes and
 * back. One const ops struct per backend (dir.c, linux.c, macos.c), chosen
 * by prov_backend() from the plan's target and platform driver
 * (driver.h).
 *
 * Every external command a backend runs goes through the spawner it is
 * given (argument vectors, logged; in dry-run mode only recorded, which is
 * how `rig plan` shows the exact commands). Functions return 0 or a
 * negative errno with the reason in ctx->err, naming the failing command
 * and its output.
 */
#ifndef RIG_PROVISION_H
#define RIG_PROVISION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "platform/spawn.h"
#include "provision/driver.h"

struct strbuf;

struct volume {
	char *name;
	char *fs;                 /* as made, or as found for dirs */
	uint32_t position;        /* 1 = first from the start of the disk */
	char *dir;                /* where modules work (mounted, writable) */
	char *device;             /* block device, or NULL */
	int has_offsets;
	uint64_t offset_start, offset_end; /* byte range on the disk, end exclusive */
	char *facts_json;         /* a JSON object of device facts, or NULL */
};

void prov_volume_release(struct volume *v);

/*
 * A resumed run (rig resume): what the interrupted process of the same run
 * may have left provisioned. With ctx->resume set, prepare() first looks
 * for it (dirs: the work folders; Linux: the image's loop device and every
 * mount under RUN/mnt), whatever the store recorded, and either keeps it
 * (reuse, and it is exactly the recorded volumes of `layout`: then
 * `reused` is set and the backend's state is as after provision(layout))
 * or tears all of it down, so provisioning starts from scratch.
 */
struct provision_resume {
	size_t layout;              /* the layout the recorded volumes belong to */
	const struct volume *vols;  /* as recorded (store), in position order; NULL: none */
	size_t nvols;
	int reuse;                  /* keep them when they verify */
	int reused;                 /* out */
	struct strbuf *why;         /* out: why they were not kept / what was cleaned up */
};

/*
 * The provisioning journal (journal.c): where a backend records each
 * action that attaches, writes to or removes part of the target, before
 * and after it, and asks what a killed run had done. The runner keeps it
 * in the run's store (table journal); NULL: nothing is recorded (rig plan,
 * tests of a backend alone).
 */
struct prov_journal {
	/* Record that action on object is about to run: a handle for end, or
	 * 0 when it could not be recorded (reason in err). */
	int64_t (*begin)(void *opaque, const char *action, const char *object, const char *argv,
			 const char *identity, struct strbuf *err);
	void (*end)(void *opaque, int64_t id, int ok);
	/* The newest action recorded on object that matches the GLOB
	 * pattern actions ("*-image"), and whether it ended done (1), failed
	 * (0) or never ended (-1, killed during it): 1, or 0 when nothing is
	 * recorded. action is the caller's to free. */
	int (*last)(void *opaque, const char *object, const char *actions, char **action,
		    int *done);
	void *opaque;
};

struct provision_ctx {
	const struct plan *plan;
	/* The driver of the plan's platform; NULL: the one built in for it
	 * (prov_driver_of). A test gives its own. */
	const struct prov_driver *driver;
	const char *run_id;       /* the run folder's name */
	const char *run_dir;      /* the run folder (mount points go below it) */
	struct spawner *sp;
	struct strbuf *err;
	int yes;                  /* --yes: no typed confirmation */
	int force;                /* --force: an image file rig did not make may be overwritten */
	unsigned allow;           /* --allow: SAFETY_ALLOW_* rules waived (safety.h) */
	uint64_t image_size;      /* --image-size: replaces the plan's image size; 0: the plan's */
	volatile sig_atomic_t *cancel; /* non-zero: stop provisioning between commands (-EINTR);
	                          * NULL: never. Teardown ignores it: it always runs to the end. */
	/* What a backend does besides running commands (creating the image
	 * file, waiting for partition nodes), so that `rig plan` can list it
	 * and the command log shows it; and warnings (warning != 0) the run
	 * records. NULL: dropped. */
	void (*note)(void *opaque, int warning, const char *text);
	void *note_opaque;
	struct provision_resume *resume; /* NULL: a fresh run */
	struct prov_journal *journal;     /* NULL: not recorded (journal.c) */
	void *state;              /* the backend's, between calls */
	/* Tests only (NULL in rig): read disk facts from this recorded machine
	 * (tests/fixtures/linux/NAME) instead of this one's /sys and /proc.
	 * Accepted only with a spawner that runs nothing (spawner.fake), so a
	 * recorded machine's device names never reach a real command. */
	const char *sysroot;
};

/*
 * One thing a run uses alone: the name of its lock (platform/lock.h) and
 * the thing in words, for messages.
 */
struct target_key {
	char *key;    /* "disk-8:16-WD-WCC4E1234567", "image-/var/tmp/x.img", "dir-2049:131074" */
	char *what;   /* "disk /dev/sdb", "image /var/tmp/x.img", "directory /data/a" */
};
struct target_keys {
	struct target_key *v;
	size_t n;
};
/* Add a key unless it is there already (a directory named twice). */
void prov_target_keys_add(struct target_keys *k, const char *key, const char *what);
void prov_target_keys_release(struct target_keys *k);
/* The key of an image file at abs (absolute), what: the thing in words
 * (NULL: "image ABS"). */
void prov_target_keys_image(struct target_keys *k, const char *abs, const char *what);

struct backend_ops {
	const char *name;
	/* What a run of the plan uses alone (prov_target_keys), added to
	 * keys; before anything is checked. 0 or a negative errno with the
	 * reason in err. */
	int (*keys)(const struct plan *p, int create, struct target_keys *keys, struct strbuf *err);
	/* Checks before anything is changed (safety, tools present). Leaves
	 * nothing to undo when it fails. */
	int (*prepare)(struct provision_ctx *ctx);
	/* Provision layout li from scratch; fills *vols (caller releases). */
	int (*provision)(struct provision_ctx *ctx, size_t li, struct volume **vols, size_t *nvols);
	/* Unmount and mount one volume again (cache.remount). NULL: unsupported. */
	int (*remount)(struct provision_ctx *ctx, struct volume *v);
	/*
	 * Snapshots of volume v (the snapshot step; NULL: the backend takes
	 * none). take: a read-only snapshot, its name in *name (caller frees);
	 * drop: delete one it took. Through the spawner and journaled
	 * (take-snapshot, delete-snapshot). The backend remembers those not
	 * dropped and deletes them at teardown, where a failure is a warning:
	 * they go with the file system anyway.
	 */
	int (*snapshot_take)(struct provision_ctx *ctx, const struct volume *v, char **name);
	int (*snapshot_drop)(struct provision_ctx *ctx, const struct volume *v, const char *name);
	/* The names of v's snapshots now, the run's and any other (*names and
	 * each name the caller's to free): 0; 1 when nothing can be known (a
	 * dry run); a negative errno. NULL: the backend cannot list them (the
	 * snapshot step then checks nothing). */
	int (*snapshot_list)(struct provision_ctx *ctx, const struct volume *v, char ***names,
			     size_t *n);
	/* Undo provision(): must be safe to call after a partial provision. */
	int (*teardown)(struct provision_ctx *ctx, size_t li);
	/* End of the run: release everything (detach images...). */
	void (*finish)(struct provision_ctx *ctx);
};

/*
 * The keys of what a run of the plan uses alone, which the runner locks
 * before anything is checked or changed (and `rig plan` probes):
 *   dirs   each directory's device and inode; with create, directories
 *          that do not exist are made first (as the run makes them),
 *          without it they are left out (nothing can be using them);
 *   image  the image file's absolute path: its folder resolved, its name
 *          kept (the file may not exist yet; macOS: the .dmg hdiutil makes);
 *   disk   Linux: the whole disk's device number and serial, and a loop
 *          device's backing file as an image; macOS: the disk identifier
 *          (diskutil would have to be asked for the media UUID, and
 *          nothing may be asked before the lock); none for a device that
 *          does not exist (the safety rules refuse it).
 * 0, or a negative errno with the reason in err (an image's folder that
 * does not exist; a directory that cannot be made).
 */
int prov_target_keys(const struct plan *p, int create, struct target_keys *keys,
			  struct strbuf *err);
/* Who holds one of keys now (platform/lock.h, plat_lock_probe): "rig run R (pid
 * P on H, started T)" for the first one held (its index in *which when
 * which is not NULL), or NULL. Caller frees. */
char *prov_target_keys_holder(const struct target_keys *keys, size_t *which);

/*
 * A resumed run, before it looks at what the interrupted one left: the
 * commands that run started outlive it (their own process group), and a
 * `losetup`, `mount` or an exec'd benchmark may still attach, mount or
 * write. Wait until no other process uses one of needles, as the plan's
 * platform driver tells (driver.h, procs_using: /proc on Linux, lsof on
 * macOS), up to ORPHAN_WAIT_MS; then -EBUSY naming them.
 */
#define ORPHAN_WAIT_MS 10000
int prov_wait_orphans(struct provision_ctx *ctx, const char *const *needles);

extern const struct backend_ops prov_dir_ops;
extern const struct backend_ops prov_linux_ops; /* image and disk targets on Linux */
extern const struct backend_ops prov_macos_ops; /* image and disk targets on macOS */

/* ctx's driver: ctx->driver, else the one of its plan's platform; NULL
 * for a plan of no platform. */
const struct prov_driver *prov_ctx_driver(const struct provision_ctx *ctx);

/* The backend for the plan's target: dirs, or the ops of the plan's
 * platform driver; NULL with the reason in err. The drivers are portable
 * C, so `rig plan` can list a plan's commands anywhere. The Linux backend
 * refuses to run anywhere but Linux; the macOS backend runs whatever
 * diskutil and hdiutil are first on PATH (on Linux only the fake ones of
 * build/tools/macos, built from tests/tools/fake-macos/, exist). */
const struct backend_ops *prov_backend(const struct plan *p, struct strbuf *err);

#endif
