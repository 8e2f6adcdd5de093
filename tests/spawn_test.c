/* Tests of platform/spawn.c and the spawners: argument vectors, output,
 * status, logging; split stdout/stderr and cancellation (plat_spawn_run_opts,
 * spawn_real.c); the dry spawner, the fake one, and a spawner built
 * without one. The fault spawner is tested in fault_test.c. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/spawn.h"
#include "test.h"

static void test_spawn_output_and_status(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	CU_ASSERT_EQUAL(plat_spawn_run(NULL, argv, NULL, &r, &err), 0);
	CU_ASSERT_TRUE(r.exited);
	CU_ASSERT_EQUAL(r.status, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "out\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "err\n"));
	plat_spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_no_shell(void)
{
	/* Metacharacters in an argument reach the program verbatim. */
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "printf", "%s|", "a b;$(echo x)`y`", NULL };
	CU_ASSERT_EQUAL(plat_spawn_check(NULL, argv, NULL, &r, &err), 0);
	CU_ASSERT_STRING_EQUAL(r.output, "a b;$(echo x)`y`|");
	plat_spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_cwd(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "pwd", NULL };
	CU_ASSERT_EQUAL(plat_spawn_check(NULL, argv, "/", &r, &err), 0);
	CU_ASSERT_STRING_EQUAL(r.output, "/\n");
	plat_spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_missing_program(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "rig-no-such-program-xyz", "arg", NULL };
	CU_ASSERT_EQUAL(plat_spawn_check(NULL, argv, NULL, &r, &err), -5 /* -EIO */);
	CU_ASSERT_EQUAL(r.status, 127);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "rig-no-such-program-xyz arg failed with exit status 127"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "cannot run rig-no-such-program-xyz"));
	plat_spawn_result_release(&r);
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
	struct spawner sp = plat_spawner_real(log_fn, &l);
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "echo", "it's", "two words", NULL };
	CU_ASSERT_EQUAL(plat_spawn_run(&sp, argv, NULL, &r, &err), 0);
	plat_spawn_result_release(&r);
	CU_ASSERT_EQUAL(l.calls, 1);
	CU_ASSERT_EQUAL(l.with_result, 1);
	CU_ASSERT_STRING_EQUAL(l.last.buf, "echo 'it'\\''s' 'two words'");
	/* Dry run: recorded, not run (a command that would fail "succeeds"). */
	sp = plat_spawner_dry(log_fn, &l);
	const char *bad[] = { "false", NULL };
	CU_ASSERT_EQUAL(plat_spawn_check(&sp, bad, NULL, &r, &err), 0);
	plat_spawn_result_release(&r);
	CU_ASSERT_EQUAL(l.calls, 2);
	CU_ASSERT_EQUAL(l.with_result, 1);
	CU_ASSERT_STRING_EQUAL(l.last.buf, "false");
	sb_release(&l.last);
	sb_release(&err);
}

/* A command that leaves a trace when it runs: `touch DIR/ran`. */
struct trace {
	char *dir;
	struct strbuf file;
	const char *argv[3];
};

static void trace_init(struct trace *t)
{
	t->dir = test_tmpdir();
	sb_init(&t->file);
	sb_addf(&t->file, "%s/ran", t->dir);
	t->argv[0] = "touch";
	t->argv[1] = t->file.buf;
	t->argv[2] = NULL;
}

static int trace_ran(const struct trace *t)
{
	return access(t->file.buf, F_OK) == 0;
}

static void trace_release(struct trace *t)
{
	test_rmtree(t->dir);
	free(t->dir);
	sb_release(&t->file);
}

