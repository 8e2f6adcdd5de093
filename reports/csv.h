/*
 * results.csv and files.csv: the tables people load into R, pandas or a
 * spreadsheet. Their columns are a user contract (docs/plan-language.md,
 * "Run folders"); the format is in docs/results-store.md. Both are
 * functions of the results store alone.
 */
#ifndef RIG_REPORTS_CSV_H
#define RIG_REPORTS_CSV_H

struct store;
struct strbuf;

/*
 * Write results.csv (one row per sample, ordered by seq then sample id) or
 * files.csv (one row per file sample) to path. The file is written under a
 * temporary name in the same directory, synced and renamed over path, so
 * path never holds half a table. Returns 0, or a negative errno with the
 * reason in err (may be NULL).
 */
int rep_csv_write_results(struct store *s, const char *path, struct strbuf *err);
int rep_csv_write_files(struct store *s, const char *path, struct strbuf *err);

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
