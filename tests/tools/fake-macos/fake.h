/*
 * The fake macOS tools' shared parts (see main.c for what the fake is):
 * the state folder, its files read and rewritten whole, and plist output.
 *
 * Every function works on the state folder in `struct fake`; the verbs
 * print to stdout (flushed at exit) and return the tool's exit status.
 * What a bash script would have died of (no memory, a path that does not
 * fit) ends the process with a message; a state file that cannot be
 * written is reported on stderr and the verb goes on, as the script did.
 */
#ifndef RIG_FAKE_MACOS_FAKE_H
#define RIG_FAKE_MACOS_FAKE_H

#include <stddef.h>

#include "lib/strbuf.h"

#define MIB 1048576LL
#define EFI_BYTES 209715200LL /* the EFI partition diskutil makes at 20480 */
#define GPT_TAIL 16896LL      /* the backup GPT at the end of a disk */

struct fake {
	const char *dir; /* $RIG_FAKE_MACOS */
};

/* A verb: the tool's arguments after its name; returns the exit status. */
typedef int fake_verb(struct fake *fk, int argc, char **argv);

fake_verb fake_diskutil, fake_hdiutil, fake_mdutil, fake_tmutil, fake_ctl;

/* --- the state folder (state.c) --- */

/* The path DIR/fmt... in p (replaced). Ends the process if it does not fit. */
const char *fake_path(struct fake *fk, struct strbuf *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether path is a regular file; a file of at least one byte. */
int fake_is_file(const char *path);
int fake_has_bytes(const char *path);
/* Write text to path through path.tmp and a rename; a failure goes to stderr. */
void fake_write(const char *path, const char *text);
/* Append text to path. */
void fake_append(const char *path, const char *text);
/* The lines of a file (none when it cannot be read), each without its
 * newline. Caller frees with fake_names_free. */
char **fake_lines(const char *path, size_t *n);
/* mkdir -p DIR/name. */
void fake_mkdir(struct fake *fk, const char *name);
/* A whole disk's name: disk4s2 -> disk4, /dev/disk5s1 -> disk5. Caller frees. */
char *fake_whole_of(const char *id);
/* An integer as bash's arithmetic reads a state value ("" is 0). */
long long fake_num(const char *s);

/* disks/ID's value of key (key=value lines): "" when there is none. Caller frees. */
char *fake_kv(struct fake *fk, const char *disk, const char *key);
/* Set key in disks/ID: its old lines go, key=value is appended. */
void fake_kv_set(struct fake *fk, const char *disk, const char *key, const char *value);
/* The next free disk number (the file `next`, 2 when there is none), taken. */
long long fake_next_disk(struct fake *fk);
/* The disks of disks/ in number order. Caller frees with fake_names_free. */
char **fake_disk_ids(struct fake *fk, size_t *n);
void fake_names_free(char **v, size_t n);

/* Take one count of fault name from `faults` (its ARG, when the line has
 * one, must equal arg): 1 when taken. */
int fake_fault(struct fake *fk, const char *name, const char *arg);

/* --- partitions: parts/ID, one line each, in disk order --- */
enum { P_ID, P_CONTENT, P_FS, P_NAME, P_OFFSET, P_SIZE, P_VOLUME, P_MOUNT, P_FIELDS };

struct part {
	char *f[P_FIELDS]; /* id|content|fs|name|offset|size|volume|mount ("" when missing) */
	char *line;        /* the line as read, without its newline */
	char *buf;         /* the fields' storage */
};

struct parts {
	struct part *v;
	size_t n, alloc;
};

/* The lines of parts/disk (none when there is no such file): 0 or -ENOENT. */
int fake_parts_read(struct fake *fk, const char *disk, struct parts *ps);
/* Write ps as parts/disk. */
void fake_parts_write(struct fake *fk, const char *disk, const struct parts *ps);
void fake_parts_release(struct parts *ps);
/* Replace field i of p (its line is then made from the fields). */
void fake_part_set(struct part *p, int i, const char *value);
/* Append a line made of the fields. */
void fake_parts_add(struct parts *ps, const char *const f[P_FIELDS]);
/* A copy of p (caller releases with fake_part_release). */
void fake_part_copy(struct part *to, const struct part *p);
void fake_part_release(struct part *p);

/* How a partition line is looked for across every parts/ file, the files
 * in name order, first match. */
enum part_key {
	BY_ID_OR_VOLUME, /* field id or volume is the key */
	BY_MOUNT,        /* field mount is the key */
	BY_ANY_NAME,     /* mount, volume or /dev/volume is the key */
};
/* The first line found, copied into *out: 1, or 0 (out is zeroed). */
int fake_part_find(struct fake *fk, enum part_key how, const char *key, struct part *out);
/* The line of partition id on its own disk (field id only): 1 or 0. */
int fake_part_of(struct fake *fk, const char *id, struct part *out);

/* Volumes/NAME (or "NAME 1", ...) made a link to data/VOLUME, and the
 * partition line's mount set. Returns the mount point; caller frees. */
char *fake_mount(struct fake *fk, const char *volume, const char *name);
void fake_unmount(struct fake *fk, const char *volume);
/* Forget the partitions of whole disk disk: unmounted, data/ and snaps/
 * removed, their containers' disks/ files too. */
void fake_drop_partitions(struct fake *fk, const char *disk);
/* personality/VOLUME holds name (a case-sensitive format), or goes. */
void fake_personality(struct fake *fk, const char *volume, const char *name);
/* rm -rf path (no shell). */
void fake_rmtree(const char *path);

/* --- plist output (plist.c) --- */
void plist_head(void);
void plist_tail(void);
/* A line of n tabs and text. */
void plist_line(int n, const char *text);
void plist_str(int n, const char *key, const char *value);
void plist_int(int n, const char *key, const char *digits);
void plist_num(int n, const char *key, long long v);
void plist_bool(int n, const char *key, int v);
void plist_error(const char *message);

/* diskutil's plist verbs (plist.c). */
int fake_list(struct fake *fk, int argc, char **argv);
int fake_info(struct fake *fk, const char *x);
int fake_apfs_list(struct fake *fk);

/* diskutil's layout verbs (layout.c). */
int fake_partition(struct fake *fk, int argc, char **argv);
int fake_limits(struct fake *fk, const char *store);
/* kind "apfs": apfs resizeContainer; "hfs": resizeVolume. argv: ID SIZE [triplets]. */
int fake_resize(struct fake *fk, const char *kind, int argc, char **argv);

/* diskutil's volume verbs (volumes.c). */
int fake_defragment(struct fake *fk, const char *vol, const char *how);
int fake_list_snapshots(struct fake *fk, const char *vol);
int fake_delete_snapshot(struct fake *fk, const char *vol, const char *by, const char *name);
int fake_unmount_disk(struct fake *fk, const char *disk);
int fake_unmount_verb(struct fake *fk, const char *vol);
int fake_mount_verb(struct fake *fk, const char *vol);

/* Print to stderr (stdout flushed first, so the two keep their order). */
void fake_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
