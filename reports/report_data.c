/*
 * Reading a run from its results store into memory (see report_data.h).
 *
 * One query per table, rows copied into arrays. Strings that repeat go
 * through an intern table (open addressing, FNV-1a), the rest into an
 * arena of large chunks, so a store with a million samples loads with a
 * few thousand allocations. The plan's report section comes from the plan
 * text stored in the run row, parsed again with the plan parser; a plan
 * that no longer parses (a newer plan language, say) still gets a report,
 * with defaults and a note saying why.
 *
 * Rejected: reading through the CSV files (they are outputs, and lose the
 * cell status, notes and commands), and one join over everything (the
 * volume and cell columns would be repeated per sample).
 */
#include "reports/report_data.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "lib/diag.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/schedule.h"
#include "reports/report_time.h"
#include "store/run_options.h"
#include "store/store.h"

/* --- storage --- */

struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

static char *arena_alloc(struct rdata *d, size_t n)
{
	struct chunk *c = d->arena;
	if (!c || c->size - c->used < n) {
		size_t size = n > (1u << 20) ? n : (1u << 20);
		struct chunk *nc = xmalloc(sizeof(*nc) + size);
		nc->next = c;
		nc->used = 0;
		nc->size = size;
		d->arena = c = nc;
	}
	char *p = c->data + c->used;
	c->used += n;
	return p;
}

const char *rep_rd_strdup(struct rdata *d, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(d, n);
	memcpy(p, s, n);
	return p;
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void rehash(struct rdata *d)
{
	uint32_t n = d->nslots ? d->nslots * 2 : 256;
	uint32_t *slots = xmalloc(n * sizeof(*slots));
	memset(slots, 0xff, n * sizeof(*slots));
	for (uint32_t i = 0; i < d->nstrs; i++) {
		uint32_t h = hash_str(d->strs[i]) & (n - 1);
		while (slots[h] != UINT32_MAX)
			h = (h + 1) & (n - 1);
		slots[h] = i;
	}
	free(d->slots);
	d->slots = slots;
	d->nslots = n;
}

uint32_t rep_rd_intern_id(struct rdata *d, const char *s)
{
	if (!s)
		s = "";
	if ((d->nstrs + 1) * 2 > d->nslots)
		rehash(d);
	uint32_t h = hash_str(s) & (d->nslots - 1);
	while (d->slots[h] != UINT32_MAX) {
		if (!strcmp(d->strs[d->slots[h]], s))
			return d->slots[h];
		h = (h + 1) & (d->nslots - 1);
	}
	if (d->nstrs == d->astrs) {
		d->astrs = d->astrs ? d->astrs * 2 : 64;
		d->strs = xrealloc(d->strs, d->astrs * sizeof(*d->strs));
	}
	d->strs[d->nstrs] = rep_rd_strdup(d, s);
	d->slots[h] = d->nstrs;
	return d->nstrs++;
}

uint32_t rep_rd_find(const struct rdata *d, const char *s)
{
	if (!s || !d->nslots)
		return UINT32_MAX;
	uint32_t h = hash_str(s) & (d->nslots - 1);
	while (d->slots[h] != UINT32_MAX) {
		if (!strcmp(d->strs[d->slots[h]], s))
			return d->slots[h];
		h = (h + 1) & (d->nslots - 1);
	}
	return UINT32_MAX;
}

const char *rep_rd_intern(struct rdata *d, const char *s)
{
	return s ? rd_str(d, rep_rd_intern_id(d, s)) : NULL;
}

/* --- helpers --- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0. */
size_t rep_rd_utf8_len(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!n || n > avail || (n == 2 && c < 0xc2))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && c == 0xe0 && s[1] < 0xa0)
		return 0;
	if (n == 3 && c == 0xed && s[1] >= 0xa0)
		return 0; /* surrogates */
	if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || c > 0xf4 || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}


static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, struct strbuf *err)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	sb_addf(err, "cannot read the results store: %s", sqlite3_errmsg(db));
	return -EIO;
}

