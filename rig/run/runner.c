/*
 * The runner's entry points; see runner.h for the contract. The parts of a
 * run live in their own files, each with a narrow internal header:
 *   run_dir.c        the run folder, its lock, commands.log and events
 *   run_provision.c  the provisioning lifecycle through the backend's ops
 *   run_cells.c      the walk over the cells, cache flushing, samples
 *   run_resume.c     what only a resume does (refusals, the recorded plan
 *                    and its paths, where it starts, the resumes table)
 * and run.h the state of a run they share.
 * This file holds what a run and a resume share: the refusals of a plan
 * this build cannot run, signals, the seed, the recorded options, and the
 * frame around the walk (prepare, teardown, the run's end, the reports).
 * Nothing here or there changes the process's working folder: a resume
 * joins the run's relative paths to the folder it recorded (run_resume.c).
 */
#include "rig/run/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/sysinfo.h"
#include "lib/timeutil.h"
#include "lib/virt.h"
#include "modules/module.h"
#include "plan/platform.h"
#include "plan/schedule.h"
#include "platform/fault.h"
#include "platform/platform.h"
#include "reports/report.h"
#include "rig/run/run.h"
#include "rig/run/run_account.h"
#include "rig/run/run_cells.h"
#include "rig/run/run_resume.h"
#include "store/run_options.h"
#include "store/store.h"

volatile sig_atomic_t run_cancel;

static void on_signal(int sig)
{
	(void)sig;
	run_cancel = 1;
}

static void install_signals(struct sigaction *old_int, struct sigaction *old_term)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: blocking calls return EINTR */
	run_cancel = 0;
	sigaction(SIGINT, &sa, old_int);
	sigaction(SIGTERM, &sa, old_term);
}

