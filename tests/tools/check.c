/*
 * check: what `make check` and `make test` run after the build. It starts
 * the test suites (each in a runner process of its own) and the stages
 * (lint, valgrind, deb-test, ...: make targets) several at a time, in
 * tiers, longest first within a tier, reports a failure at once with the
 * output of the test that failed, lets the rest run, and ends with the
 * slowest tests and stages and the totals over every runner process:
 *
 *   asserts: A passed, F failed
 *   tests: N passed, F failed
 *
 * Usage (the Makefile's check and test rules give the arguments):
 *   check [-j N] --dir DIR [--hints FILE] [--first NAME] [--stage TIER:NAME ...]
 *         [--suites RIG_TESTS] [--tiers T1,T2] [--only WORDS]
 *
 *   -j N            jobs at once (default twice the CPUs: most suites wait
 *                   on child processes and I/O)
 *   --dir DIR       logs/ (one per job), results/ (what each runner wrote),
 *                   times.tsv (this run's times: next run's order)
 *   --make MAKE     the make that runs stages (default make)
 *   --hints FILE    times to order by where DIR/times.tsv has none
 *   --first NAME    a make target run alone before everything (the build);
 *                   when it fails nothing else runs
 *   --stage T:NAME  a make target run as a job of tier T
 *   --suites BIN    one job per suite BIN --list names, tier as listed
 *   --tiers LIST    only jobs of these tiers
 *   --only WORDS    only the suites whose names contain one of the
 *                   comma-separated words (stages are left out)
 *
 * Tiers run in this order: (build,) lint, unit, e2e, then root and system
 * together. A job of a later tier starts only when every job of the earlier
 * ones has started.
 * A suite that measures time (rig-tests --list marks it "alone") runs after
 * every other job has ended, with nothing beside it, one at a time.
 * Longest first: by DIR/times.tsv, or where that has no time for a job (a
 * clean clone), by the --hints file (the times of a run, committed).
 * The runner processes write their results into DIR/results through
 * RIG_TEST_RESULTS_DIR (tests/main.c), the valgrind pass's and the
 * PostgreSQL tests' runners too, so the totals count every process.
 */
/* vasprintf, strsignal, strndup: the build gives _GNU_SOURCE on Linux and
 * _DARWIN_C_SOURCE on macOS (PLATFORM_DEFS). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const tier_order[] = { "build", "lint", "unit", "e2e", "root", "system" };
#define NTIERS (sizeof(tier_order) / sizeof(tier_order[0]))
/* When each tier may start: root suites and system stages together, longest
 * first, so that the longest stage (fleet-test) does not start last. */
static const int tier_rank[NTIERS] = { 0, 1, 2, 3, 4, 4 };

enum state { WAITING, RUNNING, DONE };

struct job {
	char *name;
	int tier;            /* index into tier_order */
	char **argv;
	char *log;
	double hint;         /* last run's seconds, 0 when unknown */
	enum state state;
	pid_t pid;
	double started, seconds;
	int status;          /* wait status */
	int suite;           /* a CUnit suite: its log has start/FAIL lines */
	int alone;           /* it measures time: runs with nothing beside it */
};

static struct job *jobs;
static size_t njobs;
static const char *dir;
static volatile sig_atomic_t interrupted;

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("check: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die("out of memory");
	return p;
}

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int tier_index(const char *t)
{
	for (size_t i = 0; i < NTIERS; i++)
		if (!strcmp(tier_order[i], t))
			return (int)i;
	die("unknown tier '%s'", t);
	return -1;
}

/* A file name for a job's log: its name with anything odd made '_'. */
static char *log_name(const char *name)
{
	char *s = xstrdup(name);
	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '.'))
			*p = '_';
	char *path = xasprintf("%s/logs/%s.log", dir, s);
	free(s);
	return path;
}

static struct job *add_job(const char *name, int tier, char **argv, int suite)
{
	jobs = realloc(jobs, (njobs + 1) * sizeof(*jobs));
	if (!jobs)
		die("out of memory");
	struct job *j = &jobs[njobs++];
	memset(j, 0, sizeof(*j));
	j->name = xstrdup(name);
	j->tier = tier;
	j->argv = argv;
	j->suite = suite;
	j->log = log_name(name);
	return j;
}

static char **vec(int n, ...)
{
	char **v = xmalloc((size_t)(n + 1) * sizeof(*v));
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		v[i] = xstrdup(va_arg(ap, const char *));
	va_end(ap);
	v[n] = NULL;
	return v;
}

