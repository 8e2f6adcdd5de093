/* rig devices: arrives with the provisioning backends (issues #4, #5). */
#include <stdio.h>

#include "cmd.h"

int cmd_devices(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "rig devices: not available in this build yet "
			"(it arrives with the Linux and macOS provisioning backends)\n");
	return EXIT_USAGE;
}