static void test_spawn_dry_runs_nothing(void)
{
	struct trace t;
	trace_init(&t);
	struct logged l = { 0, 0, STRBUF_INIT };
	struct spawner sp = plat_spawner_dry(log_fn, &l);
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_TRUE(plat_spawner_dry_run(&sp));
	CU_ASSERT_EQUAL(plat_spawn_run(&sp, t.argv, NULL, &r, &err), 0);
	CU_ASSERT_FALSE(trace_ran(&t));
	CU_ASSERT_TRUE(r.exited);
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.output, "");
	CU_ASSERT_PTR_NULL(r.stdout_text);
	plat_spawn_result_release(&r);
	/* logged with r == NULL: nothing ran */
	CU_ASSERT_EQUAL(l.calls, 1);
	CU_ASSERT_EQUAL(l.with_result, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.last.buf, "touch "));
	/* the real spawner runs it; NULL is no dry run */
	sp = plat_spawner_real(log_fn, &l);
	CU_ASSERT_FALSE(plat_spawner_dry_run(&sp));
	CU_ASSERT_FALSE(plat_spawner_dry_run(NULL));
	CU_ASSERT_EQUAL(plat_spawn_check(&sp, t.argv, NULL, NULL, &err), 0);
	CU_ASSERT_TRUE(trace_ran(&t));
	CU_ASSERT_EQUAL(l.with_result, 1);
	sb_release(&l.last);
	sb_release(&err);
	trace_release(&t);
}

/* The fake's state: what it was asked, what it answers. */
struct player {
	int calls;
	struct strbuf asked;
	int rc;             /* < 0: the command "cannot start" */
	const char *out;    /* its stdout, NULL: none apart */
};

static int play(void *opaque, const char *const *argv, struct spawn_result *r)
{
	struct player *p = opaque;
	p->calls++;
	sb_reset(&p->asked);
	plat_spawn_argv_text(&p->asked, argv);
	if (p->rc < 0)
		return p->rc;
	r->exited = 1;
	r->status = 2;
	r->output = xstrdup("played\n");
	if (p->out)
		r->stdout_text = xstrdup(p->out);
	return 0;
}

static void play_log(void *opaque, const char *text, const struct spawn_result *r)
{
	struct player *p = opaque;
	sb_addf(&p->asked, " | logged %s, status %d", text, r ? r->status : -1);
}

static void test_spawn_fake(void)
{
	struct trace t;
	trace_init(&t);
	struct player p = { 0, STRBUF_INIT, 0, NULL };
	struct spawner sp = plat_spawner_fake(play, play_log, &p);
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_FALSE(plat_spawner_dry_run(&sp));
	/* played instead of run, completed and logged like a real result */
	CU_ASSERT_EQUAL(plat_spawn_run(&sp, t.argv, NULL, &r, &err), 0);
	CU_ASSERT_FALSE(trace_ran(&t));
	CU_ASSERT_EQUAL(p.calls, 1);
	CU_ASSERT_TRUE(r.exited);
	CU_ASSERT_EQUAL(r.status, 2);
	CU_ASSERT_STRING_EQUAL(r.output, "played\n");
	CU_ASSERT_EQUAL(r.output_len, 7);
	CU_ASSERT_PTR_NULL(r.stdout_text);
	CU_ASSERT_PTR_NOT_NULL(strstr(p.asked.buf, " | logged touch "));
	CU_ASSERT_PTR_NOT_NULL(strstr(p.asked.buf, "/ran, status 2"));
	plat_spawn_result_release(&r);
	/* split: the output is stderr, unless the fake gave a stdout */
	struct spawn_opts o = { .split = 1 };
	CU_ASSERT_EQUAL(plat_spawn_run_opts(&sp, t.argv, NULL, &o, &r, &err), 0);
	CU_ASSERT_STRING_EQUAL(r.stdout_text, "");
	CU_ASSERT_STRING_EQUAL(r.stderr_text, "played\n");
	CU_ASSERT_EQUAL(r.stderr_len, 7);
	plat_spawn_result_release(&r);
	p.out = "{}";
	CU_ASSERT_EQUAL(plat_spawn_run_opts(&sp, t.argv, NULL, &o, &r, &err), 0);
	CU_ASSERT_STRING_EQUAL(r.stdout_text, "{}");
	CU_ASSERT_EQUAL(r.stdout_len, 2);
	plat_spawn_result_release(&r);
	/* a command the fake cannot start: an error naming it, not logged */
	p.rc = -ENOENT;
	const char *argv[] = { "rig-no-such-program-xyz", NULL };
	CU_ASSERT_EQUAL(plat_spawn_run(&sp, argv, NULL, &r, &err), -ENOENT);
	CU_ASSERT_STRING_EQUAL(err.buf, "cannot run rig-no-such-program-xyz: No such file or directory");
	CU_ASSERT_STRING_EQUAL(p.asked.buf, "rig-no-such-program-xyz");
	CU_ASSERT_EQUAL(p.calls, 4);
	CU_ASSERT_FALSE(trace_ran(&t));
	sb_release(&p.asked);
	sb_release(&err);
	trace_release(&t);
}