static int step_done(sqlite3 *db, int rc, struct strbuf *err)
{
	if (rc == SQLITE_DONE)
		return 0;
	sb_addf(err, "cannot read the results store: %s", sqlite3_errmsg(db));
	return -EIO;
}

int rep_rd_step_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			char *ea, *eb;
			unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
			if (x != y)
				return x < y ? -1 : 1;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

char *rep_rd_fact(const struct rd_volume *v, const char *key)
{
	if (!v->facts_json)
		return NULL;
	json_object *o = json_tokener_parse(v->facts_json), *val;
	char *out = NULL;
	if (o && json_object_object_get_ex(o, key, &val) && val)
		out = xstrdup(json_object_get_string(val));
	json_object_put(o);
	return out;
}

/* --- the tables --- */

static int load_run(struct rdata *d, sqlite3 *db, struct strbuf *err)
{
	sqlite3_stmt *st;
	int rc = prepare(db, "SELECT id, plan_name, plan_file, plan_text, plan_sha256, seed, seed_drawn,"
			     " rig_version, host, os, platform, argv, started_utc, ended_utc, status,"
			     " error, options_json FROM run", &st, err);
	if (rc < 0)
		return rc;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sb_adds(err, "the results store holds no run");
		sqlite3_finalize(st);
		return -ENOENT;
	}
	struct rd_run *r = &d->run;
	r->id = rep_rd_strdup(d, col_text(st, 0));
	r->plan_name = rep_rd_strdup(d, col_text(st, 1));
	r->plan_file = rep_rd_strdup(d, col_text(st, 2));
	r->plan_text = rep_rd_strdup(d, col_text(st, 3));
	r->plan_sha256 = rep_rd_strdup(d, col_text(st, 4));
	r->seed = rep_rd_strdup(d, col_text(st, 5));
	r->seed_drawn = sqlite3_column_int(st, 6);
	r->rig_version = rep_rd_strdup(d, col_text(st, 7));
	r->host = rep_rd_strdup(d, col_text(st, 8));
	r->os = rep_rd_strdup(d, col_text(st, 9));
	r->platform = rep_rd_strdup(d, col_text(st, 10));
	r->argv = rep_rd_strdup(d, col_text(st, 11));
	r->started_utc = rep_rd_strdup(d, col_text(st, 12));
	r->ended_utc = rep_rd_strdup(d, col_text(st, 13));
	r->status = rep_rd_strdup(d, col_text(st, 14));
	r->error = rep_rd_strdup(d, col_text(st, 15));
	r->options_json = rep_rd_strdup(d, col_text(st, 16));
	struct store_run_options ro;
	store_run_options_parse(r->options_json, &ro);
	r->seed_scheme = ro.seeds ? ro.seeds : SEED_LAYOUT;
	store_run_options_release(&ro);
	if (!r->id)
		r->id = "";
	if (!r->plan_name)
		r->plan_name = "";
	if (!r->status)
		r->status = "running";
	sqlite3_finalize(st);
	return 0;
}

static int load_volumes(struct rdata *d, sqlite3 *db, struct strbuf *err)
{
	sqlite3_stmt *st;
	int rc = prepare(db, "SELECT id, layout, layout_index, name, fs, position, offset_start,"
			     " offset_end, device, dir, facts_json FROM volumes ORDER BY id", &st, err);
	if (rc < 0)
		return rc;
	size_t alloc = 0;
	const char *layouts[256];
	size_t nl = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		XGROW(d->vols, d->nvols + 1, alloc);
		struct rd_volume *v = &d->vols[d->nvols++];
		v->id = sqlite3_column_int64(st, 0);
		v->layout = rep_rd_intern(d, col_text(st, 1) ? col_text(st, 1) : "");
		v->layout_index = sqlite3_column_int(st, 2);
		v->name = rep_rd_intern(d, col_text(st, 3) ? col_text(st, 3) : "");
		v->fs = rep_rd_intern(d, col_text(st, 4));
		v->position = sqlite3_column_int(st, 5);
		v->has_offsets = sqlite3_column_type(st, 6) != SQLITE_NULL &&
				 sqlite3_column_type(st, 7) != SQLITE_NULL;
		v->off_start = sqlite3_column_int64(st, 6);
		v->off_end = sqlite3_column_int64(st, 7);
		v->device = rep_rd_strdup(d, col_text(st, 8));
		v->dir = rep_rd_strdup(d, col_text(st, 9));
		v->facts_json = rep_rd_strdup(d, col_text(st, 10));
		size_t k = 0;
		while (k < nl && layouts[k] != v->layout)
			k++;
		if (k == nl && nl < 256)
			layouts[nl++] = v->layout;
	}
	d->nlayouts = nl;
	sqlite3_finalize(st);
	return step_done(db, rc, err);
}

