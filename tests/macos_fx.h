/*
 * The fake macOS machine of the end-to-end suites of the macOS backend
 * (tests/macos_run_test.c, tests/macos_keep_test.c): its state folder and
 * run paths, `fake-macos ctl`, its call log, and the checks that print
 * what differs. The fake itself is tests/tools/fake-macos/, built into
 * test_fake_macos_dir().
 */
#ifndef RIG_TESTS_MACOS_FX_H
#define RIG_TESTS_MACOS_FX_H

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "provision_util.h"
#include "test.h"

struct fx {
	char *dir;     /* the test's folder */
	char *bin;     /* the fake tools' folder: test_fake_macos_dir() */
	char *state;   /* DIR/fake: RIG_FAKE_MACOS */
	char *run;     /* DIR/run */
	char *plan;    /* DIR/plan.yaml */
};

static inline void ctl(struct fx *x, const char *a, const char *b, const char *c, const char *d,
		const char *e, const char *f, const char *g)
{
	struct strbuf tool = STRBUF_INIT;
	sb_addf(&tool, "%s/fake-macos", x->bin);
	const char *argv[] = { tool.buf, "ctl", a, b, c, d, e, f, g, NULL };
	CU_ASSERT_EQUAL(pt_cmd(argv, NULL), 0);
	sb_release(&tool);
}

/* A fake machine: the boot disk (disk0, container disk1 with /) and an
 * external 2 TB hard disk disk4 unless no_disk. */
static inline void fx_init(struct fx *x, int no_disk)
{
	struct strbuf sb = STRBUF_INIT;
	x->dir = test_tmpdir();
	sb_adds(&sb, test_fake_macos_dir());
	x->bin = sb_detach(&sb);
	sb_addf(&sb, "%s/fake", x->dir);
	x->state = sb_detach(&sb);
	sb_addf(&sb, "%s/run", x->dir);
	x->run = sb_detach(&sb);
	sb_addf(&sb, "%s/plan.yaml", x->dir);
	x->plan = sb_detach(&sb);
	setenv("RIG_FAKE_MACOS", x->state, 1);
	ctl(x, "boot", NULL, NULL, NULL, NULL, NULL, NULL);
	if (!no_disk)
		ctl(x, "add-disk", "disk4", "2000398934016", "WDC WD20SPZX-22UA7T0", "external",
		    "rotational", "USB");
}

static inline void fx_done(struct fx *x)
{
	unsetenv("RIG_FAKE_MACOS");
	test_rmtree(x->dir);
	free(x->dir);
	free(x->bin);
	free(x->state);
	free(x->run);
	free(x->plan);
}

static inline char *fx_file(struct fx *x, const char *name)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", x->state, name);
	char *t = test_read_file(p.buf, NULL);
	sb_release(&p);
	return t;
}

/* The fake's calls.log from the first line that starts with `from`. */
static inline char *calls_from(struct fx *x, const char *from)
{
	char *log = fx_file(x, "calls.log");
	if (!log)
		return NULL;
	char *at = log;
	if (from) {
		for (at = log; at && strncmp(at, from, strlen(from));) {
			at = strchr(at, '\n');
			at = at ? at + 1 : NULL;
		}
	}
	char *r = at ? strdup(at) : NULL;
	free(log);
	return r;
}

static inline void check_eq_text(const char *what, const char *got, const char *want)
{
	pt_eq_text(what, got, want);
}

static inline void check_has(const char *what, const char *got, const char *want)
{
	pt_has(what, got, want);
}

/* Nothing of rig's left: no fake volume mounted, no image attached. */
static inline void check_clean(struct fx *x)
{
	pt_mac_clean(x->state);
	struct strbuf p = STRBUF_INIT;
	char *out = NULL;
	sb_addf(&p, "%s/disks", x->state);
	const char *grep[] = { "grep", "-rl", "kind=image", p.buf, NULL };
	CU_ASSERT_EQUAL(pt_cmd(grep, &out), 1); /* no match */
	check_eq_text("attached images left (fake disks/)", out, "");
	free(out);
	sb_release(&p);
}

#endif
