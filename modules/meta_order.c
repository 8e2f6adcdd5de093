/* A seeded permutation without storage; see meta_order.h. */
#include "modules/meta_order.h"

#include "lib/prng.h"

/* The round function: a 64-bit mixer (splitmix64's finalizer) of the half
 * and the round key, cut to a half's width. */
static uint64_t mix(uint64_t x, uint64_t k)
{
	x ^= k;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void mod_meta_perm_init(struct perm *p, uint64_t n, uint64_t seed)
{
	unsigned bits = 2;
	while (bits < 64 && (1ull << bits) < n)
		bits++;
	bits += bits & 1;
	p->n = n;
	p->half = bits / 2;
	p->mask = (1ull << p->half) - 1;
	struct prng r;
	prng_seed(&r, seed);
	for (int i = 0; i < 4; i++)
		p->keys[i] = prng_next(&r);
}

static uint64_t encrypt(const struct perm *p, uint64_t x)
{
	uint64_t l = x >> p->half, r = x & p->mask;
	for (int i = 0; i < 4; i++) {
		uint64_t t = l ^ (mix(r, p->keys[i]) & p->mask);
		l = r;
		r = t;
	}
	return (l << p->half) | r;
}

uint64_t mod_meta_perm_at(const struct perm *p, uint64_t i)
{
	if (p->n <= 1)
		return 0;
	uint64_t x = i;
	do
		x = encrypt(p, x);
	while (x >= p->n);
	return x;
}
