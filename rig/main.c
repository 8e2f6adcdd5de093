/*
 * rig: storage experiments from a plan. The command table is in
 * cmd/common.c; each subcommand lives in its own file under cmd/.
 */
#include <stdio.h>
#include <string.h>

#include "lib/strbuf.h"
#include "platform/fault.h"
#include "rig/cmd/cmd.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		cmd_help(1, (char *[]){ "help", NULL });
		return EXIT_USAGE;
	}
	/* A testing facility (util/fault.h); a bad rule stops rig before anything. */
	struct strbuf ferr = STRBUF_INIT;
	if (plat_fault_init(&ferr) < 0) {
		fprintf(stderr, "rig: %s\n", ferr.buf);
		sb_release(&ferr);
		return EXIT_USAGE;
	}
	sb_release(&ferr);
	const char *name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "-V"))
		name = "version";
	else if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		name = "help";
	const struct rig_cmd *c = cmd_find(name);
	if (!c) {
		fprintf(stderr, "rig: '%s' is not a rig command; see 'rig help'\n", argv[1]);
		return EXIT_USAGE;
	}
	/* `rig run --help` and friends show the command's usage. */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(c->usage, stdout);
			return EXIT_OK;
		}
	}
	return c->fn(argc - 1, argv + 1);
}
