/*
 * rig resume on the macOS backend (provision/macos/macos_resume.c), on Linux with
 * the fake diskutil and hdiutil of tests/tools/fake-macos/: `rig run --platform
 * macos` of an image-target plan killed with SIGKILL at repeatable points
 * (RIG_FAULT=signal:SIGKILL:..., after each provisioning command, in the
 * write and read cells, in the teardown; once the resume killed too), then
 * `rig resume`: every cell has exactly one completed result, the same as a
 * run that was never interrupted, and nothing is left attached, mounted or
 * on disk per the fake's state. And the two ways a resume goes: killed in
 * a pause (null) cell that is not its layout's first, the provisioning is
 * kept (one partitionDisk in all); killed after partitionDisk, it is torn
 * down and made again. A disk target killed in a write cell: its volumes
 * unmounted, the disk provisioned again.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision_util.h"
#include "test.h"

struct mfx {
	char *dir;    /* the test's folder: the plan, the image, the runs */
	char *bin;    /* the fake tools' folder: test_fake_macos_dir() */
	char *plan;
	char *ref;    /* the uninterrupted run */
	char *state;  /* the fake's state of the current case */
	char *run;
	char *image;  /* DIR/d.img.dmg, what hdiutil creates */
	int disk;     /* the plan's target is the fake's disk4, not an image */
};

static const char image_target[] = "  image: { path: \"%s/d.img\", size: 1G }\n";
static const char disk_target[] = "  disk: { device: disk4, confirm: \"WDC WD20SPZX-22UA7T0\" }\n";

static const char plan_fmt[] =
	"rig: 1\nname: mresume\ntarget:\n%s"
	"layouts:\n  - name: one\n    partitions:\n"
	"      - { name: p1, fs: apfs, size: 50%% }\n"
	"      - { name: p2, fs: hfs+, size: rest }\n"
	"report: { formats: [csv] }\ncache: { flush: false, direct: false }\nsteps:\n"
	"  - null: { value: 1 }\n"
	"  - null: { value: 2, time: %s }\n"
	"  - write: { files: 2, size: 4K, block: 4K, sync: false }\n"
	"  - read: {}\n"
	"  - null: { value: 3 }\n";

static char *path_in(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", dir, name);
	return sb_detach(&sb);
}

/* A fresh fake machine (the boot disk only) for case `name`. */
static void mfx_case(struct mfx *x, const char *name)
{
	free(x->state);
	free(x->run);
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/fake-%s", x->dir, name);
	x->state = sb_detach(&sb);
	sb_addf(&sb, "%s/run-%s", x->dir, name);
	x->run = sb_detach(&sb);
	setenv("RIG_FAKE_MACOS", x->state, 1);
	sb_addf(&sb, "%s/fake-macos", x->bin);
	const char *argv[] = { sb.buf, "ctl", "boot", NULL };
	CU_ASSERT_EQUAL(pt_cmd(argv, NULL), 0);
	const char *add[] = { sb.buf, "ctl", "add-disk", "disk4", "2000398934016",
			      "WDC WD20SPZX-22UA7T0", "external", "rotational", "USB", NULL };
	if (x->disk)
		CU_ASSERT_EQUAL(pt_cmd(add, NULL), 0);
	sb_release(&sb);
}

/* pause: the time of the second null step (the kept case kills in it). */
static void mfx_init(struct mfx *x, const char *pause, int disk)
{
	memset(x, 0, sizeof(*x));
	x->disk = disk;
	x->dir = test_tmpdir();
	struct strbuf sb = STRBUF_INIT;
	x->bin = xstrdup(test_fake_macos_dir());
	x->plan = path_in(x->dir, "plan.yaml");
	x->image = path_in(x->dir, "d.img.dmg");
	struct strbuf target = STRBUF_INIT;
	sb_addf(&target, disk ? disk_target : image_target, x->dir);
	sb_addf(&sb, plan_fmt, target.buf, pause);
	CU_ASSERT_EQUAL(test_write_file(x->plan, sb.buf), 0);
	sb_release(&sb);
	sb_release(&target);
	mfx_case(x, "ref");
	x->ref = xstrdup(x->run);
	const char *args[] = { "run", "--platform", "macos", "--yes", "-q", "-o", x->ref, x->plan,
			       NULL };
	CU_ASSERT_EQUAL(pt_rig(x->bin, args, NULL), 0);
}

static void mfx_done(struct mfx *x)
{
	unsetenv("RIG_FAKE_MACOS");
	unsetenv("RIG_FAULT");
	test_rmtree(x->dir);
	free(x->dir);
	free(x->bin);
	free(x->plan);
	free(x->ref);
	free(x->state);
	free(x->run);
	free(x->image);
}

/* `rig run` of the plan with RIG_FAULT=fault; its exit status. */
static int run_with(struct mfx *x, const char *fault)
{
	setenv("RIG_FAULT", fault, 1);
	const char *args[] = { "run", "--platform", "macos", "--yes", "-q", "-o", x->run, x->plan,
			       NULL };
	int rc = pt_rig(x->bin, args, NULL);
	unsetenv("RIG_FAULT");
	return rc;
}

