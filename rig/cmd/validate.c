/* rig validate PLAN...: every error of every plan, file:line:column. */
#include <getopt.h>
#include <stdio.h>

#include "plan/schedule.h"
#include "rig/cmd/cmd.h"
#include "rig/run/plan_estimate.h"

/* The fit check of rig plan (plan_estimate.h): warnings to stderr; the
 * count. Disk targets are checked at run time. */
static size_t fit_warnings(const struct plan *p, uint64_t image_size)
{
	struct schedule s;
	uint64_t seed = p->has_seed ? p->seed : 0;
	if (plan_schedule_build(p, seed, &s) < 0)
		return 0;
	struct plan_est_options o = { .seed = seed, .seed_known = p->has_seed,
				      .image_size = image_size, .layout = -1 };
	struct plan_est e;
	struct diag d;
	diag_init(&d, p->file, p->text);
	run_plan_estimate(p, &s, &o, &e, &d);
	diag_print(&d, stderr);
	size_t n = e.nwarnings;
	diag_release(&d);
	run_plan_estimate_release(&e);
	plan_schedule_free(&s);
	return n;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "platform", required_argument, NULL, 'P' },
		{ "fs-map", required_argument, NULL, 'M' },
		{ "image-size", required_argument, NULL, 'I' },
		{ "var", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t image_size = 0;
	struct plan_options po = { .platform = NULL, .fs_map = NULL };
	const char *vars[CMD_MAX_VARS];
	po.vars = vars;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			if (cmd_parse_platform("validate", optarg, &po.platform))
				return EXIT_USAGE;
			break;
		case 'M':
			po.fs_map = optarg;
			break;
		case 'I':
			if (cmd_parse_image_size("validate", optarg, &image_size))
				return EXIT_USAGE;
			break;
		case 'V':
			if (cmd_parse_var("validate", optarg, vars, &po.nvars))
				return EXIT_USAGE;
			break;
		default:
			return cmd_usage_error("validate", "unknown option");
		}
	}
	if (optind >= argc)
		return cmd_usage_error("validate", "no plan given");
	int bad = 0;
	for (int i = optind; i < argc; i++) {
		int nerr = 0;
		struct plan *p = cmd_load_plan(argv[i], &po, &nerr);
		if (p) {
			size_t nw = fit_warnings(p, p->target.kind == TARGET_IMAGE ? image_size : 0);
			printf("%s: ok (plan '%s', %s)", argv[i], p->name,
			       !p->platform ? "any platform"
							   : plan_platform_name(p->platform));
			if (nw)
				printf(", %zu warning%s: its data does not fit its target", nw,
				       nw == 1 ? "" : "s");
			printf("\n");
			plan_free(p);
		} else {
			fprintf(stderr, "%s: %d error%s\n", argv[i], nerr, nerr == 1 ? "" : "s");
			bad++;
		}
	}
	return bad ? EXIT_USAGE : EXIT_OK;
}
