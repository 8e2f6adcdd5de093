/*
 * rig resume's part of the runner; see run_resume.h.
 *
 * The killed run's relative paths are resolved by joining them to the
 * folder it recorded (options_json's cwd), not by changing into that
 * folder: a chdir would change the meaning of every relative path this
 * process has or is given (the run folder named on the command line, a
 * relative $RIG_LOCK_DIR), for the whole process and its children. The
 * join is textual, as the kernel would resolve the path from there, and
 * the recorded volume folders get the same join, so the dirs backend finds
 * its work folders exactly where the store says they were.
 */
#include "rig/run/run_resume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "provision/provision.h"
#include "reports/report.h"

#include "lib/files.h"
#include "lib/sysinfo.h"
#include "lib/timeutil.h"
#include "lib/xalloc.h"
#include "plan/platform.h"
#include "plan/schedule.h"
#include "rig/run/run.h"
#include "store/store.h"

void run_resume_init(struct run_resume *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->popt.platform = NULL;
}

void run_resume_release(struct run_resume *rs)
{
	for (size_t i = 0; rs->vols && i < rs->nvols_alloc; i++)
		prov_volume_release(&rs->vols[i]);
	free(rs->vols);
	free(rs->ids);
	free(rs->state);
	plan_free(rs->plan);
	run_resume_info_release(&rs->info);
	store_run_options_release(&rs->rec);
	memset(rs, 0, sizeof(*rs));
}

/* --- the folder: refused before anything changes --- */

