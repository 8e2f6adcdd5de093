/*
 * Tests of modules/exec.c and exec_parse.c: placeholder substitution,
 * fio's JSON (recorded fixtures), name=number lines, output tails; the
 * module run directly with a recording sink (metrics, notes, a failing
 * command failing the cell with its output, {device} on a volume without
 * one, cancellation, a real fio run when fio is installed); and `rig run`
 * of a plan with exec steps on a `dirs` target.
 *
 * The fixtures are real fio 3.33 output, made with
 *   fio --name=rr --filename=/tmp/fiofx/data --size=16M --rw=randread --bs=4k
 *       --runtime=1 --time_based --ioengine=psync --output-format=json
 *   fio --name=rw --filename=/tmp/fiofx/data2 --size=16M --rw=randrw --rwmixread=70
 *       --bs=4k --numjobs=2 --runtime=1 --time_based --ioengine=psync
 *       --output-format=json
 * (stdout only) into tests/fixtures/fio-randread.json and
 * fio-randrw-2jobs.json. The expected sums below were computed from them
 * with Python's json module.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/exec_parse.h"
#include "modules/module.h"
#include "rec_sink.h"
#include "test.h"

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static char *fixture(const char *name)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/tests/fixtures/%s", test_src(), name);
	char *text = test_read_file(p.buf, NULL);
	if (!text)
		fprintf(stderr, "\ncannot read fixture %s\n", p.buf);
	sb_release(&p);
	return text;
}

static char *fixture_path(const char *name)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/tests/fixtures/%s", test_src(), name);
	return sb_detach(&p);
}

/* --- substitution --- */

static void test_expand(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "{dir}", "/mnt/a b" },
		{ "--directory={dir}", "--directory=/mnt/a b" },
		{ "{volume}-{volume}", "HFS-HFS" },
		{ "{device}", "/dev/loop9" },
		{ "--filename={device}:{dir}/x", "--filename=/dev/loop9:/mnt/a b/x" },
		{ "{}", "{}" },
		{ "{dirx}", "{dirx}" },
		{ "{dir", "{dir" },
		{ "{{dir}}", "{/mnt/a b}" },
		{ "{Dir}", "{Dir}" },
		{ "plain", "plain" },
		{ "", "" },
	};
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct argv_list run = { xcalloc(n, sizeof(char *)), n };
	for (size_t i = 0; i < n; i++)
		run.items[i] = (char *)cases[i].in;
	char **out = NULL;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL_FATAL(mod_exec_expand(&run, "/mnt/a b", "/dev/loop9", "HFS", &out, &err), 0);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_STRING_EQUAL(out[i], cases[i].out);
	}
	CU_ASSERT_PTR_NULL(out[n]);
	mod_exec_argv_free(out);
	free(run.items);
	sb_release(&err);
}

static void test_expand_no_device(void)
{
	char *items[] = { "fio", "--name=x", "--filename={device}" };
	struct argv_list run = { items, 3 };
	char **out = NULL;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(mod_exec_expand(&run, "/d", NULL, "A", &out, &err), -EINVAL);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "argument 3 of the command, '--filename={device}', "
					       "uses {device}, but volume A has no block device"));
	sb_release(&err);
	/* Without {device}, no device is fine. */
	items[2] = "--directory={dir}";
	CU_ASSERT_EQUAL(mod_exec_expand(&run, "/d", NULL, "A", &out, &err), 0);
	CU_ASSERT_STRING_EQUAL(out[2], "--directory=/d");
	mod_exec_argv_free(out);
	sb_release(&err);
}

/* --- fio JSON --- */

