/*
 * plat_spawner_fault: fault injection (fault.h) in front of another spawner, a
 * decorator rather than a fourth way of running. Before each command the
 * RIG_FAULT rules are asked: one that names the command makes it "exit"
 * with its status and message without being handed on; otherwise the inner
 * spawner carries it out. The after-spawn signals are sent from the after
 * hook, once plat_spawn_run_opts has logged the command, so that a run killed
 * there still has the command in its log. Rejected: asking the rules in
 * the real spawner (a fake spawner could not then be given faults, and the
 * one file that starts processes would also hold the test facility).
 */
#include "lib/strbuf.h"
#include "platform/fault.h"
#include "platform/spawn_impl.h"

static int fault_run(const struct spawner *sp, const char *const *argv, const char *cwd,
		     const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err)
{
	struct strbuf injected = STRBUF_INIT;
	int status = 0;
	if (!plat_fault_spawn_before(argv, &status, &injected)) {
		sb_release(&injected);
		return sp->inner->run(sp, argv, cwd, opts, r, err);
	}
	r->exited = 1;
	r->status = status;
	r->output = sb_detach(&injected);
	plat_spawn_result_complete(r, opts);
	return 0;
}

static void fault_after(const struct spawner *sp, const char *const *argv)
{
	plat_fault_spawn_after(argv);
}

static const struct spawn_ops fault_ops = { .run = fault_run, .after = fault_after };

struct spawner plat_spawner_fault(struct spawner inner)
{
	if (!inner.ops || inner.ops->dry_run || inner.ops == &fault_ops)
		return inner;
	struct spawner sp = inner;
	sp.ops = &fault_ops;
	sp.inner = inner.ops;
	return sp;
}
