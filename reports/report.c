/*
 * reports_write: read the store once, compute the statistics once, write
 * every requested format (see report.h).
 *
 * results.csv and files.csv come from reports/csv.c, which streams them
 * from SQL; the other files come from the in-memory run (report_data.c)
 * and its groups (summary.c). The formats come from the plan text stored
 * in the run, so a redraw writes what the plan asked for. A failure in one
 * file does not stop the others: every file that can be written is, and
 * the first error is returned.
 */
#include "reports/report.h"

#include <errno.h>
#include <stdio.h>

#include "reports/csv.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/report_data.h"
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

int reports_write(struct store *s, const char *run_dir, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, e = STRBUF_INIT;
	int rc = 0;
	sb_addf(&path, "%s/results.csv", run_dir);
	keep_first(&rc, csv_write_results(s, path.buf, &e), err, &e);
	sb_reset(&path);
	sb_addf(&path, "%s/files.csv", run_dir);
	keep_first(&rc, csv_write_files(s, path.buf, &e), err, &e);

	struct rdata *d = rdata_load(s, &e);
	if (!d) {
		keep_first(&rc, -EIO, err, &e);
		goto out;
	}
	summary_compute(d);
	sb_reset(&path);
	sb_addf(&path, "%s/summary.csv", run_dir);
	keep_first(&rc, summary_write_csv(d, path.buf, &e), err, &e);
	if (d->formats & FMT_HTML)
		keep_first(&rc, html_write_report(d, run_dir, &e), err, &e);
	if (d->formats & FMT_JSON) {
		sb_reset(&path);
		sb_addf(&path, "%s/results.json", run_dir);
		keep_first(&rc, json_write_results(d, path.buf, &e), err, &e);
	}
	rdata_free(d);
out:
	sb_release(&path);
	sb_release(&e);
	return rc;
}
