/*
 * Tests of platform/payload.c: the bytes are never zeros or constant,
 * differ per stream and per sector, are reproducible from the seed and
 * independent of how they are cut into blocks, verify after the pool has
 * been stamped for other streams, and a 64 MiB write holds no two equal
 * 4K blocks; a buffer filled once and restamped per write (plat_payload_restamp)
 * holds each write's stamps over the base's bytes, verifies with
 * plat_payload_check_restamped, and never repeats a sector. Plus the
 * least-squares fit of lib/fit.c, which write and read use for
 * time = overhead + bytes / rate. And plat_alloc_io, the memory of the
 * data path: aligned, whole, and on Linux advised into huge pages.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fit.h"
#include "platform/payload.h"
#include "platform/platform.h"
#include "test.h"

#define MIB (1u << 20)

static void test_pool_shape(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 1, 1 * MIB), 0);
	CU_ASSERT_EQUAL(p.ring, PAYLOAD_RING);
	CU_ASSERT(p.max_len >= MIB);
	CU_ASSERT_EQUAL(p.align, plat_direct_align());
	CU_ASSERT_EQUAL((uintptr_t)p.pool % p.align, 0);
	/* Windows at aligned offsets are aligned, whatever the stream. */
	for (uint64_t s = 0; s < 50; s++) {
		const void *w = plat_payload_block(&p, s, s * p.align * 7, 64 * 1024);
		CU_ASSERT_PTR_NOT_NULL_FATAL(w);
		CU_ASSERT_EQUAL((uintptr_t)w % p.align, 0);
	}
	CU_ASSERT_PTR_NULL(plat_payload_block(&p, 0, 0, p.max_len + 1));
	CU_ASSERT_PTR_NOT_NULL(plat_payload_block(&p, 0, 0, p.max_len));
	plat_payload_release(&p);
	plat_payload_release(&p); /* harmless twice */

	/* A window longer than the ring still comes back whole. */
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 1, 70 * MIB), 0);
	const unsigned char *w = plat_payload_block(&p, 3, 12345, 70 * MIB);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(plat_payload_check(&p, 3, 12345, w, 70 * MIB), 0);
	plat_payload_release(&p);
}

static void test_not_constant_not_zeros(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 42, MIB), 0);
	const unsigned char *b = plat_payload_block(&p, 0, 0, MIB);
	size_t zeros = 0, hist[256] = { 0 };
	for (size_t i = 0; i < MIB; i++) {
		zeros += b[i] == 0;
		hist[b[i]]++;
	}
	/* Uniform bytes: each value about 4096 times in 1 MiB. */
	for (int v = 0; v < 256; v++) {
		CU_ASSERT(hist[v] > 3500 && hist[v] < 4700);
	}
	CU_ASSERT(zeros < MIB / 200);
	/* No zero 8-byte word anywhere (2^-64 each). */
	for (size_t i = 0; i < MIB; i += 8) {
		uint64_t v;
		memcpy(&v, b + i, 8);
		if (v == 0) {
			CU_FAIL("a zero word in the payload");
			break;
		}
	}
	plat_payload_release(&p);
}

/* Number of 512-byte sectors in which a and b are equal. */
static size_t equal_sectors(const unsigned char *a, const unsigned char *b, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i += 512)
		n += memcmp(a + i, b + i, 512) == 0;
	return n;
}

static void test_per_stream_and_sector(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 7, MIB), 0);
	size_t len = 256 * 1024;
	unsigned char *a = malloc(len), *b = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	/* Different streams at the same offset: every sector differs, including
	 * the stamp alone. */
	for (uint64_t s = 1; s < 20; s++) {
		plat_payload_copy(&p, 0, 0, a, len);
		plat_payload_copy(&p, s, 0, b, len);
		CU_ASSERT_EQUAL(equal_sectors(a, b, len), 0);
		for (size_t i = 0; i < len; i += 512)
			if (!memcmp(a + i, b + i, PAYLOAD_STAMP)) {
				CU_FAIL("two streams share a stamp");
				break;
			}
	}
	/* Within a stream, every sector's stamp is different. */
	plat_payload_copy(&p, 5, 0, a, len);
	size_t ns = len / 512;
	for (size_t i = 0; i < ns; i++)
		for (size_t j = i + 1; j < ns; j++)
			if (!memcmp(a + i * 512, a + j * 512, PAYLOAD_STAMP)) {
				CU_FAIL("two sectors of a stream share a stamp");
				i = j = ns;
			}
	/* One ring apart, the non-stamp bytes repeat but the stamps do not. */
	plat_payload_copy(&p, 5, PAYLOAD_RING, b, len);
	CU_ASSERT_EQUAL(equal_sectors(a, b, len), 0);
	CU_ASSERT_EQUAL(memcmp(a + 16, b + 16, 496), 0);
	free(a);
	free(b);
	plat_payload_release(&p);
}

