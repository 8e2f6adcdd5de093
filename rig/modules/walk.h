/*
 * A tree walk that stats every entry, for `enumerate` (rig/modules/walk.c).
 *
 * Each directory is opened relative to its parent's descriptor (openat,
 * O_NOFOLLOW: symlinks are counted, never followed; no chdir, so the
 * process's working directory is never touched) and read whole; its
 * entries are then stat'ed with fstatat relative to it in inode-number
 * order, as GNU du's fts does: on file systems that keep inodes in tables
 * (ext4, xfs) that turns a cold-cache walk's random inode-table reads into
 * nearly sequential ones. Subdirectories are entered after all entries of
 * their parent are stat'ed, also in inode order.
 *
 * Memory: the entries of the directories on the current path only (names
 * and inode numbers), so it follows the widest directory, not the tree.
 * Descriptors: one per level of the current path.
 */
#ifndef RIG_WALK_H
#define RIG_WALK_H

#include <signal.h>
#include <stdint.h>

struct strbuf;

struct walk_counts {
	uint64_t dirs;   /* the root included */
	uint64_t files;  /* regular files */
	uint64_t other;  /* symlinks, devices, sockets, fifos */
	uint64_t bytes;  /* st_size of the regular files */
};

/*
 * Walk root (a directory; not followed if it is a symlink), adding to *c.
 * 0; 1 when *cancel was raised (checked between entries; cancel may be
 * NULL); or a negative errno with the path and the failing call in err.
 */
int walk_tree(const char *root, struct walk_counts *c, volatile sig_atomic_t *cancel,
	      struct strbuf *err);

#endif
