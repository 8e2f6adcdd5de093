/*
 * Read-only questions about a parsed plan that the schedule, runner and
 * reports ask: volumes per layout, names, the platform's name and the
 * report's headlines. Kept apart from the parser so that code which builds
 * plans by hand (tests) needs no YAML.
 */
#include <stddef.h>
#include <string.h>

#include "plan/plan.h"

#include "plan/platform.h"

size_t plan_layout_count(const struct plan *p)
{
	return p->target.kind == TARGET_DIRS ? 1 : p->nlayouts;
}

const char *plan_layout_name(const struct plan *p, size_t li)
{
	if (p->target.kind == TARGET_DIRS || li >= p->nlayouts)
		return "";
	return p->layouts[li].name;
}

size_t plan_volume_count(const struct plan *p, size_t li)
{
	if (p->target.kind == TARGET_DIRS)
		return p->target.ndirs;
	return li < p->nlayouts ? p->layouts[li].nparts : 0;
}

const char *plan_volume_name(const struct plan *p, size_t li, size_t vi)
{
	if (p->target.kind == TARGET_DIRS)
		return vi < p->target.ndirs ? p->target.names[vi] : NULL;
	if (li >= p->nlayouts || vi >= p->layouts[li].nparts)
		return NULL;
	return p->layouts[li].parts[vi].name;
}

const char *plan_order_name(enum plan_order o)
{
	switch (o) {
	case ORDER_ALTERNATE: return "alternate";
	case ORDER_COUNTERBALANCE: return "counterbalance";
	case ORDER_LATIN: return "latin";
	case ORDER_RANDOM: return "random";
	case ORDER_SEQUENTIAL: return "sequential";
	}
	return "?";
}

const char *plan_platform_name(const struct plan_platform *d)
{
	return d ? d->name : "any";
}

const struct plan_headline *plan_headline_for(const struct plan *p, const char *tmpl_path,
					      const char *module)
{
	const struct plan_headline *by_module = NULL;
	for (size_t i = 0; p && i < p->report.nheadlines; i++) {
		const struct plan_headline *h = &p->report.headlines[i];
		if (tmpl_path && !strcmp(h->step, tmpl_path))
			return h;
		if (module && !strcmp(h->step, module))
			by_module = h;
	}
	return by_module;
}

int plan_unit_better(const char *unit)
{
	static const char *const times[] = { "s", "ms", "us", "ns", NULL };
	for (size_t i = 0; unit && times[i]; i++)
		if (!strcmp(unit, times[i]))
			return -1;
	return 1;
}
