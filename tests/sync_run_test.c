/*
 * `rig run` of the enumeration articles' churn by copy on a `dirs` target
 * (no root needed): a tree built once in a source folder, copied to two
 * volumes, then cycles of {enumerate, churn at the source, sync}; an
 * `exec` of diff -r after every sync fails the run unless each volume's
 * tree equals the source. The store says the source work was done once per
 * phase (notes `source`, no samples), the source's state counts the
 * replacements of one volume's worth, and enumerate's counts hold. And a
 * run killed with SIGKILL in the middle of a cycle (RIG_FAULT) and resumed
 * ends with the source changed exactly as often as the plan says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "modules/source.h"
#include "modules/tree.h"
#include "provision_util.h"
#include "test.h"

/* The plan, scaled down: 2 volumes, 300 files, 3 cycles. */
static void sync_plan(struct strbuf *text, const char *tmp)
{
	sb_addf(text,
		"rig: 1\nname: sync-e2e\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		"cache: { flush: false }\n"
		"report: { formats: [csv, html] }\n"
		"steps:\n"
		"  - tree: { files: 300, dirs: 20, depth: 2, sizes: \"inverse-square(1K..64K)\","
		" at: %s/src }\n"
		"  - sync: { from: %s/src }\n"
		"  - exec: { run: [diff, -r, \"%s/src/tree\", \"{dir}/tree\"] }\n"
		"  - cycle:\n      times: 3\n      steps:\n"
		"        - pause:     { time: 10ms }\n"
		"        - enumerate: { order: fts }\n"
		"        - churn:     { fraction: 5%%, at: %s/src }\n"
		"        - sync:      { from: %s/src }\n"
		"        - exec:      { run: [diff, -r, \"%s/src/tree\", \"{dir}/tree\"] }\n",
		tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp);
}

static char *q(const char *out, const char *sql)
{
	char *v = pt_run_query(out, sql);
	return v ? v : strdup("(null)");
}

static void expect(const char *out, const char *what, const char *sql, const char *want)
{
	char *v = q(out, sql);
	if (strcmp(v, want))
		fprintf(stderr, "\n%s: got '%s', want '%s'\n", what, v, want);
	CU_ASSERT_STRING_EQUAL(v, want);
	free(v);
}

/* What a finished run of sync_plan must show, superseded attempts aside. */
static void check_run(const char *out, const char *tmp)
{
	expect(out, "cells", "SELECT count(*) || ' ' || sum(status = 'done') FROM cells",
	       "36 36"); /* (3 + 3 x 5) steps x 2 volumes */
	/* The source steps: per phase one cell worked, the other noted it. */
	expect(out, "source notes",
	       "SELECT group_concat(x, ';') FROM (SELECT c.step || ':' || "
	       "sum(n.value LIKE 'built in %' OR n.value LIKE 'replaced 15 files in %') || '/' || "
	       "sum(n.value LIKE 'done in %') AS x FROM notes n JOIN cells c ON c.seq = n.seq "
	       "WHERE n.key = 'source' AND n.superseded = 0 GROUP BY c.step ORDER BY c.step)",
	       "1:1/1;4.cycle1.3:1/1;4.cycle2.3:1/1;4.cycle3.3:1/1");
	expect(out, "no samples from the source steps",
	       "SELECT count(*) FROM samples s JOIN cells c ON c.seq = s.seq "
	       "WHERE c.module IN ('tree', 'churn') AND s.superseded = 0", "0");
	/* sync copied everything once, then each cycle's 15 replacements. */
	expect(out, "sync files",
	       "SELECT group_concat(x, ';') FROM (SELECT c.step || '=' || group_concat(s.value) AS x "
	       "FROM samples s JOIN cells c ON c.seq = s.seq WHERE c.module = 'sync' AND "
	       "s.metric = 'files' AND s.superseded = 0 GROUP BY c.step ORDER BY c.step)",
	       "2=300.0,300.0;4.cycle1.4=15.0,15.0;4.cycle2.4=15.0,15.0;4.cycle3.4=15.0,15.0");
	expect(out, "sync deleted", "SELECT sum(value) FROM samples s WHERE metric = 'deleted' "
				    "AND superseded = 0", "0.0");
	/* enumerate found the tree as the source describes it, on each volume. */
	expect(out, "enumerate entries",
	       "SELECT count(*) || ' ' || min(value) || ' ' || max(value) FROM samples s JOIN cells c "
	       "ON c.seq = s.seq WHERE c.module = 'enumerate' AND s.metric = 'entries' AND "
	       "s.superseded = 0", "6 321.0 321.0");
	/* The source: replaced 3 x 15 times, not once per volume. */
	struct strbuf src = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&src, "%s/src", tmp);
	struct tree_state *t = NULL;
	char *instance = NULL;
	CU_ASSERT_EQUAL(mod_source_load(src.buf, &t, &instance, &err), 0);
	CU_ASSERT_TRUE(t && t->replaced == 45);
	/* Last changed by cycle 3's churn, phase 16 (3 phases, then 5 per cycle), as
	 * the run names it: its id (the folder's name), plan, seed 11, phase. */
	static const char tail[] = "/11/phase16";
	size_t n = instance ? strlen(instance) : 0;
	CU_ASSERT_TRUE(n > sizeof(tail) && !strncmp(instance, "out/", 4) &&
		       !strcmp(instance + n - (sizeof(tail) - 1), tail));
	mod_tree_state_free(t);
	free(instance);
	/* The report's sections of the source steps say what they did (their
	 * notes), not only that they recorded no metrics. */
	sb_reset(&src);
	sb_addf(&src, "%s/report.html", out);
	char *html = test_read_file(src.buf, NULL);
	CU_ASSERT(html && strstr(html, "This step recorded no metrics on the volumes "
						     "measured; what it did, from its notes:"));
	CU_ASSERT(html && strstr(html, "replaced 15 files in "));
	CU_ASSERT(html && strstr(html, ": 300 files, "));
	size_t shown = 0; /* the tree's section and the churn's */
	for (const char *p = html; p && (p = strstr(p, "what it did, from its notes")); p++)
		shown++;
	CU_ASSERT_TRUE(shown >= 2);
	free(html);
	sb_release(&src);
	sb_release(&err);
}

