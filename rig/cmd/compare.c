/*
 * rig compare [-o DIR] RUN_A RUN_B [...]: join runs on (step, volume or
 * file system, metric) and write compare.html (with figures/) and
 * compare.csv into DIR (default: the current directory). Each later run is
 * compared with the first; differences in plans, hosts, disks and versions
 * are printed as warnings and shown at the top of the page.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../reports/compare.h"
#include "../util/strbuf.h"
#include "cmd.h"

int cmd_compare(int argc, char **argv)
{
	const char *out = ".";
	int opt;
	optind = 1;
	static const struct option longopts[] = { { "output", required_argument, NULL, 'o' },
						  { NULL, 0, NULL, 0 } };
	while ((opt = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
		if (opt == 'o')
			out = optarg;
		else
			return cmd_usage_error("compare", "unknown option");
	}
	if (argc - optind < 2)
		return cmd_usage_error("compare", "give two run folders or more");
	struct comparison c;
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	int rc = EXIT_FAILED;
	if (compare_build(&c, argv + optind, (size_t)(argc - optind), &err) < 0) {
		fprintf(stderr, "rig compare: %s\n", err.buf);
		goto out;
	}
	for (size_t i = 0; i < c.nwarnings; i++)
		fprintf(stderr, "rig compare: warning: %s\n", c.warnings[i]);
	if (mkdir(out, 0777) < 0 && access(out, W_OK) != 0) {
		fprintf(stderr, "rig compare: cannot create %s\n", out);
		goto out;
	}
	sb_addf(&path, "%s/compare.csv", out);
	if (compare_write_csv(&c, path.buf, &err) < 0 || compare_write_html(&c, out, &err) < 0) {
		fprintf(stderr, "rig compare: %s\n", err.buf);
		goto out;
	}
	printf("%s\n%s/compare.html\n", path.buf, out);
	rc = EXIT_OK;
out:
	compare_free(&c);
	sb_release(&err);
	sb_release(&path);
	return rc;
}
