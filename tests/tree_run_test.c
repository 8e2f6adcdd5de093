/*
 * `rig run` of tree, enumerate and churn on `dirs` targets, end to end
 * (modules/tree.c, tree_age.c through the runner; the modules' own
 * tests are tree_test.c): the seed's cycle {enumerate, churn} in miniature,
 * its samples in results.csv and the runner's flush in enumerate's notes;
 * and enumerate's `order` and `cache` as the store and report.html record
 * them when the plan's cache.flush is off; and the runner's cache drops
 * counted over a plan of every kind of step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "provision_util.h"
#include "test.h"

static const char results_header[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,cycle,"
	"sweep_var,sweep_value,seq,start_utc,metric,value,unit,cache";

/* Field k (0-based) of a CSV line without quoted commas, into out. */
static void field(const char *line, int k, char *out, size_t size)
{
	for (int i = 0; i < k && line; i++) {
		line = strchr(line, ',');
		if (line)
			line++;
	}
	size_t n = 0;
	while (line && line[n] && line[n] != ',' && line[n] != '\n' && n + 1 < size)
		n++;
	if (line)
		memcpy(out, line, n);
	out[n] = 0;
}

/* The notes of the first cell of step `step`, key `key`, in run folder out. */
static char *cell_note(const char *out, const char *step, const char *key)
{
	struct strbuf sql = STRBUF_INIT;
	sb_addf(&sql, "SELECT value FROM notes WHERE key = '%s' AND seq = (SELECT min(seq) FROM "
		      "cells WHERE step = '%s')", key, step);
	char *v = pt_run_query(out, sql.buf);
	sb_release(&sql);
	return v;
}

static void test_rig_run(void)
{
	char *tmp = test_tmpdir();
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&text,
		"rig: 1\nname: tree-e2e\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		"steps:\n"
		"  - tree: { files: 1500, dirs: 30, depth: 2, sizes: \"inverse-square(1K..64K)\" }\n"
		"  - cycle:\n      times: 2\n      steps:\n"
		"        - enumerate: { order: fts }\n"
		"        - churn: { fraction: 10%% }\n",
		tmp, tmp);
	CU_ASSERT_EQUAL(test_run_plan(tmp, text.buf, "11", &out), 0);

	sb_addf(&p, "%s/results.csv", out.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_EQUAL(strncmp(csv, results_header, strlen(results_header)), 0);
	/* tree: 5 metrics x 2 volumes; 2 cycles x (enumerate 3 + churn 3) x 2 volumes. */
	static const struct {
		const char *module, *metric, *unit;
		double value; /* < 0: any positive value */
	} want[] = {
		{ "tree", "files_per_s", "files/s", -1 },
		{ "tree", "rate", "MB/s", -1 },
		{ "tree", "seconds", "s", -1 },
		{ "tree", "files", "files", 1500 },
		{ "tree", "bytes", "B", -1 },
		{ "enumerate", "seconds", "s", -1 },
		{ "enumerate", "entries_per_s", "entries/s", -1 },
		{ "enumerate", "entries", "entries", 1500 + 30 + 1 },
		{ "churn", "seconds", "s", -1 },
		{ "churn", "files_per_s", "files/s", -1 },
		{ "churn", "files", "files", 150 },
	};
	enum { NW = sizeof(want) / sizeof(want[0]) };
	int seen[NW] = { 0 }, rows = 0, unknown = 0;
	char tree_bytes[2][64] = { "", "" };
	char mod[32], met[32], unit[32], val[64], vol[8], cyc[8];
	const char *line = strchr(csv, '\n');
	while (line && line[1]) {
		line++;
		rows++;
		field(line, 4, mod, sizeof(mod));
		field(line, 5, vol, sizeof(vol));
		field(line, 10, cyc, sizeof(cyc));
		field(line, 15, met, sizeof(met));
		field(line, 16, val, sizeof(val));
		field(line, 17, unit, sizeof(unit));
		int k;
		for (k = 0; k < NW; k++)
			if (!strcmp(mod, want[k].module) && !strcmp(met, want[k].metric))
				break;
		if (k == NW) {
			unknown++;
		} else {
			seen[k]++;
			CU_ASSERT_STRING_EQUAL(unit, want[k].unit);
			double v = strtod(val, NULL);
			if (want[k].value >= 0) {
				CU_ASSERT_EQUAL(v, want[k].value);
			} else {
				CU_ASSERT(v > 0);
			}
			CU_ASSERT_EQUAL(cyc[0] != 0, strcmp(mod, "tree") != 0);
		}
		if (!strcmp(mod, "tree") && !strcmp(met, "bytes"))
			snprintf(tree_bytes[vol[0] == 'b'], sizeof(tree_bytes[0]), "%s", val);
		line = strchr(line, '\n');
	}
	CU_ASSERT_EQUAL(rows, 2 * 5 + 2 * 2 * (3 + 3));
	CU_ASSERT_EQUAL(unknown, 0);
	for (int k = 0; k < NW; k++)
		CU_ASSERT_EQUAL(seen[k], !strcmp(want[k].module, "tree") ? 2 : 4);
	/* Both volumes got the same tree. */
	CU_ASSERT(tree_bytes[0][0] && !strcmp(tree_bytes[0], tree_bytes[1]));
	/* Each enumeration walked in fts order from what the runner's flush left. */
	char *v = cell_note(out.buf, "2.cycle2.1", "order");
	pt_has("the cycle's order", v, "fts: ");
	free(v);
	v = cell_note(out.buf, "2.cycle2.1", "cache");
	pt_eq_text("the cycle's cache", v,
		   geteuid() == 0 ? "cold: drop_caches before the cell"
				  : "not cold: drop_caches was asked but not applied (not root), so "
				    "the walk may be served from memory");
	free(v);
	free(csv);
	sb_release(&out);
	sb_release(&text);
	sb_release(&p);
	test_rmtree(tmp);
	free(tmp);
}

