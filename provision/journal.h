/*
 * The provisioning journal, as the backends use it (provision.h, struct
 * prov_journal): one row per action that attaches, writes to or removes
 * part of the target, written before the action and ended after it. The
 * human record (commands.log) says the same in words; nothing reads it
 * back. What a killed run left is known from here: an image file whose
 * newest row is its creation was made by the run and not yet removed.
 *
 * Actions (docs/results-store.md lists them): create-image, attach,
 * partition, format, mount, unmount, detach, delete-image, keep-image;
 * the object is what the action acts on (the image file, the disk or
 * partition device, the mount point).
 */
#ifndef RIG_PROVISION_JOURNAL_H
#define RIG_PROVISION_JOURNAL_H

#include <stdint.h>

#include "provision/provision.h"

/* Before action on object: a handle for prov_journal_end, 0 when nothing
 * is recorded (no journal, a dry run). argv: the command, or NULL for
 * what rig does itself (creating or deleting a file). identity: what the
 * target was seen to be right before, or NULL. A journal that cannot be
 * written is a warning, not a stop: the action is what the user asked. */
int64_t prov_journal_begin(struct provision_ctx *ctx, const char *action, const char *object,
			   const char *const *argv, const char *identity);
/* "model M, serial S, N bytes": a disk's identity as a journal row keeps it. */
struct disk_identity;
void prov_identity_text(struct strbuf *sb, const struct disk_identity *id);
/* After it: rc 0 is done, anything else failed. */
void prov_journal_end(struct provision_ctx *ctx, int64_t id, int rc);
/* Run argv as action on object (prov_run's contract), journaled around it. */
int prov_journal_run(struct provision_ctx *ctx, const char *action, const char *object,
		     const char *const *argv, struct spawn_result *out);
/*
 * Whether the run made the image file and had not removed or kept it
 * when it stopped: of its journal rows create-image, delete-image and
 * keep-image, the newest is create-image (ended or not; attaching and
 * detaching it do not change whose it is), or a delete-image that never
 * ended (killed before the file was removed).
 * A kill between creating the file and writing its table leaves a file
 * without rig's mark, which the image check would refuse as someone else's.
 */
int prov_journal_image_made(struct provision_ctx *ctx, const char *image);

#endif
