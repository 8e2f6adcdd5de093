/*
 * plat_spawner_dry: runs nothing. `rig plan` drives the real backend through it,
 * so the commands it prints are the ones `rig run` executes; plat_spawn_run_opts
 * logs each with r == NULL (nothing ran), and the backend sees every
 * command succeed with no output.
 */
#include "lib/xalloc.h"
#include "platform/spawn_impl.h"

static int dry_run(const struct spawner *sp, const char *const *argv, const char *cwd,
		   const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err)
{
	r->exited = 1;
	r->output = xstrdup("");
	if (opts->split) {
		r->stdout_text = xstrdup("");
		r->stderr_text = xstrdup("");
	}
	return 0;
}

static const struct spawn_ops dry_ops = { .run = dry_run, .dry_run = 1 };

struct spawner plat_spawner_dry(spawn_log_fn log, void *opaque)
{
	return (struct spawner){ .ops = &dry_ops, .log = log, .opaque = opaque };
}
