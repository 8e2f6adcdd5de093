/*
 * results.csv and files.csv: the tables people load into R, pandas or a
 * spreadsheet. Their columns are a user contract (docs/plan-language.md,
 * "Run folders"); the format is in docs/results-store.md. And the number
 * format of every CSV the reports write.
 */
#ifndef RIG_REPORTS_CSV_H
#define RIG_REPORTS_CSV_H

struct rdata;
struct strbuf;

/* Format every sample value once (rep_csv_add_double) into d->vtext, in
 * threads threads (1 or 2); the CSV and JSON writers copy them. d->vtext
 * is set at the end: the caller may run it in a thread of its own while it
 * computes the statistics, which do not read vtext. */
void rep_csv_format_values(struct rdata *d, int threads);

/*
 * Write results.csv (one row per sample, ordered by seq then measurement;
 * after rep_summary_compute, which numbers the passes of its pass column)
 * or files.csv (one row per file sample) to path, under a temporary name
 * synced and renamed over path. 0, or a negative errno with the reason in
 * err.
 */
int rep_csv_write_results(const struct rdata *d, const char *path, struct strbuf *err);
int rep_csv_write_files(const struct rdata *d, const char *path, struct strbuf *err);

struct rep_table;
/* A table's header line ("a,b,c", no newline). */
void rep_csv_add_header(struct strbuf *sb, const struct rep_table *t);
/* Every row of table t of d, with its header, to path (as the files
 * above): texts quoted as needed, a missing value an empty field. */
int rep_csv_write_table(const struct rdata *d, const struct rep_table *t, const char *path,
			struct strbuf *err);

/*
 * Append v as the shortest of %.15g, %.16g, %.17g that reads back as
 * exactly v (always with '.' as the decimal point): 0.1 -> "0.1",
 * 1.0/3 -> "0.3333333333333333". Infinities are "inf" and "-inf"; NaN
 * appends nothing (an empty CSV field, NA in R and NaN in pandas).
 */
void rep_csv_add_double(struct strbuf *sb, double v);
/* A comma, then v as rep_csv_add_double appends it: a row's next field. */
void rep_csv_add_next_double(struct strbuf *sb, double v);

#endif
