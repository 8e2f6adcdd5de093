/*
 * Names in their place (scripts/check-names, its rules in
 * scripts/names.rules, run by scripts/lint): the tree passes; in planted
 * trees a module's name written as a string literal outside its own file
 * and the module table is flagged by file and line, while look-alikes (a
 * comment, a longer string, an escaped quote, another case, an exception
 * the rules give) are not; a rule of the other kind (`only`) works the same
 * way; the real rules catch the case that started it all (resume asking for
 * "pause" by name); and a broken rules file is refused, not passed. The
 * tests are not scanned, so the names below are only data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision_util.h"
#include "test.h"

/* Make the folders a path needs. */
static void make_parent(const char *path)
{
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = 0;
	const char *mk[] = { "mkdir", "-p", dir, NULL };
	CU_ASSERT_EQUAL(pt_cmd(mk, NULL), 0);
	free(dir);
}

/* Copy the source tree's paths (files, or folders whole) into root. */
static void copy_src(const char *root, const char *const *paths)
{
	for (size_t i = 0; paths[i]; i++) {
		struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
		sb_addf(&from, "%s/%s", test_src(), paths[i]);
		sb_addf(&to, "%s/%s", root, paths[i]);
		make_parent(to.buf);
		const char *cp[] = { "cp", "-R", from.buf, to.buf, NULL };
		CU_ASSERT_EQUAL(pt_cmd(cp, NULL), 0);
		sb_release(&from);
		sb_release(&to);
	}
}

/* Run root's scripts/check-names: its exit status, its output in *out. */
static int check(const char *root, char **out)
{
	return pt_script(root, "scripts/check-names", out);
}

