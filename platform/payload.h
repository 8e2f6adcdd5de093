/*
 * Payload: the bytes every data-writing module puts on disk (write,
 * randwrite, tree, fill, churn). They must defeat compressing and
 * deduplicating storage (never zeros, never one repeated buffer, different
 * for every file and every 512-byte sector) and cost next to nothing while
 * the clock runs.
 *
 * How (fio's scramble_buffers idea): one pool of pseudo-random bytes is made
 * per cell, outside the timing (prng_fill of a 64 MiB ring, continued for
 * max_len more bytes so no window wraps; aligned for direct I/O, in huge
 * pages where the platform has them: plat_alloc_io). A stream
 * (a file, or a generation of a file) is a pseudo-random rotation of the
 * ring: byte `offset` of stream s is ring[(base(seed, s) + offset) mod 64 MiB],
 * base a multiple of 64 KiB (so a window at an aligned offset is aligned
 * for any direct-I/O alignment up to 64 KiB). The first 16 bytes of every
 * 512-byte sector of the stream (sector = offset / 512) are then replaced
 * by a stamp, an injective function of (seed, stream, sector): no two
 * sectors of any streams of one seed are equal, so neither is any 4K
 * block. A write takes a window of the pool itself (plat_payload_block stamps
 * the window's sectors in place and returns a pointer into the pool: no
 * memcpy); the non-stamp bytes of the pool never change, so anything
 * written can be verified later.
 *
 * The contents are a pure function of (seed, stream, offset), whatever
 * max_len and platform: a file written in 1M blocks verifies when read
 * back in 4K blocks (with a payload made with any max_len), and writing the
 * same (stream, offset) twice writes the same bytes. Writers that overwrite
 * (randwrite, churn) and must not rewrite identical data (ZFS nopwrite,
 * dedup) use a fresh stream per generation.
 *
 * Limits: a stream repeats the ring's non-stamp bytes every 64 MiB, so a
 * compressor whose window exceeds that (zstd --long, lrzip) could shrink a
 * file larger than 64 MiB; block-level compression (file systems, SSD
 * controllers: 4K..1M records) and block dedup cannot. Two streams share a
 * rotation with probability 1/1024; their blocks still differ in every
 * sector's stamp.
 *
 * Not thread-safe for plat_payload_block (it writes into the pool); plat_payload_copy
 * and the checks only read the pool and may run concurrently with each
 * other, but not with plat_payload_block on the same pool. plat_payload_restamp does
 * not touch the pool at all.
 */
#ifndef RIG_PAYLOAD_H
#define RIG_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#define PAYLOAD_SECTOR 512u     /* stamp granularity */
#define PAYLOAD_STAMP 16u       /* stamp bytes at the start of each sector */
#define PAYLOAD_RING (64u << 20)  /* the period of a stream's non-stamp bytes */
#define PAYLOAD_ROTATE (64u << 10) /* granularity of the streams' rotations */

struct payload {
	unsigned char *pool;    /* ring bytes, then max_len more continuing it (owned) */
	size_t ring;            /* PAYLOAD_RING */
	size_t max_len;         /* longest window plat_payload_block returns */
	size_t align;           /* plat_direct_align() at init; pool and windows are aligned */
	uint64_t seed;
	uint64_t key;           /* derived from seed: keys the bases and stamps */
};

/*
 * Make the pool for windows of up to max_len bytes (the largest block the
 * caller will write; rounded up to the alignment). Fills it from `seed`:
 * the same seed gives the same payload on every run and platform. Done
 * outside any timing (a pass over 64 MiB of memory would show in any
 * measurement; the pool holds 64 MiB + max_len bytes). 0, or -ENOMEM
 * (p is then empty and plat_payload_release is harmless).
 */
int plat_payload_init(struct payload *p, uint64_t seed, size_t max_len);
void plat_payload_release(struct payload *p);

/*
 * The payload of stream `stream` at [offset, offset + len): a pointer into
 * the pool (owned by p; do not free or write). len <= p->max_len, else NULL.
 * The pointer is aligned to p->align when offset is a multiple of it (so it
 * can be handed to an O_DIRECT write as is).
 *
 * The window's stamps are written into the pool, so the returned bytes stay
 * right only until the next plat_payload_block call on p (a later window may
 * overlap this one in the pool and stamp it for another stream). One
 * synchronous write at a time: use the window directly. Several I/Os in
 * flight (a queue depth, threads): plat_payload_copy into a buffer per I/O.
 */
