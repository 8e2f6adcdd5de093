/*
 * The thin platform layer: the few system calls that differ between Linux
 * and macOS. One implementation file per platform (platform/linux.c,
 * platform/macos.c), chosen by the Makefile; shared code has no #ifdef.
 */
#ifndef RIG_PLATFORM_H
#define RIG_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic raw nanoseconds: CLOCK_MONOTONIC_RAW (Linux),
 * clock_gettime_nsec_np(CLOCK_UPTIME_RAW) (macOS). */
uint64_t plat_clock_ns(void);
/* The platform's name as plans use it: "linux" or "macos". */
const char *plat_name(void);

/* The file system type of the volume holding path ("ext4", "xfs", "apfs",
 * "tmpfs", ...; "unknown" when it cannot tell). 0 or a negative errno. */
int plat_fs_type(const char *path, char *buf, size_t size);

/* The CPU's model name and the number of online CPUs ("AMD EPYC 7B13 (2 cores)");
 * "unknown" when it cannot tell. */
struct strbuf;
void plat_cpu(struct strbuf *sb);
/* Physical memory in bytes, 0 when unknown. */
uint64_t plat_mem_bytes(void);
/* 1 when the system says it runs under a hypervisor (macOS: sysctl
 * kern.hv_vmm_present), else 0; on Linux always 0: virt_read
 * (lib/virt.h) reads /proc and /sys. */
int plat_vmm_present(void);

/* The mount flags of the file system holding dir, as words ("rw,nosuid,
 * noatime"; macOS adds "journaled", "local", "nobrowse", "noowners"):
 * statvfs's f_flag (Linux), statfs's f_flags (macOS). 0 or a negative errno. */
int plat_mount_flags(const char *dir, struct strbuf *sb);

/*
 * Open a data file for measured I/O. With direct: O_DIRECT (Linux) or
 * F_NOCACHE (macOS). When the file system refuses direct I/O, the file is
 * opened without it and *direct_applied is 0 (callers record that);
 * otherwise *direct_applied is 1 when direct was asked. Returns the fd or
 * a negative errno.
 */
int plat_open_data(const char *path, int flags, unsigned mode, int direct, int *direct_applied);
/* Make a file's data durable: fsync (Linux), F_FULLFSYNC (macOS, falling
 * back to fsync where the device refuses it). 0 or a negative errno. */
int plat_full_sync(int fd);
/* Drop the file's pages from the cache where the platform can
 * (posix_fadvise DONTNEED on Linux). -ENOTSUP where it cannot. */
int plat_drop_file_cache(int fd);
/* Ask for no read-ahead on fd (POSIX_FADV_RANDOM; F_RDAHEAD 0 on macOS). */
int plat_no_readahead(int fd);
/*
 * Where the data of the open file fd sits on the device its file system is
 * on: the lowest and highest byte offset its data occupies there, [x->lo,
 * x->hi), and x->mid, the mean offset of its bytes (a file in two pieces
 * far apart has its mid between them, its lo and hi at their ends). Linux: FIEMAP (FIEMAP_FLAG_SYNC, so delayed allocation is placed
 * first); macOS: F_LOG2PHYS_EXT over the file's length. Returns 0, or -1
 * with *why saying why it cannot be said (the file system has no such
 * call, btrfs's addresses are its own and not the device's, compressed,
 * inline, not yet allocated or unknown extents, an empty file).
 */
struct plat_extent {
	uint64_t lo, hi, mid;
};
int plat_file_extent(int fd, struct plat_extent *x, const char **why);
/* A file's access and modification times from its stat, as futimens
 * takes them (times[0] access, times[1] modification): st_atim/st_mtim
 * (Linux), st_atimespec/st_mtimespec (macOS). */
struct stat;
struct timespec;
void plat_stat_times(const struct stat *st, struct timespec *times);
/* Buffer, offset and length alignment that direct I/O needs. */
unsigned plat_direct_align(void);
/*
 * Memory for the data path (payload pools, read buffers, I/O slots), aligned
 * to at least `align` (a power of two, at least sizeof(void *)); release it
 * with free(). NULL when out of memory. On Linux a buffer of 1 MiB or more
 * is placed in whole 2 MiB transparent huge pages where the kernel allows
 * (madvise MADV_HUGEPAGE; the length is rounded up to 2 MiB): a direct I/O
 * of 1 MiB then pins one page instead of 256, and walking a 64 MiB pool
 * meets 33 TLB entries instead of 16,640, which shows in sequential 1 MiB
 * direct I/O (bench/README.md); and a device that takes fewer than 256
 * segments per request (virtio-blk: 254) gets one 1 MiB request, not two.
 * Elsewhere, plain aligned memory.
 */
void *plat_alloc_io(size_t len, size_t align);

/*
 * Push written data out and drop the system's file caches: sync, then
 * /proc/sys/vm/drop_caches (Linux) or purge(8) (macOS). Needs root:
 * returns -EPERM without trying when not root. *name is set to what the
 * method is called in result rows ("drop_caches", "purge").
 */
struct spawner;
struct strbuf;
int plat_drop_caches(struct spawner *sp, const char **name, struct strbuf *err);

/* The system's folder for rig's run-time files (the target locks,
 * platform/lock.h): /run/rig (Linux), /var/run/rig (macOS). */
const char *plat_runtime_dir(void);

/*
 * Open a whole disk's device node exclusively, for as long as the returned
 * descriptor is open: O_EXCL on a block device (Linux) fails with EBUSY
 * while anything else holds it (a mounted partition, device mapper or RAID,
 * another exclusive opener such as mkfs or a partitioner), and while it is
 * held, exclusive opens of the disk and of its partitions fail (mkfs,
 * mount). Returns the descriptor or a negative errno; -ENOTSUP where the
 * platform has no such open (macOS: O_EXCL without O_CREAT is undefined).
 */
int plat_open_exclusive(const char *dev);

#endif
