/*
 * The same-file-system control (methodology.md, "Known nulls"; issue 31):
 * ext4 in both halves of the synthetic rotating disk (tests/hdd_util.h,
 * 150 MB/s at the edge falling to 50 MB/s at the centre, speed a function
 * of the byte offset only), in both orders, three repetitions each
 * provisioned afresh, direct I/O, over ten seeds. There is no file-system
 * difference to find, and a position difference of about a third.
 *
 * What it asserts, over the 20 volume rows (2 steps x 10 seeds):
 *  - every position row says `effect`, resting on the 12 volumes made;
 *  - at most 4 volume rows say `effect`. A test at the 5% level that is
 *    exactly calibrated says it in 1 of 20 rows on average, and in 2 or
 *    more of 20 in 26% of such controls (binomial), so "at most 1", the
 *    issue's figure, would fail a correct analysis one CI run in four; 5
 *    or more happens with a calibrated test in 0.26% of runs. Counting
 *    the passes as replicates, rig said `effect` in 9 of 20 (issue 31).
 *    At the scale (8 files of 16 MB) bench/control.sh found 0 of
 *    20 before and after (bench/README.md); here the files are 4 MB and
 *    two seeds run at a time, so that the ten take about two minutes.
 *
 * Needs root, /dev/fuse, the provisioning tools and fuse-hdd; skipped
 * otherwise, with a message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hdd_util.h"
#include "provision_util.h"
#include "report_util.h"
#include "test.h"

#define SEEDS 10
#define VOLUME_EFFECTS_MAX 4

struct tally {
	int vol_rows, vol_effects, pos_rows, pos_effects;
	int units_wrong;
};

/* Count RUN/findings.csv's file-system and position rows, print them. */
static void tally_run(const char *run, int seed, struct tally *t)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/findings.csv", run);
	char *text = test_read_file(p.buf, NULL);
	sb_release(&p);
	char ***rows = NULL;
	CU_ASSERT_TRUE_FATAL(text && rfx_csv_parse(text, &rows) == 0);
	for (size_t r = 1; rows[r]; r++) {
		size_t n = 0;
		while (rows[r][n])
			n++;
		if (n != 13)
			continue;
		const char *kind = rows[r][2], *verdict = rows[r][10], *units = rows[r][12];
		int fs = !strcmp(kind, "filesystem"), pos = !strcmp(kind, "position");
		if (!fs && !pos)
			continue;
		int effect = !strcmp(verdict, "effect");
		printf("  %d %-4s %-10s %7.2f%% (%7.2f to %7.2f) %-16s %s\n", seed, rows[r][0], kind,
		       atof(rows[r][4]), atof(rows[r][6]), atof(rows[r][7]), verdict, units);
		t->vol_rows += fs;
		t->vol_effects += fs && effect;
		t->pos_rows += pos;
		t->pos_effects += pos && effect;
		t->units_wrong += strcmp(units, "12") != 0;
	}
	rfx_csv_free(rows);
	free(text);
}

/* The plan on disk h, written in h's folder. */
static void write_plan(struct hdd *h, struct strbuf *plan)
{
	struct strbuf text = STRBUF_INIT;
	sb_addf(plan, "%s/control.yaml", h->tmp);
	sb_addf(&text,
		"rig: 1\nname: control\ntarget:\n  disk: { device: %s, confirm: \"%s\" }\n"
		"layouts:\n"
		"  - name: a-first\n    partitions:\n"
		"      - { name: A, fs: ext4, size: 50%% }\n      - { name: B, fs: ext4, size: rest }\n"
		"  - name: b-first\n    partitions:\n"
		"      - { name: B, fs: ext4, size: 50%% }\n      - { name: A, fs: ext4, size: rest }\n"
		"order: counterbalance\nrepeat: { times: 3, provision: each }\n"
		"cache: { direct: true }\n"
		"steps:\n  - write: { files: 4, size: 4M }\n  - read: {}\n"
		"report: { formats: [csv] }\n",
		h->loop, h->disk.buf);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan->buf, text.buf), 0);
	sb_release(&text);
}

/* rig run of plan with seed into *run: its exit status (output printed
 * when not 0). */
