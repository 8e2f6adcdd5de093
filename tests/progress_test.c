/*
 * The progress of a run (platform/progress.c, rig/run/run_eta.c), seen as a
 * user sees it: `rig run` of a quick plan on directories (the null module,
 * no root), its stderr once a pseudo-terminal the test opens
 * (posix_openpt: the line is redrawn in place with an ETA that decreases
 * and the last value measured), once a pipe (plain lines, no carriage
 * return), once --json-progress (one JSON object per line, the events of
 * docs/progress.md). A failing run's error starts on a line of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "platform/progress.h"
#include "test.h"

void register_progress_tests(void);

/* Two volumes, two repetitions, two steps: 8 cells of about 0.25 s. */
static void write_plan(const char *dir, const char *extra, struct strbuf *plan)
{
	struct strbuf t = STRBUF_INIT;
	sb_reset(plan);
	sb_addf(plan, "%s/plan.yaml", dir);
	sb_addf(&t, "rig: 1\nname: progress\nseed: 1\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		    "repeat: 2\nsteps:\n  - null: { value: 51670, time: 250ms }\n"
		    "  - null: { value: 7, time: 250ms%s }\n", dir, dir, extra);
	test_write_file(plan->buf, t.buf);
	sb_release(&t);
}

enum how { ON_PTY, ON_PIPE };

/* Run rig with args; its stderr (a terminal or a pipe) into *err, stdout
 * to /dev/null. Returns the exit status, -1 when it could not run. */
static int run_watched(const char *const *args, enum how how, struct strbuf *err)
{
	int rfd = -1, wfd = -1;
	char *slave = NULL;
	if (how == ON_PTY) {
		rfd = posix_openpt(O_RDWR | O_NOCTTY);
		if (rfd < 0 || grantpt(rfd) < 0 || unlockpt(rfd) < 0 || !ptsname(rfd))
			return -1;
		slave = strdup(ptsname(rfd));
	} else {
		int fds[2];
		if (pipe(fds) < 0)
			return -1;
		rfd = fds[0];
		wfd = fds[1];
	}
	const char **argv = test_rig_argv(args);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = wfd;
		if (how == ON_PTY) {
			setsid();
			fd = open(slave, O_RDWR);
		}
		int null = open("/dev/null", O_RDWR);
		if (fd < 0 || null < 0)
			_exit(126);
		dup2(null, 0);
		dup2(null, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	free(argv);
	free(slave);
	if (wfd >= 0)
		close(wfd);
	char buf[4096];
	for (;;) {
		ssize_t n = read(rfd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF, or EIO once the terminal's last user is gone */
		sb_add(err, buf, (size_t)n);
	}
	close(rfd);
	int status;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The ETAs of the lines, in order (seconds; the line's "ETA 1.2s"). */
static size_t etas(const char *text, double *out, size_t max)
{
	size_t n = 0;
	for (const char *p = strstr(text, ", ETA "); p && n < max; p = strstr(p + 1, ", ETA ")) {
		char *end;
		double v = strtod(p + 6, &end);
		if (end != p + 6 && *end == 's')
			out[n++] = v;
	}
	return n;
}

static void test_format_seconds(void)
{
	static const struct { double s; const char *want; } cases[] = {
		{ 0, "0.0s" }, { 0.44, "0.4s" }, { 9.94, "9.9s" }, { 42.4, "42s" }, { 65, "1:05" },
		{ 3599.4, "59:59" }, { 7384, "2:03:04" }, { -1, "0.0s" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		plat_progress_format_seconds(&sb, cases[i].s);
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i].want);
		sb_release(&sb);
	}
}

/* Lines of a terminal's output (split at CR and LF) whose last value
 * changed from the line before and names another cell than the line's
 * own ("| rep 1 step 2 null on a | last: null on a value ..."): each
 * printed, and counted. */
static int misnamed_values(const char *t)
{
	char *copy = strdup(t), *save = NULL, prev[256] = "";
	int bad = 0;
	for (char *l = strtok_r(copy, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save)) {
		const char *last = strstr(l, "| last: "), *head = strstr(l, " null on ");
		if (!last || !head || head > last || !strcmp(prev, last))
			continue;
		snprintf(prev, sizeof(prev), "%s", last);
		/* the head's "null on X" against the value's "last: null on Y" */
		if (strncmp(head + 1, last + 8, 9)) {
			printf("\n  a value named after another cell: %s\n", l);
			bad++;
		}
	}
	free(copy);
	return bad;
}

/* On a terminal: one line redrawn; ETA present and decreasing; the value. */
static void test_terminal(void)
{
	char *dir = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	write_plan(dir, "", &plan);
	sb_addf(&out, "%s/run", dir);
	const char *args[] = { "run", "-o", out.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL_FATAL(run_watched(args, ON_PTY, &err), 0);
	const char *t = err.buf;
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\r\033[K[1/8] "));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\r\033[K[8/8] "));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "| rep 2 step 2 null on b"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "| last: null on b value 7"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, " elapsed | completed | last: null on b value 7"));
	/* The value as the reports print it, never with an exponent. */
	CU_ASSERT_PTR_NOT_NULL(strstr(t, " value 51,670"));
	CU_ASSERT_PTR_NULL(strstr(t, "e+0"));
	/* Each value is named after its own cell: a line that shows a value
	 * it did not show before shows it beside the cell that measured it. */
	CU_ASSERT_EQUAL(misnamed_values(t), 0);
	/* Redrawn in place: no line break between the cells' lines. */
	const char *first = strstr(t, "[1/8]"), *last = strstr(t, "[8/8]");
	CU_ASSERT_TRUE(first && last && !memchr(first, '\n', (size_t)(last - first)));
	double e[64];
	size_t n = etas(t, e, 64);
	CU_ASSERT_TRUE(n >= 6);
	for (size_t i = 1; i < n; i++) {
		if (e[i] > e[i - 1] + 0.15)
			printf("\nETA went up: %.1f then %.1f\n", e[i - 1], e[i]);
		CU_ASSERT_TRUE(e[i] <= e[i - 1] + 0.15);
	}
	CU_ASSERT_TRUE(n && e[n - 1] < e[0] - 0.5);
	CU_ASSERT_TRUE(n && e[0] > 0.8 && e[0] < 4); /* 7 cells of 0.25 s left */
	if (n < 6)
		printf("\nterminal output:\n%s\n", t);
	test_rmtree(dir);
	free(dir);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&err);
}

