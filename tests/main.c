/*
 * The test runner: registers every suite the Makefile found (suites.inc) and
 * runs the active ones in this process, printing each test's and each
 * suite's wall time as it ends and every failed assertion with its test.
 *
 *   rig-tests                 every suite (RIG_TEST_ONLY/NAME/SKIP narrow it)
 *   rig-tests -v              the same, naming every test as it starts
 *   rig-tests --list          the suites' names, one a line, with their tier
 *                             (and "alone" after a suite that measures time)
 *   rig-tests --suite NAME    that suite alone (its exact name)
 *   rig-tests --results FILE  also write what ran to FILE; with
 *                             RIG_TEST_RESULTS_DIR set, a new file there
 *                             (tests/tools/check sums them all)
 *
 * It ends with the two totals lines of tests/tools/check's summary and exits 1 when
 * any assertion or test failed. tests/tools/check (make check, make test) starts one
 * runner per suite, several at a time; run by hand, one runner runs them all.
 *
 * The rig processes the tests start take their target locks in a folder of
 * this test process (RIG_LOCK_DIR, platform/lock.h) unless one is given, so
 * test runs side by side, and real runs, never meet in /run/rig.
 */
#include <CUnit/CUnit.h>
#include <CUnit/TestRun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define SUITE(fn) void fn(void);
#include "suites.inc"
#undef SUITE

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static FILE *results;
static int verbose;
static double test_started, suite_started;
static unsigned suite_failed_tests;

/* Whether name contains one of the comma-separated words. */
static int matches_any(const char *name, const char *words)
{
	int keep = 0;
	char *copy = strdup(words), *save = NULL;
	for (char *w = strtok_r(copy, ",", &save); w && !keep; w = strtok_r(NULL, ",", &save))
		keep = strstr(name, w) != NULL;
	free(copy);
	return keep;
}

/* Names go into a tab-separated file: no tab or newline in them. */
static void put_field(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

static void on_suite_start(const CU_pSuite s)
{
	if (!s->fActive)
		return;
	suite_started = now();
	suite_failed_tests = 0;
	printf("suite %s\n", s->pName);
	fflush(stdout);
}

static void on_test_start(const CU_pTest t, const CU_pSuite s)
{
	test_started = now();
	if (verbose) {
		printf("  start %s\n", t->pName);
		fflush(stdout);
	}
}

static void on_test_complete(const CU_pTest t, const CU_pSuite s, const CU_pFailureRecord f)
{
	double secs = now() - test_started;
	unsigned nfail = 0;
	for (CU_pFailureRecord r = f; r && r->pTest == t; r = r->pNext)
		nfail++;
	printf("  %7.2fs %s %s\n", secs, nfail ? "FAIL" : "ok  ", t->pName);
	for (CU_pFailureRecord r = f; r && r->pTest == t; r = r->pNext)
		printf("           %s:%u: %s\n", r->strFileName ? r->strFileName : "?", r->uiLineNumber,
		       r->strCondition ? r->strCondition : "");
	fflush(stdout);
	if (nfail)
		suite_failed_tests++;
	if (results) {
		fputs("test\t", results);
		put_field(results, s->pName);
		fputc('\t', results);
		put_field(results, t->pName);
		fprintf(results, "\t%.3f\t%s\n", secs, nfail ? "fail" : "pass");
		fflush(results);
	}
}

static void on_suite_complete(const CU_pSuite s, const CU_pFailureRecord f)
{
	if (!s->fActive)
		return;
	double secs = now() - suite_started;
	printf("  %7.2fs suite %s%s\n", secs, s->pName, suite_failed_tests ? ": FAILED" : "");
	fflush(stdout);
	if (results) {
		fputs("suite\t", results);
		put_field(results, s->pName);
		fprintf(results, "\t%.3f\t%s\n", secs, suite_failed_tests ? "fail" : "pass");
		fflush(results);
	}
}

static void on_suite_setup_failure(const CU_pSuite s)
{
	printf("  suite %s: its setup failed\n", s->pName);
}

/* The tier tests/tools/check orders the suites by (docs/testing.md): a suite
 * that asks for root is "root"; one whose name says it drives rig end to
 * end, "e2e"; the rest "unit". Set by the suites through test.h. */
static const char *tier_of(CU_pSuite s)
{
	return test_suite_tier(s->pName);
}

int main(int argc, char **argv)
{
	const char *only_suite = NULL, *results_path = NULL;
	int list = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "--list"))
			list = 1;
		else if (!strcmp(argv[i], "--suite") && i + 1 < argc)
			only_suite = argv[++i];
		else if (!strcmp(argv[i], "--results") && i + 1 < argc)
			results_path = argv[++i];
		else {
			fprintf(stderr, "usage: %s [-v] [--list] [--suite NAME] [--results FILE]\n",
				argv[0]);
			return 2;
		}
	}
	/* The sanitized rig processes the suites start: fontconfig's own leak
	 * suppressed from a file (tests/lsan.supp), since rig carries no hooks. */
	if (!getenv("LSAN_OPTIONS")) {
		const char *src = getenv("RIG_SRC");
		char opts[4096];
		snprintf(opts, sizeof(opts), "suppressions=%s/tests/lsan.supp:print_suppressions=0",
			 src && *src ? src : ".");
		setenv("LSAN_OPTIONS", opts, 1);
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "cannot initialize CUnit\n");
		return 1;
	}
	/* --list reads the registry only: the suites' root checks stay quiet. */
	if (list)
		test_quiet_registration(1);
