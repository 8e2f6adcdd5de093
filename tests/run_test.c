/*
 * End-to-end tests of the rig binary on `dirs` targets with the null
 * module: the run folder, the CSV contract, failure and Ctrl-C handling,
 * and the other commands' exit statuses. They run the sanitized binary
 * ($RIG_BIN), so its leaks and undefined behaviour fail them too.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "plan/plan.h"
#include "test.h"

static void test_help_plan_language(void);
static void test_help_topics_listed(void);

static const char results_header[] =
	"run,layout,rep,step,module,volume,fs,position,offset_start,offset_end,cycle,"
	"sweep_var,sweep_value,seq,start_utc,metric,value,unit,cache";

struct fixture {
	char *tmp;
	struct strbuf plan, out, a, b;
};

static void fx_init(struct fixture *f, const char *steps, const char *extra)
{
	f->tmp = test_tmpdir();
	sb_init(&f->plan);
	sb_init(&f->out);
	sb_init(&f->a);
	sb_init(&f->b);
	sb_addf(&f->a, "%s/vol,a", f->tmp); /* a comma in a path must not matter */
	sb_addf(&f->b, "%s/b", f->tmp);
	sb_addf(&f->out, "%s/out", f->tmp);
	struct strbuf text = STRBUF_INIT;
	sb_addf(&text, "rig: 1\nname: e2e\ntarget:\n  dirs: [\"%s\", \"%s\"]\n  names: [\"A.1\", B]\n%s"
		       "steps:\n%s", f->a.buf, f->b.buf, extra, steps);
	sb_addf(&f->plan, "%s/plan.yaml", f->tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(f->plan.buf, text.buf), 0);
	sb_release(&text);
}