/* Whether name contains one of the comma-separated words. */
static int matches_any(const char *name, const char *words)
{
	char *copy = xstrdup(words), *save = NULL;
	int keep = 0;
	for (char *w = strtok_r(copy, ",", &save); w && !keep; w = strtok_r(NULL, ",", &save))
		keep = strstr(name, w) != NULL;
	free(copy);
	return keep;
}

/* One job per suite the runner lists: "TIER\tNAME" lines, or
 * "TIER\tNAME\talone" for a suite that measures time (tests/test.h). */
static void add_suites(const char *bin, const char *only)
{
	char *cmd[] = { (char *)bin, "--list", NULL };
	int fds[2];
	if (pipe(fds) < 0)
		die("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(bin, cmd);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		const char *name = tab + 1;
		char *flag = strchr(name, '\t');
		if (flag)
			*flag++ = '\0';
		if (only && *only && !matches_any(name, only))
			continue;
		struct job *j = add_job(name, tier_index(line), vec(4, bin, "-v", "--suite", name), 1);
		j->alone = flag && !strcmp(flag, "alone");
	}
	free(line);
	fclose(f);
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("%s --list failed", bin);
}

/* Times (NAME\tSECONDS lines) that order this run: the last run's
 * (DIR/times.tsv) over the committed hints. */
static const char *hints;

static void read_times(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		char *tab = strrchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		for (size_t i = 0; i < njobs; i++)
			if (!strcmp(jobs[i].name, line))
				jobs[i].hint = atof(tab + 1);
	}
	free(line);
	fclose(f);
}

static void read_hints(void)
{
	if (hints)
		read_times(hints);
	char *path = xasprintf("%s/times.tsv", dir);
	read_times(path);
	free(path);
}

static void write_times(void)
{
	char *path = xasprintf("%s/times.tsv", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	for (size_t i = 0; i < njobs; i++)
		if (jobs[i].state == DONE)
			fprintf(f, "%s\t%.1f\n", jobs[i].name, jobs[i].seconds);
	fclose(f);
	free(path);
}

static int by_order(const void *a, const void *b)
{
	const struct job *x = a, *y = b;
	if (tier_rank[x->tier] != tier_rank[y->tier])
		return tier_rank[x->tier] - tier_rank[y->tier];
	if (x->hint != y->hint)
		return x->hint < y->hint ? 1 : -1;
	return 0;
}

static void start(struct job *j, const char *results)
{
	int fd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("%s: %s", j->log, strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Its own process group, so an interrupt ends the whole job. */
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("RIG_TEST_RESULTS_DIR", results, 1);
		/* A make run by this job is its own: no jobserver of the make above. */
		unsetenv("MAKEFLAGS");
		unsetenv("MFLAGS");
		unsetenv("MAKELEVEL");
		execvp(j->argv[0], j->argv);
		fprintf(stderr, "check: cannot run %s: %s\n", j->argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(fd);
	j->pid = pid;
	j->state = RUNNING;
	j->started = now();
}

static int failed(const struct job *j)
{
	return !WIFEXITED(j->status) || WEXITSTATUS(j->status) != 0;
}

/* At most the last `max` lines of text [b, e). */
static void print_tail(const char *b, const char *e, int max)
{
	const char *p = e;
	int lines = 0;
	while (p > b && lines <= max)
		if (*--p == '\n' && p + 1 < e)
			lines++;
	if (lines > max) {
		p++;
		printf("    ... (the whole output: see the log)\n");
	}
	fwrite(p, 1, (size_t)(e - p), stdout);
	if (e > b && e[-1] != '\n')
		putchar('\n');
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0;
	char *buf = xmalloc(cap);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap && !(buf = realloc(buf, cap *= 2)))
			die("out of memory");
	}
	fclose(f);
	*len = n;
	return buf;
}

/* A runner's line for a failed test: "  %7.2fs FAIL name" (tests/main.c). */
static int is_fail_line(const char *p, const char *next)
{
	return next - p > 15 && !memcmp(p + 9, "s FAIL ", 7);
}

/* A failed job's output: for a suite, each failed test from its start line
 * to its assertions; otherwise the end of the log. */
static void report_failure(const struct job *j)
{
	size_t len = 0;
	char *text = slurp(j->log, &len);
	printf("---- %s: %s; output (%s):\n", j->name,
	       WIFSIGNALED(j->status) ? strsignal(WTERMSIG(j->status)) : "failed", j->log);
	if (!text) {
		printf("    (no log)\n");
		return;
	}
	const char *end = text + len;
	int shown = 0;
	if (j->suite) {
		const char *test_start = text;
		for (const char *p = text; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *next = nl ? nl + 1 : end;
			if (!strncmp(p, "  start ", 8))
				test_start = p;
			else if (is_fail_line(p, next)) {
				/* The assertion lines follow, indented by 11. */
				const char *q = next;
				while (q < end && !strncmp(q, "           ", 11)) {
					const char *qn = memchr(q, '\n', (size_t)(end - q));
					q = qn ? qn + 1 : end;
				}
				print_tail(test_start, q, 120);
				shown = 1;
				next = q;
				test_start = q;
			}
			p = next;
		}
	}
	if (!shown)
		print_tail(text, end, 80);
	printf("---- end of %s\n", j->name);
	free(text);
}

/* A failed suite's failed tests and their assertions, a few lines each,
 * repeated at the very end of the output: a CI record that keeps only the
 * output's tail still names the assertion that failed. */
static void recap_failure(const struct job *j)
{
	size_t len = 0;
	char *text = j->suite ? slurp(j->log, &len) : NULL;
	if (!text)
		return;
	const char *end = text + len;
	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		if (is_fail_line(p, next)) {
			fwrite(p, 1, (size_t)(next - p), stdout);
			int shown = 0;
			while (next < end && !strncmp(next, "           ", 11)) {
				const char *qn = memchr(next, '\n', (size_t)(end - next));
				const char *q = qn ? qn + 1 : end;
				if (shown++ < 8)
					fwrite(next, 1, (size_t)(q - next), stdout);
				next = q;
			}
			if (shown > 8)
				printf("           ... %d more\n", shown - 8);
		}
		p = next;
	}
	free(text);
}

