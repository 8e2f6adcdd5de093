/* rig report RUN: the run's derived files again, from its store alone. */
#include <stdio.h>

#include "../../reports/csv.h"
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
	sb_reset(&path);
	sb_addf(&path, "%s/results.csv", dir);
	if (csv_write_results(s, path.buf, &err) < 0) {
		fprintf(stderr, "rig report: %s\n", err.buf);
		goto out;
	}
	printf("%s\n", path.buf);
	sb_reset(&path);
	sb_addf(&path, "%s/files.csv", dir);
	if (csv_write_files(s, path.buf, &err) < 0) {
		fprintf(stderr, "rig report: %s\n", err.buf);
		goto out;
	}
	printf("%s\n", path.buf);
	rc = EXIT_OK;
out:
	if (s)
		store_close(s);
	sb_release(&path);
	sb_release(&err);
	return rc;
}
