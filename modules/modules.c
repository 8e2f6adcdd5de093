/*
 * The one table of measurement modules (tmux's cmd_table): every module the
 * plan language knows, in the order `rig help modules` lists them. A module
 * whose run() is NULL validates in plans but is refused before a run starts.
 */
#include <string.h>

#include "lib/strbuf.h"
#include "modules/module.h"

extern const struct rig_module mod_write, mod_read,
	mod_randread, mod_randwrite, mod_seqread,
	mod_seqwrite, mod_tree,
	mod_enumerate, mod_churn, mod_sync, mod_fill,
	mod_meta, mod_pack, mod_snapshot, mod_pause, mod_exec,
	mod_null;

const struct rig_module *const mod_all[] = {
	&mod_write,
	&mod_read,
	&mod_randread,
	&mod_randwrite,
	&mod_seqread,
	&mod_seqwrite,
	&mod_tree,
	&mod_enumerate,
	&mod_churn,
	&mod_sync,
	&mod_fill,
	&mod_meta,
	&mod_pack,
	&mod_snapshot,
	&mod_pause,
	&mod_exec,
	&mod_null,
	NULL,
};

const struct rig_module *mod_find(const char *name)
{
	for (size_t i = 0; mod_all[i]; i++)
		if (!strcmp(mod_all[i]->name, name))
			return mod_all[i];
	return NULL;
}

const struct rig_param *mod_param(const struct rig_module *m, const char *name)
{
	for (const struct rig_param *p = m->params; p && p->name; p++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

const struct rig_metric *mod_metric(const struct rig_module *m, const char *name)
{
	for (const struct rig_metric *x = m ? m->metrics : NULL; x && x->name; x++)
		if (!strcmp(x->name, name))
			return x;
	return NULL;
}

size_t mod_nparams(const struct rig_module *m)
{
	size_t n = 0;
	while (m->params && m->params[n].name)
		n++;
	return n;
}

const struct rig_param *mod_folder_param(const struct rig_module *m, size_t *index)
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

void mod_describe_needs(const struct rig_module *m, struct strbuf *sb)
{
	const struct rig_module *n = m->needs;
	if (!n)
		return;
	const struct rig_param *own = mod_folder_param(m, NULL);
	const struct rig_param *makes = mod_folder_param(n, NULL);
	if (own && own->folder == FOLDER_READS) {
		sb_addf(sb, "Needs an earlier '%s' step with '%s' the same folder as '%s'.", n->name,
			makes ? makes->name : "?", own->name);
		return;
	}
	sb_addf(sb, "Needs an earlier '%s' step on the same volume", n->name);
	for (size_t i = 0; mod_all[i]; i++)
		if (mod_all[i]->needs == n && (mod_all[i]->flags & MOD_LEAVES_NEEDS))
			sb_addf(sb, " or a '%s' step (it leaves there what '%s' leaves)",
				mod_all[i]->name, n->name);
	if (own && own->folder == FOLDER_WORKS)
		sb_addf(sb, "; with '%s', an earlier '%s' step with '%s' the same folder", own->name,
			n->name, makes ? makes->name : "?");
	sb_addch(sb, '.');
}
