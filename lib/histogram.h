/*
 * A latency histogram with bounded relative error (HdrHistogram's layout,
 * Gil Tene): values are bucketed by their power of two, and each power of
 * two is split into 128 linear sub-buckets. Values below 256 are exact;
 * above, a bucket is at most 1/128 of its lower bound wide, so the
 * midpoint it reports is within 0.4% of any value in it (well inside the
 * 1% the reports promise).
 *
 * Recording is O(1) and branch-light (one count-leading-zeros, one shift,
 * one increment) and touches one cache line, so the engines record every
 * completion. A histogram is about 58 KiB; each I/O thread keeps its own
 * and they are merged at the end (no sharing, no atomics).
 *
 * Rejected: keeping every sample and sorting (memory grows with the run,
 * and a 10 s run at 1M IOPS is 80 MB of samples); fixed-width buckets
 * (either coarse at low latency or huge for the tail); t-digest or other
 * sketches (more arithmetic per record, error harder to state).
 *
 * Values are unsigned 64-bit in any unit (the engines use nanoseconds).
 */
#ifndef RIG_HISTOGRAM_H
#define RIG_HISTOGRAM_H

#include <stdint.h>

#define HIST_SUB_BITS 7                    /* 128 sub-buckets per power of two */
#define HIST_SUB (1u << HIST_SUB_BITS)
/* Exact below 2*HIST_SUB; then one row of HIST_SUB buckets per further
 * power of two up to 2^64: (64 - HIST_SUB_BITS + 1) rows in all. */
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct histogram {
	uint64_t count;
	uint64_t min;   /* UINT64_MAX while empty */
	uint64_t max;
	uint64_t counts[HIST_BUCKETS];
};

/* Empty the histogram (also the initializer: a histogram needs hist_reset
 * before first use). */
void hist_reset(struct histogram *h);

/* The bucket of value v. */
static inline unsigned hist_index(uint64_t v)
{
	unsigned msb = 63u - (unsigned)__builtin_clzll(v | 1);
	unsigned shift = msb > HIST_SUB_BITS ? msb - HIST_SUB_BITS : 0;
	return (shift << HIST_SUB_BITS) + (unsigned)(v >> shift);
}

static inline void hist_record(struct histogram *h, uint64_t v)
{
	h->counts[hist_index(v)]++;
	h->count++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* The smallest value of bucket i and the bucket's width. */
uint64_t hist_bucket_low(unsigned i);
uint64_t hist_bucket_width(unsigned i);

/* Add src's counts into dst. */
void hist_merge(struct histogram *dst, const struct histogram *src);

/*
 * The p-th percentile (0 <= p <= 100) by the nearest-rank definition: the
 * value with rank ceil(p/100 * count) in sorted order (rank 1 for p = 0).
 * Returned as its bucket's midpoint, clamped to [min, max]. 0 when empty.
 */
double hist_percentile(const struct histogram *h, double p);

/* The nearest rank hist_percentile uses (1..count), for callers that
 * compare against sorted data; 0 when count is 0. */
uint64_t hist_rank(uint64_t count, double p);

#endif