static void test_reproducible(void)
{
	struct payload p, q, r;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 99, MIB), 0);
	/* Another max_len: the same bytes (contents do not depend on it). */
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&q, 99, 4 * MIB), 0);
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&r, 100, MIB), 0);
	const unsigned char *a = plat_payload_block(&p, 3, 5 * MIB, MIB);
	const unsigned char *b = plat_payload_block(&q, 3, 5 * MIB, MIB);
	const unsigned char *c = plat_payload_block(&r, 3, 5 * MIB, MIB);
	CU_ASSERT_EQUAL(memcmp(a, b, MIB), 0);
	CU_ASSERT_EQUAL(equal_sectors(a, c, MIB), 0);
	/* Known values (a stamp, then pool bytes), so that changing the
	 * generator, which changes every payload, is a visible decision. */
	static const unsigned char stamp0[8] = { 0x3a, 0xe1, 0xbc, 0x24, 0x3a, 0xc9, 0xbe, 0x6a };
	static const unsigned char pool100[8] = { 0x52, 0xb4, 0x9c, 0x34, 0xda, 0x5e, 0xf9, 0xd7 };
	unsigned char got[8];
	plat_payload_copy(&p, 0, 0, got, sizeof(got));
	CU_ASSERT_EQUAL(memcmp(got, stamp0, 8), 0);
	plat_payload_copy(&q, 0, 100, got, sizeof(got));
	CU_ASSERT_EQUAL(memcmp(got, pool100, 8), 0);
	plat_payload_release(&p);
	plat_payload_release(&q);
	plat_payload_release(&r);
}

/* The same bytes whatever the cutting: blocks, copies, odd offsets. */
static void test_cut_independent(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 5, MIB), 0);
	size_t len = 2 * MIB;
	unsigned char *whole = malloc(len), *part = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
	uint64_t base = 3 * (uint64_t)PAYLOAD_RING - MIB; /* crosses a ring boundary */
	plat_payload_copy(&p, 11, base, whole, len);
	CU_ASSERT_EQUAL(plat_payload_check(&p, 11, base, whole, len), 0);
	/* 4K blocks from the pool. */
	for (size_t off = 0; off < len; off += 4096)
		memcpy(part + off, plat_payload_block(&p, 11, base + off, 4096), 4096);
	CU_ASSERT_EQUAL(memcmp(whole, part, len), 0);
	/* Odd pieces that split stamps. */
	static const size_t cuts[] = { 1, 7, 15, 16, 17, 500, 511, 512, 513, 1000, 4099 };
	size_t off = 0, k = 0;
	while (off < len) {
		size_t n = cuts[k++ % (sizeof(cuts) / sizeof(cuts[0]))];
		if (n > len - off)
			n = len - off;
		if (k % 2)
			memcpy(part + off, plat_payload_block(&p, 11, base + off, n), n);
		else
			plat_payload_copy(&p, 11, base + off, part + off, n);
		CU_ASSERT_EQUAL(plat_payload_check(&p, 11, base + off, whole + off, n), 0);
		off += n;
	}
	CU_ASSERT_EQUAL(memcmp(whole, part, len), 0);
	free(whole);
	free(part);
	plat_payload_release(&p);
}

