/* Shared test helpers (see test.h) and the tests of rig/util. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "test.h"

/* Each suite's tier (test.h), by name: a few dozen suites, looked up once each. */
struct tier_entry {
	char *name;
	const char *tier;
	int alone;
};
static struct tier_entry *tiers;
static size_t ntiers;
static int quiet_registration;

static void set_tier(const char *name, const char *tier)
{
	for (size_t i = 0; i < ntiers; i++)
		if (!strcmp(tiers[i].name, name)) {
			tiers[i].tier = tier;
			return;
		}
	tiers = xrealloc(tiers, (ntiers + 1) * sizeof(*tiers));
	tiers[ntiers].name = xstrdup(name);
	tiers[ntiers].alone = 0;
	tiers[ntiers++].tier = tier;
}

const char *test_suite_tier(const char *name)
{
	for (size_t i = 0; i < ntiers; i++)
		if (!strcmp(tiers[i].name, name))
			return tiers[i].tier;
	return "unit";
}

void test_suite_alone(CU_pSuite s, const char *why)
{
	(void)why; /* for the reader of the suite */
	set_tier(s->pName, test_suite_tier(s->pName));
	for (size_t i = 0; i < ntiers; i++)
		if (!strcmp(tiers[i].name, s->pName))
			tiers[i].alone = 1;
}

int test_suite_is_alone(const char *name)
{
	for (size_t i = 0; i < ntiers; i++)
		if (!strcmp(tiers[i].name, name))
			return tiers[i].alone;
	return 0;
}

void test_quiet_registration(int quiet)
{
	quiet_registration = quiet;
}

CU_pSuite test_suite(const char *name)
{
	CU_pSuite s = CU_add_suite(name, NULL, NULL);
	if (!s) {
		fprintf(stderr, "cannot add suite %s\n", name);
		exit(1);
	}
	return s;
}

CU_pSuite test_suite_e2e(const char *name)
{
	CU_pSuite s = test_suite(name);
	set_tier(name, "e2e");
	return s;
}


/* Whether the test's name contains one of the '|'-separated texts of
 * $RIG_TEST_SKIP (`make valgrind` leaves out its slowest tests this way). */
static int test_skipped(const char *name)
{
	const char *skip = getenv("RIG_TEST_SKIP");
	for (const char *p = skip; p && *p;) {
		size_t n = strcspn(p, "|");
		if (n && memmem(name, strlen(name), p, n))
			return 1;
		p += n + (p[n] == '|');
	}
	return 0;
}

void test_add(CU_pSuite s, const char *name, void (*fn)(void))
{
	CU_pTest t = CU_add_test(s, name, fn);
	if (!t) {
		fprintf(stderr, "cannot add test %s\n", name);
		exit(1);
	}
	if (test_skipped(name)) {
		if (!quiet_registration)
			printf("SKIPPED test '%s' ($RIG_TEST_SKIP)\n", name);
		CU_set_test_active(t, CU_FALSE);
	}
}

int test_require_root(CU_pSuite s, const char *why)
{
	set_tier(s->pName, "root");
	if (geteuid() == 0)
		return 1;
	if (!quiet_registration)
		printf("SKIPPED suite '%s': needs root (%s)\n", s->pName, why);
	CU_set_suite_active(s, CU_FALSE);
	return 0;
}

const char *test_rig_bin(void)
{
	const char *b = getenv("RIG_BIN");
	return b ? b : "build/san/rig";
}

const char *test_src(void)
{
	const char *s = getenv("RIG_SRC");
	return s ? s : ".";
}

const char *test_fake_macos_dir(void)
{
	const char *d = getenv("RIG_FAKE_MACOS_DIR");
	return d && *d ? d : "build/tools/macos";
}

int test_slowdown(void)
{
	const char *vg = getenv("RIG_VG_VALGRIND");
	return vg && *vg ? 10 : 1;
}

char *test_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/rig-test-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(sb.buf)) {
		perror("mkdtemp");
		exit(1);
	}
	return sb_detach(&sb);
}

int test_rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (!d)
			return -errno;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "%s/%s", path, e->d_name);
			test_rmtree(sb.buf);
			sb_release(&sb);
		}
		closedir(d);
		return rmdir(path) < 0 ? -errno : 0;
	}
	return unlink(path) < 0 ? -errno : 0;
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(&sb, buf, n);
	fclose(f);
	if (len)
		*len = sb.len;
	return sb_detach(&sb);
}

int test_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -errno;
	size_t n = strlen(text);
	int ok = fwrite(text, 1, n, f) == n;
	return (fclose(f) == 0 && ok) ? 0 : -EIO;
}

