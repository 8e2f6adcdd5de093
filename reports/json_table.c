/*
 * results.json's cells, samples and files: the members that grow with the
 * run, written as column arrays (docs/reports.md, "results.json"):
 *
 *   "samples":{"count":N,
 *   "seq":[1,1,2,...],
 *   "metric":{"levels":["rate","lat_p50"],"codes":[0,1,0,...]},
 *   "value":[...], ...}
 *
 * one column a line, every column N long. A column of repeated texts (a
 * factor: layout, step, metric, unit, status, ...) is written once as its
 * levels, in order of first appearance (null among them when the column
 * has NULLs), and a small code per row. Rows as objects (format 1)
 * repeated every name and text per row: 237 MB for bench/report.sh's
 * million samples, most of it names and repeated texts; as columns it is
 * 75 MB, and a reader gets each column as one array (a data frame's
 * columns, or streamed column by column). Times, file names and numbers
 * are written as they are.
 */
#include "reports/json_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/csv.h"
#include "reports/report_data.h"
#include "reports/report_out.h"

void rep_json_str(struct strbuf *b, const char *s)
{
	if (!s) {
		sb_add(b, "null", 4);
		return;
	}
	sb_addch(b, '"');
	const unsigned char *p = (const unsigned char *)s;
	/* Plain ASCII without quotes or backslashes is copied as it is. */
	const unsigned char *q = p;
	while (*q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
		q++;
	if (!*q) {
		sb_add(b, s, (size_t)(q - p));
		sb_addch(b, '"');
		return;
	}
	size_t len = strlen(s);
	const unsigned char *end = p + len;
	while (p < end) {
		unsigned c = *p;
		if (c >= 0x80) {
			size_t n = rep_rd_utf8_len(p, (size_t)(end - p));
			if (n) {
				sb_add(b, p, n);
				p += n;
			} else {
				sb_adds(b, "\\ufffd");
				p++;
			}
			continue;
		}
		switch (c) {
		case '"': sb_adds(b, "\\\""); break;
		case '\\': sb_adds(b, "\\\\"); break;
		case '\n': sb_adds(b, "\\n"); break;
		case '\r': sb_adds(b, "\\r"); break;
		case '\t': sb_adds(b, "\\t"); break;
		default:
			if (c < 0x20)
				sb_addf(b, "\\u%04x", c);
			else
				sb_addch(b, (char)c);
		}
		p++;
	}
	sb_addch(b, '"');
}

void rep_json_num(struct strbuf *b, double v)
{
	if (isnan(v))
		sb_add(b, "null", 4);
	else if (isinf(v))
		sb_adds(b, v < 0 ? "\"-inf\"" : "\"inf\"");
	else
		rep_csv_add_double(b, v);
}

/* --- factors: levels and codes --- */

/* The distinct texts of a column in order of first appearance (NULL is
 * one of them when the column has NULLs). The texts of every factor
 * column are interned in d, so each has an id (rep_rd_find) and its code is
 * found by id; the previous row's pointer is tried first. */
struct levels {
	const char **s;
	uint32_t n, alloc;
	uint32_t *code;             /* by interned id; UINT32_MAX: not seen */
	uint32_t null_code;         /* UINT32_MAX: no NULL yet */
	const char *last;
	uint32_t last_code;         /* UINT32_MAX: no row yet */
};

static uint32_t levels_add(struct levels *l, const char *s)
{
	XGROW(l->s, l->n + 1, l->alloc);
	l->s[l->n] = s;
	return l->n++;
}

static uint32_t level_of(struct levels *l, const struct rdata *d, const char *s)
{
	if (l->last_code != UINT32_MAX && s == l->last)
		return l->last_code;
	uint32_t code, id = rep_rd_find(d, s);
	if (!s) {
		if (l->null_code == UINT32_MAX)
			l->null_code = levels_add(l, NULL);
		code = l->null_code;
	} else if (id == UINT32_MAX) {
		code = levels_add(l, s); /* not interned after all: a level of its own */
	} else {
		if (l->code[id] == UINT32_MAX)
			l->code[id] = levels_add(l, s);
		code = l->code[id];
	}
	l->last = s;
	l->last_code = code;
	return code;
}

/* --- columns --- */

typedef const char *(*text_of)(const struct rdata *d, size_t i);
typedef long long (*int_of)(const struct rdata *d, size_t i);
typedef double (*real_of)(const struct rdata *d, size_t i);

static void col_name(struct strbuf *b, const char *name)
{
	sb_add(b, ",\n\"", 3);
	sb_adds(b, name);
	sb_add(b, "\":[", 3);
}

/* A comma before every value but the first, and the buffer written out
 * as it fills. */
static void col_next(struct rout *o, size_t i)
{
	if (i)
		sb_addch(&o->buf, ',');
	if ((i & 1023) == 0)
		rep_rout_flush_some(o);
}

static void factor_col(struct rout *o, const char *name, const struct rdata *d, size_t n, text_of get)
{
	struct strbuf *b = &o->buf;
	struct levels l = { .null_code = UINT32_MAX, .last_code = UINT32_MAX };
	l.code = xmalloc(((size_t)d->nstrs + 1) * sizeof(*l.code));
	memset(l.code, 0xff, ((size_t)d->nstrs + 1) * sizeof(*l.code));
	uint32_t *codes = xmalloc((n ? n : 1) * sizeof(*codes));
	for (size_t i = 0; i < n; i++)
		codes[i] = level_of(&l, d, get(d, i));
	sb_add(b, ",\n\"", 3);
	sb_adds(b, name);
	sb_adds(b, "\":{\"levels\":[");
	for (uint32_t k = 0; k < l.n; k++) {
		if (k)
			sb_addch(b, ',');
		rep_json_str(b, l.s[k]);
	}
	sb_adds(b, "],\"codes\":[");
	for (size_t i = 0; i < n; i++) {
		col_next(o, i);
		if (codes[i] < 10)
			sb_addch(b, (char)('0' + codes[i]));
		else
			sb_add_int(b, codes[i]);
	}
	sb_add(b, "]}", 2);
	free(codes);
	free(l.s);
	free(l.code);
}

/* Integers; with zero_null, 0 is written as null (no cycle, no pass). */
/* zero_null: 1 writes 0 as null, NEG_NULL a negative value (not known). */
#define NEG_NULL 2
static void int_col(struct rout *o, const char *name, const struct rdata *d, size_t n, int_of get,
		    int zero_null)
{
	col_name(&o->buf, name);
	for (size_t i = 0; i < n; i++) {
		col_next(o, i);
		long long v = get(d, i);
		if ((zero_null == 1 && !v) || (zero_null == NEG_NULL && v < 0))
			sb_add(&o->buf, "null", 4);
		else
			sb_add_int(&o->buf, v);
	}
	sb_addch(&o->buf, ']');
}

/* Reals; with vtext (the samples' values, formatted once for the CSV
 * too), the finite ones are copied from there. */
static void real_col(struct rout *o, const char *name, const struct rdata *d, size_t n, real_of get,
		     const char (*vtext)[RD_VTEXT])
{
	col_name(&o->buf, name);
	for (size_t i = 0; i < n; i++) {
		col_next(o, i);
		double v = get(d, i);
		if (vtext && isfinite(v))
			sb_adds(&o->buf, vtext[i]);
		else
			rep_json_num(&o->buf, v);
	}
	sb_addch(&o->buf, ']');
}

static void text_col(struct rout *o, const char *name, const struct rdata *d, size_t n, text_of get)
{
	col_name(&o->buf, name);
	for (size_t i = 0; i < n; i++) {
		col_next(o, i);
		rep_json_str(&o->buf, get(d, i));
	}
	sb_addch(&o->buf, ']');
}

static void count(struct strbuf *b, const char *name, size_t n)
{
	sb_add(b, ",\n\"", 3);
	sb_adds(b, name);
	sb_adds(b, "\":{\"count\":");
	sb_add_int(b, (long long)n);
}

/* --- cells --- */

#define CELL(d, i) (&(d)->cells[i])
static long long c_seq(const struct rdata *d, size_t i) { return CELL(d, i)->seq; }
static long long c_phase(const struct rdata *d, size_t i) { return CELL(d, i)->phase; }
static long long c_rep(const struct rdata *d, size_t i) { return CELL(d, i)->rep; }
static long long c_volume_id(const struct rdata *d, size_t i) { return d->vols[CELL(d, i)->vol].id; }
static long long c_cycle(const struct rdata *d, size_t i) { return CELL(d, i)->cycle; }
static const char *c_layout(const struct rdata *d, size_t i) { return CELL(d, i)->layout; }
static const char *c_step(const struct rdata *d, size_t i) { return CELL(d, i)->step; }
static const char *c_module(const struct rdata *d, size_t i) { return CELL(d, i)->module; }
static const char *c_volume(const struct rdata *d, size_t i) { return d->vols[CELL(d, i)->vol].name; }
static const char *c_sweep_var(const struct rdata *d, size_t i) { return CELL(d, i)->sweep_var; }
static const char *c_sweep_value(const struct rdata *d, size_t i) { return CELL(d, i)->sweep_value; }
static const char *c_start(const struct rdata *d, size_t i) { return CELL(d, i)->start_utc; }
static const char *c_end(const struct rdata *d, size_t i) { return CELL(d, i)->end_utc; }
static const char *c_status(const struct rdata *d, size_t i) { return CELL(d, i)->status; }
static const char *c_error(const struct rdata *d, size_t i) { return CELL(d, i)->error; }

void rep_json_cells(struct rout *o, const struct rdata *d)
{
	size_t n = d->ncells;
	count(&o->buf, "cells", n);
	int_col(o, "seq", d, n, c_seq, 0);
	int_col(o, "phase", d, n, c_phase, 0);
	factor_col(o, "layout", d, n, c_layout);
	int_col(o, "rep", d, n, c_rep, 0);
	factor_col(o, "step", d, n, c_step);
	factor_col(o, "module", d, n, c_module);
	int_col(o, "volume_id", d, n, c_volume_id, 0);
	factor_col(o, "volume", d, n, c_volume);
	int_col(o, "cycle", d, n, c_cycle, 1);
	factor_col(o, "sweep_var", d, n, c_sweep_var);
	factor_col(o, "sweep_value", d, n, c_sweep_value);
	text_col(o, "start_utc", d, n, c_start);
	text_col(o, "end_utc", d, n, c_end);
	factor_col(o, "status", d, n, c_status);
	factor_col(o, "error", d, n, c_error);
	sb_addch(&o->buf, '}');
}

/* --- samples --- */

static long long s_seq(const struct rdata *d, size_t i) { return d->cells[d->samples[i].cell].seq; }
static long long s_pass(const struct rdata *d, size_t i) { return d->pass[i]; }
static double s_value(const struct rdata *d, size_t i) { return d->samples[i].value; }
static const char *s_metric(const struct rdata *d, size_t i) { return rd_str(d, d->samples[i].metric); }
static const char *s_unit(const struct rdata *d, size_t i) { return rd_str(d, d->samples[i].unit); }
static const char *s_cache(const struct rdata *d, size_t i) { return rd_str(d, d->samples[i].cache); }

void rep_json_samples(struct rout *o, const struct rdata *d)
{
	size_t n = d->nsamples;
	struct strbuf *b = &o->buf;
	count(b, "samples", n);
	int_col(o, "seq", d, n, s_seq, 0);
	factor_col(o, "metric", d, n, s_metric);
	real_col(o, "value", d, n, s_value, (const char (*)[RD_VTEXT])d->vtext);
	factor_col(o, "unit", d, n, s_unit);
	factor_col(o, "cache", d, n, s_cache);
	col_name(b, "outlier");
	for (size_t i = 0; i < n; i++) {
		col_next(o, i);
		if (fabs(d->z[i]) > STATS_OUTLIER_Z)
			sb_add(b, "true", 4);
		else
			sb_add(b, "false", 5);
	}
	sb_addch(b, ']');
	/* Without passes the whole column is null, not a null per sample. */
	size_t with_pass = 0;
	for (size_t i = 0; d->pass && i < n && !with_pass; i++)
		with_pass = d->pass[i] != 0;
	if (with_pass) {
		int_col(o, "pass", d, n, s_pass, 1);
	} else {
		sb_adds(b, ",\n\"pass\":null");
	}
	sb_addch(b, '}');
}

/* --- files --- */

static long long f_seq(const struct rdata *d, size_t i) { return d->cells[d->files[i].cell].seq; }
static long long f_bytes(const struct rdata *d, size_t i) { return d->files[i].bytes; }
static double f_seconds(const struct rdata *d, size_t i) { return d->files[i].seconds; }
static double f_rate(const struct rdata *d, size_t i)
{
	const struct rd_file *f = &d->files[i];
	return f->seconds > 0 ? (double)f->bytes / f->seconds / 1e6 : NAN;
}
static const char *f_file(const struct rdata *d, size_t i) { return d->files[i].file; }
static long long f_off_min(const struct rdata *d, size_t i) { return d->files[i].disk_offset[0]; }
static long long f_off_max(const struct rdata *d, size_t i) { return d->files[i].disk_offset[1]; }

void rep_json_files(struct rout *o, const struct rdata *d)
{
	size_t n = d->nfiles;
	struct strbuf *b = &o->buf;
	count(b, "files", n);
	int_col(o, "seq", d, n, f_seq, 0);
	text_col(o, "file", d, n, f_file);
	int_col(o, "bytes", d, n, f_bytes, 0);
	real_col(o, "seconds", d, n, f_seconds, NULL);
	real_col(o, "rate", d, n, f_rate, NULL);
	int_col(o, "disk_offset_min", d, n, f_off_min, NEG_NULL);
	int_col(o, "disk_offset_max", d, n, f_off_max, NEG_NULL);
	sb_addch(b, '}');
}
