/*
 * The run's options record (store/run_options.c): what the writer records,
 * the parser reads back, field by field; a record of rig 0.1 (none) and
 * one without the seed scheme read as such runs were.
 */
#include <errno.h>
#include <string.h>

#include "lib/strbuf.h"
#include "plan/platform.h"
#include "plan/schedule.h"
#include "store/run_options.h"
#include "test.h"

static void test_round_trip(void)
{
	char *vars[] = { "DISK=disk6", "NAME=say \"hi\"" };
	struct store_run_options in = {
		.platform = plan_platform_find("macos"),
		.fs_map = "apfs=ext4,hfs+=xfs",
		.vars = vars,
		.nvars = 2,
		.image_size = 123456789012ull,
		.allow = 5,
		.force = 1,
		.no_fit_check = 1,
		.cwd = "/tmp/a folder",
		.seeds = SEED_CURRENT,
	}, out;
	struct strbuf j = STRBUF_INIT;
	store_run_options_json(&in, &j);
	CU_ASSERT_EQUAL_FATAL(store_run_options_parse(j.buf, &out), 0);
	CU_ASSERT_PTR_EQUAL(out.platform, in.platform);
	CU_ASSERT_STRING_EQUAL(out.fs_map, in.fs_map);
	CU_ASSERT_EQUAL_FATAL(out.nvars, 2);
	CU_ASSERT_STRING_EQUAL(out.vars[0], vars[0]);
	CU_ASSERT_STRING_EQUAL(out.vars[1], vars[1]);
	CU_ASSERT_EQUAL(out.image_size, in.image_size);
	CU_ASSERT_EQUAL(out.allow, 5);
	CU_ASSERT_EQUAL(out.force, 1);
	CU_ASSERT_EQUAL(out.no_fit_check, 1);
	CU_ASSERT_STRING_EQUAL(out.cwd, in.cwd);
	CU_ASSERT_EQUAL(out.seeds, SEED_CURRENT);
	store_run_options_release(&out);

	/* any platform, no map, no vars, the current folder */
	struct store_run_options any = { .seeds = SEED_CURRENT };
	sb_reset(&j);
	store_run_options_json(&any, &j);
	CU_ASSERT_EQUAL_FATAL(store_run_options_parse(j.buf, &out), 0);
	CU_ASSERT_PTR_NULL(out.platform);
	CU_ASSERT_PTR_NULL(out.fs_map);
	CU_ASSERT_EQUAL(out.nvars, 0);
	CU_ASSERT_PTR_NOT_NULL(out.cwd);
	store_run_options_release(&out);
	sb_release(&j);
}

static void test_old_records(void)
{
	struct store_run_options o;
	/* rig 0.1 recorded no options */
	CU_ASSERT_EQUAL(store_run_options_parse(NULL, &o), -EINVAL);
	store_run_options_release(&o);
	CU_ASSERT_EQUAL(store_run_options_parse("[1]", &o), -EINVAL);
	store_run_options_release(&o);
	/* before the seed scheme was recorded, each layout drew its own */
	CU_ASSERT_EQUAL(store_run_options_parse("{\"platform\":\"plan9\"}", &o), 0);
	CU_ASSERT_EQUAL(o.seeds, SEED_LAYOUT);
	CU_ASSERT_PTR_NULL(o.platform);
	store_run_options_release(&o);
}

void register_run_options_tests(void)
{
	CU_pSuite s = test_suite("the run's options record (store/run_options.c)");
	test_add(s, "written, then read back field by field", test_round_trip);
	test_add(s, "no record, not an object, no seed scheme", test_old_records);
}
