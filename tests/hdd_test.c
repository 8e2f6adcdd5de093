/*
 * rig against a synthetic rotating disk (tests/tools/fuse-hdd.c): a FUSE
 * file whose throughput falls linearly from an outer rate at offset 0 to an
 * inner rate at the end (80 to 40 MB/s, 200 to 100 MB/s), attached here with losetup (direct I/O) and given to rig as
 * a disk target (--allow loop: rig did not attach it; confirm: its backing
 * file). rig must recover the profile it was built with:
 *
 *  - the ten-partition plan: each partition's measured write and read rate
 *    within 5% of the profile's mean over the partition's byte range
 *    (bytes / integral of dx / rate(x), what a full pass would measure);
 *  - the halves plan in both orders: the rate follows the position on the
 *    disk, not the file system.
 *
 * Needs root, /dev/fuse and the fuse-hdd binary ($RIG_FUSE_HDD, built by
 * `make check`); the suite says SKIPPED otherwise. About half a minute.
 */
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hdd_util.h"
#include "provision_util.h"
#include "report_util.h"
#include "test.h"

#ifndef O_DIRECT
#define O_DIRECT 0 /* macOS: the suite is skipped there (no fuse-hdd) */
#endif

/* rig plan's estimate of a scaled seed plan's run against the run, with
 * the disk's mean rate assumed (issue 32): printed, and within 25% where
 * asserted (seen: 0.93, 1.05, 0.98, 0.84). */
static void est_ratio(const struct hdd *h, const char *name, const char *run, const char *fs_map,
		      const char *label, int assert_it)
{
	struct strbuf plan = STRBUF_INIT;
	sb_addf(&plan, "%s/%s.yaml", h->tmp, name);
	double r = hdd_estimate_ratio(h, plan.buf, run, fs_map, NULL, label);
	if (assert_it)
		CU_ASSERT_TRUE(r > 0.75 && r < 1.25);
	sb_release(&plan);
}

