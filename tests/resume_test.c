/*
 * rig resume: where a resumed run starts (run_resume_point on real schedules),
 * the store's version 1 -> 2 migration and superseded samples, the
 * refusals, and the kill -9 test: a real run killed at random points (20
 * seeds on a dirs target; as root also on an image target with loop
 * devices), resumed (the resume itself sometimes killed too), and then
 * every cell has exactly one completed result: the same cells, samples and
 * CSV rows as a run that was never interrupted, nothing duplicated, and
 * nothing left behind (work folders; mounts and loop devices).
 */
#include <errno.h>
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

#include "lib/diag.h"
#include "lib/prng.h"
#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "modules/seqio.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "plan/schedule.h"
#include "provision/linux/linux.h"
#include "provision/provision.h"
#include "provision_util.h"
#include "rig/run/resume.h"
#include "store/store.h"
#include "test.h"

/* --- run_resume_point --- */

static struct plan *parse(const char *text)
{
	struct diag d;
	diag_init(&d, "t.yaml", NULL);
	struct plan_options po = { .platform = plan_platform_find("linux") };
	struct plan *p = plan_parse_text("t.yaml", text, strlen(text), &po, &d);
	if (d.nerrors) {
		diag_print(&d, stderr);
		plan_free(p);
		p = NULL;
	}
	diag_release(&d);
	return p;
}

/* Cells 1..done are done; cell done+1 started when `started`. */
static void point(const struct plan *p, const struct schedule *s, size_t done, int started,
		  struct run_resume_point *rp)
{
	enum cell_state *st = xcalloc(s->n + 1, sizeof(*st));
	for (size_t i = 1; i <= done && i <= s->n; i++)
		st[i] = CELL_DONE;
	if (started && done < s->n)
		st[done + 1] = CELL_STARTED;
	run_resume_point(p, s, st, rp);
	free(st);
}

static void test_point_dirs(void)
{
	/* Two volumes, counterbalanced, repeat 2: one provisioning block. */
	struct plan *p = parse("rig: 1\nname: t\ntarget:\n  dirs: [/tmp/x, /tmp/y]\n"
			       "order: counterbalance\nrepeat: 2\nsteps:\n"
			       "  - null: {}\n  - write: { files: 1, sizes: 4K }\n  - read: {}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	struct schedule s;
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 1, &s), 0);
	CU_ASSERT_EQUAL(s.n, 12);
	struct run_resume_point rp;
	struct strbuf why = STRBUF_INIT;

	point(p, &s, 0, 0, &rp); /* nothing done: start at the start */
	CU_ASSERT_EQUAL(rp.unfinished, 0);
	CU_ASSERT_EQUAL(rp.block, 0);
	CU_ASSERT_EQUAL(rp.end, 12);
	CU_ASSERT_FALSE(run_resume_may_keep(&s, &rp, &why));

	point(p, &s, 1, 0, &rp); /* after a null: no state, may keep */
	CU_ASSERT_EQUAL(rp.unfinished, 1);
	CU_ASSERT_FALSE(rp.depends);
	sb_reset(&why);
	CU_ASSERT_TRUE(run_resume_may_keep(&s, &rp, &why));

	point(p, &s, 1, 1, &rp); /* a cut-off null left nothing either */
	CU_ASSERT_TRUE(rp.started);
	CU_ASSERT_TRUE(run_resume_may_keep(&s, &rp, &why));

	point(p, &s, 2, 1, &rp); /* a cut-off write may have left files */
	sb_reset(&why);
	CU_ASSERT_FALSE(run_resume_may_keep(&s, &rp, &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why.buf, "cut off"));

	point(p, &s, 4, 0, &rp); /* both writes done: the reads need their file sets */
	CU_ASSERT_TRUE(rp.depends);
	CU_ASSERT_STRING_EQUAL(s.cells[rp.producer].step->module->name, "write");
	CU_ASSERT_STRING_EQUAL(s.cells[rp.consumer].step->module->name, "read");
	CU_ASSERT_EQUAL(s.cells[rp.producer].volume, s.cells[rp.consumer].volume);
	sb_reset(&why);
	CU_ASSERT_FALSE(run_resume_may_keep(&s, &rp, &why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why.buf, "needs what cell"));

	point(p, &s, 12, 0, &rp); /* all done */
	CU_ASSERT_EQUAL(rp.unfinished, 12);
	CU_ASSERT_FALSE(run_resume_may_keep(&s, &rp, &why));
	sb_release(&why);
	plan_schedule_free(&s);
	plan_free(p);
}

static void test_point_blocks(void)
{
	/* reprovision: repeat makes every (layout, repetition) its own block;
	 * state never crosses a block, so a resume at a block's first cell is
	 * a fresh start of that block only. */
	struct plan *p = parse("rig: 1\nname: t\ntarget:\n  image: { path: /tmp/t.img, size: 1G }\n"
			       "layouts:\n  - name: a\n    partitions:\n"
			       "      - { name: p, fs: ext4, size: 50% }\n"
			       "      - { name: q, fs: xfs, size: rest }\n"
			       "  - name: b\n    partitions:\n      - { name: r, fs: ext4, size: rest }\n"
			       "repeat: 2\nreprovision: repeat\nsteps:\n"
			       "  - write: { files: 1, sizes: 4K }\n  - read: {}\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	struct schedule s;
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 1, &s), 0);
	CU_ASSERT_EQUAL(s.n, 4 + 4 + 2 + 2);
	struct run_resume_point rp;
	point(p, &s, 6, 0, &rp); /* layout a, rep 2: write on p and q done */
	CU_ASSERT_EQUAL(rp.unfinished, 6);
	CU_ASSERT_EQUAL(rp.block, 4);
	CU_ASSERT_EQUAL(rp.end, 8);
	CU_ASSERT_TRUE(rp.depends);
	point(p, &s, 8, 1, &rp); /* layout b's first cell */
	CU_ASSERT_EQUAL(rp.block, 8);
	CU_ASSERT_EQUAL(rp.end, 10);
	CU_ASSERT_FALSE(rp.depends);
	plan_schedule_free(&s);
	plan_free(p);
}

/* --- the store --- */

static const struct store_run srun = {
	.id = "r", .plan_name = "t", .plan_text = "x", .seed = 1, .rig_version = "0",
	.started_utc = "2024-01-01T00:00:00Z",
};

/* What rig 0.1 wrote: schema version 1, made here from a new store by
 * taking back what versions 2 to 5 added (store/store.c, migrate_v2_sql to
 * migrate_v5_sql), so the product needs no constructor for old stores. */
static const char downgrade_to_v1[] =
	V5_DOWN
	"DROP TABLE time_spent;\n"
	"DROP TABLE estimates;\n"
	"DROP TABLE journal;\n"
	"ALTER TABLE run DROP COLUMN options_json;\n"
	"ALTER TABLE cells DROP COLUMN attempts;\n"
	"ALTER TABLE samples DROP COLUMN superseded;\n"
	"ALTER TABLE file_samples DROP COLUMN superseded;\n"
	"ALTER TABLE notes DROP COLUMN superseded;\n"
	"DROP TABLE resumes;\n"
	"PRAGMA user_version = 1;\n";

