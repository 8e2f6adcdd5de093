/*
 * The runner; see runner.h for the contract. The walk is deliberately
 * plain: the schedule already decided the order, so the runner only keeps
 * track of which layout is provisioned and what each volume's modules left
 * for later steps (the per-volume state slots: `read` finds what `write`
 * wrote there).
 *
 * Rejected: running cells of a phase in parallel (volumes on one disk would
 * disturb each other, which is what the interleaving exists to avoid), and
 * continuing after a failed cell (later steps depend on earlier ones; a
 * partial matrix is worse than a clear stop).
 */
#include "run_journal.h"
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/file.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../platform/platform.h"
#include "../provision/provision.h"
#include "../reports/report.h"
#include "module.h"
#include "resume.h"
#include "schedule.h"
#include "store.h"
#include "util/fault.h"
#include "util/lock.h"
#include "util/prng.h"
#include "util/progress.h"
#include "util/spawn.h"
#include "util/strbuf.h"
#include "util/sysinfo.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

volatile sig_atomic_t runner_cancel;

static void on_signal(int sig)
{
	(void)sig;
	runner_cancel = 1;
}

static void install_signals(struct sigaction *old_int, struct sigaction *old_term)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: blocking calls return EINTR */
	sigaction(SIGINT, &sa, old_int);
	sigaction(SIGTERM, &sa, old_term);
}

struct run {
	const struct plan *plan;
	const struct run_options *opt;
	struct store *store;
	struct strbuf dir;
	struct strbuf id;
	FILE *cmdlog;
	struct spawner sp;
	struct progress progress;
	uint64_t seed;
	/* cache */
	int flush_ok;          /* flush requested and possible */
	const char *flush_name;
	/* provisioning */
	const struct backend_ops *backend;
	struct provision_ctx pctx;
	struct prov_journal journal; /* in the store (run_journal.c) */
	struct strbuf perr;
	long provisioned;      /* layout index provisioned, -1 none */
	struct volume *vols;
	size_t nvols;
	int64_t *vol_ids;      /* store ids, per layout per volume */
	size_t *vol_id_base;   /* index of layout li's first volume in vol_ids */
	void **slots;          /* nvols * nmodules per-volume module state */
	size_t nmodules;
	int lock_fd;           /* RUN/plan.yaml, flock'ed while the run lives; -1 none */
	struct lock_set locks; /* the target's disks, images, directories (util/lock.h) */
	/* a resumed run */
	int resuming;
	unsigned char *has_row; /* per seq: the store has the cell (restart, not start) */
	struct provision_resume presume;
	struct strbuf keep_why; /* why the resumed run does not keep the provisioning */
	struct resume_point rp;
	int64_t resume_id;
};

static void log_command(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	struct run *run = opaque;
	char now[40];
	timeutil_utc_iso(now, sizeof(now));
	if (run->cmdlog) {
		fprintf(run->cmdlog, "[%s] $ %s\n", now, argv_text);
		if (r) {
			if (r->output_len)
				fprintf(run->cmdlog, "%s%s", r->output,
					r->output[r->output_len - 1] == '\n' ? "" : "\n");
			fprintf(run->cmdlog, "[%s %d, %.3f s]\n\n", r->exited ? "exit" : "signal",
				r->status, r->seconds);
		}
		fflush(run->cmdlog);
	}
	if (run->store && r) {
		struct strbuf err = STRBUF_INIT;
		store_add_command(run->store, now, argv_text, r->exited ? r->status : 128 + r->status,
				  r->seconds, r->output, &err);
		sb_release(&err);
	}
}

static void event(struct run *run, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The backend's notes: steps that are not commands go to the command log,
 * warnings are events (printed and stored). */
static void backend_note(void *opaque, int warning, const char *text)
{
	struct run *run = opaque;
	if (warning) {
		event(run, "warning", "%s", text);
	} else if (run->cmdlog) {
		char now[40];
		timeutil_utc_iso(now, sizeof(now));
		fprintf(run->cmdlog, "[%s] # %s\n\n", now, text);
		fflush(run->cmdlog);
	}
}

static void event(struct run *run, const char *level, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT, err = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&msg, fmt, ap);
	va_end(ap);
	char now[40];
	timeutil_utc_iso(now, sizeof(now));
	if (run->store)
		store_add_event(run->store, now, level, msg.buf, &err);
	if (strcmp(level, "info") != 0) {
		progress_end(&run->progress);
		fprintf(stderr, "rig: %s: %s\n", level, msg.buf);
	}
	sb_release(&msg);
	sb_release(&err);
}

/* The seed: --seed, the plan's, or drawn now (and recorded). */
static uint64_t draw_seed(void)
{
	uint64_t s = 0;
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, &s, sizeof(s)) != (ssize_t)sizeof(s))
			s = 0;
		close(fd);
	}
	if (!s)
		s = plat_clock_ns() ^ ((uint64_t)getpid() << 32);
	return s & 0x7fffffffffffffffull; /* fits SQLite's signed integer */
}