/* Jobs of a tier start once every job of the tiers before it has. */
static int tier_open(int tier)
{
	for (size_t i = 0; i < njobs; i++)
		if (tier_rank[jobs[i].tier] < tier_rank[tier] && jobs[i].state == WAITING &&
		    !jobs[i].alone)
			return 0;
	return 1;
}

static int running_in(int lo, int hi)
{
	int n = 0;
	for (size_t i = 0; i < njobs; i++)
		n += jobs[i].state == RUNNING && jobs[i].tier >= lo && jobs[i].tier <= hi;
	return n;
}

/* Whether j may start: when every job of the tiers before it has. A suite
 * that measures time waits until every other job has ended, then runs with
 * nothing beside it (one at a time); while it runs, nothing else starts. */
static int may_start(const struct job *j)
{
	int running = 0, others_left = 0;
	for (size_t i = 0; i < njobs; i++) {
		running += jobs[i].state == RUNNING;
		others_left += !jobs[i].alone && jobs[i].state != DONE && &jobs[i] != j;
		if (jobs[i].state == RUNNING && jobs[i].alone)
			return 0;
	}
	if (j->alone)
		return running == 0 && others_left == 0;
	return tier_open(j->tier);
}

static void on_signal(int sig)
{
	interrupted = sig;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* One finished job's line; a failure's output follows at once. */
static void finished(struct job *j, size_t done)
{
	printf("[%3zu/%zu] %7.1fs %-4s %-6s %s%s\n", done, njobs, j->seconds,
	       failed(j) ? "FAIL" : "ok", tier_order[j->tier], j->name, j->alone ? " (alone)" : "");
	if (failed(j))
		report_failure(j);
	fflush(stdout);
}

static void still_running(void)
{
	double t = now();
	printf("          running:");
	for (size_t i = 0; i < njobs; i++)
		if (jobs[i].state == RUNNING)
			printf(" %s (%.0fs)", jobs[i].name, t - jobs[i].started);
	printf("\n");
	fflush(stdout);
}

/* Runs jobs[from..] to their end, `parallel` at a time. */
static int run_jobs(size_t from, int parallel, const char *results)
{
	size_t done = from;
	int nfail = 0;
	double last_line = now();
	while (done < njobs && !interrupted) {
		int running = running_in(0, (int)NTIERS - 1);
		for (size_t i = 0; i < njobs && running < parallel; i++)
			if (jobs[i].state == WAITING && may_start(&jobs[i])) {
				start(&jobs[i], results);
				running++;
			}
		if (!running)
			die("no job can start (a bug in check's order)");
		int st;
		/* Wake every 30 s to say what is still running. */
		alarm(30);
		pid_t pid = waitpid(-1, &st, 0);
		alarm(0);
		if (pid < 0) {
			if (errno == EINTR) {
				if (now() - last_line >= 60) {
					still_running();
					last_line = now();
				}
				continue;
			}
			die("waitpid: %s", strerror(errno));
		}
		for (size_t i = 0; i < njobs; i++)
			if (jobs[i].state == RUNNING && jobs[i].pid == pid) {
				jobs[i].state = DONE;
				jobs[i].status = st;
				jobs[i].seconds = now() - jobs[i].started;
				nfail += failed(&jobs[i]);
				finished(&jobs[i], ++done);
				last_line = now();
			}
	}
	if (interrupted) {
		for (size_t i = 0; i < njobs; i++)
			if (jobs[i].state == RUNNING)
				kill(-jobs[i].pid, SIGTERM);
		for (size_t i = 0; i < njobs; i++)
			if (jobs[i].state == RUNNING)
				waitpid(jobs[i].pid, &jobs[i].status, 0);
		printf("check: interrupted\n");
		nfail++;
	}
	return nfail;
}

/* ---- the summary ---------------------------------------------------- */

struct timing {
	char *what;   /* "stage", "suite" or "test" */
	char *name;
	double seconds;
};

struct totals {
	unsigned long asserts_passed, asserts_failed, tests_passed, tests_failed;
};

static struct timing *timings;
static size_t ntimings;

static void add_timing(const char *what, const char *name, double secs)
{
	timings = realloc(timings, (ntimings + 1) * sizeof(*timings));
	if (!timings)
		die("out of memory");
	timings[ntimings++] = (struct timing){ xstrdup(what), xstrdup(name), secs };
}

static int by_seconds(const void *a, const void *b)
{
	const struct timing *x = a, *y = b;
	return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : 0;
}

/* One runner's results file: its tests' times, and its counts. A runner
 * that died before its counts line counts its tests and one failure. */
static void read_results(const char *path, struct totals *t)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long passed = 0, failed_tests = 0;
	int counted = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		char *field[7] = { 0 };
		int nf = 0;
		for (char *p = line, *save = NULL; nf < 7 && (p = strtok_r(nf ? NULL : p, "\t", &save));)
			field[nf++] = p;
		if (nf == 5 && !strcmp(field[0], "test")) {
			add_timing("test", xasprintf("%s / %s", field[1], field[2]), atof(field[3]));
			if (!strcmp(field[4], "pass"))
				passed++;
			else
				failed_tests++;
		} else if (nf >= 5 && !strcmp(field[0], "counts")) {
			t->asserts_passed += strtoul(field[1], NULL, 10);
			t->asserts_failed += strtoul(field[2], NULL, 10);
			t->tests_passed += strtoul(field[3], NULL, 10);
			t->tests_failed += strtoul(field[4], NULL, 10);
			counted = 1;
		}
	}
	if (!counted) {
		printf("check: %s has no counts (its runner died): its tests and one failure counted\n",
		       path);
		t->tests_passed += passed;
		t->tests_failed += failed_tests + 1;
		t->asserts_failed += 1;
	}
	free(line);
	fclose(f);
}

