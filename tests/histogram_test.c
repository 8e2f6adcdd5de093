/*
 * Tests of lib/histogram.c: the bucket layout (every value falls in
 * its bucket, buckets are at most 1/128 of their value wide), percentiles
 * against a sorted reference within 1% for uniform, exponential,
 * log-normal and heavy-tailed (Pareto) samples, merging, and the edges
 * (empty, zero, one value, the largest uint64).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/histogram.h"
#include "lib/prng.h"
#include "test.h"

static struct histogram *new_hist(void)
{
	struct histogram *h = malloc(sizeof(*h));
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	hist_reset(h);
	return h;
}

/* v falls in bucket hist_index(v), whose width is small against v. */
static int bucket_ok(uint64_t v)
{
	unsigned i = hist_index(v);
	if (i >= HIST_BUCKETS)
		return 0;
	uint64_t lo = hist_bucket_low(i), w = hist_bucket_width(i);
	if (v < lo || v - lo >= w)
		return 0;
	if (i < 2 * HIST_SUB)
		return w == 1 && lo == v;
	return (double)w / (double)lo <= 1.0 / 128 + 1e-12;
}

static void test_buckets(void)
{
	for (uint64_t v = 0; v < 70000; v++)
		if (!bucket_ok(v))
			CU_FAIL_FATAL("small value outside its bucket");
	struct prng r;
	prng_seed(&r, 1);
	for (int k = 0; k < 200000; k++) {
		uint64_t v = prng_next(&r) >> (k % 64);
		if (!bucket_ok(v))
			CU_FAIL_FATAL("random value outside its bucket");
	}
	for (int b = 0; b < 64; b++) {
		uint64_t p = (uint64_t)1 << b;
		CU_ASSERT_TRUE(bucket_ok(p));
		CU_ASSERT_TRUE(bucket_ok(p - 1));
		CU_ASSERT_TRUE(bucket_ok(p + 1));
	}
	CU_ASSERT_TRUE(bucket_ok(UINT64_MAX));
	CU_ASSERT_EQUAL(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
	/* Buckets tile the line: each starts where the previous ends. */
	for (unsigned i = 1; i < HIST_BUCKETS; i++) {
		if (hist_bucket_low(i) != hist_bucket_low(i - 1) + hist_bucket_width(i - 1))
			CU_FAIL_FATAL("buckets do not tile");
	}
}

static void test_rank(void)
{
	CU_ASSERT_EQUAL(hist_rank(0, 50), 0);
	CU_ASSERT_EQUAL(hist_rank(1, 50), 1);
	CU_ASSERT_EQUAL(hist_rank(10, 50), 5);
	CU_ASSERT_EQUAL(hist_rank(11, 50), 6);
	CU_ASSERT_EQUAL(hist_rank(100000, 99.9), 99900);
	CU_ASSERT_EQUAL(hist_rank(1000, 99.9), 999);
	CU_ASSERT_EQUAL(hist_rank(100, 0), 1);
	CU_ASSERT_EQUAL(hist_rank(100, 100), 100);
	CU_ASSERT_EQUAL(hist_rank(3, 99), 3);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

enum dist { D_UNIFORM, D_EXP, D_LOGNORMAL, D_PARETO, D_SMALL_INTS };

static uint64_t draw(struct prng *r, enum dist d)
{
	double u = prng_uniform(r);
	switch (d) {
	case D_UNIFORM:
		return 1000 + (uint64_t)(u * 9e6);
	case D_EXP: /* mean 100 us in ns */
		return (uint64_t)(-log(1.0 - u) * 1e5);
	case D_LOGNORMAL: {
		double u2 = prng_uniform(r);
		double z = sqrt(-2 * log(1.0 - u)) * cos(2 * M_PI * u2);
		return (uint64_t)exp(10.0 + 1.5 * z);
	}
	case D_PARETO: /* alpha 1.1 from 20 us: a heavy tail to seconds */
		return (uint64_t)(2e4 / pow(1.0 - u, 1.0 / 1.1));
	case D_SMALL_INTS:
		return (uint64_t)(u * 2 * HIST_SUB); /* 0..255: the exact range */
	}
	return 0;
}

static void check_dist(enum dist d, const char *name)
{
	enum { N = 200000 };
	static const double ps[] = { 0, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100 };
	uint64_t *v = malloc(N * sizeof(*v));
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	struct histogram *h = new_hist();
	struct prng r;
	prng_seed(&r, 7 + (uint64_t)d);
	for (int i = 0; i < N; i++) {
		v[i] = draw(&r, d);
		hist_record(h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	CU_ASSERT_EQUAL(h->count, N);
	CU_ASSERT_EQUAL(h->min, v[0]);
	CU_ASSERT_EQUAL(h->max, v[N - 1]);
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		double ref = (double)v[hist_rank(N, ps[k]) - 1];
		double got = hist_percentile(h, ps[k]);
		double tol = d == D_SMALL_INTS ? 0 : ref * 0.01;
		if (fabs(got - ref) > tol) {
			char msg[160];
			snprintf(msg, sizeof(msg), "%s p%g: %.1f, sorted reference %.1f", name, ps[k],
				 got, ref);
			CU_assertImplementation(CU_FALSE, __LINE__, msg, __FILE__, "", CU_FALSE);
		}
	}
	free(h);
	free(v);
}

static void test_uniform(void)
{
	check_dist(D_UNIFORM, "uniform");
}

static void test_exponential(void)
{
	check_dist(D_EXP, "exponential");
}

static void test_lognormal(void)
{
	check_dist(D_LOGNORMAL, "log-normal");
}

static void test_pareto(void)
{
	check_dist(D_PARETO, "pareto");
}

static void test_small_ints(void)
{
	/* Below 256 the histogram is exact. */
	check_dist(D_SMALL_INTS, "small integers");
}

static void test_merge(void)
{
	struct histogram *all = new_hist(), *merged = new_hist();
	struct histogram *part[4];
	for (int k = 0; k < 4; k++)
		part[k] = new_hist();
	struct prng r;
	prng_seed(&r, 99);
	for (int i = 0; i < 50000; i++) {
		uint64_t x = draw(&r, (enum dist)(i % 4));
		hist_record(all, x);
		hist_record(part[i % 3 == 0 ? 0 : 1 + i % 3], x);
	}
	/* part[3] stays empty: merging it changes nothing. */
	for (int k = 0; k < 4; k++)
		hist_merge(merged, part[k]);
	CU_ASSERT_EQUAL(merged->count, all->count);
	CU_ASSERT_EQUAL(merged->min, all->min);
	CU_ASSERT_EQUAL(merged->max, all->max);
	CU_ASSERT_EQUAL(memcmp(merged->counts, all->counts, sizeof(all->counts)), 0);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(merged, 99), hist_percentile(all, 99), 0);
	for (int k = 0; k < 4; k++)
		free(part[k]);
	free(all);
	free(merged);
}

static void test_edges(void)
{
	struct histogram *h = new_hist();
	CU_ASSERT_EQUAL(h->count, 0);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 50), 0, 0);

	hist_record(h, 0);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 0), 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 100), 0, 0);

	hist_reset(h);
	hist_record(h, 123456789);
	/* One value: every percentile is that value exactly (clamped). */
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 0), 123456789, 0);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 50), 123456789, 0);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 99.9), 123456789, 0);

	hist_reset(h);
	hist_record(h, UINT64_MAX);
	hist_record(h, 1);
	CU_ASSERT_EQUAL(h->count, 2);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 50), 1, 0);
	/* The top bucket's midpoint: within 1/256 of the value. */
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 100), (double)UINT64_MAX,
			       (double)UINT64_MAX / 256);

	/* Two separated clusters: the median jumps between them at 50%. */
	hist_reset(h);
	for (int i = 0; i < 500; i++)
		hist_record(h, 1000);
	for (int i = 0; i < 500; i++)
		hist_record(h, 1000000);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 50), 1000, 1000 * 0.004);
	CU_ASSERT_DOUBLE_EQUAL(hist_percentile(h, 50.1), 1000000, 1000000 * 0.004);
	free(h);
}

void register_histogram_tests(void)
{
	CU_pSuite s = test_suite("histogram");
	test_add(s, "buckets hold their values, width <= 1/128", test_buckets);
	test_add(s, "nearest rank", test_rank);
	test_add(s, "percentiles: uniform within 1%", test_uniform);
	test_add(s, "percentiles: exponential within 1%", test_exponential);
	test_add(s, "percentiles: log-normal within 1%", test_lognormal);
	test_add(s, "percentiles: pareto (heavy tail) within 1%", test_pareto);
	test_add(s, "percentiles: small integers exact", test_small_ints);
	test_add(s, "merge equals one histogram", test_merge);
	test_add(s, "edges: empty, zero, one value, UINT64_MAX", test_edges);
}
