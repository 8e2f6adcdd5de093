/*
 * What every provisioning backend does around the commands it runs
 * (linux*.c, macos*.c): notes for the command log and `rig plan`, the
 * cancel check between commands, running one command with its failure
 * described (the command, its exit status, the first lines of its
 * output), and finding a tool on PATH. Portable C.
 */
#ifndef RIG_PROVISION_COMMAND_H
#define RIG_PROVISION_COMMAND_H

#include <stdarg.h>
#include <stdint.h>

#include "platform/spawn.h"
#include "provision/provision.h"

#define PROV_ERR_LINES 12 /* command output kept in an error message */

/* ctx->note with a format; dropped when the context has no note hook. */
void prov_note(struct provision_ctx *ctx, int warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void prov_vnote(struct provision_ctx *ctx, int warning, const char *fmt, va_list ap);
/* Whether Ctrl-C was pressed; if so, "interrupted" goes into ctx->err. */
int prov_cancelled(struct provision_ctx *ctx);
/*
 * Run a command through ctx->sp in its own process group (never stopped
 * half-way); 0 only when it exited with status 0. On failure ctx->err
 * says which command, its status and the start of its output. *r always
 * receives the result, stdout also apart (zeroed when the command could
 * not start); the caller releases it.
 */
int prov_run_result(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *r);
/* The same; out, when not NULL, receives the result on success only. */
int prov_run(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *out);
void prov_sleep_ms(unsigned ms);
/* Ask to type the disk's model (macOS: media name) or serial before it
 * is erased; refused without a terminal (then --yes is the way). */
struct disk_facts;
int prov_typed_confirmation(struct provision_ctx *ctx, const struct disk_facts *f);
/* In a teardown: keep the first error (its code in *rc, its text in acc),
 * append later ones; ctx->err is emptied for the next step. */
void prov_teardown_error(struct provision_ctx *ctx, struct strbuf *acc, int *rc, int r);
/* After a failed provision: release its volumes v[n], and tear down what
 * was done; ctx->err keeps the reason of the failure, with the teardown's
 * own failure appended. */
void prov_undo(struct provision_ctx *ctx, size_t li,
	       int (*teardown)(struct provision_ctx *ctx, size_t li), struct volume *v, size_t n);
/* At the end of a run, when something is left: one more teardown, a
 * warning when it fails. */
void prov_last_teardown(struct provision_ctx *ctx,
			int (*teardown)(struct provision_ctx *ctx, size_t li));
/*
 * The identity of a disk target as checked and confirmed in prepare, so
 * that every destructive command can be preceded by a check that the path
 * still names that disk (Linux: sysfs; macOS: `diskutil info -plist`).
 * Model is the macOS media name; serial where the platform has one.
 */
struct disk_identity {
	int taken;
	char *name, *model, *serial;
	uint64_t size;
	int whole, is_virtual, internal;
};
void prov_disk_identity_take(struct disk_identity *id, const struct disk_facts *f);
void prov_disk_identity_release(struct disk_identity *id);
/*
 * Is now (facts read afresh) still the disk of id? 1 when it is; 0 when it
 * changed or vanished, with ctx->err saying "refusing to run ARGV: DEV is
 * no longer the disk that was checked and confirmed: WHAT CHANGED (rule
 * identity: ...)". argv NULL: "refusing to go on with DEV".
 */
int prov_same_disk(struct provision_ctx *ctx, const struct disk_identity *id,
		   const struct disk_facts *now, const char *dev, const char *const *argv);

/* Remove path and everything below it (not following links); nothing to
 * do when it does not exist. 0, or -errno with the reason in err. */
int prov_remove_tree(const char *path, struct strbuf *err);

/* An image path made absolute: its folder resolved (it must exist), its
 * name kept (the file may not exist yet). NULL with the reason in err;
 * the caller frees. */
char *prov_absolute_image(const char *path, struct strbuf *err);

/* Whether an executable name is on PATH. */
int prov_in_path(const char *name);

#endif