static void summary(const char *results, int nfail)
{
	struct totals t = { 0 };
	DIR *d = opendir(results);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *path = xasprintf("%s/%s", results, e->d_name);
		read_results(path, &t);
		free(path);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].state != DONE)
			continue;
		add_timing(jobs[i].suite ? "suite" : "stage", jobs[i].name, jobs[i].seconds);
		/* A stage that is no runner counts as one test; a suite whose
		 * runner failed without a failed test (a leak at its exit, a crash
		 * after its counts) as one failed test. */
		if (!jobs[i].suite) {
			if (failed(&jobs[i]))
				t.tests_failed++;
			else
				t.tests_passed++;
		}
	}
	qsort(timings, ntimings, sizeof(*timings), by_seconds);
	char *path = xasprintf("%s/slowest.txt", dir);
	FILE *f = fopen(path, "w");
	free(path);
	printf("\nthe 15 slowest tests, suites and stages:\n");
	for (size_t i = 0; i < ntimings && i < 15; i++) {
		printf("  %8.1fs  %-5s  %s\n", timings[i].seconds, timings[i].what, timings[i].name);
		if (f)
			fprintf(f, "%.1f\t%s\t%s\n", timings[i].seconds, timings[i].what, timings[i].name);
	}
	if (f)
		fclose(f);
	if (nfail) {
		printf("\nfailed:");
		for (size_t i = 0; i < njobs; i++)
			if (jobs[i].state == DONE && failed(&jobs[i]))
				printf(" '%s'", jobs[i].name);
		printf(" (logs in %s/logs)\n", dir);
		for (size_t i = 0; i < njobs; i++)
			if (jobs[i].state == DONE && failed(&jobs[i]))
				recap_failure(&jobs[i]);
	}
	/* A failed job that left no failed test in the counts still fails them. */
	if (nfail && !t.tests_failed)
		t.tests_failed = (unsigned long)nfail;
	printf("asserts: %lu passed, %lu failed\n", t.asserts_passed, t.asserts_failed);
	printf("tests: %lu passed, %lu failed\n", t.tests_passed, t.tests_failed);
}