/* `rig resume`, with RIG_FAULT=fault unless NULL; its output in *out. */
static int resume_with(struct mfx *x, const char *fault, char **out)
{
	if (fault)
		setenv("RIG_FAULT", fault, 1);
	const char *args[] = { "resume", "-y", x->run, NULL };
	int rc = pt_rig(x->bin, args, out);
	unsetenv("RIG_FAULT");
	return rc;
}

static const char *const per_cell_sql[] = {
	"SELECT count(*) || ' cells, ' || sum(status = 'done') || ' done' FROM cells",
	"SELECT group_concat(x, ',') FROM (SELECT seq || ':' || metric AS x FROM samples"
	" WHERE superseded = 0 ORDER BY seq, metric)",
	"SELECT group_concat(x, ',') FROM (SELECT seq || ':' || step || ':' || module || ':' ||"
	" phase || ':' || rep AS x FROM cells ORDER BY seq)",
	"SELECT status FROM run",
};

/* Every cell once, as in the uninterrupted run; nothing of rig's left. */
static void check_done_and_clean(struct mfx *x, const char *what)
{
	for (size_t i = 0; i < sizeof(per_cell_sql) / sizeof(per_cell_sql[0]); i++) {
		char *a = pt_run_query(x->run, per_cell_sql[i]);
		char *b = pt_run_query(x->ref, per_cell_sql[i]);
		int same = a && b && !strcmp(a, b);
		if (!same)
			fprintf(stderr, "\n%s: %s\n  resumed:        %.300s\n  uninterrupted:  %.300s\n",
				what, per_cell_sql[i], a ? a : "(null)", b ? b : "(null)");
		CU_ASSERT(same);
		free(a);
		free(b);
	}
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/Volumes", x->state);
	char *out = NULL;
	const char *ls[] = { "ls", "-A", p.buf, NULL };
	CU_ASSERT_EQUAL(pt_cmd(ls, &out), 0);
	if (!out || *out)
		fprintf(stderr, "\n%s: mounted volumes left: %s\n", what, out ? out : "?");
	CU_ASSERT(out && !*out);
	free(out);
	out = NULL;
	sb_reset(&p);
	sb_addf(&p, "%s/disks", x->state);
	const char *grep[] = { "grep", "-rl", "kind=image", p.buf, NULL };
	int g = pt_cmd(grep, &out);
	if (g != 1)
		fprintf(stderr, "\n%s: attached images left: %s\n", what, out ? out : "?");
	CU_ASSERT_EQUAL(g, 1);
	free(out);
	if (access(x->image, F_OK) == 0)
		fprintf(stderr, "\n%s: the image file was left\n", what);
	CU_ASSERT_NOT_EQUAL(access(x->image, F_OK), 0);
	sb_release(&p);
}

static int count_of(const char *text, const char *what)
{
	int n = 0;
	for (const char *c = text; c && (c = strstr(c, what)); c++)
		n++;
	return n;
}

/*
 * `rig resume` to the end (its output says `says` unless NULL), then
 * every cell once and nothing left; the run's commands.log (caller frees).
 */
static char *resume_and_check(struct mfx *x, const char *what, const char *says)
{
	char *out = NULL;
	int rc = resume_with(x, NULL, &out);
	int ok = rc == 0 && (!says || (out && strstr(out, says)));
	if (!ok)
		fprintf(stderr, "\n%s: rig resume exited %d:\n%s\n", what, rc, out ? out : "");
	CU_ASSERT(ok);
	free(out);
	check_done_and_clean(x, what);
	char *path = path_in(x->run, "commands.log");
	char *log = test_read_file(path, NULL);
	free(path);
	return log;
}

/*
 * Kill points, each a RIG_FAULT rule: after every provisioning command of
 * the image (create, attach, the disk's info, partitionDisk, the re-reads,
 * a volume's info), in the write and read cells, and in the teardown. (After `diskutil list`
 * or before `hdiutil detach` leaves what other points leave: dropped to
 * keep the suite short.)
 */
static const char *const kill_points[] = {
	"signal:SIGKILL:after-spawn:hdiutil create:1",
	"signal:SIGKILL:after-spawn:hdiutil attach:1",
	"signal:SIGKILL:after-spawn:diskutil info:1",
	"signal:SIGKILL:after-spawn:diskutil partitionDisk:1",
	"signal:SIGKILL:after-spawn:diskutil info:3",
	"signal:SIGKILL:io:write:1",
	"signal:SIGKILL:io:read:3",
	"signal:SIGKILL:after-spawn:hdiutil detach:1",
	"signal:SIGKILL:after-spawn:hdiutil info:1",
};

static void rebuilt(struct mfx *x);

