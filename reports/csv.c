/*
 * results.csv and files.csv (see csv.h), and the CSV number format every
 * writer of the reports uses.
 *
 * The tables are written from the run in memory (report_data.h), not from
 * a second pass over the store: for a million samples the SQL join and its
 * per-column calls cost more than everything else in a report. The rows:
 * by seq, then measurement order (samples a resumed run superseded are not
 * loaded: the files hold what counts, as a run never interrupted would);
 * NULL columns empty; integers in decimal; reals in the shortest form that
 * reads back. Each row's leading columns depend only on its cell, so they
 * are built once per cell and copied for its samples. Quoting is RFC 4180
 * (sb_add_csv: a field is quoted only when it holds a comma, a quote, CR or
 * LF). Records end with LF, not the RFC's CRLF: R's write.csv and pandas'
 * to_csv write LF on Unix, every CSV reader accepts it, and `cut`/`awk` on
 * the file do not see a stray CR in the last column. docs/results-store.md
 * states the format. A file is written under a temporary name, synced and
 * renamed over its path (report_out.h): a reader sees the old file or the
 * whole new one.
 *
 * Numbers: rep_csv_add_double finds the shortest of %.15g/%.16g/%.17g that
 * reads back from one printf of 17 digits rather than printing and parsing
 * each width in turn: a report formats millions of numbers, and that was
 * several times the cost (bench/README.md).
 *
 * Rejected: a column for every volume/cell fact (the contract fixes the
 * columns; the store holds the rest), and locale-dependent numbers.
 */
#include "reports/csv.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/columns.h"
#include "reports/report_data.h"
#include "reports/report_out.h"

/* Powers of ten a double holds exactly (Clinger's fast path). */
static const double exact_pow10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * Whether the decimal m * 10^k reads back as exactly a (a > 0): when m
 * fits in 53 bits and |k| <= 22, one IEEE multiplication or division is
 * correctly rounded, so it equals what strtod returns (Clinger 1990);
 * otherwise strtod decides.
 */
static int reads_back(uint64_t m, int k, double a)
{
	if (m < (1ull << 53) && k >= -22 && k <= 22)
		return (k >= 0 ? (double)m * exact_pow10[k] : (double)m / exact_pow10[-k]) == a;
	char buf[48];
	snprintf(buf, sizeof(buf), "%llue%d", (unsigned long long)m, k);
	return strtod(buf, NULL) == a;
}

/* The significant digits and decimal exponent of "%.*e" output, whatever
 * the locale's decimal point. Returns the number of digits. */