static void test_check_detects(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 8, MIB), 0);
	size_t len = 64 * 1024;
	unsigned char *buf = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	memcpy(buf, plat_payload_block(&p, 2, 8192, len), len);
	/* Stamp the pool over and over for other streams: still verifies. */
	for (uint64_t s = 3; s < 300; s++)
		(void)plat_payload_block(&p, s, 8192, len);
	CU_ASSERT_EQUAL(plat_payload_check(&p, 2, 8192, buf, len), 0);
	CU_ASSERT_EQUAL(plat_payload_diff(&p, 2, 8192, buf, len), len);
	/* Wrong stream or offset: refused. */
	CU_ASSERT_EQUAL(plat_payload_check(&p, 3, 8192, buf, len), -EILSEQ);
	CU_ASSERT_EQUAL(plat_payload_check(&p, 2, 8192 + 512, buf, len), -EILSEQ);
	/* One flipped bit anywhere (stamp or not) is found, at its index. */
	static const size_t where[] = { 0, 5, 15, 16, 17, 300, 511, 512, 4096 + 3, 65535 };
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		buf[where[i]] ^= 0x10;
		CU_ASSERT_EQUAL(plat_payload_check(&p, 2, 8192, buf, len), -EILSEQ);
		CU_ASSERT_EQUAL(plat_payload_diff(&p, 2, 8192, buf, len), where[i]);
		buf[where[i]] ^= 0x10;
	}
	CU_ASSERT_EQUAL(plat_payload_check(&p, 2, 8192, buf, len), 0);
	free(buf);
	plat_payload_release(&p);
}

static const unsigned char *blocks_base;

static int cmp_block(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return memcmp(blocks_base + i * 4096, blocks_base + j * 4096, 4096);
}

static int cmp_sector(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return memcmp(blocks_base + i * 512, blocks_base + j * 512, 512);
}

/* A 64 MiB file written in 1 MiB blocks holds no two equal 4K blocks, even
 * when the stamps are ignored. */
static void test_no_equal_blocks(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 12, MIB), 0);
	size_t len = 64 * (size_t)MIB, nb = len / 4096;
	unsigned char *file = malloc(len);
	size_t *idx = malloc(nb * sizeof(size_t));
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	CU_ASSERT_PTR_NOT_NULL_FATAL(idx);
	for (size_t off = 0; off < len; off += MIB)
		memcpy(file + off, plat_payload_block(&p, 1, off, MIB), MIB);
	CU_ASSERT_EQUAL(plat_payload_check(&p, 1, 0, file, len), 0);
	for (size_t i = 0; i < nb; i++)
		idx[i] = i;
	blocks_base = file;
	qsort(idx, nb, sizeof(size_t), cmp_block);
	size_t dups = 0;
	for (size_t i = 1; i < nb; i++)
		dups += cmp_block(&idx[i - 1], &idx[i]) == 0;
	CU_ASSERT_EQUAL(dups, 0);
	/* Without stamps too: zero each sector's stamp and compare again. */
	for (size_t i = 0; i < len; i += 512)
		memset(file + i, 0, PAYLOAD_STAMP);
	qsort(idx, nb, sizeof(size_t), cmp_block);
	dups = 0;
	for (size_t i = 1; i < nb; i++)
		dups += cmp_block(&idx[i - 1], &idx[i]) == 0;
	CU_ASSERT_EQUAL(dups, 0);
	free(idx);
	free(file);
	plat_payload_release(&p);
}

/* --- restamping a reused buffer --- */

/* Restamped: the stamps of (stream, offset), the base's bytes elsewhere;
 * verified by plat_payload_check_restamped, refused by the plain check. */
