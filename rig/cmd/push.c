/*
 * rig push [--host NAME] RUN URL: the run in folder RUN into the shared
 * PostgreSQL store at URL (store/store_pg.h). The URL is checked before
 * anything is read or connected: one that carries a password is refused.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/strbuf.h"
#include "rig/cmd/cmd.h"
#include "store/store_pg.h"

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *host = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (c == 'H')
			host = optarg;
		else
			return cmd_usage_error("push", "unknown option");
	}
	if (argc - optind != 2)
		return cmd_usage_error("push", "give a run folder and a database URL");
	if (host && (!*host || strchr(host, '/')))
		return cmd_usage_error("push", "--host needs a name without '/'");
	const char *run = argv[optind], *url = argv[optind + 1];
	struct strbuf err = STRBUF_INIT;
	if (rep_pg_check_conninfo(url, &err) < 0) {
		fprintf(stderr, "rig push: %s\n", err.buf);
		sb_release(&err);
		return EXIT_USAGE;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct pgstore_pushed out;
	int rc = EXIT_FAILED;
	struct pgstore *p = store_pg_connect(url, &err);
	if (p && rep_pg_push(p, run, host, &out, &err) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (!strcmp(out.outcome, "unchanged"))
			printf("rig push: %s/%s: unchanged (stored already), nothing sent\n", out.host, out.id);
		else
			printf("rig push: %s/%s: %s, %" PRIu64 " rows (%" PRIu64 " samples) in %.2f s\n",
			       out.host, out.id, out.outcome, out.rows, out.samples, s);
		rc = EXIT_OK;
	} else {
		fprintf(stderr, "rig push: %s: %s\n", run, err.buf);
	}
	store_pg_close(p);
	sb_release(&err);
	return rc;
}
