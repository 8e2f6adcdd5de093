/*
 * Tests of lib/units.c: the unit grammar round-trips (parse -> format ->
 * parse gives the same value, and formatting is canonical), malformed text
 * is refused, and the size distributions draw inside their bounds with the
 * analytic mean and quantiles.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "dist_format.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

void register_units_tests(void);

/* A small local generator, so the tests depend on nothing else. */
static uint64_t mix_state = 0x9e3779b97f4a7c15ull;

static uint64_t mix_next(void)
{
	uint64_t z = (mix_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double mix_uniform(void)
{
	return (double)(mix_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* --- sizes --- */

static void test_size_canonical(void)
{
	static const struct { const char *in; uint64_t v; const char *canon; } cases[] = {
		{ "0", 0, "0" },
		{ "512", 512, "512" },
		{ "1000", 1000, "1KB" },
		{ "1500", 1500, "1500" },
		{ "4K", 4096, "4K" },
		{ "4096", 4096, "4K" },
		{ "1536M", 1536ull << 20, "1536M" },
		{ "1024M", 1ull << 30, "1G" },
		{ "4KB", 4000, "4KB" },
		{ "1MB", 1000000, "1MB" },
		{ "2GB", 2000000000ull, "2GB" },
		{ "1TB", 1000000000000ull, "1TB" },
		{ "1T", 1ull << 40, "1T" },
		{ "2048KB", 2048000, "2000K" },
		{ "0004K", 4096, "4K" },
		{ "1000000000", 1000000000ull, "1GB" },
		{ "1024000", 1024000, "1000K" },
		{ "16777215T", 16777215ull << 40, "16777215T" },
		{ "18446744073709551615", UINT64_MAX, "18446744073709551615" },
	};
	for (size_t i = 0; i < N(cases); i++) {
		uint64_t v = 1;
		const char *why = NULL;
		CU_ASSERT_EQUAL_FATAL(units_parse_size(cases[i].in, &v, &why), 0);
		CU_ASSERT_EQUAL(v, cases[i].v);
		struct strbuf sb = STRBUF_INIT;
		units_format_size(&sb, v);
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i].canon);
		sb_release(&sb);
	}
}

static void roundtrip_size(uint64_t v)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t back = v + 1;
	const char *why = NULL;
	units_format_size(&sb, v);
	CU_ASSERT_EQUAL(units_parse_size(sb.buf, &back, &why), 0);
	CU_ASSERT_EQUAL(back, v);
	sb_release(&sb);
}

static void test_size_roundtrip(void)
{
	for (int shift = 0; shift < 64; shift++) {
		roundtrip_size(1ull << shift);
		roundtrip_size((1ull << shift) - 1);
		roundtrip_size((1ull << shift) * 3 / 2);
	}
	uint64_t p10 = 1;
	for (int e = 0; e < 19; e++, p10 *= 10) {
		roundtrip_size(p10);
		roundtrip_size(p10 * 7);
	}
	roundtrip_size(UINT64_MAX);
	for (int i = 0; i < 20000; i++) {
		uint64_t r = mix_next();
		roundtrip_size(r >> (r & 63));
		roundtrip_size((r & 0xffff) << 20);
		roundtrip_size((r & 0xffff) * 1000000ull);
	}
}

static void test_size_reject(void)
{
	static const char *const bad[] = {
		"", "-1", "+1", "1.5G", "4k", "4 K", " 4K", "4K ", "K", "4KBB", "0x10", "4KiB",
		"4P", "1e6", "18446744073709551616", "16777216T", "99999999999999999999K",
		"4Kb", "1,5M",
	};
	for (size_t i = 0; i < N(bad); i++) {
		uint64_t v;
		const char *why = NULL;
		CU_ASSERT_NOT_EQUAL(units_parse_size(bad[i], &v, &why), 0);
		CU_ASSERT_PTR_NOT_NULL(why);
	}
}

/* --- durations --- */

static void test_duration_canonical(void)
{
	static const struct { const char *in; uint64_t ns; const char *canon; } cases[] = {
		{ "500ms", 500000000ull, "500ms" },
		{ "10s", 10000000000ull, "10s" },
		{ "5m", 300000000000ull, "5m" },
		{ "1h", 3600000000000ull, "1h" },
		{ "90s", 90000000000ull, "90s" },
		{ "60s", 60000000000ull, "1m" },
		{ "1500us", 1500000ull, "1500us" },
		{ "1000us", 1000000ull, "1ms" },
		{ "7ns", 7, "7ns" },
		{ "0s", 0, "0s" },
		{ "0ms", 0, "0s" },
		{ "120m", 7200000000000ull, "2h" },
	};
	for (size_t i = 0; i < N(cases); i++) {
		uint64_t v = 1;
		const char *why = NULL;
		CU_ASSERT_EQUAL_FATAL(units_parse_duration(cases[i].in, &v, &why), 0);
		CU_ASSERT_EQUAL(v, cases[i].ns);
		struct strbuf sb = STRBUF_INIT;
		units_format_duration(&sb, v);
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i].canon);
		sb_release(&sb);
	}
}

