/*
 * Extern names carry their module's prefix, and what one file alone uses is
 * static: scripts/check-externs reads nm of a build's objects against
 * scripts/prefixes (make lint runs it on the tree). This suite proves the
 * rule can fail: it compiles small planted sources into a scratch build
 * tree (OBJ/plan/plan_x.o made from plan/plan_x.c, and so on) and checks
 * that the script rejects an unprefixed extern, an extern no other object
 * uses, a source no line of the list names and a one-letter prefix, and
 * passes a tree where all is well (a tests/ object counts as a user).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/strbuf.h"
#include "provision_util.h"
#include "test.h"

struct src {
	const char *path;  /* below the scratch tree and its obj/ */
	const char *text;
};

/* Make dir and its parents below root. */
static void mkdirs(const char *root, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/", root);
	for (const char *s = rel; *s; s++) {
		if (*s == '/')
			mkdir(p.buf, 0755);
		sb_add(&p, s, 1);
	}
	sb_release(&p);
}

/* Compile each source into tmp/obj/PATH.o; 0 when all compiled. */
static int build(const char *tmp, const struct src *srcs, size_t n)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	for (size_t i = 0; i < n; i++) {
		struct strbuf c = STRBUF_INIT, o = STRBUF_INIT, rel = STRBUF_INIT;
		sb_addf(&c, "%s/%s", tmp, srcs[i].path);
		mkdirs(tmp, srcs[i].path);
		test_write_file(c.buf, srcs[i].text);
		sb_addf(&rel, "obj/%s", srcs[i].path);
		mkdirs(tmp, rel.buf);
		sb_addf(&o, "%s/obj/%.*s.o", tmp, (int)strlen(srcs[i].path) - 2, srcs[i].path);
		const char *argv[] = { cc, "-c", "-o", o.buf, c.buf, NULL };
		int rc = pt_cmd(argv, NULL);
		sb_release(&c);
		sb_release(&o);
		sb_release(&rel);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* Run scripts/check-externs on tmp/obj with the tree's list, or with a
 * list of the given text; its exit status, its output into *out. */
static int check(const char *tmp, const char *list, char **out)
{
	struct strbuf script = STRBUF_INIT, prefixes = STRBUF_INIT, objs = STRBUF_INIT;
	sb_addf(&script, "%s/scripts/check-externs", test_src());
	if (list) {
		sb_addf(&prefixes, "%s/prefixes", tmp);
		test_write_file(prefixes.buf, list);
	} else {
		sb_addf(&prefixes, "%s/scripts/prefixes", test_src());
	}
	sb_addf(&objs, "%s/obj", tmp);
	const char *argv[] = { "sh", script.buf, "-p", prefixes.buf, objs.buf, NULL };
	int rc = pt_cmd(argv, out);
	sb_release(&script);
	sb_release(&prefixes);
	sb_release(&objs);
	return rc;
}

/* A plan helper, the runner that calls it, a main and a test that is the
 * only user of a second helper: all is well. */
static const struct src good[] = {
	{ "plan/plan_x.c", "int plan_thing(void);\nint plan_tested(void);\n"
			  "int plan_thing(void) { return 1; }\n"
			  "int plan_tested(void) { return 2; }\n" },
	{ "rig/run/runner.c", "int plan_thing(void);\nint run_go(void);\n"
			  "int run_go(void) { return plan_thing(); }\n" },
	{ "rig/main.c", "int run_go(void);\nint main(void) { return run_go(); }\n" },
	{ "tests/plan_x_test.c", "int plan_tested(void);\nvoid register_plan_x_tests(void);\n"
				 "void register_plan_x_tests(void) { (void)plan_tested(); }\n" },
	{ "tests/main.c", "void register_plan_x_tests(void);\n"
			  "int main(void) { register_plan_x_tests(); return 0; }\n" },
};
#define NGOOD (sizeof(good) / sizeof(good[0]))

static void test_good_tree_passes(void)
{
	char *tmp = test_tmpdir();
	char *out = NULL;
	int built = build(tmp, good, NGOOD);
	CU_ASSERT_EQUAL(built, 0);
	int rc = built ? -1 : check(tmp, NULL, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_TRUE(out && strstr(out, "check-externs: ok"));
	free(out);
	test_rmtree(tmp);
	free(tmp);
}

struct plant {
	struct src src;     /* added to the good tree */
	const char *list;   /* the list's text; NULL: scripts/prefixes */
	const char *says;   /* a part of the report */
};

static void test_planted(void)
{
	static const struct plant cases[] = {
		/* the issue's own example: a one-letter "prefix" is none */
		{ { "reports/html_x.c", "int h_p(void);\nint run_go(void);\n"
					"int h_p(void) { return run_go(); }\n"
					"int rep_x(void);\nint rep_x(void) { return h_p(); }\n" },
		  NULL, "reports/html_x.c defines h_p, which has no prefix of its module (rep_)" },
		/* one prefix per folder: a file's own older prefix is refused */
		{ { "reports/html_y.c", "int run_go(void);\nint html_y(void);\n"
					"int html_y(void) { return run_go(); }\n" },
		  NULL, "reports/html_y.c defines html_y, which has no prefix of its module (rep_)" },
		{ { "plan/plan_y.c", "int node_count(void);\nint node_count(void) { return 3; }\n"
				    "int run_go(void);\nint run_go(void) { return node_count(); }\n" },
		  NULL, "plan/plan_y.c defines node_count, which has no prefix of its module (plan_)" },
		/* the right prefix, but its own file alone uses it */
		{ { "plan/plan_z.c", "int plan_alone(void);\nint plan_alone(void) { return 4; }\n"
				    "int plan_z(void);\nint plan_z(void) { return plan_alone(); }\n" },
		  NULL, "plan/plan_z.c defines plan_alone, which no other object uses: make it static" },
		{ { "newdir/thing.c", "int thing_new(void);\nint thing_new(void) { return 5; }\n" },
		  NULL, "newdir/thing.c: no line of" },
		/* a list that gives a one-letter prefix is refused */
		{ { "plan/schedule.c", "int plan_thing(void);\nint h_s(void);\n"
				      "int h_s(void) { return plan_thing(); }\n" },
		  "plan/plan_x.c plan_\nrig/run/runner.c run_\nrig/main.c !main\n"
		  "tests/*_test.c register_\ntests/main.c !main\nplan/schedule.c h_\n",
		  "plan/schedule.c: h_ is one letter, not a module prefix" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct plant *c = &cases[i];
		char *tmp = test_tmpdir();
		char *out = NULL;
		int built = build(tmp, good, NGOOD) || build(tmp, &c->src, 1);
		CU_ASSERT_EQUAL(built, 0);
		int rc = built ? -1 : check(tmp, c->list, &out);
		int ok = rc == 1 && out && strstr(out, c->says);
		if (!ok)
			fprintf(stderr, "\nplanted %s (exit %d), expected '%s':\n%s\n", c->src.path, rc,
				c->says, out ? out : "");
		CU_ASSERT_TRUE(ok);
		free(out);
		test_rmtree(tmp);
		free(tmp);
	}
}

void register_externs_tests(void)
{
	CU_pSuite s = test_suite("extern names and static (scripts/check-externs)");
	test_add(s, "a tree of prefixed externs, each used by another object, passes",
		 test_good_tree_passes);
	test_add(s, "an unprefixed extern, one only its file uses, an unlisted file and a "
		    "one-letter prefix are rejected", test_planted);
}
