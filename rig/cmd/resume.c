/* rig resume RUN: see the usage text in common.c and runner.h. */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "platform/spawn.h"
#include "rig/cmd/cmd.h"
#include "rig/run/runner.h"

int cmd_resume(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "yes", no_argument, NULL, 'y' },
		{ "force", no_argument, NULL, 'f' },
		{ "allow", required_argument, NULL, 'A' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json-progress", no_argument, NULL, 'J' },
		{ "no-fit-check", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_options ro = { 0 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "yq", longopts, NULL)) != -1) {
		switch (c) {
		case 'y': ro.yes = 1; break;
		case 'f': ro.force = 1; break;
		case 'A':
			if (cmd_parse_allow("resume", optarg, &ro.allow))
				return EXIT_USAGE;
			break;
		case 'q': ro.quiet = 1; break;
		case 'J': ro.json_progress = 1; break;
		case 'N': ro.no_fit_check = 1; break;
		default:
			return cmd_usage_error("resume", "unknown option");
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("resume", optind >= argc ? "no run folder given"
								: "one run folder at a time");
	struct strbuf full = STRBUF_INIT, dir = STRBUF_INIT, info = STRBUF_INIT,
		      err = STRBUF_INIT;
	sb_adds(&full, "rig ");
	plat_spawn_argv_text(&full, (const char *const *)argv);
	ro.argv_text = full.buf;
	enum run_status st = run_continue(argv[optind], &ro, &dir, &info, &err);
	int rc;
	if (st == RUN_OK && info.len) {
		printf("%s\n", info.buf);
		rc = EXIT_OK;
	} else if (st == RUN_OK) {
		struct strbuf html = STRBUF_INIT;
		sb_addf(&html, "%s/report.html", dir.buf);
		printf("run:      %s (resumed)\nresults:  %s/results.csv\nsummary:  %s/summary.csv\n",
		       dir.buf, dir.buf, dir.buf);
		printf("report:   %s\n", access(html.buf, R_OK) == 0 ? html.buf : "(no html in report.formats)");
		sb_release(&html);
		rc = EXIT_OK;
	} else if (st == RUN_FAILED) {
		fprintf(stderr, "rig resume: %s\n", err.buf);
		fprintf(stderr, "rig resume: what was measured is in %s; `rig resume %s` continues it\n",
			dir.buf, argv[optind]);
		rc = EXIT_FAILED;
	} else {
		fprintf(stderr, "rig resume: %s\n", err.buf);
		rc = run_cancel ? EXIT_FAILED : EXIT_USAGE; /* interrupted is not refused */
	}
	sb_release(&full);
	sb_release(&dir);
	sb_release(&info);
	sb_release(&err);
	return rc;
}
