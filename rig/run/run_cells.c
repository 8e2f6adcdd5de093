/*
 * The cell loop; see run_cells.h. The walk is deliberately plain: the
 * schedule already decided the order, so the loop only keeps track of
 * which layout is provisioned (run_provision.h) and what each volume's
 * modules left for later steps (the per-volume state slots: `read` finds
 * what `write` wrote there).
 *
 * Rejected: running cells of a phase in parallel (volumes on one disk would
 * disturb each other, which is what the interleaving exists to avoid), and
 * continuing after a failed cell (later steps depend on earlier ones; a
 * partial matrix is worse than a clear stop).
 */
#include "rig/run/run_cells.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/prng.h"
#include "lib/timeutil.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "plan/schedule.h"
#include "platform/platform.h"
#include "provision/driver.h"
#include "provision/engine.h"
#include "rig/run/resume.h"
#include "rig/run/run.h"
#include "rig/run/run_account.h"
#include "rig/run/run_eta.h"
#include "rig/run/run_fit.h"
#include "rig/run/runner.h"
#include "store/store.h"

/* --- samples: each one stored as it is measured --- */

struct cell_sink {
	struct store *store;
	uint32_t seq;
	const struct rig_ctx *ctx;
	const char *flushed;   /* cache flush applied before the cell, or NULL */
	struct strbuf method;  /* the cache column, composed per sample */
	int failed;
	struct strbuf err;
	struct progress *progress;
	const char *headline;  /* the module's headline metric; NULL: the first measured */
	struct strbuf first;   /* the first metric measured, when headline is NULL */
	struct run_time *time; /* the sink's writes count as store writes */
	/* Where the next file's data sits on the whole disk (sink_place),
	 * for the file of that name; the volume's byte range gives its
	 * partition's start. */
	const struct volume *vol;
	struct run_dir *dir;   /* a note "warning" is also the run's warning event */
	struct strbuf at_file;
	uint64_t at[2];
	int noted_place;
};

/* The cache column: what was actually applied to this cell's data I/O. */
static const char *cache_text(struct cell_sink *cs)
{
	sb_reset(&cs->method);
	if (cs->ctx && cs->ctx->direct_used)
		sb_adds(&cs->method, "direct");
	if (cs->flushed && *cs->flushed)
		sb_addf(&cs->method, "%s%s", cs->method.len ? "+" : "", cs->flushed);
	if (!cs->method.len)
		sb_adds(&cs->method, "none");
	return cs->method.buf;
}

static void sink_metric(void *opaque, const char *name, double value, const char *unit)
{
	struct cell_sink *cs = opaque;
	enum run_time_cat was = mod_run_time_swap(cs->time, RT_STORE);
	if (store_add_sample(cs->store, cs->seq, name, value, unit, cache_text(cs), &cs->err) < 0)
		cs->failed = 1;
	mod_run_time_swap(cs->time, was);
	if (!cs->headline && !cs->first.len)
		sb_adds(&cs->first, name);
	if (!strcmp(name, cs->headline ? cs->headline : cs->first.buf))
		plat_progress_value(cs->progress, name, value, unit);
}

static void sink_file(void *opaque, const char *file, uint64_t bytes, double seconds)
{
	struct cell_sink *cs = opaque;
	enum run_time_cat was = mod_run_time_swap(cs->time, RT_STORE);
	const uint64_t *at = cs->at_file.len && !strcmp(cs->at_file.buf, file) ? cs->at : NULL;
	if (store_add_file_sample_at(cs->store, cs->seq, file, bytes, seconds, at, &cs->err) < 0)
		cs->failed = 1;
	sb_reset(&cs->at_file);
	mod_run_time_swap(cs->time, was);
}

static void sink_note(void *opaque, const char *key, const char *value);

/* The cell's test file (file NULL) at `at` on its volume: the metrics
 * file_at (its bytes' mean place), file_at_min and file_at_max, % of the
 * volume's bytes, and the place on the whole disk as a note. */
static void place_test_file(struct cell_sink *cs, const struct file_place *at)
{
	const struct volume *v = cs->vol;
	double len = (double)(v->offset_end - v->offset_start);
	if (len > 0) {
		sink_metric(cs, "file_at", 100.0 * (double)at->mid / len, "%");
		sink_metric(cs, "file_at_min", 100.0 * (double)at->lo / len, "%");
		sink_metric(cs, "file_at_max", 100.0 * (double)at->hi / len, "%");
	}
	struct strbuf n = STRBUF_INIT;
	sb_addf(&n, "the test file's data sits between bytes %llu and %llu of the disk, its "
		"bytes' mean place at %llu", (unsigned long long)(v->offset_start + at->lo),
		(unsigned long long)(v->offset_start + at->hi),
		(unsigned long long)(v->offset_start + at->mid));
	sink_note(cs, "disk_offset", n.buf);
	sb_release(&n);
}