static int e_digits(const char *s, char *dig, int *exp10)
{
	int n = 0;
	for (; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			dig[n++] = *s;
	*exp10 = *s == 'e' ? atoi(s + 1) : 0;
	return n;
}

/* Append digits dig[0..p) (value 0.d1d2... * 10^(x+1), i.e. d1.d2... *
 * 10^x) as printf's "%.{p}g" does: fixed or scientific, trailing zeros
 * removed. */
static void add_g(struct strbuf *sb, int neg, const char *dig, int p, int x)
{
	int len = p;
	while (len > 1 && dig[len - 1] == '0')
		len--;
	if (neg)
		sb_addch(sb, '-');
	if (x < -4 || x >= p) {
		sb_addch(sb, dig[0]);
		if (len > 1) {
			sb_addch(sb, '.');
			sb_add(sb, dig + 1, (size_t)len - 1);
		}
		sb_addf(sb, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	} else if (x >= 0) {
		for (int i = 0; i <= x; i++)
			sb_addch(sb, i < len ? dig[i] : '0');
		if (len > x + 1) {
			sb_addch(sb, '.');
			sb_add(sb, dig + x + 1, (size_t)(len - x - 1));
		}
	} else {
		sb_adds(sb, "0.");
		for (int i = 0; i < -x - 1; i++)
			sb_addch(sb, '0');
		sb_add(sb, dig, (size_t)len);
	}
}

/*
 * The 17 significant digits of a > 0 correctly rounded (ties to even, as
 * glibc's printf rounds exact ties), and its decimal exponent, computed
 * exactly in 128-bit integers when 1e-6 <= a < 2^63: a = m * 2^-s with m
 * below 2^53, so m * 10^k stays below 2^127 for k <= 22. 0 when a is out
 * of that range (the caller asks printf instead). printf's multi-precision
 * digits cost far more (bench/README.md).
 */
static int digits17(double a, char *dig, int *exp10)
{
	if (!(a >= 1e-6 && a < 9.2e18))
		return 0;
	int e2;
	double fr = frexp(a, &e2);              /* a = fr * 2^e2, 0.5 <= fr < 1 */
	uint64_t m = (uint64_t)ldexp(fr, 53);   /* exact: 53 bits */
	int s = 53 - e2;                        /* a = m / 2^s */
	if (s < 0 || s > 120)
		return 0;
	int x = (int)floor(log10(a));
	for (int tries = 0; tries < 3; tries++) {
		int k = 16 - x;                 /* want a * 10^k in [1e16, 1e17) */
		if (k < 0 || k > 22)
			return 0;
		unsigned __int128 p10 = 1;
		for (int i = 0; i < k; i++)
			p10 *= 10;
		unsigned __int128 n = (unsigned __int128)m * p10;
		unsigned __int128 q = s ? n >> s : n;
		unsigned __int128 r = s ? n - (q << s) : 0;
		unsigned __int128 half = s ? (unsigned __int128)1 << (s - 1) : 0;
		if (s && (r > half || (r == half && (q & 1))))
			q++;
		if (q < 10000000000000000ull) {
			x--;
			continue;
		}
		if (q >= 100000000000000000ull) {
			if (q == 100000000000000000ull) { /* rounded up to the next power */
				q = 10000000000000000ull;
				x++;
			} else {
				x++;
				continue;
			}
		}
		uint64_t u = (uint64_t)q;
		for (int i = 16; i >= 0; i--) {
			dig[i] = (char)('0' + u % 10);
			u /= 10;
		}
		*exp10 = x;
		return 1;
	}
	return 0;
}

void rep_csv_add_double(struct strbuf *sb, double v)
{
	if (isnan(v))
		return;
	if (isinf(v)) {
		sb_adds(sb, v < 0 ? "-inf" : "inf");
		return;
	}
	/* Whole numbers below 10^15 print as such under every precision. */
	if (v == 0 || (fabs(v) < 1e15 && v == (double)(long long)v)) {
		if (v == 0)
			sb_adds(sb, signbit(v) ? "-0" : "0");
		else
			sb_addf(sb, "%lld", (long long)v);
		return;
	}
	/*
	 * The shortest of %.15g, %.16g and %.17g that reads back as exactly
	 * v. Every decimal of at most 15 significant digits survives a trip
	 * through a double (DBL_DIG), and 17 digits always do. digits17 (or
	 * one "%.16e") gives 17 correctly rounded digits; the 15- and 16-digit candidates
	 * are rounded from them, which is exact unless the dropped digits are
	 * exactly "5" or "50" (a tie at 17 digits may hide which way the exact
	 * value lies): then printf rounds the candidate itself. Candidates are
	 * checked by reads_back, so the output is what the slower
	 * printf-then-strtod search would give.
	 */
	char s17[48], d17[24];
	int x17;
	int neg = v < 0;
	double a = fabs(v);
	if (!digits17(a, d17, &x17)) {
		snprintf(s17, sizeof(s17), "%.16e", v);
		if (e_digits(s17, d17, &x17) != 17) {
			sb_adds(sb, s17); /* cannot happen for a finite double */
			return;
		}
	}
	for (int p = 15; p <= 16; p++) {
		char dig[24];
		int x = x17;
		int tie = d17[p] == '5';
		for (int i = p + 1; i < 17 && tie; i++)
			tie = d17[i] == '0';
		if (tie) {
			char sp[48];
			snprintf(sp, sizeof(sp), "%.*e", p - 1, v);
			if (e_digits(sp, dig, &x) != p)
				continue;
		} else {
			memcpy(dig, d17, (size_t)p);
			if (d17[p] >= '5') {
				int i = p - 1;
				while (i >= 0 && dig[i] == '9')
					dig[i--] = '0';
				if (i >= 0) {
					dig[i]++;
				} else {
					memmove(dig + 1, dig, (size_t)p - 1);
					dig[0] = '1';
					x++;
				}
			}
		}
		uint64_t m = 0;
		for (int i = 0; i < p; i++)
			m = m * 10 + (uint64_t)(dig[i] - '0');
		if (reads_back(m, x - (p - 1), a)) {
			add_g(sb, neg, dig, p, x);
			return;
		}
	}
	add_g(sb, neg, d17, 17, x17);
}

void rep_csv_add_next_double(struct strbuf *sb, double v)
{
	sb_addch(sb, ',');
	rep_csv_add_double(sb, v);
}

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

void rep_csv_format_values(struct rdata *d, int threads)
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

int rep_csv_write_results(const struct rdata *d, const char *path, struct strbuf *err)
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

int rep_csv_write_files(const struct rdata *d, const char *path, struct strbuf *err)
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

void rep_csv_add_header(struct strbuf *sb, const struct rep_table *t)
{
	int first = 1;
	for (size_t j = 0; j < t->ncols; j++) {
		if (t->cols[j].only && !(t->cols[j].only & REP_CSV))
			continue;
		if (!first)
			sb_addch(sb, ',');
		first = 0;
		sb_adds(sb, t->cols[j].name);
	}
}

static void add_row(struct strbuf *sb, const struct rep_table *t, const struct rep_val *v)
{
	int first = 1;
	for (size_t j = 0; j < t->ncols; j++) {
		if (t->cols[j].only && !(t->cols[j].only & REP_CSV))
			continue;
		if (!first)
			sb_addch(sb, ',');
		first = 0;
		if (v[j].null)
			continue;
		switch (t->cols[j].kind) {
		case REP_TEXT:
			if (v[j].text)
				sb_add_csv(sb, v[j].text);
			break;
		case REP_REAL:
			rep_csv_add_double(sb, v[j].real);
			break;
		case REP_COUNT:
			sb_add_int(sb, v[j].count);
			break;
		case REP_BOOL:
			sb_adds(sb, v[j].count ? "yes" : "no");
			break;
		}
	}
}

int rep_csv_write_table(const struct rdata *d, const struct rep_table *t, const char *path,
			struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	rep_csv_add_header(&o.buf, t);
	sb_addch(&o.buf, '\n');
	struct rep_val v[REP_MAX_COLS];
	for (size_t i = 0; i < t->nrows(d); i++) {
		memset(v, 0, sizeof(v));
		t->row(d, i, v);
		add_row(&o.buf, t, v);
		sb_addch(&o.buf, '\n');
		rep_rout_flush_some(&o);
	}
	return rep_rout_commit(&o, err);
}
