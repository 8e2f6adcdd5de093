/*
 * libFuzzer harness: what rig reads from diskutil and hdiutil
 * (provision/macos/macos_plist.c). The input goes to every plist parser
 * (prov_mac_plist_fuzz_one: list, info with its error form, apfs list, hdiutil
 * attach, hdiutil info) and, as text up to its first NUL, to the two line
 * parsers of commands' text output (`Error: -69888: ...`, hdiutil create's
 * `created: PATH`). Besides crashes, leaks and undefined behaviour it checks
 * their promises (macos_plist.h): an error line that parses has a negative code,
 * and a created path is a non-empty string found in the input.
 *
 * Starting inputs: the real recordings in tests/fixtures/macos. Build and run:
 * make fuzz-plist FUZZ_TIME=600 (docs/testing.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "provision/macos/macos_plist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	prov_mac_plist_fuzz_one(data, size);

	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	long code = 0;
	struct strbuf msg = STRBUF_INIT;
	if (prov_mac_error_line(text, &code, &msg) && code >= 0) {
		fprintf(stderr, "an error line parsed with a non-negative code %ld\n", code);
		abort();
	}
	sb_release(&msg);
	char *path = prov_mac_created_path(text);
	if (path && (!*path || !strstr(text, path))) {
		fprintf(stderr, "created path \"%s\" is not in the input\n", path);
		abort();
	}
	free(path);
	free(text);
	return 0;
}
