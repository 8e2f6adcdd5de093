/*
 * The folders are layers (scripts/check-layers, run by scripts/lint): the
 * tree passes; in planted trees an include that climbs with ../, one that
 * does not start from the top of the tree, and one of a higher layer are
 * each flagged by file and line, while an include of the file's own layer
 * or a lower one, and a system header, are not. And no function runs over
 * 100 lines (scripts/check-functions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "provision_util.h"
#include "test.h"

/* Run root's scripts/check-layers: its exit status, its output in *out. */
static int check(const char *root, char **out)
{
	return pt_script(root, "scripts/check-layers", out);
}

static void test_tree_is_clean(void)
{
	char *out = NULL;
	int rc = check(test_src(), &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_TRUE(out && strstr(out, "check-layers: ok"));
	free(out);
}

/* A small tree of one file per layer, each including the layer below. */
static const struct { const char *path, *text; } base[] = {
	{ "lib/strbuf.h", "#include <stddef.h>\n" },
	{ "platform/platform.h", "#include \"lib/strbuf.h\"\n" },
	{ "modules/module.h", "#include \"platform/platform.h\"\n" },
	{ "plan/plan.h", "#include \"modules/module.h\"\n" },
	{ "provision/linux/linux.h", "#include \"plan/plan.h\"\n" },
	{ "store/store.h", "#include \"plan/plan.h\"\n" },
	{ "reports/report.h", "#include \"store/store.h\"\n#include \"provision/linux/linux.h\"\n" },
	{ "rig/run/runner.c", "#include \"reports/report.h\"\n#include \"rig/run/runner.h\"\n" },
	{ "rig/run/runner.h", "#include \"lib/strbuf.h\"\n" },
};

static void test_planted(void)
{
	static const struct {
		const char *path, *text;
		const char *says; /* NULL: passes; else a part of the report */
	} cases[] = {
		{ "plan/plan_x.c", "#include <stdio.h>\n\n#include \"../provision/linux/linux.h\"\n",
		  "plan/plan_x.c:3: #include \"../provision/linux/linux.h\" climbs with ../" },
		{ "modules/seqio.c", "#include \"seqio.h\"\n",
		  "modules/seqio.c:1: #include \"seqio.h\" does not start from the top of the tree" },
		{ "modules/seqio.c", "#include \"tests/test.h\"\n",
		  "#include \"tests/test.h\" does not start from the top of the tree" },
		/* the issue's own case: the plan reaching the drivers */
		{ "plan/plan_info.c", "#include \"plan/plan.h\"\n#include \"provision/driver.h\"\n",
		  "plan/plan_info.c:2: plan/ includes \"provision/driver.h\", from provision/, a "
		  "higher layer" },
		{ "lib/spawn.c", "  #  include \"platform/platform.h\"\n",
		  "lib/spawn.c:1: lib/ includes \"platform/platform.h\"" },
		/* its own layer, a lower one, a system header: fine */
		{ "provision/macos/macos.c", "#include \"provision/linux/linux.h\"\n#include "
					    "\"lib/strbuf.h\"\n#include <json-c/json.h>\n", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *tmp = test_tmpdir();
		struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
		sb_addf(&from, "%s/scripts/check-layers", test_src());
		sb_addf(&to, "%s/scripts/check-layers", tmp);
		pt_plant(tmp, "scripts/.keep", "");
		const char *cp[] = { "cp", from.buf, to.buf, NULL };
		CU_ASSERT_EQUAL(pt_cmd(cp, NULL), 0);
		for (size_t b = 0; b < sizeof(base) / sizeof(base[0]); b++)
			pt_plant(tmp, base[b].path, base[b].text);
		pt_plant(tmp, cases[i].path, cases[i].text);
		char *out = NULL;
		int rc = check(tmp, &out);
		int ok = cases[i].says ? rc == 1 && out && strstr(out, cases[i].says) &&
						 strstr(out, "1 include(s) out of place")
				       : rc == 0 && out && strstr(out, "check-layers: ok");
		if (!ok)
			fprintf(stderr, "\nplanted %s:\n%s(exit %d):\n%s\n", cases[i].path,
				cases[i].text, rc, out ? out : "");
		CU_ASSERT_TRUE(ok);
		free(out);
		sb_release(&from);
		sb_release(&to);
		test_rmtree(tmp);
		free(tmp);
	}
}

/* A function of n lines between its braces, in the tree's style. */
static void function_of(struct strbuf *sb, const char *name, int n)
{
	sb_addf(sb, "static int %s(int x)\n{\n", name);
	for (int i = 0; i < n; i++)
		sb_adds(sb, "\tx += 1;\n");
	sb_adds(sb, "}\n");
}

/* scripts/check-functions: 100 lines between the braces pass, 101 fail,
 * named by file, line and function; a brace inside a body (indented) does
 * not end the function. */
static void test_long_functions(void)
{
	static const struct {
		int lines;
		const char *says; /* NULL: passes */
	} cases[] = {
		{ 100, NULL },
		{ 101, "plan/plan_x.c:3: walk is 101 lines, over 100: split it by phase" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *tmp = test_tmpdir();
		struct strbuf from = STRBUF_INIT, to = STRBUF_INIT, src = STRBUF_INIT;
		sb_addf(&from, "%s/scripts/check-functions", test_src());
		sb_addf(&to, "%s/scripts/check-functions", tmp);
		pt_plant(tmp, "scripts/.keep", "");
		const char *cp[] = { "cp", from.buf, to.buf, NULL };
		CU_ASSERT_EQUAL(pt_cmd(cp, NULL), 0);
		sb_adds(&src, "/* planted */\n");
		function_of(&src, "walk", cases[i].lines);
		/* 60 lines with an indented block of braces: one function */
		sb_adds(&src, "static int step(int x)\n{\n\tif (x) {\n");
		for (int k = 0; k < 57; k++)
			sb_adds(&src, "\t\tx += 1;\n");
		sb_adds(&src, "\t}\n}\n");
		pt_plant(tmp, "plan/plan_x.c", src.buf);
		char *out = NULL;
		int rc = pt_script(tmp, "scripts/check-functions", &out);
		int ok = cases[i].says ? rc == 1 && out && strstr(out, cases[i].says) &&
						 strstr(out, "1 function(s) too long")
				       : rc == 0 && out && strstr(out, "check-functions: ok (2 functions, "
									"the longest 100 lines");
		if (!ok)
			fprintf(stderr, "\n%d lines (exit %d):\n%s\n", cases[i].lines, rc,
				out ? out : "");
		CU_ASSERT_TRUE(ok);
		free(out);
		sb_release(&from);
		sb_release(&to);
		sb_release(&src);
		test_rmtree(tmp);
		free(tmp);
	}
	char *out = NULL;
	CU_ASSERT_EQUAL(pt_script(test_src(), "scripts/check-functions", &out), 0);
	CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "check-functions: ok") : NULL);
	free(out);
}

void register_layers_tests(void)
{
	CU_pSuite s = test_suite("folders in layers, functions in size (scripts/check-layers, "
				 "check-functions)");
	test_add(s, "the tree's includes keep to the layers", test_tree_is_clean);
	test_add(s, "planted ../, not from the top, and upward includes are flagged",
		 test_planted);
	test_add(s, "no function over 100 lines", test_long_functions);
}
