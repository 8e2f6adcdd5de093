/*
 * Regression tests for what fuzzing found (the harnesses in fuzz/, `make fuzz`):
 * every input in tests/fixtures/fuzz/plan/ goes through the plan parser as
 * `rig validate` reads it (plan_parse_file, then diag_print), and every
 * input in tests/fixtures/fuzz/units/ through the unit parser it broke.
 * Each fixture has an entry in the tables below saying what the clean
 * outcome is (the error, its position, or the value and canonical text);
 * a fixture without an entry fails the test, so a new crash input cannot
 * be added without saying what rig must answer.
 *
 * The same folders are starting inputs of `make fuzz`, so the fuzzers start from
 * every input that ever broke them.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

void register_fuzz_tests(void);

/* Longer than this is a hang (the fixed parses take well under a second
 * even with sanitizers; the broken ones took minutes or forever). */
#define MAX_SECONDS 10.0

struct plan_case {
	const char *file;
	int line, col;       /* of the error below */
	const char *msg;     /* a substring of one error's message */
	size_t nerrors;      /* exact number of errors expected */
};

static const struct plan_case plan_cases[] = {
	{ "alias-self-reference.yaml", 7, 8,
	  "this list of steps contains itself (through an alias)", 1 },
	{ "alias-repeated-errors.yaml", 9, 37, "unknown module 'c$cle' (did you mean 'cycle'?)", 10 },
	/* Counted before the steps are parsed: 2^32 - 34, with each aliased
	 * list parsed once for its own messages. */
	{ "alias-doubling.yaml", 8, 3,
	  "the plan has 4294967262 steps with its aliases expanded, more than the 10000 a plan "
	  "may have (each use of an alias counts)", 1 },
	/* Both bad values, each once (the 20 steps report the same thing at
	 * the same place); the one of $c was never bound before. */
	{ "sweep-combinations.yaml", 17, 210,
	  "invalid number 'xyz' for 'threads' in step 'randread' (the value of $c)", 2 },
	/* The nameless sweep is not one of the step's bindings. */
	{ "sweep-invalid-name-literal.yaml", 14, 36,
	  "undefined variable '$zz' in parameter 'files' of step 'null'", 2 },
};

enum fuzz_units_kind { U_SIZE, U_DURATION, U_PERCENT };

struct units_case {
	const char *file;
	enum fuzz_units_kind kind;
	const char *canon;   /* the canonical text, which must parse back to the same value */
};

static const struct units_case units_cases[] = {
	/* 1.46e-17 %: printed with at most 30 decimals, as "0.000...0%",
	 * which reads back as 0. */
	{ "percent-tiny-round-trip", U_PERCENT, "0.000000000000000014620409318294633%" },
};

