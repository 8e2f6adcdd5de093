/*
 * rig report RUN: the run's derived files again, from its store alone:
 * results.csv, files.csv, summary.csv, and report.html with figures/ and
 * results.json as the plan's report.formats ask (reports/report.h). Works
 * on finished, failed, interrupted and still running runs alike.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../reports/report.h"
#include "../store.h"
#include "../util/strbuf.h"
#include "cmd.h"

int cmd_report(int argc, char **argv)
{
	if (argc != 2)
		return cmd_usage_error("report", argc < 2 ? "no run folder given" : "one run folder at a time");
	const char *dir = argv[1];
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&path, "%s/results.db", dir);
	struct store *s = store_open(path.buf, 1, &err);
	int rc = EXIT_FAILED;
	if (!s) {
		fprintf(stderr, "rig report: %s\n", err.buf);
		goto out;
	}
	if (reports_write(s, dir, &err) < 0) {
		fprintf(stderr, "rig report: %s\n", err.buf);
		goto out;
	}
	const char *names[] = { "results.csv", "files.csv", "summary.csv", "findings.csv", "report.html",
				"results.json" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sb_reset(&path);
		sb_addf(&path, "%s/%s", dir, names[i]);
		if (access(path.buf, F_OK) == 0)
			printf("%s\n", path.buf);
	}
	rc = EXIT_OK;
out:
	if (s)
		store_close(s);
	sb_release(&path);
	sb_release(&err);
	return rc;
}
