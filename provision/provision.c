/* Choosing a provisioning backend for a plan; see provision.h. */
#include "provision.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "../rig/util/strbuf.h"
#include "linux.h"

void volume_release(struct volume *v)
{
	free(v->name);
	free(v->fs);
	free(v->dir);
	free(v->device);
	free(v->facts_json);
}

const struct backend_ops *provision_backend(const struct plan *p, struct strbuf *err)
{
	if (p->target.kind == TARGET_DIRS)
		return &provision_dir_ops;
	if (p->platform == PLATFORM_LINUX)
		return &provision_linux_ops;
	if (p->platform == PLATFORM_MACOS)
		return &provision_macos_ops;
	sb_addf(err, "no provisioning backend for %s targets of platform %s",
		p->target.kind == TARGET_IMAGE ? "image" : "disk", plan_platform_name(p->platform));
	return NULL;
}

int provision_wait_orphans(struct provision_ctx *ctx, const char *const *needles)
{
	struct strbuf what = STRBUF_INIT;
	for (int waited = 0;; waited += 20) {
		sb_reset(&what);
		if (!linux_procs_using("", needles, &what))
			break;
		if (waited >= ORPHAN_WAIT_MS) {
			sb_addf(ctx->err, "commands of the interrupted run are still running after %d s: "
					  "%s; wait for them to end (or stop them), then resume again",
				ORPHAN_WAIT_MS / 1000, what.buf);
			sb_release(&what);
			return -EBUSY;
		}
		if (waited == 0 && ctx->note) {
			struct strbuf m = STRBUF_INIT;
			sb_addf(&m, "wait for what the interrupted run started to end: %s", what.buf);
			ctx->note(ctx->note_opaque, 0, m.buf);
			sb_release(&m);
		}
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
	sb_release(&what);
	return 0;
}
