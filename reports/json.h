/*
 * results.json: the run's results, statistics and provenance in one JSON
 * document; its schema is docs/results.schema.json (format "rig-results",
 * format_version 2).
 */
#ifndef RIG_REPORTS_JSON_H
#define RIG_REPORTS_JSON_H

struct rdata;
struct strbuf;

/* d must have been through rep_summary_compute. 0, or -errno with the reason
 * in err. */
int rep_json_write_results(const struct rdata *d, const char *path, struct strbuf *err);

#endif