/* A file's place on the volume's device, made a place on the whole disk
 * by the partition's start; why it is unknown noted once per cell. A
 * NULL file is the cell's test file (place_test_file). */
static void sink_place(void *opaque, const char *file, const struct file_place *at,
		       const char *why)
{
	struct cell_sink *cs = opaque;
	sb_reset(&cs->at_file);
	if (!why && !cs->vol->has_offsets)
		why = "the volume is a folder of a dirs target: where its file system starts on "
		      "the disk is not known";
	if (why) {
		if (!cs->noted_place++) {
			struct strbuf v = STRBUF_INIT;
			sb_addf(&v, "where the files' data sits on the disk is not recorded: %s", why);
			sink_note(cs, "disk_offset", v.buf);
			sb_release(&v);
		}
		return;
	}
	if (!file) {
		place_test_file(cs, at);
		return;
	}
	sb_adds(&cs->at_file, file);
	cs->at[0] = cs->vol->offset_start + at->lo;
	cs->at[1] = cs->vol->offset_start + at->hi;
}

static void sink_note(void *opaque, const char *key, const char *value)
{
	struct cell_sink *cs = opaque;
	enum run_time_cat was = mod_run_time_swap(cs->time, RT_STORE);
	if (store_add_note(cs->store, cs->seq, key, value, &cs->err) < 0)
		cs->failed = 1;
	if (cs->dir && !strcmp(key, "warning"))
		run_dir_event(cs->dir, "warning", "cell %u (%s): %s", cs->seq, cs->vol->name, value);
	mod_run_time_swap(cs->time, was);
}

/* --- caches --- */

void run_cells_check_cache(struct run *run)
{
	const struct plan_cache *c = &run->plan->cache;
	if (!c->flush)
		return;
	if (geteuid() != 0) {
		run_dir_event(&run->dir, "warning",
			      "cache.flush is requested but rig is not root: caches are not dropped "
			      "before read steps (result rows say which method was applied)");
		run->flush_ok = 0;
	} else {
		run->flush_ok = 1;
	}
	if (c->remount && !run_provision_can_remount(&run->prov))
		run_dir_event(&run->dir, "warning", "cache.remount is requested but the %s backend "
			      "cannot remount: not applied", run->prov.backend->name);
}

/*
 * Before a read-type step: remount the volume (cache.remount, where the
 * backend can) and drop the caches (cache.flush, where possible). What was
 * applied goes into `applied` ("remount+drop_caches", "drop_caches", or "").
 * A failed remount fails the cell (-EIO, the reason in err): the volume may
 * be left unmounted, and its folder would then be on the file system below.
 */
static int flush_caches(struct run *run, const struct plan_step *st, struct volume *vol,
			struct strbuf *applied, struct strbuf *err)
{
	const struct plan_cache *c = &run->plan->cache;
	sb_reset(applied);
	if (st->module->kind != MOD_READS)
		return 0;
	if (c->remount && run_provision_can_remount(&run->prov)) {
		if (run_provision_remount(&run->prov, vol) < 0) {
			sb_addf(err, "cannot remount %s before step %s: %s", vol->name,
				st->module->name, run->prov.perr.buf);
			return -EIO;
		}
		sb_adds(applied, "remount");
	}
	if (c->flush && run->flush_ok) {
		const char *name = NULL;
		struct strbuf why = STRBUF_INIT;
		mod_run_time_mark(&run->time, RT_FLUSH);
		int dropped = plat_drop_caches(&run->sp, &name, &why);
		mod_run_time_mark(&run->time, RT_OTHER);
		if (dropped == 0)
			sb_addf(applied, "%s%s", applied->len ? "+" : "", name);
		else
			run_dir_event(&run->dir, "warning", "cannot drop caches before step %s: %s",
				      st->module->name, why.buf);
		sb_release(&why);
	}
	return 0;
}

/* The cell's parameters bound ($vars from enclosing sweeps): the module's
 * args (plan_params_free, then free them), or NULL with err set. */
static void *bind_cell(const struct plan *p, const struct cell *c, struct strbuf *err)
{
	const struct rig_module *m = c->step->module;
	struct diag d;
	diag_init(&d, p->file, p->text);
	void *args = xcalloc(1, m->args_size ? m->args_size : 1);
	plan_params_bind(m, c->step->params, c->bindings, args, &d, c->step->mark);
	if (d.nerrors) {
		char msg[512];
		diag_format_item(&d, 0, msg, sizeof(msg));
		sb_addf(err, "cannot bind parameters of step %s: %s", c->path, msg);
		plan_params_free(m, args);
		free(args);
		args = NULL;
	}
	diag_release(&d);
	return args;
}

