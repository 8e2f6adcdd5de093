/*
 * The runner's provisioning lifecycle; see run_provision.h. The backend
 * records what each of its steps did, so teardown undoes exactly that; the
 * runner's part is the order of the calls, what goes into the store and
 * the module state that dies with a layout.
 */
#include "rig/run/run_provision.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/progress.h"
#include "rig/run/run_dir.h"
#include "rig/run/run_journal.h"
#include "rig/run/runner.h"
#include "store/store.h"

void run_provision_init(struct run_prov *pv, struct run_dir *dir)
{
	memset(pv, 0, sizeof(*pv));
	pv->provisioned = -1;
	pv->dir = dir;
	plat_lock_set_init(&pv->locks, "rig run");
	sb_init(&pv->perr);
	sb_init(&pv->keep_why);
	for (pv->nmodules = 0; mod_all[pv->nmodules]; pv->nmodules++)
		;
}

void run_provision_release(struct run_prov *pv)
{
	plat_lock_set_release(&pv->locks);
	free(pv->vol_ids);
	free(pv->vol_id_base);
	pv->vol_ids = NULL;
	pv->vol_id_base = NULL;
	sb_release(&pv->perr);
	sb_release(&pv->keep_why);
}

int run_provision_use(struct run_prov *pv, const struct plan *p, struct strbuf *err)
{
	pv->plan = p;
	pv->backend = prov_backend(p, err);
	return pv->backend ? 0 : -1;
}

int run_provision_lock_target(struct run_prov *pv, struct strbuf *err)
{
	struct target_keys keys = { 0 };
	int rc = prov_target_keys(pv->plan, 1, &keys, err);
	for (size_t i = 0; rc == 0 && i < keys.n; i++)
		rc = plat_lock_take(&pv->locks, keys.v[i].key, keys.v[i].what, err);
	prov_target_keys_release(&keys);
	if (rc < 0)
		plat_lock_set_release(&pv->locks);
	return rc;
}

void run_provision_setup(struct run_prov *pv, const struct run_options *o, struct spawner *sp)
{
	pv->pctx.plan = pv->plan;
	pv->pctx.run_id = pv->dir->id.buf;
	pv->pctx.run_dir = pv->dir->path.buf;
	pv->pctx.sp = sp;
	pv->pctx.err = &pv->perr;
	pv->pctx.yes = o->yes;
	pv->pctx.force = o->force;
	pv->pctx.allow = o->allow;
	pv->pctx.image_size = o->image_size;
	pv->pctx.cancel = &run_cancel;
	pv->pctx.note = run_dir_note;
	pv->pctx.note_opaque = pv->dir;
	run_journal_init(&pv->journal, &pv->dir->store);
	pv->pctx.journal = &pv->journal;
	size_t nl = plan_layout_count(pv->plan), total = 0;
	pv->vol_id_base = xcalloc(nl, sizeof(size_t));
	for (size_t li = 0; li < nl; li++) {
		pv->vol_id_base[li] = total;
		total += plan_volume_count(pv->plan, li);
	}
	pv->vol_ids = xcalloc(total ? total : 1, sizeof(int64_t));
}

void run_provision_finish(struct run_prov *pv)
{
	enum run_time_cat was = mod_run_time_swap(pv->time, RT_TEARDOWN);
	if (pv->backend->finish)
		pv->backend->finish(&pv->pctx);
	mod_run_time_swap(pv->time, was);
}

int run_provision_prepare(struct run_prov *pv, struct strbuf *err)
{
	if (!pv->backend->prepare)
		return 0;
	sb_reset(&pv->perr);
	enum run_time_cat was = mod_run_time_swap(pv->time, RT_PROVISION);
	int rc = pv->backend->prepare(&pv->pctx);
	mod_run_time_swap(pv->time, was);
	if (rc < 0) {
		sb_addf(err, "cannot prepare the target: %s", pv->perr.buf);
		run_provision_finish(pv);
		return -1;
	}
	return 0;
}

static void release_states(struct run_prov *pv)
{
	if (!pv->slots)
		return;
	for (size_t v = 0; v < pv->nvols; v++) {
		for (size_t k = 0; k < pv->nmodules; k++) {
			void **slot = &pv->slots[v * pv->nmodules + k];
			if (*slot && mod_all[k]->release_state)
				mod_all[k]->release_state(*slot);
			*slot = NULL;
		}
	}
	free(pv->slots);
	pv->slots = NULL;
}

