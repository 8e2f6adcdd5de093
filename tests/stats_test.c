/*
 * Tests of reports/stats.c against reference values computed independently
 * (tests/fixtures/stats/reference.txt, made by make_fixtures.py there with
 * Python's statistics module and mpmath at 50 digits), to 1e-9 relative,
 * plus three t quantiles from a printed table and the edge cases: n = 0 and
 * 1, no spread, an unbounded ratio interval.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/stats.h"
#include "test.h"

#define REL 1e-9

/* One fixture line: "kind; key=value; key=value". */
struct rec {
	char *kind;
	char *keys[24];
	char *vals[24];
	size_t n;
	int line;
};

static const char *get(const struct rec *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->keys[i], key))
			return r->vals[i];
	return NULL;
}

static double getd(const struct rec *r, const char *key)
{
	const char *v = get(r, key);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	return strtod(v, NULL);
}

/* A comma list of doubles; caller frees. */
static double *getv(const struct rec *r, const char *key, size_t *n)
{
	const char *v = get(r, key);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	size_t cap = 1;
	for (const char *p = v; *p; p++)
		cap += *p == ',';
	double *out = xcalloc(cap, sizeof(double));
	size_t k = 0;
	const char *p = v;
	while (*p) {
		char *end;
		out[k++] = strtod(p, &end);
		p = *end == ',' ? end + 1 : end;
		if (end == p && *p != '\0')
			break;
	}
	*n = k;
	return out;
}

static int close_enough(double got, double want)
{
	if (isnan(want))
		return isnan(got);
	if (want == 0)
		return fabs(got) < 1e-12;
	return fabs(got - want) <= REL * fabs(want);
}

static int failures;

static void check(const struct rec *r, const char *what, double got, double want)
{
	int ok = close_enough(got, want);
	CU_ASSERT_TRUE(ok);
	if (!ok && failures++ < 20)
		fprintf(stderr, "\nreference.txt:%d %s %s: got %.17g, want %.17g\n", r->line,
			r->kind, what, got, want);
}

/* Read every record of the fixture; the records point into *text: the
 * caller frees both. */
static struct rec *load(size_t *nrec, char **text)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/tests/fixtures/stats/reference.txt", test_src());
	*text = test_read_file(path.buf, NULL);
	sb_release(&path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*text);
	struct rec *recs = NULL;
	size_t n = 0, alloc = 0;
	int lineno = 0;
	for (char *line = strtok(*text, "\n"); line; line = strtok(NULL, "\n")) {
		lineno++;
		if (*line == '#')
			continue;
		XGROW(recs, n + 1, alloc);
		struct rec *r = &recs[n++];
		memset(r, 0, sizeof(*r));
		r->line = lineno + 0;
		char *save = NULL;
		char *tok = strtok_r(line, ";", &save);
		r->kind = tok;
		while ((tok = strtok_r(NULL, ";", &save)) && r->n < 24) {
			while (*tok == ' ')
				tok++;
			char *eq = strchr(tok, '=');
			if (!eq)
				continue;
			*eq = '\0';
			r->keys[r->n] = tok;
			r->vals[r->n++] = eq + 1;
		}
	}
	*nrec = n;
	return recs;
}