static void test_tree_is_clean(void)
{
	char *out = NULL;
	int rc = check(test_src(), &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_TRUE(out && strstr(out, "check-names: ok"));
	free(out);
}

/*
 * A small tree: one module, fill, defined in modules/fill.c with a
 * header, listed in the table, and a second module's file. The rules: the
 * struct's names, one exception for "fill", and a rule of the other kind
 * ("linux" only in the platform's files).
 */
static const char rules[] =
	"# planted\n"
	"scan rig reports plan modules platform\n"
	"struct rig_module modules/modules.c\n"
	"# an exception\n"
	"also fill reports/levels.c\n"
	"only linux platform/linux*.c plan/plan.c\n";

static const struct { const char *path, *text; } base[] = {
	{ "modules/fill.c",
	  "#define FILL_SUBDIR \"fill\"\n"
	  "const struct rig_module mod_fill = {\n"
	  "\t.name = \"fill\",\n"
	  "\t.summary = \"fills the volume\",\n"
	  "};\n" },
	{ "modules/fill.h", "#define FILL_MAGIC_NAME \"fill\"\n" },
	{ "modules/modules.c",
	  "const struct rig_module *const mod_all[] = { &mod_fill, NULL };\n"
	  "static const char *const first = \"fill\";\n" },
	{ "modules/null.c",
	  "const struct rig_module mod_null = {\n"
	  "\t.name = \"null\",\n"
	  "};\n" },
	{ "platform/linux_uring.c", "static const char *os = \"linux\";\n" },
};

struct plant_case {
	const char *path;
	const char *text;
	int flagged;
	const char *says;   /* a part of the report when flagged: file:line */
};

/* Plant the case's file in the tree at tmp, check the tree, say whether the
 * check answered as the case expects, and remove the tree. */
static void expect(char *tmp, const struct plant_case *c)
{
	pt_plant(tmp, c->path, c->text);
	char *out = NULL;
	int rc = check(tmp, &out);
	int ok = c->flagged ? rc == 1 && out && strstr(out, c->says) &&
				      strstr(out, "1 name(s) out of place")
			    : rc == 0 && out && strstr(out, "check-names: ok");
	if (!ok)
		fprintf(stderr, "\nplanted %s:\n%s(exit %d):\n%s\n", c->path, c->text, rc,
			out ? out : "");
	CU_ASSERT_TRUE(ok);
	free(out);
	test_rmtree(tmp);
	free(tmp);
}

static void test_planted(void)
{
	static const struct plant_case cases[] = {
		{ "reports/series.c", "/* a sweep */\nif (strcmp(c->module, \"fill\"))\n", 1,
		  "reports/series.c:2: \"fill\" is the name of a struct rig_module defined in "
		  "modules/fill.c" },
		{ "rig/run/resume.h", "#define LEVEL_MODULE \"fill\"\n", 1, "rig/run/resume.h:1:" },
		/* another module's own file is not fill's */
		{ "modules/null.c",
		  "const struct rig_module mod_null = {\n\t.name = \"null\",\n};\n"
		  "static int f(const char *m) { return !strcmp(m, \"fill\"); }\n", 1,
		  "modules/null.c:4:" },
		{ "rig/x.c", "const char *a = \"x\", *b = \"fill\";\n", 1, "rig/x.c:1:" },
		/* a quote in a character constant or escaped opens no string */
		{ "rig/e.c", "char q = '\"'; const char *s = \"fill\";\n", 1, "rig/e.c:1:" },
		{ "rig/f.c", "const char *q = \"a\\\"\", *s = \"fill\";\n", 1, "rig/f.c:1:" },
		{ "rig/plat.c", "if (!strcmp(os, \"linux\"))\n", 1,
		  "rig/plat.c:1: \"linux\" is a name ruled by" },
		/* look-alikes are left alone */
		{ "rig/a.c", "/* as \"fill\" does */ int a;\n// \"fill\"\n", 0, NULL },
		{ "rig/b.c", "/*\n * \"fill\" in a long comment\n */\nint b;\n", 0, NULL },
		{ "rig/c.c", "const char *s = \"fills the volume\", *t = \"Fill\", *u = \"fill:\";\n", 0,
		  NULL },
		{ "rig/d.c", "const char *s = \"say \\\"fill\\\"\";\n", 0, NULL },
		{ "reports/levels.c", "if (!strcmp(m, \"fill\"))\n", 0, NULL },
		{ "platform/linux.c", "const char *os = \"linux\";\n", 0, NULL },
		{ "plan/plan.c", "if (!strcmp(os, \"linux\"))\n", 0, NULL },
		/* not scanned */
		{ "tests/fill_test.c", "run_module(\"fill\");\n", 0, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct plant_case *c = &cases[i];
		char *tmp = test_tmpdir();
		const char *script[] = { "scripts/check-names", NULL };
		copy_src(tmp, script);
		pt_plant(tmp, "scripts/names.rules", rules);
		for (size_t b = 0; b < sizeof(base) / sizeof(base[0]); b++)
			pt_plant(tmp, base[b].path, base[b].text);
		expect(tmp, c);
	}
}

/* The real rules on rig's real modules and drivers: resume asking for
 * "pause" by name, or the runner for "macos", is flagged; JSON's null and
 * the Linux driver checking where it runs, exceptions of the rules, are not. */
static void test_real_rules(void)
{
	static const struct plant_case cases[] = {
		{ "rig/run/resume.c",
		  "static int leaves_nothing(const struct rig_module *m)\n"
		  "{\n\treturn !strcmp(m->name, \"pause\");\n}\n", 1,
		  "rig/run/resume.c:3: \"pause\" is the name of a struct rig_module defined in "
		  "modules/pause.c, allowed only in modules/pause.c, modules/modules.c" },
		{ "reports/report_data.c", "\t\t{ \"enumerate\", \"seconds\" },\n", 1,
		  "reports/report_data.c:1: \"enumerate\"" },
		{ "reports/json.c", "\t\tsb_adds(b, \"null\");\n", 0, NULL },
		/* the runner treating anything but macOS as Linux, as it once did */
		{ "rig/run/runner.c", "\tpo.platform = !strcmp(name, \"macos\") ? mac : lin;\n", 1,
		  "rig/run/runner.c:1: \"macos\" is the name of a struct plan_platform defined in "
		  "plan/platform_macos.c" },
		{ "provision/linux/linux.c", "\tif (strcmp(plat_name(), \"linux\"))\n", 0, NULL },
	};
	static const char *const real[] = { "scripts/check-names", "scripts/names.rules",
					    "modules", "plan", "provision", "platform", NULL };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct plant_case *c = &cases[i];
		char *tmp = test_tmpdir();
		copy_src(tmp, real);
		expect(tmp, c);
	}
}

/* A rules file that cannot say what it means fails the check (exit 2) instead
 * of checking less than it seems to. */
static void test_broken_rules(void)
{
	static const struct { const char *rules, *says; } cases[] = {
		{ "scan rig\nforbid fill rig/x.c\n", "names.rules:2: unknown rule `forbid`" },
		{ "scan rig\nonly linux\n", "names.rules:2: expected `only NAME FILE...`" },
		/* a typo in an exception would otherwise allow nothing, silently */
		{ "scan rig\nstruct rig_module modules/modules.c\nalso nul plan/plan.c\n",
		  "names.rules:3: `also nul`: no rule names nul" },
		/* a renamed struct would otherwise check nothing, silently */
		{ "scan rig\nstruct rig_modul modules/modules.c\n",
		  "names.rules:2: no `const struct rig_modul" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *tmp = test_tmpdir();
		const char *script[] = { "scripts/check-names", NULL };
		copy_src(tmp, script);
		pt_plant(tmp, "scripts/names.rules", cases[i].rules);
		pt_plant(tmp, base[0].path, base[0].text);
		char *out = NULL;
		int rc = check(tmp, &out);
		int ok = rc == 2 && out && strstr(out, cases[i].says);
		if (!ok)
			fprintf(stderr, "\nrules:\n%s(exit %d):\n%s\n", cases[i].rules, rc,
				out ? out : "");
		CU_ASSERT_TRUE(ok);
		free(out);
		test_rmtree(tmp);
		free(tmp);
	}
}

void register_check_names_tests(void)
{
	CU_pSuite s = test_suite("names in their place (scripts/check-names)");
	test_add(s, "the tree names each module only in its own file and the table",
		 test_tree_is_clean);
	test_add(s, "planted names are flagged by file and line, look-alikes are not",
		 test_planted);
	test_add(s, "the real rules flag resume asking for pause by name", test_real_rules);
	test_add(s, "a broken rules file fails the check", test_broken_rules);
}
