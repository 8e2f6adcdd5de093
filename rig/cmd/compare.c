/*
 * rig compare [-o DIR] RUN_A RUN_B [...]: join runs on (step, volume or
 * file system, metric) and write compare.html (with figures/) and
 * compare.csv into DIR. Without -o, DIR is a new folder
 * compare-<first run's id>-<n> (the first n from 1 not taken), so that a
 * comparison never spreads its files into the current folder unasked and
 * never overwrites an earlier one. Each later run is
 * compared with the first; differences in plans, hosts, disks and versions
 * are printed as warnings and shown at the top of the page.
 *
 * rig compare --within [--against FS] [-o DIR] RUN...: inside each run,
 * every volume or file system against the reference one, a row per run,
 * into compare-within.csv and compare.html.
 *
 * With --db URL the runs are [HOST/]RUN of the shared store
 * (store/store_pg.h), pulled into temporary stores and compared as folders
 * are; the pages name each run as given, as they name a folder.
 */
#include <errno.h>
#include <stdlib.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/compare.h"
#include "reports/report_data.h"
#include "rig/cmd/cmd.h"

/* A new folder compare-ID-N for the default output; 0, or -1 (said). */
static int make_default_dir(const struct comparison *c, struct strbuf *dir)
{
	const char *id = c->runs[0].d->run.id;
	const char *slash = id ? strrchr(id, '/') : NULL;
	if (slash)
		id = slash + 1;
	for (unsigned n = 1; n < 10000; n++) {
		sb_reset(dir);
		sb_addf(dir, "compare-%s-%u", id && *id ? id : "run", n);
		if (mkdir(dir->buf, 0777) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	fprintf(stderr, "rig compare: cannot create %s: %s\n", dir->buf, strerror(errno));
	return -1;
}

int cmd_compare(int argc, char **argv)
{
	const char *out = NULL;
	struct strbuf made = STRBUF_INIT;
	const char *db = NULL;
	struct compare_opts o = { 0, NULL };
	int opt;
	optind = 1;
	static const struct option longopts[] = { { "output", required_argument, NULL, 'o' },
						  { "db", required_argument, NULL, 'd' },
						  { "within", no_argument, NULL, 'w' },
						  { "against", required_argument, NULL, 'a' },
						  { NULL, 0, NULL, 0 } };
	while ((opt = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
		if (opt == 'o')
			out = optarg;
		else if (opt == 'w')
			o.within = 1;
		else if (opt == 'a')
			o.against = optarg;
		else if (opt == 'd')
			db = optarg;
		else
			return cmd_usage_error("compare", "unknown option");
	}
	if (o.against && !o.within)
		return cmd_usage_error("compare", "--against names the reference of --within; give both");
	if (o.against && !*o.against)
		return cmd_usage_error("compare", "--against needs a volume or file system name");
	if (argc - optind < (o.within ? 1 : 2))
		return cmd_usage_error("compare", o.within ? "give one run folder or more"
							   : "give two run folders or more");
	size_t n = (size_t)(argc - optind);
	char *const *runs = argv + optind;
	char *tmp = NULL;
	char **dirs = NULL;
	struct comparison c;
	memset(&c, 0, sizeof(c));
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	int rc = EXIT_FAILED;
	if (db) {
		if (!(tmp = cmd_db_tmpdir("compare", n)))
			goto out;
		dirs = xcalloc(n, sizeof(*dirs));
		for (size_t i = 0; i < n; i++) {
			struct strbuf d = STRBUF_INIT;
			sb_addf(&d, "%s/%zu", tmp, i + 1);
			dirs[i] = sb_detach(&d);
		}
		if ((rc = cmd_db_pull("compare", db, runs, (const char *const *)dirs, n)) != EXIT_OK)
			goto out;
		rc = EXIT_FAILED;
		runs = dirs;
	}
	if (rep_compare_build(&c, runs, n, &o, &err) < 0) {
		fprintf(stderr, "rig compare: %s\n", err.buf);
		goto out;
	}
	/* The pages name a run of the database as given, as they name a folder. */
	for (size_t i = 0; db && i < n; i++)
		c.runs[i].dir = argv[optind + (int)i];
	for (size_t i = 0; i < c.nwarnings; i++)
		fprintf(stderr, "rig compare: warning: %s\n", c.warnings[i]);
	if (o.within) {
		size_t with_ref = 0;
		for (size_t i = 0; i < c.nruns; i++)
			with_ref += c.runs[i].ref != NULL;
		if (!with_ref) {
			fprintf(stderr, "rig compare: no run has a reference to compare with\n");
			goto out;
		}
	}
	if (!out) {
		if (make_default_dir(&c, &made) < 0)
			goto out;
		out = made.buf;
	} else if (mkdir(out, 0777) < 0 && access(out, W_OK) != 0) {
		fprintf(stderr, "rig compare: cannot create %s\n", out);
		goto out;
	}
	sb_addf(&path, "%s/%s", out, o.within ? "compare-within.csv" : "compare.csv");
	if (o.within ? rep_compare_within_write_csv(&c, path.buf, &err) < 0 ||
			       rep_compare_within_write_html(&c, out, &err) < 0
		     : rep_compare_write_csv(&c, path.buf, &err) < 0 || rep_compare_write_html(&c, out, &err) < 0) {
		fprintf(stderr, "rig compare: %s\n", err.buf);
		goto out;
	}
	printf("%s\n%s/compare.html\n", path.buf, out);
	rc = EXIT_OK;
out:
	rep_compare_free(&c);
	if (tmp)
		cmd_db_rmtmp(tmp, n);
	for (size_t i = 0; dirs && i < n; i++)
		free(dirs[i]);
	free(dirs);
	sb_release(&err);
	sb_release(&path);
	sb_release(&made);
	return rc;
}