static void test_reference_values(void)
{
	char *text;
	size_t n, counts[6] = { 0 };
	struct rec *recs = load(&n, &text);
	failures = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rec *r = &recs[i];
		if (!strcmp(r->kind, "tq")) {
			check(r, "quantile", rep_stats_t_quantile(getd(r, "p"), getd(r, "df")),
			      getd(r, "value"));
			counts[0]++;
		} else if (!strcmp(r->kind, "tcdf")) {
			double t = getd(r, "t"), df = getd(r, "df");
			check(r, "two-sided", rep_stats_t_two_sided(t, df), getd(r, "two_sided"));
			counts[1]++;
		} else if (!strcmp(r->kind, "summary")) {
			size_t nx;
			double *x = getv(r, "x", &nx);
			struct stats_summary s;
			rep_stats_summarize(x, nx, &s);
			CU_ASSERT_EQUAL(s.n, (size_t)getd(r, "n"));
			check(r, "mean", s.mean, getd(r, "mean"));
			check(r, "sd", s.sd, getd(r, "sd"));
			check(r, "median", s.median, getd(r, "median"));
			check(r, "min", s.min, getd(r, "min"));
			check(r, "max", s.max, getd(r, "max"));
			check(r, "ci_low", s.ci_low, getd(r, "ci_low"));
			check(r, "ci_high", s.ci_high, getd(r, "ci_high"));
			free(x);
			counts[2]++;
		} else if (!strcmp(r->kind, "modz")) {
			size_t nx, nz;
			double *x = getv(r, "x", &nx);
			double *want = getv(r, "z", &nz);
			CU_ASSERT_EQUAL_FATAL(nx, nz);
			double *z = xcalloc(nx, sizeof(double)), *scratch = xcalloc(nx, sizeof(double));
			size_t flagged = rep_stats_modified_z(x, nx, z, scratch);
			CU_ASSERT_EQUAL(flagged, (size_t)getd(r, "flagged"));
			for (size_t k = 0; k < nx; k++)
				check(r, "z", z[k], want[k]);
			free(x);
			free(want);
			free(z);
			free(scratch);
			counts[3]++;
		} else if (!strcmp(r->kind, "diff")) {
			size_t nx, nb;
			double *x = getv(r, "x", &nx), *b = getv(r, "b", &nb);
			struct stats_summary sx, sb;
			rep_stats_summarize(x, nx, &sx);
			rep_stats_summarize(b, nb, &sb);
			struct rep_stats_diff d;
			rep_stats_diff(&sx, &sb, &d);
			check(r, "pct", d.pct_of_base, getd(r, "pct"));
			check(r, "diff", d.diff_pct, getd(r, "diff"));
			check(r, "ci_low", d.ci_low, getd(r, "ci_low"));
			check(r, "ci_high", d.ci_high, getd(r, "ci_high"));
			check(r, "t", d.t, getd(r, "t"));
			check(r, "df", d.df, getd(r, "df"));
			check(r, "p", d.p, getd(r, "p"));
			free(x);
			free(b);
			counts[4]++;
		} else if (!strcmp(r->kind, "drift")) {
			size_t ns, ny;
			double *seq = getv(r, "seq", &ns), *y = getv(r, "y", &ny);
			CU_ASSERT_EQUAL_FATAL(ns, ny);
			struct rep_stats_drift d;
			CU_ASSERT_EQUAL(rep_stats_drift(seq, y, ns, &d), 0);
			check(r, "slope", d.slope, getd(r, "slope"));
			check(r, "ci_low", d.ci_low, getd(r, "ci_low"));
			check(r, "ci_high", d.ci_high, getd(r, "ci_high"));
			CU_ASSERT_EQUAL(d.flagged, (int)getd(r, "flagged"));
			free(seq);
			free(y);
			counts[5]++;
		}
	}
	/* Every kind is present: a truncated fixture must not pass quietly. */
	CU_ASSERT_TRUE(counts[0] >= 100 && counts[1] >= 10 && counts[2] >= 8 &&
		       counts[3] >= 8 && counts[4] >= 5 && counts[5] >= 4);
	free(recs);
	free(text);
}

static void test_printed_table(void)
{
	/* NIST/SEMATECH e-Handbook 1.3.6.7.2, upper critical values, alpha = 0.025. */
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_t_quantile(0.975, 1), 12.706, 0.0005);
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_t_quantile(0.975, 10), 2.228, 0.0005);
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_t_quantile(0.975, 30), 2.042, 0.0005);
	/* Symmetry and the normal limit. */
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_t_quantile(0.025, 7), -rep_stats_t_quantile(0.975, 7), 1e-13);
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_t_quantile(0.975, 1e12), 1.959963984540054, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_normal_quantile(0.975), 1.959963984540054, 1e-14);
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_normal_quantile(1e-10), -6.361340902404056, 1e-12);
	CU_ASSERT_TRUE(isnan(rep_stats_t_quantile(0, 3)));
	CU_ASSERT_TRUE(isnan(rep_stats_t_quantile(0.5, 0)));
	CU_ASSERT_EQUAL(rep_stats_t_quantile(0.5, 4), 0);
	CU_ASSERT_DOUBLE_EQUAL(rep_stats_betai(2, 3, 0.4), 0.5248, 1e-14);
}

