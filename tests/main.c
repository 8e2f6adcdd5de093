/*
 * The test runner: registers every suite the Makefile found (suites.inc),
 * runs them with CUnit's basic interface, and exits with the number of
 * failures, so `make check` fails when any assertion does. CUnit's summary
 * is the last thing printed. RIG_TEST_ONLY=TEXT runs only the suites whose
 * name contains TEXT (the others count as inactive).
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
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "cannot initialize CUnit\n");
		return 1;
	}
#define SUITE(fn) fn();
#include "suites.inc"
#undef SUITE
	/* RIG_TEST_ONLY=TEXT: only the suites whose name contains TEXT. */
	const char *only = getenv("RIG_TEST_ONLY");
	for (CU_pSuite s = CU_get_registry()->pSuite; only && *only && s; s = s->pNext)
		if (!strstr(s->pName, only))
			CU_set_suite_active(s, CU_FALSE);
	CU_basic_set_mode(argc > 1 ? CU_BRM_VERBOSE : CU_BRM_NORMAL);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	unsigned failed_runs = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return (failed || failed_runs) ? 1 : 0;
}
