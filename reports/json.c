/*
 * results.json: everything results.csv, files.csv and summary.csv hold,
 * plus the provenance (run, plan, volumes with their device facts, notes,
 * events, commands), in one document that validates against
 * docs/results.schema.json. The layout is normalized: cells carry the
 * factors once, samples name their cell by seq. The members that grow with
 * the run (cells, samples, files) are column arrays (json_table.c); the
 * rest are arrays of objects, written here.
 *
 * Written as a stream of text (not built as a json-c tree): a million
 * samples would be a million json-c objects. Strings are escaped with
 * invalid UTF-8 replaced by U+FFFD, so the document is always valid JSON;
 * numbers use the CSV's shortest round-trip form; NaN is null and an
 * infinity the string "inf" or "-inf" (JSON has neither). Device facts are
 * stored as JSON text by the provisioning backends and are re-parsed with
 * json-c before they are embedded, so a damaged facts column cannot break
 * the document.
 */
#include "reports/json.h"

#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "lib/strbuf.h"
#include "plan/plan.h"
#include "plan/plan.h"
#include "reports/findings.h"
#include "reports/json_int.h"
#include "reports/report_data.h"
#include "reports/report_out.h"
#include "reports/report_time.h"
#include "reports/summary.h"

#define JSON_FORMAT_VERSION 2

static void key(struct strbuf *b, const char *k, int *first)
{
	if (!*first)
		sb_addch(b, ',');
	*first = 0;
	sb_addch(b, '"');
	sb_adds(b, k);
	sb_adds(b, "\":");
}

static void kstr(struct strbuf *b, const char *k, const char *v, int *first)
{
	key(b, k, first);
	rep_json_str(b, v);
}

static void knum(struct strbuf *b, const char *k, double v, int *first)
{
	key(b, k, first);
	rep_json_num(b, v);
}

static void kint(struct strbuf *b, const char *k, long long v, int *first)
{
	key(b, k, first);
	sb_add_int(b, v);
}

/* {"seconds": {category: s, ...}, "wall", "measured_share", "estimate"} */
static void time_obj(struct strbuf *b, const double s[RT_NCAT], double estimate, int *f)
{
	key(b, "seconds", f);
	sb_addch(b, '{');
	for (int c = 0; c < RT_NCAT; c++) {
		int g = c == 0;
		knum(b, mod_run_time_name((enum run_time_cat)c), s[c], &g);
	}
	sb_addch(b, '}');
	knum(b, "wall", rep_rtime_wall(s), f);
	knum(b, "measured_share", rep_rtime_share(s), f);
	knum(b, "estimate", estimate, f);
}

/* Where the run's time went (report_time.h): per layout, the run around
 * them, the total; per cell it is in time.csv. */
static void time_json(struct strbuf *b, const struct rd_time *t)
{
	int f = 1;
	sb_addch(b, '{');
	key(b, "recorded", &f);
	sb_adds(b, t && t->recorded ? "true" : "false");
	knum(b, "assumed_rate", t ? t->assumed_rate : NAN, &f);
	double none[RT_NCAT] = { 0 }, around[RT_NCAT] = { 0 };
	for (size_t i = 0; t && i < t->nscopes; i++)
		if (t->scopes[i].layout_index < 0)
			for (int c = 0; c < RT_NCAT; c++)
				around[c] += t->scopes[i].s[c];
	key(b, "total", &f);
	int g = 1;
	sb_addch(b, '{');
	time_obj(b, t ? t->total : none, t ? t->estimate : NAN, &g);
	sb_addch(b, '}');
	key(b, "outside_layouts", &f);
	g = 1;
	sb_addch(b, '{');
	time_obj(b, around, NAN, &g);
	sb_addch(b, '}');
	key(b, "layouts", &f);
	sb_addch(b, '[');
	for (size_t i = 0; t && i < t->nlayouts; i++) {
		const struct rt_layout *l = &t->layouts[i];
		g = 1;
		sb_adds(b, i ? ",{" : "{");
		kstr(b, "layout", l->layout, &g);
		kint(b, "layout_index", l->layout_index, &g);
		time_obj(b, l->s, l->estimate, &g);
		kint(b, "not_estimated", (long long)l->not_estimated, &g);
		sb_addch(b, '}');
	}
	sb_adds(b, "]}");
}

