/*
 * Shared helpers for the CUnit suites. Each tests/NAME_test.c defines
 * `void register_NAME_tests(void)`; the Makefile collects those names into
 * the runner's table (build/.../suites.inc), so adding a suite is adding a
 * file. Suites that need root call test_require_root(), which deactivates
 * them with a visible message when not root (CUnit counts them "inactive").
 */
#ifndef RIG_TEST_H
#define RIG_TEST_H

#include <CUnit/CUnit.h>

/* Add a suite; aborts the runner if CUnit cannot. A suite is in one of
 * the tiers tests/tools/check runs in order (docs/testing.md): "unit" (what
 * test_suite adds: no rig process, or a few quick ones), "e2e" (drives the
 * rig binary end to end on folders and the macOS fakes), "root" (loop
 * devices, FUSE, mounts: what test_require_root asks for). Each suite
 * runs in a process of its own, beside others: one that needs root makes
 * its loop devices, mounts and folders its own and counts only those. */
CU_pSuite test_suite(const char *name);
CU_pSuite test_suite_e2e(const char *name);
/* The tier of the suite of that name ("unit" if none was set). */
const char *test_suite_tier(const char *name);
/* Suite s asserts on wall time or rates (the synthetic disk's speeds, where
 * a run's time went): tests/tools/check runs it with nothing beside it, since
 * other suites' load on the CPUs would be measured too. why says what. */
void test_suite_alone(CU_pSuite s, const char *why);
/* Whether test_suite_alone marked the suite of that name. */
int test_suite_is_alone(const char *name);
/* While registering for rig-tests --list: no SKIPPED messages. */
void test_quiet_registration(int quiet);
void test_add(CU_pSuite s, const char *name, void (*fn)(void));
/* Deactivate suite s with a message unless running as root. Returns 1 if root. */
int test_require_root(CU_pSuite s, const char *why);

/* The rig binary under test ($RIG_BIN: the sanitized build, or under `make
 * valgrind` tests/valgrind/rig) and the source tree ($RIG_SRC). */
const char *test_rig_bin(void);
const char *test_src(void);
/* The folder of the fake macOS tools ($RIG_FAKE_MACOS_DIR, the Makefile's
 * build/tools/macos): diskutil, hdiutil, mdutil, purge, tmutil and
 * fake-macos (for `fake-macos ctl ...`), links to the program built from
 * tests/tools/fake-macos/. Put first on PATH for rig. */
const char *test_fake_macos_dir(void);

/* SQL that takes back what results store version 5 added (store/store.c,
 * migrate_v5_sql), for the tests that make older stores from new ones. */
#define V5_DOWN "ALTER TABLE file_samples DROP COLUMN disk_offset_min;" \
		" ALTER TABLE file_samples DROP COLUMN disk_offset_max; "
/* How many times longer than natively a rig process may take: 1, or 10
 * under make valgrind (RIG_VG_VALGRIND set: memcheck runs rig 10 to 50
 * times slower). A bound on how promptly rig reacts is multiplied by it:
 * the sanitized suites check the promptness, valgrind the memory on the
 * same path. */
int test_slowdown(void);
/* A fresh temporary directory (mkdtemp under $TMPDIR or /tmp); caller frees
 * the string and removes the tree with test_rmtree(). */
char *test_tmpdir(void);
int test_rmtree(const char *path);
/* Read a whole file; NULL if it cannot. Caller frees. */
char *test_read_file(const char *path, size_t *len);
int test_write_file(const char *path, const char *text);

/*
 * Run the rig binary with argv (NULL-terminated, without argv[0]), capture
 * stdout and stderr (combined) into *out (caller frees), return its exit
 * status (or -1 if it did not exit normally).
 */
int test_run_rig(const char *const *args, char **out);
/* test_run_rig in folder cwd (NULL: the test's own). */
int test_run_rig_in(const char *cwd, const char *const *args, char **out);
/*
 * Write text to DIR/plan.yaml and `rig run -q [--seed SEED] -o DIR/out` it
 * (seed may be NULL); out gets DIR/out. Returns rig's exit status (or a
 * negative errno when the plan cannot be written); rig's output goes to
 * stderr when the status is not 0.
 */
struct strbuf;
int test_run_plan(const char *dir, const char *text, const char *seed, struct strbuf *out);
/* `rig run -q -o out plan`: its exit status; what rig printed goes to
 * stderr when it is not 0. */
int test_run_plan_file(const char *plan, const char *out);
/* The argument vector of the rig binary with args (NULL-terminated, without
 * argv[0]): test_rig_bin() first. The caller frees the array, not the
 * strings. */
const char **test_rig_argv(const char *const *args);

#endif