static void test_spawn_zeroed(void)
{
	/* A spawner not built by a constructor runs nothing. */
	struct trace t;
	trace_init(&t);
	struct spawner sp = { 0 };
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(plat_spawn_run(&sp, t.argv, NULL, &r, &err), -EINVAL);
	CU_ASSERT_FALSE(trace_ran(&t));
	CU_ASSERT_EQUAL(strncmp(err.buf, "cannot run touch ", 17), 0);
	CU_ASSERT_FALSE(plat_spawner_dry_run(&sp));
	sb_release(&err);
	trace_release(&t);
}

static void test_spawn_signal(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	CU_ASSERT_EQUAL(plat_spawn_check(NULL, argv, NULL, &r, &err), -5);
	CU_ASSERT_FALSE(r.exited);
	CU_ASSERT_EQUAL(r.status, 15);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "killed by signal 15"));
	plat_spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_big_output(void)
{
	/* More output than is kept: head and tail survive, the middle is cut. */
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "echo HEAD; head -c 12000000 /dev/zero | tr '\\0' x; echo; echo TAIL", NULL };
	CU_ASSERT_EQUAL(plat_spawn_check(NULL, argv, NULL, &r, &err), 0);
	CU_ASSERT_TRUE(r.truncated);
	CU_ASSERT_TRUE(r.output_len <= SPAWN_MAX_OUTPUT * 3 / 2);
	CU_ASSERT_EQUAL(strncmp(r.output, "HEAD\n", 5), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output + r.output_len - 6, "TAIL\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "[... output cut ...]"));
	plat_spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_split(void)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; echo out2", NULL };
	struct spawn_opts o = { .split = 1 };
	CU_ASSERT_EQUAL(plat_spawn_run_opts(NULL, argv, NULL, &o, &r, &err), 0);
	CU_ASSERT_TRUE(r.exited);
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_STRING_EQUAL(r.stdout_text, "out\nout2\n");
	CU_ASSERT_EQUAL(r.stdout_len, 9);
	CU_ASSERT_STRING_EQUAL(r.stderr_text, "err\n");
	CU_ASSERT_EQUAL(r.stderr_len, 4);
	/* The combined text still has everything, for logs and messages. */
	CU_ASSERT_EQUAL(r.output_len, 13);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "err\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.output, "out2\n"));
	CU_ASSERT_FALSE(r.cancelled);
	plat_spawn_result_release(&r);
	/* Without split the separate texts stay NULL. */
	CU_ASSERT_EQUAL(plat_spawn_run_opts(NULL, argv, NULL, NULL, &r, &err), 0);
	CU_ASSERT_PTR_NULL(r.stdout_text);
	CU_ASSERT_PTR_NULL(r.stderr_text);
	CU_ASSERT_EQUAL(r.output_len, 13);
	plat_spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_split_both_full(void)
{
	/* Both pipes overflow their buffers (64 KiB) while the command writes
	 * the other: reading one pipe at a time would deadlock. */
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c",
			       "head -c 300000 /dev/zero | tr '\\0' e >&2; "
			       "head -c 200000 /dev/zero | tr '\\0' o; "
			       "head -c 100000 /dev/zero | tr '\\0' e >&2", NULL };
	struct spawn_opts o = { .split = 1 };
	CU_ASSERT_EQUAL(plat_spawn_run_opts(NULL, argv, NULL, &o, &r, &err), 0);
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_EQUAL(r.stdout_len, 200000);
	CU_ASSERT_EQUAL(r.stderr_len, 400000);
	CU_ASSERT_EQUAL(r.output_len, 600000);
	CU_ASSERT_EQUAL(strspn(r.stdout_text, "o"), 200000);
	CU_ASSERT_EQUAL(strspn(r.stderr_text, "e"), 400000);
	plat_spawn_result_release(&r);
	sb_release(&err);
}

static void test_spawn_split_dry_run(void)
{
	struct spawner sp = plat_spawner_dry(NULL, NULL);
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "false", NULL };
	struct spawn_opts o = { .split = 1 };
	CU_ASSERT_EQUAL(plat_spawn_run_opts(&sp, argv, NULL, &o, &r, &err), 0);
	CU_ASSERT_STRING_EQUAL(r.stdout_text, "");
	CU_ASSERT_STRING_EQUAL(r.stderr_text, "");
	plat_spawn_result_release(&r);
	sb_release(&err);
}

