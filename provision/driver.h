/*
 * A platform driver: how a platform (Linux, macOS) provisions image and
 * disk targets, in one descriptor, on its platform's table in the plan
 * layer (plan/platform.h: the file systems, abilities and device names
 * the plan checks against). cmd/ asks it for the disks of the machine,
 * the runner for the provisioning ops, and the engine who still uses a
 * disk. Nothing outside a driver's own files switches on the platform:
 * scripts/check-names fails the build when a platform name appears as a
 * string anywhere else.
 *
 * The model is libuv's split (uv-common.c beside src/unix/<os>.c) and
 * fio's engine table: a third platform is its driver file(s) defining one
 * `const struct prov_driver prov_driver_NAME`, its table
 * plan/platform_NAME.c, both listed by the Makefile's DRIVERS, and its
 * platform/ file.
 */
#ifndef RIG_PROVISION_DRIVER_H
#define RIG_PROVISION_DRIVER_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct plan_platform;
struct backend_ops;
struct plan_layout;
struct provision_ctx;
struct volume;

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
 * A resumed run (provision.h, struct provision_resume): what only a
 * backend knows of what the killed process of its run left. The engine
 * (engine.h, prov_resume) decides for every backend the same way, with
 * ctx->state the backend's state being prepared:
 *
 *   find     always: wait for the commands the killed run started (they
 *            outlive it and may still attach or mount; prov_wait_orphans),
 *            then look on the machine for what it left and put that into
 *            the state as if this process had provisioned it, so that the
 *            backend's teardown undoes it. what: it in words ("2 mounts,
 *            loop device /dev/loop3"), "" for nothing to say.
 *   verify   only when the resume may reuse: why what was found is not
 *            exactly the recorded volumes of ctx->resume->layout into why,
 *            "" when it is. What find already knows (a disk target, an
 *            image not attached) it may say here.
 *   adopt    it is, and is kept: the state as after provision(layout);
 *            kept: what is kept in words, "" for nothing to say. NULL:
 *            the state needs nothing more (dirs: the folders are used as
 *            they are).
 *   sweep    it was torn down: what the teardown does not undo because no
 *            provisioning of this process holds it (Linux: empty mount
 *            points below RUN/mnt, an image file the killed run made and
 *            never attached; macOS: an image file that keep: true kept
 *            while a resume makes it again from scratch). These can only
 *            go after the teardown (a mount point after its unmount, the
 *            file after its detach), so they are a fourth primitive, not
 *            part of find. NULL: nothing.
 *
 * Each returns 0 or a negative errno with the reason in ctx->err; the
 * engine then stops, and prepare fails.
 */
struct prov_resume_prims {
	int (*find)(struct provision_ctx *ctx, struct strbuf *what);
	int (*verify)(struct provision_ctx *ctx, struct strbuf *why);
	void (*adopt)(struct provision_ctx *ctx, struct strbuf *kept);
	int (*sweep)(struct provision_ctx *ctx);
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
	/* A resumed run's leftovers: found, verified, adopted or swept after
	 * the teardown (struct prov_resume_prims; prov_engine_resume). */
	const struct prov_resume_prims *resume;
	/* Whether a teardown left something (the end of the run tries once more). */
	int (*left)(const struct provision_ctx *ctx);
	void (*free_state)(void *state);
};

struct rig_imaging;
struct prov_driver {
	/* Its platform as plans know it: name, file systems, abilities. */
	const struct plan_platform *platform;
	const struct rig_imaging *imaging; /* a disk image of a folder (module.h), or NULL */
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

/* Every driver built in, NULL ended (RIG_DRIVERS, from the Makefile). */
extern const struct prov_driver *const prov_drivers[];

/* The driver of platform pl (a plan's), or NULL (pl NULL). */
const struct prov_driver *prov_driver_of(const struct plan_platform *pl);

#endif