static struct store *store_with_cell(const char *path, int version, struct store_cell *c)
{
	struct strbuf err = STRBUF_INIT;
	struct store *s = store_create(path, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	if (version == 1)
		CU_ASSERT_EQUAL_FATAL(sqlite3_exec(store_db(s), downgrade_to_v1, NULL, NULL, NULL),
				      SQLITE_OK);
	int rc;
	if (version == 1) /* rig 0.1's run row: no options_json */
		rc = sqlite3_exec(store_db(s), "INSERT INTO run (id, plan_name, seed, seed_drawn,"
				  " started_utc, status) VALUES ('r', 't', '1', 0,"
				  " '2024-01-01T00:00:00Z', 'running')", NULL, NULL, NULL);
	else
		rc = store_begin_run(s, &srun, &err);
	CU_ASSERT_EQUAL(rc, 0);
	struct store_volume v = { .layout = "", .name = "a", .position = 1, .dir = "/x" };
	CU_ASSERT_EQUAL(store_add_volume(s, &v, &err), 0);
	c->volume_id = v.id;
	CU_ASSERT_EQUAL(store_cell_start(s, c, "t1", &err), 0);
	CU_ASSERT_EQUAL(store_add_sample(s, c->seq, "m", 1.0, "s", "", &err), 0);
	if (version == 1) { /* rig 0.1's columns */
		CU_ASSERT_EQUAL(sqlite3_exec(store_db(s), "INSERT INTO file_samples (seq, file, bytes,"
					     " seconds) VALUES (1, 'f', 10, 0.5)", NULL, NULL, NULL),
				SQLITE_OK);
	} else {
		CU_ASSERT_EQUAL(store_add_file_sample(s, c->seq, "f", 10, 0.5, &err), 0);
	}
	CU_ASSERT_EQUAL(store_add_note(s, c->seq, "k", "v", &err), 0);
	sb_release(&err);
	return s;
}

static void test_store_restart_and_migration(void)
{
	char *dir = test_tmpdir();
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&path, "%s/v2.db", dir);
	struct store_cell c = { .seq = 1, .phase = 1, .layout = "", .rep = 1, .step = "1",
				.module = "null" };
	struct store *s = store_with_cell(path.buf, 0, &c);
	uint64_t n = 9;
	CU_ASSERT_EQUAL(store_cell_restart(s, &c, "t2", &n, &err), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(store_add_sample(s, 1, "m", 2.0, "s", "", &err), 0);
	CU_ASSERT_EQUAL(store_cell_end(s, 1, "t3", "done", NULL, &err), 0);
	/* A cell never started cannot be restarted. */
	struct store_cell c2 = c;
	c2.seq = 2;
	CU_ASSERT_EQUAL(store_cell_restart(s, &c2, "t2", &n, &err), -ENOENT);
	store_close(s);
	char *v = pt_query(path.buf, "SELECT group_concat(value || ':' || superseded) FROM "
				     "(SELECT value, superseded FROM samples ORDER BY id)");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1.0:1,2.0:0");
	free(v);
	v = pt_query(path.buf, "SELECT attempts || start_utc || status FROM cells");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "2t2done");
	free(v);
	v = pt_query(path.buf, "SELECT (SELECT sum(superseded) FROM file_samples) || "
			       "(SELECT sum(superseded) FROM notes)");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "11");
	free(v);

	/* Version 1: read-only opens see version 2 through views, the file is
	 * not changed; a read-write open migrates it. */
	sb_reset(&path);
	sb_addf(&path, "%s/v1.db", dir);
	store_close(store_with_cell(path.buf, 1, &c));
	v = pt_query(path.buf, "PRAGMA user_version");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
	free(v);
	s = store_open(path.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	sqlite3_stmt *st = NULL;
	CU_ASSERT_EQUAL(sqlite3_prepare_v2(store_db(s), "SELECT count(*), sum(superseded) FROM samples"
			" WHERE superseded = 0 AND (SELECT count(*) FROM resumes) = 0"
			" AND (SELECT attempts FROM cells) = 1"
			" AND (SELECT options_json FROM run) IS NULL", -1, &st, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
	CU_ASSERT_EQUAL(sqlite3_column_int(st, 0), 1);
	sqlite3_finalize(st);
	store_close(s);
	v = pt_query(path.buf, "PRAGMA user_version");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
	free(v);
	s = store_open(path.buf, 0, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(store_cell_restart(s, &c, "t2", &n, &err), 0);
	CU_ASSERT_EQUAL(n, 1);
	store_close(s);
	v = pt_query(path.buf, "SELECT (SELECT user_version FROM pragma_user_version) || ' ' ||"
			       " (SELECT sum(superseded) FROM samples) || ' ' ||"
			       " (SELECT attempts FROM cells)");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "5 1 2");
	free(v);
	/* The migrated schema is the one a new store gets. */
	char *a = pt_query(path.buf, "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master"
				     " ORDER BY name)");
	sb_reset(&path);
	sb_addf(&path, "%s/v2.db", dir);
	char *b = pt_query(path.buf, "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master"
				     " ORDER BY name)");
	CU_ASSERT_TRUE(a && b && !strcmp(a, b));
	free(a);
	free(b);
	/* Version 2 (before the provisioning journal): read as it is with an
	 * empty journal, migrated by a read-write open. */
	sb_reset(&path);
	sb_addf(&path, "%s/v2-old.db", dir);
	s = store_with_cell(path.buf, 0, &c);
	CU_ASSERT_EQUAL(sqlite3_exec(store_db(s), V5_DOWN "DROP TABLE time_spent;"
				     " DROP TABLE estimates; DROP TABLE journal; PRAGMA user_version = 2;",
				     NULL, NULL, NULL), SQLITE_OK);
	store_close(s);
	s = store_open(path.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	char *action = NULL, *state = NULL;
	CU_ASSERT_EQUAL(store_journal_last(s, "/x.img", "*", &action, &state, &err), 0);
	store_close(s);
	v = pt_query(path.buf, "PRAGMA user_version");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "2");
	free(v);
	s = store_open(path.buf, 0, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct store_journal j = { "create-image", "/x.img", NULL, NULL, "t3" };
	int64_t id = 0;
	CU_ASSERT_EQUAL(store_journal_begin(s, &j, &id, &err), 0);
	j.action = "attach";
	CU_ASSERT_EQUAL(store_journal_begin(s, &j, &id, &err), 0);
	CU_ASSERT_EQUAL(store_journal_end(s, id, 0, "t4", &err), 0);
	/* The newest of the matching actions, with its state. */
	CU_ASSERT_EQUAL(store_journal_last(s, "/x.img", "*-image", &action, &state, &err), 1);
	CU_ASSERT_STRING_EQUAL(action ? action : "", "create-image");
	CU_ASSERT_STRING_EQUAL(state ? state : "", "begun");
	free(action);
	free(state);
	CU_ASSERT_EQUAL(store_journal_last(s, "/x.img", "*", &action, &state, &err), 1);
	CU_ASSERT_STRING_EQUAL(action ? action : "", "attach");
	CU_ASSERT_STRING_EQUAL(state ? state : "", "failed");
	free(action);
	free(state);
	store_close(s);
	v = pt_query(path.buf, "PRAGMA user_version");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "5");
	free(v);
	sb_release(&path);
	sb_release(&err);
	test_rmtree(dir);
	free(dir);
}

/* --- end to end --- */

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Start rig with args, its output into the file log (NULL: discarded). */
static pid_t start_logged(const char *const *args, const char *log)
{
	const char **argv = test_rig_argv(args);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	free(argv);
	return pid;
}

/* Start rig with args (output discarded); kill -9 it after ms milliseconds
 * unless it ended. Returns its exit status, or -SIGKILL when killed. */
static int run_killed(const char *const *args, double ms)
{
	pid_t pid = start_logged(args, NULL);
	double t0 = now_ms();
	int status = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (now_ms() - t0 >= ms)
			break;
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -SIGKILL;
}

/* Start rig with args; kill -9 it once sql, asked of the run folder out's
 * results.db, gives "1" (the event: a cell is running, a resume is
 * recorded), waiting at most RUN_EVENT_MS. Returns its exit status (and
 * prints its output: it ended before the event), -SIGKILL when killed at
 * the event, -SIGALRM when the event never came. */
#define RUN_EVENT_MS 120000.0
static int run_killed_when(const char *const *args, const char *out, const char *sql)
{
	struct strbuf log = STRBUF_INIT;
	sb_addf(&log, "%s.log", out);
	pid_t pid = start_logged(args, log.buf);
	double t0 = now_ms();
	int status = 0, seen = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid) {
			char *text = test_read_file(log.buf, NULL);
			printf("\n  rig %s ended before the event (%s): status %d, output:\n%s\n", args[0],
			       sql, status, text ? text : "");
			free(text);
			sb_release(&log);
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		char *v = pt_run_query(out, sql);
		seen = v && strcmp(v, "1") == 0;
		free(v);
		if (seen || now_ms() - t0 >= RUN_EVENT_MS)
			break;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	unlink(log.buf);
	sb_release(&log);
	if (!seen)
		return -SIGALRM;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -SIGKILL;
}

static const char *const per_cell_sql[] = {
	"SELECT count(*) || ' cells, ' || sum(status = 'done') || ' done' FROM cells",
	"SELECT group_concat(x, ',') FROM (SELECT seq || ':' || metric AS x FROM samples"
	" WHERE superseded = 0 ORDER BY seq, metric)",
	"SELECT group_concat(x, ',') FROM (SELECT seq || ':' || file AS x FROM file_samples"
	" WHERE superseded = 0 ORDER BY seq, file)",
	"SELECT group_concat(x, ',') FROM (SELECT seq || ':' || step || ':' || module || ':' ||"
	" phase || ':' || rep AS x FROM cells ORDER BY seq)",
	"SELECT status FROM run",
};

static int count_lines_of(const char *path)
{
	char *t = test_read_file(path, NULL);
	int n = 0;
	for (const char *c = t; c && *c; c++)
		n += *c == '\n';
	free(t);
	return t ? n : -1;
}

/* The resumed run against the uninterrupted one. */
static int same_as_reference(const char *out, const char *ref, int seed)
{
	int bad = 0;
	for (size_t i = 0; i < sizeof(per_cell_sql) / sizeof(per_cell_sql[0]); i++) {
		char *a = pt_run_query(out, per_cell_sql[i]);
		char *b = pt_run_query(ref, per_cell_sql[i]);
		if (!a || !b || strcmp(a, b)) {
			fprintf(stderr, "\nseed %d: %s\n  resumed:        %.300s\n  uninterrupted:  %.300s\n",
				seed, per_cell_sql[i], a ? a : "(null)", b ? b : "(null)");
			bad++;
		}
		free(a);
		free(b);
	}
	const char *csvs[] = { "results.csv", "files.csv" };
	for (size_t i = 0; i < 2; i++) {
		struct strbuf pa = STRBUF_INIT, pb = STRBUF_INIT;
		sb_addf(&pa, "%s/%s", out, csvs[i]);
		sb_addf(&pb, "%s/%s", ref, csvs[i]);
		int na = count_lines_of(pa.buf), nb = count_lines_of(pb.buf);
		if (na != nb || na < 2) {
			fprintf(stderr, "\nseed %d: %s has %d lines, uninterrupted %d\n", seed, csvs[i],
				na, nb);
			bad++;
		}
		sb_release(&pa);
		sb_release(&pb);
	}
	/* Cells run more than once were run by a resume. */
	char *v = pt_run_query(out, "SELECT (SELECT count(*) FROM cells WHERE attempts > 1) = 0"
				    " OR (SELECT count(*) FROM resumes) > 0");
	if (!v || strcmp(v, "1"))
		bad++;
	free(v);
	return bad;
}

/* Resumes that kept the provisioning, in this process (a kill worker). */
static int kept;

/*
 * Kill `rig run` at a random point, resume (every third seed kill the
 * first resume too), and resume until it says completed. Returns the
 * number of problems.
 */
static int kill_and_resume(const char *plan, const char *out, const char *ref, int seed,
			   double span_ms, int *resumed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(seed + 1);
	double at = (double)(rnd(&x) % 1000) / 1000.0 * span_ms;
	const char *run[] = { "run", "-q", "--seed", "11", "-o", out, plan, NULL };
	int rc = run_killed(run, at);
	const char *res[] = { "resume", "-q", out, NULL };
	if (rc == -SIGKILL && seed % 3 == 0) {
		double at2 = (double)(rnd(&x) % 1000) / 1000.0 * span_ms;
		run_killed(res, at2);
	}
	if (rc == -SIGKILL)
		(*resumed)++;
	char *o = NULL;
	for (int k = 0; k < 3; k++) {
		free(o);
		rc = test_run_rig(res, &o);
		if (rc == 0)
			break;
	}
	if (rc == 2 && o && (strstr(o, "stopped before it recorded anything") ||
			     access(out, F_OK) < 0)) {
		free(o); /* killed within its first milliseconds: nothing to resume */
		(*resumed)--;
		return 0;
	}
	if (rc != 0) {
		fprintf(stderr, "\nseed %d: rig resume exited %d: %s\n", seed, rc, o ? o : "");
		free(o);
		return 1;
	}
	free(o);
	char *k = pt_run_query(out, "SELECT count(*) FROM resumes WHERE reprovisioned = 0");
	kept += k ? atoi(k) : 0;
	free(k);
	return same_as_reference(out, ref, seed);
}

/* Kept small: every write cell fills a 64 MiB payload pool, which the
 * sanitizers make slow. */
static const char kill_steps[] =
	"report: { formats: [csv] }\norder: counterbalance\n"
	"cache: { flush: false, direct: false }\nsteps:\n"
	"  - null: { value: 1, time: 20ms }\n"
	"  - null: { value: 2, files: 2 }\n"
	"  - write: { files: 2, size: 4K, block: 4K, sync: false }\n"
	"  - read: {}\n"
	"  - null: { value: 3 }\n";

/* The plan of worker w, in its own folder wdir (its image, its dirs). */
static void kill_plan(struct strbuf *text, const char *wdir, int image)
{
	if (image)
		sb_addf(text, "rig: 1\nname: killimg\ntarget:\n"
			      "  image: { path: \"%s/d.img\", size: 32M }\n"
			      "layouts:\n  - name: one\n    partitions:\n"
			      "      - { name: p1, fs: ext4, size: 50%% }\n"
			      "      - { name: p2, fs: ext4, size: rest }\n%s", wdir, kill_steps);
	else
		sb_addf(text, "rig: 1\nname: kill\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n%s", wdir,
			wdir, kill_steps);
}

/* What a seed may leave: nothing. 0, or 1 with a message. */
static int left_behind(const char *wdir, const char *out, int image, int seed)
{
	struct strbuf w = STRBUF_INIT, what = STRBUF_INIT;
	const char *slash = strrchr(out, '/');
	int bad = 0;
	if (image) {
		sb_addf(&w, "%s/d.img", wdir);
		int left = pt_leftovers(wdir, &what);
		if (left || access(w.buf, F_OK) == 0) {
			fprintf(stderr, "\nseed %d: left behind: %s%s\n", seed, what.buf,
				access(w.buf, F_OK) == 0 ? " the image" : "");
			unlink(w.buf);
			bad = 1;
		}
	} else {
		sb_addf(&w, "%s/a/rig-%s", wdir, slash + 1);
		if (access(w.buf, F_OK) == 0) {
			fprintf(stderr, "\nseed %d: %s was left behind\n", seed, w.buf);
			bad = 1;
		}
	}
	sb_release(&w);
	sb_release(&what);
	return bad;
}

/*
 * The kill -9 test: `workers` processes (each in its own folder, with its
 * own plan, image and directories) take the seeds in turn; every seed
 * kills a run at a random point, resumes it (sometimes killing the resume
 * too) and compares the result with one uninterrupted run. Returns the
 * number of problems; *resumed counts the runs that were really cut off.
 */
static int kill_test(const char *tmp, int image, int seeds, int workers, int *resumed)
{
	struct strbuf wdir = STRBUF_INIT, plan = STRBUF_INIT, text = STRBUF_INIT,
		      ref = STRBUF_INIT, out = STRBUF_INIT;
	sb_addf(&ref, "%s/ref", tmp);
	double span = 0;
	int bad = 0;
	for (int w = 0; w < workers; w++) {
		sb_reset(&wdir);
		sb_addf(&wdir, "%s/w%d", tmp, w);
		mkdir(wdir.buf, 0777);
		sb_reset(&text);
		kill_plan(&text, wdir.buf, image);
		sb_reset(&plan);
		sb_addf(&plan, "%s/plan.yaml", wdir.buf);
		if (test_write_file(plan.buf, text.buf) < 0)
			bad++;
		if (w == 0) { /* the uninterrupted run, and how long it takes */
			const char *args[] = { "run", "-q", "--seed", "11", "-o", ref.buf, plan.buf, NULL };
			double t0 = now_ms();
			if (run_killed(args, 60000) != 0)
				bad++;
			span = now_ms() - t0;
		}
	}
	pid_t *pids = xcalloc((size_t)workers, sizeof(pid_t));
	for (int w = 0; w < workers && !bad; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			int mine = 0, cut = 0;
			sb_reset(&wdir);
			sb_addf(&wdir, "%s/w%d", tmp, w);
			sb_reset(&plan);
			sb_addf(&plan, "%s/plan.yaml", wdir.buf);
			for (int seed = 1 + w; seed <= seeds; seed += workers) {
				sb_reset(&out);
				sb_addf(&out, "%s/run%d", wdir.buf, seed);
				mine += kill_and_resume(plan.buf, out.buf, ref.buf, seed, span, &cut);
				mine += left_behind(wdir.buf, out.buf, image, seed);
			}
			sb_reset(&text);
			sb_addf(&text, "%d %d %d\n", mine, cut, kept);
			sb_reset(&out);
			sb_addf(&out, "%s/counts", wdir.buf);
			_exit(test_write_file(out.buf, text.buf) < 0 || mine ? 1 : 0);
		}
	}
	int nkept = 0;
	for (int w = 0; w < workers && pids[w] > 0; w++) {
		int st = 0, mine = 1, cut = 0, k = 0;
		waitpid(pids[w], &st, 0);
		sb_reset(&out);
		sb_addf(&out, "%s/w%d/counts", tmp, w);
		char *c = test_read_file(out.buf, NULL);
		if (!c || sscanf(c, "%d %d %d", &mine, &cut, &k) != 3 || !WIFEXITED(st))
			mine = mine ? mine : 1;
		free(c);
		bad += mine;
		*resumed += cut;
		nkept += k;
	}
	free(pids);
	fprintf(stderr, "[%d seeds: %d cut off and resumed (%d kept the provisioning), %d problems; "
			"one run %.0f ms] ", seeds, *resumed, nkept, bad, span);
	sb_release(&wdir);
	sb_release(&plan);
	sb_release(&text);
	sb_release(&ref);
	sb_release(&out);
	return bad;
}

/* RIG_RESUME_SEEDS: more seeds for a longer soak (default 20). */
static int kill_seeds(void)
{
	const char *e = getenv("RIG_RESUME_SEEDS");
	return e && atoi(e) > 0 ? atoi(e) : 20;
}

static void test_kill_dirs(void)
{
	char *tmp = test_tmpdir();
	int resumed = 0;
	CU_ASSERT_EQUAL(kill_test(tmp, 0, kill_seeds(), 2, &resumed), 0);
	CU_ASSERT_TRUE(resumed >= 5); /* most kills land inside the run */
	test_rmtree(tmp);
	free(tmp);
}

static void test_kill_image(void)
{
	if (!pt_have_tools()) {
		fprintf(stderr, "\n  SKIPPED: the Linux provisioning tools are not installed\n");
		return;
	}
	char *tmp = test_tmpdir();
	int resumed = 0;
	/* sgdisk waits about a second for the kernel on every layout: the
	 * workers overlap those waits. */
	CU_ASSERT_EQUAL(kill_test(tmp, 1, kill_seeds(), 4, &resumed), 0);
	CU_ASSERT_TRUE(resumed >= 5);
	struct strbuf what = STRBUF_INIT;
	CU_ASSERT_EQUAL(pt_leftovers(tmp, &what), 0);
	sb_release(&what);
	test_rmtree(tmp);
	free(tmp);
}

/* The commands a killed run left running are found by argument and folder. */
static void test_orphans(void)
{
	char *tmp = test_tmpdir();
	struct strbuf arg = STRBUF_INIT, dir = STRBUF_INIT, err = STRBUF_INIT;
	struct strbuf loop10 = STRBUF_INIT;
	sb_addf(&arg, "%s/d.img", tmp);
	sb_addf(&loop10, "%s/loop10", tmp);
	sb_addf(&dir, "%s/mnt", tmp);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir.buf, 0777), 0);
	pid_t a = fork();
	if (a == 0) { /* an argument naming the image (a late losetup) */
		execlp("sh", "sh", "-c", "sleep 0.6; :", "sh", arg.buf, loop10.buf, (char *)NULL);
		_exit(127);
	}
	pid_t b = fork();
	if (b == 0) { /* working below the mount points (an exec'd benchmark) */
		if (chdir(dir.buf) == 0)
			execlp("sleep", "sleep", "0.6", (char *)NULL);
		_exit(127);
	}
	struct timespec ts = { 0, 100000000 };
	nanosleep(&ts, NULL);
	const char *both[] = { arg.buf, dir.buf, NULL };
	struct strbuf what = STRBUF_INIT;
	CU_ASSERT_EQUAL(prov_linux_procs_using("", both, &what), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(what.buf, "d.img"));
	/* loop1 is not loop10: a needle followed by a digit is another name */
	struct strbuf other = STRBUF_INIT;
	sb_addf(&other, "%s/loop1", tmp);
	const char *shorter[] = { other.buf, NULL };
	CU_ASSERT_EQUAL(prov_linux_procs_using("", shorter, NULL), 0);
	sb_addch(&other, '0');
	CU_ASSERT_EQUAL(prov_linux_procs_using("", shorter, NULL), 1);
	struct plan on_linux = { .platform = plan_platform_find("linux") };
	struct provision_ctx ctx = { .plan = &on_linux, .err = &err };
	double t0 = now_ms();
	CU_ASSERT_EQUAL(prov_wait_orphans(&ctx, both), 0); /* until both have ended */
	CU_ASSERT_TRUE(now_ms() - t0 >= 300);
	CU_ASSERT_EQUAL(prov_linux_procs_using("", both, NULL), 0);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	sb_release(&what);
	sb_release(&other);
	sb_release(&loop10);
	sb_release(&arg);
	sb_release(&dir);
	sb_release(&err);
	test_rmtree(tmp);
	free(tmp);
}

