/* rig validate PLAN...: every error of every plan, file:line:column. */
#include <getopt.h>
#include <stdio.h>

#include "cmd.h"

int cmd_validate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "platform", required_argument, NULL, 'P' },
		{ "fs-map", required_argument, NULL, 'M' },
		{ "var", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
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
			printf("%s: ok (plan '%s', %s)\n", argv[i], p->name,
			       !p->platform ? "any platform"
							   : plan_platform_name(p->platform));
			plan_free(p);
		} else {
			fprintf(stderr, "%s: %d error%s\n", argv[i], nerr, nerr == 1 ? "" : "s");
			bad++;
		}
	}
	return bad ? EXIT_USAGE : EXIT_OK;
}
