/*
 * plat_spawner_fake, for tests: a callback plays each command instead of
 * running it (the refusal suite's recorded machines: it records the
 * command and does the kernel's part, so a real backend is driven to its
 * destructive commands and none of them runs). What the callback leaves
 * out is filled in as a real run would, and the result is logged like one.
 */
#include <string.h>

#include "lib/strbuf.h"
#include "platform/spawn_impl.h"

static int fake_run(const struct spawner *sp, const char *const *argv, const char *cwd,
		    const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err)
{
	int rc = sp->fake(sp->opaque, argv, r);
	if (rc < 0) {
		plat_spawn_cannot_run(err, argv);
		sb_adds(err, strerror(-rc));
		return rc;
	}
	plat_spawn_result_complete(r, opts);
	return 0;
}

static const struct spawn_ops fake_ops = { .run = fake_run };

struct spawner plat_spawner_fake(spawn_fake_fn fake, spawn_log_fn log, void *opaque)
{
	return (struct spawner){ .ops = &fake_ops, .log = log, .opaque = opaque, .fake = fake };
}
