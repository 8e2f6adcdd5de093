/*
 * libFuzzer harness: plan text -> plan, through the code `rig validate`
 * runs (plan_parse_text, which plan_parse_file calls with the file's bytes;
 * diag_print of every error with its source line; plan_free). A plan that
 * validates is parsed again for each platform with an --fs-map, as
 * `rig validate --platform ... --fs-map ...` would.
 *
 * Besides crashes, leaks and undefined behaviour (ASan, LeakSanitizer,
 * UBSan), it checks what the parser promises: a plan comes back unless the
 * text is not YAML at all, and a plan with errors has at least one error
 * with a message.
 *
 * Build and run: make fuzz (see docs/testing.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rig/diag.h"
#include "provision/driver.h"
#include "rig/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "plan_fuzz: broken promise: %s\n", what);
		abort();
	}
}

static int parse_once(const uint8_t *data, size_t size, const struct plan_options *o)
{
	struct diag d;
	diag_init(&d, "fuzz.yaml", NULL);
	struct plan *p = plan_parse_text("fuzz.yaml", (const char *)data, size, o, &d);
	check(p != NULL, "plan_parse_text returned NULL");
	diag_print(&d, sink);
	for (size_t i = 0; i < d.n; i++)
		check(d.items[i].msg && d.items[i].msg[0], "a diagnostic without a message");
	int ok = d.nerrors == 0;
	if (ok) {
		check(p->name && p->name[0], "a valid plan without a name");
		check(p->nsteps > 0, "a valid plan without steps");
	}
	diag_release(&d);
	plan_free(p);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	const struct plan_options any = { .platform = NULL };
	if (!parse_once(data, size, &any))
		return 0;
	const struct plan_options linux_map = { .platform = prov_driver_find("linux"), .fs_map = "apfs=ext4,hfs+=xfs,exfat=btrfs,fat32=ext4" };
	const struct plan_options macos_map = { .platform = prov_driver_find("macos"), .fs_map = "ext4=apfs,xfs=hfs+,btrfs=exfat" };
	parse_once(data, size, &linux_map);
	parse_once(data, size, &macos_map);
	return 0;
}
