/* The time accounting for the reports; see report_time.h. */
#include "reports/report_time.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/csv.h"
#include "reports/report_data.h"
#include "reports/report_out.h"

static int read_fail(sqlite3 *db, sqlite3_stmt *st, struct strbuf *err)
{
	sb_addf(err, "cannot read the time accounting of the results store: %s",
		sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return -EIO;
}

static struct rt_layout *layout_of(struct rd_time *t, long li, const char *name, size_t *alloc)
{
	for (size_t i = 0; i < t->nlayouts; i++)
		if (t->layouts[i].layout_index == li)
			return &t->layouts[i];
	XGROW(t->layouts, t->nlayouts + 1, *alloc);
	size_t k = t->nlayouts++;
	while (k && t->layouts[k - 1].layout_index > li) { /* kept by index */
		t->layouts[k] = t->layouts[k - 1];
		k--;
	}
	struct rt_layout *l = &t->layouts[k];
	memset(l, 0, sizeof(*l));
	l->layout_index = li;
	l->layout = name;
	l->estimate = NAN;
	return l;
}

int rep_rtime_load(struct rdata *d, sqlite3 *db, struct strbuf *err)
{
	struct rd_time *t = xcalloc(1, sizeof(*t));
	d->time = t;
	t->estimate = NAN;
	t->assumed_rate = NAN;
	sqlite3_stmt *st = NULL;
	/* Every scope's categories summed (a layout's time between cells is
	 * recorded once per gap), in the order of the scopes. */
	if (sqlite3_prepare_v2(db, "SELECT coalesce(resume_id, 0) AS r, coalesce(layout_index, -1)"
			       " AS li, max(coalesce(layout, '')), coalesce(seq, 0) AS s, category,"
			       " sum(seconds) FROM time_spent GROUP BY r, li, s, category"
			       " ORDER BY r, li, s", -1, &st, NULL) != SQLITE_OK)
		return read_fail(db, st, err);
	size_t alloc = 0, lalloc = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t r = sqlite3_column_int64(st, 0);
		long li = (long)sqlite3_column_int64(st, 1);
		uint32_t seq = (uint32_t)sqlite3_column_int64(st, 3);
		int c = mod_run_time_from_name((const char *)sqlite3_column_text(st, 4));
		double sec = sqlite3_column_double(st, 5);
		if (c < 0)
			continue; /* a category of a later rig: not summed into ours */
		struct rt_scope *sc = t->nscopes ? &t->scopes[t->nscopes - 1] : NULL;
		if (!sc || sc->resume != r || sc->layout_index != li || sc->seq != seq) {
			XGROW(t->scopes, t->nscopes + 1, alloc);
			sc = &t->scopes[t->nscopes++];
			memset(sc, 0, sizeof(*sc));
			sc->resume = r;
			sc->layout_index = li;
			sc->layout = rep_rd_intern(d, li >= 0 ? (const char *)sqlite3_column_text(st, 2) : "");
			sc->seq = seq;
		}
		sc->s[c] += sec;
		t->total[c] += sec;
		if (li >= 0)
			layout_of(t, li, sc->layout, &lalloc)->s[c] += sec;
		t->recorded = 1;
	}
	if (rc != SQLITE_DONE)
		return read_fail(db, st, err);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT layout_index, layout, seconds, not_estimated,"
			       " assumed_rate FROM estimates ORDER BY layout_index", -1, &st,
			       NULL) != SQLITE_OK)
		return read_fail(db, st, err);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		struct rt_layout *l = layout_of(t, (long)sqlite3_column_int64(st, 0),
						rep_rd_intern(d, name ? name : ""), &lalloc);
		l->estimate = sqlite3_column_double(st, 2);
		l->not_estimated = (size_t)sqlite3_column_int64(st, 3);
		t->estimate = (isnan(t->estimate) ? 0 : t->estimate) + l->estimate;
		if (sqlite3_column_type(st, 4) != SQLITE_NULL)
			t->assumed_rate = sqlite3_column_double(st, 4);
	}
	if (rc != SQLITE_DONE)
		return read_fail(db, st, err);
	sqlite3_finalize(st);
	return 0;
}

void rep_rtime_free(struct rd_time *t)
{
	if (!t)
		return;
	free(t->scopes);
	free(t->layouts);
	free(t);
}

double rep_rtime_wall(const double s[RT_NCAT])
{
	double w = 0;
	for (int c = 0; c < RT_NCAT; c++)
		w += s[c];
	return w;
}

double rep_rtime_share(const double s[RT_NCAT])
{
	double w = rep_rtime_wall(s) - s[RT_REPORT];
	return w > 0 ? s[RT_MEASURED] / w : NAN;
}

/* Seconds to the nanosecond the clock gave: sums of doubles print as
 * 0.011388124, not 0.011388124000000003. */
static double ns_round(double v)
{
	return round(v * 1e9) / 1e9;
}

/* The categories, wall, measured_share and estimate of one row. */
static void row_tail(struct strbuf *b, const double s[RT_NCAT], double estimate)
{
	for (int c = 0; c < RT_NCAT; c++)
		rep_csv_add_next_double(b, ns_round(s[c]));
	rep_csv_add_next_double(b, ns_round(rep_rtime_wall(s)));
	rep_csv_add_next_double(b, rep_rtime_share(s));
	rep_csv_add_next_double(b, ns_round(estimate));
	sb_addch(b, '\n');
}

int rep_rtime_write_csv(const struct rdata *d, const char *path, struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	struct strbuf *b = &o.buf;
	const struct rd_time *t = d->time;
	sb_adds(b, "run,scope,resume,layout,seq,step,module,volume");
	for (int c = 0; c < RT_NCAT; c++)
		sb_addf(b, ",%s", mod_run_time_name((enum run_time_cat)c));
	sb_adds(b, ",wall,measured_share,estimate\n");
	for (size_t i = 0; t && i < t->nscopes; i++) {
		const struct rt_scope *sc = &t->scopes[i];
		const struct rd_cell *c = sc->seq ? rep_rd_cell_of(d, sc->seq) : NULL;
		sb_add_csv(b, d->run.id);
		sb_adds(b, sc->seq ? ",cell," : sc->layout_index >= 0 ? ",layout," : ",run,");
		if (sc->resume)
			sb_add_int(b, sc->resume);
		sb_addch(b, ',');
		sb_add_csv(b, sc->layout);
		sb_addch(b, ',');
		if (sc->seq)
			sb_add_int(b, sc->seq);
		sb_addch(b, ',');
		if (c) {
			sb_add_csv(b, c->step);
			sb_addch(b, ',');
			sb_add_csv(b, c->module);
			sb_addch(b, ',');
			sb_add_csv(b, d->vols[c->vol].name);
		} else {
			sb_adds(b, ",,");
		}
		row_tail(b, sc->s, NAN);
		rep_rout_flush_some(&o);
	}
	for (size_t i = 0; t && i < t->nlayouts; i++) {
		const struct rt_layout *l = &t->layouts[i];
		sb_add_csv(b, d->run.id);
		sb_adds(b, ",layout_total,,");
		sb_add_csv(b, l->layout);
		sb_adds(b, ",,,,");
		row_tail(b, l->s, l->estimate);
	}
	if (t && t->recorded) {
		sb_add_csv(b, d->run.id);
		sb_adds(b, ",total,,,,,,");
		row_tail(b, t->total, t->estimate);
	}
	return rep_rout_commit(&o, err);
}
