/*
 * results.csv and files.csv from a run already in memory (report_data.h),
 * byte for byte what reports/csv.c writes from SQL (a test holds them
 * equal), without a second pass over the store: for a million samples the
 * SQL join and its per-column calls cost more than everything else in a
 * report. The sample values arrive formatted (rdata's vtext).
 */
#ifndef RIG_REPORTS_REPORT_CSV_H
#define RIG_REPORTS_REPORT_CSV_H

struct rdata;
struct strbuf;

/* Format every sample value once (rep_csv_add_double) into d->vtext, in
 * threads threads (1 or 2); the CSV and JSON writers copy them. d->vtext
 * is set at the end: the caller may run it in a thread of its own while it
 * computes the statistics, which do not read vtext. */
void rep_rcsv_format_values(struct rdata *d, int threads);

/* results.csv; after rep_summary_compute, which numbers the passes (its pass
 * column). */
int rep_rcsv_write_results(const struct rdata *d, const char *path, struct strbuf *err);
int rep_rcsv_write_files(const struct rdata *d, const char *path, struct strbuf *err);

#endif