/* A test's folder: TMP/plan.yaml from fmt (its one %s is TMP) and tail,
 * and TMP/out for the run folder. */
struct fx {
	char *tmp;
	struct strbuf plan, out;
};

static void fx_open(struct fx *f, const char *fmt, const char *tail)
{
	struct strbuf text = STRBUF_INIT;
	f->tmp = test_tmpdir();
	sb_init(&f->plan);
	sb_init(&f->out);
	sb_addf(&text, fmt, f->tmp);
	sb_adds(&text, tail);
	sb_addf(&f->plan, "%s/plan.yaml", f->tmp);
	sb_addf(&f->out, "%s/out", f->tmp);
	CU_ASSERT_EQUAL(test_write_file(f->plan.buf, text.buf), 0);
	sb_release(&text);
}

static void fx_close(struct fx *f)
{
	sb_release(&f->plan);
	sb_release(&f->out);
	test_rmtree(f->tmp);
	free(f->tmp);
}

/* --- what resume refuses, and a completed run --- */

static void test_refusals(void)
{
	struct fx f;
	fx_open(&f, "rig: 1\nname: ref\ntarget:\n  dirs: [\"%s/a\"]\n",
		"steps:\n  - null: {}\n  - null: { time: 30s }\n");
	struct strbuf p = STRBUF_INIT;
	char *o = NULL;

	/* A live run is never resumed next to itself. */
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(test_rig_bin(), test_rig_bin(), "run", "-q", "-o", f.out.buf, f.plan.buf,
		      (char *)NULL);
		_exit(127);
	}
	sb_addf(&p, "%s/results.db", f.out.buf);
	char *v = NULL;
	for (int i = 0; i < 300; i++) {
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
		free(v);
		v = access(p.buf, R_OK) == 0 ? pt_query(p.buf, "SELECT count(*) FROM cells") : NULL;
		if (v && !strcmp(v, "2"))
			break;
	}
	free(v);
	const char *res[] = { "resume", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 2);
	CU_ASSERT(o && strstr(o, "still going"));
	free(o);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	/* Another rig version. */
	sqlite3 *db;
	CU_ASSERT_EQUAL(sqlite3_open(p.buf, &db), SQLITE_OK);
	sqlite3_exec(db, "UPDATE run SET rig_version = '0.0.1'", NULL, NULL, NULL);
	sqlite3_close(db);
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 2);
	CU_ASSERT(o && strstr(o, "made by rig 0.0.1"));
	free(o);
	CU_ASSERT_EQUAL(sqlite3_open(p.buf, &db), SQLITE_OK);
	sqlite3_exec(db, "UPDATE run SET rig_version = '" RIG_VERSION "'", NULL, NULL, NULL);
	sqlite3_close(db);

	/* The plan changed on disk. */
	sb_reset(&p);
	sb_addf(&p, "%s/plan.yaml", f.out.buf);
	char *orig = test_read_file(p.buf, NULL);
	CU_ASSERT_EQUAL(chmod(p.buf, 0644), 0);
	struct strbuf changed = STRBUF_INIT;
	sb_addf(&changed, "%s# changed\n", orig ? orig : "");
	CU_ASSERT_EQUAL(test_write_file(p.buf, changed.buf), 0);
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 2);
	CU_ASSERT(o && strstr(o, "was changed since the run started"));
	free(o);
	CU_ASSERT_EQUAL(test_write_file(p.buf, orig ? orig : ""), 0);
	free(orig);
	sb_release(&changed);

	/* A target that cannot be prepared (here: no tools on PATH for an image
	 * target; as root only, since the backend checks root first): refused,
	 * the run's state unchanged. */
	if (geteuid() == 0 && pt_have_tools()) {
		struct strbuf ip = STRBUF_INIT, iout = STRBUF_INIT, itext = STRBUF_INIT;
		sb_addf(&itext, "rig: 1\nname: img\ntarget:\n  image: { path: \"%s/i.img\", size: 32M }\n"
				"layouts:\n  - name: l\n    partitions:\n      - { name: p, fs: ext4, size: rest }\n"
				"report: { formats: [csv] }\nsteps:\n  - null: { time: 2s }\n", f.tmp);
		sb_addf(&ip, "%s/img.yaml", f.tmp);
		CU_ASSERT_EQUAL(test_write_file(ip.buf, itext.buf), 0);
		sb_addf(&iout, "%s/iout", f.tmp);
		const char *irun[] = { "run", "-q", "-o", iout.buf, ip.buf, NULL };
		CU_ASSERT_EQUAL(run_killed_when(irun, iout.buf,
						"SELECT count(*) FROM cells WHERE status = 'running'"),
				-SIGKILL);
		const char *ires[] = { "resume", iout.buf, NULL };
		char *path = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
		setenv("PATH", "/nonexistent", 1);
		int irc = test_run_rig(ires, &o);
		if (path)
			setenv("PATH", path, 1);
		free(path);
		CU_ASSERT_EQUAL(irc, 2);
		CU_ASSERT(o && strstr(o, "missing tools"));
		free(o);
		v = pt_run_query(iout.buf, "SELECT status || ' ' || (SELECT count(*) FROM resumes)"
					   " FROM run");
		CU_ASSERT_STRING_EQUAL(v ? v : "", "running 0");
		free(v);
		/* and with the tools it resumes, leaving nothing behind */
		CU_ASSERT_EQUAL(test_run_rig(ires, &o), 0);
		free(o);
		struct strbuf what = STRBUF_INIT;
		CU_ASSERT_EQUAL(pt_leftovers(f.tmp, &what), 0);
		sb_reset(&ip);
		sb_addf(&ip, "%s/i.img", f.tmp);
		unlink(ip.buf);
		sb_release(&what);
		sb_release(&ip);
		sb_release(&iout);
		sb_release(&itext);
	}

	/* Not a run folder. */
	const char *bad[] = { "resume", f.tmp, NULL };
	CU_ASSERT_EQUAL(test_run_rig(bad, &o), 2);
	free(o);
	CU_ASSERT_EQUAL(test_run_rig((const char *[]){ "resume", NULL }, &o), 2);
	CU_ASSERT(o && strstr(o, "usage: rig resume"));
	free(o);

	sb_release(&p);
	fx_close(&f);
}

