/*
 * A recording sink for the suites that run a module directly (struct
 * rig_sink, modules/module.h): metrics kept as "name=value unit\n" lines, notes
 * as "key: value\n" lines, per-file samples counted. Shared by the exec,
 * fill, meta, seqio and tree suites, which each had a copy.
 */
#ifndef RIG_TESTS_REC_SINK_H
#define RIG_TESTS_REC_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"
#include "modules/module.h"

struct rec {
	struct strbuf metrics; /* "name=value unit\n" */
	struct strbuf notes;   /* "key: value\n" */
	int files;               /* 0: a per-file sample fails the test */
	const char *file_prefix; /* when set, every file's name starts with it */
	size_t nfiles;           /* per-file samples: how many, */
	uint64_t file_bytes;     /* their bytes, */
	double file_secs;        /* their seconds (each asserted > 0) */
	char names[64][24];      /* and the first 64 names */
};

/* An empty record; files: 1 when the module may record per-file samples. */
void rec_init(struct rec *r, int files);
/* Empty again (for the next run), keeping files and file_prefix. */
void rec_reset(struct rec *r);
void rec_release(struct rec *r);
/* A sink that records into r. */
struct rig_sink rec_sink(struct rec *r);
/* The value of metric name, its unit asserted to be unit; NAN when absent. */
double rec_get(const struct rec *r, const char *name, const char *unit);

#endif