static void test_duration_roundtrip(void)
{
	for (int i = 0; i < 20000; i++) {
		uint64_t r = mix_next();
		uint64_t vals[] = { r, r >> (r & 63), (r & 0xfff) * 1000000ull,
				    (r & 0xfff) * 1000000000ull, (r & 0xff) * 60000000000ull };
		for (size_t j = 0; j < N(vals); j++) {
			struct strbuf sb = STRBUF_INIT;
			uint64_t back = vals[j] + 1;
			const char *why;
			units_format_duration(&sb, vals[j]);
			CU_ASSERT_EQUAL(units_parse_duration(sb.buf, &back, &why), 0);
			CU_ASSERT_EQUAL(back, vals[j]);
			sb_release(&sb);
		}
	}
}

static void test_duration_reject(void)
{
	static const char *const bad[] = {
		"10", "0", "", "s", "1.5s", "10 s", "10sec", "-1s", "10S", "10min", "1d",
		"99999999999h", "18446744073709551616ns", "+5s",
	};
	for (size_t i = 0; i < N(bad); i++) {
		uint64_t v;
		const char *why = NULL;
		CU_ASSERT_NOT_EQUAL(units_parse_duration(bad[i], &v, &why), 0);
		CU_ASSERT_PTR_NOT_NULL(why);
	}
	uint64_t v;
	const char *why = NULL;
	units_parse_duration("10", &v, &why);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "needs a unit"));
}

/* --- percentages --- */

static void test_percent(void)
{
	static const struct { const char *in; double v; const char *canon; } cases[] = {
		{ "50%", 50, "50%" }, { "12.5%", 12.5, "12.5%" }, { "100%", 100, "100%" },
		{ "0.0001%", 0.0001, "0.0001%" }, { "05%", 5, "5%" }, { "5.0%", 5, "5%" },
		{ ".5%", 0.5, "0.5%" },
	};
	for (size_t i = 0; i < N(cases); i++) {
		double v = -1;
		const char *why;
		CU_ASSERT_EQUAL_FATAL(units_parse_percent(cases[i].in, &v, &why), 0);
		CU_ASSERT_DOUBLE_EQUAL(v, cases[i].v, 0);
		struct strbuf sb = STRBUF_INIT;
		units_format_percent(&sb, v);
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i].canon);
		sb_release(&sb);
	}
	for (int i = 0; i < 20000; i++) {
		double vals[] = { mix_uniform() * 100, (double)(mix_next() % 10001) / 100,
				  100.0 / (double)(1 + mix_next() % 1000), 1e-7 * (double)(mix_next() % 1000) };
		for (size_t j = 0; j < N(vals); j++) {
			struct strbuf sb = STRBUF_INIT;
			double back = -1;
			const char *why;
			units_format_percent(&sb, vals[j]);
			CU_ASSERT_EQUAL(units_parse_percent(sb.buf, &back, &why), 0);
			CU_ASSERT(back == vals[j]);
			sb_release(&sb);
		}
	}
	static const char *const bad[] = { "50", "%", "-5%", "5 %", "5%%", "1e2%", "abc%", "", "50%x",
					   ".%" };
	for (size_t i = 0; i < N(bad); i++) {
		double v;
		const char *why = NULL;
		CU_ASSERT_NOT_EQUAL(units_parse_percent(bad[i], &v, &why), 0);
		CU_ASSERT_PTR_NOT_NULL(why);
	}
}

/* --- plain numbers and ranges --- */

