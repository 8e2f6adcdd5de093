/*
 * rig plan --from RUN: per module and file system, what RUN's cells took
 * beside what the estimate says they take (plan_calibrate.h).
 */
#include "rig/run/plan_calibrate.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "lib/diag.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/schedule.h"
#include "rig/run/resume.h"
#include "store/run_options.h"
#include "store/store.h"

/* The estimate of every cell of the earlier run's schedule, by seq. */
struct per_cell {
	double *seconds;
	const char **fs;
	const char **module;
	size_t n;
};

static void note_cell(void *arg, const struct cell *c, const char *fs, double seconds)
{
	struct per_cell *pc = arg;
	if (c->seq == 0 || c->seq > pc->n)
		return;
	pc->seconds[c->seq] = seconds;
	pc->fs[c->seq] = fs;
	pc->module[c->seq] = c->step->module->name;
}

static struct plan_est_scale *scale_of(struct plan_calibration *cal, const char *module,
				       const char *fs)
{
	for (size_t i = 0; i < cal->nscale; i++) {
		struct plan_est_scale *k = &cal->scale[i];
		if (!strcmp(k->module, module) && (!k->fs) == (!fs) && (!fs || !strcmp(k->fs, fs)))
			return k;
	}
	cal->scale = xrealloc(cal->scale, (cal->nscale + 1) * sizeof(*cal->scale));
	struct plan_est_scale *k = &cal->scale[cal->nscale++];
	*k = (struct plan_est_scale){ .module = module, .fs = fs ? xstrdup(fs) : NULL };
	return k;
}

/* The run's plan, parsed as it was run (its recorded options). */
static struct plan *run_plan(const struct resume_info *ri, struct store_run_options *rec,
			     struct strbuf *err)
{
	if (!ri->plan_text) {
		sb_adds(err, "the results store holds no plan text");
		return NULL;
	}
	store_run_options_parse(ri->options_json, rec);
	struct plan_options po = { .platform = rec->platform, .fs_map = rec->fs_map,
				   .vars = (const char *const *)rec->vars, .nvars = rec->nvars };
	struct diag d;
	diag_init(&d, ri->plan_file, NULL);
	struct plan *p = plan_parse_text(ri->plan_file ? ri->plan_file : "plan.yaml", ri->plan_text,
					 strlen(ri->plan_text), &po, &d);
	if (d.nerrors || !p) {
		char m[512] = "";
		if (d.nerrors)
			diag_format_item(&d, 0, m, sizeof(m));
		sb_addf(err, "its plan does not parse with this rig: %s", m);
		plan_free(p);
		p = NULL;
	}
	diag_release(&d);
	return p;
}

/* Each finished cell's time beside its estimate, into cal's scales. */
static int read_cells(sqlite3 *db, const struct per_cell *pc, struct plan_calibration *cal,
		      struct strbuf *err)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT c.seq, c.module, (SELECT total(t.seconds) FROM time_spent t"
				   " WHERE t.seq = c.seq) FROM cells c WHERE c.status = 'done'"
				   " ORDER BY c.seq", -1, &q, NULL) != SQLITE_OK) {
		sb_addf(err, "cannot read its cells: %s", sqlite3_errmsg(db));
		return -1;
	}
	int rc = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		sqlite3_int64 seq = sqlite3_column_int64(q, 0);
		const char *module = (const char *)sqlite3_column_text(q, 1);
		if (seq <= 0 || (size_t)seq > pc->n || !pc->module[seq] || !module ||
		    strcmp(module, pc->module[seq])) {
			sb_addf(err, "its cell %lld (%s) is not its plan's: the store does not match "
				     "the plan it recorded", (long long)seq, module ? module : "?");
			rc = -1;
			break;
		}
		struct plan_est_scale *k = scale_of(cal, pc->module[seq], pc->fs[seq]);
		k->est += pc->seconds[seq];
		k->took += sqlite3_column_double(q, 2);
		k->cells++;
		cal->cells++;
	}
	sqlite3_finalize(q);
	return rc;
}

/* Provisioning and teardown per volume provisioned. */
static void read_provisioning(sqlite3 *db, struct plan_calibration *cal)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT total(seconds) FROM time_spent WHERE seq IS NULL"
				   " AND category IN ('provision', 'teardown')),"
				   " (SELECT count(*) FROM volumes)", -1, &q, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(q) == SQLITE_ROW) {
		double secs = sqlite3_column_double(q, 0);
		sqlite3_int64 n = sqlite3_column_int64(q, 1);
		if (n > 0 && secs > 0) {
			cal->volumes = (size_t)n;
			cal->provision_s = secs / (double)n;
		}
	}
	sqlite3_finalize(q);
}

