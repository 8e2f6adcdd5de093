/*
 * Resuming a run: where it starts again, and what the store recorded. See
 * resume.h for the rule; the runner (run_continue) does the rest.
 */
#include "rig/run/resume.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/provision.h"
#include "store/store.h"

static size_t module_index(const struct rig_module *m)
{
	for (size_t i = 0; mod_all[i]; i++)
		if (mod_all[i] == m)
			return i;
	return 0;
}

size_t run_resume_state_slot(const struct rig_module *m)
{
	return module_index(m->needs ? m->needs : m);
}

/* Whether a cell starts a fresh provisioning. */
static int fresh(const struct plan *p, const struct cell *c)
{
	return c->first_of_layout || (c->first_of_rep && p->reprovision == REPROVISION_REPEAT);
}

void run_resume_point(const struct plan *p, const struct schedule *s, const enum cell_state *state,
		  struct run_resume_point *rp)
{
	memset(rp, 0, sizeof(*rp));
	size_t r = 0;
	while (r < s->n && state[s->cells[r].seq] == CELL_DONE)
		r++;
	rp->unfinished = r;
	if (r == s->n) {
		rp->block = rp->end = s->n;
		return;
	}
	rp->started = state[s->cells[r].seq] != CELL_NEW;
	size_t b = r;
	while (b > 0 && !fresh(p, &s->cells[b]))
		b--;
	size_t e = r + 1;
	while (e < s->n && !fresh(p, &s->cells[e]))
		e++;
	rp->block = b;
	rp->end = e;
	/* A later cell of the block using a slot an earlier, finished one filled. */
	for (size_t j = r; j < e && !rp->depends; j++) {
		const struct cell *cj = &s->cells[j];
		size_t slot = run_resume_state_slot(cj->step->module);
		if (!mod_all[slot]->release_state)
			continue; /* a module that keeps no state */
		for (size_t i = b; i < r; i++) {
			const struct cell *ci = &s->cells[i];
			if (ci->volume == cj->volume && run_resume_state_slot(ci->step->module) == slot) {
				rp->depends = 1;
				rp->producer = i;
				rp->consumer = j;
				break;
			}
		}
	}
}

int run_resume_may_keep(const struct schedule *s, const struct run_resume_point *rp, struct strbuf *why)
{
	if (rp->unfinished >= s->n)
		return 0;
	const struct cell *u = &s->cells[rp->unfinished];
	if (rp->unfinished == rp->block)
		sb_addf(why, "cell %u is the first of its provisioning", u->seq);
	else if (rp->started && !(u->step->module->flags & MOD_DISKLESS))
		sb_addf(why, "cell %u (step %s, %s) was cut off and may have left files behind",
			u->seq, u->path, u->step->module->name);
	else if (rp->depends)
		sb_addf(why, "cell %u (%s) needs what cell %u (%s) left on the same volume, "
			     "which was in the memory of the interrupted process",
			s->cells[rp->consumer].seq, s->cells[rp->consumer].step->module->name,
			s->cells[rp->producer].seq, s->cells[rp->producer].step->module->name);
	else
		return 1;
	return 0;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

static int read_fail(struct store *st, struct strbuf *err, const char *what)
{
	sb_addf(err, "cannot read %s from the results store: %s", what,
		sqlite3_errmsg(store_db(st)));
	return -EIO;
}

int run_resume_never_recorded(const char *db_path)
{
	struct stat stt;
	if (stat(db_path, &stt) < 0)
		return errno == ENOENT;
	if (stt.st_size == 0)
		return 1;
	sqlite3 *db = NULL;
	int never = 0;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		/* No table (killed while creating the store), or a store whose run
		 * row was never written. */
		static const char *const sql[] = {
			"SELECT count(*) = 0 FROM sqlite_master",
			"SELECT NOT EXISTS (SELECT 1 FROM run)",
		};
		for (size_t i = 0; i < 2 && !never; i++) {
			sqlite3_stmt *q = NULL;
			if (sqlite3_prepare_v2(db, sql[i], -1, &q, NULL) == SQLITE_OK &&
			    sqlite3_step(q) == SQLITE_ROW)
				never = sqlite3_column_int(q, 0);
			sqlite3_finalize(q);
		}
	}
	sqlite3_close(db);
	return never;
}