static void test_completed_and_report(void)
{
	struct fx f;
	fx_open(&f, "rig: 1\nname: done\ntarget:\n  dirs: [\"%s/a\"]\n",
		"report: { formats: [html, csv, json] }\nsteps:\n  - null: {}\n"
		"  - null: { time: 30s }\n");
	struct strbuf text = STRBUF_INIT, p = STRBUF_INIT;
	const char *run[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	/* Killed in the 30 s cell, and the resume killed in it again: the
	 * report of the run as it stands says it was resumed. */
	CU_ASSERT_EQUAL(run_killed_when(run, f.out.buf,
					"SELECT sum(status = 'done') = 1 AND sum(status = 'running') = 1"
					" FROM cells"),
			-SIGKILL);
	const char *res[] = { "resume", "-q", f.out.buf, NULL };
	CU_ASSERT_EQUAL(run_killed_when(res, f.out.buf,
					"SELECT count(*) FROM resumes WHERE (SELECT count(*)"
					" FROM cells WHERE status = 'running') > 0"),
			-SIGKILL);
	char *v = pt_run_query(f.out.buf, "SELECT count(*) FROM resumes");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
	free(v);
	/* rig report of a resumed run says so. */
	char *o = NULL;
	const char *rep[] = { "report", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(rep, &o), 0);
	free(o);
	sb_addf(&p, "%s/report.html", f.out.buf);
	char *html = test_read_file(p.buf, NULL);
	CU_ASSERT(html && strstr(html, "This run was resumed 1 time"));
	free(html);
	sb_reset(&p);
	sb_addf(&p, "%s/results.json", f.out.buf);
	char *json = test_read_file(p.buf, NULL);
	CU_ASSERT(json && strstr(json, "\"resumes\":[{\"started_utc\""));
	free(json);

	/* A completed run: resume says so, changes nothing, exit 0. */
	sb_reset(&text);
	sb_addf(&text, "rig: 1\nname: done\ntarget:\n  dirs: [\"%s/a\"]\nsteps:\n  - null: {}\n", f.tmp);
	CU_ASSERT_EQUAL(test_write_file(f.plan.buf, text.buf), 0);
	sb_reset(&f.out);
	sb_addf(&f.out, "%s/out2", f.tmp);
	const char *run2[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(run2, &o), 0);
	free(o);
	const char *res2[] = { "resume", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res2, &o), 0);
	CU_ASSERT(o && strstr(o, "completed; there is nothing to resume"));
	free(o);
	v = pt_run_query(f.out.buf, "SELECT count(*) FROM resumes");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "0");
	free(v);
	sb_release(&text);
	sb_release(&p);
	fx_close(&f);
}

