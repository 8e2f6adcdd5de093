/* rig compare: arrives with the reports (issue #7). */
#include <stdio.h>

#include "cmd.h"

int cmd_compare(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "rig compare: not available in this build yet "
			"(it arrives with the reports); compare results.csv files meanwhile\n");
	return EXIT_USAGE;
}
