/*
 * The test runner: registers every suite the Makefile found (suites.inc),
 * runs them with CUnit's basic interface, and exits with the number of
 * failures, so `make check` fails when any assertion does. CUnit's summary
 * is the last thing printed.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define SUITE(fn) void fn(void);
#include "suites.inc"
#undef SUITE

/*
 * $RIG_TEST_SUITES, when set, names the suites to register (by the NAME of
 * register_NAME_tests, separated by spaces or commas: "run exec"); the
 * others are left out. `make valgrind` runs the end-to-end suites this way.
 */
/* The next name of a list separated by spaces or commas, from p; its
 * length in *n. NULL at the end. */
static const char *next_name(const char *p, size_t *n)
{
	p += strspn(p, " ,");
	*n = strcspn(p, " ,");
	return *p ? p : NULL;
}

/* fn is "register_NAME_tests": whether NAME (len bytes at name) is it. */
static int is_suite(const char *fn, const char *name, size_t len)
{
	const char *s = fn + strlen("register_");
	return strlen(s) - strlen("_tests") == len && !strncmp(s, name, len);
}

static int suite_wanted(const char *fn)
{
	const char *list = getenv("RIG_TEST_SUITES");
	size_t n;
	if (!list || !next_name(list, &n))
		return 1;
	for (const char *p = next_name(list, &n); p; p = next_name(p + n, &n))
		if (is_suite(fn, p, n))
			return 1;
	return 0;
}

/* Every name in $RIG_TEST_SUITES is a suite: a misspelt one is an error,
 * not a silently smaller run. */
static int suites_known(void)
{
	static const char *const all[] = {
#define SUITE(fn) #fn,
#include "suites.inc"
#undef SUITE
	};
	const char *list = getenv("RIG_TEST_SUITES");
	int ok = 1;
	size_t n;
	for (const char *p = list ? next_name(list, &n) : NULL; p; p = next_name(p + n, &n)) {
		int found = 0;
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]) && !found; i++)
			found = is_suite(all[i], p, n);
		if (!found) {
			fprintf(stderr, "RIG_TEST_SUITES: no suite '%.*s'\n", (int)n, p);
			ok = 0;
		}
	}
	return ok;
}

int main(int argc, char **argv)
{
	if (!suites_known())
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "cannot initialize CUnit\n");
		return 1;
	}
#define SUITE(fn) if (suite_wanted(#fn)) fn();
#include "suites.inc"
#undef SUITE
	CU_basic_set_mode(argc > 1 ? CU_BRM_VERBOSE : CU_BRM_NORMAL);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	unsigned failed_runs = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return (failed || failed_runs) ? 1 : 0;
}