static void test_fio_fixture_randread(void)
{
	char *text = fixture("fio-randread.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	struct fio_totals t;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(mod_exec_parse_fio_json(text, &t, &err), 0);
	CU_ASSERT_EQUAL(err.len, 0);
	CU_ASSERT_EQUAL(t.jobs, 1);
	CU_ASSERT_STRING_EQUAL(t.version, "fio-3.33");
	CU_ASSERT_DOUBLE_EQUAL(t.read_bw_bytes, 99089646.0, 0.5);
	CU_ASSERT_DOUBLE_EQUAL(t.read_iops, 24191.808192, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(t.read_io_bytes, 99188736.0, 0.5);
	CU_ASSERT_DOUBLE_EQUAL(t.write_bw_bytes, 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(t.write_iops, 0, 0);
	CU_ASSERT_FALSE(t.bw_from_kib);
	free(text);
	sb_release(&err);
}

static void test_fio_fixture_two_jobs(void)
{
	char *text = fixture("fio-randrw-2jobs.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	struct fio_totals t;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(mod_exec_parse_fio_json(text, &t, &err), 0);
	CU_ASSERT_EQUAL(t.jobs, 2);
	/* Summed over both jobs: 121652427 + 121648335 bytes/s, and so on. */
	CU_ASSERT_DOUBLE_EQUAL(t.read_bw_bytes / 1e6, 243.300762, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t.write_bw_bytes / 1e6, 104.22499, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t.read_iops, 59399.600399, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(t.write_iops, 25445.554445, 1e-6);
	free(text);
	sb_release(&err);
}

static void test_fio_prefix_and_suffix(void)
{
	/* A warning fio printed on stdout before the JSON, text after it. */
	char *json = fixture("fio-randread.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(json);
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&text, "fio: this platform does not support process shared mutexes, {x}\n"
		       "note: both iodepth >= 1 and synchronous I/O engine\n%s\nRun status: done\n",
		json);
	struct fio_totals t;
	CU_ASSERT_EQUAL(mod_exec_parse_fio_json(text.buf, &t, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(t.read_bw_bytes, 99089646.0, 0.5);
	free(json);
	sb_release(&text);
	sb_release(&err);
}

static void test_fio_errors(void)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "", "no JSON in the command's standard output" },
		{ "fio-3.33\nsome text\n", "no JSON in the command's standard output" },
		{ "{ \"jobs\": [ { \"jobname\": \"a\", ", "it ends before the JSON does" },
		{ "{ \"jobs\": [ } ", "cannot parse fio's JSON output" },
		{ "{ \"fio version\": \"fio-3\" }", "lists no jobs" },
		{ "{ \"jobs\": [] }", "lists no jobs" },
		{ "{ \"jobs\": [ 3 ] }", "job 1 is not an object" },
		{ "{ \"jobs\": [ { \"jobname\": \"bad\", \"error\": 28, \"read\": {}, \"write\": {} } ] }",
		  "fio reports error 28 (No space left on device) for job 'bad'" },
		{ "{ \"jobs\": [ { \"jobname\": \"j\", \"read\": { \"bw_bytes\": 1, \"iops\": 1 } } ] }",
		  "no \"write\" figures for job 'j'" },
		{ "{ \"jobs\": [ { \"jobname\": \"j\", \"read\": { \"bw_bytes\": \"1\", \"iops\": 1 }, "
		  "\"write\": { \"bw_bytes\": 1, \"iops\": 1 } } ] }",
		  "no numeric read bandwidth and IOPS for job 'j'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fio_totals t;
		struct strbuf err = STRBUF_INIT;
		CU_ASSERT_EQUAL(mod_exec_parse_fio_json(cases[i].text, &t, &err), -EINVAL);
		if (!strstr(err.buf, cases[i].msg)) {
			fprintf(stderr, "\ncase %zu: got '%s', want '%s'\n", i, err.buf, cases[i].msg);
			CU_FAIL("fio error message");
		}
		sb_release(&err);
	}
}

static void test_fio_old_bw(void)
{
	/* fio before 3.0: bw in KiB/s, no bw_bytes. */
	const char *text = "{ \"jobs\": [ { \"jobname\": \"j\", \"error\": 0,"
			   " \"read\": { \"bw\": 1000, \"iops\": 250, \"io_bytes\": 5 },"
			   " \"write\": { \"bw\": 0, \"iops\": 0 } } ] }";
	struct fio_totals t;
	struct strbuf err = STRBUF_INIT;
	CU_ASSERT_EQUAL(mod_exec_parse_fio_json(text, &t, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(t.read_bw_bytes, 1024000.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(t.read_iops, 250, 0);
	CU_ASSERT_TRUE(t.bw_from_kib);
	sb_release(&err);
}

/* --- name=number --- */

struct kvrec {
	struct strbuf s;
};

static void kv_fn(void *o, const char *name, double value)
{
	struct kvrec *r = o;
	sb_addf(&r->s, "%s=%.17g;", name, value);
}

static void test_kv(void)
{
	static const struct {
		const char *text, *want;
		size_t bad;
		const char *first_bad;
	} cases[] = {
		{ "speed=42\n", "speed=42;", 0, "" },
		{ "speed=42", "speed=42;", 0, "" },
		{ "  iops = 1.5e3 \r\n", "iops=1500;", 0, "" },
		{ "a=1\nb=-2.5\nc=+.5\nd=7.\n", "a=1;b=-2.5;c=0.5;d=7;", 0, "" },
		{ "x_1=0\n", "x_1=0;", 0, "" },
		{ "Speed=42\nread-rate=3\nok=1\n", "ok=1;", 2, "Speed=42" },
		{ "a b=1\n", "", 0, "" },          /* a space in the name: text */
		{ "msg=hello\n", "", 0, "" },      /* not a number */
		{ "n=1 2\n", "", 0, "" },
		{ "n=0x10\nm=inf\nk=nan\nj=1e\ni=.\nh=-\n", "", 0, "" },
		{ "n=1e999\n", "", 0, "" },        /* not finite */
		{ "=5\n", "", 0, "" },
		{ "a==5\n", "", 0, "" },
		{ "\n\nfree text\nrate=9 MB/s\n", "", 0, "" },
		{ "t=1\n\tt=2\n", "t=1;t=2;", 0, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kvrec r = { STRBUF_INIT };
		struct strbuf first = STRBUF_INIT;
		size_t bad = 99;
		mod_exec_parse_kv(cases[i].text, kv_fn, &r, &bad, &first);
		if (strcmp(r.s.buf, cases[i].want) || bad != cases[i].bad ||
		    strcmp(first.buf, cases[i].first_bad)) {
			fprintf(stderr, "\ncase %zu: got '%s' bad %zu '%s'\n", i, r.s.buf, bad, first.buf);
			CU_FAIL("key=value case");
		}
		sb_release(&r.s);
		sb_release(&first);
	}
	/* A name at the limit counts; one longer does not. */
	struct strbuf t = STRBUF_INIT, first = STRBUF_INIT;
	struct kvrec r = { STRBUF_INIT };
	for (int i = 0; i < EXEC_NAME_MAX; i++)
		sb_addch(&t, 'a');
	sb_adds(&t, "=1\nb");
	for (int i = 0; i < EXEC_NAME_MAX; i++)
		sb_addch(&t, 'b');
	sb_adds(&t, "=2\n");
	size_t bad = 0;
	CU_ASSERT_EQUAL(mod_exec_parse_kv(t.buf, kv_fn, &r, &bad, &first), 1);
	CU_ASSERT_EQUAL(bad, 1);
	sb_release(&t);
	sb_release(&first);
	sb_release(&r.s);
}

static void test_tail(void)
{
	const char *t = "l1\nl2\nl3\nl4\n";
	CU_ASSERT_STRING_EQUAL(mod_exec_tail(t, strlen(t), 2, 1000), "l3\nl4\n");
	CU_ASSERT_STRING_EQUAL(mod_exec_tail(t, strlen(t), 10, 1000), t);
	CU_ASSERT_STRING_EQUAL(mod_exec_tail(t, strlen(t), 10, 7), "l3\nl4\n"); /* cut in l2 */
	CU_ASSERT_STRING_EQUAL(mod_exec_tail("abcdef", 6, 3, 3), "def");
	CU_ASSERT_STRING_EQUAL(mod_exec_tail("", 0, 3, 3), "");
}

/* --- the module, run directly --- */

static void env_init(struct rec_env *e)
{
	rec_env_init(e, NULL, 1, 1, 0);
}

static void env_release(struct rec_env *e)
{
	rec_env_release(e, NULL); /* exec keeps no state */
}

static int run_exec(struct rec_env *e, const char *const *argv, int parse)
{
	size_t n = 0;
	while (argv[n])
		n++;
	struct exec_args a = { { (char **)argv, n }, parse };
	return mod_exec.run(&e->ctx, &a);
}

static void test_module_kv(void)
{
	struct rec_env e;
	env_init(&e);
	const char *argv[] = { "sh", "-c",
			       "echo speed=42; echo Bad=1; echo 'lat_ms = 2.5e1'; echo speed=43; "
			       "echo seconds=9; echo noise; echo warn >&2; echo iops=7 >&2", NULL };
	CU_ASSERT_EQUAL_FATAL(run_exec(&e, argv, EXEC_PARSE_KV), 0);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "speed", ""), 43, 0);   /* the last value */
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "lat_ms", ""), 25, 0);
	CU_ASSERT(isnan(rec_get(&e.rec, "iops", "")));                /* stderr is not parsed */
	double secs = rec_get(&e.rec, "seconds", "s");                 /* exec's own */
	CU_ASSERT(secs > 0 && secs < 5);
	CU_ASSERT_PTR_NULL(strstr(e.rec.metrics.buf, "seconds=9"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf,
				      "speed was printed 2 times: the last value is recorded"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf,
				      "the command printed seconds=..., which is not recorded"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "1 line of the form name=number not recorded"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "(first: 'Bad=1')"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "stderr: warn\niops=7\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "command: sh -c 'echo speed=42;"));
	env_release(&e);
}

static void test_module_kv_none(void)
{
	struct rec_env e;
	env_init(&e);
	const char *argv[] = { "echo", "nothing to see", NULL };
	CU_ASSERT_EQUAL_FATAL(run_exec(&e, argv, EXEC_PARSE_KV), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "parse: no name=number lines"));
	CU_ASSERT(rec_get(&e.rec, "seconds", "s") > 0);
	env_release(&e);
}

static void test_module_placeholders(void)
{
	struct rec_env e;
	env_init(&e);
	/* The arguments arrive substituted; the command runs in {dir}. */
	const char *argv[] = { "sh", "-c", "printf '%s|%s|%s|%s' \"$1\" \"$2\" \"$3\" \"$(pwd -P)\"",
			       "sh", "{dir}", "--vol={volume}", "{x}", NULL };
	CU_ASSERT_EQUAL_FATAL(run_exec(&e, argv, EXEC_PARSE_NONE), 0);
	char *real = realpath(e.dir, NULL);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "stdout: %s|--vol=A|{x}|%s\n", e.dir, real);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, want.buf));
	if (!strstr(e.rec.notes.buf, want.buf))
		fprintf(stderr, "\nnotes: %s\nwant: %s\n", e.rec.notes.buf, want.buf);
	free(real);
	sb_release(&want);
	/* Only seconds: parse none records nothing else. */
	CU_ASSERT_EQUAL(strncmp(e.rec.metrics.buf, "seconds=", 8), 0);
	CU_ASSERT_EQUAL(count_lines(e.rec.metrics.buf), 1);
	env_release(&e);
}

static void test_module_device(void)
{
	struct rec_env e;
	env_init(&e);
	const char *argv[] = { "echo", "{device}", NULL };
	CU_ASSERT_EQUAL(run_exec(&e, argv, EXEC_PARSE_NONE), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "uses {device}, but volume A has no block device"));
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	/* With a device, it is substituted. */
	sb_reset(&e.err);
	e.ctx.device = "/dev/fake0";
	CU_ASSERT_EQUAL(run_exec(&e, argv, EXEC_PARSE_NONE), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "stdout: /dev/fake0\n"));
	env_release(&e);
}

static void test_module_failure(void)
{
	struct rec_env e;
	env_init(&e);
	const char *argv[] = { "sh", "-c", "echo partial result; echo 'disk on fire' >&2; exit 3", NULL };
	CU_ASSERT_EQUAL(run_exec(&e, argv, EXEC_PARSE_KV), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "command sh -c 'echo partial result;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "failed with exit status 3; its output:\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "partial result\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "disk on fire\n"));
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	/* Long output: the message shows the tail. */
	sb_reset(&e.err);
	const char *many[] = { "sh", "-c",
			       "i=0; while [ $i -lt 100 ]; do echo line$i; i=$((i+1)); done; exit 1",
			       NULL };
	CU_ASSERT_EQUAL(run_exec(&e, many, EXEC_PARSE_NONE), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "its output ends:\nline80\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "line99\n"));
	CU_ASSERT_PTR_NULL(strstr(e.err.buf, "line79\n"));
	/* A missing program, and a signal. */
	sb_reset(&e.err);
	const char *missing[] = { "rig-no-such-program-xyz", NULL };
	CU_ASSERT_EQUAL(run_exec(&e, missing, EXEC_PARSE_NONE), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "failed with exit status 127"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "cannot run rig-no-such-program-xyz"));
	sb_reset(&e.err);
	const char *killed[] = { "sh", "-c", "kill -KILL $$", NULL };
	CU_ASSERT_EQUAL(run_exec(&e, killed, EXEC_PARSE_NONE), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "was killed by signal 9 and printed nothing"));
	env_release(&e);
}

static void test_module_fio_fixture(void)
{
	struct rec_env e;
	env_init(&e);
	char *path = fixture_path("fio-randrw-2jobs.json");
	/* A warning on stderr must not disturb the JSON on stdout. */
	const char *argv[] = { "sh", "-c", "echo 'fio: warning' >&2; cat \"$1\"", "sh", path, NULL };
	CU_ASSERT_EQUAL_FATAL(run_exec(&e, argv, EXEC_PARSE_FIO_JSON), 0);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "read_rate", "MB/s"), 243.300762, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "write_rate", "MB/s"), 104.22499, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "read_iops", "IO/s"), 59399.600399, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "write_iops", "IO/s"), 25445.554445, 1e-6);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "fio: fio-3.33, 2 jobs\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "stderr: fio: warning\n"));
	free(path);

	/* A read-only job records no write figures. */
	sb_reset(&e.rec.metrics);
	path = fixture_path("fio-randread.json");
	const char *rd[] = { "cat", path, NULL };
	CU_ASSERT_EQUAL_FATAL(run_exec(&e, rd, EXEC_PARSE_FIO_JSON), 0);
	CU_ASSERT_DOUBLE_EQUAL(rec_get(&e.rec, "read_rate", "MB/s"), 99.089646, 1e-9);
	CU_ASSERT(isnan(rec_get(&e.rec, "write_rate", "MB/s")));
	CU_ASSERT(isnan(rec_get(&e.rec, "write_iops", "IO/s")));
	free(path);

	/* Output that is not fio's JSON fails the cell, showing stderr. */
	sb_reset(&e.err);
	const char *bad[] = { "sh", "-c", "echo 'fio: unknown option' >&2; echo nope", NULL };
	CU_ASSERT_EQUAL(run_exec(&e, bad, EXEC_PARSE_FIO_JSON), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "no JSON in the command's standard output"));
	CU_ASSERT_PTR_NOT_NULL(strstr(e.err.buf, "its stderr:\nfio: unknown option\n"));
	env_release(&e);
}

