/*
 * rig devices: the disks of this machine and whether rig may erase them
 * (provision/linux_devices.c on Linux; the macOS listing arrives with its
 * backend). Reads only; changes nothing.
 */
#include <stdio.h>
#include <string.h>

#include "../../platform/platform.h"
#include "../../provision/linux.h"
#include "../util/strbuf.h"
#include "cmd.h"

int cmd_devices(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return cmd_usage_error("devices", "no arguments expected");
	if (strcmp(plat_name(), "linux")) {
		fprintf(stderr, "rig devices: not available on %s in this build yet (it arrives "
				"with the macOS backend)\n", plat_name());
		return EXIT_USAGE;
	}
	struct strbuf out = STRBUF_INIT;
	linux_devices_report("", &out);
	fputs(out.buf, stdout);
	sb_release(&out);
	return EXIT_OK;
}