/* Refuse before anything changes: modules this build cannot run. */
static int check_modules(const struct plan *p, const struct plan_step *steps, size_t n,
			 struct strbuf *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct plan_step *s = &steps[i];
		if (s->kind != STEP_MODULE) {
			if (check_modules(p, s->steps, s->nsteps, err) < 0)
				return -1;
			continue;
		}
		if (!s->module->run) {
			sb_addf(err, "%s:%d:%d: module '%s' is not available in this build yet; "
				     "`rig help modules` lists what runs",
				p->file, s->mark.line, s->mark.col, s->module->name);
			return -1;
		}
	}
	return 0;
}

static int make_run_dir(struct run *run, struct strbuf *err)
{
	const struct run_options *o = run->opt;
	if (o->out_dir) {
		sb_adds(&run->dir, o->out_dir);
		if (mkdir(o->out_dir, 0777) < 0) {
			int e = errno;
			if (e != EEXIST || rmdir(o->out_dir) < 0 || mkdir(o->out_dir, 0777) < 0) {
				sb_addf(err, "cannot use %s as the run folder: %s", o->out_dir,
					e == EEXIST ? "it exists and is not empty (nothing from a run is overwritten)"
						    : strerror(e));
				return -1;
			}
		}
		const char *slash = strrchr(o->out_dir, '/');
		sb_adds(&run->id, slash && slash[1] ? slash + 1 : o->out_dir);
		return 0;
	}
	const char *root = o->runs_root ? o->runs_root : "runs";
	if (mkdir(root, 0777) < 0 && errno != EEXIST) {
		int e = errno;
		sb_addf(err, "cannot create %s: %s", root, strerror(e));
		return -1;
	}
	char ts[24];
	timeutil_utc_compact(ts, sizeof(ts));
	for (int k = 1; k < 1000; k++) {
		sb_reset(&run->id);
		sb_addf(&run->id, "%s-%s", ts, run->plan->name);
		if (k > 1)
			sb_addf(&run->id, "-%d", k);
		sb_reset(&run->dir);
		sb_addf(&run->dir, "%s/%s", root, run->id.buf);
		if (mkdir(run->dir.buf, 0777) == 0)
			return 0;
		if (errno != EEXIST) {
			int e = errno;
			sb_addf(err, "cannot create run folder %s: %s", run->dir.buf, strerror(e));
			return -1;
		}
	}
	sb_addf(err, "cannot create a run folder under %s: too many runs this second", root);
	return -1;
}

static int write_file(const char *path, const char *data, size_t len, struct strbuf *err)
{
	FILE *f = fopen(path, "wbx");
	if (!f) {
		int e = errno;
		sb_addf(err, "cannot create %s: %s", path, strerror(e));
		return -e;
	}
	int ok = fwrite(data, 1, len, f) == len;
	if (fclose(f) != 0 || !ok) {
		sb_addf(err, "cannot write %s", path);
		return -EIO;
	}
	return 0;
}

/* --- samples: each one stored as it is measured --- */

struct cell_sink {
	struct run *run;
	uint32_t seq;
	const struct rig_ctx *ctx;
	const char *flushed;   /* cache flush applied before the cell, or NULL */
	struct strbuf method;  /* the cache column, composed per sample */
	int failed;
	struct strbuf err;
};

static const char *cache_text(struct cell_sink *cs);

static void sink_metric(void *opaque, const char *name, double value, const char *unit)
{
	struct cell_sink *cs = opaque;
	if (store_add_sample(cs->run->store, cs->seq, name, value, unit, cache_text(cs), &cs->err) < 0)
		cs->failed = 1;
}

static void sink_file(void *opaque, const char *file, uint64_t bytes, double seconds)
{
	struct cell_sink *cs = opaque;
	if (store_add_file_sample(cs->run->store, cs->seq, file, bytes, seconds, &cs->err) < 0)
		cs->failed = 1;
}

static void sink_note(void *opaque, const char *key, const char *value)
{
	struct cell_sink *cs = opaque;
	if (store_add_note(cs->run->store, cs->seq, key, value, &cs->err) < 0)
		cs->failed = 1;
}

/* --- provisioning --- */

static void release_states(struct run *run)
{
	if (!run->slots)
		return;
	for (size_t v = 0; v < run->nvols; v++) {
		for (size_t k = 0; k < run->nmodules; k++) {
			void **slot = &run->slots[v * run->nmodules + k];
			if (*slot && rig_modules[k]->release_state)
				rig_modules[k]->release_state(*slot);
			*slot = NULL;
		}
	}
	free(run->slots);
	run->slots = NULL;
}

static int teardown(struct run *run)
{
	int rc = 0;
	release_states(run);
	if (run->provisioned >= 0) {
		sb_reset(&run->perr);
		rc = run->backend->teardown(&run->pctx, (size_t)run->provisioned);
		if (rc < 0)
			event(run, "error", "teardown of layout %ld failed: %s", run->provisioned + 1,
			      run->perr.buf);
		run->provisioned = -1;
	}
	for (size_t i = 0; i < run->nvols; i++)
		volume_release(&run->vols[i]);
	free(run->vols);
	run->vols = NULL;
	run->nvols = 0;
	return rc;
}

