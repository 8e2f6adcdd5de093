/*
 * The plan's volume conditions and the snapshot step (plan/plan_cond.c):
 * values parsed, refusals at their key's line and column, and --fs-map
 * turning what the mapped file system cannot honour into warnings with
 * the condition marked not applied.
 */
#include <string.h>

#include "lib/strbuf.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "provision/driver.h"
#include "test.h"

static const char head[] =
	"rig: 1\nname: c\ntarget:\n  image: { path: /tmp/x.img, size: 1G }\n"
	"layouts:\n  - name: l\n    partitions:\n";

static struct plan *parse(const char *parts, const char *steps, const char *map,
			  const char *platform, struct diag *d)
{
	struct strbuf t = STRBUF_INIT;
	sb_addf(&t, "%s%ssteps:\n%s", head, parts, steps);
	struct plan_options o = { .platform = plan_platform_find(platform), .fs_map = map };
	diag_init(d, "plan.yaml", NULL);
	struct plan *p = plan_parse_text("plan.yaml", t.buf, t.len, &o, d);
	sb_release(&t);
	return p;
}

/* Some item of level lv at line:col whose message contains want. */
static int has(const struct diag *d, enum diag_level lv, int line, int col, const char *want)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].level == lv && d->items[i].mark.line == line &&
		    d->items[i].mark.col == col && strstr(d->items[i].msg, want))
			return 1;
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "\n  %d:%d %s", d->items[i].mark.line, d->items[i].mark.col,
			d->items[i].msg);
	return 0;
}

static void test_values(void)
{
	struct diag d;
	struct plan *p = parse("      - { name: H, fs: hfs+, size: 50%, indexing: off }\n"
			       "      - { name: A, fs: apfs, size: rest, indexing: on, defrag: off, "
			       "snapshots: keep 20 }\n",
			       "  - snapshot: { keep: 3 }\n", NULL, "macos", &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(d.n, 0);
	const struct plan_partition *h = &p->layouts[0].parts[0], *a = &p->layouts[0].parts[1];
	CU_ASSERT_EQUAL(h->indexing, COND_OFF);
	CU_ASSERT_EQUAL(h->defrag, COND_UNSET);
	CU_ASSERT_EQUAL(h->snapshots, SNAP_UNSET);
	CU_ASSERT_EQUAL(a->indexing, COND_ON);
	CU_ASSERT_EQUAL(a->defrag, COND_OFF);
	CU_ASSERT_EQUAL(a->snapshots, 20);
	CU_ASSERT_EQUAL(a->not_applied, 0);
	plan_free(p);
	diag_release(&d);
	p = parse("      - { name: A, fs: apfs, size: rest, snapshots: none }\n"
		  "      - { name: B, fs: apfs, size: 1G }\n", "  - snapshot: {}\n", NULL, "macos", &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->layouts[0].parts[0].snapshots, 0);
	plan_free(p);
	diag_release(&d);
}

static void test_refusals(void)
{
	struct diag d;
	/* Linux: indexing on, defrag on ext4, keep on xfs, snapshot step without btrfs */
	struct plan *p = parse("      - { name: E, fs: ext4, size: 50%, indexing: on, defrag: on }\n"
			       "      - { name: X, fs: xfs, size: rest, snapshots: keep 3 }\n",
			       "  - snapshot: {}\n", NULL, "linux", &d);
	CU_ASSERT(has(&d, DIAG_ERROR, 8, 41, "'indexing: on' on partition 'E': linux has no indexer"));
	CU_ASSERT(has(&d, DIAG_ERROR, 8, 55, "'defrag' on ext4 partition 'E': on linux rig sets "
		      "automatic defragmentation of btrfs only"));
	CU_ASSERT(has(&d, DIAG_ERROR, 9, 41, "'snapshots: keep 3' on xfs partition 'X': on linux "
		      "rig takes snapshots of btrfs only"));
	CU_ASSERT(has(&d, DIAG_ERROR, 11, 5, "no volume of the plan can take snapshots"));
	CU_ASSERT_EQUAL(d.nerrors, 4);
	plan_free(p);
	diag_release(&d);
	/* a dirs target */
	diag_init(&d, "plan.yaml", NULL);
	static const char dirs[] = "rig: 1\nname: c\ntarget:\n  dirs: [/tmp/a]\nsteps:\n"
				   "  - snapshot: { keep: 2 }\n";
	p = plan_parse_text("plan.yaml", dirs, strlen(dirs), NULL, &d);
	CU_ASSERT(has(&d, DIAG_ERROR, 6, 5, "needs an image or disk target"));
	plan_free(p);
	diag_release(&d);
	/* keep without a step: a warning */
	p = parse("      - { name: B, fs: btrfs, size: rest, snapshots: keep 2 }\n",
		  "  - null: {}\n", NULL, "linux", &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT(has(&d, DIAG_WARNING, 8, 43, "has no effect: the plan has no snapshot step"));
	plan_free(p);
	diag_release(&d);
	/* bad values */
	p = parse("      - { name: B, fs: btrfs, size: rest, snapshots: keep 0, defrag: yes }\n",
		  "  - null: {}\n", NULL, "linux", &d);
	CU_ASSERT(has(&d, DIAG_ERROR, 8, 54, "invalid snapshots 'keep 0'"));
	CU_ASSERT(has(&d, DIAG_ERROR, 8, 70, "unknown value 'yes' for 'defrag'"));
	plan_free(p);
	diag_release(&d);
}

/* The macOS seed plan's conditions rehearsed on Linux: warnings, not applied. */
static void test_fs_map(void)
{
	struct diag d;
	static const char parts[] =
		"      - { name: H, fs: hfs+, size: 50%, indexing: off }\n"
		"      - { name: A, fs: apfs, size: rest, indexing: off, defrag: off, "
		"snapshots: keep 20 }\n";
	struct plan *p = parse(parts, "  - snapshot: { keep: 3 }\n", "apfs=btrfs,hfs+=ext4", "linux",
			       &d);
	CU_ASSERT_EQUAL(d.n, 0); /* btrfs honours all of it; indexing off is nothing to do */
	CU_ASSERT_EQUAL(p->layouts[0].parts[1].not_applied, 0);
	plan_free(p);
	diag_release(&d);
	p = parse(parts, "  - snapshot: { keep: 3 }\n", "apfs=xfs,hfs+=ext4", "linux", &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT(has(&d, DIAG_WARNING, 9, 57, "(xfs is mapped from apfs by --fs-map): not applied"));
	CU_ASSERT(has(&d, DIAG_WARNING, 9, 70, "'snapshots: keep 20' on xfs partition 'A'"));
	CU_ASSERT(has(&d, DIAG_WARNING, 11, 5, "the step records a skip on every volume"));
	CU_ASSERT_EQUAL(p->layouts[0].parts[1].not_applied, PCOND_DEFRAG | PCOND_SNAPSHOTS);
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[1].mapped_from, "apfs");
	plan_free(p);
	diag_release(&d);
}

void register_plan_cond_tests(void)
{
	CU_pSuite s = test_suite("plan: volume conditions and the snapshot step");
	test_add(s, "values parsed", test_values);
	test_add(s, "refused at their keys", test_refusals);
	test_add(s, "--fs-map: warnings, not applied", test_fs_map);
}
