/*
 * The one table of measurement modules (tmux's cmd_table): every module the
 * plan language knows, in the order `rig help modules` lists them. A module
 * whose run() is NULL validates in plans but is refused before a run starts.
 */
#include <string.h>

#include "../module.h"

extern const struct rig_module rig_module_write, rig_module_read,
	rig_module_randread, rig_module_randwrite, rig_module_seqread,
	rig_module_seqwrite, rig_module_tree,
	rig_module_enumerate, rig_module_churn, rig_module_fill,
	rig_module_meta, rig_module_snapshot, rig_module_pause, rig_module_exec, rig_module_null;

const struct rig_module *const rig_modules[] = {
	&rig_module_write,
	&rig_module_read,
	&rig_module_randread,
	&rig_module_randwrite,
	&rig_module_seqread,
	&rig_module_seqwrite,
	&rig_module_tree,
	&rig_module_enumerate,
	&rig_module_churn,
	&rig_module_fill,
	&rig_module_meta,
	&rig_module_snapshot,
	&rig_module_pause,
	&rig_module_exec,
	&rig_module_null,
	NULL,
};

const struct rig_module *module_find(const char *name)
{
	for (size_t i = 0; rig_modules[i]; i++)
		if (!strcmp(rig_modules[i]->name, name))
			return rig_modules[i];
	return NULL;
}

const struct rig_param *module_param(const struct rig_module *m, const char *name)
{
	for (const struct rig_param *p = m->params; p && p->name; p++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

size_t module_nparams(const struct rig_module *m)
{
	size_t n = 0;
	while (m->params && m->params[n].name)
		n++;
	return n;
}
