/* Platform layer for macOS; see platform.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "../rig/util/spawn.h"

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
	return spawn_check(sp, argv, NULL, NULL, err);
}