static int run_seed(const char *plan, const char *tmp, int seed, struct strbuf *run)
{
	struct strbuf s = STRBUF_INIT;
	sb_addf(run, "%s/run-%d", tmp, seed);
	sb_addf(&s, "%d", seed);
	const char *args[] = { "run", "-q", "--yes", "--allow", "loop", "--seed", s.buf, "-o",
			       run->buf, plan, NULL };
	char *out = NULL;
	int rc = test_run_rig(args, &out);
	if (rc != 0)
		fprintf(stderr, "\nrig exited %d (seed %d):\n%s\n", rc, seed, out);
	free(out);
	sb_release(&s);
	return rc;
}

/*
 * Two synthetic disks, two seeds at a time (a child process runs the
 * second): a run spends half its time in sgdisk's own one-second waits
 * after each write of the table, so the pairs take about half as long,
 * and two light runs on two cores leave the rates the disks' own.
 */
static void test_same_fs_control(void)
{
	struct hdd h[2];
	int up = 0;
	for (; up < 2; up++)
		if (hdd_start(&h[up], "256M", 256ull << 20, 150e6, 50e6, NULL, NULL) < 0)
			break;
	if (up < 2) {
		CU_FAIL("cannot start the synthetic disks");
		for (int i = 0; i <= up && i < 2; i++)
			hdd_stop(&h[i]);
		return;
	}
	struct strbuf plan[2] = { STRBUF_INIT, STRBUF_INIT };
	write_plan(&h[0], &plan[0]);
	write_plan(&h[1], &plan[1]);
	struct tally t = { 0 };
	printf("\n  seed step row        estimate (95%% CI)              verdict          units\n");
	for (int seed = 41; seed < 41 + SEEDS; seed += 2) {
		struct strbuf run[2] = { STRBUF_INIT, STRBUF_INIT };
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		CU_ASSERT_TRUE_FATAL(pid >= 0);
		if (pid == 0)
			_exit(run_seed(plan[1].buf, h[1].tmp, seed + 1, &run[1]) == 0 ? 0 : 1);
		int rc0 = run_seed(plan[0].buf, h[0].tmp, seed, &run[0]), st = 0;
		sb_addf(&run[1], "%s/run-%d", h[1].tmp, seed + 1);
		CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
		int rc1 = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		CU_ASSERT_EQUAL(rc0, 0);
		CU_ASSERT_EQUAL(rc1, 0);
		if (rc0 == 0)
			tally_run(run[0].buf, seed, &t);
		if (rc1 == 0)
			tally_run(run[1].buf, seed + 1, &t);
		for (int i = 0; i < 2; i++) { /* the next seeds' runs need no room of these */
			test_rmtree(run[i].buf);
			sb_release(&run[i]);
		}
	}
	printf("  volume rows saying effect: %d of %d (at most %d); position rows: %d of %d\n",
	       t.vol_effects, t.vol_rows, VOLUME_EFFECTS_MAX, t.pos_effects, t.pos_rows);
	CU_ASSERT_EQUAL(t.vol_rows, 2 * SEEDS);
	CU_ASSERT_EQUAL(t.pos_rows, 2 * SEEDS);
	CU_ASSERT_TRUE(t.vol_effects <= VOLUME_EFFECTS_MAX);
	CU_ASSERT_EQUAL(t.pos_effects, t.pos_rows);
	CU_ASSERT_EQUAL(t.units_wrong, 0); /* 2 layouts x 3 provisionings x 2 volumes */
	for (int i = 0; i < 2; i++) {
		sb_release(&plan[i]);
		hdd_stop(&h[i]);
	}
}

void register_control_tests(void)
{
	CU_pSuite s = test_suite("the same-file-system control: no volume effect, a position effect");
	/* Beside the other root suites (a fleet of VMs, PostgreSQL) the rates
	 * swung by half (seen: estimates of -17% +-40 points, 11 of 20
	 * position rows): the rates must be the synthetic disk's. */
	test_suite_alone(s, "rates through FUSE, which a loaded host slows at random");
	if (!hdd_require(s))
		return;
	test_add(s, "ext4 in both halves, both orders, 10 seeds: the volume rows hold",
		 test_same_fs_control);
}