const struct rd_cell *rep_rd_cell_of(const struct rdata *d, uint32_t seq)
{
	size_t lo = 0, hi = d->ncells;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->cells[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->ncells && d->cells[lo].seq == seq ? &d->cells[lo] : NULL;
}

static uint32_t vol_index(const struct rdata *d, int64_t id)
{
	size_t lo = 0, hi = d->nvols;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->vols[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nvols && d->vols[lo].id == id ? (uint32_t)lo : UINT32_MAX;
}

/* Intern t, trying the previous row's text of the column first: cells
 * repeat their layout, step, module and status row after row, and a
 * comparison is cheaper than the hash. t NULL: dflt (itself NULL or a
 * literal). */
static const char *intern_col(struct rdata *d, const char *t, const char *dflt, const char **prev)
{
	if (!t)
		t = dflt;
	if (!t)
		return NULL;
	if (!*prev || strcmp(*prev, t))
		*prev = rep_rd_intern(d, t);
	return *prev;
}

static int load_cells(struct rdata *d, sqlite3 *db, struct strbuf *err)
{
	sqlite3_stmt *st;
	int rc = prepare(db, "SELECT seq, phase, layout, rep, step, module, volume_id, cycle,"
			     " sweep_var, sweep_value, start_utc, end_utc, status, error"
			     " FROM cells ORDER BY seq", &st, err);
	if (rc < 0)
		return rc;
	size_t alloc = 0;
	const char *prev[6] = { NULL };
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t vi = vol_index(d, sqlite3_column_int64(st, 6));
		if (vi == UINT32_MAX)
			continue; /* foreign keys make this impossible; be safe anyway */
		XGROW(d->cells, d->ncells + 1, alloc);
		struct rd_cell *c = &d->cells[d->ncells++];
		c->seq = (uint32_t)sqlite3_column_int64(st, 0);
		c->phase = (uint32_t)sqlite3_column_int64(st, 1);
		c->layout = intern_col(d, col_text(st, 2), "", &prev[0]);
		c->rep = (uint32_t)sqlite3_column_int64(st, 3);
		c->step = intern_col(d, col_text(st, 4), "", &prev[1]);
		c->module = intern_col(d, col_text(st, 5), "", &prev[2]);
		c->vol = vi;
		c->cycle = (uint32_t)sqlite3_column_int64(st, 7);
		c->sweep_var = intern_col(d, col_text(st, 8), NULL, &prev[3]);
		c->sweep_value = intern_col(d, col_text(st, 9), NULL, &prev[4]);
		c->start_utc = rep_rd_strdup(d, col_text(st, 10));
		c->end_utc = rep_rd_strdup(d, col_text(st, 11));
		c->status = intern_col(d, col_text(st, 12), "running", &prev[5]);
		c->error = rep_rd_intern(d, col_text(st, 13)); /* a factor of results.json */
		if (strcmp(c->status, "done"))
			d->failed_cells++;
	}
	sqlite3_finalize(st);
	return step_done(db, rc, err);
}

/* seq -> cell index, for rows that name a cell by seq. */
struct seqmap {
	uint32_t *idx;
	uint32_t max;
};

static void seqmap_build(const struct rdata *d, struct seqmap *m)
{
	m->max = d->ncells ? d->cells[d->ncells - 1].seq : 0;
	m->idx = xmalloc(((size_t)m->max + 1) * sizeof(*m->idx));
	memset(m->idx, 0xff, ((size_t)m->max + 1) * sizeof(*m->idx));
	for (size_t i = 0; i < d->ncells; i++)
		m->idx[d->cells[i].seq] = (uint32_t)i;
}

static uint32_t seqmap_get(const struct seqmap *m, int64_t seq)
{
	return seq >= 0 && seq <= m->max ? m->idx[seq] : UINT32_MAX;
}

/*
 * Samples are read in a thread of their own, on a connection of their own,
 * while the main thread reads the cells: the thread cannot touch the
 * shared intern table, so it keeps the few distinct metric, unit and cache
 * texts in a small table of its own, and the seq of each sample; both are
 * mapped to the shared ids and cell indices afterwards.
 */
struct sample_job {
	sqlite3 *db;
	struct rd_sample *samples;  /* .cell holds the seq until mapped */
	size_t n, alloc;
	char **texts;               /* private intern table */
	size_t ntexts;
	uint64_t superseded;        /* rows of earlier attempts, counted and skipped */
	struct strbuf err;
	int rc;
};

static uint32_t private_id(struct sample_job *j, const char *t)
{
	for (size_t i = j->ntexts; i-- > 0;)
		if (!strcmp(j->texts[i], t))
			return (uint32_t)i;
	j->texts = xrealloc(j->texts, (j->ntexts + 1) * sizeof(*j->texts));
	j->texts[j->ntexts] = xstrdup(t);
	return (uint32_t)j->ntexts++;
}

static void *load_samples(void *arg)
{
	struct sample_job *j = arg;
	sqlite3_stmt *st;
	/* The superseded rows are counted here rather than by a second scan
	 * of the table. */
	j->rc = prepare(j->db, "SELECT seq, metric, value, unit, cache, superseded FROM samples"
			       " ORDER BY id", &st, &j->err);
	if (j->rc < 0)
		return NULL;
	/* Consecutive rows repeat metric, unit and cache: remember the last
	 * texts and skip the lookup when they match. */
	char last[3][64] = { "", "", "" };
	uint32_t last_id[3] = { UINT32_MAX, UINT32_MAX, UINT32_MAX };
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int(st, 5)) {
			j->superseded++;
			continue;
		}
		XGROW(j->samples, j->n + 1, j->alloc);
		struct rd_sample *s = &j->samples[j->n++];
		int64_t seq = sqlite3_column_int64(st, 0);
		s->cell = seq >= 0 && seq < UINT32_MAX ? (uint32_t)seq : UINT32_MAX;
		s->value = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
		uint32_t *ids[3] = { &s->metric, &s->unit, &s->cache };
		const int cols[3] = { 1, 3, 4 };
		for (int k = 0; k < 3; k++) {
			const char *t = col_text(st, cols[k]);
			if (!t)
				t = "";
			if (last_id[k] != UINT32_MAX && !strcmp(t, last[k])) {
				*ids[k] = last_id[k];
				continue;
			}
			*ids[k] = last_id[k] = private_id(j, t);
			if (strlen(t) < sizeof(last[k]))
				memcpy(last[k], t, strlen(t) + 1);
			else
				last_id[k] = UINT32_MAX;
		}
	}
	sqlite3_finalize(st);
	j->rc = step_done(j->db, rc, &j->err);
	return NULL;
}

