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
	switch (p->target.kind) {
	case TARGET_DIRS:
		return &provision_dir_ops;
	case TARGET_IMAGE:
	case TARGET_DISK:
		break;
	}
	sb_addf(err, "provisioning %s targets is not available yet in this build "
		     "(image and disk targets arrive with the Linux and macOS backends); "
		     "`rig validate` and `rig plan` work on this plan, `rig run` does not",
		p->target.kind == TARGET_IMAGE ? "image" : "disk");
	return NULL;
}
