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
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
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
#include "schedule.h"
#include "store.h"
#include "util/fault.h"
#include "util/prng.h"
#include "util/progress.h"
#include "util/spawn.h"
#include "util/strbuf.h"
#include "util/sysinfo.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

volatile sig_atomic_t rig_cancel;

static void on_signal(int sig)
{
	(void)sig;
	rig_cancel = 1;
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
	struct strbuf perr;
	long provisioned;      /* layout index provisioned, -1 none */
	struct volume *vols;
	size_t nvols;
	int64_t *vol_ids;      /* store ids, per layout per volume */
	size_t *vol_id_base;   /* index of layout li's first volume in vol_ids */
	void **slots;          /* nvols * nmodules per-volume module state */
	size_t nmodules;
};

static void log_command(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	struct run *run = opaque;
	char now[40];
	utc_now_iso(now, sizeof(now));
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
		utc_now_iso(now, sizeof(now));
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
	utc_now_iso(now, sizeof(now));
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
	utc_now_compact(ts, sizeof(ts));
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

static size_t module_index(const struct rig_module *m)
{
	for (size_t i = 0; rig_modules[i]; i++)
		if (rig_modules[i] == m)
			return i;
	return 0;
}

/* The state slot a module uses: its own, or that of the module it needs. */
static size_t slot_of(const struct rig_module *m)
{
	return module_index(m->needs ? module_find(m->needs) : m);
}

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
	uint64_t s = seed_derive(seed, label.buf);
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
	utc_now_iso(start, sizeof(start));
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
	int rc = store_cell_start(run->store, &sc, start, err);
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
		.cancel = &rig_cancel,
		.volstate = &run->slots[c->volume * run->nmodules + slot_of(m)],
		.sp = &run->sp,
		.err = &merr,
	};
	cs.ctx = &ctx;
	rc = m->run(&ctx, args);
	utc_now_iso(end, sizeof(end));
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
	} else if (rig_cancel) {
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


enum run_status runner_run(const struct plan *p, const struct run_options *o,
			   struct strbuf *run_dir, struct strbuf *err)
{
	struct run run;
	memset(&run, 0, sizeof(run));
	run.plan = p;
	run.opt = o;
	run.provisioned = -1;
	sb_init(&run.dir);
	sb_init(&run.id);
	sb_init(&run.perr);
	for (run.nmodules = 0; rig_modules[run.nmodules]; run.nmodules++)
		;
	progress_init(&run.progress, o->quiet ? NULL : stderr);

	/* Everything that can be refused is refused before anything changes. */
	if (check_modules(p, p->steps, p->nsteps, err) < 0)
		return RUN_NOT_STARTED;
	run.backend = provision_backend(p, err);
	if (!run.backend)
		return RUN_NOT_STARTED;
	run.seed = o->has_seed ? o->seed : p->has_seed ? p->seed : draw_seed();
	int seed_drawn = !o->has_seed && !p->has_seed;
	struct schedule sched;
	if (schedule_build(p, run.seed, &sched) < 0) {
		sb_adds(err, "cannot build the schedule of a plan that is not valid");
		return RUN_NOT_STARTED;
	}

	enum run_status result = RUN_FAILED;
	int rc = 0;
	size_t done = 0;
	if (make_run_dir(&run, err) < 0) {
		schedule_free(&sched);
		sb_release(&run.dir);
		sb_release(&run.id);
		return RUN_NOT_STARTED;
	}
	sb_adds(run_dir, run.dir.buf);

	struct strbuf path = STRBUF_INIT, host = STRBUF_INIT, os = STRBUF_INIT,
		      hash = STRBUF_INIT, msg = STRBUF_INIT;
	sb_addf(&path, "%s/plan.yaml", run.dir.buf);
	if (write_file(path.buf, p->text, p->text_len, err) < 0)
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
	utc_now_iso(started, sizeof(started));
	sysinfo_host(&host);
	sysinfo_os(&os);
	sha256_hex(p->text, p->text_len, &hash);
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

	run.sp.log = log_command;
	run.sp.opaque = &run;
	run.pctx.plan = p;
	run.pctx.run_id = run.id.buf;
	run.pctx.run_dir = run.dir.buf;
	run.pctx.sp = &run.sp;
	run.pctx.err = &run.perr;
	run.pctx.yes = o->yes;
	run.pctx.force = o->force;
	run.pctx.allow = o->allow;
	run.pctx.image_size = o->image_size;
	run.pctx.cancel = &rig_cancel;
	run.pctx.note = backend_note;
	run.pctx.note_opaque = &run;
	alloc_vol_ids(&run);

	if (!o->quiet)
		fprintf(stderr, "rig: running %s: %zu cells, seed %llu%s\nrig: run folder %s\n",
			p->name, sched.n, (unsigned long long)run.seed,
			seed_drawn ? " (drawn; pass --seed to repeat it)" : "", run.dir.buf);
	warn_cache(&run);
	if (fault_spec()) {
		/* Failures made on purpose (util/fault.h): said and recorded. */
		struct strbuf e2 = STRBUF_INIT;
		store_add_note(run.store, 0, "fault_injection", fault_spec(), &e2);
		sb_release(&e2);
		event(&run, "warning", "fault injection is active (RIG_FAULT=%s): failures in "
				       "this run are made on purpose", fault_spec());
	}

	struct sigaction old_int, old_term;
	rig_cancel = 0;
	install_signals(&old_int, &old_term);

	if (run.backend->prepare) {
		sb_reset(&run.perr);
		if (run.backend->prepare(&run.pctx) < 0) {
			sb_addf(err, "cannot prepare the target: %s", run.perr.buf);
			if (run.backend->finish)
				run.backend->finish(&run.pctx);
			goto stop;
		}
	}
	for (size_t i = 0; i < sched.n && !rig_cancel; i++) {
		const struct cell *c = &sched.cells[i];
		int fresh = c->first_of_layout ||
			    (c->first_of_rep && p->reprovision == REPROVISION_REPEAT);
		if (fresh) {
			if (teardown(&run) < 0) {
				sb_addf(err, "cannot tear down the previous layout: %s", run.perr.buf);
				rc = -EIO;
				break;
			}
			rc = provision(&run, c->layout, c->first_of_layout, err);
			if (rc < 0)
				break;
		}
		rc = run_cell(&run, &sched, c, err);
		if (rc < 0)
			break;
		if (!rig_cancel)
			done++;
	}
	progress_end(&run.progress);
	if (teardown(&run) < 0) /* something may be left mounted or attached: say so */
		sb_addf(err, "%scannot tear down the last layout: %s", err->len ? "; " : "",
			run.perr.buf);
	if (run.backend->finish)
		run.backend->finish(&run.pctx);
stop:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	{
		char ended[40];
		const char *status;
		utc_now_iso(ended, sizeof(ended));
		if (rig_cancel) {
			status = "interrupted";
			sb_addf(err, "%sinterrupted after %zu of %zu cells; everything measured is kept",
				err->len ? "; " : "", done, sched.n);
		} else if (err->len) {
			status = "failed";
		} else {
			status = "completed";
			result = RUN_OK;
		}
		struct strbuf serr = STRBUF_INIT;
		store_end_run(run.store, ended, status, err->len ? err->buf : NULL, &serr);
		sb_release(&serr);
		if (err->len)
			event(&run, "info", "run %s: %s", status, err->buf);
	}
	if (reports_write(run.store, run.dir.buf, &msg) < 0) {
		sb_addf(err, "%scannot write the reports: %s", err->len ? "; " : "", msg.buf);
		result = RUN_FAILED;
	}
out:
	schedule_free(&sched);
	if (run.store)
		store_close(run.store);
	if (run.cmdlog)
		fclose(run.cmdlog);
	free(run.vol_ids);
	free(run.vol_id_base);
	sb_release(&path);
	sb_release(&host);
	sb_release(&os);
	sb_release(&hash);
	sb_release(&msg);
	sb_release(&run.dir);
	sb_release(&run.id);
	sb_release(&run.perr);
	return result;
}