/* Map the thread's samples into d: private ids to shared ones, seqs to
 * cell indices (samples of unknown cells are dropped). */
static void adopt_samples(struct rdata *d, struct sample_job *j, const struct seqmap *m)
{
	uint32_t *map = xmalloc((j->ntexts ? j->ntexts : 1) * sizeof(*map));
	for (size_t i = 0; i < j->ntexts; i++)
		map[i] = rep_rd_intern_id(d, j->texts[i]);
	size_t k = 0;
	for (size_t i = 0; i < j->n; i++) {
		struct rd_sample s = j->samples[i];
		uint32_t ci = seqmap_get(m, s.cell);
		if (ci == UINT32_MAX)
			continue;
		s.cell = ci;
		s.metric = map[s.metric];
		s.unit = map[s.unit];
		s.cache = map[s.cache];
		j->samples[k++] = s;
	}
	d->samples = j->samples;
	d->nsamples = k;
	d->superseded = j->superseded;
	j->samples = NULL;
	free(map);
}

static int load_files(struct rdata *d, sqlite3 *db, const struct seqmap *m, struct strbuf *err)
{
	sqlite3_stmt *st;
	int rc = prepare(db, "SELECT seq, file, bytes, seconds, disk_offset_min, disk_offset_max"
			     " FROM file_samples WHERE superseded = 0 ORDER BY id", &st, err);
	if (rc < 0)
		return rc;
	size_t alloc = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t ci = seqmap_get(m, sqlite3_column_int64(st, 0));
		if (ci == UINT32_MAX)
			continue;
		XGROW(d->files, d->nfiles + 1, alloc);
		struct rd_file *f = &d->files[d->nfiles++];
		f->cell = ci;
		f->file = rep_rd_strdup(d, col_text(st, 1) ? col_text(st, 1) : "");
		f->bytes = sqlite3_column_int64(st, 2);
		f->seconds = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
		for (int i = 0; i < 2; i++)
			f->disk_offset[i] = sqlite3_column_type(st, 4 + i) == SQLITE_NULL
						    ? -1 : sqlite3_column_int64(st, 4 + i);
	}
	sqlite3_finalize(st);
	return step_done(db, rc, err);
}

