/*
 * results.csv and files.csv from memory (see report_csv.h). The rows and
 * their order are those of reports/csv.c: by seq, then measurement order;
 * NULL columns empty; integers in decimal; reals in the shortest form that
 * reads back (rep_csv_add_double). Each row's leading columns depend only on
 * its cell, so they are built once per cell and copied for its samples.
 */
#include "reports/report_csv.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/csv.h"
#include "reports/report_data.h"
#include "reports/report_out.h"

struct fmt_job {
	const struct rdata *d;
	char (*vtext)[RD_VTEXT];
	size_t lo, hi;
};

static void *format_range(void *arg)
{
	struct fmt_job *j = arg;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = j->lo; i < j->hi; i++) {
		sb_reset(&sb);
		rep_csv_add_double(&sb, j->d->samples[i].value);
		size_t n = sb.len < RD_VTEXT - 1 ? sb.len : RD_VTEXT - 1;
		memcpy(j->vtext[i], sb.buf, n);
		j->vtext[i][n] = '\0';
	}
	sb_release(&sb);
	return NULL;
}

void rep_rcsv_format_values(struct rdata *d, int threads)
{
	size_t n = d->nsamples;
	char (*vtext)[RD_VTEXT] = xmalloc((n ? n : 1) * sizeof(*vtext));
	struct fmt_job a = { d, vtext, 0, n / 2 }, b = { d, vtext, n / 2, n };
	pthread_t t;
	int threaded = threads > 1 && n > 10000 && pthread_create(&t, NULL, format_range, &b) == 0;
	format_range(&a);
	if (threaded)
		pthread_join(t, NULL);
	else
		format_range(&b);
	free(d->vtext);
	d->vtext = vtext;
}

/* Sample (or file) indices in the order of their cells' seq, stable:
 * a counting sort by cell index (cells are in seq order). */
