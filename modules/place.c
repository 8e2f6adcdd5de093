/*
 * Where a measured file's data sits, for the sink (module.h: mod_place_file):
 * the platform's answer (FIEMAP, F_LOG2PHYS_EXT) on a descriptor of its
 * own, so that the modules' timed intervals do not include it.
 */
#include <fcntl.h>
#include <unistd.h>

#include "modules/module.h"
#include "platform/platform.h"

void mod_place_file(const struct rig_ctx *ctx, const char *file, const char *path)
{
	if (!ctx->sink || !ctx->sink->place)
		return;
	struct plat_extent x = { 0, 0, 0 };
	const char *why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		why = "the file could not be opened to ask where its data is";
	} else {
		plat_file_extent(fd, &x, &why);
		close(fd);
	}
	struct file_place at = { x.lo, x.hi, x.mid };
	ctx->sink->place(ctx->sink->opaque, file, why ? NULL : &at, why);
}