/* The cell's row in the store, started (or started again by a resume,
 * the earlier attempt's samples kept as superseded): 0, or < 0 with err. */
static int record_start(struct run *run, const struct cell *c, const char *lname,
			const struct volume *vol, struct strbuf *err)
{
	const struct rig_module *m = c->step->module;
	char start[40];
	timeutil_utc_iso(start, sizeof(start));
	struct store_cell sc = {
		.seq = c->seq,
		.phase = c->phase,
		.layout = lname,
		.rep = c->rep,
		.step = c->path,
		.module = m->name,
		.volume_id = run_provision_volume_id(&run->prov, c->layout, c->volume),
		.cycle = c->cycle,
		.sweep_var = c->sweep_var,
		.sweep_value = c->sweep_value,
	};
	int rc;
	mod_run_time_mark(&run->time, RT_STORE);
	if (run->has_row && run->has_row[c->seq]) {
		/* A resumed run runs this cell again: the earlier attempt's samples
		 * stay in the store, superseded. */
		uint64_t nsup = 0;
		rc = store_cell_restart(run->dir.store, &sc, start, &nsup, err);
		if (rc == 0)
			run_dir_event(&run->dir, "info", "cell %u (step %s, %s on %s) runs again; %"
				      PRIu64 " samples of its earlier attempt are kept as superseded",
				      c->seq, c->path, m->name, vol->name, nsup);
	} else {
		rc = store_cell_start(run->dir.store, &sc, start, err);
	}
	mod_run_time_mark(&run->time, RT_OTHER);
	return rc;
}

/* The cell's end in the store: done, failed (err says why: the module's
 * merr, or the samples that could not be recorded) or interrupted. The
 * cell's status code: rc, or -EIO when its samples were not recorded. */
static int record_end(struct run *run, const struct cell *c, const struct volume *vol, int rc,
		      const struct cell_sink *cs, const char *merr, struct strbuf *err)
{
	const struct rig_module *m = c->step->module;
	char end[40];
	timeutil_utc_iso(end, sizeof(end));
	const char *status = "done";
	if (rc < 0) {
		status = "failed";
		sb_addf(err, "step %s (%s) on volume %s failed: %s", c->path, m->name, vol->name,
			*merr ? merr : strerror(-rc));
	} else if (cs->failed) {
		status = "failed";
		sb_addf(err, "cannot record samples of step %s on %s: %s", c->path, vol->name,
			cs->err.buf);
		rc = -EIO;
	} else if (run_cancel) {
		status = "interrupted";
	}
	struct strbuf serr = STRBUF_INIT;
	mod_run_time_mark(&run->time, RT_STORE);
	store_cell_end(run->dir.store, c->seq, end, status, rc < 0 ? err->buf : NULL, &serr);
	mod_run_time_mark(&run->time, RT_OTHER);
	sb_release(&serr);
	return rc;
}

/* --- cells --- */

