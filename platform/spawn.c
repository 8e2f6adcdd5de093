/*
 * What every spawner shares (spawn.h): the one entry point, which hands
 * the command to the spawner's implementation and logs what comes back
 * (so a fake or injected result is logged exactly like a real one), the
 * argv text, plat_spawn_check.
 */
#include "platform/spawn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/spawn_impl.h"

static int needs_quotes(const char *s)
{
	if (!*s)
		return 1;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./=:,+%@", *s))
			return 1;
	return 0;
}

void plat_spawn_argv_text(struct strbuf *sb, const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			sb_addch(sb, ' ');
		if (!needs_quotes(argv[i])) {
			sb_adds(sb, argv[i]);
			continue;
		}
		sb_addch(sb, '\'');
		for (const char *p = argv[i]; *p; p++) {
			if (*p == '\'')
				sb_adds(sb, "'\\''");
			else
				sb_addch(sb, *p);
		}
		sb_addch(sb, '\'');
	}
}

void plat_spawn_cannot_run(struct strbuf *err, const char *const *argv)
{
	sb_adds(err, "cannot run ");
	plat_spawn_argv_text(err, argv);
	sb_adds(err, ": ");
}

void plat_spawn_result_release(struct spawn_result *r)
{
	free(r->output);
	free(r->stdout_text);
	free(r->stderr_text);
	memset(r, 0, sizeof(*r));
}

void plat_spawn_result_complete(struct spawn_result *r, const struct spawn_opts *opts)
{
	if (!r->output)
		r->output = xstrdup("");
	r->output_len = strlen(r->output);
	if (opts->split) {
		if (!r->stdout_text)
			r->stdout_text = xstrdup("");
		r->stdout_len = strlen(r->stdout_text);
		if (!r->stderr_text)
			r->stderr_text = xstrdup(r->output);
		r->stderr_len = strlen(r->stderr_text);
	} else {
		free(r->stdout_text);
		free(r->stderr_text);
		r->stdout_text = r->stderr_text = NULL;
	}
}

int plat_spawner_dry_run(const struct spawner *sp)
{
	return sp && sp->ops && sp->ops->dry_run;
}

int plat_spawn_run(struct spawner *sp, const char *const *argv, const char *cwd,
	      struct spawn_result *r, struct strbuf *err)
{
	return plat_spawn_run_opts(sp, argv, cwd, NULL, r, err);
}

int plat_spawn_run_opts(struct spawner *sp, const char *const *argv, const char *cwd,
		   const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err)
{
	static const struct spawn_opts none;
	struct spawner dflt;
	if (!sp) {
		dflt = plat_spawner_fault(plat_spawner_real(NULL, NULL));
		sp = &dflt;
	}
	memset(r, 0, sizeof(*r));
	if (!sp->ops) {
		plat_spawn_cannot_run(err, argv);
		sb_adds(err, "the spawner was not built by plat_spawner_real, plat_spawner_dry or plat_spawner_fake");
		return -EINVAL;
	}
	if (sp->watch && !sp->ops->dry_run) {
		struct strbuf text = STRBUF_INIT;
		plat_spawn_argv_text(&text, argv);
		sp->watch(sp->watch_opaque, text.buf, 0);
		sb_release(&text);
	}
	int rc = sp->ops->run(sp, argv, cwd, opts ? opts : &none, r, err);
	if (rc < 0)
		return rc;
	if (sp->log) {
		struct strbuf text = STRBUF_INIT;
		plat_spawn_argv_text(&text, argv);
		sp->log(sp->opaque, text.buf, sp->ops->dry_run ? NULL : r);
		sb_release(&text);
	}
	if (sp->ops->after)
		sp->ops->after(sp, argv);
	return 0;
}

int plat_spawn_check(struct spawner *sp, const char *const *argv, const char *cwd,
		struct spawn_result *r, struct strbuf *err)
{
	struct spawn_result local;
	struct spawn_result *res = r ? r : &local;
	int rc = plat_spawn_run(sp, argv, cwd, res, err);
	if (rc < 0)
		return rc;
	if (!res->exited || res->status != 0) {
		struct strbuf text = STRBUF_INIT;
		plat_spawn_argv_text(&text, argv);
		if (res->exited)
			sb_addf(err, "%s failed with exit status %d", text.buf, res->status);
		else
			sb_addf(err, "%s was killed by signal %d", text.buf, res->status);
		if (res->output_len)
			sb_addf(err, ":\n%s", res->output);
		sb_release(&text);
		rc = -EIO;
	}
	if (!r)
		plat_spawn_result_release(&local);
	return rc;
}
