/* Choosing a provisioning backend for a plan; see provision.h. */
#include "provision.h"

#include <stdlib.h>

#include "../rig/util/strbuf.h"

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