static void test_uint_and_range(void)
{
	uint64_t v, lo, hi;
	const char *why;
	CU_ASSERT_EQUAL(units_parse_uint("0", &v, &why), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(units_parse_uint("18446744073709551615", &v, &why), 0);
	CU_ASSERT_EQUAL(v, UINT64_MAX);
	static const char *const bad[] = { "18446744073709551616", "1.0", "1e6", "-1", "", "0x1",
					   "1K", " 1", "1_000" };
	for (size_t i = 0; i < N(bad); i++)
		CU_ASSERT_NOT_EQUAL(units_parse_uint(bad[i], &v, &why), 0);

	CU_ASSERT_EQUAL(units_parse_size_range("2M..2G", &lo, &hi, &why), 0);
	CU_ASSERT_EQUAL(lo, 2ull << 20);
	CU_ASSERT_EQUAL(hi, 2ull << 30);
	CU_ASSERT_EQUAL(units_parse_size_range("1K .. 1K", &lo, &hi, &why), 0);
	CU_ASSERT_EQUAL(lo, hi);
	static const char *const badr[] = { "2G..2M", "..2G", "2M..", "2M...2G", "2M", "2M..2X",
					    "1.5M..2M" };
	for (size_t i = 0; i < N(badr); i++)
		CU_ASSERT_NOT_EQUAL(units_parse_size_range(badr[i], &lo, &hi, &why), 0);
}

/* --- distributions --- */

static void test_dist_parse(void)
{
	static const struct { const char *in; enum dist_kind k; uint64_t lo, hi; const char *canon; } ok[] = {
		{ "1G", DIST_FIXED, 1ull << 30, 1ull << 30, "1G" },
		{ "2M..2G", DIST_LOGUNIFORM, 2ull << 20, 2ull << 30, "2M..2G" },
		{ "inverse-square(1K..20G)", DIST_INVSQUARE, 1024, 20ull << 30, "inverse-square(1K..20G)" },
		{ "inverse-square(1000..1MB)", DIST_INVSQUARE, 1000, 1000000, "inverse-square(1KB..1MB)" },
		{ "0", DIST_FIXED, 0, 0, "0" },
	};
	for (size_t i = 0; i < N(ok); i++) {
		struct size_dist d;
		const char *why = NULL;
		CU_ASSERT_EQUAL_FATAL(units_parse_dist(ok[i].in, &d, &why), 0);
		CU_ASSERT_EQUAL(d.kind, ok[i].k);
		CU_ASSERT_EQUAL(d.lo, ok[i].lo);
		CU_ASSERT_EQUAL(d.hi, ok[i].hi);
		struct strbuf sb = STRBUF_INIT;
		dist_format(&sb, &d);
		CU_ASSERT_STRING_EQUAL(sb.buf, ok[i].canon);
		struct size_dist back;
		CU_ASSERT_EQUAL(units_parse_dist(sb.buf, &back, &why), 0);
		CU_ASSERT_EQUAL(back.kind, d.kind);
		CU_ASSERT_EQUAL(back.lo, d.lo);
		CU_ASSERT_EQUAL(back.hi, d.hi);
		sb_release(&sb);
		units_dist_release(&d);
	}
	static const char *const bad[] = {
		"inverse-square(0..1M)", "0..1M", "inverse-square(1K..1M", "uniform(1K..2K)",
		"inverse-square(2M..1M)", "inverse-square()", "1K..", "", "lots",
	};
	for (size_t i = 0; i < N(bad); i++) {
		struct size_dist d;
		const char *why = NULL;
		CU_ASSERT_NOT_EQUAL(units_parse_dist(bad[i], &d, &why), 0);
		CU_ASSERT_PTR_NOT_NULL(why);
	}

	const char *items[] = { "4M", "1M", "16M" };
	struct size_dist d;
	size_t badi = 99;
	const char *why;
	CU_ASSERT_EQUAL_FATAL(units_dist_list(items, 3, &d, &badi, &why), 0);
	CU_ASSERT_EQUAL(d.kind, DIST_LIST);
	CU_ASSERT_EQUAL(d.lo, 1u << 20);
	CU_ASSERT_EQUAL(d.hi, 16u << 20);
	CU_ASSERT_EQUAL(units_dist_draw(&d, 0.3, 0), 4u << 20);
	CU_ASSERT_EQUAL(units_dist_draw(&d, 0.3, 4), 1u << 20);
	CU_ASSERT_DOUBLE_EQUAL(units_dist_mean(&d), 7.0 * (1 << 20), 1e-6);
	struct strbuf sb = STRBUF_INIT;
	dist_format(&sb, &d);
	CU_ASSERT_STRING_EQUAL(sb.buf, "[4M, 1M, 16M]");
	sb_release(&sb);
	units_dist_release(&d);
	units_dist_release(&d); /* idempotent */
	const char *bitems[] = { "4M", "4Q" };
	CU_ASSERT_NOT_EQUAL(units_dist_list(bitems, 2, &d, &badi, &why), 0);
	CU_ASSERT_EQUAL(badi, 1);
	CU_ASSERT_NOT_EQUAL(units_dist_list(bitems, 0, &d, &badi, &why), 0);
}

static void test_dist_draw_bounds(void)
{
	const char *specs[] = { "1G", "2M..2G", "inverse-square(1K..20G)", "inverse-square(1..2)",
				"1K..1K", "inverse-square(4K..4K)", "1..18446744073709551615" };
	for (size_t i = 0; i < N(specs); i++) {
		struct size_dist d;
		const char *why;
		CU_ASSERT_EQUAL_FATAL(units_parse_dist(specs[i], &d, &why), 0);
		CU_ASSERT_EQUAL(units_dist_draw(&d, 0.0, 0), d.lo);
		double edge[] = { 1e-300, 0.5, 1.0 - 1e-16, 0.9999999 };
		for (size_t j = 0; j < N(edge); j++) {
			uint64_t x = units_dist_draw(&d, edge[j], j);
			CU_ASSERT(x >= d.lo && x <= d.hi);
		}
		for (int k = 0; k < 100000; k++) {
			uint64_t x = units_dist_draw(&d, mix_uniform(), (size_t)k);
			if (x < d.lo || x > d.hi) {
				CU_FAIL("draw out of bounds");
				break;
			}
		}
		units_dist_release(&d);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_invsquare_stats(void)
{
	struct size_dist d;
	const char *why;
	CU_ASSERT_EQUAL_FATAL(units_parse_dist("inverse-square(1K..20G)", &d, &why), 0);
	double lo = 1024, hi = 20.0 * 1073741824.0;
	double mean = units_dist_mean(&d);
	CU_ASSERT_DOUBLE_EQUAL(mean, log(hi / lo) / (1 / lo - 1 / hi), 1e-6);
	CU_ASSERT(mean > 17000 && mean < 17500); /* "about 17 KB" */

	/* The heavy tail makes a plain sample mean noisy (and a uniform grid
	 * of u misses the tail), so integrate the drawn sizes over u on a grid
	 * that is dense near 1: u = 1 - exp(-t), du = exp(-t) dt. */
	double sum = 0, h = 0.001;
	for (double t = 0; t < 40; t += h) {
		double u0 = 1 - exp(-t), u1 = 1 - exp(-(t + h));
		sum += 0.5 * (u1 - u0) * ((double)units_dist_draw(&d, u0, 0) +
					  (double)units_dist_draw(&d, u1, 0));
	}
	CU_ASSERT_DOUBLE_EQUAL(sum / mean, 1.0, 0.01);

	/* Quantiles of random draws against the inverse CDF. */
	const size_t n = 1000000, m = 1000000;
	uint64_t *xs = calloc(m, sizeof(uint64_t));
	CU_ASSERT_PTR_NOT_NULL_FATAL(xs);
	for (size_t i = 0; i < m; i++)
		xs[i] = units_dist_draw(&d, mix_uniform(), i);
	qsort(xs, m, sizeof(uint64_t), cmp_u64);
	const double qs[] = { 0.1, 0.25, 0.5, 0.75, 0.9, 0.95 };
	for (size_t i = 0; i < N(qs); i++) {
		double want = 1.0 / (1 / lo - qs[i] * (1 / lo - 1 / hi));
		double got = (double)xs[(size_t)(qs[i] * (double)m)];
		CU_ASSERT_DOUBLE_EQUAL(got / want, 1.0, 0.03);
	}
	CU_ASSERT_DOUBLE_EQUAL(1.0 / (1 / lo - 0.5 * (1 / lo - 1 / hi)), 2048, 1); /* median ~ 2*lo */
	free(xs);
	units_dist_release(&d);

	/* A light tail: the plain sample mean converges. */
	CU_ASSERT_EQUAL_FATAL(units_parse_dist("inverse-square(1K..1M)", &d, &why), 0);
	sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (double)units_dist_draw(&d, mix_uniform(), i);
	CU_ASSERT_DOUBLE_EQUAL(sum / (double)n / units_dist_mean(&d), 1.0, 0.02);
	units_dist_release(&d);
}

static void test_loguniform_stats(void)
{
	struct size_dist d;
	const char *why;
	CU_ASSERT_EQUAL_FATAL(units_parse_dist("2M..2G", &d, &why), 0);
	double lo = 2.0 * 1048576, hi = 2.0 * 1073741824;
	CU_ASSERT_DOUBLE_EQUAL(units_dist_mean(&d), (hi - lo) / log(hi / lo), 1e-3);
	const size_t n = 400000;
	double sum = 0, below_geo = 0, geo = sqrt(lo * hi);
	for (size_t i = 0; i < n; i++) {
		uint64_t x = units_dist_draw(&d, mix_uniform(), i);
		sum += (double)x;
		below_geo += (double)x < geo;
	}
	CU_ASSERT_DOUBLE_EQUAL(sum / (double)n / units_dist_mean(&d), 1.0, 0.02);
	CU_ASSERT_DOUBLE_EQUAL(below_geo / (double)n, 0.5, 0.01); /* median = geometric mean */
	CU_ASSERT_EQUAL(units_dist_draw(&d, 0.5, 0), (uint64_t)llround(geo));
	units_dist_release(&d);
}

/* --- near misses: a suggestion that parses, or none --- */

static void test_suggest(void)
{
	static const struct { const char *in; enum units_kind k; const char *want; } cases[] = {
		{ "4k", UNITS_SIZE, "4K" },
		{ "1mb", UNITS_SIZE, "1MB" },
		{ "1Mb", UNITS_SIZE, "1MB" },
		{ "2gib", UNITS_SIZE, "2G" },
		{ "1KiB", UNITS_SIZE, "1K" },
		{ "512B", UNITS_SIZE, "512" },
		{ "4 K", UNITS_SIZE, "4K" },
		{ "2m..2g", UNITS_DIST, "2M..2G" },
		{ "inverse-square(1k..1m)", UNITS_DIST, "inverse-square(1K..1M)" },
		{ "10S", UNITS_DURATION, "10s" },
		{ "500MS", UNITS_DURATION, "500ms" },
		{ "5 min", UNITS_DURATION, "5m" },
		{ "2sec", UNITS_DURATION, "2s" },
		{ "1hours", UNITS_DURATION, "1h" },
		/* no suggestion: right already, not a unit mistake, or still wrong */
		{ "4K", UNITS_SIZE, NULL },
		{ "1.5g", UNITS_SIZE, NULL },
		{ "4x", UNITS_SIZE, NULL },
		{ "10", UNITS_DURATION, NULL },
		{ "big", UNITS_SIZE, NULL },
		{ "4kk", UNITS_SIZE, NULL },
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		int r = units_suggest(&sb, cases[i].in, cases[i].k);
		if (cases[i].want) {
			struct strbuf want = STRBUF_INIT;
			sb_addf(&want, " (did you mean '%s'?)", cases[i].want);
			if (strcmp(sb.buf, want.buf))
				printf("\n'%s': got '%s'\n", cases[i].in, sb.buf);
			CU_ASSERT_EQUAL(r, 1);
			CU_ASSERT_STRING_EQUAL(sb.buf, want.buf);
			sb_release(&want);
		} else {
			if (r)
				printf("\n'%s': unexpected '%s'\n", cases[i].in, sb.buf);
			CU_ASSERT_EQUAL(r, 0);
			CU_ASSERT_STRING_EQUAL(sb.buf, "");
		}
		sb_release(&sb);
	}
}

void register_units_tests(void)
{
	CU_pSuite s = test_suite("units");
	test_add(s, "size: canonical text", test_size_canonical);
	test_add(s, "size: round trip", test_size_roundtrip);
	test_add(s, "size: rejected text", test_size_reject);
	test_add(s, "near misses: did you mean", test_suggest);
	test_add(s, "duration: canonical text", test_duration_canonical);
	test_add(s, "duration: round trip", test_duration_roundtrip);
	test_add(s, "duration: rejected text (bare numbers too)", test_duration_reject);
	test_add(s, "percent: canonical, round trip, rejected", test_percent);
	test_add(s, "plain numbers and ranges", test_uint_and_range);
	test_add(s, "distributions: parse, format, lists", test_dist_parse);
	test_add(s, "distributions: draws stay in bounds", test_dist_draw_bounds);
	test_add(s, "inverse-square: analytic mean and quantiles", test_invsquare_stats);
	test_add(s, "log-uniform: mean and median", test_loguniform_stats);
}
