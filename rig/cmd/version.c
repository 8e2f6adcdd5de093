/* rig --version */
#include <stdio.h>

#include "platform/platform.h"
#include "rig/cmd/cmd.h"

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("rig %s (%s)\n", RIG_VERSION, plat_name());
	return EXIT_OK;
}
