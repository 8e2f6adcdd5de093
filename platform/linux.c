/* Platform layer for Linux; see platform.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/ioctl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <time.h>

#include "lib/strbuf.h"
#include "platform/platform.h"

uint64_t plat_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *plat_name(void)
{
	return "linux";
}

/* statfs magic numbers (linux/magic.h) of file systems rig meets. */
static const struct {
	unsigned long magic;
	const char *name;
} fs_magic[] = {
	{ 0xEF53, "ext4" }, /* ext2/3/4 share it */
	{ 0x58465342, "xfs" },
	{ 0x9123683E, "btrfs" },
	{ 0x01021994, "tmpfs" },
	{ 0x794c7630, "overlay" },
	{ 0x6969, "nfs" },
	{ 0x65735546, "fuse" },
	{ 0x2fc12fc1, "zfs" },
	{ 0x4d44, "vfat" },
	{ 0x2011BAB0, "exfat" },
	{ 0xF2F52010, "f2fs" },
	{ 0x858458f6, "ramfs" },
	{ 0x5346544e, "ntfs" },
	{ 0x482b, "hfs+" },
};

int plat_fs_type(const char *path, char *buf, size_t size)
{
	struct statfs st;
	if (statfs(path, &st) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(fs_magic) / sizeof(fs_magic[0]); i++) {
		if ((unsigned long)st.f_type == fs_magic[i].magic) {
			snprintf(buf, size, "%s", fs_magic[i].name);
			return 0;
		}
	}
	snprintf(buf, size, "unknown(0x%lx)", (unsigned long)st.f_type);
	return 0;
}

int plat_drop_caches(struct spawner *sp, const char **name, struct strbuf *err)
{
	(void)sp;
	*name = "drop_caches";
	if (geteuid() != 0)
		return -EPERM;
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0) {
		int e = errno;
		sb_addf(err, "cannot open /proc/sys/vm/drop_caches: %s", strerror(e));
		return -e;
	}
	ssize_t n = write(fd, "3\n", 2);
	int e = errno;
	close(fd);
	if (n != 2) {
		sb_addf(err, "cannot write /proc/sys/vm/drop_caches: %s", strerror(e));
		return -e;
	}
	return 0;
}

const char *plat_runtime_dir(void)
{
	return "/run/rig";
}

int plat_open_exclusive(const char *dev)
{
	int fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

int plat_open_data(const char *path, int flags, unsigned mode, int direct, int *direct_applied)
{
	*direct_applied = 0;
	if (direct) {
		int fd = open(path, flags | O_DIRECT | O_CLOEXEC, (mode_t)mode);
		if (fd >= 0) {
			*direct_applied = 1;
			return fd;
		}
		if (errno != EINVAL) /* EINVAL: this file system has no O_DIRECT */
			return -errno;
	}
	int fd = open(path, flags | O_CLOEXEC, (mode_t)mode);
	return fd >= 0 ? fd : -errno;
}

void plat_stat_times(const struct stat *st, struct timespec *times)
{
	times[0] = st->st_atim;
	times[1] = st->st_mtim;
}

int plat_full_sync(int fd)
{
	return fsync(fd) < 0 ? -errno : 0;
}

int plat_drop_file_cache(int fd)
{
	int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return rc ? -rc : 0;
}

int plat_no_readahead(int fd)
{
	int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	return rc ? -rc : 0;
}

unsigned plat_direct_align(void)
{
	return 4096; /* covers 512e and 4Kn devices and every page size we meet */
}

#define HUGE_PAGE (2u << 20)

void *plat_alloc_io(size_t len, size_t align)
{
	void *p = NULL;
	if (len >= HUGE_PAGE / 2 && len <= SIZE_MAX - HUGE_PAGE && align <= HUGE_PAGE) {
		/* Whole huge pages: THP backs only 2 MiB-aligned 2 MiB ranges that
		 * lie inside the mapping. Without THP (or when the kernel has none
		 * free) this is still good aligned memory. */
		size_t whole = (len + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
		if (posix_memalign(&p, HUGE_PAGE, whole) != 0)
			return NULL;
		(void)madvise(p, whole, MADV_HUGEPAGE);
		return p;
	}
	if (posix_memalign(&p, align, len ? len : 1) != 0)
		return NULL;
	return p;
}

void plat_cpu(struct strbuf *sb)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	int found = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *v = strchr(line, ':');
			if (v) {
				v++;
				while (*v == ' ' || *v == '\t')
					v++;
				v[strcspn(v, "\n")] = '\0';
				sb_adds(sb, v);
				found = 1;
				break;
			}
		}
	}
	if (f)
		fclose(f);
	if (!found)
		sb_adds(sb, "unknown");
	sb_addf(sb, " (%ld cores)", sysconf(_SC_NPROCESSORS_ONLN));
}