static int estimate_run(struct store *st, const struct plan_est_options *base,
			struct plan_calibration *cal, struct strbuf *err)
{
	struct resume_info ri;
	if (run_resume_read_run(st, &ri, err) < 0)
		return -1;
	cal->run_id = ri.id ? xstrdup(ri.id) : NULL;
	struct store_run_options rec;
	struct plan *p = run_plan(&ri, &rec, err);
	struct schedule s = { 0 };
	int rc = -1;
	if (p && plan_schedule_build(p, ri.seed, &s) < 0)
		sb_adds(err, "its plan's schedule cannot be built");
	else if (p) {
		struct per_cell pc = { .n = s.n };
		pc.seconds = xcalloc(s.n + 1, sizeof(*pc.seconds));
		pc.fs = xcalloc(s.n + 1, sizeof(*pc.fs));
		pc.module = xcalloc(s.n + 1, sizeof(*pc.module));
		struct plan_est_options o = {
			.seed = ri.seed, .seed_known = 1, .seed_scheme = rec.seeds,
			.image_size = rec.image_size, .rate = base->rate, .ops = base->ops,
			.layout = -1, .walk = base->walk, .nwalk = base->nwalk,
			.on_cell = note_cell, .on_cell_arg = &pc,
		};
		struct plan_est e;
		struct diag d;
		diag_init(&d, p->file, p->text);
		rc = run_plan_estimate(p, &s, &o, &e, &d);
		diag_release(&d);
		run_plan_estimate_release(&e);
		if (rc < 0)
			sb_adds(err, "its plan cannot be estimated");
		else
			rc = read_cells(store_db(st), &pc, cal, err);
		if (rc == 0 && p->target.kind != TARGET_DIRS)
			read_provisioning(store_db(st), cal);
		free(pc.seconds);
		free(pc.fs);
		free(pc.module);
	}
	plan_schedule_free(&s);
	plan_free(p);
	store_run_options_release(&rec);
	run_resume_info_release(&ri);
	return rc;
}

int run_plan_calibrate(const char *dir, const struct plan_est_options *base,
		   struct plan_calibration *cal, struct strbuf *err)
{
	memset(cal, 0, sizeof(*cal));
	cal->dir = xstrdup(dir);
	struct strbuf db = STRBUF_INIT, why = STRBUF_INIT;
	sb_addf(&db, "%s/results.db", dir);
	struct store *st = store_open(db.buf, 1, &why);
	int rc = -1;
	if (!st)
		sb_addf(err, "--from %s: %s", dir, why.buf);
	else {
		rc = estimate_run(st, base, cal, &why);
		if (rc < 0)
			sb_addf(err, "--from %s: %s", dir, why.buf);
		else if (cal->cells == 0) {
			sb_addf(err, "--from %s: the run finished no cell, so it measured nothing",
				dir);
			rc = -1;
		}
		store_close(st);
	}
	sb_release(&why);
	sb_release(&db);
	return rc;
}

void run_plan_calibration_release(struct plan_calibration *cal)
{
	for (size_t i = 0; i < cal->nscale; i++)
		free((char *)cal->scale[i].fs);
	free(cal->scale);
	free(cal->dir);
	free(cal->run_id);
	memset(cal, 0, sizeof(*cal));
}

void run_plan_calibration_format(const struct plan_calibration *cal, struct strbuf *out)
{
	sb_addf(out, "from       run %s (%s), %zu finished cells: the time they took against "
		     "this estimate of them, per module and file system, corrects the cells below "
		     "of the same module and file system\n",
		cal->run_id ? cal->run_id : "?", cal->dir, cal->cells);
	for (size_t i = 0; i < cal->nscale; i++) {
		const struct plan_est_scale *k = &cal->scale[i];
		sb_addf(out, "  %-10s on %-10s %4zu cell%s took %.3g s, estimated %.3g s", k->module,
			k->fs ? k->fs : "the folder", k->cells, k->cells == 1 ? " " : "s", k->took,
			k->est);
		if (k->est > 0)
			sb_addf(out, " (x%.3g)\n", k->took / k->est);
		else
			sb_addf(out, " (+%.3g s a cell)\n", k->took / (double)k->cells);
	}
	if (cal->volumes)
		sb_addf(out, "  provisioning and teardown: %.3g s per volume (%zu volumes)\n",
			cal->provision_s, cal->volumes);
}
