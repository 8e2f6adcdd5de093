/*
 * A seeded random permutation of [0, n) that needs no memory (meta's stat
 * order): a balanced Feistel network on the smallest even number of bits
 * that covers n, with cycle walking (an index that lands at n or beyond
 * is encrypted again until it does not). A bijection on the larger domain,
 * walked this way, is a bijection on [0, n); the domain is less than 4n,
 * so a lookup takes fewer than four walks on average.
 *
 * Rejected: an array shuffled with Fisher-Yates (4 bytes per file: 4 GB for
 * `files: 1000000000`, the parameter's maximum); a multiplicative step
 * i -> a*i + b mod n (neighbours stay neighbours, a poor "random" order).
 */
#ifndef RIG_META_ORDER_H
#define RIG_META_ORDER_H

#include <stdint.h>

struct perm {
	uint64_t n;
	unsigned half;     /* bits per half */
	uint64_t mask;     /* (1 << half) - 1 */
	uint64_t keys[4];  /* round keys */
};

/* n >= 1; the same (n, seed) gives the same permutation everywhere. */
void mod_meta_perm_init(struct perm *p, uint64_t n, uint64_t seed);
/* The i-th element of the permutation, i < n. */
uint64_t mod_meta_perm_at(const struct perm *p, uint64_t i);

#endif