static void fx_release(struct fixture *f)
{
	test_rmtree(f->tmp);
	free(f->tmp);
	sb_release(&f->plan);
	sb_release(&f->out);
	sb_release(&f->a);
	sb_release(&f->b);
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static char *query1(const char *db, const char *sql)
{
	sqlite3 *h;
	char *res = NULL;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			res = xstrdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return res;
}

static void test_run_null_plan(void)
{
	struct fixture f;
	fx_init(&f,
		"  - null: { value: 7, files: 2 }\n"
		"  - cycle:\n      times: 2\n      steps:\n        - null: { value: 8 }\n"
		"  - sweep:\n      level: [1, 2, 3]\n      steps:\n        - null: { value: $level }\n",
		"order: counterbalance\nrepeat: 2\n");
	const char *args[] = { "run", "-q", "--seed", "5", "-o", f.out.buf, f.plan.buf, NULL };
	char *out = NULL;
	int rc = test_run_rig(args, &out);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out);
	free(out);

	/* The run folder holds the plan verbatim and every file of the contract. */
	struct strbuf p = STRBUF_INIT;
	const char *files[] = { "plan.yaml", "results.db", "results.csv", "files.csv", "commands.log" };
	for (size_t i = 0; i < 5; i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", f.out.buf, files[i]);
		CU_ASSERT_EQUAL(access(p.buf, R_OK), 0);
	}
	char *orig = test_read_file(f.plan.buf, NULL);
	sb_reset(&p);
	sb_addf(&p, "%s/plan.yaml", f.out.buf);
	char *copy = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(orig && copy && !strcmp(orig, copy));
	free(orig);
	free(copy);

	/* results.csv: header, then 2 samples per cell; 2 reps x 6 phases x 2 volumes. */
	sb_reset(&p);
	sb_addf(&p, "%s/results.csv", f.out.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_EQUAL(strncmp(csv, results_header, strlen(results_header)), 0);
	CU_ASSERT_EQUAL(count_lines(csv), 1 + 2 * 2 * 6 * 2);
	/* Cells carry cycle and sweep columns. */
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",2.cycle2.1,null,A.1,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",3.sweep3.1,null,B,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",level,3,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",value,7,1,"));
	free(csv);

	/* files.csv: 2 files per cell of step 1 (2 reps x 2 volumes). */
	sb_reset(&p);
	sb_addf(&p, "%s/files.csv", f.out.buf);
	csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	CU_ASSERT_EQUAL(count_lines(csv), 1 + 2 * 2 * 2);
	free(csv);

	/* The store says completed, with the seed; counterbalance reversed rep 2. */
	sb_reset(&p);
	sb_addf(&p, "%s/results.db", f.out.buf);
	char *v = query1(p.buf, "SELECT status FROM run");
	CU_ASSERT_TRUE(v && !strcmp(v, "completed"));
	free(v);
	v = query1(p.buf, "SELECT seed FROM run");
	CU_ASSERT_TRUE(v && !strcmp(v, "5"));
	free(v);
	v = query1(p.buf, "SELECT group_concat(v.name, '|') FROM (SELECT c.seq, vol.name FROM cells c "
			  "JOIN volumes vol ON vol.id = c.volume_id WHERE c.rep = 2 AND c.step = '1' "
			  "ORDER BY c.seq) v");
	CU_ASSERT_TRUE(v && !strcmp(v, "B|A.1"));
	free(v);
	v = query1(p.buf, "SELECT count(*) FROM cells WHERE status = 'done'");
	CU_ASSERT_TRUE(v && !strcmp(v, "24"));
	free(v);

	/* The dirs are left as found: the per-run work folders are gone. */
	CU_ASSERT_EQUAL(dir_entries(f.a.buf), 0);
	CU_ASSERT_EQUAL(dir_entries(f.b.buf), 0);
	sb_release(&p);
	fx_release(&f);
}

static void test_run_failed_cell(void)
{
	struct fixture f;
	fx_init(&f, "  - null: { value: 1 }\n  - null: { fail: true }\n  - null: {}\n", "");
	const char *args[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "step 2 (null) on volume A.1 failed: null module asked to fail"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "what was measured is in"));
	free(out);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", f.out.buf);
	char *v = query1(p.buf, "SELECT status FROM run");
	CU_ASSERT_TRUE(v && !strcmp(v, "failed"));
	free(v);
	v = query1(p.buf, "SELECT count(*) FROM samples s JOIN cells c ON c.seq = s.seq WHERE c.step = '1'");
	CU_ASSERT_TRUE(v && !strcmp(v, "4"));
	free(v);
	v = query1(p.buf, "SELECT status || ':' || error FROM cells WHERE step = '2'");
	CU_ASSERT_TRUE(v && !strncmp(v, "failed:", 7));
	free(v);
	sb_reset(&p);
	sb_addf(&p, "%s/results.csv", f.out.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(csv && count_lines(csv) == 1 + 4);
	free(csv);
	CU_ASSERT_EQUAL(dir_entries(f.a.buf), 0);
	sb_release(&p);
	fx_release(&f);
}

static void test_run_interrupted(void)
{
	struct fixture f;
	fx_init(&f, "  - null: { value: 1 }\n  - null: { time: 30s }\n  - null: {}\n", "");
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", 1);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execl(test_rig_bin(), test_rig_bin(), "run", "-q", "-o", f.out.buf, f.plan.buf, (char *)NULL);
		_exit(127);
	}
	/* Wait until the long cell has started, then Ctrl-C. */
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", f.out.buf);
	char *v = NULL;
	for (int i = 0; i < 300; i++) {
		struct timespec ts = { 0, 50000000 };
		nanosleep(&ts, NULL);
		free(v);
		v = access(p.buf, R_OK) == 0
			    ? query1(p.buf, "SELECT count(*) FROM cells WHERE step = '2'")
			    : NULL;
		if (v && strcmp(v, "0"))
			break;
	}
	free(v);
	time_t t0 = time(NULL);
	kill(pid, SIGINT);
	int status;
	waitpid(pid, &status, 0);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	CU_ASSERT_TRUE(time(NULL) - t0 < 5 * test_slowdown());
	v = query1(p.buf, "SELECT status FROM run");
	CU_ASSERT_TRUE(v && !strcmp(v, "interrupted"));
	free(v);
	v = query1(p.buf, "SELECT status FROM cells WHERE step = '2' ORDER BY seq LIMIT 1");
	CU_ASSERT_TRUE(v && !strcmp(v, "interrupted"));
	free(v);
	v = query1(p.buf, "SELECT count(*) FROM cells WHERE step = '3'");
	CU_ASSERT_TRUE(v && !strcmp(v, "0"));
	free(v);
	v = query1(p.buf, "SELECT count(*) FROM samples s JOIN cells c ON c.seq = s.seq WHERE c.step = '1'");
	CU_ASSERT_TRUE(v && !strcmp(v, "4"));
	free(v);
	CU_ASSERT_EQUAL(dir_entries(f.a.buf), 0);
	sb_release(&p);
	fx_release(&f);
}