static int load_misc(struct rdata *d, sqlite3 *db, struct strbuf *err)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc = prepare(db, "SELECT seq, key, value FROM notes WHERE superseded = 0 ORDER BY id", &st, err);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		XGROW(d->notes, d->nnotes + 1, alloc);
		struct rd_note *n = &d->notes[d->nnotes++];
		n->seq = (uint32_t)sqlite3_column_int64(st, 0);
		n->key = rep_rd_intern(d, col_text(st, 1) ? col_text(st, 1) : "");
		n->value = rep_rd_intern(d, col_text(st, 2) ? col_text(st, 2) : "");
	}
	sqlite3_finalize(st);
	if ((rc = step_done(db, rc, err)) < 0)
		return rc;

	alloc = 0;
	rc = prepare(db, "SELECT start_utc, argv, status, seconds, output FROM commands ORDER BY id",
		     &st, err);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		XGROW(d->cmds, d->ncmds + 1, alloc);
		struct rd_command *c = &d->cmds[d->ncmds++];
		c->start_utc = rep_rd_strdup(d, col_text(st, 0) ? col_text(st, 0) : "");
		c->argv = rep_rd_strdup(d, col_text(st, 1) ? col_text(st, 1) : "");
		c->status = sqlite3_column_int(st, 2);
		c->seconds = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
		c->output = rep_rd_strdup(d, col_text(st, 4));
	}
	sqlite3_finalize(st);
	if ((rc = step_done(db, rc, err)) < 0)
		return rc;

	alloc = 0;
	alloc = 0;
	rc = prepare(db, "SELECT started_utc, ended_utc, status, why, first_unfinished, from_seq,"
		     " reprovisioned FROM resumes ORDER BY id", &st, err);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		XGROW(d->resumes, d->nresumes + 1, alloc);
		struct rd_resume *r = &d->resumes[d->nresumes++];
		r->started_utc = rep_rd_strdup(d, col_text(st, 0) ? col_text(st, 0) : "");
		r->ended_utc = rep_rd_strdup(d, col_text(st, 1));
		r->status = rep_rd_intern(d, col_text(st, 2) ? col_text(st, 2) : "running");
		r->why = rep_rd_strdup(d, col_text(st, 3));
		r->first_unfinished = (uint32_t)sqlite3_column_int64(st, 4);
		r->from_seq = (uint32_t)sqlite3_column_int64(st, 5);
		r->reprovisioned = sqlite3_column_int(st, 6);
	}
	sqlite3_finalize(st);
	if ((rc = step_done(db, rc, err)) < 0)
		return rc;

	alloc = 0;
	rc = prepare(db, "SELECT utc, level, msg FROM events ORDER BY id", &st, err);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		XGROW(d->events, d->nevents + 1, alloc);
		struct rd_event *e = &d->events[d->nevents++];
		e->utc = rep_rd_strdup(d, col_text(st, 0) ? col_text(st, 0) : "");
		e->level = rep_rd_intern(d, col_text(st, 1) ? col_text(st, 1) : "");
		e->msg = rep_rd_strdup(d, col_text(st, 2) ? col_text(st, 2) : "");
	}
	sqlite3_finalize(st);
	return step_done(db, rc, err);
}