static int provision(struct run *run, size_t li, int record, struct strbuf *err)
{
	const char *lname = plan_layout_name(run->plan, li);
	if (run->plan->target.kind != TARGET_DIRS) {
		progress_update(&run->progress, "provisioning layout %s", lname);
	}
	sb_reset(&run->perr);
	run->provisioned = (long)li; /* teardown must follow even a partial provision */
	int rc = run->backend->provision(&run->pctx, li, &run->vols, &run->nvols);
	if (rc < 0) {
		sb_addf(err, "cannot provision layout %s: %s", *lname ? lname : "(dirs)",
			run->perr.buf);
		return rc;
	}
	run->slots = xcalloc(run->nvols * run->nmodules, sizeof(void *));
	if (!record)
		return 0;
	for (size_t v = 0; v < run->nvols; v++) {
		struct volume *vol = &run->vols[v];
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
		if (store_add_volume(run->store, &sv, err) < 0)
			return -EIO;
		run->vol_ids[run->vol_id_base[li] + v] = sv.id;
	}
	event(run, "info", "provisioned layout '%s': %zu volumes", lname, run->nvols);
	return 0;
}

/* --- cells --- */

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
	if (c->remount && run->backend->remount) {
		sb_reset(&run->perr);
		if (run->backend->remount(&run->pctx, vol) < 0) {
			sb_addf(err, "cannot remount %s before step %s: %s", vol->name,
				st->module->name, run->perr.buf);
			return -EIO;
		}
		sb_adds(applied, "remount");
	}
	if (c->flush && run->flush_ok) {
		const char *name = NULL;
		sb_reset(&run->perr);
		if (plat_drop_caches(&run->sp, &name, &run->perr) == 0)
			sb_addf(applied, "%s%s", applied->len ? "+" : "", name);
		else
			event(run, "warning", "cannot drop caches before step %s: %s",
			      st->module->name, run->perr.buf);
	}
	return 0;
}

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

/*
 * A cell's seed: the same for every volume of a phase (so `tree` builds the
 * identical tree on each), different for every layout, repetition and step
 * instance. Modules that want per-volume streams derive further.
 */
static uint64_t seed_derive_cell(uint64_t seed, const char *layout, const struct cell *c)
{
	struct strbuf label = STRBUF_INIT;
	sb_addf(&label, "cell/%s/%u/%s", layout, c->rep, c->path);
	uint64_t s = prng_derive_seed(seed, label.buf);
	sb_release(&label);
	return s;
}

static int run_cell(struct run *run, const struct schedule *sched, const struct cell *c,
		    struct strbuf *err)
{
	const struct plan *p = run->plan;
	const struct plan_step *st = c->step;
	const struct rig_module *m = st->module;
	struct volume *vol = &run->vols[c->volume];
	const char *lname = plan_layout_name(p, c->layout);

	progress_update(&run->progress, "[%u/%zu] %s%srep %u  step %s %-9s on %s",
			c->seq, sched->n, lname, *lname ? "  " : "", c->rep, c->path, m->name,
			vol->name);

	struct strbuf flushed = STRBUF_INIT;
	if (flush_caches(run, st, vol, &flushed, err) < 0) {
		sb_release(&flushed);
		return -EIO;
	}

	/* Bind parameters for this cell ($vars from enclosing sweeps). */
	struct diag d;
	diag_init(&d, p->file, p->text);
	void *args = xcalloc(1, m->args_size ? m->args_size : 1);
	params_bind(m, st->params, c->bindings, args, &d, st->mark);
	if (d.nerrors) {
		char msg[512];
		diag_format_item(&d, 0, msg, sizeof(msg));
		sb_addf(err, "cannot bind parameters of step %s: %s", c->path, msg);
		params_free(m, args);
		free(args);
		diag_release(&d);
		sb_release(&flushed);
		return -EINVAL;
	}
	diag_release(&d);

	char start[40], end[40];
	timeutil_utc_iso(start, sizeof(start));
	struct store_cell sc = {
		.seq = c->seq,
		.phase = c->phase,
		.layout = lname,
		.rep = c->rep,
		.step = c->path,
		.module = m->name,
		.volume_id = run->vol_ids[run->vol_id_base[c->layout] + c->volume],
		.cycle = c->cycle,
		.sweep_var = c->sweep_var,
		.sweep_value = c->sweep_value,
	};
	int rc;
	if (run->has_row && run->has_row[c->seq]) {
		/* A resumed run runs this cell again: the earlier attempt's samples
		 * stay in the store, superseded. */
		uint64_t nsup = 0;
		rc = store_cell_restart(run->store, &sc, start, &nsup, err);
		if (rc == 0)
			event(run, "info", "cell %u (step %s, %s on %s) runs again; %" PRIu64
			      " samples of its earlier attempt are kept as superseded",
			      c->seq, c->path, m->name, vol->name, nsup);
	} else {
		rc = store_cell_start(run->store, &sc, start, err);
	}
	if (rc < 0) {
		params_free(m, args);
		free(args);
		sb_release(&flushed);
		return rc;
	}