static void test_run_refused(void)
{
	/* A plan whose file systems this platform cannot make: refused before
	 * anything is made (checked at validation, exit 2, no run folder). */
	struct fixture f;
	fx_init(&f, "  - null: {}\n", "");
	char *tmp = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out_dir = STRBUF_INIT;
	sb_addf(&plan, "%s/mac.yaml", tmp);
	sb_addf(&out_dir, "%s/out", tmp);
	test_write_file(plan.buf, "rig: 1\nname: mac\ntarget:\n  image: { path: /var/tmp/rig-never.dmg, size: 1G }\n"
				  "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: apfs, size: rest }\n"
				  "steps:\n  - null: {}\n");
	const char *margs[] = { "run", "-q", "--platform", "linux", "-o", out_dir.buf, plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(margs, &out), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "apfs"));
	free(out);
	CU_ASSERT_NOT_EQUAL(access(out_dir.buf, F_OK), 0);
	CU_ASSERT_NOT_EQUAL(access("/var/tmp/rig-never.dmg", F_OK), 0);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&plan);
	sb_release(&out_dir);
	struct strbuf p = STRBUF_INIT;
	/* An existing, non-empty output folder is never overwritten. */
	mkdir(f.out.buf, 0777);
	sb_addf(&p, "%s/keep", f.out.buf);
	test_write_file(p.buf, "mine");
	const char *args2[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(args2, &out), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "is not empty"));
	free(out);
	char *keep = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(keep && !strcmp(keep, "mine"));
	free(keep);
	sb_release(&p);
	fx_release(&f);
}

/*
 * A target refused when it is prepared, after the run folder was made (here
 * an image file rig did not make; without root: "needs root"): exit 2, and
 * no run folder left behind, so there is nothing to resume. A folder that
 * existed before (-o naming an empty one) is left, empty. A run that fails
 * mid-way keeps its folder (test_run_failed_cell).
 */