static uint32_t *by_cell(const struct rdata *d, const uint32_t *cell_of, size_t stride, size_t n)
{
	size_t *start = xcalloc(d->ncells + 1, sizeof(*start));
	for (size_t i = 0; i < n; i++)
		start[*(const uint32_t *)((const char *)cell_of + i * stride) + 1]++;
	for (size_t c = 0; c < d->ncells; c++)
		start[c + 1] += start[c];
	uint32_t *out = xmalloc((n ? n : 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[start[*(const uint32_t *)((const char *)cell_of + i * stride)]++] = (uint32_t)i;
	free(start);
	return out;
}

/* run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,
 * cycle,sweep_var,sweep_value,seq,start_utc, and the trailing comma. */
static void lead(struct strbuf *sb, const struct rdata *d, const struct rd_cell *c)
{
	const struct rd_volume *v = &d->vols[c->vol];
	sb_add_csv(sb, d->run.id);
	sb_addch(sb, ',');
	sb_add_csv(sb, c->layout);
	sb_addch(sb, ',');
	sb_add_int(sb, c->rep);
	sb_addch(sb, ',');
	sb_add_csv(sb, c->step);
	sb_addch(sb, ',');
	sb_add_csv(sb, c->module);
	sb_addch(sb, ',');
	sb_add_csv(sb, v->name);
	sb_addch(sb, ',');
	if (v->fs)
		sb_add_csv(sb, v->fs);
	sb_addch(sb, ',');
	sb_add_int(sb, v->position);
	sb_addch(sb, ',');
	if (v->has_offsets)
		sb_add_int(sb, v->off_start);
	sb_addch(sb, ',');
	if (v->has_offsets)
		sb_add_int(sb, v->off_end);
	sb_addch(sb, ',');
	if (c->cycle)
		sb_add_int(sb, c->cycle);
	sb_addch(sb, ',');
	if (c->sweep_var)
		sb_add_csv(sb, c->sweep_var);
	sb_addch(sb, ',');
	if (c->sweep_value)
		sb_add_csv(sb, c->sweep_value);
	sb_addch(sb, ',');
	sb_add_int(sb, c->seq);
	sb_addch(sb, ',');
	if (c->start_utc)
		sb_add_csv(sb, c->start_utc);
	sb_addch(sb, ',');
}

static const char results_header[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,cycle,"
	"sweep_var,sweep_value,seq,start_utc,metric,value,unit,cache,pass\n";
static const char files_header[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,cycle,"
	"sweep_var,sweep_value,seq,start_utc,file,bytes,seconds,rate,disk_offset_min,"
	"disk_offset_max\n";

/* Each interned string as a CSV field, quoted when it must be, made once:
 * a sample's metric, unit and cache are copied, not scanned again. */
struct fields {
	struct strbuf text;
	size_t *at;                 /* offset of id's field in text, +1; 0: not made yet */
	uint32_t *len;
};

static void field(struct fields *f, const struct rdata *d, struct strbuf *out, uint32_t id)
{
	if (!f->at[id]) {
		size_t start = f->text.len;
		sb_add_csv(&f->text, rd_str(d, id));
		f->at[id] = start + 1;
		f->len[id] = (uint32_t)(f->text.len - start);
	}
	sb_add(out, f->text.buf + f->at[id] - 1, f->len[id]);
}

int rep_rcsv_write_results(const struct rdata *d, const char *path, struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	struct fields fl = { STRBUF_INIT, xcalloc(d->nstrs + 1, sizeof(size_t)),
			     xcalloc(d->nstrs + 1, sizeof(uint32_t)) };
	uint32_t *ord = d->nsamples ? by_cell(d, &d->samples[0].cell, sizeof(d->samples[0]), d->nsamples) : NULL;
	struct strbuf ld = STRBUF_INIT;
	uint32_t lead_cell = UINT32_MAX;
	sb_adds(&o.buf, results_header);
	for (size_t k = 0; k < d->nsamples; k++) {
		uint32_t i = ord[k];
		const struct rd_sample *s = &d->samples[i];
		if (s->cell != lead_cell) {
			sb_reset(&ld);
			lead(&ld, d, &d->cells[s->cell]);
			lead_cell = s->cell;
		}
		sb_add(&o.buf, ld.buf, ld.len);
		field(&fl, d, &o.buf, s->metric);
		sb_addch(&o.buf, ',');
		if (d->vtext)
			sb_adds(&o.buf, d->vtext[i]);
		else
			rep_csv_add_double(&o.buf, s->value);
		sb_addch(&o.buf, ',');
		field(&fl, d, &o.buf, s->unit);
		sb_addch(&o.buf, ',');
		field(&fl, d, &o.buf, s->cache);
		sb_addch(&o.buf, ',');
		if (d->pass && d->pass[i])
			sb_add_int(&o.buf, d->pass[i]);
		sb_addch(&o.buf, '\n');
		rep_rout_flush_some(&o);
	}
	free(ord);
	sb_release(&ld);
	sb_release(&fl.text);
	free(fl.at);
	free(fl.len);
	return rep_rout_commit(&o, err);
}

int rep_rcsv_write_files(const struct rdata *d, const char *path, struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	uint32_t *ord = d->nfiles ? by_cell(d, &d->files[0].cell, sizeof(d->files[0]), d->nfiles) : NULL;
	struct strbuf ld = STRBUF_INIT;
	uint32_t lead_cell = UINT32_MAX;
	sb_adds(&o.buf, files_header);
	for (size_t k = 0; k < d->nfiles; k++) {
		const struct rd_file *f = &d->files[ord[k]];
		if (f->cell != lead_cell) {
			sb_reset(&ld);
			lead(&ld, d, &d->cells[f->cell]);
			lead_cell = f->cell;
		}
		sb_add(&o.buf, ld.buf, ld.len);
		sb_add_csv(&o.buf, f->file);
		sb_addch(&o.buf, ',');
		sb_add_int(&o.buf, f->bytes);
		sb_addch(&o.buf, ',');
		rep_csv_add_double(&o.buf, f->seconds);
		sb_addch(&o.buf, ',');
		if (f->seconds > 0)
			rep_csv_add_double(&o.buf, (double)f->bytes / f->seconds / 1e6);
		for (int i = 0; i < 2; i++) {
			sb_addch(&o.buf, ',');
			if (f->disk_offset[i] >= 0)
				sb_add_int(&o.buf, f->disk_offset[i]);
		}
		sb_addch(&o.buf, '\n');
		rep_rout_flush_some(&o);
	}
	free(ord);
	sb_release(&ld);
	return rep_rout_commit(&o, err);
}
