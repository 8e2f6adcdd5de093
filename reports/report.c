/*
 * rep_write: read the store once, compute the statistics once, write
 * every requested format (see report.h).
 *
 * The run is read once into memory (report_data.c, on two connections)
 * and summarized once (summary.c) while a second thread formats the sample
 * values for both the CSV and the JSON; every file is written from that:
 * results.csv and files.csv (csv.c), summary.csv, findings.csv, time.csv,
 * report.html and
 * results.json, by two workers taking the files as jobs (bench/report.sh
 * times a million samples; bench/README.md has the numbers). The
 * formats come from the plan text stored in the run, so a redraw writes
 * what the plan asked for. A failure in one file does not stop the others:
 * every file that can be written is, and the first error (in the order of
 * the files above) is returned.
 */
#include "reports/report.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lib/strbuf.h"
#include "plan/plan.h"
#include "reports/csv.h"
#include "reports/findings.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/report_data.h"
#include "reports/report_time.h"
#include "reports/summary.h"

static void keep_first(int *rc, int r, struct strbuf *err, struct strbuf *e)
{
	if (r >= 0)
		return;
	if (*rc == 0) {
		*rc = r;
		sb_adds(err, e->buf);
	}
	sb_reset(e);
}

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* RIG_REPORT_TIMES=1 prints how long each part took (bench/report.sh):
 * the steps in turn, with the CPU time all threads spent in each (on a
 * busy machine the wall time waits for the CPU; on two idle cores a step
 * takes at least half its CPU time), and each writer's job from the start
 * of the writing (the two workers overlap). */
static int times_on(void)
{
	static int on = -1;
	if (on < 0)
		on = getenv("RIG_REPORT_TIMES") != NULL;
	return on;
}

static void lap(const char *what)
{
	static double t0, c0;
	if (!times_on())
		return;
	double t = now(), c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	if (what)
		fprintf(stderr, "rig report: %-26s %.3f s (CPU %.3f s)\n", what, t - t0, c - c0);
	t0 = t;
	c0 = c;
}

/* The files, in the order their first error is reported. */
enum { F_RESULTS, F_FILES, F_SUMMARY, F_FINDINGS, F_TIME, F_HTML, F_JSON, NFILES };

/*
 * The writers, as jobs that two workers (the main thread and one more)
 * take in turn, largest first: the page with its figures, results.json,
 * results.csv, then the small CSVs. The writers only read d, except the
 * HTML writer, which allocates from d's arena; nothing another writer
 * reads moves.
 */
enum { J_HTML, J_JSON, J_RESULTS, J_SMALL, NJOBS };

struct writers {
	struct rdata *d;
	const char *run_dir;
	pthread_mutex_t mu;
	int next;                   /* the next job not taken */
	double t0;                  /* when the writing started (RIG_REPORT_TIMES) */
	int rc[NFILES];
	struct strbuf err[NFILES];
};

static void write_one(struct writers *w, int file, const char *name)
{
	struct strbuf path = STRBUF_INIT;
	const struct rdata *d = w->d;
	struct strbuf *e = &w->err[file];
	sb_addf(&path, "%s/%s", w->run_dir, name);
	switch (file) {
	case F_RESULTS: w->rc[file] = rep_csv_write_results(d, path.buf, e); break;
	case F_FILES: w->rc[file] = rep_csv_write_files(d, path.buf, e); break;
	case F_SUMMARY: w->rc[file] = rep_csv_write_table(d, &rep_summary_table, path.buf, e); break;
	case F_FINDINGS: w->rc[file] = rep_csv_write_table(d, &rep_findings_table, path.buf, e); break;
	case F_TIME: w->rc[file] = rep_rtime_write_csv(d, path.buf, e); break;
	case F_JSON: w->rc[file] = rep_json_write_results(d, path.buf, e); break;
	default: break;
	}
	sb_release(&path);
}

static void run_job(struct writers *w, int job)
{
	switch (job) {
	case J_HTML:
		if (w->d->formats & FMT_HTML)
			w->rc[F_HTML] = rep_html_write_report(w->d, w->run_dir, &w->err[F_HTML]);
		break;
	case J_JSON:
		if (w->d->formats & FMT_JSON)
			write_one(w, F_JSON, "results.json");
		break;
	case J_RESULTS:
		write_one(w, F_RESULTS, "results.csv");
		break;
	default:
		write_one(w, F_FILES, "files.csv");
		write_one(w, F_SUMMARY, "summary.csv");
		write_one(w, F_FINDINGS, "findings.csv");
		write_one(w, F_TIME, "time.csv");
		break;
	}
}

static void *worker(void *arg)
{
	struct writers *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		int job = w->next < NJOBS ? w->next++ : -1;
		pthread_mutex_unlock(&w->mu);
		if (job < 0)
			return NULL;
		double t = times_on() ? now() : 0;
		run_job(w, job);
		if (times_on()) {
			static const char *const names[] = { "report.html", "results.json", "results.csv",
							     "the other CSVs" };
			fprintf(stderr, "rig report:   %-24s %.3f to %.3f s\n", names[job], t - w->t0,
				now() - w->t0);
		}
	}
}

static void *format_thread(void *arg)
{
	rep_csv_format_values(arg, 1);
	return NULL;
}

int rep_write(struct store *s, const char *run_dir, struct strbuf *err)
{
	struct strbuf e = STRBUF_INIT;
	int rc = 0;
	lap(NULL);
	struct rdata *d = rep_rdata_load(s, &e);
	if (!d) {
		/* The store could not be read: nothing is written, the results
		 * stay in results.db. */
		keep_first(&rc, -EIO, err, &e);
		goto out;
	}
	lap("load");
	/* The sample values are formatted in a second thread while the
	 * statistics are computed (they do not read the text). */
	pthread_t ft;
	int fthreaded = pthread_create(&ft, NULL, format_thread, d) == 0;
	rep_summary_compute(d);
	rep_findings_compute(d);
	if (fthreaded)
		pthread_join(ft, NULL);
	else
		rep_csv_format_values(d, 2);
	lap("statistics and numbers");

	struct writers w = { .d = d, .run_dir = run_dir };
	for (int i = 0; i < NFILES; i++)
		sb_init(&w.err[i]);
	pthread_mutex_init(&w.mu, NULL);
	w.t0 = times_on() ? now() : 0;
	pthread_t wt;
	int threaded = pthread_create(&wt, NULL, worker, &w) == 0;
	worker(&w);
	if (threaded)
		pthread_join(wt, NULL);
	pthread_mutex_destroy(&w.mu);
	lap("files");
	for (int i = 0; i < NFILES; i++) {
		keep_first(&rc, w.rc[i], err, &w.err[i]);
		sb_release(&w.err[i]);
	}
	rep_rdata_free(d);
out:
	sb_release(&e);
	return rc;
}
