/*
 * The seeded pseudo-random generator behind every random choice in rig
 * (orders, file sizes, payload, churn selection): xoshiro256** seeded
 * through splitmix64 (Blackman and Vigna). Fast, small state, and the same
 * sequence on every platform, so a run is repeatable from its seed.
 */
#ifndef RIG_PRNG_H
#define RIG_PRNG_H

#include <stddef.h>
#include <stdint.h>

struct prng {
	uint64_t s[4];
};

void prng_seed(struct prng *r, uint64_t seed);
uint64_t prng_next(struct prng *r);
/* Uniform in [0, 1), 53 bits. */
double prng_uniform(struct prng *r);
/* Uniform in [0, n), unbiased (Lemire's method); n > 0. */
uint64_t prng_below(struct prng *r, uint64_t n);
/* Fisher-Yates shuffle of n uint32_t. */
void prng_shuffle_u32(struct prng *r, uint32_t *a, size_t n);
/* Fill buf with pseudo-random bytes (payload). */
void prng_fill(struct prng *r, void *buf, size_t n);
/* A seed for a sub-stream named by label (e.g. "order/1.2/rep3"): a hash of
 * the seed and the label, so streams are independent and reproducible. */
uint64_t prng_derive_seed(uint64_t seed, const char *label);

#endif
