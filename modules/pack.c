/*
 * pack: moves the volume's tree (the `tree` step's folder) into one disk
 * image file on the same volume, and removes the folder: the fill-levels
 * article's second half (004), where a folder of 288,287 files (about
 * 1 GB) in one directory was moved into item1.dmg and the volume's
 * sequential rates came back at the same fill level.
 *
 * The image is made from the folder by the platform's own tool, through
 * the spawner (commands.log, `rig plan` lists them):
 *   macos  `hdiutil create -srcfolder TREE -format UDRW -fs HFS+ -volname
 *          rig-pack -ov IMAGE.dmg`, then `hdiutil resize -size SIZE IMAGE.dmg`
 *          (the article: a read/write image, resized to 2g);
 *   linux  `mke2fs -q -F -t ext4 -d TREE IMAGE.img SIZE` (an ext4 file
 *          system image populated from the folder, made without a mount).
 * The commands are the run's platform driver's (ctx->imaging, data in
 * provision/linux/linux_driver.c and macos_driver.c), so a macOS plan rehearsed
 * with `--platform macos` runs hdiutil. Then the
 * folder is removed (mod_tree_remove) and the tree's state says so (its
 * files count 0), so enumerate and churn after it find nothing to walk.
 * Timing: `seconds` from the first command to the folder's removal
 * (the move, as the article's mv was); `bytes`: the image file's
 * allocated size afterwards; `files`: the files moved.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "modules/tree.h"
#include "platform/platform.h"
#include "platform/spawn.h"

struct pack_args {
	uint64_t size;
};

static const struct rig_param pack_params[] = {
	{ .name = "size", .type = PT_SIZE, .offset = offsetof(struct pack_args, size),
	  .def = "2G", .min = 1048576.0,
	  .help = "the image's size (the article resized its image to 2g)" },
	{ .name = NULL },
};

static const struct rig_metric pack_metrics[] = {
	{ "seconds", "s", "time to make the image from the folder and remove the folder", 0 },
	{ "bytes", "B", "the image file's allocated bytes afterwards", 0 },
	{ "files", "count", "files moved into the image (set by the plan)", 1 },
	{ NULL, NULL, NULL, 0 },
};

#define PACK_NAME "rig-pack"

/* Run one of the platform's commands with its placeholders filled in. */
static int run_cmd(struct rig_ctx *ctx, const char *const *tmpl, const char *folder,
		   const char *image, const char *size)
{
	size_t n = 0;
	while (tmpl[n])
		n++;
	const char **argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		argv[i] = !strcmp(tmpl[i], "{folder}") ? folder
			  : !strcmp(tmpl[i], "{image}")  ? image
			  : !strcmp(tmpl[i], "{size}")   ? size
							 : tmpl[i];
	int rc = plat_spawn_check(ctx->sp, argv, ctx->dir, NULL, ctx->err);
	free(argv);
	return rc;
}

static int pack_run(struct rig_ctx *ctx, const void *a)
{
	const struct pack_args *args = a;
	const struct rig_imaging *im = ctx->imaging;
	struct tree_state *t = ctx->volstate ? *ctx->volstate : NULL;
	int dry = plat_spawner_dry_run(ctx->sp);
	if (!im) {
		sb_adds(ctx->err, "this platform has no way to make a disk image of a folder");
		return -ENOTSUP;
	}
	if ((!t || !t->root) && !dry) {
		sb_adds(ctx->err, "no tree on this volume to pack: a `tree` step must come first");
		return -ENOENT;
	}
	struct strbuf image = STRBUF_INIT, size = STRBUF_INIT, root = STRBUF_INIT;
	sb_addf(&image, "%s/%s.%s", ctx->dir, PACK_NAME, im->ext);
	if (t && t->root)
		sb_adds(&root, t->root);
	else /* rig plan: the tree is not built */
		sb_addf(&root, "%s/%s", ctx->dir, TREE_SUBDIR);
	sb_addf(&size, "%llu%s", (unsigned long long)(args->size / im->size_unit), im->size_suffix);
	int rc = 0;
	if (!dry && unlink(image.buf) < 0 && errno != ENOENT) {
		rc = -errno;
		sb_addf(ctx->err, "cannot remove the earlier %s: %s", image.buf, strerror(-rc));
	}
	uint64_t t0 = plat_clock_ns();
	for (int k = 0; k < 2 && rc == 0 && im->argv[k]; k++)
		rc = run_cmd(ctx, im->argv[k], root.buf, image.buf, size.buf);
	uint64_t files = t ? t->files : 0;
	if (rc == 0 && !dry) {
		rc = mod_tree_remove(root.buf, ctx->err);
		if (rc == 0) {
			t->files = 0;
			t->bytes = 0;
		}
	}
	double secs = (double)(plat_clock_ns() - t0) / 1e9;
	struct stat st;
	if (rc == 0 && !dry) {
		cell_metric(ctx, "seconds", secs, "s");
		if (stat(image.buf, &st) == 0)
			cell_metric(ctx, "bytes", (double)st.st_blocks * 512.0, "B");
		cell_metric(ctx, "files", (double)files, "count");
	}
	sb_release(&image);
	sb_release(&size);
	sb_release(&root);
	return rc;
}

/* For `rig plan`: the image written (its size at most), the tree's files
 * removed. */
static void pack_estimate(const void *a, struct est_cell *c)
{
	const struct pack_args *args = a;
	struct est_slot *s = c->slot;
	c->written += s->bytes;
	c->moved += 2 * s->bytes; /* read from the folder, written into the image */
	c->ops += s->files;       /* each file removed */
	s->bytes = (double)args->size > s->bytes ? (double)args->size : s->bytes;
	s->files = 1;
	c->need = s->bytes;
	c->largest = s->bytes;
}

const struct rig_module mod_pack = {
	.name = "pack",
	.summary = "moves the volume's tree into one disk image file on the volume",
	.help = "Moves the folder a `tree` step built on the volume into one disk image file "
		"beside it (rig-pack.dmg or rig-pack.img) and removes the folder, as the "
		"fill-levels article moved a folder of 288,287 files into item1.dmg. macOS: "
		"`hdiutil create -srcfolder TREE -format UDRW -fs HFS+ -volname rig-pack -ov "
		"IMAGE`, then `hdiutil resize -size SIZE IMAGE`; Linux: `mke2fs -q -F -t ext4 -d "
		"TREE IMAGE SIZE`. After it, enumerate and churn find no tree. `seconds` times "
		"the move; `bytes` is the image's allocated size.",
	.kind = MOD_OTHER,
	.flags = MOD_PREPARES | MOD_DRY_RUNS,
	.needs = &mod_tree,
	.headline = { "seconds", -1 },
	.params = pack_params,
	.args_size = sizeof(struct pack_args),
	.metrics = pack_metrics,
	.run = pack_run,
	.estimate = pack_estimate,
	.release_state = mod_tree_state_free,
};
