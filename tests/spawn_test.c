/* Tests of rig/util/spawn.c: argument vectors, output, status, logging. */
#include <stdlib.h>
#include <string.h>

#include "rig/util/spawn.h"
#include "rig/util/strbuf.h"
#include "test.h"

static void test_spawn_output_and_status(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	CU_ASSERT_EQUAL(spawn_run(NULL, argv, NULL, &r, &err), 0);
	CU_ASSERT_TRUE(r.exited);
	CU_ASSERT_EQUAL(r.status, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "out\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "err\n"));
	spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_no_shell(void)
{
	/* Metacharacters in an argument reach the program verbatim. */
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "printf", "%s|", "a b;$(echo x)`y`", NULL };
	CU_ASSERT_EQUAL(spawn_check(NULL, argv, NULL, &r, &err), 0);
	CU_ASSERT_STRING_EQUAL(r.output, "a b;$(echo x)`y`|");
	spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_cwd(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "pwd", NULL };
	CU_ASSERT_EQUAL(spawn_check(NULL, argv, "/", &r, &err), 0);
	CU_ASSERT_STRING_EQUAL(r.output, "/\n");
	spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_missing_program(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "rig-no-such-program-xyz", "arg", NULL };
	CU_ASSERT_EQUAL(spawn_check(NULL, argv, NULL, &r, &err), -5 /* -EIO */);
	CU_ASSERT_EQUAL(r.status, 127);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "rig-no-such-program-xyz arg failed with exit status 127"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot run rig-no-such-program-xyz"));
	spawn_result_release(&r);
	sb_release(&err);
}

struct logged {
	int calls;
	int with_result;
	struct strbuf last;
};

static void log_fn(void *opaque, const char *text, const struct spawn_result *r)
{
	struct logged *l = opaque;
	l->calls++;
	l->with_result += r != NULL;
	sb_reset(&l->last);
	sb_adds(&l->last, text);
}

static void test_spawn_log_and_dry_run(void)
{
	struct logged l = { 0, 0, STRBUF_INIT };
	struct spawner sp = { .dry_run = 0, .log = log_fn, .opaque = &l };
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "echo", "it's", "two words", NULL };
	CU_ASSERT_EQUAL(spawn_run(&sp, argv, NULL, &r, &err), 0);
	spawn_result_release(&r);
	CU_ASSERT_EQUAL(l.calls, 1);
	CU_ASSERT_EQUAL(l.with_result, 1);
	CU_ASSERT_STRING_EQUAL(l.last.buf, "echo 'it'\\''s' 'two words'");
	/* Dry run: recorded, not run (a command that would fail "succeeds"). */
	sp.dry_run = 1;
	const char *bad[] = { "false", NULL };
	CU_ASSERT_EQUAL(spawn_check(&sp, bad, NULL, &r, &err), 0);
	spawn_result_release(&r);
	CU_ASSERT_EQUAL(l.calls, 2);
	CU_ASSERT_EQUAL(l.with_result, 1);
	CU_ASSERT_STRING_EQUAL(l.last.buf, "false");
	sb_release(&l.last);
	sb_release(&err);
}

static void test_spawn_signal(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	CU_ASSERT_EQUAL(spawn_check(NULL, argv, NULL, &r, &err), -5);
	CU_ASSERT_FALSE(r.exited);
	CU_ASSERT_EQUAL(r.status, 15);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "killed by signal 15"));
	spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_big_output(void)
{
	/* More output than is kept: head and tail survive, the middle is cut. */
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "echo HEAD; head -c 12000000 /dev/zero | tr '\\0' x; echo; echo TAIL", NULL };
	CU_ASSERT_EQUAL(spawn_check(NULL, argv, NULL, &r, &err), 0);
	CU_ASSERT_TRUE(r.truncated);
	CU_ASSERT_TRUE(r.output_len <= SPAWN_MAX_OUTPUT * 3 / 2);
	CU_ASSERT_EQUAL(strncmp(r.output, "HEAD\n", 5), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output + r.output_len - 6, "TAIL\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "[... output cut ...]"));
	spawn_result_release(&r);
	sb_release(&err);
}

void register_spawn_tests(void)
{
	CU_pSuite s = test_suite("spawn");
	test_add(s, "output and exit status", test_spawn_output_and_status);
	test_add(s, "arguments are not interpreted by a shell", test_spawn_no_shell);
	test_add(s, "working directory", test_spawn_cwd);
	test_add(s, "a missing program is an error naming it", test_spawn_missing_program);
	test_add(s, "every command is logged; dry run only records", test_spawn_log_and_dry_run);
	test_add(s, "a command killed by a signal", test_spawn_signal);
	test_add(s, "over-long output keeps head and tail", test_spawn_big_output);
}