int run_resume_read_run(struct store *st, struct resume_info *ri, struct strbuf *err)
{
	memset(ri, 0, sizeof(*ri));
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT id, status, plan_file, plan_text, plan_sha256,"
				   " rig_version, options_json, seed, seed_drawn,"
				   " (SELECT count(*) FROM resumes) FROM run", -1, &q, NULL) != SQLITE_OK)
		return read_fail(st, err, "the run");
	if (sqlite3_step(q) != SQLITE_ROW) {
		sqlite3_finalize(q);
		sb_adds(err, "the results store holds no run");
		return -ENOENT;
	}
	ri->id = col_dup(q, 0);
	ri->status = col_dup(q, 1);
	ri->plan_file = col_dup(q, 2);
	ri->plan_text = col_dup(q, 3);
	ri->plan_sha256 = col_dup(q, 4);
	ri->rig_version = col_dup(q, 5);
	ri->options_json = col_dup(q, 6);
	const unsigned char *seed = sqlite3_column_text(q, 7);
	ri->seed = seed ? strtoull((const char *)seed, NULL, 10) : 0;
	ri->seed_drawn = sqlite3_column_int(q, 8);
	ri->nresumes = (size_t)sqlite3_column_int64(q, 9);
	sqlite3_finalize(q);
	return 0;
}

void run_resume_info_release(struct resume_info *ri)
{
	free(ri->id);
	free(ri->status);
	free(ri->plan_file);
	free(ri->plan_text);
	free(ri->plan_sha256);
	free(ri->rig_version);
	free(ri->options_json);
	memset(ri, 0, sizeof(*ri));
}

static int same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

int run_resume_read_cells(struct store *st, const struct plan *p, const struct schedule *s,
		      enum cell_state *state, struct strbuf *err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT c.seq, c.phase, c.layout, c.rep, c.step, c.module,"
				   " v.position, c.status FROM cells c JOIN volumes v"
				   " ON v.id = c.volume_id ORDER BY c.seq", -1, &q, NULL) != SQLITE_OK)
		return read_fail(st, err, "the cells");
	int rc = 0, step;
	while (rc == 0 && (step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(q, 0);
		if (seq < 1 || (uint64_t)seq > s->n) {
			sb_addf(err, "the store has cell %" PRId64 ", the schedule %zu cells", seq,
				s->n);
			rc = -EINVAL;
			break;
		}
		const struct cell *c = &s->cells[seq - 1];
		const char *layout = (const char *)sqlite3_column_text(q, 2);
		const char *path = (const char *)sqlite3_column_text(q, 4);
		const char *module = (const char *)sqlite3_column_text(q, 5);
		if (c->seq != (uint32_t)seq || sqlite3_column_int64(q, 1) != c->phase ||
		    !same(layout, plan_layout_name(p, c->layout)) ||
		    sqlite3_column_int64(q, 3) != c->rep || !same(path, c->path) ||
		    !same(module, c->step->module->name) ||
		    sqlite3_column_int64(q, 6) != (int64_t)c->volume + 1) {
			sb_addf(err, "cell %" PRId64 " in the store (step %s, %s, repetition %lld) is "
				     "not cell %u of the schedule (step %s, %s, repetition %u)",
				seq, path ? path : "?", module ? module : "?",
				(long long)sqlite3_column_int64(q, 3), c->seq, c->path,
				c->step->module->name, c->rep);
			rc = -EINVAL;
			break;
		}
		const char *status = (const char *)sqlite3_column_text(q, 7);
		state[seq] = same(status, "done") ? CELL_DONE : CELL_STARTED;
	}
	sqlite3_finalize(q);
	if (rc == 0 && step != SQLITE_DONE)
		return read_fail(st, err, "the cells");
	return rc;
}

size_t run_resume_read_volumes(struct store *st, const struct plan *p, size_t li,
			   struct volume **vols, int64_t **ids)
{
	size_t n = plan_volume_count(p, li);
	*vols = xcalloc(n ? n : 1, sizeof(**vols));
	*ids = xcalloc(n ? n : 1, sizeof(**ids));
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q = NULL;
	size_t found = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, name, fs, position, offset_start, offset_end,"
				   " device, dir, facts_json FROM volumes WHERE layout_index = ?1"
				   " ORDER BY id DESC", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(q, 1, (int64_t)li);
		/* The newest row of each position: the last provisioning recorded. */
		while (found < n && sqlite3_step(q) == SQLITE_ROW) {
			int64_t pos = sqlite3_column_int64(q, 3);
			if (pos < 1 || (uint64_t)pos > n || (*vols)[pos - 1].name)
				continue;
			struct volume *v = &(*vols)[pos - 1];
			(*ids)[pos - 1] = sqlite3_column_int64(q, 0);
			v->name = col_dup(q, 1);
			v->fs = col_dup(q, 2);
			v->position = (uint32_t)pos;
			v->has_offsets = sqlite3_column_type(q, 4) != SQLITE_NULL;
			v->offset_start = (uint64_t)sqlite3_column_int64(q, 4);
			v->offset_end = (uint64_t)sqlite3_column_int64(q, 5);
			v->device = col_dup(q, 6);
			v->dir = col_dup(q, 7);
			v->facts_json = col_dup(q, 8);
			found++;
		}
	}
	sqlite3_finalize(q);
	for (size_t i = 0; i < n && found == n; i++)
		if (!(*vols)[i].name || strcmp((*vols)[i].name, plan_volume_name(p, li, i)))
			found = 0; /* not this plan's volumes */
	return found == n ? n : 0;
}