/*
 * A kill after the run's end but while its reports were being written: the
 * files written so far exist (each is renamed into place whole), the rest
 * do not, and the store has no "reports written" event after the end.
 * `rig resume` writes them; with the event there, it leaves them alone.
 */
static void test_completed_reports_cut(void)
{
	struct fx f;
	fx_open(&f, "rig: 1\nname: cut\ntarget:\n  dirs: [\"%s/a\"]\n", "steps:\n  - null: {}\n");
	char *o = NULL;
	const char *run[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	CU_ASSERT_EQUAL_FATAL(test_run_rig(run, &o), 0);
	free(o);
	char *n = pt_run_query(f.out.buf, "SELECT count(*) FROM events, run WHERE msg = "
					  "'reports written' AND utc >= run.ended_utc");
	CU_ASSERT_STRING_EQUAL(n ? n : "", "1");
	free(n);
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/findings.csv", f.out.buf);
	/* all there: nothing to do */
	const char *res[] = { "resume", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 0);
	CU_ASSERT(o && strstr(o, "nothing to resume") && !strstr(o, "written again"));
	free(o);
	/* cut after results.csv: findings.csv missing, no event */
	CU_ASSERT_EQUAL(unlink(p.buf), 0);
	struct strbuf db = STRBUF_INIT;
	sb_addf(&db, "%s/results.db", f.out.buf);
	sqlite3 *h;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(db.buf, &h), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_exec(h, "DELETE FROM events WHERE msg = 'reports written'", NULL,
				     NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 0);
	CU_ASSERT(o && strstr(o, "written again"));
	free(o);
	CU_ASSERT_EQUAL(access(p.buf, F_OK), 0);
	sb_release(&db);
	sb_release(&p);
	fx_close(&f);
}

/* A run of rig 0.1 (schema 1): made by downgrading a new store. */
static void test_v1_run(void)
{
	struct fx f;
	fx_open(&f, "rig: 1\nname: old\ntarget:\n  dirs: [\"%s/a\"]\n",
		"steps:\n  - null: { files: 2 }\n  - null: {}\n");
	struct strbuf p = STRBUF_INIT;
	char *o = NULL;
	const char *run[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	CU_ASSERT_EQUAL_FATAL(test_run_rig(run, &o), 0);
	free(o);
	sb_addf(&p, "%s/results.csv", f.out.buf);
	char *csv = test_read_file(p.buf, NULL);
	sb_reset(&p);
	sb_addf(&p, "%s/results.db", f.out.buf);
	sqlite3 *db;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(p.buf, &db), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_exec(db, V5_DOWN "ALTER TABLE run DROP COLUMN options_json;"
				     "ALTER TABLE cells DROP COLUMN attempts;"
				     "ALTER TABLE samples DROP COLUMN superseded;"
				     "ALTER TABLE file_samples DROP COLUMN superseded;"
				     "ALTER TABLE notes DROP COLUMN superseded;"
				     "DROP TABLE time_spent; DROP TABLE estimates;"
				     "DROP TABLE resumes; DROP TABLE journal; PRAGMA user_version = 1;",
				     NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	/* rig report reads it as it is, without changing it. */
	const char *rep[] = { "report", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(rep, &o), 0);
	free(o);
	char *v = pt_query(p.buf, "PRAGMA user_version");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
	free(v);
	sb_reset(&p);
	sb_addf(&p, "%s/results.csv", f.out.buf);
	char *again = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(csv && again && !strcmp(csv, again));
	free(csv);
	free(again);
	/* An unfinished version 1 run cannot be resumed (its options are unknown);
	 * the read-write open has migrated the store. */
	sb_reset(&p);
	sb_addf(&p, "%s/results.db", f.out.buf);
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(p.buf, &db), SQLITE_OK);
	sqlite3_exec(db, "UPDATE run SET status = 'running'", NULL, NULL, NULL);
	sqlite3_close(db);
	const char *res[] = { "resume", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 2);
	CU_ASSERT(o && strstr(o, "results store schema 1"));
	free(o);
	v = pt_query(p.buf, "PRAGMA user_version");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "5");
	free(v);
	sb_release(&p);
	fx_close(&f);
}

/* The sizes `write: { files: 4, size: 4K..64K }` draws as step 2 of
 * repetition 1 on a dirs target (layout "") with seed 7, file by file. */
static char *crn_sizes(unsigned scheme)
{
	struct size_dist d;
	const char *why = NULL;
	struct strbuf sb = STRBUF_INIT;
	if (units_parse_dist("4K..64K", &d, &why) < 0)
		return sb_detach(&sb);
	struct cell c = { .rep = 1, .path = (char *)"2" };
	uint64_t sizes[4];
	mod_seqio_draw_sizes(&d, prng_derive_seed(plan_schedule_cell_seed(7, scheme, "", &c), "seqio/sizes"),
			 sizes, 4);
	for (size_t i = 0; i < 4; i++)
		sb_addf(&sb, "%s%llu", i ? " " : "", (unsigned long long)sizes[i]);
	units_dist_release(&d);
	return sb_detach(&sb);
}

/* The run as a rig before common random numbers would have left it, stopped
 * before its second cell: options_json with `seeds` set to what `set`
 * says (SQL; NULL: removed), cell 2 and its samples gone. */
static int crn_stop(const char *out, const char *set)
{
	struct strbuf sql = STRBUF_INIT, db = STRBUF_INIT;
	sb_addf(&db, "%s/results.db", out);
	sb_addf(&sql, "UPDATE run SET status = 'interrupted', options_json = %s;"
		      "DELETE FROM file_samples WHERE seq = 2; DELETE FROM samples WHERE seq = 2;"
		      "DELETE FROM notes WHERE seq = 2; DELETE FROM cells WHERE seq = 2;",
		set ? set : "json_remove(options_json, '$.seeds')");
	sqlite3 *h = NULL;
	int rc = sqlite3_open(db.buf, &h) == SQLITE_OK &&
		 sqlite3_exec(h, sql.buf, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	sqlite3_close(h);
	sb_release(&sql);
	sb_release(&db);
	return rc;
}

/* Common random numbers (plan_schedule_cell_seed): a new run records scheme 2
 * and draws by it; a run recorded before (no `seeds` in its options)
 * resumes with the draws it began with, the layout's name in each cell's
 * seed; a scheme this rig does not know is refused. */
static void test_seed_scheme(void)
{
	struct fx f;
	fx_open(&f, "rig: 1\nname: crn\nseed: 7\ntarget:\n  dirs: [\"%s/a\"]\n",
		"report: { formats: [csv] }\nsteps:\n  - null: {}\n"
		"  - write: { files: 4, size: 4K..64K }\n");
	const char *sizes_q = "SELECT group_concat(bytes, ' ') FROM (SELECT bytes FROM file_samples"
			      " WHERE superseded = 0 ORDER BY file)";
	char *o = NULL, *now = crn_sizes(SEED_COMMON), *before = crn_sizes(SEED_LAYOUT);
	CU_ASSERT_STRING_NOT_EQUAL(now, before);
	const char *run[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
	CU_ASSERT_EQUAL_FATAL(test_run_rig(run, &o), 0);
	free(o);
	char *v = pt_run_query(f.out.buf, "SELECT json_extract(options_json, '$.seeds') FROM run");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "2");
	free(v);
	v = pt_run_query(f.out.buf, sizes_q);
	CU_ASSERT_STRING_EQUAL(v ? v : "", now);
	free(v);

	CU_ASSERT_EQUAL_FATAL(crn_stop(f.out.buf, NULL), 0);
	const char *res[] = { "resume", "-q", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 0);
	free(o);
	v = pt_run_query(f.out.buf, sizes_q);
	CU_ASSERT_STRING_EQUAL(v ? v : "", before);
	free(v);

	CU_ASSERT_EQUAL_FATAL(crn_stop(f.out.buf, "json_set(options_json, '$.seeds', 9)"), 0);
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 2);
	CU_ASSERT(o && strstr(o, "seed scheme 9, which this rig does not know"));
	free(o);
	free(now);
	free(before);
	fx_close(&f);
}

/* rig run -q -o OUT PLAN in folder cwd (NULL: this one), killed with
 * SIGKILL once its second cell has started (db: its results.db). */
static void run_killed_in_cell_2(const char *cwd, const char *out, const char *plan,
				 const char *db)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		if (cwd && chdir(cwd) < 0)
			_exit(127);
		execl(test_rig_bin(), test_rig_bin(), "run", "-q", "-o", out, plan, (char *)NULL);
		_exit(127);
	}
	char *v = NULL;
	for (int i = 0; i < 1000; i++) { /* until cell 2 has started */
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
		free(v);
		v = access(db, R_OK) == 0 ? pt_query(db, "SELECT count(*) FROM cells") : NULL;
		if (v && !strcmp(v, "2"))
			break;
	}
	free(v);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * Killed in a long `null` cell that is not its layout's first, with no
 * module state before it: the resume keeps the provisioning (the work
 * folders; as root the loop device and its mounts) and starts at that cell.
 */
