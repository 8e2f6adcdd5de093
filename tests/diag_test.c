/* diag_suggest: the "did you mean" of every plan error. */
#include <string.h>

#include "lib/diag.h"
#include "test.h"

static const char *suggest(const char *word)
{
	static const char *const names[] = {
		"title", "baseline", "headline", "formats", "compare", "by",
		"a-candidate-name-longer-than-sixty-four-characters-to-take-the-heap-path-x",
	};
	return diag_suggest(word, names, sizeof(names) / sizeof(names[0]));
}

static void test_suggest(void)
{
	/* a swap of neighbours is one edit; case does not count */
	CU_ASSERT_STRING_EQUAL(suggest("tilte"), "title");
	CU_ASSERT_STRING_EQUAL(suggest("BaseLine"), "baseline");
	CU_ASSERT_STRING_EQUAL(suggest("headlin"), "headline");
	CU_ASSERT_STRING_EQUAL(suggest("fromats"), "formats");
	/* within len/3 edits only: "comp" is too far from "compare" by edits, but a prefix */
	CU_ASSERT_STRING_EQUAL(suggest("comp"), "compare");
	CU_ASSERT_PTR_NULL(suggest("zzzzzz"));
	/* long garbage is cut short, and the long candidate is still reachable */
	char junk[4096];
	memset(junk, 'q', sizeof(junk) - 1);
	junk[sizeof(junk) - 1] = '\0';
	CU_ASSERT_PTR_NULL(suggest(junk));
	CU_ASSERT_STRING_EQUAL(
		suggest("a-candidate-name-longer-than-sixty-four-characters-to-take-the-heap-path-y"),
		"a-candidate-name-longer-than-sixty-four-characters-to-take-the-heap-path-x");
	/* the nearest wins over an earlier farther one */
	static const char *const two[] = { "baseline", "basel" };
	CU_ASSERT_STRING_EQUAL(diag_suggest("basil", two, 2), "basel");
}

void register_diag_tests(void);
void register_diag_tests(void)
{
	CU_pSuite s = test_suite("diag: suggestions");
	test_add(s, "did you mean: nearest name within len/3 edits, prefix, long words", test_suggest);
}
