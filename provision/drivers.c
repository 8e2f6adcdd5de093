/*
 * The registry of platform drivers (driver.h). The list comes from the
 * Makefile (DRIVERS, passed as RIG_DRIVERS = "X(linux) X(macos)"), so that
 * adding a platform touches no file of rig but its own and one Makefile
 * line.
 */
#include "driver.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "../platform/platform.h"
#include "../rig/util/strbuf.h"

#ifndef RIG_DRIVERS
#error "RIG_DRIVERS lists the platform drivers: the Makefile defines it from DRIVERS"
#endif

#define X(n) extern const struct prov_driver prov_driver_##n;
RIG_DRIVERS
#undef X

#define X(n) &prov_driver_##n,
const struct prov_driver *const prov_drivers[] = { RIG_DRIVERS NULL };
#undef X

const struct prov_driver *prov_driver_find(const char *name)
{
	for (size_t i = 0; name && prov_drivers[i]; i++)
		if (!strcmp(prov_drivers[i]->name, name))
			return prov_drivers[i];
	return NULL;
}

const struct prov_driver *prov_driver_host(void)
{
	return prov_driver_find(plat_name());
}

void prov_driver_names(struct strbuf *sb)
{
	for (size_t i = 0; prov_drivers[i]; i++)
		sb_addf(sb, "%s%s", i == 0 ? "" : prov_drivers[i + 1] ? ", " : " or ",
			prov_drivers[i]->name);
}

const struct prov_fs *prov_driver_fs(const struct prov_driver *d, const char *name)
{
	for (const struct prov_fs *f = d ? d->fs : NULL; f && f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	for (const struct prov_fs *f = d ? d->fs : NULL; f && f->name; f++)
		for (const char *const *a = f->aliases; a && *a; a++)
			if (!strcasecmp(*a, name))
				return f;
	return NULL;
}

const struct prov_driver *prov_driver_of_fs(const char *fs)
{
	for (size_t i = 0; prov_drivers[i]; i++)
		if (prov_driver_fs(prov_drivers[i], fs))
			return prov_drivers[i];
	return NULL;
}

int prov_fs_can(const struct prov_driver *d, const char *fs, unsigned want)
{
	const struct prov_fs *f = fs ? prov_driver_fs(d, fs) : NULL;
	return f && (f->flags & want) == want;
}

void prov_fs_with(struct strbuf *sb, const struct prov_driver *d, unsigned want)
{
	size_t n = 0;
	for (const struct prov_fs *f = d ? d->fs : NULL; f && f->name; f++)
		if ((f->flags & want) == want)
			sb_addf(sb, "%s%s", n++ ? ", " : "", f->name);
}