static void kept_case(int image)
{
	struct fx f;
	fx_open(&f, image ? "rig: 1\nname: keep\ntarget:\n  image: { path: \"%s/k.img\", size: 32M }\n"
			    "layouts:\n  - name: one\n    partitions:\n"
			    "      - { name: p1, fs: ext4, size: rest }\n"
			  : "rig: 1\nname: keep\ntarget:\n  dirs: [\"%s/a\"]\n",
		"report: { formats: [csv] }\ncache: { flush: false, direct: false }\nsteps:\n"
		"  - null: { value: 1 }\n  - null: { value: 2, time: 1500ms }\n"
		"  - null: { value: 3 }\n");
	struct strbuf db = STRBUF_INIT;
	sb_addf(&db, "%s/results.db", f.out.buf);
	run_killed_in_cell_2(NULL, f.out.buf, f.plan.buf, db.buf);
	char *v = NULL;
	char *o = NULL;
	const char *res[] = { "resume", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 0);
	CU_ASSERT(o && strstr(o, "was kept as recorded"));
	free(o);
	v = pt_query(db.buf, "SELECT reprovisioned || ' ' || from_seq || ' ' || first_unfinished ||"
			     " ' ' || (SELECT group_concat(attempts) FROM cells) FROM resumes");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "0 2 2 1,2,1");
	free(v);
	v = pt_query(db.buf, "SELECT group_concat(value) FROM (SELECT value FROM samples WHERE"
			     " superseded = 0 AND metric = 'value' ORDER BY seq)");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1.0,2.0,3.0");
	free(v);
	if (image) {
		/* Provisioned once: one mkfs; and nothing left. */
		sb_reset(&db);
		sb_addf(&db, "%s/commands.log", f.out.buf);
		char *log = test_read_file(db.buf, NULL);
		int mkfs = 0;
		for (const char *c = log; c && (c = strstr(c, "$ mkfs.ext4")); c++)
			mkfs++;
		CU_ASSERT_EQUAL(mkfs, 1);
		CU_ASSERT(log && strstr(log, "kept what the interrupted run provisioned"));
		free(log);
		struct strbuf what = STRBUF_INIT;
		CU_ASSERT_EQUAL(pt_leftovers(f.tmp, &what), 0);
		sb_release(&what);
	} else {
		sb_reset(&db);
		sb_addf(&db, "%s/a/rig-out", f.tmp);
		CU_ASSERT_NOT_EQUAL(access(db.buf, F_OK), 0);
	}
	sb_release(&db);
	fx_close(&f);
}

