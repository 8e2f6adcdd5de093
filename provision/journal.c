/* The provisioning journal's use by the backends; see journal.h. */
#include "provision/journal.h"

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "provision/command.h"

void prov_identity_text(struct strbuf *sb, const struct disk_identity *id)
{
	sb_addf(sb, "model %s, serial %s, %llu bytes", id->model ? id->model : "unknown",
		id->serial ? id->serial : "unknown", (unsigned long long)id->size);
}

int64_t prov_journal_begin(struct provision_ctx *ctx, const char *action, const char *object,
			   const char *const *argv, const char *identity)
{
	if (!ctx->journal || plat_spawner_dry_run(ctx->sp))
		return 0;
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	if (argv)
		plat_spawn_argv_text(&text, argv);
	int64_t id = ctx->journal->begin(ctx->journal->opaque, action, object,
					 argv ? text.buf : NULL, identity, &err);
	if (!id)
		prov_note(ctx, 1, "the provisioning journal did not record %s %s: %s", action,
			  object, err.buf);
	sb_release(&text);
	sb_release(&err);
	return id;
}

void prov_journal_end(struct provision_ctx *ctx, int64_t id, int rc)
{
	if (id && ctx->journal)
		ctx->journal->end(ctx->journal->opaque, id, rc == 0);
}

int prov_journal_run(struct provision_ctx *ctx, const char *action, const char *object,
		     const char *const *argv, struct spawn_result *out)
{
	int64_t id = prov_journal_begin(ctx, action, object, argv, NULL);
	int rc = prov_run(ctx, argv, out);
	prov_journal_end(ctx, id, rc);
	return rc;
}

int prov_journal_image_made(struct provision_ctx *ctx, const char *image)
{
	char *action = NULL;
	int done = 0;
	if (!ctx->journal || !ctx->journal->last(ctx->journal->opaque, image, "*-image", &action, &done))
		return 0;
	/* A delete that never ended (killed between its row and the unlink)
	 * was of the run's own image: still the run's to delete. */
	int made = !strcmp(action, "create-image") || (!strcmp(action, "delete-image") && done < 0);
	free(action);
	return made;
}
