/*
 * Target locks: one run at a time on each disk, image and directory.
 *
 * A lock is flock(2) on a file named after what it guards (the key: a
 * disk's device number and serial, an image's absolute path, a directory's
 * device and inode; prov_target_keys() makes them) in rig's run-time
 * folder. The kernel releases it when the holder ends, however it ends, so
 * a crash or kill -9 leaves no stale lock. The holder writes who it is into
 * the file (target, run folder, command, pid, host, start time), so that a
 * refused run can name it.
 *
 * The folder: $RIG_LOCK_DIR when set (tests give each test process its
 * own); else plat_runtime_dir() (/run/rig, /var/run/rig) when it can be
 * created and written (as root); else a per-user folder,
 * $XDG_RUNTIME_DIR/rig or /tmp/rig-UID. A process locking in the per-user
 * folder also looks at the system folder, so a run by a user is refused
 * while a root run holds the same directory (not the other way round: root
 * does not look into users' folders).
 */
#ifndef RIG_LOCK_H
#define RIG_LOCK_H

#include <stddef.h>

struct strbuf;

struct lock_held {
	char *key;
	char *what;     /* "disk /dev/sdb", for messages and the lock file */
	char *path;     /* the lock file */
	int fd;
};

/* The locks one process holds, and who it says it is. */
struct lock_set {
	const char *command;  /* "rig run", "rig resume" */
	char *run;            /* the run folder (absolute), NULL until it is known */
	char *started;        /* UTC, ISO 8601, set by the first plat_lock_take */
	char *dir;            /* the lock folder, set by the first plat_lock_take */
	int user_dir;         /* dir is the per-user fallback folder */
	struct lock_held *v;
	size_t n;
};

void plat_lock_set_init(struct lock_set *s, const char *command);
/* Release every lock (the files are emptied, not removed) and free s. */
void plat_lock_set_release(struct lock_set *s);

/*
 * Take the lock named key for this process (what: the thing in words). A
 * key s already holds is not taken twice. Returns 0; -EBUSY when another
 * process holds it, with "WHAT is in use by rig run FOLDER (pid P on HOST,
 * started T); wait for it or stop it" in err; another negative errno when
 * the lock folder or file cannot be used, with the reason in err. A
 * holder that has not yet written who it is (it took the lock a moment
 * ago) is given up to LOCK_SETTLE_MS to do so.
 */
#define LOCK_SETTLE_MS 2000
int plat_lock_take(struct lock_set *s, const char *key, const char *what, struct strbuf *err);

/* The run folder is known: write it into every lock of s. */
void plat_lock_set_run(struct lock_set *s, const char *run_dir);

/*
 * Is key held by a process now (`rig devices`, `rig plan`)? 1 with the
 * holder in who ("rig run FOLDER (pid P on HOST, started T)"); 0 when it
 * is free or no lock folder has it. Never waits and never takes the lock
 * for longer than the test itself. Not for keys this process holds.
 */
int plat_lock_probe(const char *key, struct strbuf *who);

/* The file name of key's lock: the key with every byte but letters,
 * digits and . _ : - written as %XX, ".lock" added; a long key is cut and
 * the FNV-1a hash of the whole key added. */
void plat_lock_file_name(const char *key, struct strbuf *sb);

#endif
