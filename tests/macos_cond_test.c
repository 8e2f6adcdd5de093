/*
 * Volume conditions and the snapshot step on the macOS backend, end to end
 * with the fakes of tests/tools/fake-macos/ (mdutil, tmutil and the diskutil
 * verbs apfs defragment / listSnapshots / deleteSnapshot are synthesized
 * there: no real capture of them was found). Asserts the exact commands
 * in order, the facts recorded, and what is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "macos_fx.h"
#include "provision_util.h"
#include "test.h"

static char *plan_text(struct fx *x, const char *apfs_extra, int cycles)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "rig: 1\nname: cond\nseed: 1\ntarget:\n  image: { path: %s/rig-test, "
		     "size: 2G }\nlayouts:\n  - name: hfs-first\n    partitions:\n"
		     "      - { name: HFS, fs: hfs+, size: 50%%, indexing: off }\n"
		     "      - { name: APFS, fs: apfs, size: rest, indexing: off, defrag: off%s }\n"
		     "cache: { flush: false }\n"
		     "steps:\n  - tree: { files: 20, dirs: 2 }\n  - cycle:\n      times: %d\n"
		     "      steps:\n        - churn: { fraction: 10%% }\n"
		     "        - snapshot: { keep: 3 }\n", x->dir, apfs_extra, cycles);
	return sb_detach(&sb);
}

static int run(struct fx *x, const char *text, char **out)
{
	CU_ASSERT_EQUAL_FATAL(test_write_file(x->plan, text), 0);
	const char *args[] = { "run", "--platform", "macos", "--yes", "-q", "-o", x->run, x->plan, NULL };
	return pt_rig(x->bin, args, out);
}

/* The lines of calls.log that are conditions or snapshots, with the
 * tmutil dates and snapshot names made D. */
static char *cond_calls(struct fx *x)
{
	char *log = fx_file(x, "calls.log");
	struct strbuf sb = STRBUF_INIT;
	for (char *l = log; l && *l;) {
		char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		struct strbuf line = STRBUF_INIT;
		sb_add(&line, l, n);
		if (strstr(line.buf, "mdutil") || strstr(line.buf, "defragment") ||
		    strstr(line.buf, "tmutil") || strstr(line.buf, "Snapshot")) {
			char *d = strstr(line.buf, "TimeMachine.");
			if (d)
				d[12] = '\0';
			sb_addf(&sb, "%s\n", line.buf);
		}
		sb_release(&line);
		l = nl ? nl + 1 : NULL;
	}
	free(log);
	return sb_detach(&sb);
}

