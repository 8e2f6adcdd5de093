/* Choosing a provisioning backend for a plan; see provision.h. */
#include "provision/provision.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/lock.h"
#include "provision/driver.h"

void prov_volume_release(struct volume *v)
{
	free(v->name);
	free(v->fs);
	free(v->dir);
	free(v->device);
	free(v->facts_json);
}

const struct prov_driver *prov_ctx_driver(const struct provision_ctx *ctx)
{
	if (ctx->driver)
		return ctx->driver;
	return ctx->plan ? prov_driver_of(ctx->plan->platform) : NULL;
}

const struct backend_ops *prov_backend(const struct plan *p, struct strbuf *err)
{
	if (p->target.kind == TARGET_DIRS)
		return &prov_dir_ops;
	if (p->platform)
		return prov_driver_of(p->platform)->ops;
	sb_addf(err, "no provisioning backend for %s targets of platform %s",
		p->target.kind == TARGET_IMAGE ? "image" : "disk", plan_platform_name(p->platform));
	return NULL;
}

void prov_target_keys_add(struct target_keys *k, const char *key, const char *what)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->v[i].key, key))
			return;
	k->v = xrealloc(k->v, (k->n + 1) * sizeof(*k->v));
	k->v[k->n].key = xstrdup(key);
	k->v[k->n].what = xstrdup(what);
	k->n++;
}

void prov_target_keys_release(struct target_keys *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].key);
		free(k->v[i].what);
	}
	free(k->v);
	k->v = NULL;
	k->n = 0;
}

void prov_target_keys_image(struct target_keys *k, const char *abs, const char *what)
{
	struct strbuf key = STRBUF_INIT, w = STRBUF_INIT;
	sb_addf(&key, "image-%s", abs);
	sb_addf(&w, "image %s", abs);
	prov_target_keys_add(k, key.buf, what ? what : w.buf);
	sb_release(&key);
	sb_release(&w);
}

char *prov_target_keys_holder(const struct target_keys *keys, size_t *which)
{
	struct strbuf who = STRBUF_INIT;
	for (size_t i = 0; i < keys->n; i++) {
		if (plat_lock_probe(keys->v[i].key, &who)) {
			if (which)
				*which = i;
			return sb_detach(&who);
		}
	}
	sb_release(&who);
	return NULL;
}

int prov_target_keys(const struct plan *p, int create, struct target_keys *keys,
			  struct strbuf *err)
{
	const struct backend_ops *ops = prov_backend(p, err);
	return ops ? ops->keys(p, create, keys, err) : -EINVAL;
}

int prov_wait_orphans(struct provision_ctx *ctx, const char *const *needles)
{
	struct strbuf what = STRBUF_INIT;
	for (int waited = 0;; waited += 20) {
		sb_reset(&what);
		const struct prov_driver *d = prov_ctx_driver(ctx);
		if (!d || !d->procs_using(needles, &what))
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
