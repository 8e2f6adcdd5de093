/*
 * Reports: everything a run folder holds besides the plan, the store and
 * the command log, computed from the results store alone, so `rig report
 * RUN` redraws any run at any time (docs/reports.md).
 *
 *   results.csv, files.csv   always (reports/csv.c; the contract's columns)
 *   summary.csv              always: statistics per group
 *   findings.csv             always: the findings
 *   time.csv                 always: where the run's time went (report_time.h)
 *   report.html, figures/    when the plan's report.formats has html
 *   results.json             when it has json
 */
#ifndef RIG_REPORTS_REPORT_H
#define RIG_REPORTS_REPORT_H

struct store;
struct strbuf;

/* Write every file above into run_dir. 0, or a negative errno with the
 * reason in err; files written before a failure stay (each is complete). */
int rep_write(struct store *s, const char *run_dir, struct strbuf *err);

#endif
