/*
 * Estimates of what a plan writes and how long it takes, and the check
 * that its data fits its volumes: `rig plan` prints both, `rig validate`
 * the warnings, and the runner repeats the check against the volumes it
 * provisioned before it writes anything (run_cells.c).
 *
 * The estimate walks the schedule (every cell as the runner will run it,
 * with cycles, sweeps, repetitions and volumes) and asks each cell's
 * module what it would do (module.estimate, modules/estimate.h), keeping per
 * volume what each kind of data holds there, so a fill level, a write set
 * replacing the last one or a test file laid out once come out as they
 * will. Sizes are the run's own draws when the seed is known, expectations
 * otherwise. Times: what is time-bound (pause, `time:`) exactly; bytes
 * moved at an assumed rate (a default per target kind, or --assume-rate);
 * file operations at an assumed rate; provisioning at an assumed time per
 * volume. Every assumption is printed with the numbers.
 *
 * Volume sizes: for a dirs target, the file system each folder is on
 * (statvfs; the space already used there counts); for an image, each
 * partition as the plan's platform driver fits it on the image (driver.h,
 * prov_prims.fit: the sizes the run makes), less the file system's
 * overhead (ext4's and xfs's by their mkfs defaults, others
 * PLAN_EST_FS_SHARE); for a disk, the same from the disk's size when the
 * caller could read it, else only partitions of an absolute size are
 * known and the others' fit check is deferred to the run. At run time the
 * caller passes the volumes' real sizes instead.
 *
 * Fit warnings (diag warnings at the step's file:line:column, one per step
 * and problem, with how many of the step's cells it hits): a file or test
 * file larger than its volume; a cell whose data does not fit in what is
 * left on its volume then (after a fill, the other steps' data), with the
 * numbers and what to change (the fill level, the image size).
 */
#ifndef RIG_PLAN_ESTIMATE_H
#define RIG_PLAN_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/diag.h"
#include "plan/plan.h"
#include "plan/schedule.h"

struct strbuf;

#define PLAN_EST_FS_SHARE 0.98           /* of a partition, what a file system holds
                                          * (but ext4 and xfs: their own rule) */
#define PLAN_EST_GPT_BYTES (2u << 20)    /* what a GPT and alignment take off a disk */
#define PLAN_EST_RATE_LOCAL 400e6        /* bytes/s assumed for dirs and image targets */
#define PLAN_EST_RATE_DISK 150e6         /* bytes/s assumed for a disk (a hard disk's) */
#define PLAN_EST_FILE_OPS 10000.0        /* file operations per second assumed (flash);
                                          * --assume-ops for a target's */
/* Entries statted per second from the cache (a warm walk; sync's look at
 * both trees): find -printf '%s' over 71,255 warm entries of /usr/share in
 * 0.36 s here, 2026-12-07. */
#define PLAN_EST_STAT_RATE 200000.0
#define PLAN_EST_PROVISION_S 2.0         /* seconds per volume a provisioning takes */
/* Cold walks measured by bench/walks.sh on a loop device over an image
 * file (an SSD-backed virtual disk), 2026-12-07: entries per second. */
#define PLAN_EST_WALK_EXT4 127000.0
#define PLAN_EST_WALK_XFS 102000.0
#define PLAN_EST_WALK_BTRFS 56500.0
#define PLAN_EST_WALKS_SAID 8            /* file systems whose walk rate the estimate names */

/* Entries per second a cold walk of a volume stats (enumerate from a
 * dropped cache), for a file system: --assume-walk FS=RATE overrides the
 * defaults of measured runs (plan_estimate.c, docs/plan-language.md). */
struct plan_est_walk {
	const char *fs;
	double rate;
};

/* A measured correction for one module's cells on one file system (rig
 * plan --from RUN, plan_calibrate.h): where the earlier run's own estimate
 * of those cells was est seconds and they took took, each cell's estimate
 * is multiplied by took / est; where est was 0, took / cells is added. */
struct plan_est_scale {
	const char *module;
	const char *fs;          /* the plan's file system; NULL: a dirs target's folder */
	double est, took;        /* seconds, over the earlier run's cells */
	size_t cells;
};

