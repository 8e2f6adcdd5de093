/*
 * Payload pool and stamps; see payload.h for the contract.
 *
 * Stamps: for stream s, S = mix(s ^ key) and K = mix(S + c); sector i gets
 * w0 = mix(K + i * golden) (splitmix64 on a Weyl sequence) and
 * w1 = (w0 ^ S) * odd, stored little-endian. mix (splitmix64's finalizer)
 * and multiplication by an odd constant are bijections on 64 bits, so
 * (s, i) -> (w0, w1) is injective: equal w0 and w1 give equal S (hence s),
 * then equal i. Three multiplications per 512 bytes: stamping costs a small
 * fraction of the write it feeds, even from a cold pool where the stamps'
 * cache misses dominate (bench/README.md has the costs). A full mix for w1
 * as well, and software prefetching of the stamped lines, were slower.
 *
 * Rejected: a window placed by a hash of (stream, offset) for each block
 * (contents then depend on how a file was cut into blocks, so a file
 * written in 1M blocks cannot be checked in 4K reads, and windows of one
 * file overlap in the pool, repeating content within 64 MiB); fresh prng
 * bytes per block (a full pass over memory per write, measurable at
 * several GB/s).
 */
#include "platform/payload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/prng.h"
#include "platform/platform.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void store_le64(unsigned char *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

/* What one stream needs: its pool rotation and stamp keys. */
struct stream_keys {
	uint64_t s, k;
	size_t base;
};

static struct stream_keys keys_of(const struct payload *p, uint64_t stream)
{
	struct stream_keys sk;
	sk.s = mix64(stream ^ p->key);
	sk.k = mix64(sk.s + 0x632be59bd9b4e019ull);
	size_t rot = p->align > PAYLOAD_ROTATE ? p->align : PAYLOAD_ROTATE;
	sk.base = (size_t)(mix64(sk.s ^ 0xd1b54a32d192ed03ull) % (p->ring / rot)) * rot;
	return sk;
}

static inline void stamp_of(const struct stream_keys *sk, uint64_t sector,
			    unsigned char out[PAYLOAD_STAMP])
{
	uint64_t w0 = mix64(sk->k + sector * GOLDEN);
	uint64_t w1 = (w0 ^ sk->s) * 0xd6e8feb86659fd93ull; /* odd: a bijection */
	store_le64(out, w0);
	store_le64(out + 8, w1);
}

/* Position in the ring of byte `offset` of the stream. */
static inline size_t ring_pos(const struct payload *p, const struct stream_keys *sk,
			      uint64_t offset)
{
	return (size_t)((sk->base + offset % p->ring) % p->ring);
}

/* Write the stamps of [offset, offset + len) of the stream into dst, which
 * holds those bytes (dst[0] is byte `offset`). */
static void stamp_range(const struct stream_keys *sk, uint64_t offset, unsigned char *dst,
			size_t len)
{
	uint64_t end = offset + len;
	uint64_t sec = offset / PAYLOAD_SECTOR;
	uint64_t start = sec * PAYLOAD_SECTOR;
	if (start < offset) {
		/* The first sector began before the range: its stamp's tail, if any. */
		if (offset < start + PAYLOAD_STAMP) {
			unsigned char st[PAYLOAD_STAMP];
			stamp_of(sk, sec, st);
			uint64_t stop = start + PAYLOAD_STAMP < end ? start + PAYLOAD_STAMP : end;
			memcpy(dst, st + (offset - start), (size_t)(stop - offset));
		}
		sec++;
		start += PAYLOAD_SECTOR;
	}
	/* Whole stamps: the common case, kept tight. */
	for (; start + PAYLOAD_STAMP <= end; sec++, start += PAYLOAD_SECTOR)
		stamp_of(sk, sec, dst + (start - offset));
	if (start < end) {
		unsigned char st[PAYLOAD_STAMP];
		stamp_of(sk, sec, st);
		memcpy(dst + (start - offset), st, (size_t)(end - start));
	}
}

int plat_payload_init(struct payload *p, uint64_t seed, size_t max_len)
{
	memset(p, 0, sizeof(*p));
	size_t align = plat_direct_align();
	if (align < PAYLOAD_SECTOR)
		align = PAYLOAD_SECTOR;
	if (max_len == 0)
		max_len = align;
	if (max_len > SIZE_MAX / 4 || align > PAYLOAD_RING)
		return -ENOMEM;
	max_len = (max_len + align - 1) / align * align;
	size_t ring = PAYLOAD_RING;
	void *mem = plat_alloc_io(ring + max_len, align);
	if (!mem)
		return -ENOMEM;
	p->pool = mem;
	p->ring = ring;
	p->max_len = max_len;
	p->align = align;
	p->seed = seed;
	p->key = prng_derive_seed(seed, "payload/key");
	struct prng r;
	prng_seed(&r, prng_derive_seed(seed, "payload/pool"));
	prng_fill(&r, p->pool, ring);
	/* Continue the ring so that no window wraps (dst - src = ring >= n). */
	for (size_t off = 0; off < max_len; off += ring)
		memcpy(p->pool + ring + off, p->pool + off, max_len - off < ring ? max_len - off : ring);
	return 0;
}