static void test_kept_dirs(void)
{
	kept_case(0);
}

/*
 * A dirs target given by --var (`dirs: [$d]`: each host of a fleet its own
 * folder), killed in its second cell: the value is the run's record, so
 * `rig resume` needs no --var, works in the same folder and completes.
 */
static void test_dirs_var_resumed(void)
{
	struct fx f;
	fx_open(&f, "rig: 1\nname: keepvar\ntarget:\n  dirs: [$d]\n",
		"report: { formats: [csv] }\ncache: { flush: false, direct: false }\nsteps:\n"
		"  - null: { value: 1 }\n  - null: { value: 2, time: 1500ms }\n"
		"  - null: { value: 3 }\n");
	struct strbuf var = STRBUF_INIT;
	sb_addf(&var, "d=%s/scratch", f.tmp);
	const char *run[] = { "run", "-q", "--var", var.buf, "-o", f.out.buf, f.plan.buf, NULL };
	CU_ASSERT_EQUAL(run_killed_when(run, f.out.buf, "SELECT count(*) = 2 FROM cells"),
			-SIGKILL);
	char *o = NULL;
	const char *res[] = { "resume", f.out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(res, &o), 0);
	CU_ASSERT(o && strstr(o, "was kept as recorded"));
	free(o);
	char *v = pt_run_query(f.out.buf, "SELECT (SELECT group_concat(value) FROM (SELECT value"
				       " FROM samples WHERE superseded = 0 AND metric = 'value' ORDER BY seq)) || ' ' ||"
				       " (SELECT group_concat(DISTINCT name || '=' || dir) FROM volumes)");
	struct strbuf want = STRBUF_INIT;
	sb_addf(&want, "1.0,2.0,3.0 scratch=%s/scratch/rig-out", f.tmp);
	CU_ASSERT_STRING_EQUAL(v ? v : "", want.buf);
	if (!v || strcmp(v, want.buf))
		fprintf(stderr, "\nthe store has: %s\n", v ? v : "(nothing)");
	free(v);
	sb_release(&want);
	sb_release(&var);
	fx_close(&f);
}

/*
 * Killed with SIGKILL during provisioning (RIG_FAULT: just before the Nth
 * command NAME), then its commands.log deleted: `rig resume` finds what the
 * run made from the provisioning journal in the store and from the machine,
 * tears it down, and completes the run; nothing is left. Killed before
 * losetup, the image file exists and is attached nowhere: only the journal
 * says it is the run's (else it is refused as someone else's file).
 */
static void test_journal_without_log(void)
{
	static const struct {
		const char *fault;
		const char *begun; /* the action the kill left begun */
	} kills[] = {
		{ "signal:SIGKILL:before-spawn:losetup:1", "attach" },
		{ "signal:SIGKILL:before-spawn:sgdisk:1", "partition" },
		{ "signal:SIGKILL:after-spawn:mkfs.ext4:1", "format" },
		{ "signal:SIGKILL:before-spawn:mount:2", "mount" },
	};
	for (size_t i = 0; i < sizeof(kills) / sizeof(kills[0]); i++) {
		struct fx f;
		fx_open(&f, "rig: 1\nname: jrnl\ntarget:\n  image: { path: \"%s/j.img\", size: 64M }\n"
			    "layouts:\n  - name: two\n    partitions:\n"
			    "      - { name: p1, fs: ext4, size: 50%% }\n"
			    "      - { name: p2, fs: ext4, size: rest }\n",
			"report: { formats: [csv] }\ncache: { flush: false, direct: false }\n"
			"steps:\n  - null: { value: 1 }\n");
		setenv("RIG_FAULT", kills[i].fault, 1);
		const char *run[] = { "run", "-q", "-o", f.out.buf, f.plan.buf, NULL };
		char *o = NULL;
		int rc = test_run_rig(run, &o);
		unsetenv("RIG_FAULT");
		CU_ASSERT_EQUAL(rc, -1); /* killed */
		free(o);
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/commands.log", f.out.buf);
		CU_ASSERT_EQUAL(unlink(p.buf), 0);
		/* What the journal says of the killed action: begun, never ended. */
		sb_reset(&p);
		sb_addf(&p, "SELECT state FROM journal WHERE action = '%s' ORDER BY id DESC LIMIT 1",
			kills[i].begun);
		char *v = pt_run_query(f.out.buf, p.buf);
		CU_ASSERT_STRING_EQUAL(v ? v : "(none)", "begun");
		if (!v || strcmp(v, "begun"))
			fprintf(stderr, "\n%s: the journal's %s is %s\n", kills[i].fault,
				kills[i].begun, v ? v : "(none)");
		free(v);
		const char *res[] = { "resume", "-q", f.out.buf, NULL };
		rc = test_run_rig(res, &o);
		CU_ASSERT_EQUAL(rc, 0);
		if (rc != 0)
			fprintf(stderr, "\n%s: rig resume exited %d: %s\n", kills[i].fault, rc,
				o ? o : "");
		free(o);
		v = pt_run_query(f.out.buf, "SELECT status || ' ' || (SELECT count(*) FROM cells"
					    " WHERE status = 'done') FROM run");
		CU_ASSERT_STRING_EQUAL(v ? v : "", "completed 2");
		free(v);
		/* The resumed run journaled its own provisioning and teardown too. */
		v = pt_run_query(f.out.buf, "SELECT count(*) > 0 FROM journal WHERE action ="
					    " 'delete-image' AND state = 'done'");
		CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
		free(v);
		struct strbuf what = STRBUF_INIT;
		CU_ASSERT_EQUAL(pt_leftovers(f.tmp, &what), 0);
		if (what.len)
			fprintf(stderr, "\n%s: left behind: %s\n", kills[i].fault, what.buf);
		sb_release(&what);
		sb_release(&p);
		fx_close(&f);
	}
}

