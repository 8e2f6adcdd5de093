/*
 * rig report RUN: the run's derived files again, from its store alone:
 * results.csv, files.csv, summary.csv, and report.html with figures/ and
 * results.json as the plan's report.formats ask (reports/report.h). Works
 * on finished, failed, interrupted and still running runs alike.
 *
 * rig report --db URL [-o DIR] [HOST/]RUN: a run of the shared store
 * (store/store_pg.h), written as a run folder DIR (default: the run's id)
 * holding its results.db and the same reports.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "reports/report.h"
#include "rig/cmd/cmd.h"
#include "store/store.h"

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = { { "db", required_argument, NULL, 'd' },
						  { "output", required_argument, NULL, 'o' },
						  { NULL, 0, NULL, 0 } };
	const char *db = NULL, *out = NULL;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
		if (opt == 'd')
			db = optarg;
		else if (opt == 'o')
			out = optarg;
		else
			return cmd_usage_error("report", "unknown option");
	}
	if (argc - optind != 1)
		return cmd_usage_error("report", argc - optind < 1 ? "no run folder given"
								   : "one run folder at a time");
	if (out && !db)
		return cmd_usage_error("report", "-o is for --db: rig report RUN writes into RUN");
	const char *dir = argv[optind];
	if (db) {
		char *const ref = argv[optind];
		const char *slash = strrchr(ref, '/');
		dir = out ? out : slash ? slash + 1 : ref;
		/* A new folder, or an empty one (rmdir succeeds only then). */
		if (mkdir(dir, 0777) < 0 && (errno != EEXIST || rmdir(dir) < 0 || mkdir(dir, 0777) < 0)) {
			fprintf(stderr, "rig report: cannot create %s (it must not exist, or be empty): %s\n",
				dir, strerror(errno));
			return EXIT_FAILED;
		}
		int prc = cmd_db_pull("report", db, &ref, &dir, 1);
		if (prc != EXIT_OK) {
			rmdir(dir);
			return prc;
		}
	}
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&path, "%s/results.db", dir);
	struct store *s = store_open(path.buf, 1, &err);
	int rc = EXIT_FAILED;
	if (!s) {
		fprintf(stderr, "rig report: %s\n", err.buf);
		goto out;
	}
	if (rep_write(s, dir, &err) < 0) {
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
