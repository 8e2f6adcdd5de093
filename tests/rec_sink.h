/*
 * A recording sink for the suites that run a module directly (struct
 * rig_sink, modules/module.h): metrics kept as "name=value unit\n" lines, notes
 * as "key: value\n" lines, per-file samples counted; and the environment a
 * module runs in (struct rec_env). Shared by the exec, fill, meta, seqio,
 * sync and tree suites, which each had a copy.
 */
#ifndef RIG_TESTS_REC_SINK_H
#define RIG_TESTS_REC_SINK_H

#include <signal.h>
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

/*
 * A module run directly, as the runner would run it on one volume: the
 * volume's folder, a recording sink, the module's state slot, a cancel
 * flag and the error text; ctx is ready to give m->run (volume "A", rep
 * 1), and a suite sets its other fields as it needs.
 */
struct rec_env {
	char *dir;             /* the volume's folder (a copy) */
	int made;              /* dir is a folder of its own, removed at release */
	struct rec rec;
	struct rig_sink sink;
	struct strbuf err;
	volatile sig_atomic_t cancel;
	void *state;
	struct rig_ctx ctx;
};

/* dir NULL: a fresh folder of its own. direct: cache.direct (the cache
 * method "direct", else "none"); files: as rec_init. */
void rec_env_init(struct rec_env *e, const char *dir, uint64_t seed, int direct, int files);
/* The record and the error text emptied, for the next run. */
void rec_env_reset(struct rec_env *e);
/* Reset, then m->run(ctx, args): its return, with the error printed when
 * it is not 0. */
int rec_env_run(struct rec_env *e, const struct rig_module *m, const void *args);
/* owner releases the state the runs left (owner NULL: the module keeps
 * none, asserted); the folder is removed when it was made here. */
void rec_env_release(struct rec_env *e, const struct rig_module *owner);

#endif
