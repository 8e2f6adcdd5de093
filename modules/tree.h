/*
 * tree, enumerate, churn (modules/tree.c, tree_age.c): what the two
 * files and the tests share. The runner knows these modules only through
 * mod_tree, mod_enumerate and mod_churn; the types
 * here are the args structs the parameter tables bind and the per-volume
 * state `tree` leaves for `enumerate` and `churn` (they share its slot).
 *
 * The state describes the tree without listing it: every directory's and
 * file's name, place and size is a function of the tree's seed and the
 * file's index (and, for sizes and payload, its generation), so a
 * million-file tree costs the state two bytes per file (the generation
 * counters churn advances) and a few hundred bytes besides.
 */
#ifndef RIG_TREE_H
#define RIG_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/units.h"

struct tree_args {
	uint64_t files;
	uint64_t dirs;
	uint64_t depth;
	struct size_dist sizes;
	uint64_t threads; /* threads building it (tree_build.c); 0 counts as 1 */
	char *at;         /* a source folder (source.h), or NULL: the volume */
};

/* enumerate's order and cache: indexes into its parameter table's choices. */
enum enumerate_order { ENUMERATE_INODE, ENUMERATE_FTS };
enum enumerate_cache { ENUMERATE_DROP, ENUMERATE_KEEP };

struct enumerate_args {
	int order; /* enum enumerate_order */
	int cache; /* enum enumerate_cache */
};

struct churn_args {
	double fraction;
	char *at;         /* a source folder (source.h), or NULL: the volume */
};

struct rig_module;
/* tree.c's module, which enumerate and churn need (their .needs). */
extern const struct rig_module mod_tree;

#define TREE_SUBDIR "tree"        /* the tree lives in <volume dir>/tree */
#define TREE_PROGRESS "tree"      /* what the progress line calls the files being made */
#define TREE_MAX_DEPTH 64         /* the parameter table's bound on depth */
#define TREE_NAME_MAX 40          /* a name with its NUL: 'd', 20 digits, '-', 12 tag chars */
#define TREE_PATH_MAX ((TREE_MAX_DEPTH + 1) * TREE_NAME_MAX) /* a path below the root */
#define TREE_BLOCK (1u << 20)     /* files up to this size are written with one write */
#define TREE_TMP_NAME ".rig-tmp"  /* replacements are written to this name in the file's
                                   * folder, then renamed: tree names start with 'd' or
                                   * 'f', so no clash */

struct strbuf;
/* Remove the tree at root (anything there is rig's: the folder is named
 * for the module) and commit the removal. 0, or a negative errno with the
 * reason in err. */
int mod_tree_remove(const char *root, struct strbuf *err);

/* What `tree` leaves in *ctx->volstate (released by mod_tree_state_free). */
struct tree_state {
	uint32_t magic;
	char *root;               /* <volume dir>/tree, owned */
	uint64_t seed;            /* the tree cell's seed: names, sizes */
	uint64_t name_key, size_key;
	uint64_t payload_seed;    /* plat_payload_init seed of every generation of every file */
	uint64_t files;
	uint64_t dirs;            /* below the root, which is not counted */
	unsigned depth;
	uint64_t level[TREE_MAX_DEPTH + 1]; /* directories per level; level[0] = 1, the root */
	struct size_dist sizes;   /* a copy (its list owned) */
	uint16_t *gen;            /* per file: how many times churn replaced it */
	uint64_t bytes;           /* the tree's payload bytes now (churn keeps it current) */
	uint64_t replaced;        /* replacements so far, all cycles */
};

/*
 * Plan a tree (nothing is created): its shape, names and sizes follow from
 * args and seed alone. root is copied. NULL with the reason in *why (a
 * static string) when args cannot make a tree (dirs < depth, depth > 64).
 * The shape: level k (1..depth) holds level[k] directories with
 * level[k] >= level[k-1], sizes growing by a common fanout, so that every
 * directory, the root included, has about the same number of
 * subdirectories; the directories of level k are shared out among those of
 * level k-1 in contiguous runs whose lengths differ by at most one. Files
 * go to the leaf directories (the deepest level; the root when depth is
 * 0), in contiguous runs the same way.
 */
struct tree_state *mod_tree_state_new(const struct tree_args *a, uint64_t seed, const char *root,
				  const char **why);