static void test_edges(void)
{
	struct stats_summary s;
	rep_stats_summarize(NULL, 0, &s);
	CU_ASSERT_EQUAL(s.n, 0);
	CU_ASSERT_TRUE(isnan(s.mean) && isnan(s.ci_low));
	double one = 3;
	rep_stats_summarize(&one, 1, &s);
	CU_ASSERT_EQUAL(s.mean, 3);
	CU_ASSERT_TRUE(isnan(s.sd) && isnan(s.ci_low) && isnan(s.ci_high));
	/* Identical values: a zero-width interval, no outliers, no p-value. */
	double same[] = { 2, 2, 2 }, same2[] = { 2, 2, 2 };
	struct stats_summary a, b;
	rep_stats_summarize(same, 3, &a);
	rep_stats_summarize(same2, 3, &b);
	CU_ASSERT_EQUAL(a.ci_low, 2);
	CU_ASSERT_EQUAL(a.ci_high, 2);
	struct rep_stats_diff d;
	rep_stats_diff(&a, &b, &d);
	CU_ASSERT_EQUAL(d.diff_pct, 0);
	CU_ASSERT_EQUAL(d.ci_low, 0);
	CU_ASSERT_TRUE(isnan(d.p));
	/* A baseline with mean 0: no percentage at all. */
	double zero[] = { -1, 1 };
	rep_stats_summarize(zero, 2, &b);
	rep_stats_diff(&a, &b, &d);
	CU_ASSERT_TRUE(isnan(d.pct_of_base) && isnan(d.ci_low));
	/* Drift needs three points and two distinct sequence numbers. */
	double sq[] = { 1, 1, 1 }, y[] = { 1, 2, 3 };
	struct rep_stats_drift dr;
	CU_ASSERT_EQUAL(rep_stats_drift(sq, y, 3, &dr), -1);
	CU_ASSERT_EQUAL(rep_stats_drift(sq, y, 2, &dr), -1);
	CU_ASSERT_FALSE(dr.flagged);
	/* A perfect line is drift with a zero-width interval. */
	double sq2[] = { 1, 2, 3, 4 }, y2[] = { 10, 8, 6, 4 };
	CU_ASSERT_EQUAL(rep_stats_drift(sq2, y2, 4, &dr), 0);
	CU_ASSERT_DOUBLE_EQUAL(dr.slope, -2, 1e-12);
	CU_ASSERT_TRUE(dr.flagged);
	/* Outliers are flagged, never removed: the input is untouched. */
	double x[] = { 1, 1.1, 0.9, 1, 50 }, z[5], scratch[5];
	CU_ASSERT_EQUAL(rep_stats_modified_z(x, 5, z, scratch), 1);
	CU_ASSERT_EQUAL(x[4], 50);
	CU_ASSERT_TRUE(z[4] > STATS_OUTLIER_Z);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void test_median_by_selection(void)
{
	/* The median is found by selection, not sorting: it must equal the
	 * sorted middle for every size, with many ties, sorted and reversed
	 * input alike. */
	uint64_t st = 12345;
	double x[257], y[257];
	for (int round = 0; round < 3000; round++) {
		size_t n = 1 + (size_t)(round % 257);
		for (size_t i = 0; i < n; i++) {
			st = st * 6364136223846793005ull + 1442695040888963407ull;
			int kind = round % 4;
			x[i] = kind == 0 ? (double)(st >> 40) : kind == 1 ? (double)((st >> 33) % 5)
				: kind == 2 ? (double)i : (double)(n - i);
		}
		memcpy(y, x, n * sizeof(double));
		qsort(y, n, sizeof(double), cmp_d);
		double want = n % 2 ? y[n / 2] : (y[n / 2 - 1] + y[n / 2]) / 2;
		struct stats_summary s;
		rep_stats_summarize(x, n, &s);
		CU_ASSERT_EQUAL(s.median, want);
		CU_ASSERT_EQUAL(s.min, y[0]);
		CU_ASSERT_EQUAL(s.max, y[n - 1]);
	}
}

void register_stats_tests(void)
{
	CU_pSuite s = test_suite("statistics (reports/stats.c)");
	test_add(s, "reference values from mpmath and Python's statistics, 1e-9 relative",
		 test_reference_values);
	test_add(s, "t quantiles against a printed table; normal limit", test_printed_table);
	test_add(s, "n = 0 and 1, no spread, zero baseline, degenerate drift", test_edges);
	test_add(s, "medians by selection equal the sorted middle", test_median_by_selection);
}
