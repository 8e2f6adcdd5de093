/* xoshiro256** with splitmix64 seeding; see prng.h. */
#include "lib/prng.h"

#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void prng_seed(struct prng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t prng_next(struct prng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double prng_uniform(struct prng *r)
{
	return (double)(prng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t prng_below(struct prng *r, uint64_t n)
{
	/* Lemire, "Fast random integer generation in an interval" (2019). */
	unsigned __int128 m = (unsigned __int128)prng_next(r) * n;
	uint64_t l = (uint64_t)m;
	if (l < n) {
		uint64_t t = -n % n;
		while (l < t) {
			m = (unsigned __int128)prng_next(r) * n;
			l = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

void prng_shuffle_u32(struct prng *r, uint32_t *a, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)prng_below(r, i);
		uint32_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

void prng_fill(struct prng *r, void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n >= 8) {
		uint64_t v = prng_next(r);
		memcpy(p, &v, 8);
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t v = prng_next(r);
		memcpy(p, &v, n);
	}
}

uint64_t prng_derive_seed(uint64_t seed, const char *label)
{
	/* FNV-1a over the label, mixed with the seed through splitmix64. */
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)label; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	uint64_t x = seed ^ h;
	splitmix64(&x);
	return splitmix64(&x);
}
