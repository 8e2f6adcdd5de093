/*
 * For the spawner implementations only (spawn_real.c, spawn_dry.c,
 * spawn_fake.c, spawn_fault.c); callers use spawn.h. The interface is one
 * function that carries out a command: what every kind of spawner does
 * alike (logging, the argv text, plat_spawn_check) stays in spawn.c, so an
 * implementation holds only what makes it different.
 */
#ifndef RIG_SPAWN_IMPL_H
#define RIG_SPAWN_IMPL_H

#include "platform/spawn.h"

struct spawn_ops {
	/*
	 * Carry out argv into r (zeroed by the caller; opts never NULL) and
	 * return 0, or a negative errno with "cannot run COMMAND: ..." in err
	 * (the command is then not logged). Does not log: plat_spawn_run_opts logs
	 * every result the same way, whoever made it.
	 */
	int (*run)(const struct spawner *sp, const char *const *argv, const char *cwd,
		   const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err);
	/* NULL, or called after a command that run carried out has been
	 * logged (plat_spawner_fault: the after-spawn signals). */
	void (*after)(const struct spawner *sp, const char *const *argv);
	int dry_run; /* nothing runs: the log gets r == NULL */
};

/* For a result that did not come from running the command (a fake's, a
 * fault's): r->output set or NULL (empty); fills the rest as a real run
 * would, the output being on stderr when opts->split. */
void plat_spawn_result_complete(struct spawn_result *r, const struct spawn_opts *opts);
/* "cannot run COMMAND: " into err, for an implementation's errors. */
void plat_spawn_cannot_run(struct strbuf *err, const char *const *argv);

#endif