struct cell;

struct plan_est_options {
	uint64_t seed;
	int seed_known;         /* the run's seed: sizes drawn as the run draws them */
	unsigned seed_scheme;   /* plan_schedule_cell_seed's; 0: SEED_CURRENT */
	uint64_t image_size;    /* --image-size; 0: the plan's */
	uint64_t disk_size;     /* a disk target's size in bytes when read; 0: unknown */
	double rate;            /* bytes/s assumed; 0: PLAN_EST_RATE_* of the target kind */
	double ops;             /* file operations/s on the target (--assume-ops); 0:
	                         * PLAN_EST_FILE_OPS */
	/* Run time: the volumes of layout `layout` as provisioned (f_blocks and
	 * bytes in use, in bytes, per volume); only that layout is walked.
	 * NULL: sizes from the plan, every layout walked. */
	const double *capacity, *used;
	long layout;
	const struct plan_est_walk *walk; /* --assume-walk, nwalk of them; NULL: none */
	size_t nwalk;
	const struct plan_est_scale *scale; /* --from: per module and file system; NULL: none */
	size_t nscale;
	double provision_s;     /* seconds per volume provisioned; 0: PLAN_EST_PROVISION_S */
	/* Called with every estimated cell's seconds before any scale, and the
	 * file system its estimate is keyed on (plan_calibrate.c); NULL: none. */
	void (*on_cell)(void *arg, const struct cell *c, const char *fs, double seconds);
	void *on_cell_arg;
};

struct plan_est_sum {
	double written;          /* bytes */
	double timed_written;    /* of written, by time-bound writes at the assumed rate */
	double files;            /* files created */
	double seconds;
	size_t unknown;          /* cells whose writes depend on a size not known */
	size_t not_estimated;    /* cells of modules without an estimate (exec) */
	const char *skipped[4];  /* those modules' names, the first four */
	size_t nskipped;
};

struct plan_est {
	struct plan_est_sum *layouts; /* per layout (one for dirs) */
	size_t nlayouts;
	struct plan_est_sum total;
	double rate;             /* the bytes/s assumed */
	int rate_given;          /* --assume-rate */
	double ops;              /* the file operations/s assumed on the target */
	int ops_given;           /* --assume-ops */
	int exact;               /* sizes drawn with the run's seed */
	uint64_t seed;
	int sizes_known;         /* every volume's size known: the fit check was made */
	double provision_s;      /* provisioning seconds assumed per volume (0: dirs) */
	int provision_given;     /* provision_s measured (--from) */
	size_t scaled;           /* cells whose seconds a --from scale corrected */
	/* The walk rates the estimate used (cold walks), to say them. */
	struct {
		const char *fs;  /* the plan's (NULL: a folder's file system) */
		double rate;
		const char *from; /* "measured", "--assume-walk", ... */
	} walks[PLAN_EST_WALKS_SAID];
	size_t nwalks;
	size_t nwarnings;
};

/*
 * Estimate plan p (valid) over schedule s (built with o->seed). Fit
 * warnings go to d (the plan's file and text) as diag warnings. 0, or
 * -EINVAL when a cell's parameters cannot be bound (invalid plan).
 */
int run_plan_estimate(const struct plan *p, const struct schedule *s,
		  const struct plan_est_options *o, struct plan_est *e, struct diag *d);
void run_plan_estimate_release(struct plan_est *e);
/* The block `rig plan` prints: the assumptions in one line, a line per
 * layout, the total; a line saying why the fit check waits for the run
 * when a size is unknown. */
void run_plan_estimate_format(const struct plan *p, const struct plan_est *e, struct strbuf *out);

/* The walk rate assumed for fs (NULL: a dirs target's folder): o's, else
 * the measured default, else PLAN_EST_FILE_OPS; *from says which. */
double run_plan_est_walk_rate(const struct plan_est_options *o, const char *fs, const char **from);
/* --assume-walk's FS=RATE[,FS=RATE...] into *out (n of them; free *out and
 * each fs): 0, or -1 with the reason in err. */
int run_plan_est_parse_walk(const char *text, struct plan_est_walk **out, size_t *n,
			struct strbuf *err);

#endif
