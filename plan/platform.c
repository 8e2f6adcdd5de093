/*
 * The registry of platforms (plan/platform.h). The list comes from the
 * Makefile (DRIVERS, passed as RIG_DRIVERS = "X(linux) X(macos)"), so that
 * adding a platform touches no file of rig but its own and one Makefile
 * line.
 */
#include "plan/platform.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "lib/strbuf.h"
#include "platform/platform.h"

#ifndef RIG_DRIVERS
#error "RIG_DRIVERS lists the platforms: the Makefile defines it from DRIVERS"
#endif

#define X(n) &plan_platform_##n,
const struct plan_platform *const plan_platforms[] = { RIG_DRIVERS NULL };
#undef X

const struct plan_platform *plan_platform_find(const char *name)
{
	for (size_t i = 0; name && plan_platforms[i]; i++)
		if (!strcmp(plan_platforms[i]->name, name))
			return plan_platforms[i];
	return NULL;
}

const struct plan_platform *plan_platform_host(void)
{
	return plan_platform_find(plat_name());
}

void plan_platform_names(struct strbuf *sb)
{
	for (size_t i = 0; plan_platforms[i]; i++)
		sb_addf(sb, "%s%s", i == 0 ? "" : plan_platforms[i + 1] ? ", " : " or ",
			plan_platforms[i]->name);
}

const struct plan_fs *plan_platform_fs(const struct plan_platform *d, const char *name)
{
	for (const struct plan_fs *f = d ? d->fs : NULL; f && f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	for (const struct plan_fs *f = d ? d->fs : NULL; f && f->name; f++)
		for (const char *const *a = f->aliases; a && *a; a++)
			if (!strcasecmp(*a, name))
				return f;
	return NULL;
}

const struct plan_platform *plan_platform_of_fs(const char *fs)
{
	for (size_t i = 0; plan_platforms[i]; i++)
		if (plan_platform_fs(plan_platforms[i], fs))
			return plan_platforms[i];
	return NULL;
}

int plan_fs_can(const struct plan_platform *d, const char *fs, unsigned want)
{
	const struct plan_fs *f = fs ? plan_platform_fs(d, fs) : NULL;
	return f && (f->flags & want) == want;
}

void plan_fs_with(struct strbuf *sb, const struct plan_platform *d, unsigned want)
{
	size_t n = 0;
	for (const struct plan_fs *f = d ? d->fs : NULL; f && f->name; f++)
		if ((f->flags & want) == want)
			sb_addf(sb, "%s%s", n++ ? ", " : "", f->name);
}