static void test_kept_image(void)
{
	kept_case(1);
}

/*
 * Relative paths mean what they meant: a run started in one folder, with a
 * relative target (a directory; as root an image), plan file and run
 * folder, killed in a null cell, and resumed from another folder with the
 * run folder named relative to that one. The resume keeps what the run
 * provisioned where the run made it, its exec step runs there, nothing
 * appears in the other folder, and rig's own working folder stays the one
 * it was started in (the exec step reads it from /proc: its parent is rig).
 */
static void elsewhere_case(int image)
{
	char *tmp = test_tmpdir();
	char *real = realpath(tmp, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(real);
	struct strbuf start = STRBUF_INIT, other = STRBUF_INIT, p = STRBUF_INIT,
		      db = STRBUF_INIT;
	sb_addf(&start, "%s/start", real);
	sb_addf(&other, "%s/other", real);
	CU_ASSERT_EQUAL_FATAL(mkdir(start.buf, 0777), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(other.buf, 0777), 0);
	sb_addf(&p, "%s/plan.yaml", start.buf);
	sb_adds(&db, image ? "rig: 1\nname: moved\ntarget:\n  image: { path: k.img, size: 32M }\n"
			     "layouts:\n  - name: one\n    partitions:\n"
			     "      - { name: p1, fs: ext4, size: rest }\n"
			   : "rig: 1\nname: moved\ntarget:\n  dirs: [data/a]\n");
	sb_adds(&db, "report: { formats: [csv] }\ncache: { flush: false, direct: false }\n"
		     "steps:\n  - null: { value: 1 }\n  - null: { value: 2, time: 1500ms }\n"
		     "  - exec: { run: [sh, -c, \"pwd -P; readlink /proc/$PPID/cwd\"] }\n");
	CU_ASSERT_EQUAL(test_write_file(p.buf, db.buf), 0);
	sb_reset(&db);
	sb_addf(&db, "%s/out/results.db", start.buf);
	run_killed_in_cell_2(start.buf, "out", "plan.yaml", db.buf);

	int here = open(".", O_RDONLY | O_DIRECTORY);
	CU_ASSERT_TRUE_FATAL(here >= 0);
	CU_ASSERT_EQUAL_FATAL(chdir(other.buf), 0);
	char *o = NULL;
	const char *res[] = { "resume", "../start/out", NULL };
	int rc = test_run_rig(res, &o);
	CU_ASSERT_EQUAL_FATAL(fchdir(here), 0);
	close(here);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(o && strstr(o, "was kept as recorded"));
	if (rc)
		fprintf(stderr, "\n%s\n", o ? o : "");
	free(o);
	/* The exec step: in its volume's folder below the start folder; rig in
	 * the folder the resume was started in. */
	char *v = pt_query(db.buf, "SELECT value FROM notes WHERE key = 'stdout' AND superseded = 0");
	const char *nl = v ? strchr(v, '\n') : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
	CU_ASSERT_TRUE(!strncmp(v, start.buf, start.len) && v[start.len] == '/');
	CU_ASSERT_TRUE(!strncmp(nl + 1, other.buf, other.len) && !strcmp(nl + 1 + other.len, "\n"));
	free(v);
	v = pt_query(db.buf, "SELECT group_concat(status) FROM cells");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "done,done,done");
	free(v);
	/* Nothing in the other folder; nothing of the run left in the start folder. */
	sb_reset(&p);
	sb_addf(&p, "%s/%s", other.buf, image ? "k.img" : "data");
	CU_ASSERT_NOT_EQUAL(access(p.buf, F_OK), 0);
	sb_reset(&p);
	sb_addf(&p, "%s/%s", start.buf, image ? "k.img" : "data/a/rig-out");
	CU_ASSERT_NOT_EQUAL(access(p.buf, F_OK), 0);
	if (image) {
		struct strbuf what = STRBUF_INIT;
		CU_ASSERT_EQUAL(pt_leftovers(real, &what), 0);
		sb_release(&what);
	}
	sb_release(&start);
	sb_release(&other);
	sb_release(&p);
	sb_release(&db);
	test_rmtree(tmp);
	free(real);
	free(tmp);
}

static void test_elsewhere_dirs(void)
{
	elsewhere_case(0);
}

static void test_elsewhere_image(void)
{
	elsewhere_case(1);
}

void register_resume_tests(void)
{
	CU_pSuite s = test_suite_e2e("resume");
	test_add(s, "where a resumed run starts: blocks, module state, cut-off cells",
		 test_point_dirs);
	test_add(s, "reprovision: repeat makes every repetition its own block", test_point_blocks);
	test_add(s, "store: restart supersedes in one transaction; versions 1 and 2 migrate",
		 test_store_restart_and_migration);
	test_add(s, "commands a killed run left running are waited for", test_orphans);
	test_add(s, "refused: a live run, another rig version, a changed plan, no run folder",
		 test_refusals);
	test_add(s, "a resumed run's report says so; a completed run is left alone",
		 test_completed_and_report);
	test_add(s, "killed while writing a completed run's reports: resume writes them",
		 test_completed_reports_cut);
	test_add(s, "a version 1 run: reported as it is, migrated by resume, not resumed",
		 test_v1_run);
	test_add(s, "killed in a null cell: the work folders are kept", test_kept_dirs);
	test_add(s, "dirs: [$d] given by --var: recorded, resumed without it",
		 test_dirs_var_resumed);
	test_add(s, "a run from before common random numbers resumes with its own draws",
		 test_seed_scheme);
	test_add(s, "resumed from another folder: relative paths mean what they meant, rig's "
		    "working folder is not changed", test_elsewhere_dirs);
	test_add(s, "kill -9 at 20 random points of a dirs run: resume gives every cell once",
		 test_kill_dirs);
	CU_pSuite r = test_suite("resume (root: image on a loop device)");
	if (!test_require_root(r, "loop devices, mkfs and mount"))
		return;
	test_add(r, "killed in a null cell: the loop device and its mounts are kept",
		 test_kept_image);
	test_add(r, "killed while provisioning, commands.log deleted: resume reads the journal",
		 test_journal_without_log);
	test_add(r, "resumed from another folder: a relative image path means what it meant",
		 test_elsewhere_image);
	test_add(r, "kill -9 at random points of an image run: every cell once, nothing left",
		 test_kill_image);
}
