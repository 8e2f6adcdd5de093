/*
 * The synthetic rotating disk of the suites that measure against it
 * (tests/hdd_test.c, tests/control_test.c): tests/tools/fuse-hdd.c, a FUSE
 * file whose throughput falls linearly from an outer rate at offset 0 to
 * an inner rate at its end, attached with losetup (direct I/O) and given
 * to rig as a disk target (--allow loop; confirm: its backing file); and
 * reading back what rig made of it.
 */
#ifndef RIG_TESTS_HDD_UTIL_H
#define RIG_TESTS_HDD_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/strbuf.h"
#include "test.h"

struct hdd {
	double outer, inner;  /* bytes per second at offset 0 and at the end */
	char *fusedir;        /* the FUSE mount and its backing file */
	char *tmp;            /* plans and run folders */
	struct strbuf mnt, back, disk;
	uint64_t size;
	pid_t pid;
	char *loop;           /* /dev/loopN */
};

/* Start fuse-hdd ($RIG_FUSE_HDD) over a backing file of `size` (its text,
 * `bytes` as a number), outer and inner rates in bytes per second,
 * --seek-ms and --wear (NULL: 0), and attach it. 0, or -1 with a message
 * (call hdd_stop all the same). */
int hdd_start(struct hdd *h, const char *size, uint64_t bytes, double outer, double inner,
	      const char *seek_ms, const char *wear_ms);
/* Assert that rig left nothing mounted or attached, then detach, unmount,
 * stop fuse-hdd and remove the folders; everything on every path. */
void hdd_stop(struct hdd *h);

/* The profile's rate over the bytes [a, b): bytes / time of a full pass, MB/s. */
double hdd_profile_rate(const struct hdd *h, double a, double b);
/* The median of |rate / profile - 1| over the read step's files of the
 * run with a recorded place (*n of them), NaN without any. */
double hdd_placed_read_error(const struct hdd *h, const char *run, size_t *n);

/* rig run of configs/CONFIG.yaml with the pairs replaced (pt_config), as
 * h->tmp/NAME.yaml into h->tmp/NAME (*out_dir); fs_map: --fs-map's value,
 * or NULL. rig's exit status, its output printed when not 0. */
int hdd_run_plan_mapped(struct hdd *h, const char *config, const char *const *pairs,
			const char *name, struct strbuf *out_dir, const char *fs_map);
int hdd_run_plan(struct hdd *h, const char *config, const char *const *pairs, const char *name,
		 struct strbuf *out_dir);

/* The best rate a module measured on the volume at `position` of `layout`
 * over the repetitions (a busy host only slows a transfer: the best is the
 * estimate of the disk's own rate that such noise cannot bias). */
double hdd_rate_of(const char *run, const char *layout, int position, const char *module);
/* The row of RUN/findings.csv for step, kind and groups: its estimate and
 * verdict (the sentence printed); 0 when found. */
int hdd_finding_of(const char *run, const char *step, const char *kind, const char *groups,
		   double *estimate, char *verdict, size_t vlen);

/* rig plan's estimate of the whole run (its `total` line), with the run's
 * seed and the disk's mean rate assumed, and corrected by the earlier run
 * in `from` (--from; NULL: not), against how long the run in run took (the
 * store's start and end); both printed with label. Their ratio, NaN when
 * either is missing. */
double hdd_estimate_ratio(const struct hdd *h, const char *plan, const char *run,
			  const char *fs_map, const char *from, const char *label);

/* Deactivate suite s with a message unless rig runs as root with /dev/fuse,
 * fuse-hdd ($RIG_FUSE_HDD) and the provisioning tools. 1 when it may run;
 * then the suite's teardown (CUnit runs it after every test) removes every
 * disk started and not stopped, so that a test a fatal assertion ended
 * leaves neither loop device nor mount. */
int hdd_require(CU_pSuite s);

#endif