static void test_restamp_contents(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 21, MIB), 0);
	size_t len = 16 * 1024;
	uint64_t b0 = 77, o0 = 3 * 4096;
	unsigned char *base = malloc(len), *buf = malloc(len), *fresh = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(base);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fresh);
	plat_payload_copy(&p, b0, o0, base, len);
	memcpy(buf, base, len);
	uint64_t s = 1000, off = 5 * (uint64_t)MIB + 8192; /* congruent to o0 mod 512 */
	plat_payload_restamp(&p, s, off, buf, len);
	plat_payload_copy(&p, s, off, fresh, len);
	for (size_t i = 0; i < len; i++) {
		int stamp = i % PAYLOAD_SECTOR < PAYLOAD_STAMP;
		if (buf[i] != (stamp ? fresh[i] : base[i])) {
			CU_FAIL("restamped byte neither the stream's stamp nor the base's byte");
			break;
		}
	}
	CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0, o0, s, off, buf, len), 0);
	CU_ASSERT_EQUAL(plat_payload_diff_restamped(&p, b0, o0, s, off, buf, len), len);
	CU_ASSERT_EQUAL(plat_payload_check(&p, s, off, buf, len), -EILSEQ);
	CU_ASSERT_EQUAL(plat_payload_check(&p, b0, o0, buf, len), -EILSEQ);
	/* Wrong base, stream or offset: refused. */
	CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0 + 1, o0, s, off, buf, len), -EILSEQ);
	CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0, o0 + 4096, s, off, buf, len), -EILSEQ);
	CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0, o0, s + 1, off, buf, len), -EILSEQ);
	CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0, o0, s, off + 512, buf, len), -EILSEQ);
	/* One flipped bit anywhere is found at its index. */
	static const size_t where[] = { 0, 15, 16, 511, 512, 4096 + 7, 16383 };
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		buf[where[i]] ^= 0x01;
		CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0, o0, s, off, buf, len), -EILSEQ);
		CU_ASSERT_EQUAL(plat_payload_diff_restamped(&p, b0, o0, s, off, buf, len), where[i]);
		buf[where[i]] ^= 0x01;
	}
	/* Restamping again replaces every stamp; back for the base, the
	 * base's payload exactly. */
	plat_payload_restamp(&p, s + 1, off, buf, len);
	CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0, o0, s + 1, off, buf, len), 0);
	plat_payload_restamp(&p, b0, o0, buf, len);
	CU_ASSERT_EQUAL(memcmp(buf, base, len), 0);
	CU_ASSERT_EQUAL(plat_payload_check(&p, b0, o0, buf, len), 0);
	/* Stamping the pool for other streams meanwhile changes nothing. */
	plat_payload_restamp(&p, s, off, buf, len);
	for (uint64_t t = 0; t < 100; t++)
		(void)plat_payload_block(&p, t, o0, len);
	CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, b0, o0, s, off, buf, len), 0);
	free(base);
	free(buf);
	free(fresh);
	plat_payload_release(&p);
}

/* Offsets not congruent with the base, odd lengths, pieces that split
 * stamps: the definition (copy of the base, then the stamps) holds, and the
 * restamp is the same however the buffer is cut. */
static void test_restamp_unaligned(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 22, MIB), 0);
	static const struct { uint64_t o0, off; size_t len; } cases[] = {
		{ 0, 1000, 4096 }, { 7, 3 * 512 + 5, 3001 }, { 512, 15, 17 },
		{ 100, 2 * (uint64_t)PAYLOAD_RING - 600, 9000 }, { 0, 0, 1 },
	};
	unsigned char a[9000], b[9000], want[9000];
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t len = cases[k].len;
		uint64_t o0 = cases[k].o0, off = cases[k].off;
		plat_payload_copy(&p, 5, o0, a, len);
		memcpy(b, a, len);
		plat_payload_restamp(&p, 9, off, a, len);
		/* In odd pieces. */
		for (size_t at = 0, n = 1; at < len; at += n, n = n * 3 + 1) {
			if (n > len - at)
				n = len - at;
			plat_payload_restamp(&p, 9, off + at, b + at, n);
		}
		CU_ASSERT_EQUAL(memcmp(a, b, len), 0);
		/* By hand: the stream's stamp where its sector begins, else the base. */
		plat_payload_copy(&p, 5, o0, want, len);
		unsigned char fresh[9000];
		plat_payload_copy(&p, 9, off, fresh, len);
		for (size_t i = 0; i < len; i++)
			if ((off + i) % PAYLOAD_SECTOR < PAYLOAD_STAMP)
				want[i] = fresh[i];
		CU_ASSERT_EQUAL(memcmp(a, want, len), 0);
		CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, 5, o0, 9, off, a, len), 0);
	}
	plat_payload_release(&p);
}

/* One 4K buffer restamped for 2000 writes (fresh streams, random-looking
 * offsets, as randwrite does): no two of the 16,000 sectors written are
 * equal, nor any two blocks. */