void plat_payload_release(struct payload *p)
{
	free(p->pool);
	memset(p, 0, sizeof(*p));
}

const void *plat_payload_block(struct payload *p, uint64_t stream, uint64_t offset, size_t len)
{
	if (!p->pool || len > p->max_len)
		return NULL;
	struct stream_keys sk = keys_of(p, stream);
	unsigned char *win = p->pool + ring_pos(p, &sk, offset);
	stamp_range(&sk, offset, win, len);
	return win;
}

void plat_payload_copy(const struct payload *p, uint64_t stream, uint64_t offset, void *buf,
		  size_t len)
{
	struct stream_keys sk = keys_of(p, stream);
	unsigned char *out = buf;
	uint64_t off = offset;
	size_t left = len;
	while (left) {
		size_t pos = ring_pos(p, &sk, off);
		size_t n = p->ring - pos < left ? p->ring - pos : left;
		memcpy(out, p->pool + pos, n);
		out += n;
		off += n;
		left -= n;
	}
	stamp_range(&sk, offset, buf, len);
}

static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
	if (memcmp(a, b, n) == 0)
		return n;
	size_t i = 0;
	while (a[i] == b[i])
		i++;
	return i;
}

size_t plat_payload_diff(const struct payload *p, uint64_t stream, uint64_t offset, const void *buf,
		    size_t len)
{
	struct stream_keys sk = keys_of(p, stream);
	const unsigned char *in = buf;
	uint64_t end = offset + len, cur = offset;
	while (cur < end) {
		uint64_t sec = cur / PAYLOAD_SECTOR;
		uint64_t start = sec * PAYLOAD_SECTOR;
		uint64_t sec_end = start + PAYLOAD_SECTOR < end ? start + PAYLOAD_SECTOR : end;
		if (cur < start + PAYLOAD_STAMP) {
			unsigned char st[PAYLOAD_STAMP];
			stamp_of(&sk, sec, st);
			uint64_t stop = start + PAYLOAD_STAMP < end ? start + PAYLOAD_STAMP : end;
			size_t n = (size_t)(stop - cur);
			size_t d = first_diff(in + (cur - offset), st + (cur - start), n);
			if (d < n)
				return (size_t)(cur - offset) + d;
			cur = stop;
		}
		if (cur < sec_end) {
			/* base and ring are multiples of the sector: no wrap inside one. */
			size_t n = (size_t)(sec_end - cur);
			size_t d = first_diff(in + (cur - offset), p->pool + ring_pos(p, &sk, cur), n);
			if (d < n)
				return (size_t)(cur - offset) + d;
			cur = sec_end;
		}
	}
	return len;
}

int plat_payload_check(const struct payload *p, uint64_t stream, uint64_t offset, const void *buf,
		  size_t len)
{
	return plat_payload_diff(p, stream, offset, buf, len) == len ? 0 : -EILSEQ;
}

void plat_payload_restamp(const struct payload *p, uint64_t stream, uint64_t offset, void *buf,
		     size_t len)
{
	struct stream_keys sk = keys_of(p, stream);
	stamp_range(&sk, offset, buf, len);
}

/* The expected bytes are built a piece at a time (base copy, then the
 * stamps) and compared: a check, not a hot path. */
#define RESTAMP_PIECE 4096u

size_t plat_payload_diff_restamped(const struct payload *p, uint64_t base_stream,
			      uint64_t base_offset, uint64_t stream, uint64_t offset,
			      const void *buf, size_t len)
{
	struct stream_keys sk = keys_of(p, stream);
	const unsigned char *in = buf;
	unsigned char want[RESTAMP_PIECE];
	for (size_t done = 0; done < len;) {
		size_t n = len - done < RESTAMP_PIECE ? len - done : RESTAMP_PIECE;
		plat_payload_copy(p, base_stream, base_offset + done, want, n);
		stamp_range(&sk, offset + done, want, n);
		size_t d = first_diff(in + done, want, n);
		if (d < n)
			return done + d;
		done += n;
	}
	return len;
}

int plat_payload_check_restamped(const struct payload *p, uint64_t base_stream, uint64_t base_offset,
			    uint64_t stream, uint64_t offset, const void *buf, size_t len)
{
	return plat_payload_diff_restamped(p, base_stream, base_offset, stream, offset, buf, len) == len
		       ? 0
		       : -EILSEQ;
}
