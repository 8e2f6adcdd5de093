/* Platform layer for macOS; see platform.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/sysctl.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "platform/platform.h"
#include "platform/spawn.h"

uint64_t plat_clock_ns(void)
{
	return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
}

const char *plat_name(void)
{
	return "macos";
}

int plat_fs_type(const char *path, char *buf, size_t size)
{
	struct statfs st;
	if (statfs(path, &st) < 0)
		return -errno;
	/* f_fstypename: "apfs", "hfs", "msdos", "exfat", ... */
	if (!strcmp(st.f_fstypename, "hfs"))
		snprintf(buf, size, "hfs+");
	else if (!strcmp(st.f_fstypename, "msdos"))
		snprintf(buf, size, "fat32");
	else
		snprintf(buf, size, "%s", st.f_fstypename);
	return 0;
}

int plat_drop_caches(struct spawner *sp, const char **name, struct strbuf *err)
{
	*name = "purge";
	if (geteuid() != 0)
		return -EPERM;
	sync();
	const char *argv[] = { "purge", NULL };
	return plat_spawn_check(sp, argv, NULL, NULL, err);
}

const char *plat_runtime_dir(void)
{
	return "/var/run/rig";
}

int plat_open_exclusive(const char *dev)
{
	(void)dev;
	return -ENOTSUP;
}

int plat_open_data(const char *path, int flags, unsigned mode, int direct, int *direct_applied)
{
	*direct_applied = 0;
	int fd = open(path, flags | O_CLOEXEC, (mode_t)mode);
	if (fd < 0)
		return -errno;
	if (direct && fcntl(fd, F_NOCACHE, 1) == 0)
		*direct_applied = 1;
	return fd;
}

void plat_stat_times(const struct stat *st, struct timespec *times)
{
	times[0] = st->st_atimespec;
	times[1] = st->st_mtimespec;
}

int plat_full_sync(int fd)
{
	if (fcntl(fd, F_FULLFSYNC) == 0)
		return 0;
	return fsync(fd) < 0 ? -errno : 0;
}

int plat_drop_file_cache(int fd)
{
	(void)fd;
	return -ENOTSUP;
}

int plat_no_readahead(int fd)
{
	return fcntl(fd, F_RDAHEAD, 0) < 0 ? -errno : 0;
}

unsigned plat_direct_align(void)
{
	return 4096;
}

/* macOS has no transparent huge pages (superpages are x86-only and need
 * mach_vm_allocate); F_NOCACHE I/O goes through the unified buffer cache
 * path anyway. Plain aligned memory. */
void *plat_alloc_io(size_t len, size_t align)
{
	void *p = NULL;
	if (posix_memalign(&p, align, len ? len : 1) != 0)
		return NULL;
	return p;
}

void plat_cpu(struct strbuf *sb)
{
	char model[256];
	size_t len = sizeof(model);
	if (sysctlbyname("machdep.cpu.brand_string", model, &len, NULL, 0) == 0)
		sb_adds(sb, model);
	else
		sb_adds(sb, "unknown");
	sb_addf(sb, " (%ld cores)", sysconf(_SC_NPROCESSORS_ONLN));
}

uint64_t plat_mem_bytes(void)
{
	uint64_t mem = 0;
	size_t len = sizeof(mem);
	if (sysctlbyname("hw.memsize", &mem, &len, NULL, 0) != 0)
		return 0;
	return mem;
}

int plat_vmm_present(void)
{
	int v = 0;
	size_t len = sizeof(v);
	return sysctlbyname("kern.hv_vmm_present", &v, &len, NULL, 0) == 0 && v ? 1 : 0;
}

int plat_mount_flags(const char *dir, struct strbuf *sb)
{
	struct statfs st;
	if (statfs(dir, &st) < 0)
		return -errno;
	static const struct { unsigned long flag; const char *name; } flags[] = {
		{ MNT_NOSUID, "nosuid" },
		{ MNT_NODEV, "nodev" },
		{ MNT_NOEXEC, "noexec" },
		{ MNT_SYNCHRONOUS, "sync" },
		{ MNT_ASYNC, "async" },
		{ MNT_NOATIME, "noatime" },
		{ MNT_LOCAL, "local" },
		{ MNT_JOURNALED, "journaled" },
		{ MNT_DONTBROWSE, "nobrowse" },
		{ MNT_IGNORE_OWNERSHIP, "noowners" },
	};
	sb_adds(sb, (st.f_flags & MNT_RDONLY) ? "ro" : "rw");
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (st.f_flags & flags[i].flag)
			sb_addf(sb, ",%s", flags[i].name);
	return 0;
}

int plat_file_extent(int fd, struct plat_extent *x, const char **why)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		*why = "the file has no data on the device";
		return -1;
	}
	/* Placed before it is asked where: F_LOG2PHYS_EXT answers for
	 * allocated blocks. */
	fsync(fd);
	uint64_t min = UINT64_MAX, max = 0;
	double moment = 0; /* sum of length x centre */
	off_t off = 0;
	while (off < st.st_size) {
		struct log2phys l = { .l2p_contigbytes = st.st_size - off, .l2p_devoffset = off };
		errno = 0;
		if (fcntl(fd, F_LOG2PHYS_EXT, &l) < 0 || l.l2p_contigbytes <= 0) {
			*why = errno == ENOTSUP || errno == EINVAL
				       ? "the file system does not say where a file's data is "
					 "(no F_LOG2PHYS_EXT)"
				       : "F_LOG2PHYS_EXT failed";
			return -1;
		}
		if ((uint64_t)l.l2p_devoffset < min)
			min = (uint64_t)l.l2p_devoffset;
		if ((uint64_t)(l.l2p_devoffset + l.l2p_contigbytes) > max)
			max = (uint64_t)(l.l2p_devoffset + l.l2p_contigbytes);
		moment += (double)l.l2p_contigbytes *
			  ((double)l.l2p_devoffset + (double)l.l2p_contigbytes / 2);
		off += l.l2p_contigbytes;
	}
	x->lo = min;
	x->hi = max;
	x->mid = (uint64_t)(moment / (double)off);
	return 0;
}
