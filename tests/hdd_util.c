/* The synthetic rotating disk for tests: see hdd_util.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hdd_util.h"
#include "lib/xalloc.h"
#include "provision/linux/linux.h"
#include "provision_util.h"
#include "report_util.h"
#include "test.h"


static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The disks started and not stopped: copies (the strings shared with the
 * test's struct), so that a test a fatal assertion ended, whose struct
 * went with its stack, still gets its disk removed (teardown). */
#define HDD_LIVE 4
static struct hdd *live[HDD_LIVE];

static int start(struct hdd *h, const char *size, uint64_t bytes, double outer, double inner,
		 const char *seek_ms, const char *wear_ms);

int hdd_start(struct hdd *h, const char *size, uint64_t bytes, double outer, double inner,
	      const char *seek_ms, const char *wear_ms)
{
	int rc = start(h, size, bytes, outer, inner, seek_ms, wear_ms);
	for (int i = 0; i < HDD_LIVE; i++)
		if (!live[i]) {
			live[i] = xmalloc(sizeof(*h));
			*live[i] = *h;
			break;
		}
	return rc;
}

static int start(struct hdd *h, const char *size, uint64_t bytes, double outer, double inner,
		 const char *seek_ms, const char *wear_ms)
{
	memset(h, 0, sizeof(*h));
	h->outer = outer;
	h->inner = inner;
	h->fusedir = test_tmpdir();
	h->tmp = test_tmpdir();
	h->size = bytes;
	sb_init(&h->mnt);
	sb_init(&h->back);
	sb_init(&h->disk);
	sb_addf(&h->mnt, "%s/mnt", h->fusedir);
	sb_addf(&h->back, "%s/backing", h->fusedir);
	sb_addf(&h->disk, "%s/disk", h->mnt.buf);
	mkdir(h->mnt.buf, 0755);
	struct strbuf a_back = STRBUF_INIT, a_size = STRBUF_INIT, a_out = STRBUF_INIT,
		      a_in = STRBUF_INIT, log = STRBUF_INIT;
	sb_addf(&a_back, "--backing=%s", h->back.buf);
	sb_addf(&a_size, "--size=%s", size);
	sb_addf(&a_out, "--outer=%g", outer / 1e6);
	sb_addf(&a_in, "--inner=%g", inner / 1e6);
	sb_addf(&log, "%s/fuse-hdd.log", h->fusedir);
	h->pid = fork();
	if (h->pid == 0) {
		int fd = open(log.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		const char *bin = getenv("RIG_FUSE_HDD");
		struct strbuf a_seek = STRBUF_INIT;
		struct strbuf a_wear = STRBUF_INIT;
		sb_addf(&a_seek, "--seek-ms=%s", seek_ms ? seek_ms : "0");
		sb_addf(&a_wear, "--wear=%s", wear_ms ? wear_ms : "0");
		execl(bin, "fuse-hdd", a_back.buf, a_size.buf, a_out.buf, a_in.buf, a_seek.buf,
		      a_wear.buf, h->mnt.buf, "-f", (char *)NULL);
		_exit(127);
	}
	sb_release(&a_back);
	sb_release(&a_size);
	sb_release(&a_out);
	sb_release(&a_in);
	sb_release(&log);
	struct stat st;
	for (int i = 0; i < 500; i++) {
		if (stat(h->disk.buf, &st) == 0 && (uint64_t)st.st_size == bytes)
			break;
		sleep_ms(10);
	}
	if (stat(h->disk.buf, &st) < 0) {
		fprintf(stderr, "\nfuse-hdd did not come up\n");
		return -1;
	}
	const char *lo[] = { "losetup", "--find", "--show", "--direct-io=on", h->disk.buf, NULL };
	char *out = NULL;
	if (pt_cmd(lo, &out) != 0 || !out || strncmp(out, "/dev/loop", 9)) {
		fprintf(stderr, "\nlosetup over fuse-hdd failed: %s\n", out ? out : "");
		free(out);
		return -1;
	}
	out[strcspn(out, "\n")] = '\0';
	h->loop = out;
	return 0;
}

/* Remove what h made; with check, assert that rig and the disk left
 * nothing (not from a teardown, after the test). */
static void stop(struct hdd *h, int check)
{
	/* rig's own leftovers first: nothing of the runs may stay mounted */
	struct strbuf what = STRBUF_INIT;
	int n = pt_leftovers(h->tmp, &what);
	if (n)
		fprintf(stderr, "\nleft behind:\n%s", what.buf);
	if (check)
		CU_ASSERT_EQUAL(n, 0);
	sb_release(&what);
	if (h->loop) {
		/* rig keeps a disk's partitions; this test made the device, it removes them */
		if (prov_linux_partition_count("", strrchr(h->loop, '/') + 1)) {
			const char *px[] = { "partx", "--delete", h->loop, NULL };
			pt_cmd(px, NULL);
		}
		const char *det[] = { "losetup", "--detach", h->loop, NULL };
		int rc = pt_cmd(det, NULL);
		if (check)
			CU_ASSERT_EQUAL(rc, 0);
		free(h->loop);
	}
	if (h->pid > 0) {
		const char *um[] = { "fusermount3", "-u", h->mnt.buf, NULL };
		if (pt_cmd(um, NULL) != 0) {
			const char *lz[] = { "umount", "--lazy", h->mnt.buf, NULL };
			pt_cmd(lz, NULL);
		}
		int status;
		for (int i = 0; i < 300 && waitpid(h->pid, &status, WNOHANG) == 0; i++)
			sleep_ms(10);
		if (waitpid(h->pid, &status, WNOHANG) == 0) {
			kill(h->pid, SIGKILL);
			waitpid(h->pid, &status, 0);
		}
	}
	/* and nothing of the synthetic disk either */
	struct strbuf w2 = STRBUF_INIT;
	n = pt_leftovers(h->fusedir, &w2);
	if (check)
		CU_ASSERT_EQUAL(n, 0);
	sb_release(&w2);
	test_rmtree(h->tmp);
	test_rmtree(h->fusedir);
	free(h->tmp);
	free(h->fusedir);
	sb_release(&h->mnt);
	sb_release(&h->back);
	sb_release(&h->disk);
}

void hdd_stop(struct hdd *h)
{
	for (int i = 0; i < HDD_LIVE; i++)
		if (live[i] && live[i]->fusedir == h->fusedir) {
			free(live[i]);
			live[i] = NULL;
		}
	stop(h, 1);
}

/* The suites' teardown: the disks of a test a fatal assertion ended. */
static void teardown(void)
{
	for (int i = 0; i < HDD_LIVE; i++)
		if (live[i]) {
			fprintf(stderr, "\nthe test ended before it removed its synthetic disk (%s): "
					"removed now\n", live[i]->loop ? live[i]->loop : live[i]->fusedir);
			stop(live[i], 0);
			free(live[i]);
			live[i] = NULL;
		}
}

/* The profile's rate over [a, b): bytes / time of a full pass. */
double hdd_profile_rate(const struct hdd *h, double a, double b)
{
	double k = (h->inner - h->outer) / (double)h->size;
	double t = log((h->outer + k * b) / (h->outer + k * a)) / k;
	return (b - a) / t / 1e6; /* MB/s */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * Where the files were recorded (files.csv's disk_offset_min/max, here the
 * store's) against the rates they were read at: each read file's rate is
 * compared with the profile's over its recorded place. *n: the files with
 * a place. Returns the median of |rate / profile - 1|, NaN without any.
 */
double hdd_placed_read_error(const struct hdd *h, const char *run, size_t *n)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", run);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	double err[4096];
	*n = 0;
	if (sqlite3_open_v2(p.buf, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT f.bytes, f.seconds, f.disk_offset_min, f.disk_offset_max"
				   " FROM file_samples f JOIN cells c ON c.seq = f.seq"
				   " WHERE c.module = 'read' AND f.disk_offset_min IS NOT NULL",
			       -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW && *n < 4096) {
			double rate = sqlite3_column_double(st, 0) / sqlite3_column_double(st, 1) / 1e6;
			double want = hdd_profile_rate(h, sqlite3_column_double(st, 2),
						   sqlite3_column_double(st, 3));
			err[(*n)++] = fabs(rate / want - 1);
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	sb_release(&p);
	if (!*n)
		return NAN;
	qsort(err, *n, sizeof(double), cmp_double);
	return *n % 2 ? err[*n / 2] : (err[*n / 2 - 1] + err[*n / 2]) / 2;
}

/* rig run of configs/CONFIG.yaml with the pairs replaced; fs_map: --fs-map's value, or NULL. */
int hdd_run_plan_mapped(struct hdd *h, const char *config, const char *const *pairs,
			   const char *name, struct strbuf *out_dir, const char *fs_map)
{
	char *text = pt_config(config, pairs);
	if (!text)
		return -1;
	struct strbuf plan = STRBUF_INIT;
	sb_addf(&plan, "%s/%s.yaml", h->tmp, name);
	sb_addf(out_dir, "%s/%s", h->tmp, name);
	test_write_file(plan.buf, text);
	free(text);
	const char *args[12] = { "run", "-q", "--yes", "--allow", "loop", "-o", out_dir->buf };
	size_t n = 7;
	if (fs_map) {
		args[n++] = "--fs-map";
		args[n++] = fs_map;
	}
	args[n++] = plan.buf;
	args[n] = NULL;
	char *out = NULL;
	int rc = test_run_rig(args, &out);
	if (rc != 0)
		fprintf(stderr, "\nrig exited %d:\n%s\n", rc, out);
	free(out);
	sb_release(&plan);
	return rc;
}

int hdd_run_plan(struct hdd *h, const char *config, const char *const *pairs, const char *name,
		    struct strbuf *out_dir)
{
	return hdd_run_plan_mapped(h, config, pairs, name, out_dir, NULL);
}

/*
 * The best rate a module measured on the volume at `position` of `layout`
 * over the repetitions. The best, not the mean: the model never runs faster
 * than its profile, while a busy host (a parallel `make check`, sanitizers)
 * only ever slows a transfer down, so the best of two is the estimate of
 * what the disk can do that such noise cannot bias.
 */
double hdd_rate_of(const char *run, const char *layout, int position, const char *module)
{
	struct strbuf q = STRBUF_INIT;
	sb_addf(&q, "SELECT max(s.value) FROM samples s JOIN cells c ON c.seq = s.seq "
		    "JOIN volumes v ON v.id = c.volume_id WHERE s.metric = 'rate' AND "
		    "c.layout = '%s' AND v.layout = '%s' AND v.position = %d AND c.module = '%s'",
		layout, layout, position, module);
	char *v = pt_run_query(run, q.buf);
	double r = v ? atof(v) : 0;
	free(v);
	sb_release(&q);
	return r;
}

/* A row of RUN/findings.csv: its estimate and verdict; 0 when found. */
int hdd_finding_of(const char *run, const char *step, const char *kind, const char *groups,
		      double *estimate, char *verdict, size_t vlen)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/findings.csv", run);
	char *text = test_read_file(p.buf, NULL);
	sb_release(&p);
	char ***rows = NULL;
	int rc = -1;
	if (text && rfx_csv_parse(text, &rows) == 0) {
		for (size_t r = 1; rows[r] && rc; r++) {
			size_t n = 0;
			while (rows[r][n])
				n++;
			if (n == 13 && !strcmp(rows[r][0], step) && !strcmp(rows[r][2], kind) &&
			    !strcmp(rows[r][3], groups)) {
				*estimate = atof(rows[r][4]);
				snprintf(verdict, vlen, "%s", rows[r][10]);
				printf("\n  findings.csv: %s", rows[r][11]);
				rc = 0;
			}
		}
		rfx_csv_free(rows);
	}
	free(text);
	return rc;
}

int hdd_require(CU_pSuite s)
{
	if (!test_require_root(s, "loop devices and FUSE"))
		return 0;
	const char *bin = getenv("RIG_FUSE_HDD");
	if (!bin || !*bin || access(bin, X_OK) < 0 || access("/dev/fuse", R_OK | W_OK) < 0 ||
	    !pt_have_tools()) {
		printf("SKIPPED suite '%s': needs fuse-hdd ($RIG_FUSE_HDD, built on Linux with "
		       "libfuse3), /dev/fuse and the provisioning tools\n", s->pName);
		CU_set_suite_active(s, CU_FALSE);
		return 0;
	}
	/* after every test, also one a fatal assertion ended */
	s->pTearDownFunc = teardown;
	return 1;
}

/* "takes about 1 h 5 min", "2 min 3 s", "40 s" after "total": seconds, or NAN. */
static double total_seconds(const char *out)
{
	const char *t = out ? strstr(out, "\n  total ") : NULL;
	t = t ? strstr(t, "takes about ") : NULL;
	if (!t)
		return NAN;
	t += strlen("takes about ");
	char line[128];
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(t, "\n("), t);
	t = line;
	double secs = 0;
	for (int k = 0; k < 3; k++) {
		char *end = NULL;
		double v = strtod(t, &end);
		if (end == t)
			break;
		while (*end == ' ')
			end++;
		double unit = !strncmp(end, "min", 3) ? 60 : *end == 'h' ? 3600 : *end == 'd' ? 86400
			      : *end == 's' ? 1 : NAN;
		secs += v * unit;
		t = strchr(end, ' ');
		if (!t)
			break;
		t++;
	}
	return secs;
}

double hdd_estimate_ratio(const struct hdd *h, const char *plan, const char *run,
			  const char *fs_map, const char *from, const char *label)
{
	char *seed = pt_run_query(run, "SELECT seed FROM run");
	char *took = pt_run_query(run, "SELECT (julianday(ended_utc) - julianday(started_utc)) * "
				       "86400 FROM run");
	struct strbuf rate = STRBUF_INIT;
	sb_addf(&rate, "%.0f/s", 1e6 * hdd_profile_rate(h, 0, (double)h->size));
	const char *args[12] = { "plan", "--seed", seed ? seed : "0", "--assume-rate", rate.buf };
	size_t n = 5;
	if (from) {
		args[n++] = "--from";
		args[n++] = from;
	}
	if (fs_map) {
		args[n++] = "--fs-map";
		args[n++] = fs_map;
	}
	args[n++] = plan;
	args[n] = NULL;
	char *out = NULL;
	test_run_rig(args, &out);
	double est = total_seconds(out), actual = took ? atof(took) : NAN;
	printf("\n  %s: rig plan estimates %.1f s at %s%s%s, the run took %.1f s (estimate/actual "
	       "%.2f)\n", label, est, rate.buf, from ? " corrected by " : "",
	       from ? strrchr(from, '/') + 1 : "", actual, est / actual);
	if (isnan(est))
		printf("  rig plan said:\n%s\n", out ? out : "(nothing)");
	free(out);
	free(seed);
	free(took);
	sb_release(&rate);
	return est / actual;
}