static void test_restamp_unique(void)
{
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 23, MIB), 0);
	enum { WRITES = 2000, BLK = 4096 };
	unsigned char *out = malloc((size_t)WRITES * BLK), buf[BLK];
	size_t ns = (size_t)WRITES * BLK / 512;
	size_t *idx = malloc(ns * sizeof(size_t));
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(idx);
	plat_payload_copy(&p, 1234, 0, buf, BLK);
	for (uint64_t k = 0; k < WRITES; k++) {
		/* A few offsets, written many times: overwrites with new streams. */
		uint64_t off = (k * 7919 % 64) * BLK;
		plat_payload_restamp(&p, 5000 + k, off, buf, BLK);
		memcpy(out + k * BLK, buf, BLK);
	}
	for (size_t i = 0; i < ns; i++)
		idx[i] = i;
	blocks_base = out;
	qsort(idx, ns, sizeof(size_t), cmp_sector);
	size_t dups = 0;
	for (size_t i = 1; i < ns; i++)
		dups += cmp_sector(&idx[i - 1], &idx[i]) == 0;
	CU_ASSERT_EQUAL(dups, 0);
	/* And each write still verifies. */
	for (uint64_t k = 0; k < WRITES; k += 97)
		CU_ASSERT_EQUAL(plat_payload_check_restamped(&p, 1234, 0, 5000 + k, (k * 7919 % 64) * BLK,
							out + k * BLK, BLK),
				0);
	free(idx);
	free(out);
	plat_payload_release(&p);
}

/* --- lib/fit.c --- */