static void test_run_refused_target(void)
{
	char *tmp = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, img = STRBUF_INIT, text = STRBUF_INIT,
		      out_dir = STRBUF_INIT, empty = STRBUF_INIT, runs = STRBUF_INIT;
	sb_addf(&img, "%s/foreign.img", tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(img.buf, "someone else's"), 0);
	sb_addf(&plan, "%s/img.yaml", tmp);
	sb_addf(&text, "rig: 1\nname: foreign\ntarget:\n  image: { path: \"%s\", size: 64M }\n"
		       "layouts:\n  - name: one\n    partitions:\n      - { name: A, fs: ext4, size: rest }\n"
		       "steps:\n  - null: {}\n", img.buf);
	CU_ASSERT_EQUAL_FATAL(test_write_file(plan.buf, text.buf), 0);

	/* -o a new folder: made, then removed again. */
	sb_addf(&out_dir, "%s/out", tmp);
	const char *args[] = { "run", "-q", "-o", out_dir.buf, plan.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 2);
	CU_ASSERT(out && strstr(out, "cannot prepare the target"));
	CU_ASSERT(out && strstr(out, "nothing was provisioned or measured"));
	CU_ASSERT(out && !strstr(out, "rig resume"));
	free(out);
	CU_ASSERT_NOT_EQUAL(access(out_dir.buf, F_OK), 0);
	char *kept = test_read_file(img.buf, NULL);
	CU_ASSERT_TRUE(kept && !strcmp(kept, "someone else's"));
	free(kept);
	const char *rargs[] = { "resume", "-q", out_dir.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(rargs, NULL), 2);

	/* -o an empty folder that existed before: left, empty. */
	sb_addf(&empty, "%s/empty", tmp);
	CU_ASSERT_EQUAL_FATAL(mkdir(empty.buf, 0777), 0);
	const char *eargs[] = { "run", "-q", "--json-progress", "-o", empty.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(eargs, &out), 2);
	CU_ASSERT(out && strstr(out, "\"status\":\"refused\""));
	free(out);
	CU_ASSERT_EQUAL(dir_entries(empty.buf), 0);

	/* No -o: neither the run folder nor the runs root it made is left. */
	const char *dargs[] = { "run", "-q", plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig_in(tmp, dargs, NULL), 2);
	sb_addf(&runs, "%s/runs", tmp);
	CU_ASSERT_NOT_EQUAL(access(runs.buf, F_OK), 0);
	/* ... and of a runs root that existed, only the run's folder. */
	CU_ASSERT_EQUAL_FATAL(mkdir(runs.buf, 0777), 0);
	CU_ASSERT_EQUAL(test_run_rig_in(tmp, dargs, NULL), 2);
	CU_ASSERT_EQUAL(dir_entries(runs.buf), 0);

	test_rmtree(tmp);
	free(tmp);
	sb_release(&plan);
	sb_release(&img);
	sb_release(&text);
	sb_release(&out_dir);
	sb_release(&empty);
	sb_release(&runs);
}

static void test_report_redraws(void)
{
	struct fixture f;
	fx_init(&f, "  - null: { value: 3 }\n", "");
	const char *args[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(args, NULL), 0);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/results.csv", f.out.buf);
	char *before = test_read_file(p.buf, NULL);
	unlink(p.buf);
	const char *rargs[] = { "report", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(rargs, NULL), 0);
	char *after = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(before && after && !strcmp(before, after));
	free(before);
	free(after);
	const char *bad[] = { "report", f.tmp, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(bad, &out), 1);
	free(out);
	sb_release(&p);
	fx_release(&f);
}