/* Cache flushes only where the plan's cache policy asks for them
 * (docs/plan-language.md, `cache`: before every read-type step): counted
 * from the run's time accounting (a cell with flush time had a drop
 * before it) and the samples' cache column, on a plan with a step of every
 * kind the enumeration and fill plans have, two volumes in alternate
 * order. As root: one drop before each of the 6 read-type cells (enumerate
 * cold and warm, seqread), none before tree, pause, churn or seqwrite, and
 * enumerate does not drop a second time after the runner's. Not root:
 * none at all (the drop needs root). */
static void test_rig_run_flushes(void)
{
	char *tmp = test_tmpdir();
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT;
	sb_addf(&text,
		"rig: 1\nname: flushes\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		"order: alternate\n"
		"steps:\n"
		"  - tree: { files: 200, dirs: 10, depth: 1, sizes: 4K, threads: 3 }\n"
		"  - pause: { time: 0s }\n"
		"  - enumerate: { order: fts }\n"
		"  - churn: { fraction: 10%% }\n"
		"  - enumerate: { cache: keep }\n"
		"  - seqwrite: { block: 1M, qd: 2, span: 4M }\n"
		"  - seqread: { block: 1M, qd: 2, span: 4M }\n",
		tmp, tmp);
	CU_ASSERT_EQUAL_FATAL(test_run_plan(tmp, text.buf, "5", &out), 0);
	int root = geteuid() == 0;
	char *v = pt_run_query(out.buf, "SELECT count(*) FROM cells");
	pt_eq_text("cells", v, "14");
	free(v);
	v = pt_run_query(out.buf, "SELECT count(*) FROM time_spent WHERE category = 'flush' "
				  "AND seconds > 0");
	pt_eq_text("cells with a flush", v, root ? "6" : "0");
	free(v);
	v = pt_run_query(out.buf, "SELECT group_concat(step || ' ' || module, ', ') FROM (SELECT "
				  "c.step, c.module FROM cells c JOIN time_spent t ON t.seq = c.seq "
				  "WHERE t.category = 'flush' AND t.seconds > 0 ORDER BY c.seq)");
	pt_eq_text("the cells flushed before", v,
		   root ? "3 enumerate, 3 enumerate, 5 enumerate, 5 enumerate, 7 seqread, 7 seqread"
			: "");
	free(v);
	v = pt_run_query(out.buf, "SELECT group_concat(module, ', ') FROM (SELECT DISTINCT "
				  "c.module FROM cells c JOIN samples s ON s.seq = c.seq WHERE s.cache "
				  "LIKE '%drop_caches%' ORDER BY c.module)");
	pt_eq_text("modules whose samples say drop_caches", v, root ? "enumerate, seqread" : "");
	free(v);
	v = pt_run_query(out.buf, "SELECT group_concat(DISTINCT value) FROM notes WHERE key = "
				  "'cache' AND seq IN (SELECT seq FROM cells WHERE step = '3')");
	pt_eq_text("enumerate's own cache note", v,
		   root ? "cold: drop_caches before the cell"
			: "not cold: drop_caches was asked but not applied (not root), so the walk "
			  "may be served from memory");
	free(v);
	sb_release(&out);
	sb_release(&text);
	test_rmtree(tmp);
	free(tmp);
}