uint64_t plat_mem_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

int plat_vmm_present(void)
{
	return 0; /* virt_read reads /proc/cpuinfo and /sys */
}

int plat_mount_flags(const char *dir, struct strbuf *sb)
{
	struct statvfs st;
	if (statvfs(dir, &st) < 0)
		return -errno;
	static const struct { unsigned long flag; const char *name; } flags[] = {
		{ ST_NOSUID, "nosuid" },
#ifdef ST_NODEV
		{ ST_NODEV, "nodev" },
		{ ST_NOEXEC, "noexec" },
		{ ST_SYNCHRONOUS, "sync" },
		{ ST_NOATIME, "noatime" },
		{ ST_NODIRATIME, "nodiratime" },
		{ ST_RELATIME, "relatime" },
#endif
	};
	sb_adds(sb, (st.f_flag & ST_RDONLY) ? "ro" : "rw");
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (st.f_flag & flags[i].flag)
			sb_addf(sb, ",%s", flags[i].name);
	return 0;
}

/* btrfs's FIEMAP gives addresses in its own logical space, mapped to the
 * devices by its chunk tree: not byte offsets on the partition. */
#define BTRFS_MAGIC 0x9123683EL
#define EXTENT_BATCH 64

int plat_file_extent(int fd, struct plat_extent *x, const char **why)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) == 0 && (long)sf.f_type == BTRFS_MAGIC) {
		*why = "btrfs maps its own addresses to the device (FIEMAP gives btrfs's)";
		return -1;
	}
	size_t size = sizeof(struct fiemap) + EXTENT_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = calloc(1, size);
	if (!fm) {
		*why = "out of memory";
		return -1;
	}
	uint64_t start = 0, min = UINT64_MAX, max = 0;
	double bytes = 0, moment = 0; /* sum of lengths, and of length x centre */
	int last = 0, rc = 0;
	*why = NULL;
	while (!last) {
		memset(fm, 0, size);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = EXTENT_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			*why = errno == EOPNOTSUPP || errno == ENOTTY
				       ? "the file system does not say where a file's data is (no FIEMAP)"
				       : "FIEMAP failed";
			rc = -1;
			break;
		}
		if (fm->fm_mapped_extents == 0)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			if (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)) {
				*why = "the file's data is not placed yet";
				rc = -1;
			} else if (e->fe_flags & (FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED)) {
				*why = "the file's data is compressed or encrypted where it is stored";
				rc = -1;
			} else if (e->fe_flags & (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL |
						  FIEMAP_EXTENT_NOT_ALIGNED)) {
				*why = "the file's data is stored inline with its metadata";
				rc = -1;
			}
			if (e->fe_physical < min)
				min = e->fe_physical;
			if (e->fe_physical + e->fe_length > max)
				max = e->fe_physical + e->fe_length;
			bytes += (double)e->fe_length;
			moment += (double)e->fe_length *
				  ((double)e->fe_physical + (double)e->fe_length / 2);
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = 1;
		}
		if (rc < 0)
			break;
	}
	free(fm);
	if (rc == 0 && min == UINT64_MAX) {
		*why = "the file has no data on the device";
		rc = -1;
	}
	if (rc == 0) {
		x->lo = min;
		x->hi = max;
		x->mid = (uint64_t)(moment / bytes);
	}
	return rc;
}
