/* The log-bucketed latency histogram; see histogram.h for the layout. */
#include "lib/histogram.h"

#include <math.h>
#include <string.h>

void hist_reset(struct histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t hist_bucket_low(unsigned i)
{
	if (i < 2 * HIST_SUB)
		return i;
	unsigned shift = (i >> HIST_SUB_BITS) - 1;
	return (uint64_t)(i - (shift << HIST_SUB_BITS)) << shift;
}

uint64_t hist_bucket_width(unsigned i)
{
	if (i < 2 * HIST_SUB)
		return 1;
	return (uint64_t)1 << ((i >> HIST_SUB_BITS) - 1);
}

void hist_merge(struct histogram *dst, const struct histogram *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_rank(uint64_t count, double p)
{
	if (!count)
		return 0;
	if (p <= 0)
		return 1;
	if (p >= 100)
		return count;
	double x = (double)count * p / 100.0;
	/* Forgive the last bits of rounding: 99.9% of 100000 is rank 99900,
	 * not 99901 because x came out as 99900.00000000001. */
	double r = ceil(x - x * 1e-12);
	if (r < 1)
		return 1;
	if (r > (double)count)
		return count;
	return (uint64_t)r;
}

double hist_percentile(const struct histogram *h, double p)
{
	uint64_t rank = hist_rank(h->count, p);
	if (!rank)
		return 0;
	uint64_t seen = 0;
	unsigned i = 0;
	for (; i < HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			break;
	}
	if (i == HIST_BUCKETS)
		return (double)h->max; /* counts disagree with count: cannot happen */
	double v = (double)hist_bucket_low(i) + (double)(hist_bucket_width(i) - 1) / 2.0;
	if (v < (double)h->min)
		v = (double)h->min;
	if (v > (double)h->max)
		v = (double)h->max;
	return v;
}