static void test_module_real_fio(void)
{
	if (access("/usr/bin/fio", X_OK) != 0 && access("/usr/local/bin/fio", X_OK) != 0 &&
	    access("/opt/homebrew/bin/fio", X_OK) != 0) {
		printf("\n  (fio not installed: the real fio run is skipped)\n");
		return;
	}
	struct rec_env e;
	env_init(&e);
	const char *argv[] = { "fio", "--name=seq", "--directory={dir}", "--size=2M",
			       "--rw=write", "--bs=64k", "--ioengine=psync", "--output-format=json",
			       NULL };
	int rc = run_exec(&e, argv, EXEC_PARSE_FIO_JSON);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\n%s\n", e.err.buf);
	CU_ASSERT(rec_get(&e.rec, "write_rate", "MB/s") > 0);
	CU_ASSERT(rec_get(&e.rec, "write_iops", "IO/s") > 0);
	CU_ASSERT(isnan(rec_get(&e.rec, "read_rate", "MB/s")));
	env_release(&e);
}

struct raiser {
	volatile sig_atomic_t *flag;
};

static void *raise_later(void *arg)
{
	struct raiser *r = arg;
	struct timespec ts = { 0, 200000000L };
	nanosleep(&ts, NULL);
	*r->flag = 1;
	return NULL;
}

