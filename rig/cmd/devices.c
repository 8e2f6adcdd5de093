/*
 * rig devices: the disks of this machine and whether rig may erase them
 * (provision/linux_devices.c on Linux, from sysfs; provision/macos_facts.c
 * on macOS, from diskutil's plists). Reads only; changes nothing.
 * `--platform macos` on Linux runs the macOS listing against whatever
 * diskutil is first on PATH (the tests' fake one).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../../provision/linux.h"
#include "../../provision/macos.h"
#include "../util/spawn.h"
#include "../util/strbuf.h"
#include "cmd.h"

int cmd_devices(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "platform", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	enum plan_platform platform = cmd_host_platform();
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			if (cmd_parse_platform(optarg, &platform) < 0)
				return cmd_usage_error("devices", "unknown platform '%s' (linux or macos)", optarg);
			break;
		default:
			return cmd_usage_error("devices", "unknown option");
		}
	}
	if (optind != argc)
		return cmd_usage_error("devices", "no arguments expected");
	struct strbuf out = STRBUF_INIT;
	if (platform == PLATFORM_MACOS) {
		struct spawner sp = { 0 };
		macos_devices_report(mac_spawn_query, &sp, &out);
	} else {
		linux_devices_report("", &out);
	}
	fputs(out.buf, stdout);
	sb_release(&out);
	return EXIT_OK;
}
