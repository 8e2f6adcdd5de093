/*
 * The registry of platform drivers (driver.h), from the Makefile's
 * DRIVERS (RIG_DRIVERS = "X(linux) X(macos)") as plan/platform.c's.
 */
#include "provision/driver.h"

#include <stddef.h>

#include "plan/platform.h"

#ifndef RIG_DRIVERS
#error "RIG_DRIVERS lists the platform drivers: the Makefile defines it from DRIVERS"
#endif

#define X(n) extern const struct prov_driver prov_driver_##n;
RIG_DRIVERS
#undef X

#define X(n) &prov_driver_##n,
const struct prov_driver *const prov_drivers[] = { RIG_DRIVERS NULL };
#undef X

const struct prov_driver *prov_driver_of(const struct plan_platform *pl)
{
	for (size_t i = 0; pl && prov_drivers[i]; i++)
		if (prov_drivers[i]->platform == pl)
			return prov_drivers[i];
	return NULL;
}