static void test_cli_commands(void)
{
	char *out = NULL;
	struct strbuf p = STRBUF_INIT;
	/* Every ready plan validates. */
	const char *names[] = { "quick", "hfs-apfs-halves", "ten-containers", "enumeration-churn",
				"fill-levels", "fill-levels-image", "linux-fs-halves",
				"linux-ten-partitions", "diskmark", "apfs-grown-halves" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/configs/%s.yaml", test_src(), names[i]);
		const char *args[] = { "validate", p.buf, NULL };
		CU_ASSERT_EQUAL(test_run_rig(args, &out), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, ": ok"));
		free(out);
		const char *pargs[] = { "plan", p.buf, NULL };
		CU_ASSERT_EQUAL(test_run_rig(pargs, &out), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "is valid"));
		free(out);
	}
	/* An invalid plan: exit 2, file:line:col. */
	char *tmp = test_tmpdir();
	sb_reset(&p);
	sb_addf(&p, "%s/bad.yaml", tmp);
	test_write_file(p.buf, "rig: 1\nname: bad\ntarget: { dirs: [/tmp/x] }\nsteps:\n  - randread: { qdepth: 4 }\n");
	const char *vargs[] = { "validate", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(vargs, &out), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "bad.yaml:5:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "did you mean 'qd'"));
	free(out);
	test_rmtree(tmp);
	free(tmp);
	/* Help is generated from the tables. */
	const char *hargs[] = { "help", "randread", NULL };
	CU_ASSERT_EQUAL(test_run_rig(hargs, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "qd"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "lat_p99"));
	free(out);
	/* `plan` is the command, which points to the language's short form. */
	const char *pl[] = { "help", "plan", NULL };
	CU_ASSERT_EQUAL(test_run_rig(pl, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: rig plan"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "rig help plan-language"));
	free(out);
	test_help_plan_language();
	test_help_topics_listed();
	const char *uargs[] = { "frobnicate", NULL };
	CU_ASSERT_EQUAL(test_run_rig(uargs, &out), 2);
	free(out);
	const char *vers[] = { "--version", NULL };
	CU_ASSERT_EQUAL(test_run_rig(vers, &out), 0);
	CU_ASSERT_EQUAL(strncmp(out, "rig ", 4), 0);
	free(out);
	const char *nyet[] = { "compare", "/nonexistent/a", "/nonexistent/b", NULL };
	CU_ASSERT_EQUAL(test_run_rig(nyet, &out), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "cannot read run /nonexistent/a"));
	free(out);
	sb_release(&p);
}

/* The short form of the language has every top-level key the parser reads
 * and every module of the module table, with its parameters. */
static void test_help_plan_language(void)
{
	char *out = NULL;
	const char *args[] = { "help", "plan-language", NULL };
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 0);
	for (size_t i = 0; plan_top_keys[i]; i++) {
		struct strbuf k = STRBUF_INIT;
		sb_addf(&k, "\n  %s:", plan_top_keys[i]);
		if (!strstr(out, k.buf))
			printf("\nrig help plan-language lacks the key '%s'\n", plan_top_keys[i]);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, k.buf));
		sb_release(&k);
	}
	for (size_t i = 0; mod_all[i]; i++) {
		struct strbuf k = STRBUF_INIT;
		sb_addf(&k, "\n    - %s: {", mod_all[i]->name);
		const char *at = strstr(out, k.buf);
		CU_ASSERT_PTR_NOT_NULL(at);
		const struct rig_param *p0 = mod_all[i]->params;
		if (at && p0 && p0->name) {
			sb_reset(&k);
			sb_addf(&k, "{%s: ", p0->name);
			CU_ASSERT_PTR_NOT_NULL(strstr(at, k.buf));
		}
		sb_release(&k);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "size: 1G | sizes: ..."));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "    compare: fs "));
	free(out);
}

/* Every topic `rig help` lists has help, and the language is among them. */
static void test_help_topics_listed(void)
{
	char *out = NULL;
	const char *args[] = { "help", NULL };
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 0);
	const char *l = strstr(out, "help topics:");
	l = l ? strchr(l, '\n') : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	char line[256];
	const char *e = strchr(l + 1, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(e ? e - l - 1 : 0), l + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(line, " plan-language"));
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *topic_out = NULL;
		const char *targs[] = { "help", t, NULL };
		int rc = test_run_rig(targs, &topic_out);
		if (rc != 0)
			printf("\nrig help %s fails\n", t);
		CU_ASSERT_EQUAL(rc, 0);
		n++;
		free(topic_out);
	}
	CU_ASSERT_TRUE(n >= 7);
	free(out);
}

static void test_plan_schedule_output(void)
{
	char *out = NULL;
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/configs/linux-fs-halves.yaml", test_src());
	const char *args[] = { "plan", p.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 0);
	/* counterbalance: rep 2 reverses the volumes of each phase. */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "ext4-first  rep 1\n  seq    1-2     step 1              write      ext4 xfs"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "ext4-first  rep 2\n  seq    7-8     step 1              write      xfs ext4"));
	free(out);
	sb_release(&p);
}

void register_run_tests(void)
{
	CU_pSuite s = test_suite_e2e("rig run (dirs, null module)");
	test_add(s, "a plan with cycle and sweep runs end to end", test_run_null_plan);
	test_add(s, "a failed cell stops the run and keeps what was measured", test_run_failed_cell);
	test_add(s, "Ctrl-C stops promptly and keeps what was measured", test_run_interrupted);
	test_add(s, "refused before anything changes", test_run_refused);
	test_add(s, "a target refused when prepared leaves no run folder", test_run_refused_target);
	test_add(s, "rig report redraws from the store alone", test_report_redraws);
	CU_pSuite c = test_suite_e2e("command line");
	test_add(c, "validate, plan, help, exit statuses", test_cli_commands);
	test_add(c, "rig plan shows the realized order", test_plan_schedule_output);
}
