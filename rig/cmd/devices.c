/*
 * rig devices: the disks of this machine and whether rig may erase them,
 * as the platform's driver lists them (provision/driver.h: from sysfs on
 * Linux, from diskutil's plists on macOS). Reads only; changes nothing.
 * `--platform macos` on Linux runs the macOS listing against whatever
 * diskutil is first on PATH (the tests' fake one).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "lib/strbuf.h"
#include "plan/platform.h"
#include "provision/driver.h"
#include "rig/cmd/cmd.h"

int cmd_devices(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "platform", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const struct plan_platform *platform = plan_platform_host();
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			if (cmd_parse_platform("devices", optarg, &platform))
				return EXIT_USAGE;
			break;
		default:
			return cmd_usage_error("devices", "unknown option");
		}
	}
	if (optind != argc)
		return cmd_usage_error("devices", "no arguments expected");
	if (!platform)
		return cmd_usage_error("devices", "rig has no driver for this machine's platform; "
				       "give --platform");
	struct strbuf out = STRBUF_INIT;
	prov_driver_of(platform)->devices_report(&out);
	fputs(out.buf, stdout);
	sb_release(&out);
	return EXIT_OK;
}
