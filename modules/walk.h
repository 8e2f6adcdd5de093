/*
 * A tree walk that stats every entry, for `enumerate` (modules/walk.c),
 * in one of two orders: the order is part of what is measured (on a cold
 * cache it decides which blocks of the disk are read, and in which order).
 *
 * WALK_INODE: each directory is opened relative to its parent's descriptor
 * (openat, O_NOFOLLOW) and read whole; its entries are then stat'ed with
 * fstatat relative to it in inode-number order, as GNU du's fts does: on
 * file systems that keep inodes in tables (ext4, xfs) that turns a
 * cold-cache walk's random inode-table reads into nearly sequential ones.
 * Subdirectories are entered after all entries of their parent are
 * stat'ed, also in inode order.
 *
 * WALK_FTS: the C library's fts(3) (glibc, macOS libc) with FTS_PHYSICAL |
 * FTS_NOCHDIR and no comparison function: entries in the order the
 * directory returns them, each lstat'ed by its path from the root, a
 * directory's entries read and stat'ed before the first of them is
 * returned, subdirectories entered depth first in that order. This is how
 * the enumeration article's tool (source articles 001/002) walked.
 * FTS_NOCHDIR because rig never changes the process's working directory;
 * the cost is a path lookup from the root per entry, whose components
 * the walk itself has just put in the cache.
 *
 * Both: symlinks are counted, never followed (a root that is a symlink is
 * refused, as it is not a directory of the tree); no chdir. Memory: the
 * entries of the directories on the current path only, so it follows the
 * widest directory, not the tree. Descriptors (WALK_INODE): one per level
 * of the current path.
 */
#ifndef RIG_WALK_H
#define RIG_WALK_H

#include <signal.h>
#include <stdint.h>

struct stat;
struct strbuf;

struct walk_counts {
	uint64_t dirs;   /* the root included */
	uint64_t files;  /* regular files */
	uint64_t other;  /* symlinks, devices, sockets, fifos */
	uint64_t bytes;  /* st_size of the regular files */
};

enum walk_order {
	WALK_INODE, /* per directory, in inode-number order (du) */
	WALK_FTS,   /* fts(3), physical, directory order */
};

struct walk_opts {
	enum walk_order order;
	volatile sig_atomic_t *cancel; /* raised: stop before the next entry; may be NULL */
	/* Called with every entry as the walk stats it, in the walk's order,
	 * the root first: its path (root as given, then root/a/b...) and its
	 * lstat. NULL: none (enumerate's timed walk; a visitor makes the
	 * inode walk build each entry's path). */
	void (*visit)(void *opaque, const char *path, const struct stat *st);
	void *opaque;
};

/*
 * Walk root (a directory; refused if it is a symlink), adding to *c.
 * 0; 1 when *o->cancel was raised; or a negative errno with the path and
 * the failing call in err ("cannot open directory ROOT: ..." when root is
 * missing, not a directory or a symlink, in both orders).
 */
int mod_walk_tree(const char *root, const struct walk_opts *o, struct walk_counts *c,
	      struct strbuf *err);

#endif