void mod_tree_state_free(void *state);
/* Heap bytes one churn cell adds while it runs for a tree of n files (its
 * selection bitmap; the payload pool, a fixed 64 MiB + TREE_BLOCK, aside). */
size_t mod_tree_churn_bytes(uint64_t files);

/* File i's size at generation gen (0 = as `tree` wrote it): units_dist_draw
 * with a uniform from a prng seeded by (seed, i, gen). */
uint64_t mod_tree_file_size(const struct tree_state *t, uint64_t i, unsigned gen);
/* File i's payload stream at generation gen (payload.h: a new stream for
 * every replacement). */
uint64_t mod_tree_file_stream(uint64_t i, unsigned gen);
/* The leaf directory (index in the deepest level) holding file i, and the
 * first file of leaf l (files of l are [first(l), first(l + 1))). */
uint64_t mod_tree_leaf_of(const struct tree_state *t, uint64_t i);
uint64_t mod_tree_leaf_first(const struct tree_state *t, uint64_t leaf);
/* The name of directory j of level k (1..depth), or of file i (k = 0),
 * NUL-terminated in buf (TREE_NAME_MAX bytes); returns its length. */
size_t mod_tree_name(const struct tree_state *t, unsigned k, uint64_t j, char buf[TREE_NAME_MAX]);
/* File i's path relative to the root, in buf (TREE_PATH_MAX bytes); returns
 * its length. *dir_len (may be NULL) gets the length of its directory part
 * including the final '/' (0 for a file in the root). */
size_t mod_tree_file_path(const struct tree_state *t, uint64_t i, char buf[TREE_PATH_MAX],
		      size_t *dir_len);
/* Directory j of level k's path relative to the root (k >= 1). */
size_t mod_tree_dir_path(const struct tree_state *t, unsigned k, uint64_t j, char buf[TREE_PATH_MAX]);

/* Shared by tree.c and tree_age.c. */
#define TREE_MAGIC 0x74726531u /* "tre1" */
struct rig_ctx;
struct payload;
/* Write size bytes of payload stream `stream` from offset 0 to fd (opened
 * for writing at offset 0) in TREE_BLOCK writes: one write for a small
 * file. buf NULL: the windows of the pool itself (plat_payload_block, one
 * writer per pool); else each window is copied into buf (TREE_BLOCK bytes,
 * plat_payload_copy: several threads may share the pool). 0, 1 when cancelled,
 * or a negative errno (the caller names the file in its message). */
int mod_tree_write_payload(struct rig_ctx *ctx, struct payload *pay, unsigned char *buf, int fd,
		       uint64_t stream, uint64_t size);
/* Make everything written so far durable, inside a step's timing: sync(2),
 * then the platform's full sync of the tree's root directory (best effort;
 * on macOS sync(2) only schedules the writes and F_FULLFSYNC then flushes
 * the device). */
void mod_tree_sync_volume(int rootfd);

/* What mod_tree_build did: files and payload bytes written, and the timed
 * nanoseconds. */
struct tree_built {
	uint64_t files, bytes, ns;
};
/*
 * Build the tree args and ctx->seed describe at root, as `tree` does
 * (removing what an earlier tree left at root, untimed; the notes `shape`
 * and `direct`). 0 with the tree's state in *out (its root is root), 1
 * when cancelled, or a negative errno with the reason in ctx->err; *out
 * is NULL then. Records no metrics.
 */
int mod_tree_build(struct rig_ctx *ctx, const struct tree_args *args, const char *root,
	       struct tree_state **out, struct tree_built *res);
/*
 * Replace `fraction` (percent) of t's files as `churn` does: the selection
 * seeded from ctx->seed, ctx->rep and ctx->cycle, so it is the same
 * wherever the tree is. *done: files replaced; *ns: the timed part. 0, 1
 * when cancelled, or a negative errno with the reason in ctx->err. t
 * follows every replacement. Records no metrics (the note `fraction` when
 * it rounds to none).
 */
int mod_tree_churn(struct rig_ctx *ctx, struct tree_state *t, double fraction, uint64_t *done,
	       uint64_t *ns);

/* tree's and churn's cells with `at` (source.c). */
int mod_source_tree_run(struct rig_ctx *ctx, const struct tree_args *args);
int mod_source_churn_run(struct rig_ctx *ctx, const struct churn_args *args);

extern const struct rig_module mod_tree, mod_enumerate, mod_churn,
	mod_sync;

#endif