const void *plat_payload_block(struct payload *p, uint64_t stream, uint64_t offset, size_t len);

/* The same bytes as plat_payload_block(p, stream, offset, len), copied into buf
 * (any alignment, any len). The pool is not modified. */
void plat_payload_copy(const struct payload *p, uint64_t stream, uint64_t offset, void *buf,
		  size_t len);

/*
 * 0 when buf[0..len) is exactly the payload of stream at offset (whatever
 * the block sizes it was written with), -EILSEQ otherwise. Works after any
 * number of plat_payload_block calls. plat_payload_diff gives the index of the first
 * byte that differs, or len when none does (for messages).
 */
int plat_payload_check(const struct payload *p, uint64_t stream, uint64_t offset, const void *buf,
		  size_t len);
size_t plat_payload_diff(const struct payload *p, uint64_t stream, uint64_t offset, const void *buf,
		    size_t len);

/*
 * Restamping: a buffer reused for many writes (fio's scramble_buffers).
 * Many writes in flight each need their own buffer, and plat_payload_copy of a
 * fresh window per write pulls block bytes of the cold 64 MiB pool through
 * the cache every time, an order of magnitude more than a restamp and
 * enough to hold randwrite at 4K QD32 on a RAM-backed device below fio
 * (bench/README.md). Instead the caller fills each buffer once,
 * before the clock, with plat_payload_copy(p, base_stream, base_offset, buf,
 * len), and before each write calls
 *
 *   plat_payload_restamp(p, stream, offset, buf, len)
 *
 * which writes into buf the stamps of [offset, offset + len) of `stream`
 * (exactly the bytes plat_payload_copy(p, stream, offset, ...) would put at
 * those positions: the first 16 bytes of every 512-byte sector of the
 * stream, by file offset, and the tail of a stamp the range begins inside)
 * and touches nothing else: 8 stamps, 128 bytes, for a 4 KiB block. buf's
 * other bytes stay the base's. The pool is not read or written (safe
 * against concurrent plat_payload_block); buf needs no alignment.
 *
 * What a restamped write is: with offset and base_offset congruent modulo
 * 512 (block-aligned writes with a base at a multiple of the block, when
 * the block is a multiple of 512), every sector holds its own stamp for
 * (stream, sector) and 496 bytes of the base's pool window; otherwise the
 * base's stamps that are not overwritten stay in buf too (still verifiable,
 * see below). With a fresh stream per write (the rule above for
 * overwriters), every sector of every write differs from every other
 * sector written with this seed, and so does every block: a block-level
 * dedup (4 KiB or larger) sees a new block each time, because the 8 stamps
 * of a 4 KiB block are new. Compressing one block gains nothing (its bytes
 * are pool bytes and stamps, pseudo-random). What is weaker than
 * plat_payload_copy per write: all writes from one buffer share their non-stamp
 * bytes, so a compressor that sees several such blocks at once (a file
 * system compressing records of many blocks: btrfs 128 KiB, ZFS
 * recordsize) can find the repeats between blocks that came from the same
 * buffer. fio's default (scramble_buffers=1) has the same property; a
 * writer that must defeat record-level compression uses plat_payload_copy or
 * plat_payload_block per write.
 *
 * plat_payload_check_restamped is 0 when buf[0..len) is exactly
 * plat_payload_copy(base_stream, base_offset) followed by
 * plat_payload_restamp(stream, offset), -EILSEQ otherwise; restamping buf for
 * another (stream, offset), or back for the base, gives the bytes that
 * definition says. plat_payload_diff_restamped gives the first differing index,
 * or len.
 */
void plat_payload_restamp(const struct payload *p, uint64_t stream, uint64_t offset, void *buf,
		     size_t len);
int plat_payload_check_restamped(const struct payload *p, uint64_t base_stream, uint64_t base_offset,
			    uint64_t stream, uint64_t offset, const void *buf, size_t len);
size_t plat_payload_diff_restamped(const struct payload *p, uint64_t base_stream,
			      uint64_t base_offset, uint64_t stream, uint64_t offset,
			      const void *buf, size_t len);

#endif
