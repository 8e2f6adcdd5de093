/*
 * The platforms a plan can be written for, as the plan language knows
 * them: each one's name, the file systems it makes (names, aliases, case,
 * labels, what a volume of each can be asked), what it can do, and what
 * a disk's name looks like there. The plan checks against these tables;
 * each platform's driver (provision/driver.h) refers to its table and adds
 * the provisioning. The list comes from the Makefile (DRIVERS, passed as
 * RIG_DRIVERS = "X(linux) X(macos)"): a platform NAME defines
 * plan_platform_NAME in plan/platform_NAME.c.
 */
#ifndef RIG_PLAN_PLATFORM_H
#define RIG_PLAN_PLATFORM_H

struct strbuf;

/* A file system a platform can make. */
struct plan_fs {
	const char *name;    /* as plans write it: "apfs", "ext4" */
	/* Other names a plan may give it, NULL ended (NULL: none): the
	 * platform's own names, matched without case. */
	const char *const *aliases;
	int case_sensitive;  /* names differ by case alone: 1; fold case: 0 */
	/* How a partition of it is kept and resized by a `keep: true` layout
	 * (NULL: it cannot be). */
	const char *keep_how;
	int label_max;       /* the longest volume name its label takes */
	const char *label_bad; /* characters its label refuses, or NULL */
	unsigned flags;      /* PLAN_FS_*: what a volume of it can be asked */
};

/* What a file system can do (plan_fs.flags): the plan's partition
 * conditions and steps check these, never a file system's name. */
enum {
	PLAN_FS_SNAPSHOTS = 1u << 0, /* read-only snapshots (the snapshot step, `snapshots:`) */
	PLAN_FS_DEFRAG = 1u << 1,    /* automatic defragmentation switched on or off (`defrag:`) */
};

/* Abilities (plan_platform.abilities). */
enum {
	PLAN_CAN_KEEP = 1u << 0,    /* a layout may keep its first partition, resized */
	PLAN_CAN_REMOUNT = 1u << 1, /* cache: remount between cells */
	/* A content indexer that can be switched off per volume (`indexing:`);
	 * macOS's Spotlight. */
	PLAN_CAN_INDEX = 1u << 2,
};

struct plan_platform {
	const char *name;         /* "linux": --platform, the store, messages */
	const struct plan_fs *fs; /* the file systems it makes, name == NULL ends */
	unsigned abilities;       /* PLAN_CAN_* */
	/* A disk target's device as this platform names a whole disk: 0, or
	 * -1 with why (a plan's error). */
	int (*device_check)(const char *dev, struct strbuf *why);
};

/* Every platform built in, NULL ended, and each by name (plan_platform_linux). */
extern const struct plan_platform *const plan_platforms[];
#ifdef RIG_DRIVERS
#define X(n) extern const struct plan_platform plan_platform_##n;
RIG_DRIVERS
#undef X
#endif

/* The platform called name, or NULL. */
const struct plan_platform *plan_platform_find(const char *name);
/* The platform of the machine rig runs on (plat_name()); NULL where there is none. */
const struct plan_platform *plan_platform_host(void);
/* "linux or macos": the names of the platforms, for messages. */
void plan_platform_names(struct strbuf *sb);
/* d's file system called name or one of its aliases, or NULL. */
const struct plan_fs *plan_platform_fs(const struct plan_platform *d, const char *name);
/* The first platform (in plan_platforms order) that can make fs, or NULL. */
const struct plan_platform *plan_platform_of_fs(const char *fs);
/* d's file system fs has every flag of want (PLAN_FS_*): 1, else 0 (also
 * when d cannot make fs). */
int plan_fs_can(const struct plan_platform *d, const char *fs, unsigned want);
/* "apfs, apfsx": d's file systems with every flag of want; "" for none. */
void plan_fs_with(struct strbuf *sb, const struct plan_platform *d, unsigned want);

#endif