/* The folder's plan.yaml must be the plan the store recorded. */
/* Whether the reports were written after the run's (last) end. */
static int reports_after_end(struct store *st)
{
	sqlite3_stmt *q = NULL;
	int yes = 0;
	if (sqlite3_prepare_v2(store_db(st), "SELECT count(*) FROM events, run WHERE msg = ?1 "
				   "AND run.ended_utc IS NOT NULL AND utc >= run.ended_utc", -1, &q,
			       NULL) == SQLITE_OK &&
	    sqlite3_bind_text(q, 1, RUN_REPORTS_WRITTEN, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		yes = sqlite3_column_int(q, 0) > 0;
	sqlite3_finalize(q);
	return yes;
}

static int check_plan_file(const char *dir, const struct resume_info *ri, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT, hash = STRBUF_INIT,
		      stored = STRBUF_INIT;
	sb_addf(&path, "%s/plan.yaml", dir);
	int rc = 0;
	int e = files_read(path.buf, &text);
	if (e < 0) {
		sb_addf(err, "cannot read %s: %s", path.buf, strerror(-e));
		rc = -ENOENT;
		goto out;
	}
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

int run_resume_open(struct run_resume *rs, struct run *run, const char *dir,
		    struct strbuf *info, enum run_status *status, struct strbuf *err)
{
	if (run_dir_use(&run->dir, dir, err) < 0)
		return -1;
	const char *abs = run->dir.path.buf;
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/results.db", abs);
	if (run_resume_never_recorded(path.buf)) {
		sb_addf(err, "the run in %s was stopped before it recorded anything: nothing was "
			     "provisioned or measured; start it again with `rig run`", abs);
		sb_release(&path);
		return -1;
	}
	if (run_dir_lock(&run->dir, err) < 0) {
		sb_release(&path);
		return -1;
	}
	run->dir.store = store_open(path.buf, 0, err);
	sb_release(&path);
	if (!run->dir.store || run_resume_read_run(run->dir.store, &rs->info, err) < 0)
		return -1;
	const struct resume_info *ri = &rs->info;
	if (!strcmp(ri->status, "completed")) {
		/* A kill between the end of the run and its reports leaves some
		 * of them unwritten (each is renamed into place whole) and no
		 * "reports written" event after the end: write them, as `rig
		 * report` would. */
		struct strbuf csv = STRBUF_INIT;
		sb_addf(&csv, "%s/results.csv", abs);
		int missing = access(csv.buf, F_OK) < 0 || !reports_after_end(run->dir.store);
		sb_release(&csv);
		sb_addf(info, "the run in %s completed; there is nothing to resume", abs);
		*status = RUN_OK;
		if (missing) {
			sb_adds(info, " (its reports were missing and are written again)");
			if (rep_write(run->dir.store, abs, err) < 0)
				*status = RUN_FAILED;
		}
		return 1;
	}
	if (!ri->rig_version || strcmp(ri->rig_version, RIG_VERSION)) {
		sb_addf(err, "the run in %s was made by rig %s, this is rig %s: its schedule and "
			     "modules may differ; resume it with rig %s", abs,
			ri->rig_version ? ri->rig_version : "(unknown)", RIG_VERSION,
			ri->rig_version ? ri->rig_version : "(unknown)");
		return -1;
	}
	return check_plan_file(abs, ri, err) < 0 ? -1 : 0;
}

/* --- the plan, its paths as the run meant them --- */

/* *path made absolute against cwd (when it is relative and cwd known). */
static void resolve_path(const char *cwd, char **path)
{
	if (!cwd || !*path || (*path)[0] == '/')
		return;
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(cwd);
	sb_adds(&sb, cwd);
	if (!n || cwd[n - 1] != '/')
		sb_addch(&sb, '/');
	sb_adds(&sb, *path);
	free(*path);
	*path = sb_detach(&sb);
}

/*
 * The target's relative paths (dirs, the image) joined to cwd, the folder
 * the run was started in. A disk target's device is a device path or a
 * macOS disk identifier, never relative to a folder. -1 with err when the
 * plan has a relative path and cwd is not a folder any more.
 */
static int resolve_plan_paths(struct plan *p, const char *cwd, struct strbuf *err)
{
	struct plan_target *t = &p->target;
	int relative = t->image_path && t->image_path[0] != '/';
	for (size_t i = 0; i < t->ndirs; i++)
		relative |= t->dirs[i][0] != '/';
	if (!relative || !cwd)
		return 0;
	struct stat st;
	int e = stat(cwd, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e) {
		sb_addf(err, "cannot use %s, the folder the run was started in (the plan's "
			     "relative paths are relative to it): %s", cwd, strerror(e));
		return -1;
	}
	for (size_t i = 0; i < t->ndirs; i++)
		resolve_path(cwd, &t->dirs[i]);
	resolve_path(cwd, &t->image_path);
	return 0;
}

int run_resume_plan(struct run_resume *rs, struct run_options *o, struct strbuf *err)
{
	const struct resume_info *ri = &rs->info;
	const struct store_run_options *rec = &rs->rec;
	/* The recorded options: plan parsing, and the backend's (image size...). */
	if (store_run_options_parse(ri->options_json, &rs->rec) < 0) {
		sb_adds(err, "the store does not say which options the run had (it was recorded "
			     "by a rig without resume, results store schema 1); it cannot be resumed");
		return -1;
	}
	if (rec->seeds != SEED_LAYOUT && rec->seeds != SEED_COMMON) {
		sb_addf(err, "the run drew its workload by seed scheme %u, which this rig does not "
			     "know (a newer rig recorded it); resume it with that rig", rec->seeds);
		return -1;
	}
	rs->popt.platform = rec->platform ? rec->platform : plan_platform_host();
	rs->popt.fs_map = rec->fs_map;
	rs->popt.vars = (const char *const *)rec->vars;
	rs->popt.nvars = rec->nvars;
	o->image_size = rec->image_size;
	o->allow |= rec->allow;
	o->force |= rec->force;
	o->no_fit_check |= rec->no_fit_check;
	struct diag d;
	diag_init(&d, ri->plan_file, NULL);
	rs->plan = plan_parse_text(ri->plan_file, ri->plan_text, strlen(ri->plan_text), &rs->popt,
				   &d);
	if (d.nerrors || !rs->plan) {
		char m[512] = "";
		if (d.nerrors)
			diag_format_item(&d, 0, m, sizeof(m));
		sb_addf(err, "the recorded plan does not parse with this rig: %s", m);
		diag_release(&d);
		return -1;
	}
	diag_release(&d);
	/* Relative paths in the plan (dirs, the image) mean what they meant. */
	return resolve_plan_paths(rs->plan, rec->cwd, err);
}

/* --- where it starts --- */

int run_resume_where(struct run_resume *rs, struct run *run, const struct schedule *sched,
		     struct strbuf *err)
{
	rs->state = xcalloc(sched->n + 1, sizeof(*rs->state));
	if (run_resume_read_cells(run->dir.store, rs->plan, sched, rs->state, err) < 0) {
		struct strbuf e = STRBUF_INIT;
		sb_addf(&e, "the results store does not match the schedule of its plan and seed: %s",
			err->buf);
		sb_reset(err);
		sb_adds(err, e.buf);
		sb_release(&e);
		return -1;
	}
	run->has_row = xcalloc(sched->n + 1, 1);
	for (size_t i = 1; i <= sched->n; i++)
		run->has_row[i] = rs->state[i] != CELL_NEW;
	run_resume_point(rs->plan, sched, rs->state, &rs->rp);

	size_t li = rs->rp.unfinished < sched->n ? sched->cells[rs->rp.unfinished].layout : 0;
	rs->nvols_alloc = plan_volume_count(rs->plan, li);
	rs->nvols = run_resume_read_volumes(run->dir.store, rs->plan, li, &rs->vols, &rs->ids);
	/* Folders recorded relative to where the run was started, as the plan's. */
	for (size_t v = 0; v < rs->nvols; v++)
		resolve_path(rs->rec.cwd, &rs->vols[v].dir);
	struct run_prov *pv = &run->prov;
	pv->presume.layout = li;
	pv->presume.vols = rs->nvols ? rs->vols : NULL;
	pv->presume.nvols = rs->nvols;
	pv->presume.reuse = run_resume_may_keep(sched, &rs->rp, &pv->keep_why);
	pv->presume.why = &pv->keep_why;
	pv->pctx.resume = &pv->presume;
	return 0;
}

int run_resume_begin(struct run_resume *rs, struct run *run, const struct schedule *sched,
		     size_t *from, struct strbuf *err)
{
	const struct provision_resume *r = &run->prov.presume;
	const struct run_resume_point *rp = &rs->rp;
	int reprovision = !r->reused;
	if (r->reused) {
		run_provision_keep(&run->prov, rs->ids);
		*from = rp->unfinished;
	} else {
		*from = rp->block;
	}
	char now[40];
	timeutil_utc_iso(now, sizeof(now));
	uint32_t first = rp->unfinished < sched->n ? sched->cells[rp->unfinished].seq
						    : (uint32_t)sched->n + 1;
	uint32_t from_seq = *from < sched->n ? sched->cells[*from].seq : (uint32_t)sched->n + 1;
	struct strbuf why = STRBUF_INIT;
	if (first > sched->n)
		sb_adds(&why, "every cell was done");
	else if (r->reused)
		sb_addf(&why, "the provisioning of layout %zu was kept as recorded", r->layout + 1);
	else
		sb_addf(&why, "provisioned afresh from cell %u: %s", from_seq,
			run->prov.keep_why.len ? run->prov.keep_why.buf : "nothing to keep");
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
	int rc = store_resume_begin(run->dir.store, &sr, &serr);
	if (rc < 0) {
		sb_adds(err, serr.buf);
	} else {
		rs->resume_id = sr.id;
		run_dir_event(&run->dir, "info", "resumed: first unfinished cell %u; %s", first,
			      why.buf);
		if (!run->opt->quiet && !run->opt->json_progress)
			fprintf(stderr, "rig: resuming %s at cell %u of %zu: %s\n", run->plan->name,
				from_seq > sched->n ? (uint32_t)sched->n : from_seq, sched->n,
				why.buf);
	}
	sb_release(&serr);
	sb_release(&why);
	return rc < 0 ? -1 : 0;
}

void run_resume_end(struct run_resume *rs, struct run *run, const char *ended,
		    const char *status)
{
	if (!rs->resume_id)
		return;
	struct strbuf serr = STRBUF_INIT;
	store_resume_end(run->dir.store, rs->resume_id, ended, status, &serr);
	sb_release(&serr);
}