static void test_module_cancel(void)
{
	struct rec_env e;
	env_init(&e);
	struct raiser ra = { &e.cancel };
	pthread_t t;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, raise_later, &ra), 0);
	const char *argv[] = { "sh", "-c", "sleep 30; echo x=1", NULL };
	CU_ASSERT_EQUAL(run_exec(&e, argv, EXEC_PARSE_KV), 0);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(e.rec.notes.buf, "interrupted: the command was stopped"));
	/* Raised before the start: nothing runs. */
	sb_reset(&e.rec.notes);
	CU_ASSERT_EQUAL(run_exec(&e, argv, EXEC_PARSE_KV), 0);
	CU_ASSERT_EQUAL(e.rec.metrics.len, 0);
	env_release(&e);
}

/* --- end to end --- */

static void test_run_exec_plan(void)
{
	char *tmp = test_tmpdir();
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&text,
		"rig: 1\nname: exec-e2e\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		"steps:\n"
		"  - exec: { run: [sh, -c, \"echo speed=42\"], parse: key=value }\n"
		"  - exec:\n"
		"      run: [sh, -c, 'test \"$(pwd -P)\" = \"$(cd \"$1\" && pwd -P)\" && echo \"$2=1\"',"
		" sh, \"{dir}\", \"in_{volume}\"]\n"
		"      parse: key=value\n",
		tmp, tmp);
	CU_ASSERT_EQUAL(test_run_plan(tmp, text.buf, "3", &out), 0);
	sb_addf(&p, "%s/results.csv", out.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	/* header + 2 volumes x (seconds + speed) + 2 volumes x (seconds + in_X) */
	CU_ASSERT_EQUAL(count_lines(csv), 1 + 8);
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",1,exec,a,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",speed,42,,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",2,exec,a,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",in_a,1,,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",in_b,1,,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",seconds,"));
	free(csv);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&out);
	sb_release(&text);
	sb_release(&p);
}

