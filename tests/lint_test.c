/*
 * No shell strings: every external command goes through platform/spawn.c as
 * an argument vector. scripts/lint refuses calls of system and popen, a
 * shell named as a program and the exec calls that take a list; this
 * suite runs it on the tree (it must pass) and on a copy with planted
 * calls (it must flag each one, by file and line, and leave look-alikes
 * alone), so the check itself is tested. The planted text is built from pieces so that this
 * file does not trip the check it tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/strbuf.h"
#include "provision_util.h"
#include "test.h"

/* Run a lint script; its exit status, its output into *out. */
static int lint(const char *script, char **out)
{
	const char *argv[] = { "sh", script, NULL };
	return pt_cmd(argv, out);
}

static void test_tree_is_clean(void)
{
	struct strbuf s = STRBUF_INIT;
	sb_addf(&s, "%s/scripts/lint", test_src());
	char *out = NULL;
	int rc = lint(s.buf, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_TRUE(out && strstr(out, "lint: ok"));
	free(out);
	sb_release(&s);
}

/* Copy the script scripts/NAME of the source tree into tmp/scripts. */
static void copy_script(const char *tmp, const char *name)
{
	struct strbuf p = STRBUF_INIT, src = STRBUF_INIT;
	sb_addf(&src, "%s/scripts/%s", test_src(), name);
	char *script = test_read_file(src.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(script);
	sb_addf(&p, "%s/scripts/%s", tmp, name);
	test_write_file(p.buf, script);
	free(script);
	sb_release(&p);
	sb_release(&src);
}

/* A tree with scripts/lint and one source file of the given text. The name
 * check lint runs is there with no rules of its own (it has its own suite,
 * tests/check_names_test.c). */
static char *planted(const char *dir, const char *file, const char *text)
{
	char *tmp = test_tmpdir();
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/scripts", tmp);
	mkdir(p.buf, 0755);
	copy_script(tmp, "lint");
	copy_script(tmp, "check-names");
	copy_script(tmp, "check-layers");
	copy_script(tmp, "check-functions");
	sb_adds(&p, "/names.rules");
	test_write_file(p.buf, "scan rig\n");
	sb_reset(&p);
	sb_addf(&p, "%s/%s", tmp, dir);
	mkdir(p.buf, 0755);
	sb_addf(&p, "/%s", file);
	test_write_file(p.buf, text);
	sb_release(&p);
	return tmp;
}

struct plant {
	const char *dir, *file;
	const char *pre, *call, *post; /* the line: pre call post (call built from pieces) */
	int flagged;
	const char *says;              /* a part of the report when flagged */
};

static void test_planted(void)
{
	static const struct plant cases[] = {
		{ "rig", "bad.c", "\tint rc = ", "sys" "tem(", "\"mkfs.ext4 /dev/sdb\");\n", 1,
		  "banned call 'sys" "tem('" },
		{ "provision", "bad.c", "\tFILE *f = ", "po" "pen(", "\"sgdisk -p x\", \"r\");\n", 1,
		  "banned call 'po" "pen('" },
		{ "platform", "bad.h", "#define RUN(c) ", "sys" "tem(", "c)\n", 1, "bad.h:2:" },
		{ "tests", "bad_test.c", "\t(void)", "po" "pen(", "\"ls\", \"r\");\n", 1, "bad_test.c:2:" },
		{ "rig", "sh.c", "\tconst char *argv[] = { ", "\"s" "h\"", ", \"-c\", cmd, NULL };\n", 1,
		  "a shell or exec with a list" },
		{ "reports", "bash.c", "\tconst char *argv[] = { ", "\"/bin/ba" "sh\"", ", \"-c\", NULL };\n",
		  1, "a shell or exec with a list" },
		{ "rig", "execl.c", "\t", "exe" "cl(", "\"/bin/true\", \"true\", NULL);\n", 1,
		  "a shell or exec with a list" },
		{ "tests", "ptr_test.c", "\t", "CU_ASSERT_PTR_NOT" "_NULL(", "out && strstr(out, \"x\"));\n", 1,
		  "a condition asserted as a pointer" },
		/* look-alikes are left alone */
		{ "tests", "ptr_ok.c", "\t", "CU_ASSERT_PTR_NOT" "_NULL(", "strstr(out, \"x\"));\n", 0, NULL },
		{ "rig", "ok.c", "\tint n = ", "my_sys" "tem(", "x) + snprintf(b, 4, \"%d\", 1);\n", 0, NULL },
		{ "rig", "ok2.c", "\t/* the filesystem(s) */ int ", "ecosys" "tem(", ");\n", 0, NULL },
		{ "rig", "ok3.c", "\tconst char *s = ", "\"fi" "sh\"", ";\n", 0, NULL },
		{ "rig", "ok4.c", "\tint r = ", "sys" "tem(", "x); /* lint: allow (a test) */\n", 0, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct plant *c = &cases[i];
		struct strbuf text = STRBUF_INIT, script = STRBUF_INIT;
		sb_addf(&text, "/* planted */\n%s%s%s", c->pre, c->call, c->post);
		char *tmp = planted(c->dir, c->file, text.buf);
		sb_addf(&script, "%s/scripts/lint", tmp);
		char *out = NULL;
		int rc = lint(script.buf, &out);
		int ok = c->flagged ? rc != 0 && out && strstr(out, c->says) && strstr(out, c->file)
				    : rc == 0;
		if (!ok)
			fprintf(stderr, "\nplanted %s/%s: %s (exit %d):\n%s\n", c->dir, c->file, text.buf,
				rc, out ? out : "");
		CU_ASSERT_TRUE(ok);
		free(out);
		test_rmtree(tmp);
		free(tmp);
		sb_release(&text);
		sb_release(&script);
	}
}

void register_lint_tests(void)
{
	CU_pSuite s = test_suite("no shell strings (scripts/lint)");
	test_add(s, "the tree calls no system or popen, runs no shell, no exec list", test_tree_is_clean);
	test_add(s, "planted calls are flagged by file and line, look-alikes are not", test_planted);
}
