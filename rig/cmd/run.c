/* rig run PLAN: see the usage text in common.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "plan/platform.h"
#include "platform/spawn.h"
#include "provision/driver.h"
#include "rig/cmd/cmd.h"
#include "rig/run/runner.h"

/* rig run's options into po and ro (vars: po's --var storage): 0, or the
 * exit status of a usage error, said. */
static int parse_options(int argc, char **argv, struct plan_options *po, struct run_options *ro,
			 const char **vars)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "runs", required_argument, NULL, 'R' },
		{ "seed", required_argument, NULL, 'S' },
		{ "platform", required_argument, NULL, 'P' },
		{ "fs-map", required_argument, NULL, 'M' },
		{ "yes", no_argument, NULL, 'y' },
		{ "force", no_argument, NULL, 'f' },
		{ "allow", required_argument, NULL, 'A' },
		{ "image-size", required_argument, NULL, 'I' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json-progress", no_argument, NULL, 'J' },
		{ "no-fit-check", no_argument, NULL, 'N' },
		{ "var", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:yq", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': ro->out_dir = optarg; break;
		case 'R': ro->runs_root = optarg; break;
		case 'S':
			if (cmd_parse_seed(optarg, &ro->seed) < 0)
				return cmd_usage_error("run", "--seed takes an integer from 0 to 2^63-1, not '%s'", optarg);
			ro->has_seed = 1;
			break;
		case 'P':
			if (cmd_parse_platform("run", optarg, &po->platform))
				return EXIT_USAGE;
			break;
		case 'M': po->fs_map = optarg; break;
		case 'y': ro->yes = 1; break;
		case 'f': ro->force = 1; break;
		case 'A':
			if (cmd_parse_allow("run", optarg, &ro->allow))
				return EXIT_USAGE;
			break;
		case 'I':
			if (cmd_parse_image_size("run", optarg, &ro->image_size))
				return EXIT_USAGE;
			break;
		case 'q': ro->quiet = 1; break;
		case 'J': ro->json_progress = 1; break;
		case 'N': ro->no_fit_check = 1; break;
		case 'V':
			if (cmd_parse_var("run", optarg, vars, &po->nvars))
				return EXIT_USAGE;
			break;
		default:
			return cmd_usage_error("run", "unknown option");
		}
	}
	return 0;
}

/* What a run ended with, on stdout (where its files are) or stderr: the
 * exit status. dir: the run folder, "" when none was made. */
static int say_outcome(enum run_status st, const char *dir, const char *err)
{
	int rc;
	switch (st) {
	case RUN_OK: {
		struct strbuf html = STRBUF_INIT;
		sb_addf(&html, "%s/report.html", dir);
		printf("run:      %s\nresults:  %s/results.csv\nsummary:  %s/summary.csv\n"
		       "findings: %s/findings.csv\n", dir, dir, dir, dir);
		/* The plan's report.formats decide whether there is an HTML report. */
		printf("report:   %s\n", access(html.buf, R_OK) == 0 ? html.buf : "(no html in report.formats)");
		sb_release(&html);
		rc = EXIT_OK;
		break;
	}
	case RUN_FAILED:
		fprintf(stderr, "rig run: %s\n", err);
		if (*dir)
			fprintf(stderr, "rig run: what was measured is in %s; `rig resume %s` "
					"continues it\n", dir, dir);
		rc = EXIT_FAILED;
		break;
	default:
		fprintf(stderr, "rig run: %s\n", err);
		rc = run_cancel ? EXIT_FAILED : EXIT_USAGE; /* interrupted is not refused */
		break;
	}
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct plan_options po = { .platform = plan_platform_host(), .fs_map = NULL };
	struct run_options ro = { 0 };
	const char *vars[CMD_MAX_VARS];
	po.vars = vars;
	int rc = parse_options(argc, argv, &po, &ro, vars);
	if (rc)
		return rc;
	if (optind != argc - 1)
		return cmd_usage_error("run", optind >= argc ? "no plan given" : "one plan at a time");
	int nerr = 0;
	struct plan *p = cmd_load_plan(argv[optind], &po, &nerr);
	if (!p)
		return EXIT_USAGE;
	if (ro.image_size && p->target.kind != TARGET_IMAGE) {
		plan_free(p);
		return cmd_usage_error("run", "--image-size applies to image targets only");
	}

	struct strbuf dir = STRBUF_INIT, err = STRBUF_INIT;
	struct strbuf full = STRBUF_INIT;
	sb_adds(&full, "rig ");
	plat_spawn_argv_text(&full, (const char *const *)argv);
	ro.argv_text = full.buf;
	ro.popt = &po;
	enum run_status st = run_start(p, &ro, &dir, &err);
	rc = say_outcome(st, dir.len ? dir.buf : "", err.len ? err.buf : "");
	sb_release(&dir);
	sb_release(&err);
	sb_release(&full);
	plan_free(p);
	return rc;
}