int run_provision_teardown(struct run_prov *pv)
{
	int rc = 0;
	enum run_time_cat was = mod_run_time_swap(pv->time, RT_TEARDOWN);
	release_states(pv);
	if (pv->provisioned >= 0) {
		sb_reset(&pv->perr);
		rc = pv->backend->teardown(&pv->pctx, (size_t)pv->provisioned);
		if (rc < 0)
			run_dir_event(pv->dir, "error", "teardown of layout %ld failed: %s",
				      pv->provisioned + 1, pv->perr.buf);
		pv->provisioned = -1;
	}
	for (size_t i = 0; i < pv->nvols; i++)
		prov_volume_release(&pv->vols[i]);
	free(pv->vols);
	pv->vols = NULL;
	pv->nvols = 0;
	mod_run_time_swap(pv->time, was);
	return rc;
}

static int provision_layout(struct run_prov *pv, size_t li, struct strbuf *err)
{
	const char *lname = plan_layout_name(pv->plan, li);
	if (pv->plan->target.kind != TARGET_DIRS) {
		plat_progress_phase(pv->dir->progress, "provisioning layout %s", lname);
	}
	sb_reset(&pv->perr);
	pv->provisioned = (long)li; /* teardown must follow even a partial provision */
	int rc = pv->backend->provision(&pv->pctx, li, &pv->vols, &pv->nvols);
	if (rc < 0) {
		sb_addf(err, "cannot provision layout %s: %s", *lname ? lname : "(dirs)",
			pv->perr.buf);
		return rc;
	}
	pv->slots = xcalloc(pv->nvols * pv->nmodules, sizeof(void *));
	for (size_t v = 0; v < pv->nvols; v++) {
		struct volume *vol = &pv->vols[v];
		struct store_volume sv = {
			.layout = lname,
			.layout_index = (uint32_t)li,
			.name = vol->name,
			.fs = vol->fs,
			.position = vol->position,
			.has_offsets = vol->has_offsets,
			.offset_start = vol->offset_start,
			.offset_end = vol->offset_end,
			.device = vol->device,
			.dir = vol->dir,
			.facts_json = vol->facts_json,
		};
		if (store_add_volume(pv->dir->store, &sv, err) < 0)
			return -EIO;
		pv->vol_ids[pv->vol_id_base[li] + v] = sv.id;
	}
	run_dir_event(pv->dir, "info", "provisioned layout '%s': %zu volumes", lname, pv->nvols);
	return 0;
}

int run_provision_layout(struct run_prov *pv, size_t li, struct strbuf *err)
{
	enum run_time_cat was = mod_run_time_swap(pv->time, RT_PROVISION);
	int rc = provision_layout(pv, li, err);
	mod_run_time_swap(pv->time, was);
	return rc;
}

void run_provision_keep(struct run_prov *pv, const int64_t *ids)
{
	const struct provision_resume *r = &pv->presume;
	pv->provisioned = (long)r->layout;
	pv->nvols = r->nvols;
	pv->vols = xcalloc(r->nvols, sizeof(*pv->vols));
	for (size_t v = 0; v < r->nvols; v++) {
		const struct volume *src = &r->vols[v];
		struct volume *d = &pv->vols[v];
		*d = *src;
		d->name = xstrdup(src->name);
		d->fs = src->fs ? xstrdup(src->fs) : NULL;
		d->dir = src->dir ? xstrdup(src->dir) : NULL;
		d->device = src->device ? xstrdup(src->device) : NULL;
		d->facts_json = src->facts_json ? xstrdup(src->facts_json) : NULL;
		pv->vol_ids[pv->vol_id_base[r->layout] + v] = ids[v];
	}
	pv->slots = xcalloc(pv->nvols * pv->nmodules, sizeof(void *));
}

int run_provision_can_remount(const struct run_prov *pv)
{
	return pv->backend->remount != NULL;
}

int run_provision_remount(struct run_prov *pv, struct volume *vol)
{
	sb_reset(&pv->perr);
	enum run_time_cat was = mod_run_time_swap(pv->time, RT_FLUSH);
	int rc = pv->backend->remount(&pv->pctx, vol);
	mod_run_time_swap(pv->time, was);
	return rc;
}

void **run_provision_slot(struct run_prov *pv, size_t v, size_t slot)
{
	return &pv->slots[v * pv->nmodules + slot];
}

int64_t run_provision_volume_id(const struct run_prov *pv, size_t li, size_t v)
{
	return pv->vol_ids[pv->vol_id_base[li] + v];
}