#define SUITE(fn) fn();
#include "suites.inc"
#undef SUITE
	if (list) {
		for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
			printf("%s\t%s%s\n", tier_of(s), s->pName,
			       test_suite_is_alone(s->pName) ? "\talone" : "");
		CU_cleanup_registry();
		return 0;
	}
	const char *only = getenv("RIG_TEST_ONLY");
	int found = 0;
	for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext) {
		if (only_suite) {
			int me = !strcmp(s->pName, only_suite);
			found |= me;
			if (!me)
				CU_set_suite_active(s, CU_FALSE);
		} else if (only && *only && !matches_any(s->pName, only))
			CU_set_suite_active(s, CU_FALSE);
	}
	if (only_suite && !found) {
		fprintf(stderr, "rig-tests: no suite named '%s' (rig-tests --list)\n", only_suite);
		CU_cleanup_registry();
		return 2;
	}
	const char *names = getenv("RIG_TEST_NAME");
	if (names && *names)
		for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
			for (CU_pTest t = s->pTest; t; t = t->pNext)
				if (!matches_any(t->pName, names))
					CU_set_test_active(t, CU_FALSE);
	/* Under tests/tools/check every runner writes into its results folder. */
	const char *results_dir = getenv("RIG_TEST_RESULTS_DIR");
	if (results_path)
		results = fopen(results_path, "w");
	else if (results_dir && *results_dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/runner-XXXXXX.tsv", results_dir);
		int fd = mkstemps(path, 4);
		results = fd < 0 ? NULL : fdopen(fd, "w");
		results_path = results_dir;
	}
	if (results_path && !results) {
		perror(results_path);
		CU_cleanup_registry();
		return 2;
	}
	char *locks = NULL;
	if (!getenv("RIG_LOCK_DIR")) {
		locks = test_tmpdir();
		setenv("RIG_LOCK_DIR", locks, 1);
	}
	CU_set_fail_on_inactive(CU_FALSE);
	CU_set_suite_start_handler(on_suite_start);
	CU_set_test_start_handler(on_test_start);
	CU_set_test_complete_handler(on_test_complete);
	CU_set_suite_complete_handler(on_suite_complete);
	CU_set_suite_init_failure_handler(on_suite_setup_failure);
	CU_set_suite_cleanup_failure_handler(on_suite_setup_failure);
	CU_run_all_tests();
	CU_pRunSummary sum = CU_get_run_summary();
	unsigned asserts_failed = sum->nAssertsFailed, tests_failed = sum->nTestsFailed;
	/* A suite whose setup or cleanup failed has a failure record but no failed test. */
	for (CU_pFailureRecord r = CU_get_failure_list(); r; r = r->pNext)
		if (r->type == CUF_SuiteInitFailed || r->type == CUF_SuiteCleanupFailed)
			tests_failed++;
	unsigned asserts_passed = sum->nAsserts - sum->nAssertsFailed;
	unsigned tests_passed = sum->nTestsRun - sum->nTestsFailed;
	if (results) {
		fprintf(results, "counts\t%u\t%u\t%u\t%u\t%u\n", asserts_passed, asserts_failed,
			tests_passed, tests_failed, sum->nTestsInactive);
		fclose(results);
	}
	printf("asserts: %u passed, %u failed\n", asserts_passed, asserts_failed);
	printf("tests: %u passed, %u failed\n", tests_passed, tests_failed);
	CU_cleanup_registry();
	if (locks) {
		test_rmtree(locks);
		free(locks);
	}
	return (asserts_failed || tests_failed) ? 1 : 0;
}
