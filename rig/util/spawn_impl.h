/*
 * For the spawner's own files only; callers use spawn.h.
 */
#ifndef RIG_SPAWN_IMPL_H
#define RIG_SPAWN_IMPL_H

#include "spawn.h"

/* Run argv for real into r (zeroed by the caller; opts may be NULL) and
 * return 0, or a negative errno with "cannot run COMMAND: ..." in err. Does
 * not log. */
int spawn_real_run(const char *const *argv, const char *cwd, const struct spawn_opts *opts,
		   struct spawn_result *r, struct strbuf *err);
/* "cannot run COMMAND: " into err, for an implementation's errors. */
void spawn_cannot_run(struct strbuf *err, const char *const *argv);

#endif