/* The plan's report section, from the stored plan text parsed as the run
 * parsed it: with the recorded --fs-map and platform (a macOS plan
 * rehearsed on Linux validates only so) and --image-size. A store without
 * recorded options (schema 1) gets the defaults. A plan that still does
 * not validate gives only its title and description: the rest of a plan
 * with errors may be partial (an invalid step is left out, and the paths
 * of the steps after it move). */
static void load_plan(struct rdata *d)
{
	d->title = d->run.plan_name;
	d->formats = FMT_HTML | FMT_CSV;
	if (!d->run.plan_text) {
		d->plan_problem = "the store holds no plan text";
		return;
	}
	struct store_run_options ro;
	struct plan_options opt = { .platform = NULL, .fs_map = NULL };
	if (store_run_options_parse(d->run.options_json, &ro) == 0) {
		opt.platform = ro.platform;
		opt.fs_map = ro.fs_map;
		opt.vars = (const char *const *)ro.vars;
		opt.nvars = ro.nvars;
	}
	struct diag dg;
	diag_init(&dg, "plan.yaml", d->run.plan_text);
	struct plan *p = plan_parse_text("plan.yaml", d->run.plan_text, strlen(d->run.plan_text),
					 &opt, &dg);
	if (dg.nerrors) {
		char buf[512];
		size_t first = 0;
		while (dg.items[first].level != DIAG_ERROR)
			first++;
		diag_format_item(&dg, first, buf, sizeof(buf));
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "the stored plan does not validate with this rig (%s)", buf);
		d->plan_problem = rep_rd_strdup(d, sb.buf);
		sb_release(&sb);
	}
	diag_release(&dg);
	if (p && p->fs_mapped)
		d->fs_map = rep_rd_strdup(d, ro.fs_map);
	if (p && ro.image_size && p->target.kind == TARGET_IMAGE)
		p->target.image_size = ro.image_size;
	store_run_options_release(&ro);
	if (!p)
		return;
	if (p->report.title)
		d->title = rep_rd_strdup(d, p->report.title);
	d->description = rep_rd_strdup(d, p->description);
	if (d->plan_problem) {
		plan_free(p);
		return;
	}
	d->baseline = rep_rd_strdup(d, p->report.baseline);
	if (p->report.formats)
		d->formats = p->report.formats;
	d->nby = p->report.nby;
	d->by = xcalloc(d->nby ? d->nby : 1, sizeof(*d->by));
	for (size_t i = 0; i < d->nby; i++)
		d->by[i] = rep_rd_intern(d, p->report.by[i]);
	d->plan = p;
}

/*
 * A reading connection of the report's own: read-only, and the database
 * file mapped into memory rather than read a page at a time (a pread and
 * a copy per 4 KiB page were a tenth of a million-sample report). The
 * limit is SQLite's compile-time maximum when lower. Pages of the WAL
 * are still read.
 */
