/*
 * The one table of measurement modules (tmux's cmd_table): every module the
 * plan language knows, in the order `rig help modules` lists them. A module
 * whose run() is NULL validates in plans but is refused before a run starts.
 */
#include <string.h>

#include "lib/strbuf.h"
#include "modules/module.h"

extern const struct rig_module rig_module_write, rig_module_read,
	rig_module_randread, rig_module_randwrite, rig_module_seqread,
	rig_module_seqwrite, rig_module_tree,
	rig_module_enumerate, rig_module_churn, rig_module_sync, rig_module_fill,
	rig_module_meta, rig_module_pack, rig_module_snapshot, rig_module_pause, rig_module_exec,
	rig_module_null;

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
	&rig_module_sync,
	&rig_module_fill,
	&rig_module_meta,
	&rig_module_pack,
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

const struct rig_metric *module_metric(const struct rig_module *m, const char *name)
{
	for (const struct rig_metric *x = m ? m->metrics : NULL; x && x->name; x++)
		if (!strcmp(x->name, name))
			return x;
	return NULL;
}

size_t module_nparams(const struct rig_module *m)
{
	size_t n = 0;
	while (m->params && m->params[n].name)
		n++;
	return n;
}

const struct rig_param *module_folder_param(const struct rig_module *m, size_t *index)
{
	for (size_t i = 0; m->params && m->params[i].name; i++) {
		if (m->params[i].type == PT_FOLDER) {
			if (index)
				*index = i;
			return &m->params[i];
		}
	}
	return NULL;
}

void module_describe_needs(const struct rig_module *m, struct strbuf *sb)
{
	const struct rig_module *n = m->needs;
	if (!n)
		return;
	const struct rig_param *own = module_folder_param(m, NULL);
	const struct rig_param *makes = module_folder_param(n, NULL);
	if (own && own->folder == FOLDER_READS) {
		sb_addf(sb, "Needs an earlier '%s' step with '%s' the same folder as '%s'.", n->name,
			makes ? makes->name : "?", own->name);
		return;
	}
	sb_addf(sb, "Needs an earlier '%s' step on the same volume", n->name);
	for (size_t i = 0; rig_modules[i]; i++)
		if (rig_modules[i]->needs == n && (rig_modules[i]->flags & MOD_LEAVES_NEEDS))
			sb_addf(sb, " or a '%s' step (it leaves there what '%s' leaves)",
				rig_modules[i]->name, n->name);
	if (own && own->folder == FOLDER_WORKS)
		sb_addf(sb, "; with '%s', an earlier '%s' step with '%s' the same folder", own->name,
			n->name, makes ? makes->name : "?");
	sb_addch(sb, '.');
}