static void restore_signals(const struct sigaction *old_int, const struct sigaction *old_term)
{
	sigaction(SIGINT, old_int, NULL);
	sigaction(SIGTERM, old_term, NULL);
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

/* The options the run was started with, as its run row records them. */
static void options_json(const struct run_options *o, struct strbuf *j)
{
	const struct plan_options *po = o->popt;
	struct store_run_options so = {
		.platform = po ? po->platform : plan_platform_host(),
		.fs_map = po ? (char *)po->fs_map : NULL,
		.vars = po ? (char **)po->vars : NULL,
		.nvars = po ? po->nvars : 0,
		.image_size = o->image_size,
		.allow = o->allow,
		.force = o->force,
		.no_fit_check = o->no_fit_check,
		.seeds = SEED_CURRENT,
	};
	store_run_options_json(&so, j);
}

static void run_init(struct run *run, const struct plan *p, const struct run_options *o)
{
	memset(run, 0, sizeof(*run));
	run->plan = p;
	run->opt = o;
	plat_progress_init(&run->progress, stderr,
		      o->json_progress ? PROGRESS_JSON : o->quiet ? PROGRESS_OFF : PROGRESS_HUMAN);
	run_dir_init(&run->dir, &run->progress);
	run_provision_init(&run->prov, &run->dir);
	/* The accounting starts with the command; until the store exists its
	 * time stays with the run's scope. */
	mod_run_time_init(&run->time, RT_OTHER);
	run->time_layout = -1;
	run->prov.time = &run->time;
}

static void run_release(struct run *run)
{
	run_dir_release(&run->dir);
	run_provision_release(&run->prov);
	free(run->has_row);
	run->has_row = NULL;
	plat_progress_release(&run->progress);
}

/* The spawner's watch: the command running, on the progress line. */
static void run_watch_command(void *opaque, const char *argv_text, double seconds)
{
	plat_progress_command(opaque, argv_text, seconds);
}

/* What a run and a resume share: the spawner, the backend context, ids. */
static void setup_run(struct run *run)
{
	run->sp = plat_spawner_fault(plat_spawner_real(run_dir_log_command, &run->dir));
	run->sp.watch = run_watch_command;
	run->sp.watch_opaque = &run->progress;
	run_provision_setup(&run->prov, run->opt, &run->sp);
}

/*
 * Prepare the target, walk the schedule from cell `from` (a resume: from
 * where run_resume_begin decides, after the backend decided whether the
 * provisioning is kept), tear down, end the run and write the reports.
 * The store and the run folder are open.
 */
static enum run_status run_body(struct run *run, const struct schedule *sched, size_t from,
				struct strbuf *err)
{
	enum run_status result = RUN_FAILED;
	size_t done = 0;
	struct strbuf msg = STRBUF_INIT;
	if (plat_fault_spec()) {
		/* Failures made on purpose (util/fault.h): said and recorded. */
		struct strbuf e2 = STRBUF_INIT;
		store_add_note(run->dir.store, 0, "fault_injection", plat_fault_spec(), &e2);
		sb_release(&e2);
		run_dir_event(&run->dir, "warning", "fault injection is active (RIG_FAULT=%s): "
			      "failures in this run are made on purpose", plat_fault_spec());
	}
	/* Interrupted before this point (the handlers are in place from the
	 * start of run_start and run_continue): nothing is prepared, so
	 * nothing is kept, as when refused. */
	int refused = run_cancel ? (sb_adds(err, "interrupted before the target was prepared"), -1)
				    : run_provision_prepare(&run->prov, err);
	if (refused < 0) {
		/* Refused (a safety rule, the confirm, an image rig did not
		 * make, not root, tools missing) or interrupted: nothing was
		 * provisioned or measured. A resume leaves the run as it was
		 * (resumable once the reason is gone), its reports too; a run's
		 * folder is discarded by run_start. */
		if (run->resume)
			run_dir_event(&run->dir, "info", "rig resume refused: %s", err->buf);
		plat_progress_finish(&run->progress, run_cancel ? "interrupted" : "refused");
		plat_progress_end(&run->progress);
		sb_release(&msg);
		return RUN_NOT_STARTED;
	}
	if (run->resume && run_resume_begin(run->resume, run, sched, &from, err) < 0)
		goto stop_teardown;
	run_cells_walk(run, sched, from, &done, err); /* err says why it stopped */
stop_teardown:
	plat_progress_end(&run->progress);
	if (run_provision_teardown(&run->prov) < 0) /* something may be left mounted or attached: say so */
		sb_addf(err, "%scannot tear down the last layout: %s", err->len ? "; " : "",
			run->prov.perr.buf);
	run_provision_finish(&run->prov);
	run_account_scope(run, -1, 0);
	{
		char ended[40];
		const char *status;
		timeutil_utc_iso(ended, sizeof(ended));
		if (run_cancel) {
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
		plat_progress_finish(&run->progress, status);
		mod_run_time_mark(&run->time, RT_STORE);
		if (run->resume)
			run_resume_end(run->resume, run, ended, status);
		store_end_run(run->dir.store, ended, status, err->len ? err->buf : NULL, &serr);
		mod_run_time_mark(&run->time, RT_OTHER);
		plat_fault_point("ended"); /* a signal now: the reports are still written */
		sb_release(&serr);
		if (err->len)
			run_dir_event(&run->dir, "info", "run %s: %s", status, err->buf);
	}
	/* The reports cannot hold their own time: it is recorded after them
	 * (a report redrawn later shows it); all the rest is recorded before. */
	run_account_flush(run);
	mod_run_time_mark(&run->time, RT_REPORT);
	if (rep_write(run->dir.store, run->dir.path.buf, &msg) < 0) {
		sb_addf(err, "%scannot write the reports: %s", err->len ? "; " : "", msg.buf);
		result = RUN_FAILED;
	} else {
		/* After the run's end: a resume of a completed run without it knows
		 * the process died while writing them (run_resume.c). */
		run_dir_event(&run->dir, "info", "%s", RUN_REPORTS_WRITTEN);
	}
	mod_run_time_mark(&run->time, RT_OTHER);
	run_account_flush(run);
	sb_release(&msg);
	return result;
}

/* Provenance the report shows: the machine that measured. */
static void note_machine(struct run *run)
{
	struct strbuf cpu = STRBUF_INIT, mem = STRBUF_INIT, e2 = STRBUF_INIT;
	plat_cpu(&cpu);
	sb_addf(&mem, "%llu", (unsigned long long)plat_mem_bytes());
	store_add_note(run->dir.store, 0, "cpu", cpu.buf, &e2);
	store_add_note(run->dir.store, 0, "memory_bytes", mem.buf, &e2);
	/* A virtual machine whose host takes back freed memory makes
	 * buffered writes slower than the bare machine (util/virt.h). */
	struct virt_facts vf;
	virt_read("", &vf);
	vf.vm |= plat_vmm_present();
	sb_reset(&cpu);
	virt_describe(&vf, &cpu);
	if (cpu.len)
		store_add_note(run->dir.store, 0, "virtualization", cpu.buf, &e2);
	sb_release(&cpu);
	sb_release(&mem);
	sb_release(&e2);
}

/* The run's row in the store: the plan, its seed, the machine, the
 * options (for a resume and the reports). 0, or -1 with err set. */
static int begin_run_row(struct run *run, const struct plan *p, const struct run_options *o,
			 int seed_drawn, struct strbuf *err)
{
	struct strbuf host = STRBUF_INIT, os = STRBUF_INIT, hash = STRBUF_INIT, opts = STRBUF_INIT;
	char started[40];
	timeutil_utc_iso(started, sizeof(started));
	sysinfo_host(&host);
	sysinfo_os(&os);
	sysinfo_sha256_hex(p->text, p->text_len, &hash);
	options_json(o, &opts);
	struct store_run sr = {
		.id = run->dir.id.buf,
		.plan_name = p->name,
		.plan_file = p->file,
		.plan_text = p->text,
		.plan_sha256 = hash.buf,
		.seed = run->seed,
		.seed_drawn = seed_drawn,
		.rig_version = RIG_VERSION,
		.host = host.buf,
		.os = os.buf,
		.started_utc = started,
		.platform = plat_name(),
		.argv = o->argv_text ? o->argv_text : "",
		.options_json = opts.buf,
	};
	mod_run_time_mark(&run->time, RT_STORE);
	int begun = store_begin_run(run->dir.store, &sr, err);
	mod_run_time_mark(&run->time, RT_OTHER);
	if (begun >= 0)
		snprintf(run->key, sizeof(run->key), "%s/%.16s/%llu", sr.id, sr.plan_sha256,
			 (unsigned long long)sr.seed);
	sb_release(&host);
	sb_release(&os);
	sb_release(&hash);
	sb_release(&opts);
	return begun < 0 ? -1 : 0;
}

static enum run_status run_plan(const struct plan *p, const struct run_options *o,
				struct strbuf *run_dir, struct strbuf *err)
{
	struct run run;
	run_init(&run, p, o);

	/* Everything that can be refused is refused before anything changes. */
	if (check_modules(p, p->steps, p->nsteps, err) < 0)
		goto refused;
	if (run_provision_use(&run.prov, p, err) < 0)
		goto refused;
	run.seed = o->has_seed ? o->seed : p->has_seed ? p->seed : draw_seed();
	run.seed_scheme = SEED_CURRENT;
	int seed_drawn = !o->has_seed && !p->has_seed;
	struct schedule sched;
	if (plan_schedule_build(p, run.seed, &sched) < 0) {
		sb_adds(err, "cannot build the schedule of a plan that is not valid");
		goto refused;
	}

	if (run_provision_lock_target(&run.prov, err) < 0) {
		plan_schedule_free(&sched);
		goto refused;
	}
	/* Until the target is prepared, a failure leaves no run folder:
	 * RUN_NOT_STARTED, and the folder made here is discarded at out. */
	enum run_status result = RUN_NOT_STARTED;
	if (run_dir_make(&run.dir, o->out_dir, o->runs_root, p->name, err) < 0) {
		plan_schedule_free(&sched);
		goto refused;
	}
	sb_adds(run_dir, run.dir.path.buf);
	{
		char *abs = realpath(run.dir.path.buf, NULL);
		plat_lock_set_run(&run.prov.locks, abs ? abs : run.dir.path.buf);
		free(abs);
	}

	struct strbuf path = STRBUF_INIT;
	if (run_dir_write_plan(&run.dir, p->text, p->text_len, err) < 0 ||
	    run_dir_lock(&run.dir, err) < 0 || run_dir_open_log(&run.dir, 0, err) < 0)
		goto out;
	sb_addf(&path, "%s/results.db", run.dir.path.buf);
	mod_run_time_mark(&run.time, RT_STORE);
	run.dir.store = store_create(path.buf, err);
	mod_run_time_mark(&run.time, RT_OTHER);
	if (!run.dir.store)
		goto out;

	if (begin_run_row(&run, p, o, seed_drawn, err) < 0)
		goto out;
	plat_fault_point("started");
	run_account_estimate(&run, &sched);
	note_machine(&run);
	setup_run(&run);

	if (!o->quiet && !o->json_progress)
		fprintf(stderr, "rig: running %s: %zu cells, seed %llu%s\nrig: run folder %s\n",
			p->name, sched.n, (unsigned long long)run.seed,
			seed_drawn ? " (drawn; pass --seed to repeat it)" : "", run.dir.path.buf);
	plat_progress_start(&run.progress, p->name, (uint32_t)sched.n, run.dir.path.buf);
	run_cells_check_cache(&run);
	result = run_body(&run, &sched, 0, err);
out:
	if (result == RUN_NOT_STARTED) {
		struct strbuf why = STRBUF_INIT;
		if (run_dir_discard(&run.dir, &why) == 0) {
			sb_addf(err, " (nothing was provisioned or measured; the run folder %s %s)",
				run.dir.path.buf, run.dir.made ? "is removed" : "is left empty, as it was");
			sb_reset(run_dir);
		} else {
			sb_addf(err, " (nothing was provisioned or measured; %s)", why.buf);
		}
		sb_release(&why);
	}
	plan_schedule_free(&sched);
	sb_release(&path);
	run_release(&run);
	return result;
refused:
	run_release(&run);
	return RUN_NOT_STARTED;
}

static enum run_status resume_run(const char *dir, const struct run_options *opt,
				   struct strbuf *run_dir, struct strbuf *info, struct strbuf *err)
{
	struct run_options o = *opt;
	struct run_resume rs;
	struct schedule sched;
	memset(&sched, 0, sizeof(sched));
	int have_sched = 0;
	enum run_status result = RUN_NOT_STARTED;
	struct run run;
	run_init(&run, NULL, &o);
	run_resume_init(&rs);

	/* Refuse before anything changes. */
	int rc = run_resume_open(&rs, &run, dir, info, &result, err);
	sb_adds(run_dir, run.dir.path.buf);
	if (rc != 0 || run_resume_plan(&rs, &o, err) < 0)
		goto out;
	run.plan = rs.plan;
	if (check_modules(rs.plan, rs.plan->steps, rs.plan->nsteps, err) < 0)
		goto out;
	if (run_provision_use(&run.prov, rs.plan, err) < 0)
		goto out;
	run.seed = rs.info.seed;
	run.seed_scheme = rs.rec.seeds;
	snprintf(run.key, sizeof(run.key), "%s/%.16s/%llu", rs.info.id ? rs.info.id : "",
		 rs.info.plan_sha256 ? rs.info.plan_sha256 : "", (unsigned long long)run.seed);
	if (plan_schedule_build(rs.plan, run.seed, &sched) < 0) {
		sb_adds(err, "cannot build the schedule of the recorded plan");
		goto out;
	}
	have_sched = 1;
	if (run_resume_where(&rs, &run, &sched, err) < 0)
		goto out;
	/* The target's locks, as a run takes them (the plan's relative paths
	 * joined to the folder the run was started in: run_resume_plan). */
	run.prov.locks.command = "rig resume";
	plat_lock_set_run(&run.prov.locks, run.dir.path.buf);
	if (run_provision_lock_target(&run.prov, err) < 0)
		goto out;

	/* From here on the run folder changes. */
	result = RUN_FAILED;
	if (run_dir_open_log(&run.dir, 1, err) < 0)
		goto out;
	plat_fault_point("started");
	setup_run(&run);
	run.resume = &rs;
	if (!o.quiet && !o.json_progress)
		fprintf(stderr, "rig: resuming %s (seed %llu), run folder %s\n", rs.plan->name,
			(unsigned long long)run.seed, run.dir.path.buf);
	plat_progress_start(&run.progress, rs.plan->name, (uint32_t)sched.n, run.dir.path.buf);
	run_cells_check_cache(&run);
	result = run_body(&run, &sched, rs.rp.unfinished, err);
out:
	if (have_sched)
		plan_schedule_free(&sched);
	run_release(&run);
	run_resume_release(&rs);
	return result;
}

/*
 * The handlers are in place for the whole of a run or a resume, from before
 * anything is made to after the reports: SIGINT or SIGTERM only sets
 * run_cancel, so no moment (the run's row written and the target not yet
 * prepared, the end recorded and the reports not yet written) leaves a run
 * marked running or without its reports. A signal before anything was
 * prepared ends it as not started (run_body).
 */
enum run_status run_start(const struct plan *p, const struct run_options *o,
			   struct strbuf *run_dir, struct strbuf *err)
{
	struct sigaction old_int, old_term;
	install_signals(&old_int, &old_term);
	enum run_status st = run_plan(p, o, run_dir, err);
	restore_signals(&old_int, &old_term);
	return st;
}

enum run_status run_continue(const char *dir, const struct run_options *o,
			      struct strbuf *run_dir, struct strbuf *info, struct strbuf *err)
{
	struct sigaction old_int, old_term;
	install_signals(&old_int, &old_term);
	enum run_status st = resume_run(dir, o, run_dir, info, err);
	restore_signals(&old_int, &old_term);
	return st;
}