/* What `cache` did is in the store and the report, in each order: with
 * cache.flush off, drop drops the caches itself (as root) and keep walks
 * first. */
static void test_rig_run_cache(void)
{
	char *tmp = test_tmpdir();
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&text,
		"rig: 1\nname: tree-cache\ntarget:\n  dirs: [\"%s/a\"]\n"
		"cache: { flush: false }\n"
		"steps:\n"
		"  - tree: { files: 300, dirs: 10, depth: 1, sizes: 4K }\n"
		"  - enumerate: { order: fts }\n"
		"  - enumerate: { cache: keep }\n",
		tmp);
	CU_ASSERT_EQUAL(test_run_plan(tmp, text.buf, "11", &out), 0);

	char *v = cell_note(out.buf, "2", "order");
	pt_has("step 2's order", v, "fts: fts(3) with FTS_PHYSICAL | FTS_NOCHDIR");
	free(v);
	v = cell_note(out.buf, "3", "order");
	pt_has("step 3's order", v, "inode: ");
	free(v);
	v = cell_note(out.buf, "2", "cache");
	if (geteuid() == 0)
		pt_eq_text("step 2's cache", v, "cold: drop_caches by the step, just before the walk");
	else
		pt_has("step 2's cache", v, "not cold: drop_caches was asked but not applied (not root)");
	free(v);
	v = cell_note(out.buf, "3", "cache");
	pt_eq_text("step 3's cache", v,
		   "warm: an untimed walk in the same order just before the timed one");
	free(v);
	/* The samples' cache column says what the runner did: nothing. */
	v = pt_run_query(out.buf, "SELECT group_concat(DISTINCT s.cache) FROM samples s JOIN cells c "
				  "ON c.seq = s.seq WHERE c.step IN ('2', '3')");
	pt_eq_text("cache column", v, "none");
	free(v);
	/* The report shows both states. */
	sb_addf(&p, "%s/report.html", out.buf);
	char *html = test_read_file(p.buf, NULL);
	pt_has("report.html", html, "warm: an untimed walk in the same order");
	pt_has("report.html", html, geteuid() == 0 ? "cold: drop_caches by the step" : "not cold: ");
	free(html);
	sb_release(&out);
	sb_release(&text);
	sb_release(&p);
	test_rmtree(tmp);
	free(tmp);
}

void register_tree_run_tests(void)
{
	CU_pSuite s = test_suite_e2e("tree, enumerate, churn: rig run");
	test_add(s, "rig run: tree, cycle {enumerate, churn} on dirs", test_rig_run);
	test_add(s, "rig run: a cache drop before each read-type cell and nowhere else",
		 test_rig_run_flushes);
	test_add(s, "rig run: enumerate's order and cache in the store and the report",
		 test_rig_run_cache);
}