static void run_obj(struct strbuf *b, const struct rdata *d)
{
	const struct rd_run *r = &d->run;
	int f = 1;
	sb_addch(b, '{');
	kstr(b, "id", r->id, &f);
	kstr(b, "plan_name", r->plan_name, &f);
	kstr(b, "plan_file", r->plan_file, &f);
	kstr(b, "plan_sha256", r->plan_sha256, &f);
	kstr(b, "plan_text", r->plan_text, &f);
	kstr(b, "seed", r->seed, &f);
	key(b, "seed_drawn", &f);
	sb_adds(b, r->seed_drawn ? "true" : "false");
	key(b, "seed_scheme", &f);
	sb_addf(b, "%u", r->seed_scheme);
	kstr(b, "rig_version", r->rig_version, &f);
	kstr(b, "host", r->host, &f);
	kstr(b, "os", r->os, &f);
	kstr(b, "platform", r->platform, &f);
	kstr(b, "argv", r->argv, &f);
	kstr(b, "started_utc", r->started_utc, &f);
	kstr(b, "ended_utc", r->ended_utc, &f);
	kstr(b, "status", r->status, &f);
	kstr(b, "error", r->error, &f);
	key(b, "resumes", &f);
	sb_addch(b, '[');
	for (size_t i = 0; i < d->nresumes; i++) {
		const struct rd_resume *x = &d->resumes[i];
		int g = 1;
		sb_adds(b, i ? ",{" : "{");
		kstr(b, "started_utc", x->started_utc, &g);
		kstr(b, "ended_utc", x->ended_utc, &g);
		kstr(b, "status", x->status, &g);
		kint(b, "first_unfinished", x->first_unfinished, &g);
		kint(b, "from_seq", x->from_seq, &g);
		key(b, "reprovisioned", &g);
		sb_adds(b, x->reprovisioned ? "true" : "false");
		kstr(b, "why", x->why, &g);
		sb_addch(b, '}');
	}
	sb_addch(b, ']');
	kint(b, "superseded_samples", (long long)d->superseded, &f);
	key(b, "time", &f);
	time_json(b, d->time);
	sb_addch(b, '}');
}

static void report_obj(struct strbuf *b, const struct rdata *d)
{
	int f = 1;
	sb_addch(b, '{');
	kstr(b, "title", d->title, &f);
	kstr(b, "description", d->description, &f);
	kstr(b, "baseline", d->baseline, &f);
	key(b, "baseline_kind", &f);
	sb_adds(b, d->base_kind == RD_BASE_VOLUME ? "\"volume\"" : d->base_kind == RD_BASE_LAYOUT ? "\"layout\"" : "null");
	key(b, "by", &f);
	sb_addch(b, '[');
	for (size_t i = 0; i < d->nby; i++) {
		if (i)
			sb_addch(b, ',');
		rep_json_str(b, d->by[i]);
	}
	sb_adds(b, "],\"formats\":[");
	const char *names[] = { "html", "csv", "json" };
	int first = 1;
	for (int i = 0; i < 3; i++)
		if (d->formats & (1u << i)) {
			if (!first)
				sb_addch(b, ',');
			first = 0;
			rep_json_str(b, names[i]);
		}
	sb_addch(b, ']');
	kstr(b, "plan_problem", d->plan_problem, &f);
	kstr(b, "fs_map", d->fs_map, &f);
	kstr(b, "provision", !d->plan || d->plan->target.kind == TARGET_DIRS ? NULL
			     : d->plan->reprovision == REPROVISION_REPEAT ? "each" : "once", &f);
	sb_addch(b, '}');
}

static void facts(struct strbuf *b, const char *text)
{
	json_object *o = text ? json_tokener_parse(text) : NULL;
	if (o && json_object_is_type(o, json_type_object)) {
		const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
		sb_adds(b, s);
	} else {
		sb_adds(b, "null");
	}
	json_object_put(o);
}

static void volumes(struct strbuf *b, const struct rdata *d)
{
	sb_adds(b, ",\n\"volumes\":[");
	for (size_t i = 0; i < d->nvols; i++) {
		const struct rd_volume *v = &d->vols[i];
		int f = 1;
		sb_adds(b, i ? ",\n{" : "\n{");
		kint(b, "id", v->id, &f);
		kstr(b, "layout", v->layout, &f);
		kint(b, "layout_index", v->layout_index, &f);
		kstr(b, "name", v->name, &f);
		kstr(b, "fs", v->fs, &f);
		kint(b, "position", v->position, &f);
		key(b, "offset_start", &f);
		if (v->has_offsets)
			sb_addf(b, "%lld", (long long)v->off_start);
		else
			sb_adds(b, "null");
		key(b, "offset_end", &f);
		if (v->has_offsets)
			sb_addf(b, "%lld", (long long)v->off_end);
		else
			sb_adds(b, "null");
		kstr(b, "device", v->device, &f);
		kstr(b, "dir", v->dir, &f);
		key(b, "facts", &f);
		facts(b, v->facts_json);
		sb_addch(b, '}');
	}
	sb_adds(b, "]");
}