const char **test_rig_argv(const char *const *args)
{
	size_t n = 0;
	while (args[n])
		n++;
	const char **argv = xcalloc(n + 2, sizeof(*argv));
	argv[0] = test_rig_bin();
	memcpy(argv + 1, args, n * sizeof(*argv));
	return argv;
}

int test_run_rig(const char *const *args, char **out)
{
	return test_run_rig_in(NULL, args, out);
}

int test_run_rig_in(const char *cwd, const char *const *args, char **out)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	const char **argv = test_rig_argv(args);
	/* In another folder, a relative RIG_BIN would name nothing. */
	char *abs = cwd ? realpath(argv[0], NULL) : NULL;
	if (abs)
		argv[0] = abs;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	free(argv);
	free(abs);
	close(fds[1]);
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t r;
	while ((r = read(fds[0], buf, sizeof(buf))) > 0)
		sb_add(&sb, buf, (size_t)r);
	close(fds[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0)
		status = -1;
	if (out)
		*out = sb_detach(&sb);
	else
		sb_release(&sb);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int test_run_plan(const char *dir, const char *text, const char *seed, struct strbuf *out)
{
	struct strbuf plan = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", dir);
	sb_addf(out, "%s/out", dir);
	int rc = test_write_file(plan.buf, text);
	if (rc == 0) {
		const char *with_seed[] = { "run", "-q", "--seed", seed, "-o", out->buf, plan.buf, NULL };
		const char *without[] = { "run", "-q", "-o", out->buf, plan.buf, NULL };
		char *o = NULL;
		rc = test_run_rig(seed ? with_seed : without, &o);
		if (rc != 0)
			fprintf(stderr, "\n%s\n", o);
		free(o);
	} else {
		fprintf(stderr, "\ncannot write %s: %s\n", plan.buf, strerror(-rc));
	}
	sb_release(&plan);
	return rc;
}

int test_run_plan_file(const char *plan, const char *out)
{
	const char *args[] = { "run", "-q", "-o", out, plan, NULL };
	char *log = NULL;
	int rc = test_run_rig(args, &log);
	if (rc != 0)
		fprintf(stderr, "\nrig run %s exited %d:\n%s\n", plan, rc, log ? log : "");
	free(log);
	return rc;
}

/* --- strbuf --- */

static void test_strbuf_basic(void)
{
	struct strbuf sb = STRBUF_INIT;
	CU_ASSERT_STRING_EQUAL(sb.buf, "");
	sb_addf(&sb, "%d-%s", 42, "x");
	sb_addch(&sb, '!');
	CU_ASSERT_STRING_EQUAL(sb.buf, "42-x!");
	CU_ASSERT_EQUAL(sb.len, 5);
	sb_setlen(&sb, 2);
	CU_ASSERT_STRING_EQUAL(sb.buf, "42");
	for (int i = 0; i < 1000; i++)
		sb_adds(&sb, "abc");
	CU_ASSERT_EQUAL(sb.len, 3002);
	char *d = sb_detach(&sb);
	CU_ASSERT_EQUAL(strlen(d), 3002);
	CU_ASSERT_STRING_EQUAL(sb.buf, "");
	free(d);
	sb_release(&sb);
}

static void test_strbuf_csv(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "plain" },
		{ "", "" },
		{ "a,b", "\"a,b\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "line\nbreak", "\"line\nbreak\"" },
		{ "cr\r", "\"cr\r\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		sb_add_csv(&sb, cases[i].in);
		CU_ASSERT_STRING_EQUAL(sb.buf, cases[i].out);
		sb_release(&sb);
	}
}

static void test_strbuf_escapes(void)
{
	struct strbuf sb = STRBUF_INIT;
	sb_add_html(&sb, "<a href=\"x\">&'</a>");
	CU_ASSERT_STRING_EQUAL(sb.buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
	sb_reset(&sb);
	sb_add_json(&sb, "q\"\\\n\x01");
	CU_ASSERT_STRING_EQUAL(sb.buf, "\"q\\\"\\\\\\n\\u0001\"");
	sb_release(&sb);
}

static void test_strbuf_int(void)
{
	const long long cases[] = { 0, 7, -7, 10, 1234567890123LL, LLONG_MAX, LLONG_MIN };
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[32];
		snprintf(want, sizeof(want), "%lld", cases[i]);
		sb_reset(&sb);
		sb_add_int(&sb, cases[i]);
		CU_ASSERT_STRING_EQUAL(sb.buf, want);
	}
	sb_release(&sb);
}

void register_util_tests(void)
{
	CU_pSuite s = test_suite("util");
	test_add(s, "strbuf basics", test_strbuf_basic);
	test_add(s, "strbuf CSV quoting (RFC 4180)", test_strbuf_csv);
	test_add(s, "strbuf HTML and JSON escapes", test_strbuf_escapes);
	test_add(s, "strbuf integers in decimal, both extremes", test_strbuf_int);
}