static int run_cell(struct run *run, const struct schedule *sched, const struct cell *c,
		    double eta_s, struct strbuf *err)
{
	const struct plan *p = run->plan;
	const struct plan_step *st = c->step;
	const struct rig_module *m = st->module;
	struct volume *vol = &run->prov.vols[c->volume];
	const char *lname = plan_layout_name(p, c->layout);
	struct store *store = run->dir.store;

	run_account_scope(run, (long)c->layout, c->seq);
	struct plat_progress_cell pc = { .seq = c->seq, .total = (uint32_t)sched->n, .rep = c->rep,
				    .layout = lname, .step = c->path, .module = m->name,
				    .volume = vol->name, .eta_s = eta_s };
	plat_progress_cell(&run->progress, &pc);

	struct strbuf flushed = STRBUF_INIT;
	if (flush_caches(run, st, vol, &flushed, err) < 0) {
		sb_release(&flushed);
		return -EIO;
	}

	void *args = bind_cell(p, c, err);
	if (!args) {
		sb_release(&flushed);
		return -EINVAL;
	}

	int rc = record_start(run, c, lname, vol, err);
	run->time_seq_recorded = rc == 0;
	if (rc < 0) {
		plan_params_free(m, args);
		free(args);
		sb_release(&flushed);
		return rc;
	}

	struct cell_sink cs = { .store = store, .seq = c->seq, .flushed = flushed.buf,
				.progress = &run->progress, .headline = m->headline.metric,
				.time = &run->time };
	sb_init(&cs.err);
	sb_init(&cs.method);
	sb_init(&cs.first);
	cs.vol = vol;
	cs.dir = &run->dir;
	sb_init(&cs.at_file);
	struct rig_sink sink = { &cs, sink_metric, sink_file, sink_note, sink_place };
	struct strbuf merr = STRBUF_INIT, instance = STRBUF_INIT;
	sb_addf(&instance, "%s/phase%u", run->key, c->phase);
	struct rig_ctx ctx = {
		.dir = vol->dir,
		.device = vol->device,
		.volume = vol->name,
		.imaging = p->platform ? prov_driver_of(p->platform)->imaging : NULL,
		.seed = plan_schedule_cell_seed(run->seed, run->seed_scheme, lname, c),
		.rep = c->rep,
		.cycle = c->cycle,
		.instance = instance.buf,
		.direct = p->cache.direct,
		.cache_method = flushed.buf,
		.direct_used = p->cache.direct && m->direct_io,
		.sink = &sink,
		.cancel = &run_cancel,
		.volstate = run_provision_slot(&run->prov, c->volume, run_resume_state_slot(m)),
		.sp = &run->sp,
		.progress = &run->progress,
		.time = &run->time,
		.err = &merr,
	};
	struct prov_snapshots snap = { 0 };
	sb_init(&snap.skip);
	if ((m->flags & MOD_SNAPSHOTS) && p->target.kind != TARGET_DIRS) {
		prov_snapshots_init(&snap, run->prov.backend, &run->prov.pctx, vol,
				    &p->layouts[c->layout].parts[c->volume]);
		ctx.snap = &snap.s;
	}
	cs.ctx = &ctx;
	/* Inside the module everything is setup but what it marks (measured
	 * intervals, pauses); a module that prepares the volume is setup even
	 * where it times its work. */
	run->time.measured_as = m->flags & MOD_PREPARES ? RT_SETUP : RT_MEASURED;
	mod_run_time_mark(&run->time, RT_SETUP);
	rc = m->run(&ctx, args);
	mod_run_time_mark(&run->time, RT_OTHER);
	run->time.measured_as = RT_MEASURED;
	prov_snapshots_release(&snap);
	rc = record_end(run, c, vol, rc, &cs, merr.buf, err);
	sb_release(&merr);
	sb_release(&instance);
	sb_release(&cs.err);
	sb_release(&cs.method);
	sb_release(&cs.at_file);
	sb_release(&cs.first);
	sb_release(&flushed);
	plan_params_free(m, args);
	free(args);
	return rc;
}

int run_cells_walk(struct run *run, const struct schedule *sched, size_t from, size_t *done,
		   struct strbuf *err)
{
	const struct plan *p = run->plan;
	int rc = 0;
	*done = 0;
	struct run_eta eta;
	run_eta_init(&eta, sched, from);
	uint64_t t0 = plat_clock_ns();
	for (size_t i = from; i < sched->n && !run_cancel; i++) {
		const struct cell *c = &sched->cells[i];
		int fresh = c->first_of_layout ||
			    (c->first_of_rep && p->reprovision == REPROVISION_REPEAT) ||
			    (i == from && run->prov.provisioned < 0);
		if (fresh) {
			if (run_provision_teardown(&run->prov) < 0) {
				sb_addf(err, "cannot tear down the previous layout: %s",
					run->prov.perr.buf);
				rc = -EIO;
				break;
			}
			run_account_scope(run, (long)c->layout, 0);
			/* Every provisioning records its volumes (a resume's too,
			 * whatever the cell): the volumes of each repetition
			 * provisioned afresh are units of their own in the store. */
			rc = run_provision_layout(&run->prov, c->layout, err);
			if (rc < 0)
				break;
			/* A layout started afresh is checked before its data is written
			 * (a resume in its middle finds data there already: not again). */
			if (c->first_of_layout && (rc = run_fit_check(run, sched, c->layout, err)) < 0)
				break;
		}
		uint64_t start = plat_clock_ns();
		rc = run_cell(run, sched, c, run_eta_left(&eta, (double)(start - t0) / 1e9), err);
		/* Until the next cell the time is the layout's (teardown, provisioning). */
		run_account_scope(run, (long)c->layout, 0);
		if (rc < 0)
			break;
		run_eta_done(&eta, i, (double)(plat_clock_ns() - start) / 1e9);
		if (!run_cancel)
			(*done)++;
	}
	run_eta_release(&eta);
	return rc < 0 ? rc : 0;
}