	struct cell_sink cs = { .run = run, .seq = c->seq, .flushed = flushed.buf };
	sb_init(&cs.err);
	sb_init(&cs.method);
	struct rig_sink sink = { &cs, sink_metric, sink_file, sink_note };
	struct strbuf merr = STRBUF_INIT;
	struct rig_ctx ctx = {
		.dir = vol->dir,
		.device = vol->device,
		.volume = vol->name,
		.seed = seed_derive_cell(run->seed, lname, c),
		.rep = c->rep,
		.cycle = c->cycle,
		.direct = p->cache.direct,
		.cache_method = flushed.buf,
		.direct_used = p->cache.direct && m->direct_io,
		.sink = &sink,
		.cancel = &runner_cancel,
		.volstate = &run->slots[c->volume * run->nmodules + resume_state_slot(m)],
		.sp = &run->sp,
		.err = &merr,
	};
	cs.ctx = &ctx;
	rc = m->run(&ctx, args);
	timeutil_utc_iso(end, sizeof(end));
	const char *status = "done";
	if (rc < 0) {
		status = "failed";
		sb_addf(err, "step %s (%s) on volume %s failed: %s", c->path, m->name, vol->name,
			merr.len ? merr.buf : strerror(-rc));
	} else if (cs.failed) {
		status = "failed";
		sb_addf(err, "cannot record samples of step %s on %s: %s", c->path, vol->name,
			cs.err.buf);
		rc = -EIO;
	} else if (runner_cancel) {
		status = "interrupted";
	}
	struct strbuf serr = STRBUF_INIT;
	store_cell_end(run->store, c->seq, end, status, rc < 0 ? err->buf : NULL, &serr);
	sb_release(&serr);
	sb_release(&merr);
	sb_release(&cs.err);
	sb_release(&cs.method);
	sb_release(&flushed);
	params_free(m, args);
	free(args);
	return rc;
}

/* Allocate store ids for every layout's volumes. */
static void alloc_vol_ids(struct run *run)
{
	size_t nl = plan_layout_count(run->plan), total = 0;
	run->vol_id_base = xcalloc(nl, sizeof(size_t));
	for (size_t li = 0; li < nl; li++) {
		run->vol_id_base[li] = total;
		total += plan_volume_count(run->plan, li);
	}
	run->vol_ids = xcalloc(total ? total : 1, sizeof(int64_t));
}

static void warn_cache(struct run *run)
{
	const struct plan_cache *c = &run->plan->cache;
	if (!c->flush)
		return;
	if (geteuid() != 0) {
		event(run, "warning",
		      "cache.flush is requested but rig is not root: caches are not dropped "
		      "before read steps (result rows say which method was applied)");
		run->flush_ok = 0;
	} else {
		run->flush_ok = 1;
	}
	if (c->remount && !run->backend->remount)
		event(run, "warning", "cache.remount is requested but the %s backend cannot "
				      "remount: not applied", run->backend->name);
}


/* The run folder's lock: held (flock, released by the kernel when the
 * process dies, even by SIGKILL) while a run or a resume works in it, so a
 * resume never runs next to a live run of the same folder. */
