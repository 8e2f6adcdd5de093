/*
 * The runner's provisioning lifecycle (runner-internal): the calls into a
 * backend's ops (provision/provision.h) in the order a run makes them, the
 * volumes of the layout provisioned now, the per-volume module state slots,
 * and the target's locks.
 *
 *   lock_target  before anything is checked or changed
 *   prepare      once (a resume: the backend also decides whether what the
 *                killed run provisioned is kept; run_provision_keep then)
 *   layout       at each fresh provisioning; marked provisioned *before*
 *                the backend is called, so a partial one is torn down too
 *   remount      before a read-type step, where the backend can
 *   teardown     before the next fresh provisioning, and at the end
 *   finish       once, also when prepare failed
 *
 * Errors: 0 or negative; the reason in err, or for teardown and remount
 * in perr (the backend's words).
 */
#ifndef RIG_RUN_PROVISION_H
#define RIG_RUN_PROVISION_H

#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"
#include "platform/lock.h"
#include "provision/provision.h"

struct run_dir;
struct run_options;
struct run_time;

struct run_prov {
	const struct plan *plan;
	const struct backend_ops *backend;
	struct provision_ctx pctx;
	struct prov_journal journal; /* pctx.journal: in the run's store (run_journal.c) */
	struct strbuf perr;        /* the backend's messages (pctx.err) */
	long provisioned;          /* layout index provisioned, -1 none */
	struct volume *vols;       /* of the layout provisioned */
	size_t nvols;
	int64_t *vol_ids;          /* store ids, per layout per volume */
	size_t *vol_id_base;       /* index of layout li's first volume in vol_ids */
	void **slots;              /* nvols * nmodules per-volume module state */
	size_t nmodules;
	struct lock_set locks;     /* the target's disks, images, directories (util/lock.h) */
	struct provision_resume presume; /* a resume: pctx.resume points here */
	struct strbuf keep_why;    /* why the resumed run does not keep the provisioning */
	struct run_dir *dir;       /* borrowed: volumes go into its store, events too */
	struct run_time *time;     /* borrowed: the calls below count their time as
	                            * provision, teardown or flush (remount); may be NULL */
};

void run_provision_init(struct run_prov *pv, struct run_dir *dir);
/* Tear nothing down (run_provision_teardown did); free, and release the locks. */
void run_provision_release(struct run_prov *pv);

/* The plan's backend (prov_backend). -1 with err when there is none. */
int run_provision_use(struct run_prov *pv, const struct plan *p, struct strbuf *err);
/*
 * The target's locks: every disk, image and directory the run uses
 * (prov_target_keys), taken before anything is checked or changed
 * and held until the process ends, after the last teardown (the kernel
 * releases them if it dies). Refused (-EBUSY) while another run holds one,
 * with that run named in err.
 */
int run_provision_lock_target(struct run_prov *pv, struct strbuf *err);
/* The backend's context: the run folder (pv->dir), o's yes, force, allow
 * and image_size, the spawner; and store ids for every layout's volumes. */
void run_provision_setup(struct run_prov *pv, const struct run_options *o, struct spawner *sp);

/* prepare; on failure "cannot prepare the target: ..." in err, after finish. */
int run_provision_prepare(struct run_prov *pv, struct strbuf *err);
/* Provision layout li; its volumes go into the store (with their ids), a
 * row each per provisioning. */
int run_provision_layout(struct run_prov *pv, size_t li, struct strbuf *err);
/* A resumed run keeps the provisioning the backend verified: the recorded
 * volumes (pv->presume) become this process's, with their store ids. */
void run_provision_keep(struct run_prov *pv, const int64_t *ids);
/* Whether the backend can remount a volume (cache.remount). */
int run_provision_can_remount(const struct run_prov *pv);
int run_provision_remount(struct run_prov *pv, struct volume *vol);
/* Release the module state, tear down what is provisioned (an error event
 * when that fails), forget the volumes. */
int run_provision_teardown(struct run_prov *pv);
void run_provision_finish(struct run_prov *pv);

/* The module state slot `slot` (module_state_slot) of volume v. */
void **run_provision_slot(struct run_prov *pv, size_t v, size_t slot);
/* The store id of volume v of layout li. */
int64_t run_provision_volume_id(const struct run_prov *pv, size_t li, size_t v);

#endif