static void test_conditions_and_snapshots(void)
{
	struct fx x;
	fx_init(&x, 1);
	char *text = plan_text(&x, ", snapshots: keep 2", 4), *out = NULL;
	int rc = run(&x, text, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *calls = cond_calls(&x);
	struct strbuf want = STRBUF_INIT;
	const char *h = "/Volumes/HFS", *a = "/Volumes/APFS";
	sb_addf(&want, "mdutil -i off %s%s\nmdutil -i off %s%s\n"
		       "diskutil apfs defragment %s%s disable\n", x.state, h, x.state, a, x.state, a);
	/* four cycles, the partition keeps 2 (over the step's 3): deletes from the
	 * third, each listed until gone; Time Machine's inclusion asked before
	 * the first; the volume listed after each step (what it keeps) */
	const char *ls = "diskutil apfs listSnapshots -plist ";
	sb_addf(&want, "tmutil isexcluded %s%s\n", x.state, a);
	for (int i = 0; i < 4; i++) {
		sb_addf(&want, "tmutil localsnapshot\n%s%s%s\n", ls, x.state, a);
		if (i >= 2)
			sb_addf(&want, "diskutil apfs deleteSnapshot %s%s -name "
				       "com.apple.TimeMachine.\n%s%s%s\n", x.state, a, ls, x.state, a);
		sb_addf(&want, "%s%s%s\n", ls, x.state, a);
	}
	/* teardown: the two kept are deleted before the detach */
	for (int i = 0; i < 2; i++)
		sb_addf(&want, "diskutil apfs deleteSnapshot %s%s -name com.apple.TimeMachine.\n"
			       "%s%s%s\n", x.state, a, ls, x.state, a);
	check_eq_text("cond: the commands in order", calls, want.buf);
	char *kept = pt_run_query(x.run, "SELECT group_concat(value, ' ') FROM samples s JOIN "
					 "cells c ON c.seq = s.seq WHERE c.module = 'snapshot' AND "
					 "s.metric = 'snapshots' ORDER BY c.seq");
	check_eq_text("cond: snapshots kept per cycle", kept, "1.0 2.0 2.0 2.0");
	char *listed = pt_run_query(x.run, "SELECT group_concat(value, ' ') FROM samples s JOIN "
					   "cells c ON c.seq = s.seq WHERE c.module = 'snapshot' AND "
					   "s.metric = 'listed' ORDER BY c.seq");
	check_eq_text("cond: snapshots listed on the volume per cycle", listed, "1.0 2.0 2.0 2.0");
	free(listed);
	char *skip = pt_run_query(x.run, "SELECT group_concat(value, '|') FROM notes WHERE key = "
					 "'skipped'");
	check_has("cond: HFS+ is skipped with a note", skip, "hfs+ takes no snapshots");
	char *facts = pt_run_query(x.run, "SELECT facts_json FROM volumes WHERE name = 'APFS'");
	check_has("cond: facts indexing", facts, "\"indexing\":\"off\",\"indexing_applied\":"
		  "\"mdutil -i off ");
	check_has("cond: facts defrag", facts, "\"defrag\":\"off\",\"defrag_applied\":"
		  "\"diskutil apfs defragment ");
	check_has("cond: facts snapshots", facts, "\"snapshots\":\"keep 2\",\"snapshots_applied\":"
		  "\"the snapshot step keeps the last 2 of this volume\"");
	char *hf = pt_run_query(x.run, "SELECT facts_json FROM volumes WHERE name = 'HFS'");
	check_has("cond: HFS facts", hf, "\"defrag\":null,\"defrag_applied\":null,"
		  "\"snapshots\":null");
	check_clean(&x);
	free(hf);
	free(facts);
	free(skip);
	free(kept);
	sb_release(&want);
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

/* Time Machine excludes the volume: refused before any snapshot, with the
 * fix, and everything torn down. */
static void test_excluded(void)
{
	struct fx x;
	fx_init(&x, 1);
	ctl(&x, "fault", "tmutil-excluded", "1", NULL, NULL, NULL, NULL);
	char *text = plan_text(&x, "", 1), *out = NULL;
	CU_ASSERT_NOT_EQUAL(run(&x, text, &out), 0);
	check_has("excluded: the reason", out, "Time Machine excludes ");
	check_has("excluded: what to do", out, "sudo tmutil removeexclusion -v");
	char *calls = cond_calls(&x);
	pt_lacks("excluded: no snapshot asked for", calls, "localsnapshot");
	free(calls);
	check_clean(&x);
	free(out);
	free(text);
	fx_done(&x);
}

/* Time Machine includes the volume, but the snapshot does not appear (no
 * backup disk set up): the cell fails saying so. */
static void test_no_snapshot(void)
{
	struct fx x;
	fx_init(&x, 1);
	ctl(&x, "fault", "tmutil-noshot", "1", NULL, NULL, NULL, NULL);
	char *text = plan_text(&x, "", 1), *out = NULL;
	CU_ASSERT_NOT_EQUAL(run(&x, text, &out), 0);
	check_has("noshot: the reason", out, "tmutil localsnapshot made no snapshot of ");
	check_has("noshot: what to look at", out, "tmutil destinationinfo");
	check_clean(&x);
	free(out);
	free(text);
	fx_done(&x);
}

/* snapshots: none: the volume is kept out of Time Machine for the run and
 * let back in at teardown; an hourly snapshot that lands on it all the
 * same is counted and warned about; one of the run's that Time Machine
 * thins on the other volume is a warning, and is not deleted again. */
static void test_none_and_thinned(void)
{
	struct fx x;
	fx_init(&x, 1);
	ctl(&x, "fault", "snapshot-appears", "1", "APFS", NULL, NULL, NULL);
	ctl(&x, "fault", "snapshot-thinned", "1", "APFS2", NULL, NULL, NULL);
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "rig: 1\nname: none\nseed: 1\ntarget:\n  image: { path: %s/rig-test, "
		     "size: 2G }\nlayouts:\n  - name: l\n    partitions:\n"
		     "      - { name: APFS, fs: apfs, size: 50%%, snapshots: none }\n"
		     "      - { name: APFS2, fs: apfs, size: rest }\n"
		     "cache: { flush: false }\n"
		     "steps:\n  - cycle:\n      times: 2\n      steps:\n        - snapshot: {}\n",
		x.dir);
	char *out = NULL;
	int rc = run(&x, sb.buf, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *calls = cond_calls(&x);
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "tmutil addexclusion -v %s/Volumes/APFS\n", x.state);
	check_has("none: excluded at provisioning", calls, want.buf);
	sb_reset(&want);
	sb_addf(&want, "tmutil removeexclusion -v %s/Volumes/APFS\n", x.state);
	check_has("none: included again at teardown", calls, want.buf);
	char *appeared = pt_run_query(x.run, "SELECT group_concat(value, ' ') FROM samples s JOIN "
					     "cells c ON c.seq = s.seq JOIN volumes v ON v.id = "
					     "c.volume_id WHERE s.metric = 'appeared' AND v.name = "
					     "'APFS' ORDER BY c.seq");
	check_eq_text("none: snapshots that appeared, per cycle", appeared, "1.0 1.0");
	char *warn = pt_run_query(x.run, "SELECT group_concat(value, '|') FROM notes WHERE key = "
					 "'warning'");
	check_has("none: the warning", warn, "snapshot on a volume whose partition says "
		  "'snapshots: none': com.apple.TimeMachine.2020-01-01-000000.local");
	check_has("thinned: the warning", warn, "which the run keeps, is gone");
	char *kept = pt_run_query(x.run, "SELECT group_concat(value, ' ') FROM samples s JOIN "
					 "cells c ON c.seq = s.seq JOIN volumes v ON v.id = "
					 "c.volume_id WHERE s.metric = 'snapshots' AND v.name = "
					 "'APFS2' ORDER BY c.seq");
	/* the first thinned before the second cycle's listing: one kept */
	check_eq_text("thinned: kept per cycle", kept, "1.0 1.0");
	/* and not deleted again at teardown */
	pt_lacks("thinned: no delete of it at teardown", out, "left to go with its file system");
	check_clean(&x);
	free(kept);
	free(warn);
	free(appeared);
	free(calls);
	sb_release(&want);
	sb_release(&sb);
	free(out);
	fx_done(&x);
}

/* Refused at validation, at the key, naming what can. */
static void test_refused(void)
{
	struct fx x;
	fx_init(&x, 1);
	static const struct {
		const char *part, *want;
	} cases[] = {
		{ "{ name: H, fs: hfs+, size: rest, defrag: on }",
		  "plan.yaml:9:42: error: 'defrag' on hfs+ partition 'H': on macos rig sets automatic "
		  "defragmentation of apfs, apfsx only" },
		{ "{ name: H, fs: exfat, size: rest, snapshots: keep 3 }",
		  "plan.yaml:9:43: error: 'snapshots: keep 3' on exfat partition 'H': on macos rig "
		  "takes snapshots of apfs, apfsx only" },
		{ "{ name: H, fs: hfs+, size: rest }",
		  "plan.yaml:11:5: error: step 'snapshot': no volume of the plan can take snapshots" },
		{ "{ name: H, fs: apfs, size: rest, snapshots: none }",
		  "plan.yaml:11:5: error: step 'snapshot': no volume of the plan can take snapshots" },
		{ "{ name: H, fs: apfs, size: rest, snapshots: keep }",
		  "plan.yaml:9:53: error: invalid snapshots 'keep': give 'keep N'" },
		{ "{ name: H, fs: apfs, size: rest, indexing: maybe }",
		  "plan.yaml:9:52: error: unknown value 'maybe' for 'indexing'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		sb_addf(&sb, "rig: 1\nname: refused\ntarget:\n  image: { path: %s/x, size: 1G }\n"
			     "layouts:\n  - name: l\n    partitions:\n"
			     "      - { name: A, fs: hfs+, size: 50%% }\n      - %s\nsteps:\n"
			     "  - snapshot: {}\n", x.dir, cases[i].part);
		CU_ASSERT_EQUAL_FATAL(test_write_file(x.plan, sb.buf), 0);
		char *out = NULL;
		const char *args[] = { "validate", "--platform", "macos", x.plan, NULL };
		CU_ASSERT_NOT_EQUAL(pt_rig(x.bin, args, &out), 0);
		check_has(cases[i].part, out, cases[i].want);
		free(out);
		sb_release(&sb);
	}
	char *calls = fx_file(&x, "calls.log");
	CU_ASSERT(!calls || !strstr(calls, "partitionDisk")); /* nothing ran */
	free(calls);
	fx_done(&x);
}

/* rig plan lists the condition and snapshot commands where they come. */
static void test_plan_lists(void)
{
	struct fx x;
	fx_init(&x, 1);
	char *text = plan_text(&x, "", 2), *out = NULL;
	CU_ASSERT_EQUAL_FATAL(test_write_file(x.plan, text), 0);
	const char *args[] = { "plan", "--platform", "macos", x.plan, NULL };
	CU_ASSERT_EQUAL(pt_rig(x.bin, args, &out), 0);
	check_has("plan: conditions", out, "    $ mdutil -i off /Volumes/HFS\n"
		  "    $ mdutil -i off /Volumes/APFS\n"
		  "    $ diskutil apfs defragment /Volumes/APFS disable\n");
	check_has("plan: snapshot", out, "    # HFS: skipped hfs+ takes no snapshots (on macos rig "
		  "takes snapshots of apfs, apfsx)\n    $ tmutil isexcluded /Volumes/APFS\n"
		  "    $ tmutil localsnapshot\n"
		  "    $ diskutil apfs listSnapshots -plist /Volumes/APFS\n"
		  "    # APFS: snapshot com.apple.TimeMachine.DATE1.local\n"
		  "    $ diskutil apfs listSnapshots -plist /Volumes/APFS\n");
	check_has("plan: teardown", out, "  teardown of layout hfs-first:\n"
		  "    $ diskutil apfs deleteSnapshot /Volumes/APFS -name "
		  "com.apple.TimeMachine.DATE1.local\n"
		  "    $ diskutil apfs deleteSnapshot /Volumes/APFS -name "
		  "com.apple.TimeMachine.DATE2.local\n    $ hdiutil detach diskN\n");
	char *calls = fx_file(&x, "calls.log");
	CU_ASSERT(!calls || !strstr(calls, "tmutil")); /* nothing ran */
	free(calls);
	free(out);
	free(text);
	fx_done(&x);
}

void register_macos_cond_tests(void)
{
	CU_pSuite s = test_suite_e2e("macos volume conditions and snapshots (fake tools)");
	test_add(s, "rig run: mdutil, defragment, snapshots kept and deleted, in order",
		 test_conditions_and_snapshots);
	test_add(s, "rig run: a volume Time Machine excludes: refused before any snapshot",
		 test_excluded);
	test_add(s, "rig run: a snapshot that does not appear fails the cell", test_no_snapshot);
	test_add(s, "rig run: snapshots: none kept out of Time Machine; appeared and thinned "
		    "ones warned", test_none_and_thinned);
	test_add(s, "rig validate: conditions that do not apply, at their keys", test_refused);
	test_add(s, "rig plan: the commands listed where they come", test_plan_lists);
}
