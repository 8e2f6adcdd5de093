/*
 * Inside results.json's writer: json.c writes the document and its small
 * members (run, report, volumes, summary, ...) as arrays of objects;
 * json_table.c writes the three members that grow with the run (cells,
 * samples, files) as column arrays. Both escape strings and numbers with
 * the two functions below.
 */
#ifndef RIG_REPORTS_JSON_INT_H
#define RIG_REPORTS_JSON_INT_H

struct rdata;
struct rout;
struct strbuf;

/* s as a JSON string literal (invalid UTF-8 becomes U+FFFD); NULL: null. */
void rep_json_str(struct strbuf *b, const char *s);
/* v in the CSV's shortest round-trip form; NaN: null; infinities "inf",
 * "-inf" (JSON has neither). */
void rep_json_num(struct strbuf *b, double v);

/* ",\n\"cells\":{...}" and the same for samples and files (json_table.c). */
void rep_json_cells(struct rout *o, const struct rdata *d);
void rep_json_samples(struct rout *o, const struct rdata *d);
void rep_json_files(struct rout *o, const struct rdata *d);

#endif