struct raiser {
	volatile sig_atomic_t *flag;
	long ms;
};

static void *raise_later(void *arg)
{
	struct raiser *r = arg;
	struct timespec ts = { r->ms / 1000, (r->ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	*r->flag = 1;
	return NULL;
}

/* Run argv with a cancel flag raised after 200 ms; returns seconds taken. */
static double run_cancelled(const char *const *argv, struct spawn_result *r)
{
	volatile sig_atomic_t flag = 0;
	struct raiser ra = { &flag, 200 };
	pthread_t t;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, raise_later, &ra), 0);
	struct strbuf err = STRBUF_INIT;
	struct spawn_opts o = { .split = 1, .cancel = &flag };
	uint64_t t0 = plat_clock_ns();
	CU_ASSERT_EQUAL(plat_spawn_run_opts(NULL, argv, NULL, &o, r, &err), 0);
	double secs = (double)(plat_clock_ns() - t0) / 1e9;
	pthread_join(t, NULL);
	sb_release(&err);
	return secs;
}

static void test_spawn_cancel(void)
{
	/* sh forks sleep: the whole process group must go, or the pipe stays open. */
	struct spawn_result r;
	const char *argv[] = { "sh", "-c", "echo started; sleep 30; echo finished", NULL };
	double secs = run_cancelled(argv, &r);
	CU_ASSERT(secs < 1.5);
	CU_ASSERT_TRUE(r.cancelled);
	CU_ASSERT_FALSE(r.exited);
	CU_ASSERT_EQUAL(r.status, SIGTERM);
	CU_ASSERT_STRING_EQUAL(r.stdout_text, "started\n");
	plat_spawn_result_release(&r);
}

static void test_spawn_cancel_kill(void)
{
	/* A command that ignores SIGTERM gets SIGKILL after the grace time. */
	struct spawn_result r;
	const char *argv[] = { "sh", "-c", "trap '' TERM; sleep 30", NULL };
	double secs = run_cancelled(argv, &r);
	CU_ASSERT(secs >= SPAWN_CANCEL_GRACE_MS / 1000.0);
	CU_ASSERT(secs < SPAWN_CANCEL_GRACE_MS / 1000.0 + 2);
	CU_ASSERT_TRUE(r.cancelled);
	CU_ASSERT_FALSE(r.exited);
	CU_ASSERT_EQUAL(r.status, SIGKILL);
	plat_spawn_result_release(&r);
}

static void test_spawn_cancel_not_raised(void)
{
	/* With a flag that stays down the command runs to its end. */
	volatile sig_atomic_t flag = 0;
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "sleep 0.3; echo done", NULL };
	struct spawn_opts o = { .cancel = &flag };
	CU_ASSERT_EQUAL(plat_spawn_run_opts(NULL, argv, NULL, &o, &r, &err), 0);
	CU_ASSERT_TRUE(r.exited);
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_FALSE(r.cancelled);
	CU_ASSERT_STRING_EQUAL(r.output, "done\n");
	CU_ASSERT(r.seconds >= 0.3);
	plat_spawn_result_release(&r);
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
	test_add(s, "dry: runs nothing, logs r == NULL", test_spawn_dry_runs_nothing);
	test_add(s, "fake: played instead of run, logged like a run", test_spawn_fake);
	test_add(s, "a zeroed spawner refuses to run anything", test_spawn_zeroed);
	test_add(s, "a command killed by a signal", test_spawn_signal);
	test_add(s, "over-long output keeps head and tail", test_spawn_big_output);
	test_add(s, "split: stdout and stderr apart, combined kept", test_spawn_split);
	test_add(s, "split: both pipes full at once do not deadlock", test_spawn_split_both_full);
	test_add(s, "split: dry run gives empty texts", test_spawn_split_dry_run);
	test_add(s, "cancel stops the command's process group", test_spawn_cancel);
	test_add(s, "cancel kills a command that ignores SIGTERM", test_spawn_cancel_kill);
	test_add(s, "a cancel flag that stays down changes nothing", test_spawn_cancel_not_raised);
}