/* Row i of table t as an object: a key per column, missing values null. */
static void row_object(struct strbuf *b, const struct rep_table *t, const struct rdata *d,
		       size_t i)
{
	struct rep_val v[REP_MAX_COLS] = { 0 };
	t->row(d, i, v);
	int first = 1;
	sb_addch(b, '{');
	for (size_t j = 0; j < t->ncols; j++) {
		if (t->cols[j].only && !(t->cols[j].only & REP_JSON))
			continue;
		key(b, t->cols[j].name, &first);
		if (v[j].null)
			sb_adds(b, "null");
		else if (t->cols[j].kind == REP_TEXT)
			rep_json_str(b, v[j].text);
		else if (t->cols[j].kind == REP_REAL)
			rep_json_num(b, v[j].real);
		else if (t->cols[j].kind == REP_BOOL)
			sb_adds(b, v[j].count ? "true" : "false");
		else
			sb_add_int(b, v[j].count);
	}
	sb_addch(b, '}');
}

static void findings(struct strbuf *b, const struct rdata *d)
{
	sb_adds(b, ",\n\"findings\":[");
	for (size_t i = 0; i < d->nfindings; i++) {
		sb_adds(b, i ? ",\n" : "\n");
		row_object(b, &rep_findings_table, d, i);
	}
	sb_adds(b, "]");
}

static void summary(struct rout *o, const struct rdata *d)
{
	struct strbuf *b = &o->buf;
	sb_adds(b, ",\n\"summary\":[");
	for (size_t i = 0; i < d->ngroups; i++) {
		sb_adds(b, i ? ",\n" : "\n");
		row_object(b, &rep_summary_table, d, i);
		rep_rout_flush_some(o);
	}
	sb_adds(b, "]");
	findings(b, d);
	sb_adds(b, ",\n\"filesets\":[");
	for (size_t i = 0; i < d->nfilesets; i++) {
		const struct rd_fileset *fs = &d->filesets[i];
		int f = 1;
		sb_adds(b, i ? ",\n{" : "\n{");
		kstr(b, "layout", fs->layout, &f);
		kstr(b, "step", fs->step, &f);
		kstr(b, "volume", fs->volume, &f);
		kint(b, "files", (long long)fs->n, &f);
		/* Why rate_fit and overhead_fit are null: "ok" when they are not. */
		static const char *const fit_names[] = { "ok", "too_few_files", "one_size",
							 "time_does_not_grow" };
		kstr(b, "fit", fit_names[fs->fit], &f);
		knum(b, "rate_fit", fs->rate_mbs, &f);
		knum(b, "overhead_fit", fs->overhead_s, &f);
		knum(b, "overhead_fit_low", fs->overhead_lo, &f);
		knum(b, "overhead_fit_high", fs->overhead_hi, &f);
		knum(b, "r2", fs->r2, &f);
		sb_addch(b, '}');
	}
	sb_adds(b, "]");
}

static void misc(struct strbuf *b, const struct rdata *d)
{
	sb_adds(b, ",\n\"notes\":[");
	for (size_t i = 0; i < d->nnotes; i++) {
		const struct rd_note *n = &d->notes[i];
		int f = 1;
		sb_adds(b, i ? ",\n{" : "\n{");
		key(b, "seq", &f);
		if (n->seq)
			sb_addf(b, "%u", n->seq);
		else
			sb_adds(b, "null");
		kstr(b, "key", n->key, &f);
		kstr(b, "value", n->value, &f);
		sb_addch(b, '}');
	}
	sb_adds(b, "],\n\"events\":[");
	for (size_t i = 0; i < d->nevents; i++) {
		int f = 1;
		sb_adds(b, i ? ",\n{" : "\n{");
		kstr(b, "utc", d->events[i].utc, &f);
		kstr(b, "level", d->events[i].level, &f);
		kstr(b, "msg", d->events[i].msg, &f);
		sb_addch(b, '}');
	}
	sb_adds(b, "],\n\"commands\":[");
	for (size_t i = 0; i < d->ncmds; i++) {
		const struct rd_command *c = &d->cmds[i];
		int f = 1;
		sb_adds(b, i ? ",\n{" : "\n{");
		kstr(b, "start_utc", c->start_utc, &f);
		kstr(b, "argv", c->argv, &f);
		kint(b, "status", c->status, &f);
		knum(b, "seconds", c->seconds, &f);
		kstr(b, "output", c->output, &f);
		sb_addch(b, '}');
	}
	sb_adds(b, "]");
}

int rep_json_write_results(const struct rdata *d, const char *path, struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	struct strbuf *b = &o.buf;
	sb_addf(b, "{\"format\":\"rig-results\",\"format_version\":%d,\n\"run\":", JSON_FORMAT_VERSION);
	run_obj(b, d);
	sb_adds(b, ",\n\"report\":");
	report_obj(b, d);
	volumes(b, d);
	misc(b, d);
	rep_rout_flush_some(&o);
	rep_json_cells(&o, d);
	rep_json_samples(&o, d);
	rep_json_files(&o, d);
	summary(&o, d);
	sb_adds(b, "\n}\n");
	return rep_rout_commit(&o, err);
}