/* A run that fails: its error begins a line of its own on the terminal. */
static void test_terminal_error(void)
{
	char *dir = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	write_plan(dir, ", fail: true", &plan);
	sb_addf(&out, "%s/run", dir);
	const char *args[] = { "run", "-o", out.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL(run_watched(args, ON_PTY, &err), 1);
	const char *e = strstr(err.buf, "rig run: ");
	CU_ASSERT_TRUE_FATAL(e != NULL);
	CU_ASSERT_TRUE(e > err.buf && e[-1] == '\n');
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "| failed"));
	test_rmtree(dir);
	free(dir);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&err);
}

/* Piped: plain lines, each cell's own, no carriage return; -q: silent. */
static void test_pipe(void)
{
	char *dir = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	write_plan(dir, "", &plan);
	sb_addf(&out, "%s/run", dir);
	const char *args[] = { "run", "-o", out.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL_FATAL(run_watched(args, ON_PIPE, &err), 0);
	CU_ASSERT_PTR_NULL(strchr(err.buf, '\r'));
	CU_ASSERT_PTR_NULL(strchr(err.buf, '\033'));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, "\n[1/8] 0."));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, " elapsed, ETA "));
	CU_ASSERT_TRUE(strstr(err.buf, " | rep 1 step 2 null on a | last: null on b value 51,670\n") ||
		       strstr(err.buf, " | rep 1 step 2 null on a | last: null on a value 51,670\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.buf, " elapsed | completed | last: null on b value 7\n"));
	double e[64];
	CU_ASSERT_EQUAL(etas(err.buf, e, 64), 7);
	test_rmtree(out.buf);
	sb_reset(&err);
	const char *quiet[] = { "run", "-q", "-o", out.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL(run_watched(quiet, ON_PIPE, &err), 0);
	CU_ASSERT_EQUAL(err.len, 0);
	test_rmtree(dir);
	free(dir);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&err);
}

/* --json-progress: every line of stderr one JSON object, the events in order. */
static void test_json(void)
{
	char *dir = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	write_plan(dir, "", &plan);
	sb_addf(&out, "%s/run", dir);
	const char *args[] = { "run", "-q", "--json-progress", "-o", out.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL_FATAL(run_watched(args, ON_PIPE, &err), 0);
	size_t cells = 0, values = 0, starts = 0, ends = 0, lines = 0;
	double last_eta = INFINITY;
	char *save = NULL;
	for (char *l = strtok_r(err.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		lines++;
		struct json_object *o = json_tokener_parse(l), *ev = NULL, *x = NULL;
		CU_ASSERT_TRUE_FATAL(o != NULL && json_object_object_get_ex(o, "event", &ev));
		CU_ASSERT_TRUE(json_object_object_get_ex(o, "elapsed_s", &x));
		const char *name = json_object_get_string(ev);
		if (!strcmp(name, "start")) {
			starts++;
			CU_ASSERT_TRUE(json_object_object_get_ex(o, "cells", &x) && json_object_get_int(x) == 8);
		} else if (!strcmp(name, "cell")) {
			cells++;
			CU_ASSERT_TRUE(json_object_object_get_ex(o, "seq", &x) &&
				       json_object_get_int(x) == (int)cells);
			if (json_object_object_get_ex(o, "eta_s", &x) && x) {
				CU_ASSERT_TRUE(json_object_get_double(x) <= last_eta + 0.15);
				last_eta = json_object_get_double(x);
			}
		} else if (!strcmp(name, "value")) {
			values++;
			CU_ASSERT_TRUE(json_object_object_get_ex(o, "metric", &x) &&
				       !strcmp(json_object_get_string(x), "value"));
		} else if (!strcmp(name, "end")) {
			ends++;
			CU_ASSERT_TRUE(json_object_object_get_ex(o, "status", &x) &&
				       !strcmp(json_object_get_string(x), "completed"));
		}
		json_object_put(o);
	}
	CU_ASSERT_EQUAL(starts, 1);
	CU_ASSERT_EQUAL(cells, 8);
	CU_ASSERT_EQUAL(values, 8);
	CU_ASSERT_EQUAL(ends, 1);
	CU_ASSERT_TRUE(last_eta < 1);
	CU_ASSERT_TRUE(lines >= 18);
	test_rmtree(dir);
	free(dir);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&err);
}

void register_progress_tests(void)
{
	CU_pSuite s = test_suite_e2e("progress line");
	test_add(s, "elapsed and ETA text", test_format_seconds);
	test_add(s, "on a terminal: redrawn, ETA decreasing, last value", test_terminal);
	test_add(s, "on a terminal: an error starts its own line", test_terminal_error);
	test_add(s, "piped: plain lines; -q: silent", test_pipe);
	test_add(s, "--json-progress: one JSON object per event", test_json);
}
