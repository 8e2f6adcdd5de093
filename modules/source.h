/*
 * Source folders (modules/source.c): a tree that `tree ... at: DIR`
 * builds and `churn ... at: DIR` changes in a folder outside the target,
 * and that `sync: { from: DIR }` copies to each volume, as a backup tool
 * copies a changing source to its destinations (the enumeration articles
 * 001/002: Carbon Copy Cloner tasks Source > HFS+ and Source > APFS).
 *
 * The runner runs a step on every volume in turn; a step with `at` does
 * its work in the first cell of its phase only. The folder's state file
 * records the step instance (rig_ctx.instance: the run, the phase) that
 * last changed the folder, so the later cells of the phase, and a resumed
 * run's cells of a phase already done, find it done and record a note
 * instead of doing it again.
 *
 * DIR (absolute, outside the target) holds:
 *   .rig-source        the marker: rig made the folder and owns what is in
 *                      it (a non-empty folder without it is refused)
 *   .rig-source-state  the tree's description (tree.h's state: its
 *                      parameters, seed and every file's generation) and
 *                      the instance that last changed it; written to a
 *                      temporary name and renamed, after the change
 *   tree/              the tree
 */
#ifndef RIG_SOURCE_H
#define RIG_SOURCE_H

struct rig_ctx;
struct strbuf;
struct tree_state;

#define SOURCE_MARKER ".rig-source"
#define SOURCE_STATE ".rig-source-state"

/*
 * The tree in source folder dir as its state file describes it (root
 * dir/tree), into *t, and the instance that last changed it into
 * *instance (both owned by the caller; instance may be NULL). 0; -ENOENT
 * when the folder, its marker or its state is missing (no tree was built
 * there, or one is being built); another negative errno for a state file
 * that cannot be read. The reason is in err either way.
 */
int mod_source_load(const char *dir, struct tree_state **t, char **instance, struct strbuf *err);
/*
 * Check source folder dir for a cell on the volume folder ctx->dir:
 * absolute, neither inside the volume's folder nor holding it, and rig's
 * (its marker). create: make it (and missing parents) when missing, and
 * claim it when empty. 0 or a negative errno with the reason in ctx->err.
 */
int mod_source_folder(struct rig_ctx *ctx, const char *dir, int create);

#endif