static void test_rig_run(void)
{
	char *tmp = test_tmpdir();
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT;
	sync_plan(&text, tmp);
	CU_ASSERT_EQUAL(test_run_plan(tmp, text.buf, "11", &out), 0);
	check_run(out.buf, tmp);
	sb_release(&out);
	sb_release(&text);
	test_rmtree(tmp);
	free(tmp);
}

/*
 * Killed with SIGKILL before the Nth write of the modules: 300 writes
 * build the source, 600 copy it to the two volumes, then each cycle has 15
 * (churn at the source) and 15 + 15 (the syncs). Write 950 is inside cycle
 * 2's churn of the source; write 968 inside cycle 2's sync of the first
 * volume, after the churn of the source was done for the phase (the second
 * volume's cell noted it). Resumed, the run must end as one that was never
 * stopped: the source changed 45 times, not more.
 */
static void test_killed_and_resumed(void)
{
	static const char *const kills[] = { "signal:SIGKILL:io:write:950",
					     "signal:SIGKILL:io:write:968" };
	for (size_t i = 0; i < sizeof(kills) / sizeof(kills[0]); i++) {
		char *tmp = test_tmpdir();
		struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, text = STRBUF_INIT;
		sync_plan(&text, tmp);
		sb_addf(&plan, "%s/plan.yaml", tmp);
		sb_addf(&out, "%s/out", tmp);
		CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
		const char *run[] = { "run", "-q", "--seed", "11", "-o", out.buf, plan.buf, NULL };
		const char *res[] = { "resume", "-q", out.buf, NULL };
		char *o = NULL;
		setenv("RIG_FAULT", kills[i], 1);
		int rc = test_run_rig(run, &o);
		unsetenv("RIG_FAULT");
		free(o);
		CU_ASSERT_EQUAL(rc, -1); /* killed */
		/* Killed where the plan says: some cells done, the source changed. */
		char *v = q(out.buf, "SELECT count(*) > 8 AND sum(status = 'done') < 36 FROM cells");
		CU_ASSERT_STRING_EQUAL(v, "1");
		free(v);
		o = NULL;
		rc = test_run_rig(res, &o);
		if (rc != 0)
			fprintf(stderr, "\n%s: rig resume exited %d: %s\n", kills[i], rc, o ? o : "");
		CU_ASSERT_EQUAL(rc, 0);
		free(o);
		check_run(out.buf, tmp);
		sb_release(&plan);
		sb_release(&out);
		sb_release(&text);
		test_rmtree(tmp);
		free(tmp);
	}
}

void register_sync_run_tests(void)
{
	CU_pSuite s = test_suite_e2e("sync: rig run, churn by copy");
	test_add(s, "rig run: tree at a folder, sync, cycle {enumerate, churn at, sync} on dirs",
		 test_rig_run);
	test_add(s, "rig run killed in a cycle and resumed: the source changed once per phase",
		 test_killed_and_resumed);
}
