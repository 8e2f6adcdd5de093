/*
 * Spawning external commands; see spawn.h. Running one for real is
 * spawn_real.c's.
 */
#include "spawn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "spawn_impl.h"
#include "strbuf.h"
#include "xalloc.h"

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

void spawn_argv_text(struct strbuf *sb, const char *const *argv)
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

void spawn_cannot_run(struct strbuf *err, const char *const *argv)
{
	sb_adds(err, "cannot run ");
	spawn_argv_text(err, argv);
	sb_adds(err, ": ");
}

void spawn_result_release(struct spawn_result *r)
{
	free(r->output);
	free(r->stdout_text);
	free(r->stderr_text);
	memset(r, 0, sizeof(*r));
}

/* A result that did not come from running the command (sp->fake, or a
 * fault injected): r->output set; the rest as a real run fills it (its
 * output on stderr), then logged. */
static void finish_fake(struct spawner *sp, const char *text, int split, struct spawn_result *r)
{
	if (!r->output)
		r->output = xstrdup("");
	r->output_len = strlen(r->output);
	if (split) {
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
	if (sp && sp->log)
		sp->log(sp->opaque, text, r);
}

int spawn_run(struct spawner *sp, const char *const *argv, const char *cwd,
	      struct spawn_result *r, struct strbuf *err)
{
	return spawn_run_opts(sp, argv, cwd, NULL, r, err);
}

int spawn_run_opts(struct spawner *sp, const char *const *argv, const char *cwd,
		   const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err)
{
	int split = opts && opts->split;
	struct strbuf text = STRBUF_INIT;
	memset(r, 0, sizeof(*r));
	spawn_argv_text(&text, argv);
	if (sp && sp->dry_run) {
		r->exited = 1;
		r->output = xstrdup("");
		if (split) {
			r->stdout_text = xstrdup("");
			r->stderr_text = xstrdup("");
		}
		if (sp->log)
			sp->log(sp->opaque, text.buf, NULL);
		sb_release(&text);
		return 0;
	}
	if (sp && sp->fake) {
		int rc = sp->fake(sp->opaque, argv, r);
		if (rc < 0)
			sb_addf(err, "cannot run %s: %s", text.buf, strerror(-rc));
		else
			finish_fake(sp, text.buf, split, r);
		sb_release(&text);
		return rc;
	}
	struct strbuf injected = STRBUF_INIT;
	int istatus = 0;
	if (fault_spawn_before(argv, &istatus, &injected)) {
		r->exited = 1;
		r->status = istatus;
		r->output = sb_detach(&injected);
		finish_fake(sp, text.buf, split, r);
		fault_spawn_after(argv);
		sb_release(&text);
		return 0;
	}
	sb_release(&injected);
	int rc = spawn_real_run(argv, cwd, opts, r, err);
	if (rc < 0) {
		sb_release(&text);
		return rc;
	}
	if (sp && sp->log)
		sp->log(sp->opaque, text.buf, r);
	fault_spawn_after(argv);
	sb_release(&text);
	return 0;
}

int spawn_check(struct spawner *sp, const char *const *argv, const char *cwd,
		struct spawn_result *r, struct strbuf *err)
{
	struct spawn_result local;
	struct spawn_result *res = r ? r : &local;
	int rc = spawn_run(sp, argv, cwd, res, err);
	if (rc < 0)
		return rc;
	if (!res->exited || res->status != 0) {
		struct strbuf text = STRBUF_INIT;
		spawn_argv_text(&text, argv);
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
		spawn_result_release(&local);
	return rc;
}