static void test_ten_partitions_profile(void)
{
	struct hdd h;
	if (hdd_start(&h, "400M", 400ull << 20, 80e6, 40e6, NULL, NULL) < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	struct strbuf disk = STRBUF_INIT, run = STRBUF_INIT;
	sb_addf(&disk, "disk:\n    device: %s\n    confirm: \"%s\"", h.loop, h.disk.buf);
	/* configs/ten-containers.yaml, the article's plan, rehearsed with
	 * --fs-map apfs=ext4 on the synthetic disk */
	const char *pairs[] = {
		"disk:\n    device: disk4\n    confirm: \"ST2000LM007-1R8174\"", disk.buf,
		/* the best of 3 repetitions: a loaded host's scheduling gaps over
		 * the disk's 10 ms grace read as idle time (seen: 6-7.6% low in
		 * one repetition of 2 with load 3-6 on 2 cores) */
		"repeat: 10", "repeat: 3",
		/* 28 MiB of each 39 MiB partition: where ext4 puts the files inside
		 * the partition matters little when they fill most of it */
		"write: { files: 20, sizes: 2M..2G }", "write: { files: 4, size: 7M }",
		NULL, NULL,
	};
	CU_ASSERT_EQUAL(hdd_run_plan_mapped(&h, "ten-containers", pairs, "ten", &run, "apfs=ext4"), 0);
	est_ratio(&h, "ten", run.buf, "apfs=ext4", "ten containers", 1);
	double worst = 0;
	struct strbuf table = STRBUF_INIT;
	for (int pos = 1; pos <= 10; pos++) {
		struct strbuf q = STRBUF_INIT;
		sb_addf(&q, "SELECT offset_start || ' ' || offset_end FROM volumes WHERE position = %d",
			pos);
		char *v = pt_run_query(run.buf, q.buf);
		sb_release(&q);
		double a = 0, b = 0;
		CU_ASSERT_TRUE_FATAL(v && sscanf(v, "%lf %lf", &a, &b) == 2);
		free(v);
		double want = hdd_profile_rate(&h, a, b);
		double w = hdd_rate_of(run.buf, "tenths", pos, "write");
		double r = hdd_rate_of(run.buf, "tenths", pos, "read");
		sb_addf(&table, " p%d %.1f/%.1f/%.1f", pos, want, w, r);
		double ew = fabs(w / want - 1), er = fabs(r / want - 1);
		worst = fmax(worst, fmax(ew, er));
		if (ew >= 0.05 || er >= 0.05)
			fprintf(stderr, "\np%d [%.0f, %.0f): profile %.2f MB/s, write %.2f, read %.2f\n",
				pos, a, b, want, w, r);
		CU_ASSERT_TRUE(ew < 0.05);
		CU_ASSERT_TRUE(er < 0.05);
	}
	printf("\n  fuse-hdd 80->40 MB/s, ten partitions (profile/write/read MB/s):%s; "
	       "worst error %.1f%%\n", table.buf, worst * 100);
	/* The report's finding: the rate against position, first to last,
	 * within 5 percentage points of the profile's own change (-45.7%). Not
	 * 5% of it: the synthetic disk's per-request overhead (FUSE, the loop
	 * worker) costs more at its fast end, so measured reads start up to 4%
	 * below the profile (the check above) and the fitted change is smaller
	 * by that much. */
	double a1 = 0, b1 = 0, a10 = 0, b10 = 0;
	char *v1 = pt_run_query(run.buf, "SELECT offset_start || ' ' || offset_end FROM volumes WHERE position = 1");
	char *v10 = pt_run_query(run.buf, "SELECT offset_start || ' ' || offset_end FROM volumes WHERE position = 10");
	CU_ASSERT_TRUE_FATAL(v1 && v10 && sscanf(v1, "%lf %lf", &a1, &b1) == 2 &&
			     sscanf(v10, "%lf %lf", &a10, &b10) == 2);
	free(v1);
	free(v10);
	double profile = hdd_profile_rate(&h, a10, b10) / hdd_profile_rate(&h, a1, b1);
	const char *steps[] = { "1", "2" };
	for (int k = 0; k < 2; k++) {
		double est = NAN;
		char verdict[32] = "";
		CU_ASSERT_EQUAL(hdd_finding_of(run.buf, steps[k], "position", "position 10 vs position 1",
					   &est, verdict, sizeof(verdict)), 0);
		CU_ASSERT_STRING_EQUAL(verdict, "effect");
		printf("\n  step %s: first to last %+.1f%%, profile %+.1f%%", steps[k], est,
		       100 * (profile - 1));
		CU_ASSERT_TRUE(fabs(est - 100 * (profile - 1)) < 5);
	}
	sb_release(&table);
	sb_release(&disk);
	sb_release(&run);
	hdd_stop(&h);
}

static void test_halves_follow_position(void)
{
	struct hdd h;
	/* xfs needs 300 MB: halves of 640M are 319 MiB. A faster profile, so
	 * that half of each half can be written in seconds. */
	if (hdd_start(&h, "640M", 640ull << 20, 200e6, 100e6, NULL, NULL) < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	struct strbuf disk = STRBUF_INIT, run = STRBUF_INIT;
	sb_addf(&disk, "disk: { device: %s, confirm: \"%s\" }", h.loop, h.disk.buf);
	const char *pairs[] = {
		"image: { path: /var/tmp/rig-halves.img, size: 2G }", disk.buf,
		/* two provisionings of each layout: eight volumes for the findings
		 * to rest on (one of each leaves the file-system row one degree of
		 * freedom) */
		"repeat: { times: 4, provision: each }", "repeat: { times: 2, provision: each }",
		/* Half of each half: ext4 puts a top-level folder in a block group
		 * of its choosing (Orlov), xfs in an allocation group; filling
		 * half the volume bounds how far from its half's mean they land
		 * (three quarters leaves xfs no room for the second repetition). */
		"write: { files: 8, sizes: 1M..64M }", "write: { files: 4, size: 40M }",
		"  - randread: { block: 4K, qd: 32, span: 256M, time: 3s }\n", "",
		NULL, NULL,
	};
	CU_ASSERT_EQUAL(hdd_run_plan(&h, "linux-fs-halves", pairs, "halves", &run), 0);
	est_ratio(&h, "halves", run.buf, NULL, "ext4/xfs halves", 1);
	const char *mods[] = { "write", "read" };
	struct strbuf table = STRBUF_INIT;
	for (int m = 0; m < 2; m++) {
		double e1 = hdd_rate_of(run.buf, "ext4-first", 1, mods[m]); /* ext4, outer */
		double x2 = hdd_rate_of(run.buf, "ext4-first", 2, mods[m]); /* xfs, inner */
		double x1 = hdd_rate_of(run.buf, "xfs-first", 1, mods[m]);  /* xfs, outer */
		double e2 = hdd_rate_of(run.buf, "xfs-first", 2, mods[m]);  /* ext4, inner */
		sb_addf(&table, " %s ext4 %.1f|%.1f xfs %.1f|%.1f", mods[m], e1, e2, x1, x2);
		/* Each file system is faster in the outer half (the profile's
		 * halves average 174 and 123 MB/s; files at the worst depths, half a
		 * half apart, still give 1.18), and so the ranking of the two flips with the order. */
		CU_ASSERT_TRUE(e1 > 1.1 * e2);
		CU_ASSERT_TRUE(x1 > 1.1 * x2);
		CU_ASSERT_TRUE(e1 > 1.1 * x2);
		CU_ASSERT_TRUE(x1 > 1.1 * e2);
	}
	printf("\n  fuse-hdd halves (outer|inner MB/s):%s\n", table.buf);
	/* The report: a position effect, and a file-system difference smaller
	 * than it. xfs measures faster than ext4 in the same half: it puts its
	 * files in its first allocation group, at the start of its half, where
	 * ext4 spreads them (Orlov). Counting the passes as replicates, the
	 * report called that an effect (+12%, 95% CI +3% to +21%); on the
	 * provisioned volumes it rests on it is not clear with one
	 * provisioning of each layout (seen: +12.1%, 95% CI -12.7% to +43.9%,
	 * and the sentence says one volume per file system and position cannot
	 * tell it from placement); here each layout is provisioned twice. */
	for (int k = 0; k < 2; k++) {
		const char *step = k ? "2" : "1";
		double pos = NAN, fs = NAN;
		char verdict[32] = "";
		CU_ASSERT_EQUAL(hdd_finding_of(run.buf, step, "position", "position 2 vs position 1", &pos,
					   verdict, sizeof(verdict)), 0);
		CU_ASSERT_STRING_EQUAL(verdict, "effect");
		CU_ASSERT_TRUE(pos < -10);
		CU_ASSERT_EQUAL(hdd_finding_of(run.buf, step, "filesystem", "xfs vs ext4", &fs, verdict,
					   sizeof(verdict)), 0);
		CU_ASSERT_TRUE(fabs(fs) < fabs(pos));
	}
	/* Each read agrees with the profile at the place recorded for its file. */
	size_t nplaced = 0;
	double med = hdd_placed_read_error(&h, run.buf, &nplaced);
	printf("\n  %zu files read at their recorded places: median |rate / profile - 1| %.1f%%\n",
	       nplaced, 100 * med);
	CU_ASSERT_EQUAL(nplaced, 2 * 2 * 2 * 4); /* layouts x provisionings x volumes x files */
	CU_ASSERT_TRUE(med < 0.10);
	sb_release(&table);
	sb_release(&disk);
	sb_release(&run);
	hdd_stop(&h);
}

/*
 * configs/hfs-apfs-halves.yaml rehearsed on Linux with one file system
 * for both names (--fs-map apfs=ext4,hfs+=ext4): only the position differs,
 * and the report must say so: a position effect, a volume difference far
 * smaller than it with the caveat of one provisioning, and the mapping
 * named once.
 */
static void test_halves_one_fs(void)
{
	struct hdd h;
	if (hdd_start(&h, "640M", 640ull << 20, 200e6, 100e6, NULL, NULL) < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	struct strbuf disk = STRBUF_INIT, run = STRBUF_INIT;
	sb_addf(&disk, "disk:\n    device: %s\n    confirm: \"%s\"", h.loop, h.disk.buf);
	const char *pairs[] = {
		"disk:\n    device: disk4\n    confirm: \"WDC WD20SPZX-22UA7T0\"", disk.buf,
		"repeat: 1", "repeat: 2",
		"write: { files: 160, sizes: 2M..2G, block: 1M }", "write: { files: 4, size: 40M, block: 1M }",
		NULL, NULL,
	};
	CU_ASSERT_EQUAL(hdd_run_plan_mapped(&h, "hfs-apfs-halves", pairs, "mapped", &run,
					"apfs=ext4,hfs+=ext4"), 0);
	est_ratio(&h, "mapped", run.buf, "apfs=ext4,hfs+=ext4", "APFS/HFS halves as ext4", 1);
	for (int k = 0; k < 2; k++) {
		const char *step = k ? "2" : "1";
		double est = NAN;
		char verdict[32] = "";
		CU_ASSERT_EQUAL(hdd_finding_of(run.buf, step, "position", "position 2 vs position 1", &est,
					   verdict, sizeof(verdict)), 0);
		CU_ASSERT_STRING_EQUAL(verdict, "effect");
		CU_ASSERT_TRUE(est < -10);
		CU_ASSERT_EQUAL(hdd_finding_of(run.buf, step, "filesystem", "HFS vs APFS", &est, verdict,
					   sizeof(verdict)), 0);
		/* No difference to find, and none found of any size. Not the
		 * verdict: on four volumes a test at the 5% level says `effect`
		 * in one row of twenty whatever the data (seen: -0.1%, 95% CI
		 * -0.2% to -0.04%, on a quiet machine), so two rows asserted
		 * "no-clear-effect" would fail one run in ten. */
		CU_ASSERT_TRUE(fabs(est) < 2);
	}
	/* ... and the report says what one provisioning cannot tell */
	struct strbuf fp = STRBUF_INIT;
	sb_addf(&fp, "%s/findings.csv", run.buf);
	char *fcsv = test_read_file(fp.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL(fcsv ? strstr(fcsv, "cannot be told apart from where the files "
						   "happened to land") : NULL);
	free(fcsv);
	sb_release(&fp);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/report.html", run.buf);
	char *html = test_read_file(p.buf, NULL);
	CU_ASSERT(html && strstr(html, "follows position, not the volume"));
	CU_ASSERT_PTR_NULL(html ? strstr(html, "does not validate") : NULL);
	const char *m = html ? strstr(html, "mapped by <code>--fs-map apfs=ext4,hfs+=ext4") : NULL;
	CU_ASSERT_TRUE(m && !strstr(m + 1, "mapped by <code>--fs-map"));
	free(html);
	sb_release(&p);
	printf("\n");
	sb_release(&disk);
	sb_release(&run);
	hdd_stop(&h);
}

/*
 * configs/fill-levels-image.yaml scaled down (one layout, three levels,
 * a 4 MiB test file): the fill asked for 99% stops where the volume is
 * full, and the report names the level reached, not the one asked, in its
 * onset rows and its tables.
 */
static void test_fill_sweep(void)
{
	struct hdd h;
	if (hdd_start(&h, "256M", 256ull << 20, 100e6, 50e6, NULL, NULL) < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	struct strbuf disk = STRBUF_INIT, run = STRBUF_INIT;
	sb_addf(&disk, "disk:\n    device: %s\n    confirm: \"%s\"", h.loop, h.disk.buf);
	/* file: keep, as before the plan laid its files out fresh: this sweep
	 * fills the volume to the full, where no fresh file would fit (the
	 * fresh files' test is test_fill_fresh) */
	const char *seq3 = "span: 100M, passes: 3, time: 5s, file: fresh }",
		   *seq1 = "span: 100M, passes: 1, time: 5s, file: fresh }";
	const char *pairs[] = {
		"image: { path: /var/tmp/rig-fill.dmg, size: 40G }", disk.buf,
		"  - name: case-folding\n    partitions:\n      - { name: Share, fs: hfs+, size: rest }\n", "",
		"level: [90%, 91%, 92%, 93%, 94%, 95%, 96%, 97%, 98%, 99%]", "level: [90%, 95%, 99%]",
		seq3, "span: 4M, passes: 2, time: 300ms }", seq3, "span: 4M, passes: 2, time: 300ms }",
		seq3, "span: 4M, passes: 2, time: 300ms }", seq1, "span: 4M, passes: 1, time: 300ms }",
		seq1, "span: 4M, passes: 1, time: 300ms }",
		"steps:\n", "repeat: 2\nsteps:\n",
		NULL, NULL,
	};
	CU_ASSERT_EQUAL(hdd_run_plan_mapped(&h, "fill-levels-image", pairs, "fill", &run,
					"jhfsx=ext4,hfs+=ext4"), 0);
	est_ratio(&h, "fill", run.buf, "jhfsx=ext4,hfs+=ext4", "fill sweep", 1);
	char *reached = pt_run_query(run.buf, "SELECT printf('%.2f', avg(s.value)) FROM samples s JOIN "
					      "cells c ON c.seq = s.seq WHERE s.metric = 'level' AND "
					      "c.sweep_value = '99%'");
	CU_ASSERT_PTR_NOT_NULL_FATAL(reached);
	double lv = atof(reached);
	CU_ASSERT_TRUE(lv > 90 && lv < 99.5);
	/* the write step's onset row names 99% by the level it reached */
	struct strbuf want = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&want, "%s%% reached (asked 99%%)", reached);
	sb_addf(&p, "%s/findings.csv", run.buf);
	char *csv = test_read_file(p.buf, NULL);
	char ***rows = NULL;
	const char *sentence = NULL;
	CU_ASSERT_TRUE_FATAL(csv && rfx_csv_parse(csv, &rows) == 0);
	for (size_t r = 1; rows[r]; r++)
		if (!strcmp(rows[r][0], "2.sweep.2") && !strcmp(rows[r][2], "onset") &&
		    !strcmp(rows[r][3], "Share: onset against level 90%"))
			sentence = rows[r][11];
	CU_ASSERT(sentence && strstr(sentence, want.buf));
	printf("\n  level reached when 99%% was asked: %s%%; findings.csv: %s\n", reached,
	       sentence ? sentence : "(no onset row)");
	rfx_csv_free(rows);
	free(csv);
	sb_reset(&p);
	sb_addf(&p, "%s/report.html", run.buf);
	char *html = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(html && strstr(html, "<th class=\"num\">reached</th>"));
	free(html);
	free(reached);
	sb_release(&want);
	sb_release(&p);
	sb_release(&disk);
	sb_release(&run);
	hdd_stop(&h);
}

/*
 * file: fresh against file: keep in a fill sweep (issue 32): the fresh
 * test file is laid out anew after each fill, so its recorded place
 * (file_at: the mean place of its bytes, % of the volume) moves as the
 * volume fills, and its read rate is the profile's at that place; the kept one (data: zero, a
 * file of its own) stays where it was first laid out.
 */
static void test_fill_fresh(void)
{
	struct hdd h;
	/* 600M: ext4 takes 4K blocks from 512 MiB (1K below, where its 8 MiB
	 * block groups split an 8 MiB file and its place spreads) */
	if (hdd_start(&h, "600M", 600ull << 20, 100e6, 50e6, NULL, NULL) < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	struct strbuf plan = STRBUF_INIT, text = STRBUF_INIT, run = STRBUF_INIT;
	sb_addf(&plan, "%s/fresh.yaml", h.tmp);
	sb_addf(&run, "%s/fresh", h.tmp);
	sb_addf(&text,
		"rig: 1\nname: fresh\ntarget:\n  disk: { device: %s, confirm: \"%s\" }\n"
		"layouts:\n  - name: one\n    partitions:\n      - { name: V, fs: ext4, size: rest }\n"
		"repeat: 2\ncache: { direct: true }\nsteps:\n  - sweep:\n"
		"      level: [10%%, 40%%, 70%%]\n      steps:\n        - fill: { to: $level }\n"
		"        - seqread: { block: 1M, qd: 1, span: 8M, passes: 2, file: fresh }\n"
		"        - seqread: { block: 1M, qd: 1, span: 8M, passes: 2, data: zero }\n"
		"report: { formats: [csv], by: [level] }\n",
		h.loop, h.disk.buf);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "--yes", "--allow", "loop", "-o", run.buf, plan.buf, NULL };
	char *out = NULL;
	int rc = test_run_rig(args, &out);
	if (rc != 0)
		fprintf(stderr, "\nrig exited %d:\n%s\n", rc, out);
	free(out);
	CU_ASSERT_EQUAL_FATAL(rc, 0);

	struct strbuf db = STRBUF_INIT;
	sb_addf(&db, "%s/results.db", run.buf);
	sqlite3 *conn = NULL;
	sqlite3_stmt *st = NULL;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(db.buf, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	const char *q =
		"SELECT c.step LIKE '1.sweep%.2', c.rep, c.sweep_value,"
		" (SELECT value FROM samples WHERE seq = c.seq AND metric = 'file_at'),"
		" (SELECT value FROM samples WHERE seq = c.seq AND metric = 'file_at_max'),"
		" (SELECT max(value) FROM samples WHERE seq = c.seq AND metric = 'rate'),"
		" v.offset_start, v.offset_end FROM cells c JOIN volumes v ON v.id = c.volume_id"
		" WHERE c.module = 'seqread' ORDER BY 1 DESC, c.rep, c.seq";
	CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(conn, q, -1, &st, NULL), SQLITE_OK);
	double fresh_lo[2] = { INFINITY, INFINITY }, fresh_hi[2] = { -INFINITY, -INFINITY };
	double keep_lo = INFINITY, keep_hi = -INFINITY, err[16], fat[16], frate[16];
	size_t nfresh = 0, nkeep = 0;
	printf("\n");
	while (sqlite3_step(st) == SQLITE_ROW) {
		int rep = sqlite3_column_int(st, 1), fresh = sqlite3_column_int(st, 0);
		double at = sqlite3_column_double(st, 3), end = sqlite3_column_double(st, 4);
		double rate = sqlite3_column_double(st, 5);
		double a = (double)sqlite3_column_int64(st, 6), b = (double)sqlite3_column_int64(st, 7);
		/* the profile over 8 MiB around the bytes' mean place: exact for
		 * a file in one piece, close for one in pieces near each other */
		double mid = a + at / 100 * (b - a);
		double want = hdd_profile_rate(&h, mid - 4 * 1048576.0, mid + 4 * 1048576.0);
		printf("  %s rep %d at %s: file at %.1f%% of the volume (up to %.1f%%), best pass "
		       "%.1f MB/s, profile there %.1f\n", fresh ? "fresh" : "keep ", rep,
		       sqlite3_column_text(st, 2), at, end, rate, want);
		CU_ASSERT_TRUE(sqlite3_column_type(st, 3) != SQLITE_NULL && end > at && at > 0);
		if (fresh && rep >= 1 && rep <= 2 && nfresh < 16) {
			fresh_lo[rep - 1] = fmin(fresh_lo[rep - 1], at);
			fresh_hi[rep - 1] = fmax(fresh_hi[rep - 1], at);
			fat[nfresh] = at;
			frate[nfresh] = rate;
			err[nfresh++] = fabs(rate / want - 1);
		} else if (!fresh) {
			keep_lo = fmin(keep_lo, at);
			keep_hi = fmax(keep_hi, at);
			nkeep++;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(conn);
	CU_ASSERT_EQUAL(nfresh, 6);
	CU_ASSERT_EQUAL(nkeep, 6);
	/* The fresh file moves with the fill (seen: 23% of the volume at 20%
	 * full, 94% at 80%), within each repetition; the kept one does not. */
	for (int r = 0; r < 2; r++)
		CU_ASSERT_TRUE(fresh_hi[r] - fresh_lo[r] > 10);
	CU_ASSERT_TRUE(keep_hi - keep_lo < 0.01);
	/* Its best pass reads at the profile's rate where it sits: further in,
	 * slower, for every two places more than 10 points apart; and close
	 * to the profile's figure (seen: 4% to 10% above it at qd 1 through
	 * fuse-hdd, where `read`'s files agree within 1%: not explained yet,
	 * so the bound is 15%). */
	int misordered = 0;
	for (size_t i = 0; i < nfresh; i++)
		for (size_t j = 0; j < nfresh; j++)
			misordered += fat[i] + 10 < fat[j] && frate[i] <= frate[j];
	CU_ASSERT_EQUAL(misordered, 0);
	for (size_t i = 1; i < nfresh; i++)
		for (size_t j = i; j > 0 && err[j - 1] > err[j]; j--) {
			double t = err[j];
			err[j] = err[j - 1];
			err[j - 1] = t;
		}
	double med = nfresh ? (err[(nfresh - 1) / 2] + err[nfresh / 2]) / 2 : NAN;
	printf("  fresh files: median |rate / profile - 1| %.1f%%\n", 100 * med);
	CU_ASSERT_TRUE(med < 0.15);
	sb_release(&db);
	sb_release(&plan);
	sb_release(&text);
	sb_release(&run);
	hdd_stop(&h);
}

/*
 * configs/enumeration-churn.yaml scaled down to its first layout (HFS+ in
 * the outer half), `files` files, the source tree in the test's folder,
 * churned and synced to both halves each of `times` cycles, every
 * enumeration cold (the volume mounted again before it), run on h as
 * `name` into run. 0, or rig's exit code.
 */
static int churn_run(struct hdd *h, const char *files, const char *times, const char *name,
		     struct strbuf *run)
{
	struct strbuf disk = STRBUF_INIT, src = STRBUF_INIT, cfg = STRBUF_INIT, tree = STRBUF_INIT;
	sb_addf(&disk, "disk:\n    device: %s\n    confirm: \"%s\"", h->loop, h->disk.buf);
	sb_addf(&src, "%s/source-%s", h->tmp, name);
	sb_addf(&tree, "files: %s, dirs: 30, depth: 2, sizes: \"inverse-square(1K..64K)\"", files);
	sb_addf(&cfg, "%s/configs/enumeration-churn.yaml", test_src());
	char *text = test_read_file(cfg.buf, NULL);
	const char *from = text ? strstr(text, "  - name: snapshots-all.apfs-first\n") : NULL;
	const char *to = from ? strstr(from, "order: alternate\n") : NULL;
	int rc = -1;
	if (from && to) {
		char *others = strndup(from, (size_t)(to - from));
		const char *pairs[] = {
			"disk:\n    device: disk6\n    confirm: \"WDC WD20EFRX-68EUZN0\"", disk.buf,
			others, "",
			"files: 1000000, dirs: 111000, depth: 3, sizes: \"inverse-square(1K..20G)\"",
			tree.buf,
			"/var/tmp/rig-source", src.buf, "/var/tmp/rig-source", src.buf,
			"/var/tmp/rig-source", src.buf, "/var/tmp/rig-source", src.buf,
			"times: 20", times,
			"order: alternate\n", "order: alternate\ncache: { remount: true }\n",
			"fraction: 5%", "fraction: 20%",
			"        - pause: { time: 10s }\n", "",
			NULL, NULL,
		};
		/* both halves ext4: defrag and snapshots are warned about, not applied */
		rc = hdd_run_plan_mapped(h, "enumeration-churn", pairs, name, run,
					 "hfs+=ext4,apfs=ext4");
		free(others);
	}
	CU_ASSERT_TRUE(from && to);
	free(text);
	sb_release(&cfg);
	sb_release(&src);
	sb_release(&tree);
	sb_release(&disk);
	return rc;
}

/*
 * The churn plan on a disk that ages as it is rewritten (--wear: each MiB
 * written adds to the seek cost), so that enumeration after each sync is
 * slower by a known mechanism: the report must find a positive trend in
 * seconds per cycle on both volumes. Eight cycles, not six: on a loaded
 * machine one slow cell of six could pull a volume's interval past 0 (seen
 * in CI and in two helpers' runs, in either walk order).
 */
static void test_churn_slows(void)
{
	struct hdd h;
	if (hdd_start(&h, "256M", 256ull << 20, 100e6, 50e6, "1", "0.5") < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	struct strbuf run = STRBUF_INIT;
	CU_ASSERT_EQUAL(churn_run(&h, "600", "times: 8", "churn", &run), 0);
	/* Not asserted: this disk seeks (1 ms a request) and wears (every MiB
	 * written adds 0.5 ms to every later request), so each file a sync
	 * writes costs more and more milliseconds (10 ms at first, 40 ms at
	 * the end: about 80 file operations a second on average, where the
	 * estimate assumes flash's 10,000 unless told --assume-ops), and the
	 * remount and sync before each walk cost this machine 0.5 s each
	 * (seen: 7 s estimated, 111 s taken; the counts agree: 3,120 files,
	 * 13.7 MiB written). test_churn_estimated corrects the estimate by a
	 * shorter run on a disk that does not wear. */
	est_ratio(&h, "churn", run.buf, "hfs+=ext4,apfs=ext4", "enumeration through churn", 0);
	/* Both volumes slow down, clearly. Without the remount the first
	 * enumeration of a volume could be served from what the tree step left
	 * in memory (seen: 4 ms on one volume, 0.76 s on the other) and widen
	 * that volume's interval past 0. */
	const char *vols[] = { "HFS", "APFS" };
	for (int k = 0; k < 2; k++) {
		double est = NAN;
		char verdict[32] = "";
		CU_ASSERT_EQUAL(hdd_finding_of(run.buf, "4.cycle.1", "trend", vols[k], &est, verdict,
					   sizeof(verdict)), 0);
		CU_ASSERT_TRUE(est > 0);
		CU_ASSERT_STRING_EQUAL(verdict, "effect");
	}
	printf("\n");
	sb_release(&run);
	hdd_stop(&h);
}

/*
 * The churn plan's estimate corrected by a pilot (rig plan --from): on a
 * disk that seeks (1 ms a request) but does not wear, a run of 2 cycles,
 * then `rig plan --from` it for the plan of 5 cycles, against that plan's
 * run: within 25%, where the uncorrected estimate is far off (printed).
 */
static void test_churn_estimated(void)
{
	struct hdd h;
	if (hdd_start(&h, "256M", 256ull << 20, 100e6, 50e6, "8", NULL) < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	struct strbuf pilot = STRBUF_INIT, run = STRBUF_INIT, plan = STRBUF_INIT;
	CU_ASSERT_EQUAL(churn_run(&h, "300", "times: 2", "pilot", &pilot), 0);
	CU_ASSERT_EQUAL(churn_run(&h, "300", "times: 5", "long", &run), 0);
	sb_addf(&plan, "%s/long.yaml", h.tmp);
	hdd_estimate_ratio(&h, plan.buf, run.buf, "hfs+=ext4,apfs=ext4", NULL,
			   "5 cycles, uncorrected");
	double r = hdd_estimate_ratio(&h, plan.buf, run.buf, "hfs+=ext4,apfs=ext4", pilot.buf,
				      "5 cycles");
	CU_ASSERT_TRUE(r > 0.75 && r < 1.25);
	printf("\n");
	sb_release(&plan);
	sb_release(&pilot);
	sb_release(&run);
	hdd_stop(&h);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The model itself, read directly: random 4K reads pay the seek cost,
 * sequential 1 MiB reads run at the profile's rate and pay none. */
static void test_seek_and_rate(void)
{
	struct hdd h;
	if (hdd_start(&h, "256M", 256ull << 20, 100e6, 50e6, "4", NULL) < 0) {
		CU_FAIL("cannot start the synthetic disk");
		hdd_stop(&h);
		return;
	}
	int fd = open(h.loop, O_RDONLY | O_DIRECT);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	void *buf = NULL;
	CU_ASSERT_EQUAL_FATAL(posix_memalign(&buf, 4096, 1 << 20), 0);
	/* The best of 3 tries for each: a loaded host only ever adds time
	 * (seen once: the check failed at load 3.7), so the fastest try is the
	 * model's own figure, and a model that charged too little would still
	 * fail the lower bound. */
	double per = 1e9, rate = 0;
	uint64_t x = 88172645463325252ull; /* xorshift: spread offsets, 4K aligned */
	for (int attempt = 0; attempt < 3; attempt++) {
		double t0 = now_s();
		int n = 40;
		for (int i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			off_t off = (off_t)(x % ((256ull << 20) / 4096)) * 4096;
			CU_ASSERT_EQUAL(pread(fd, buf, 4096, off), 4096);
		}
		double p = (now_s() - t0) / n * 1e3;
		if (p < per)
			per = p;
		t0 = now_s();
		for (int i = 0; i < 32; i++)
			CU_ASSERT_EQUAL(pread(fd, buf, 1 << 20, (off_t)i << 20), 1 << 20);
		double r = 32.0 * (1 << 20) / (now_s() - t0) / 1e6;
		if (r > rate)
			rate = r;
	}
	double want = hdd_profile_rate(&h, 0, 32.0 * (1 << 20));
	printf("\n  fuse-hdd --seek-ms=4, best of 3: random 4K read %.2f ms; sequential 1 MiB "
	       "reads %.1f MB/s (profile %.1f)\n", per, rate, want);
	/* 4 ms + 4K at ~75 MB/s, less the host's share of the gap (up to a few
	 * tenths of a ms) the model does not charge */
	CU_ASSERT_TRUE(per > 3.6 && per < 5.0);
	CU_ASSERT_TRUE(fabs(rate / want - 1) < 0.05);
	free(buf);
	close(fd);
	hdd_stop(&h);
}

void register_hdd_tests(void)
{
	CU_pSuite s = test_suite("a synthetic hard disk (fuse-hdd): rig recovers its profile");
	test_suite_alone(s, "rates measured through FUSE within 5% of the profile");
	if (!hdd_require(s))
		return;
	test_add(s, "the model: seek cost and sequential rate", test_seek_and_rate);
	test_add(s, "ten partitions: each within 5% of the profile", test_ten_partitions_profile);
	test_add(s, "halves in both orders: the rate follows position, not file system",
		 test_halves_follow_position);
	test_add(s, "APFS/HFS halves rehearsed as ext4 on both: position, not volume",
		 test_halves_one_fs);
	test_add(s, "a fill sweep: onsets named by the level reached", test_fill_sweep);
	test_add(s, "a fill sweep: a fresh test file moves with the level, a kept one stays",
		 test_fill_fresh);
	test_add(s, "enumeration through churn on an ageing disk: seconds rise per cycle",
		 test_churn_slows);
	test_add(s, "enumeration through churn: rig plan --from a shorter run, within 25%",
		 test_churn_estimated);
}
