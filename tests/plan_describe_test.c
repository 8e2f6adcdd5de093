/* A description's stated counts against the plan's (plan/plan_describe.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/diag.h"
#include "lib/strbuf.h"
#include "plan/plan.h"
#include "test.h"

void register_plan_describe_tests(void);

/* The warnings of a dirs plan with this description and these steps. */
static char *warnings(const char *desc, const char *steps)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "rig: 1\nname: d\ndescription: >\n  %s\nrepeat: 3\ntarget:\n  dirs: [/tmp/rig-d/a, /tmp/rig-d/b]\n"
		 "steps:\n%s",
		 desc, steps);
	struct diag d;
	diag_init(&d, "plan.yaml", NULL);
	struct plan *p = plan_parse_text("plan.yaml", text, strlen(text), NULL, &d);
	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < d.n; i++)
		if (d.items[i].level == DIAG_WARNING)
			sb_addf(&sb, "%d:%d %s\n", d.items[i].mark.line, d.items[i].mark.col,
				d.items[i].msg);
	diag_release(&d);
	plan_free(p);
	return sb_detach(&sb);
}

static void expect(const char *desc, const char *steps, const char *want)
{
	char *w = warnings(desc, steps);
	if (want ? !strstr(w, want) : *w != '\0')
		fprintf(stderr, "\ndescription '%s': want %s, got '%s'\n", desc,
			want ? want : "no warning", w);
	CU_ASSERT_TRUE(want ? strstr(w, want) != NULL : *w == '\0');
	free(w);
}

static void test_counts(void)
{
	const char *write16 = "  - write: { files: 16, size: 1M }\n  - read: {}\n";
	/* the case: the text says 160, the plan writes 16 */
	expect("160 test files written and read back.", write16,
	       "3:14 the description says '160 test files', but the plan has no such count "
	       "(files: 16)");
	expect("16 test files written and read back.", write16, NULL);
	expect("1,000,000 files in a tree.", "  - tree: { files: 1000000 }\n", NULL);
	expect("1,000 files in a tree.", "  - tree: { files: 1000000 }\n", "'1,000 files'");
	/* cycles, passes, repetitions, volumes */
	const char *cyc = "  - tree: { files: 10 }\n  - cycle:\n      times: 8\n      steps:\n"
			  "        - enumerate: {}\n        - churn: {}\n";
	expect("Walked after each of 20 cycles.", cyc, "(cycle times: 8)");
	expect("Walked after each of 8 cycles.", cyc, NULL);
	expect("3 repetitions of 1 pass each.", "  - randread: { passes: 1, span: 1M, time: 1s }\n",
	       NULL);
	expect("5 repetitions.", "  - null: {}\n", "(repeat: 3)");
	expect("2 equal halves as volumes, 4 volumes in all.", "  - null: {}\n", "'4 volumes', but the plan has no such count (volumes per layout: 2)");
	/* units, percentages, capitalised words, numbers inside words: not counts */
	expect("5% of the files, 2 GB files, 260 GB HFS+ partition, 10 ms, QD32 files, "
	       "disk6 volumes, 7 Files.", write16, NULL);
	/* a kind the plan has no count of says nothing */
	expect("12 levels of fill.", write16, NULL);
}

void register_plan_describe_tests(void)
{
	CU_pSuite s = test_suite("plan: the description's counts");
	test_add(s, "a count the plan does not have is a warning at the description", test_counts);
}