static int lock_run(struct run *run, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/plan.yaml", run->dir.buf);
	run->lock_fd = open(path.buf, O_RDONLY | O_CLOEXEC);
	int rc = 0;
	if (run->lock_fd < 0) {
		sb_addf(err, "cannot open %s: %s", path.buf, strerror(errno));
		rc = -EIO;
	} else if (flock(run->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			sb_addf(err, "the run in %s is still going: another rig works in it",
				run->dir.buf);
		else
			sb_addf(err, "cannot lock %s: %s", path.buf, strerror(errno));
		close(run->lock_fd);
		run->lock_fd = -1;
		rc = -EBUSY;
	}
	sb_release(&path);
	return rc;
}

/*
 * The target's locks: every disk, image and directory the run uses
 * (provision_target_keys), taken before anything is checked or changed
 * and held until the process ends, after the last teardown (the kernel
 * releases them if it dies). Refused (-EBUSY) while another run holds one,
 * with that run named in err.
 */
static int lock_target(struct run *run, struct strbuf *err)
{
	struct target_keys keys = { 0 };
	int rc = provision_target_keys(run->plan, 1, &keys, err);
	for (size_t i = 0; rc == 0 && i < keys.n; i++)
		rc = lock_take(&run->locks, keys.v[i].key, keys.v[i].what, err);
	target_keys_release(&keys);
	if (rc < 0)
		lock_set_release(&run->locks);
	return rc;
}

/* The options a plan was run with, for a resume to parse and run it alike. */
static void options_json(const struct run_options *o, struct strbuf *j)
{
	char cwd[4096];
	sb_adds(j, "{\"platform\":");
	sb_add_json(j, o->popt ? plan_platform_name(o->popt->platform) : plat_name());
	sb_adds(j, ",\"fs_map\":");
	if (o->popt && o->popt->fs_map)
		sb_add_json(j, o->popt->fs_map);
	else
		sb_adds(j, "null");
	sb_addf(j, ",\"image_size\":%llu,\"allow\":%u,\"force\":%s,\"cwd\":",
		(unsigned long long)o->image_size, o->allow, o->force ? "true" : "false");
	if (getcwd(cwd, sizeof(cwd)))
		sb_add_json(j, cwd);
	else
		sb_adds(j, "null");
	sb_addch(j, '}');
}

/* What a run and a resume share: the spawner, the backend context, ids. */
static void setup_run(struct run *run)
{
	const struct run_options *o = run->opt;
	run->sp = spawner_fault(spawner_real(log_command, run));
	run->pctx.plan = run->plan;
	run->pctx.run_id = run->id.buf;
	run->pctx.run_dir = run->dir.buf;
	run->pctx.sp = &run->sp;
	run->pctx.err = &run->perr;
	run->pctx.yes = o->yes;
	run->pctx.force = o->force;
	run->pctx.allow = o->allow;
	run->pctx.image_size = o->image_size;
	run->pctx.cancel = &runner_cancel;
	run->pctx.note = backend_note;
	run->pctx.note_opaque = run;
	run_journal_init(&run->journal, &run->store);
	run->pctx.journal = &run->journal;
	alloc_vol_ids(run);
}

/*
 * A resumed run keeps the provisioning the backend verified: the recorded
 * volumes become this process's, with their store ids.
 */
static void keep_provisioning(struct run *run, int64_t *ids)
{
	const struct provision_resume *r = &run->presume;
	run->provisioned = (long)r->layout;
	run->nvols = r->nvols;
	run->vols = xcalloc(r->nvols, sizeof(*run->vols));
	for (size_t v = 0; v < r->nvols; v++) {
		const struct volume *src = &r->vols[v];
		struct volume *d = &run->vols[v];
		*d = *src;
		d->name = xstrdup(src->name);
		d->fs = src->fs ? xstrdup(src->fs) : NULL;
		d->dir = src->dir ? xstrdup(src->dir) : NULL;
		d->device = src->device ? xstrdup(src->device) : NULL;
		d->facts_json = src->facts_json ? xstrdup(src->facts_json) : NULL;
		run->vol_ids[run->vol_id_base[r->layout] + v] = ids[v];
	}
	run->slots = xcalloc(run->nvols * run->nmodules, sizeof(void *));
}

/*
 * Walk the schedule from cell `from` (a resume: after the backend decided
 * whether the provisioning is kept), tear down, end the run and write the
 * reports. The store and the run folder are open.
 */
static enum run_status run_body(struct run *run, const struct schedule *sched, size_t from,
				int64_t *kept_ids, struct strbuf *err)
{
	const struct plan *p = run->plan;
	enum run_status result = RUN_FAILED;
	int rc = 0;
	size_t done = 0;
	struct strbuf msg = STRBUF_INIT;
	if (fault_spec()) {
		/* Failures made on purpose (util/fault.h): said and recorded. */
		struct strbuf e2 = STRBUF_INIT;
		store_add_note(run->store, 0, "fault_injection", fault_spec(), &e2);
		sb_release(&e2);
		event(run, "warning", "fault injection is active (RIG_FAULT=%s): failures in "
				      "this run are made on purpose", fault_spec());
	}
	struct sigaction old_int, old_term;
	runner_cancel = 0;
	install_signals(&old_int, &old_term);

	if (run->backend->prepare) {
		sb_reset(&run->perr);
		if (run->backend->prepare(&run->pctx) < 0) {
			sb_addf(err, "cannot prepare the target: %s", run->perr.buf);
			if (run->backend->finish)
				run->backend->finish(&run->pctx);
			if (run->resuming) {
				/* Not resumed: the run stays as it was (resumable
				 * once the reason is gone), its reports too. */
				event(run, "info", "rig resume refused: %s", err->buf);
				sigaction(SIGINT, &old_int, NULL);
				sigaction(SIGTERM, &old_term, NULL);
				sb_release(&msg);
				return RUN_NOT_STARTED;
			}
			goto stop;
		}
	}
	if (run->resuming) {
		struct provision_resume *r = &run->presume;
		int reprovision = !r->reused;
		if (r->reused) {
			keep_provisioning(run, kept_ids);
			from = run->rp.unfinished;
		} else {
			from = run->rp.block;
		}
		char now[40];
		timeutil_utc_iso(now, sizeof(now));
		uint32_t first = run->rp.unfinished < sched->n ? sched->cells[run->rp.unfinished].seq
							    : (uint32_t)sched->n + 1;
		uint32_t from_seq = from < sched->n ? sched->cells[from].seq : (uint32_t)sched->n + 1;
		struct strbuf why = STRBUF_INIT;
		if (first > sched->n)
			sb_adds(&why, "every cell was done");
		else if (r->reused)
			sb_addf(&why, "the provisioning of layout %zu was kept as recorded", r->layout + 1);
		else
			sb_addf(&why, "provisioned afresh from cell %u: %s", from_seq,
				run->keep_why.len ? run->keep_why.buf : "nothing to keep");
		struct store_resume sr = {
			.started_utc = now,
			.argv = run->opt->argv_text ? run->opt->argv_text : "",
			.rig_version = RIG_VERSION,
			.first_unfinished = first,
			.from_seq = from_seq,
			.reprovisioned = reprovision && first <= sched->n,
			.why = why.buf,
		};
		struct strbuf serr = STRBUF_INIT;
		if (store_resume_begin(run->store, &sr, &serr) < 0) {
			sb_adds(err, serr.buf);
			sb_release(&serr);
			sb_release(&why);
			goto stop_teardown;
		}
		run->resume_id = sr.id;
		event(run, "info", "resumed: first unfinished cell %u; %s", first, why.buf);
		if (!run->opt->quiet)
			fprintf(stderr, "rig: resuming %s at cell %u of %zu: %s\n", p->name,
				from_seq > sched->n ? (uint32_t)sched->n : from_seq, sched->n, why.buf);
		sb_release(&serr);
		sb_release(&why);
	}
	for (size_t i = from; i < sched->n && !runner_cancel; i++) {
		const struct cell *c = &sched->cells[i];
		int fresh = c->first_of_layout ||
			    (c->first_of_rep && p->reprovision == REPROVISION_REPEAT) ||
			    (i == from && run->provisioned < 0);
		if (fresh) {
			if (teardown(run) < 0) {
				sb_addf(err, "cannot tear down the previous layout: %s", run->perr.buf);
				rc = -EIO;
				break;
			}
			/* A resume records the volumes it provisions, whatever the cell. */
			rc = provision(run, c->layout, c->first_of_layout || i == from, err);
			if (rc < 0)
				break;
		}
		rc = run_cell(run, sched, c, err);
		if (rc < 0)
			break;
		if (!runner_cancel)
			done++;
	}
	(void)rc;
stop_teardown:
	progress_end(&run->progress);
	if (teardown(run) < 0) /* something may be left mounted or attached: say so */
		sb_addf(err, "%scannot tear down the last layout: %s", err->len ? "; " : "",
			run->perr.buf);
	if (run->backend->finish)
		run->backend->finish(&run->pctx);
stop:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	{
		char ended[40];
		const char *status;
		timeutil_utc_iso(ended, sizeof(ended));
		if (runner_cancel) {
			status = "interrupted";
			sb_addf(err, "%sinterrupted after %zu of %zu cells; everything measured is kept",
				err->len ? "; " : "", done + from, sched->n);
		} else if (err->len) {
			status = "failed";
		} else {
			status = "completed";
			result = RUN_OK;
		}
		struct strbuf serr = STRBUF_INIT;
		if (run->resume_id)
			store_resume_end(run->store, run->resume_id, ended, status, &serr);
		store_end_run(run->store, ended, status, err->len ? err->buf : NULL, &serr);
		sb_release(&serr);
		if (err->len)
			event(run, "info", "run %s: %s", status, err->buf);
	}
	if (reports_write(run->store, run->dir.buf, &msg) < 0) {
		sb_addf(err, "%scannot write the reports: %s", err->len ? "; " : "", msg.buf);
		result = RUN_FAILED;
	}
	sb_release(&msg);
	return result;
}

static void run_release(struct run *run)
{
	if (run->store)
		store_close(run->store);
	if (run->cmdlog)
		fclose(run->cmdlog);
	if (run->lock_fd >= 0)
		close(run->lock_fd);
	lock_set_release(&run->locks);
	free(run->vol_ids);
	free(run->vol_id_base);
	free(run->has_row);
	sb_release(&run->dir);
	sb_release(&run->id);
	sb_release(&run->perr);
	sb_release(&run->keep_why);
}

static void run_init(struct run *run, const struct plan *p, const struct run_options *o)
{
	memset(run, 0, sizeof(*run));
	run->plan = p;
	run->opt = o;
	run->provisioned = -1;
	run->lock_fd = -1;
	lock_set_init(&run->locks, "rig run");
	sb_init(&run->dir);
	sb_init(&run->id);
	sb_init(&run->perr);
	sb_init(&run->keep_why);
	for (run->nmodules = 0; rig_modules[run->nmodules]; run->nmodules++)
		;
	progress_init(&run->progress, o->quiet ? NULL : stderr);
}

enum run_status runner_run(const struct plan *p, const struct run_options *o,
			   struct strbuf *run_dir, struct strbuf *err)
{
	struct run run;
	run_init(&run, p, o);

	/* Everything that can be refused is refused before anything changes. */
	if (check_modules(p, p->steps, p->nsteps, err) < 0)
		goto refused;
	run.backend = provision_backend(p, err);
	if (!run.backend)
		goto refused;
	run.seed = o->has_seed ? o->seed : p->has_seed ? p->seed : draw_seed();
	int seed_drawn = !o->has_seed && !p->has_seed;
	struct schedule sched;
	if (schedule_build(p, run.seed, &sched) < 0) {
		sb_adds(err, "cannot build the schedule of a plan that is not valid");
		goto refused;
	}

	if (lock_target(&run, err) < 0) {
		schedule_free(&sched);
		goto refused;
	}
	enum run_status result = RUN_FAILED;
	if (make_run_dir(&run, err) < 0) {
		schedule_free(&sched);
		goto refused;
	}
	sb_adds(run_dir, run.dir.buf);
	{
		char *abs = realpath(run.dir.buf, NULL);
		lock_set_run(&run.locks, abs ? abs : run.dir.buf);
		free(abs);
	}

	struct strbuf path = STRBUF_INIT, host = STRBUF_INIT, os = STRBUF_INIT,
		      hash = STRBUF_INIT, opts = STRBUF_INIT;
	sb_addf(&path, "%s/plan.yaml", run.dir.buf);
	if (write_file(path.buf, p->text, p->text_len, err) < 0 || lock_run(&run, err) < 0)
		goto out;
	sb_reset(&path);
	sb_addf(&path, "%s/commands.log", run.dir.buf);
	run.cmdlog = fopen(path.buf, "wx");
	if (!run.cmdlog) {
		sb_addf(err, "cannot create %s: %s", path.buf, strerror(errno));
		goto out;
	}
	sb_reset(&path);
	sb_addf(&path, "%s/results.db", run.dir.buf);
	run.store = store_create(path.buf, err);
	if (!run.store)
		goto out;

	char started[40];
	timeutil_utc_iso(started, sizeof(started));
	sysinfo_host(&host);
	sysinfo_os(&os);
	sysinfo_sha256_hex(p->text, p->text_len, &hash);
	options_json(o, &opts);
	struct store_run sr = {
		.id = run.id.buf,
		.plan_name = p->name,
		.plan_file = p->file,
		.plan_text = p->text,
		.plan_sha256 = hash.buf,
		.seed = run.seed,
		.seed_drawn = seed_drawn,
		.rig_version = RIG_VERSION,
		.host = host.buf,
		.os = os.buf,
		.started_utc = started,
		.platform = plat_name(),
		.argv = o->argv_text ? o->argv_text : "",
		.options_json = opts.buf,
	};
	if (store_begin_run(run.store, &sr, err) < 0)
		goto out;
	{
		/* Provenance the report shows: the machine that measured. */
		struct strbuf cpu = STRBUF_INIT, mem = STRBUF_INIT, e2 = STRBUF_INIT;
		plat_cpu(&cpu);
		sb_addf(&mem, "%llu", (unsigned long long)plat_mem_bytes());
		store_add_note(run.store, 0, "cpu", cpu.buf, &e2);
		store_add_note(run.store, 0, "memory_bytes", mem.buf, &e2);
		sb_release(&cpu);
		sb_release(&mem);
		sb_release(&e2);
	}
	setup_run(&run);

	if (!o->quiet)
		fprintf(stderr, "rig: running %s: %zu cells, seed %llu%s\nrig: run folder %s\n",
			p->name, sched.n, (unsigned long long)run.seed,
			seed_drawn ? " (drawn; pass --seed to repeat it)" : "", run.dir.buf);
	warn_cache(&run);
	result = run_body(&run, &sched, 0, NULL, err);
out:
	schedule_free(&sched);
	sb_release(&path);
	sb_release(&host);
	sb_release(&os);
	sb_release(&hash);
	sb_release(&opts);
	run_release(&run);
	return result;
refused:
	run_release(&run);
	return RUN_NOT_STARTED;
}

/* --- rig resume --- */

/* The folder's plan.yaml must be the plan the store recorded. */
static int check_plan_file(const char *dir, const struct resume_info *ri, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT, hash = STRBUF_INIT,
		      stored = STRBUF_INIT;
	sb_addf(&path, "%s/plan.yaml", dir);
	int rc = 0;
	FILE *f = fopen(path.buf, "rb");
	if (!f) {
		sb_addf(err, "cannot read %s: %s", path.buf, strerror(errno));
		rc = -ENOENT;
		goto out;
	}
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(&text, buf, n);
	fclose(f);
	sysinfo_sha256_hex(text.buf, text.len, &hash);
	if (ri->plan_text)
		sysinfo_sha256_hex(ri->plan_text, strlen(ri->plan_text), &stored);
	if (!ri->plan_text || !ri->plan_sha256 || strcmp(stored.buf, ri->plan_sha256)) {
		sb_addf(err, "the plan recorded in the results store does not match its SHA-256; "
			     "the store was changed and cannot be resumed");
		rc = -EINVAL;
	} else if (strcmp(hash.buf, ri->plan_sha256)) {
		sb_addf(err, "%s was changed since the run started (SHA-256 %.12s..., the run "
			     "recorded %.12s...); a resume runs the plan as recorded: put it back, "
			     "or start a new run with the changed plan",
			path.buf, hash.buf, ri->plan_sha256);
		rc = -EINVAL;
	}
out:
	sb_release(&path);
	sb_release(&text);
	sb_release(&hash);
	sb_release(&stored);
	return rc;
}

enum run_status runner_resume(const char *dir, const struct run_options *opt,
			      struct strbuf *run_dir, struct strbuf *info, struct strbuf *err)
{
	struct run_options o = *opt;
	struct plan_options po = { NULL, NULL };
	struct resume_info ri;
	memset(&ri, 0, sizeof(ri));
	struct resume_options rec;
	memset(&rec, 0, sizeof(rec));
	char *abs = realpath(dir, NULL);
	struct plan *p = NULL;
	struct schedule sched;
	memset(&sched, 0, sizeof(sched));
	int have_sched = 0;
	enum cell_state *state = NULL;
	struct volume *vols = NULL;
	int64_t *ids = NULL;
	size_t nvols = 0, nvols_alloc = 0, li = 0;
	enum run_status result = RUN_NOT_STARTED;
	struct run run;
	run_init(&run, NULL, &o);
	if (!abs) {
		sb_addf(err, "cannot use %s as a run folder: %s", dir, strerror(errno));
		goto out;
	}
	sb_adds(&run.dir, abs);
	sb_adds(run_dir, abs);
	const char *slash = strrchr(abs, '/');
	sb_adds(&run.id, slash && slash[1] ? slash + 1 : abs);

	/* Refuse before anything changes. */
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/results.db", abs);
	if (resume_never_recorded(path.buf)) {
		sb_addf(err, "the run in %s was stopped before it recorded anything: nothing was "
			     "provisioned or measured; start it again with `rig run`", abs);
		sb_release(&path);
		goto out;
	}
	if (lock_run(&run, err) < 0) {
		sb_release(&path);
		goto out;
	}
	run.store = store_open(path.buf, 0, err);
	sb_release(&path);
	if (!run.store || resume_read_run(run.store, &ri, err) < 0)
		goto out;
	if (!strcmp(ri.status, "completed")) {
		/* A kill between the end of the run and its reports leaves no
		 * results.csv (always written): write them, as `rig report` would. */
		struct strbuf csv = STRBUF_INIT;
		sb_addf(&csv, "%s/results.csv", abs);
		int missing = access(csv.buf, F_OK) < 0;
		sb_release(&csv);
		sb_addf(info, "the run in %s completed; there is nothing to resume", abs);
		result = RUN_OK;
		if (missing) {
			sb_adds(info, " (its reports were missing and are written again)");
			if (reports_write(run.store, abs, err) < 0)
				result = RUN_FAILED;
		}
		goto out;
	}
	if (!ri.rig_version || strcmp(ri.rig_version, RIG_VERSION)) {
		sb_addf(err, "the run in %s was made by rig %s, this is rig %s: its schedule and "
			     "modules may differ; resume it with rig %s", abs,
			ri.rig_version ? ri.rig_version : "(unknown)", RIG_VERSION,
			ri.rig_version ? ri.rig_version : "(unknown)");
		goto out;
	}
	if (check_plan_file(abs, &ri, err) < 0)
		goto out;
	/* The recorded options: plan parsing, and the backend's (image size...). */
	if (resume_parse_options(ri.options_json, &rec) < 0) {
		sb_adds(err, "the store does not say which options the run had (it was recorded "
			     "by a rig without resume, results store schema 1); it cannot be resumed");
		goto out;
	}
	po.platform = rec.platform ? rec.platform : prov_driver_host();
	po.fs_map = rec.fs_map;
	o.image_size = rec.image_size;
	o.allow |= rec.allow;
	o.force |= rec.force;
	/* Relative paths in the plan (dirs, the image) mean what they meant. */
	if (rec.cwd && chdir(rec.cwd) < 0) {
		sb_addf(err, "cannot change to %s, the folder the run was started in (the plan's "
			     "relative paths are relative to it): %s", rec.cwd, strerror(errno));
		goto out;
	}
	struct diag d;
	diag_init(&d, ri.plan_file, NULL);
	p = plan_parse_text(ri.plan_file, ri.plan_text, strlen(ri.plan_text), &po, &d);
	if (d.nerrors || !p) {
		char m[512] = "";
		if (d.nerrors)
			diag_format_item(&d, 0, m, sizeof(m));
		sb_addf(err, "the recorded plan does not parse with this rig: %s", m);
		diag_release(&d);
		goto out;
	}
	diag_release(&d);
	run.plan = p;
	if (check_modules(p, p->steps, p->nsteps, err) < 0)
		goto out;
	run.backend = provision_backend(p, err);
	if (!run.backend)
		goto out;
	run.seed = ri.seed;
	if (schedule_build(p, run.seed, &sched) < 0) {
		sb_adds(err, "cannot build the schedule of the recorded plan");
		goto out;
	}
	have_sched = 1;
	state = xcalloc(sched.n + 1, sizeof(*state));
	if (resume_read_cells(run.store, p, &sched, state, err) < 0) {
		struct strbuf e = STRBUF_INIT;
		sb_addf(&e, "the results store does not match the schedule of its plan and seed: %s",
			err->buf);
		sb_reset(err);
		sb_adds(err, e.buf);
		sb_release(&e);
		goto out;
	}
	run.has_row = xcalloc(sched.n + 1, 1);
	for (size_t i = 1; i <= sched.n; i++)
		run.has_row[i] = state[i] != CELL_NEW;
	resume_point(p, &sched, state, &run.rp);
	/* The target's locks, as a run takes them (the plan's relative paths
	 * resolved in the folder the run was started in, above). */
	run.locks.command = "rig resume";
	lock_set_run(&run.locks, abs);
	if (lock_target(&run, err) < 0)
		goto out;

	/* From here on the run folder changes. */
	result = RUN_FAILED;
	sb_addf(&path, "%s/commands.log", abs);
	run.cmdlog = fopen(path.buf, "a");
	sb_release(&path);
	if (!run.cmdlog) {
		sb_addf(err, "cannot append to %s/commands.log: %s", abs, strerror(errno));
		goto out;
	}
	setup_run(&run);
	li = run.rp.unfinished < sched.n ? sched.cells[run.rp.unfinished].layout : 0;
	nvols_alloc = plan_volume_count(p, li);
	nvols = resume_read_volumes(run.store, p, li, &vols, &ids);
	run.presume.layout = li;
	run.presume.vols = nvols ? vols : NULL;
	run.presume.nvols = nvols;
	run.presume.reuse = resume_may_keep(&sched, &run.rp, &run.keep_why);
	run.presume.why = &run.keep_why;
	run.pctx.resume = &run.presume;
	run.resuming = 1;
	if (!o.quiet)
		fprintf(stderr, "rig: resuming %s (seed %llu), run folder %s\n", p->name,
			(unsigned long long)run.seed, abs);
	warn_cache(&run);
	result = run_body(&run, &sched, run.rp.unfinished, ids, err);
out:
	for (size_t i = 0; vols && i < nvols_alloc; i++)
		volume_release(&vols[i]);
	free(vols);
	free(ids);
	free(state);
	if (have_sched)
		schedule_free(&sched);
	run_release(&run);
	plan_free(p);
	resume_info_release(&ri);
	resume_options_release(&rec);
	free(abs);
	return result;
}