static void test_fit_exact(void)
{
	/* time = 0.004 s + bytes / 250 MB/s, sizes over three decades. */
	double x[6] = { 2e6, 8e6, 3e7, 1.2e8, 5e8, 2e9 }, y[6];
	for (int i = 0; i < 6; i++)
		y[i] = 0.004 + x[i] / 250e6;
	struct linfit f;
	CU_ASSERT_EQUAL_FATAL(fit_line(x, y, 6, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(1.0 / f.slope / 1e6, 250.0, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(f.intercept, 0.004, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f.r2, 1.0, 1e-12);
	CU_ASSERT_EQUAL(f.n, 6);
	/* Two points determine the line. */
	double x2[2] = { 1, 3 }, y2[2] = { 5, 11 };
	CU_ASSERT_EQUAL_FATAL(fit_line(x2, y2, 2, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(f.slope, 3.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.intercept, 2.0, 1e-12);
	/* Large offsets lose nothing (centred sums). */
	double x3[3] = { 1e12, 1e12 + 1, 1e12 + 2 }, y3[3] = { 7, 9, 11 };
	CU_ASSERT_EQUAL_FATAL(fit_line(x3, y3, 3, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(f.slope, 2.0, 1e-6);
}

static void test_fit_least_squares(void)
{
	/* (0,0), (1,1), (2,0): the flat line at 1/3, r2 = 0. */
	double x[3] = { 0, 1, 2 }, y[3] = { 0, 1, 0 };
	struct linfit f;
	CU_ASSERT_EQUAL_FATAL(fit_line(x, y, 3, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(f.slope, 0.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.intercept, 1.0 / 3.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.r2, 0.0, 1e-12);
	/* (1,1), (2,3), (3,2), (4,5): slope 1.1, intercept 0, by hand. */
	double x4[4] = { 1, 2, 3, 4 }, y4[4] = { 1, 3, 2, 5 };
	CU_ASSERT_EQUAL_FATAL(fit_line(x4, y4, 4, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(f.slope, 1.1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.intercept, 0.0, 1e-12);
	/* Residuals -0.1, 0.8, -1.3, 0.6: s² = 2.7 / 2; sxx = 5, mean x 2.5. */
	CU_ASSERT_DOUBLE_EQUAL(f.slope_se, sqrt(1.35 / 5), 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f.intercept_se, sqrt(1.35 * (0.25 + 6.25 / 5)), 1e-12);
	/* Two points: an exact line, no scatter to judge it by. */
	double x2[2] = { 1, 3 }, y2[2] = { 5, 11 };
	CU_ASSERT_EQUAL_FATAL(fit_line(x2, y2, 2, &f), 0);
	CU_ASSERT(isnan(f.intercept_se) && isnan(f.slope_se));
	/* A falling line is returned as it is: callers decide. */
	double y5[4] = { 4, 3, 2, 1 };
	CU_ASSERT_EQUAL_FATAL(fit_line(x4, y5, 4, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(f.slope, -1.0, 1e-12);
}

static void test_fit_degenerate(void)
{
	struct linfit f;
	double x[4] = { 5, 5, 5, 5 }, y[4] = { 1, 2, 3, 4 };
	CU_ASSERT_EQUAL(fit_line(x, y, 0, &f), -EDOM);
	CU_ASSERT_EQUAL(fit_line(x, y, 1, &f), -EDOM);
	CU_ASSERT_EQUAL(fit_line(x, y, 4, &f), -EDOM); /* one distinct x */
	CU_ASSERT_EQUAL(f.slope, 0.0);
	CU_ASSERT_EQUAL(f.n, 0);
	/* 0.1 + 0.2 style values that are equal stay "one size". */
	double z[3] = { 1e9 / 3, 1e9 / 3, 1e9 / 3 };
	CU_ASSERT_EQUAL(fit_line(z, y, 3, &f), -EDOM);
	/* Constant y: slope 0, r2 defined as 1. */
	double x2[3] = { 1, 2, 3 }, y2[3] = { 4, 4, 4 };
	CU_ASSERT_EQUAL_FATAL(fit_line(x2, y2, 3, &f), 0);
	CU_ASSERT_DOUBLE_EQUAL(f.slope, 0.0, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(f.r2, 1.0, 1e-15);
	CU_ASSERT(!isnan(f.intercept));
}

#ifdef __linux__
/* The VmFlags line of the mapping that holds p, from /proc/self/smaps. */
static int vmflags_of(const void *p, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int inside = 0, found = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (inside && !strncmp(line, "VmFlags:", 8)) {
			snprintf(out, size, "%s", line + 8);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}
#endif

static void test_alloc_io(void)
{
	size_t sizes[] = { 1, 4096, 128 * 1024, MIB - 1, MIB, 3 * MIB + 5, 65 * MIB };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *b = plat_alloc_io(sizes[i], plat_direct_align());
		CU_ASSERT_PTR_NOT_NULL_FATAL(b);
		CU_ASSERT_EQUAL((uintptr_t)b % plat_direct_align(), 0);
		memset(b, 0xa5, sizes[i]); /* all of it is ours (ASan would say) */
		CU_ASSERT_EQUAL(b[sizes[i] - 1], 0xa5);
#ifdef __linux__
		char flags[256];
		CU_ASSERT_EQUAL_FATAL(vmflags_of(b, flags, sizeof(flags)), 0);
		int hg = strstr(flags, " hg") != NULL;
		if (sizes[i] >= MIB) {
			/* Whole 2 MiB pages, advised for THP (whether the kernel had
			 * huge pages to give is its business). */
			CU_ASSERT_EQUAL((uintptr_t)b % (2 * MIB), 0);
			CU_ASSERT(hg);
		} else {
			CU_ASSERT(!hg); /* small buffers stay plain */
		}
#endif
		free(b);
	}
	/* The payload pool is such memory. */
	struct payload p;
	CU_ASSERT_EQUAL_FATAL(plat_payload_init(&p, 9, MIB), 0);
#ifdef __linux__
	char flags[256];
	CU_ASSERT_EQUAL_FATAL(vmflags_of(p.pool, flags, sizeof(flags)), 0);
	CU_ASSERT(strstr(flags, " hg") != NULL);
#endif
	plat_payload_release(&p);
}

void register_payload_tests(void)
{
	CU_pSuite s = test_suite("payload");
	test_add(s, "pool shape, alignment, window limits", test_pool_shape);
	test_add(s, "never zeros, never constant", test_not_constant_not_zeros);
	test_add(s, "differs per stream and per sector", test_per_stream_and_sector);
	test_add(s, "reproducible from the seed, not from max_len", test_reproducible);
	test_add(s, "the same bytes however cut", test_cut_independent);
	test_add(s, "plat_payload_check finds a flipped bit", test_check_detects);
	test_add(s, "no two equal 4K blocks in 64 MiB", test_no_equal_blocks);
	test_add(s, "restamp: stamps of the write, the base's bytes elsewhere, verifiable",
		 test_restamp_contents);
	test_add(s, "restamp: unaligned offsets and odd pieces", test_restamp_unaligned);
	test_add(s, "restamp: one buffer, 2000 writes, no two equal sectors", test_restamp_unique);
	test_add(s, "plat_alloc_io: aligned, whole, huge pages advised from 1 MiB", test_alloc_io);
	CU_pSuite f = test_suite("fit");
	test_add(f, "exact recovery of time = overhead + bytes/rate", test_fit_exact);
	test_add(f, "least squares by hand", test_fit_least_squares);
	test_add(f, "degenerate inputs", test_fit_degenerate);
}