static int open_reader(const char *file, sqlite3 **db)
{
	if (sqlite3_open_v2(file, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    store_reader_setup(*db) != 0)
		return -1;
	sqlite3_exec(*db, "PRAGMA mmap_size = 17179869184", NULL, NULL, NULL);
	return 0;
}

struct rdata *rep_rdata_load(struct store *s, struct strbuf *err)
{
	struct rdata *d = xcalloc(1, sizeof(*d));
	/* A connection of our own without SQLite's per-call mutex (the
	 * store's is serialized, and a million rows pay for every lock);
	 * read-only, so it can never change a result. */
	sqlite3 *db = store_db(s), *own = NULL;
	const char *file = sqlite3_db_filename(db, "main");
	if (file && *file && open_reader(file, &own) == 0) {
		db = own;
	} else if (own) {
		sqlite3_close(own);
		own = NULL;
	}
	/* Samples in a second thread on a second connection (see
	 * load_samples). Each connection reads in one transaction; on a live
	 * run the two may see different moments, and samples of cells the
	 * first has not seen yet are left out. */
	struct sample_job sj = { .err = STRBUF_INIT };
	pthread_t th;
	int threaded = 0;
	if (own && open_reader(file, &sj.db) == 0) {
		sqlite3_exec(sj.db, "BEGIN", NULL, NULL, NULL);
		threaded = pthread_create(&th, NULL, load_samples, &sj) == 0;
	} else if (sj.db) {
		sqlite3_close(sj.db);
		sj.db = NULL;
	}
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	int rc = load_run(d, db, err);
	if (rc == 0)
		rc = load_volumes(d, db, err);
	if (rc == 0)
		rc = load_cells(d, db, err);
	struct seqmap m = { NULL, 0 };
	if (rc == 0)
		seqmap_build(d, &m);
	if (rc == 0)
		rc = load_files(d, db, &m, err);
	if (rc == 0)
		rc = load_misc(d, db, err);
	if (rc == 0)
		rc = rep_rtime_load(d, db, err);
	if (threaded) {
		pthread_join(th, NULL);
	} else {
		sj.db = db;
		load_samples(&sj);
	}
	if (sj.db && sj.db != db) {
		sqlite3_exec(sj.db, "COMMIT", NULL, NULL, NULL);
		sqlite3_close(sj.db);
	}
	if (rc == 0 && sj.rc < 0) {
		sb_adds(err, sj.err.buf);
		rc = sj.rc;
	}
	if (rc == 0)
		adopt_samples(d, &sj, &m);
	free(sj.samples);
	for (size_t i = 0; i < sj.ntexts; i++)
		free(sj.texts[i]);
	free(sj.texts);
	sb_release(&sj.err);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (own)
		sqlite3_close(own);
	free(m.idx);
	if (rc < 0) {
		rep_rdata_free(d);
		return NULL;
	}
	load_plan(d);
	if (d->baseline) {
		for (size_t i = 0; i < d->nvols && d->base_kind == RD_BASE_NONE; i++)
			if (!strcmp(d->vols[i].name, d->baseline))
				d->base_kind = RD_BASE_VOLUME;
		for (size_t i = 0; i < d->nvols && d->base_kind == RD_BASE_NONE; i++)
			if (!strcmp(d->vols[i].layout, d->baseline))
				d->base_kind = RD_BASE_LAYOUT;
	}
	return d;
}

void rep_rdata_free(struct rdata *d)
{
	if (!d)
		return;
	free(d->vols);
	free(d->cells);
	free(d->samples);
	free(d->files);
	free(d->notes);
	free(d->cmds);
	free(d->events);
	free(d->resumes);
	rep_rtime_free(d->time);
	free(d->by);
	free(d->tmpls);
	free(d->groups);
	free(d->order);
	free(d->sample_group);
	free(d->z);
	free(d->pass);
	free(d->vtext);
	free(d->filesets);
	free(d->findings);
	free(d->forder);
	free(d->strs);
	free(d->slots);
	if (d->plan)
		plan_free(d->plan);
	struct chunk *c = d->arena;
	while (c) {
		struct chunk *next = c->next;
		free(c);
		c = next;
	}
	free(d);
}
