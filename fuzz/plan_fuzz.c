/*
 * libFuzzer harness: plan text -> plan, through the code `rig validate`
 * runs (plan_parse_text, which plan_parse_file calls with the file's bytes;
 * diag_print of every error with its source line; plan_free). Each input
 * is parsed one of three ways, chosen by a hash of its bytes: as plain
 * `rig validate`, or as `rig validate --platform linux|macos --fs-map ...`.
 * (Parsing a valid plan all three ways cost three parses an execution, and
 * never put an invalid plan through the platform checks.)
 *
 * Besides crashes, leaks and undefined behaviour (ASan, LeakSanitizer,
 * UBSan), it checks what the parser promises: a plan comes back unless the
 * text is not YAML at all, and a plan with errors has at least one error
 * with a message.
 *
 * libyaml's own memory comes from fuzz/yaml_arena.c (a poisoned bump
 * arena, not ASan's allocator), which also checks that every parse gives
 * all of it back.
 *
 * Build and run: make fuzz (see docs/testing.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/diag.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "yaml_arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's own code is not what is fuzzed: no coverage instrumentation
 * (its comparison tracing, over every input byte and every message, was 3%
 * of an execution). */
#if defined(__clang__)
#define HARNESS_FN __attribute__((no_sanitize("coverage")))
#else
#define HARNESS_FN
#endif

static FILE *sink;

HARNESS_FN static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "plan_fuzz: broken promise: %s\n", what);
		abort();
	}
}

HARNESS_FN static int parse_once(const uint8_t *data, size_t size, const struct plan_options *o)
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

/* Which way an input is parsed: a hash of its bytes, so that each input
 * always takes the same way (a finding reproduces) and a mutation takes any
 * of the three. */
HARNESS_FN static unsigned way_of(const uint8_t *data, size_t size)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	return h % 3;
}

HARNESS_FN int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	static const struct plan_options any = { .platform = NULL };
	struct plan_options linux_map = { .platform = plan_platform_find("linux"), .fs_map = "apfs=ext4,hfs+=xfs,exfat=btrfs,fat32=ext4" };
	struct plan_options macos_map = { .platform = plan_platform_find("macos"), .fs_map = "ext4=apfs,xfs=hfs+,btrfs=exfat" };
	const struct plan_options *ways[] = { &any, &linux_map, &macos_map };
	parse_once(data, size, ways[way_of(data, size)]);
	yaml_arena_end_input();
	static int told;
	if (!told && !yaml_arena_served()) {
		fprintf(stderr, "plan_fuzz: libyaml's allocations do not reach fuzz/yaml_arena.c "
				"on this platform; ASan's allocator serves them\n");
		told = 1;
	}
	return 0;
}