static void test_kill_points(void)
{
	struct mfx x;
	mfx_init(&x, "20ms", 0);
	char name[16];
	for (size_t i = 0; i < sizeof(kill_points) / sizeof(kill_points[0]); i++) {
		snprintf(name, sizeof(name), "k%zu", i);
		mfx_case(&x, name);
		int rc = run_with(&x, kill_points[i]);
		if (rc == 0)
			fprintf(stderr, "\n%s: the run was not killed\n", kill_points[i]);
		CU_ASSERT_NOT_EQUAL(rc, 0);
		free(resume_and_check(&x, kill_points[i], NULL));
	}
	rebuilt(&x);
	mfx_done(&x);
}

/*
 * (A case of the kill test, against its reference.) Killed after
 * partitionDisk: the resume tears down what the killed run left (the
 * attached image, its mounted volumes, the file) and makes it again; the
 * first resume is itself killed while it detaches the leftover.
 */
static void rebuilt(struct mfx *x)
{
	mfx_case(x, "rebuilt");
	CU_ASSERT_NOT_EQUAL(run_with(x, "signal:SIGKILL:after-spawn:diskutil partitionDisk:1"), 0);
	char *out = NULL;
	CU_ASSERT_NOT_EQUAL(resume_with(x, "signal:SIGKILL:after-spawn:hdiutil detach:1", &out),
			    0);
	free(out);
	char *log = resume_and_check(x, "rebuilt", "provisioned afresh from cell 1");
	CU_ASSERT(log && strstr(log, "# tear down what the interrupted run left: disk"));
	/* Partitioned by the killed run and by the resume that completed (the
	 * killed resume died tearing down, before it provisioned). */
	CU_ASSERT_EQUAL(count_of(log, "$ diskutil partitionDisk "), 2);
	CU_ASSERT_EQUAL(count_of(log, "$ hdiutil create "), 2);
	free(log);
	/* The killed resume died in prepare, before it recorded itself. */
	char *v = pt_run_query(x->run, "SELECT group_concat(reprovisioned) FROM resumes");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "1");
	free(v);
}

/*
 * Killed in the long null cell on p1 (cell 3: not its layout's first, no
 * module state before it): the resume keeps the attached image and its
 * mounted volumes, and starts at that cell; one partitionDisk in all.
 */
static void test_kept(void)
{
	struct mfx x;
	mfx_init(&x, "1500ms", 0);
	mfx_case(&x, "kept");
	char *db = path_in(x.run, "results.db");
	char *old = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s:%s", x.bin, old ? old : "/usr/sbin:/usr/bin:/sbin:/bin");
	setenv("PATH", p.buf, 1);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(test_rig_bin(), test_rig_bin(), "run", "--platform", "macos", "-q", "-o",
		      x.run, x.plan, (char *)NULL);
		_exit(127);
	}
	if (old)
		setenv("PATH", old, 1);
	free(old);
	sb_release(&p);
	char *v = NULL;
	for (int i = 0; i < 1000; i++) { /* until cell 3 has started */
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
		free(v);
		v = access(db, R_OK) == 0 ? pt_query(db, "SELECT count(*) FROM cells") : NULL;
		if (v && !strcmp(v, "3"))
			break;
	}
	free(v);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	char *log = resume_and_check(&x, "kept", "was kept as recorded");
	v = pt_query(db, "SELECT reprovisioned || ' ' || from_seq || ' ' || first_unfinished ||"
			 " ' ' || (SELECT group_concat(attempts) FROM cells) FROM resumes");
	CU_ASSERT_STRING_EQUAL(v ? v : "", "0 3 3 1,1,2,1,1,1,1,1,1,1");
	free(v);
	CU_ASSERT_EQUAL(count_of(log, "$ diskutil partitionDisk "), 1);
	CU_ASSERT(log && strstr(log, "# kept what the interrupted run provisioned: "
						  "disk2 with 2 mounted volumes"));
	free(log);
	free(db);
	mfx_done(&x);
}

/*
 * A disk target killed in its write cell: the resume unmounts the
 * volumes of the layout the killed run made (rig's, by their partitions)
 * and provisions the disk again; never kept, as on Linux.
 */
static void test_disk(void)
{
	struct mfx x;
	mfx_init(&x, "20ms", 1);
	mfx_case(&x, "disk");
	CU_ASSERT_NOT_EQUAL(run_with(&x, "signal:SIGKILL:io:write:1"), 0);
	char *log = resume_and_check(&x, "disk", NULL);
	const char *td = log ? strstr(log, "# tear down what the interrupted run left: disk4") : NULL;
	CU_ASSERT(td && strstr(td, "$ diskutil unmountDisk disk4"));
	CU_ASSERT_EQUAL(count_of(log, "$ diskutil partitionDisk "), 2);
	free(log);
	mfx_done(&x);
}

void register_macos_resume_tests(void)
{
	CU_pSuite s = test_suite_e2e("macos resume (fake diskutil and hdiutil)");
	test_add(s, "killed in a null cell: the attached image and its volumes are kept",
		 test_kept);
	test_add(s, "kill -9 at 9 points of an image run (and in a resume): every cell once, "
		    "nothing left", test_kill_points);
	test_add(s, "a disk target killed in a write cell: unmounted and provisioned again",
		 test_disk);
}
