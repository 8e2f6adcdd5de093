/*
 * reports_write: read the store once, compute the statistics once, write
 * every requested format (see report.h).
 *
 * The run is read once into memory (report_data.c) and summarized once
 * (summary.c); every file is written from that: results.csv and files.csv
 * by report_csv.c (the same bytes as reports/csv.c writes from SQL, which
 * remains the fallback when the run cannot be loaded), summary.csv,
 * report.html, and results.json in a second thread. Sample values are
 * formatted once, in two threads, for both the CSV and the JSON. A
 * million samples take about a second (bench/report.sh). The formats come from the plan text stored
 * in the run, so a redraw writes what the plan asked for. A failure in one
 * file does not stop the others: every file that can be written is, and
 * the first error is returned.
 */
#include "reports/report.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "reports/csv.h"
#include "reports/findings.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/report_csv.h"
#include "reports/report_data.h"
#include "reports/report_time.h"
#include "reports/summary.h"
#include "rig/plan.h"
#include "rig/util/strbuf.h"

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

/* RIG_REPORT_TIMES=1 prints how long each part took (bench/report.sh). */
static void lap(const char *what)
{
	static struct timespec t0;
	static int on = -1;
	if (on < 0)
		on = getenv("RIG_REPORT_TIMES") != NULL;
	if (!on)
		return;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (what)
		fprintf(stderr, "rig report: %-12s %.3f s\n", what,
			(double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9);
	t0 = t;
}

struct json_job {
	const struct rdata *d;
	struct strbuf path, err;
	int rc;
};

static void *json_thread(void *arg)
{
	struct json_job *j = arg;
	j->rc = json_write_results(j->d, j->path.buf, &j->err);
	return NULL;
}

int reports_write(struct store *s, const char *run_dir, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, e = STRBUF_INIT;
	int rc = 0;
	lap(NULL);
	struct rdata *d = rdata_load(s, &e);
	if (!d) {
		/* The CSVs can still be tried from SQL; say why the rest failed. */
		keep_first(&rc, -EIO, err, &e);
		sb_addf(&path, "%s/results.csv", run_dir);
		keep_first(&rc, csv_write_results(s, path.buf, &e), err, &e);
		sb_reset(&path);
		sb_addf(&path, "%s/files.csv", run_dir);
		keep_first(&rc, csv_write_files(s, path.buf, &e), err, &e);
		goto out;
	}
	lap("load");
	summary_compute(d);
	findings_compute(d);
	lap("statistics");
	rcsv_format_values(d);
	lap("numbers");

	/* results.json in a thread of its own while the rest is written: the
	 * writers only read d (the HTML writer allocates from d's arena,
	 * which moves nothing the JSON writer reads). */
	struct json_job jj = { .d = d, .path = STRBUF_INIT, .err = STRBUF_INIT };
	pthread_t jt;
	int json = (d->formats & FMT_JSON) != 0, threaded = 0;
	if (json) {
		sb_addf(&jj.path, "%s/results.json", run_dir);
		threaded = pthread_create(&jt, NULL, json_thread, &jj) == 0;
	}
	sb_addf(&path, "%s/results.csv", run_dir);
	keep_first(&rc, rcsv_write_results(d, path.buf, &e), err, &e);
	sb_reset(&path);
	sb_addf(&path, "%s/files.csv", run_dir);
	keep_first(&rc, rcsv_write_files(d, path.buf, &e), err, &e);
	sb_reset(&path);
	sb_addf(&path, "%s/summary.csv", run_dir);
	keep_first(&rc, summary_write_csv(d, path.buf, &e), err, &e);
	sb_reset(&path);
	sb_addf(&path, "%s/findings.csv", run_dir);
	keep_first(&rc, findings_write_csv(d, path.buf, &e), err, &e);
	sb_reset(&path);
	sb_addf(&path, "%s/time.csv", run_dir);
	keep_first(&rc, rtime_write_csv(d, path.buf, &e), err, &e);
	lap("csv");
	if (d->formats & FMT_HTML)
		keep_first(&rc, html_write_report(d, run_dir, &e), err, &e);
	lap("html");
	if (json) {
		if (threaded)
			pthread_join(jt, NULL);
		else
			json_thread(&jj);
		keep_first(&rc, jj.rc, err, &jj.err);
		lap("json (waited)");
	}
	sb_release(&jj.path);
	sb_release(&jj.err);
	rdata_free(d);
out:
	sb_release(&path);
	sb_release(&e);
	return rc;
}