static void test_run_exec_fails(void)
{
	char *tmp = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, text = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", tmp);
	sb_addf(&out, "%s/out", tmp);
	sb_addf(&text,
		"rig: 1\nname: exec-fail\ntarget:\n  dirs: [\"%s/a\"]\n"
		"steps:\n"
		"  - exec: { run: [sh, -c, \"echo about to fail; exit 4\"] }\n"
		"  - exec: { run: [echo, never] }\n",
		tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "-o", out.buf, plan.buf, NULL };
	char *o = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &o), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(o, "step 1 (exec) on volume a failed: command sh -c "));
	CU_ASSERT_PTR_NOT_NULL(strstr(o, "failed with exit status 4; its output:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o, "about to fail"));
	free(o);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&text);
}

void register_exec_tests(void)
{
	CU_pSuite s = test_suite_e2e("exec");
	test_add(s, "placeholders {dir} {device} {volume}; other braces kept", test_expand);
	test_add(s, "{device} without a device is an error naming the argument", test_expand_no_device);
	test_add(s, "fio JSON: recorded randread", test_fio_fixture_randread);
	test_add(s, "fio JSON: two jobs are summed", test_fio_fixture_two_jobs);
	test_add(s, "fio JSON: text before and after is skipped", test_fio_prefix_and_suffix);
	test_add(s, "fio JSON: errors", test_fio_errors);
	test_add(s, "fio JSON: bw in KiB/s from fio before 3.0", test_fio_old_bw);
	test_add(s, "key=value lines", test_kv);
	test_add(s, "output tails", test_tail);
	test_add(s, "module: key=value metrics and notes", test_module_kv);
	test_add(s, "module: key=value with nothing to parse", test_module_kv_none);
	test_add(s, "module: arguments substituted, run in the volume's folder", test_module_placeholders);
	test_add(s, "module: {device}", test_module_device);
	test_add(s, "module: a failing command fails the cell with its output", test_module_failure);
	test_add(s, "module: fio-json from stdout alone", test_module_fio_fixture);
	test_add(s, "module: a real fio run", test_module_real_fio);
	test_add(s, "module: cancel stops the command", test_module_cancel);
	test_add(s, "rig run: exec with key=value on a dirs target", test_run_exec_plan);
	test_add(s, "rig run: a failing exec fails the run with its output", test_run_exec_fails);
}