static void mkdirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die("mkdir %s: %s", p, strerror(errno));
	free(p);
}

static void clear_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			char *f = xasprintf("%s/%s", path, e->d_name);
			unlink(f);
			free(f);
		}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int parallel = ncpu > 0 ? (int)(2 * ncpu) : 2;
	const char *make = "make", *first = NULL, *suites = NULL, *tiers = NULL, *only = NULL;
	const char *stages[64];
	int nstages = 0;
	/* The build and each stage are makes of their own, given the CPUs. */
	char jflag[32];
	snprintf(jflag, sizeof(jflag), "-j%ld", ncpu > 0 ? ncpu : 1);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-j") && v)
			parallel = atoi(argv[++i]);
		else if (!strncmp(a, "-j", 2) && a[2])
			parallel = atoi(a + 2);
		else if (!strcmp(a, "--dir") && v)
			dir = argv[++i];
		else if (!strcmp(a, "--make") && v)
			make = argv[++i];
		else if (!strcmp(a, "--hints") && v)
			hints = argv[++i];
		else if (!strcmp(a, "--first") && v)
			first = argv[++i];
		else if (!strcmp(a, "--stage") && v && nstages < 64)
			stages[nstages++] = argv[++i];
		else if (!strcmp(a, "--suites") && v)
			suites = argv[++i];
		else if (!strcmp(a, "--tiers") && v)
			tiers = argv[++i];
		else if (!strcmp(a, "--only") && v)
			only = argv[++i];
		else
			die("usage: check [-j N] --dir DIR [--make MAKE] [--hints FILE] [--first TARGET] "
			    "[--stage TIER:TARGET]... [--suites RIG_TESTS] [--tiers LIST] [--only WORDS]");
	}
	if (!dir)
		die("--dir is needed");
	if (parallel < 1)
		parallel = 1;
	char *logs = xasprintf("%s/logs", dir), *results = xasprintf("%s/results", dir);
	mkdirs(logs);
	mkdirs(results);
	clear_dir(logs);
	clear_dir(results);
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* SIGALRM only wakes waitpid (no SA_RESTART) to say what still runs. */
	struct sigaction wake = { 0 };
	wake.sa_handler = on_alarm;
	sigaction(SIGALRM, &wake, NULL);

	if (first) {
		add_job(first, tier_index("build"), vec(4, make, "--no-print-directory", jflag, first),
			0);
		read_hints();
		printf("check: %s\n", first);
		if (run_jobs(0, 1, results)) {
			write_times();
			summary(results, 1);
			return 1;
		}
	}
	size_t before = njobs;
	for (int i = 0; i < nstages; i++) {
		const char *colon = strchr(stages[i], ':');
		if (!colon)
			die("--stage %s: TIER:TARGET", stages[i]);
		char *tier = strndup(stages[i], (size_t)(colon - stages[i]));
		int t = tier_index(tier);
		free(tier);
		if (tiers && !matches_any(tier_order[t], tiers))
			continue;
		if (only && *only)
			continue;
		add_job(colon + 1, t, vec(4, make, "--no-print-directory", jflag, colon + 1), 0);
	}
	if (suites) {
		size_t n = njobs;
		add_suites(suites, only);
		if (tiers) {
			size_t k = n;
			for (size_t i = n; i < njobs; i++)
				if (matches_any(tier_order[jobs[i].tier], tiers))
					jobs[k++] = jobs[i];
			njobs = k;
		}
	}
	read_hints();
	qsort(jobs + before, njobs - before, sizeof(*jobs), by_order);
	printf("check: %zu jobs, %d at a time (logs in %s/logs)\n", njobs - before, parallel, dir);
	int nfail = run_jobs(before, parallel, results);
	write_times();
	summary(results, nfail);
	return nfail ? 1 : 0;
}