/* The fixture files of tests/fixtures/fuzz/KIND/, sorted. */
static char **fixtures(const char *kind, size_t *n, struct strbuf *dir)
{
	sb_addf(dir, "%s/tests/fixtures/fuzz/%s", test_src(), kind);
	char **names = NULL;
	*n = 0;
	DIR *d = opendir(dir->buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = xrealloc(names, (*n + 1) * sizeof(*names));
		names[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check_plan(const char *dir, const void *entry)
{
	const struct plan_case *pc = entry;
	struct strbuf path = STRBUF_INIT, want = STRBUF_INIT;
	sb_addf(&path, "%s/%s", dir, pc->file);
	struct diag d;
	diag_init(&d, path.buf, NULL);
	double t0 = now();
	struct plan *p = plan_parse_file(path.buf, NULL, &d);
	double secs = now() - t0;
	CU_ASSERT(secs < MAX_SECONDS);
	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_EQUAL(d.nerrors, pc->nerrors);
	int found = 0;
	for (size_t i = 0; i < d.n && !found; i++)
		found = d.items[i].level == DIAG_ERROR && d.items[i].mark.line == pc->line &&
			d.items[i].mark.col == pc->col && strstr(d.items[i].msg, pc->msg);
	if (!found) {
		printf("\n%s: expected error at %d:%d containing '%s'; got:\n", pc->file, pc->line,
		       pc->col, pc->msg);
		diag_print(&d, stdout);
	}
	CU_ASSERT(found);
	/* Printed as rig validate prints it: file:line:col, the source line. */
	FILE *out = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	diag_print(&d, out);
	long size = ftell(out);
	rewind(out);
	char *text = xcalloc(1, (size_t)size + 1);
	CU_ASSERT_EQUAL(fread(text, 1, (size_t)size, out), (size_t)size);
	fclose(out);
	sb_addf(&want, "%s:%d:%d: error: ", path.buf, pc->line, pc->col);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, want.buf));
	free(text);
	diag_release(&d);
	plan_free(p);
	sb_release(&path);
	sb_release(&want);
}

/*
 * For each file of tests/fixtures/fuzz/KIND/, its entry in table (n
 * entries of `size` bytes, each starting with the file name) is given to
 * check with the folder. A file without an entry, or an entry without its
 * file, fails.
 */
static void each_fixture(const char *kind, const void *table, size_t n, size_t size,
			 void (*check)(const char *dir, const void *entry))
{
	struct strbuf dir = STRBUF_INIT;
	size_t nfiles;
	char **names = fixtures(kind, &nfiles, &dir);
	for (size_t i = 0; i < nfiles; i++) {
		const void *entry = NULL;
		for (size_t j = 0; j < n && !entry; j++) {
			const void *e = (const char *)table + j * size;
			if (!strcmp(*(const char *const *)e, names[i]))
				entry = e;
		}
		if (!entry)
			printf("\nno expectation in tests/fuzz_test.c for fixture %s/%s\n", kind,
			       names[i]);
		CU_ASSERT_PTR_NOT_NULL(entry);
		if (entry)
			check(dir.buf, entry);
	}
	CU_ASSERT_EQUAL(nfiles, n);
	free_names(names, nfiles);
	sb_release(&dir);
}

static void test_plan_fixtures(void)
{
	each_fixture("plan", plan_cases, N(plan_cases), sizeof(plan_cases[0]), check_plan);
}

/* The whole-number units, by kind. */
static const struct {
	int (*parse)(const char *, uint64_t *, const char **);
	void (*format)(struct strbuf *, uint64_t);
} u64_units[] = {
	[U_SIZE] = { units_parse_size, units_format_size },
	[U_DURATION] = { units_parse_duration, units_format_duration },
};

/* Parse text as kind; its canonical text; and that text parsed back. */
static void check_units(const char *text, const struct units_case *uc)
{
	const char *why = NULL;
	struct strbuf sb = STRBUF_INIT;
	if (uc->kind == U_PERCENT) {
		double v = 0, back = -1;
		CU_ASSERT_EQUAL_FATAL(units_parse_percent(text, &v, &why), 0);
		units_format_percent(&sb, v);
		CU_ASSERT_EQUAL(units_parse_percent(sb.buf, &back, &why), 0);
		CU_ASSERT(back == v);
	} else {
		uint64_t v = 0, back = 0;
		CU_ASSERT_EQUAL_FATAL(u64_units[uc->kind].parse(text, &v, &why), 0);
		u64_units[uc->kind].format(&sb, v);
		CU_ASSERT_EQUAL(u64_units[uc->kind].parse(sb.buf, &back, &why), 0);
		CU_ASSERT_EQUAL(back, v);
	}
	CU_ASSERT_STRING_EQUAL(sb.buf, uc->canon);
	sb_release(&sb);
}

static void check_units_entry(const char *dir, const void *entry)
{
	const struct units_case *uc = entry;
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s", dir, uc->file);
	char *text = test_read_file(path.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	check_units(text, uc);
	free(text);
	sb_release(&path);
}

static void test_units_fixtures(void)
{
	each_fixture("units", units_cases, N(units_cases), sizeof(units_cases[0]),
		     check_units_entry);
}

void register_fuzz_tests(void)
{
	CU_pSuite s = test_suite("fuzzing regressions (tests/fixtures/fuzz)");
	test_add(s, "plan inputs: a clean error at the right place, in time", test_plan_fixtures);
	test_add(s, "unit inputs: value and canonical text round-trip", test_units_fixtures);
}
