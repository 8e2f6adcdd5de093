/*
 * Helpers for the report tests: results stores made directly with the
 * store API (two layouts with byte ranges and device facts, or plain
 * directories; repetitions; a cycle and a sweep; per-file samples; failed
 * runs), an RFC 4180 reader, and running external programs.
 */
#ifndef RIG_TESTS_REPORT_UTIL_H
#define RIG_TESTS_REPORT_UTIL_H

#include <stddef.h>

struct fx_opts {
	int dirs;          /* a dirs target: no layouts, no offsets */
	int reps;          /* repetitions (1: no intervals) */
	int fail;          /* the run failed in its last cell */
	int no_baseline;   /* no report.baseline in the plan */
	const char *formats; /* report.formats list, e.g. "[html, csv, json]" */
	const char *host;  /* run.host; NULL: "testhost" */
	unsigned seed;     /* values' pseudo-random seed */
	int sweep_files;   /* the sweep's cells record four files each too: a
			    * per-file figure of 12 series (3 values x 2
			    * volumes x 2 layouts); the values are unchanged */
	int mac_plan;      /* layouts of apfs and hfs+ on the Linux disk /dev/sdb: the plan
	                    * validates only as run with --fs-map apfs=ext4,hfs+=xfs */
	const char *options_json; /* run.options_json verbatim; NULL: none (schema 1) */
};

/* Create dir/results.db (dir must exist) as described; returns 0. */
int rfx_make_store(const char *dir, const struct fx_opts *o);

/* The mean of the `rate` samples of step 1 on volume `volume` in layout
 * index li, computed here from the same generator (an independent check
 * of summary.csv). */
double rfx_expected_mean(const struct fx_opts *o, int li, const char *volume);

/* RFC 4180 rows: rows[i][j], NULL-terminated per row and overall. 0 when
 * the text is well-formed, -1 otherwise. Free with rfx_csv_free. */
int rfx_csv_parse(const char *text, char ****rows);
void rfx_csv_free(char ***rows);
/* Whether one of a comparison's warnings contains text. */
struct comparison;
int rfx_has_warning(const struct comparison *c, const char *text);

/* Run argv (argv[0] looked up in PATH), capturing stdout and stderr apart
 * (either may be NULL). Returns the exit status, 127 when it cannot run. */
int rfx_run(const char *const *argv, char **out, char **err);

#endif
