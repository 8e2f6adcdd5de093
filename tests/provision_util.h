/*
 * Helpers shared by the suites that provision real loop devices
 * (tests/provision_test.c, tests/hdd_test.c): running commands, reading a
 * run's store, rewriting a ready plan for a test, and the leftover check
 * every such test ends with: no mount and no loop device under the test's
 * folder. What it finds it also removes (by exact name), so a failing
 * test still leaves the machine clean.
 */
#ifndef RIG_TESTS_PROVISION_UTIL_H
#define RIG_TESTS_PROVISION_UTIL_H

#include <stddef.h>

struct strbuf;

/* Run argv (no shell), its stdout into *out when not NULL (caller frees).
 * Returns the exit status, or -1. */
int pt_cmd(const char *const *argv, char **out);

/* Write text to root/path, making its folders (a planted file of a
 * scratch tree); CUnit assertions say what failed. */
void pt_plant(const char *root, const char *path, const char *text);
/* Run the shell script root/script (sh, no arguments): its exit status,
 * or -1; its output in *out (caller frees). */
int pt_script(const char *root, const char *script, char **out);

/* The first column of the first row of sql on the database db, or NULL.
 * Caller frees. */
char *pt_query(const char *db, const char *sql);
/* The same for RUN/results.db. */
char *pt_run_query(const char *run_dir, const char *sql);

/*
 * A ready plan (configs/NAME.yaml) with textual replacements: pairs of
 * (old, new), NULL-terminated. Every old text must occur, so a change of
 * the config shows up as a failing test rather than a silently different
 * one. Returns the text (caller frees) or NULL.
 */
char *pt_config(const char *name, const char *const *pairs);

/*
 * Mounts (from /proc/self/mountinfo) and loop devices (from sysfs) whose
 * paths lie under dir: describes each in what, removes it (lazy unmount,
 * partx --delete, losetup --detach of that exact device), and returns how
 * many there were. Also compares with `losetup -a`.
 */
int pt_leftovers(const char *dir, struct strbuf *what);

/* Run rig with PATH prefixed by bin_dir (NULL: unchanged). As test_run_rig. */
int pt_rig(const char *bin_dir, const char *const *args, char **out);

/* Whether the tools the Linux backend runs are installed. */
int pt_have_tools(void);

/* Deactivate suite s with a message unless rig runs as root with those
 * tools installed (why: what the suite needs root for). 1 when it may run. */
struct CU_Suite;
int pt_require_provisioning(struct CU_Suite *s, const char *why);

/* Text checks that print what differs before they assert: got equals
 * want; got contains want; got does not contain bad (a NULL got fails). */
void pt_eq_text(const char *what, const char *got, const char *want);
void pt_has(const char *what, const char *got, const char *want);
void pt_lacks(const char *what, const char *got, const char *bad);

/* The fake macOS tools (tests/tools/fake-macos/) left nothing of rig's mounted:
 * STATE/Volumes is empty. */
void pt_mac_clean(const char *state);

#endif
