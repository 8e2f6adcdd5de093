/* The recording sink of tests/rec_sink.h. */
#include "rec_sink.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "test.h"

void rec_init(struct rec *r, int files)
{
	memset(r, 0, sizeof(*r));
	sb_init(&r->metrics);
	sb_init(&r->notes);
	r->files = files;
}

void rec_reset(struct rec *r)
{
	sb_reset(&r->metrics);
	sb_reset(&r->notes);
	r->nfiles = 0;
	r->file_bytes = 0;
	r->file_secs = 0;
}

void rec_release(struct rec *r)
{
	sb_release(&r->metrics);
	sb_release(&r->notes);
}

static void rec_metric(void *o, const char *name, double value, const char *unit)
{
	struct rec *r = o;
	sb_addf(&r->metrics, "%s=%.17g %s\n", name, value, unit);
}

static void rec_file(void *o, const char *file, uint64_t bytes, double seconds)
{
	struct rec *r = o;
	if (!r->files) {
		CU_FAIL("a per-file sample from a module that records none");
		return;
	}
	if (r->file_prefix)
		CU_ASSERT(strncmp(file, r->file_prefix, strlen(r->file_prefix)) == 0);
	if (r->nfiles < 64)
		snprintf(r->names[r->nfiles], sizeof(r->names[0]), "%s", file);
	r->nfiles++;
	r->file_bytes += bytes;
	r->file_secs += seconds;
	CU_ASSERT(seconds > 0);
}

static void rec_note(void *o, const char *key, const char *value)
{
	struct rec *r = o;
	sb_addf(&r->notes, "%s: %s\n", key, value);
}

struct rig_sink rec_sink(struct rec *r)
{
	return (struct rig_sink){ r, rec_metric, rec_file, rec_note, NULL };
}

double rec_get(const struct rec *r, const char *name, const char *unit)
{
	struct strbuf key = STRBUF_INIT, hay = STRBUF_INIT;
	sb_addf(&key, "\n%s=", name);
	sb_addf(&hay, "\n%s", r->metrics.buf);
	double v = NAN;
	const char *p = strstr(hay.buf, key.buf);
	if (p) {
		char *end;
		v = strtod(p + key.len, &end);
		size_t ul = strlen(unit);
		CU_ASSERT(*end == ' ' && !strncmp(end + 1, unit, ul) && end[1 + ul] == '\n');
	}
	sb_release(&key);
	sb_release(&hay);
	return v;
}

void rec_env_init(struct rec_env *e, const char *dir, uint64_t seed, int direct, int files)
{
	memset(e, 0, sizeof(*e));
	e->made = dir == NULL;
	e->dir = dir ? xstrdup(dir) : test_tmpdir();
	rec_init(&e->rec, files);
	sb_init(&e->err);
	e->sink = rec_sink(&e->rec);
	e->ctx = (struct rig_ctx){
		.dir = e->dir, .volume = "A", .seed = seed, .rep = 1, .direct = direct,
		.cache_method = direct ? "direct" : "none", .sink = &e->sink,
		.cancel = &e->cancel, .volstate = &e->state, .err = &e->err,
	};
}

void rec_env_reset(struct rec_env *e)
{
	rec_reset(&e->rec);
	sb_reset(&e->err);
}

int rec_env_run(struct rec_env *e, const struct rig_module *m, const void *args)
{
	rec_env_reset(e);
	int rc = m->run(&e->ctx, args);
	if (rc != 0)
		fprintf(stderr, "\n%s: %d: %s\n", m->name, rc, e->err.buf);
	return rc;
}

void rec_env_release(struct rec_env *e, const struct rig_module *owner)
{
	if (!owner) {
		CU_ASSERT_PTR_NULL(e->state);
	} else if (e->state) {
		owner->release_state(e->state);
	}
	e->state = NULL;
	if (e->made)
		test_rmtree(e->dir);
	free(e->dir);
	rec_release(&e->rec);
	sb_release(&e->err);
}
