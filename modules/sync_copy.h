/*
 * Making one folder tree equal to another, the way a backup tool does
 * (rsync -a --delete, Carbon Copy Cloner's "Source > Destination" task):
 * the algorithm of the `sync` module (modules/sync.c), apart so it can
 * be tested on plain folders.
 *
 * Per directory, source and destination are each read whole and sorted by
 * name; then
 *   1. entries of the destination that the source lacks, or that are of
 *      another type there (a file where the source has a folder), are
 *      deleted, folders with everything in them;
 *   2. every source entry in name order: a regular file is copied when
 *      the destination has none, or one whose size or modification time
 *      differs (rsync's and CCC's quick check; a destination that keeps
 *      whole seconds only, as HFS+, is compared to the second, as rsync's
 *      --modify-window does); a folder is made when missing and entered,
 *      depth first, and gets the source's times once its contents are done
 *      (copies inside it changed them);
 * A copy is written to TREE_TMP_NAME in the destination folder (from a
 * 1 MiB buffer: the source read buffered, the copy written with direct I/O
 * when asked and the file system allows, its last partial block through a
 * second, buffered descriptor, as `write` does), given the source's mode
 * and times, and renamed over the old name: a reader sees the old file or
 * the new one, whole, and an interrupted sync leaves at most that
 * temporary name, which the next sync deletes (the source lacks it). Files
 * are not synced one by one (rsync and CCC do not); the caller syncs the
 * volume once. Symlinks and other special files in the source are refused
 * (rig's trees have none).
 *
 * Memory: the entries of the directories on the current path, source and
 * destination; descriptors: two per level of the current path.
 */
#ifndef RIG_SYNC_COPY_H
#define RIG_SYNC_COPY_H

#include <signal.h>
#include <stdint.h>

struct strbuf;

struct sync_opts {
	int direct;                      /* write copies with direct I/O where possible */
	volatile sig_atomic_t *cancel;   /* raised: stop before the next entry; may be NULL */
};

struct sync_counts {
	/* What was done. */
	uint64_t copied;      /* files written (new or changed) */
	uint64_t bytes;       /* their bytes */
	uint64_t deleted;     /* entries deleted: files and folders, each folder's contents counted */
	uint64_t made;        /* folders made */
	/* What the source holds (the destination's counts after a sync). */
	uint64_t dirs;        /* the root included */
	uint64_t files;
	uint64_t src_bytes;
	/* How copies were written. */
	int direct_refused;   /* direct I/O asked, refused by the file system for some copy */
	int tail;             /* some copy's last partial block went through a buffered descriptor */
};

/*
 * Make the folder dst (made when missing, with its parent existing) hold
 * what the folder src holds. Counts are added to *c. 0; 1 when cancelled
 * (dst is then part old, part new, each file whole); or a negative errno
 * with the path and the failing call in err.
 */
int mod_sync_tree(const char *src, const char *dst, const struct sync_opts *o, struct sync_counts *c,
	      struct strbuf *err);

#endif
