/*
 * The test runner: registers every suite the Makefile found (suites.inc),
 * runs them with CUnit's basic interface, and exits with the number of
 * failures, so `make check` fails when any assertion does. CUnit's summary
 * is the last thing printed. RIG_TEST_ONLY=a,b runs only the suites whose
 * names contain one of those words (the others count as inactive).
 *
 * The rig processes the tests start take their target locks in a folder of
 * this test process (RIG_LOCK_DIR, rig/util/lock.h) unless one is given,
 * so test runs side by side, and real runs, never meet in /run/rig.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define SUITE(fn) void fn(void);
#include "suites.inc"
#undef SUITE

int main(int argc, char **argv)
{
	/* The sanitized rig processes the suites start: fontconfig's own leak
	 * suppressed from a file (tests/lsan.supp), since rig carries no hooks. */
	if (!getenv("LSAN_OPTIONS")) {
		const char *src = getenv("RIG_SRC");
		char opts[4096];
		snprintf(opts, sizeof(opts), "suppressions=%s/tests/lsan.supp:print_suppressions=0",
			 src && *src ? src : ".");
		setenv("LSAN_OPTIONS", opts, 1);
	}
	char *locks = NULL;
	if (!getenv("RIG_LOCK_DIR")) {
		locks = test_tmpdir();
		setenv("RIG_LOCK_DIR", locks, 1);
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "cannot initialize CUnit\n");
		return 1;
	}
#define SUITE(fn) fn();
#include "suites.inc"
#undef SUITE
	/* RIG_TEST_ONLY=a,b: only the suites whose names contain a or b. */
	const char *only = getenv("RIG_TEST_ONLY");
	if (only && *only) {
		for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext) {
			int keep = 0;
			char *words = strdup(only), *save = NULL;
			for (char *w = strtok_r(words, ",", &save); w && !keep; w = strtok_r(NULL, ",", &save))
				keep = strstr(s->pName, w) != NULL;
			free(words);
			CU_set_suite_active(s, keep);
		}
	}
	/* RIG_TEST_NAME=a,b: within those suites, only the tests whose names contain a or b. */
	const char *names = getenv("RIG_TEST_NAME");
	if (names && *names) {
		for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
			for (CU_pTest t = s->pTest; t; t = t->pNext) {
				int keep = 0;
				char *words = strdup(names), *save = NULL;
				for (char *w = strtok_r(words, ",", &save); w && !keep;
				     w = strtok_r(NULL, ",", &save))
					keep = strstr(t->pName, w) != NULL;
				free(words);
				CU_set_test_active(t, keep);
			}
	}
	CU_basic_set_mode(argc > 1 ? CU_BRM_VERBOSE : CU_BRM_NORMAL);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	unsigned failed_runs = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	if (locks) {
		test_rmtree(locks);
		free(locks);
	}
	return (failed || failed_runs) ? 1 : 0;
}
