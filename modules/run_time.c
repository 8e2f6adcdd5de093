/* The time accounting; see run_time.h. */
#include "modules/run_time.h"

#include <string.h>

#include "platform/platform.h"

static const char *const names[RT_NCAT] = {
	[RT_PROVISION] = "provision", [RT_TEARDOWN] = "teardown", [RT_SETUP] = "setup",
	[RT_FLUSH] = "flush",         [RT_PAUSE] = "pause",       [RT_MEASURED] = "measured",
	[RT_STORE] = "store",         [RT_REPORT] = "report",     [RT_OTHER] = "other",
};

void mod_run_time_init(struct run_time *t, enum run_time_cat c)
{
	memset(t, 0, sizeof(*t));
	t->cur = c;
	t->measured_as = RT_MEASURED;
	t->since = plat_clock_ns();
}

static uint64_t advance(struct run_time *t)
{
	uint64_t now = plat_clock_ns();
	if (now > t->since)
		t->ns[t->cur] += now - t->since;
	t->since = now;
	return now;
}

uint64_t mod_run_time_mark(struct run_time *t, enum run_time_cat c)
{
	if (!t)
		return plat_clock_ns();
	uint64_t now = advance(t);
	t->cur = c == RT_MEASURED ? t->measured_as : c;
	return now;
}

enum run_time_cat mod_run_time_swap(struct run_time *t, enum run_time_cat c)
{
	if (!t)
		return c;
	enum run_time_cat was = t->cur;
	mod_run_time_mark(t, c);
	return was;
}

void mod_run_time_take(struct run_time *t, uint64_t ns[RT_NCAT])
{
	advance(t);
	memcpy(ns, t->ns, sizeof(t->ns));
	memset(t->ns, 0, sizeof(t->ns));
}

const char *mod_run_time_name(enum run_time_cat c)
{
	return (unsigned)c < RT_NCAT ? names[c] : "?";
}

int mod_run_time_from_name(const char *name)
{
	for (int c = 0; c < RT_NCAT; c++)
		if (name && !strcmp(names[c], name))
			return c;
	return -1;
}
