/*
 * Tests of --var NAME=VALUE (plan/plan_vars.c, with the target's and the
 * steps' use of it in plan_target.c, plan_steps.c and params.c): values in
 * module parameters and the target, messages at the `$name` that says the
 * value came from --var, the errors (undefined, unknown, shadowing a sweep,
 * malformed, twice), the schedule's bindings, and `rig run` recording the
 * values so that `rig resume` and `rig report` parse the plan alike.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "lib/strbuf.h"
#include "modules/module.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "plan/schedule.h"
#include "provision/driver.h"
#include "rig/run/resume.h"
#include "store/run_options.h"
#include "test.h"

void register_plan_vars_tests(void);

#define HDR "rig: 1\nname: t\n"
#define DIRS "target:\n  dirs: [/tmp/a]\n"

static struct plan *parse_vars(const char *text, const char *const *vars, size_t n,
			       struct diag *d)
{
	struct plan_options o = { .platform = plan_platform_find("linux"), .vars = vars, .nvars = n };
	diag_init(d, "plan.yaml", NULL);
	return plan_parse_text("plan.yaml", text, strlen(text), &o, d);
}

/* Whether some error is at line:col and contains text. */
static int has_error(const struct diag *d, int line, int col, const char *text)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct diag_item *it = &d->items[i];
		if (it->level == DIAG_ERROR && it->mark.line == line && it->mark.col == col &&
		    strstr(it->msg, text))
			return 1;
	}
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "  have %d:%d %s\n", d->items[i].mark.line, d->items[i].mark.col,
			d->items[i].msg);
	return 0;
}

/* The value a bound null step records: its `value` parameter. */
static uint64_t bound_value(const struct plan_step *st, const struct binding *b, struct diag *d)
{
	const struct rig_module *m = st->module;
	void *args = calloc(1, m->args_size ? m->args_size : 1);
	uint64_t v = 0;
	if (plan_params_bind(m, st->params, b, args, d, st->mark) == 0)
		memcpy(&v, (char *)args + mod_param(m, "value")->offset, sizeof(v));
	plan_params_free(m, args);
	free(args);
	return v;
}

static void test_params_and_schedule(void)
{
	static const char plan[] = HDR DIRS "steps:\n"
		"  - null: { value: $v }\n"
		"  - sweep:\n"
		"      w: [7, 8]\n"
		"      steps:\n"
		"        - null: { value: $w, time: $t }\n";
	const char *vars[] = { "v=42", "t=1ms" };
	struct diag d;
	struct plan *p = parse_vars(plan, vars, 2, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL_FATAL(p->nvars, 2);
	CU_ASSERT_STRING_EQUAL(p->vars[0].var, "v");
	CU_ASSERT_STRING_EQUAL(p->vars[0].value, "42");
	CU_ASSERT(p->vars[0].from_var);
	CU_ASSERT_PTR_EQUAL(p->vars[0].outer, &p->vars[1]);
	CU_ASSERT_PTR_NULL(p->vars[1].outer);
	/* The schedule's cells bind the --var values outside the sweep's. */
	struct schedule s;
	CU_ASSERT_EQUAL_FATAL(plan_schedule_build(p, 1, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 3);
	uint64_t got[3];
	for (size_t i = 0; i < 3; i++)
		got[i] = bound_value(s.cells[i].step, s.cells[i].bindings, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(got[0], 42);
	CU_ASSERT_EQUAL(got[1], 7);
	CU_ASSERT_EQUAL(got[2], 8);
	plan_schedule_free(&s);
	diag_release(&d);
	plan_free(p);
}

static void test_messages_at_use(void)
{
	static const char plan[] = HDR DIRS "steps:\n"
		"  - null: { value: $v }\n"
		"  - write: { sizes: [1M, $big] }\n";
	const char *vars[] = { "v=lots", "big=1Q" };
	struct diag d;
	struct plan *p = parse_vars(plan, vars, 2, &d);
	CU_ASSERT(has_error(&d, 6, 20, "invalid number 'lots' for 'value' in step 'null' "
			    "(the value of $v, from --var)"));
	CU_ASSERT(has_error(&d, 7, 26, "(the value of $big, from --var)"));
	diag_release(&d);
	plan_free(p);
	/* No --var and no sweep: the message says how to give one. */
	p = parse_vars(plan, NULL, 0, &d);
	CU_ASSERT(has_error(&d, 6, 20, "undefined variable '$v' in parameter 'value' of step "
			    "'null': no enclosing sweep defines it; give it with --var v=VALUE"));
	diag_release(&d);
	plan_free(p);
}

static void test_target(void)
{
	static const char disk[] = HDR "target:\n  disk: { device: $disk, confirm: $confirm }\n"
		"layouts:\n  - name: l\n    partitions:\n      - { name: a, fs: ext4, size: rest }\n"
		"steps:\n  - null: {}\n";
	const char *vars[] = { "disk=/dev/sdq", "confirm=WD Blue 1TB" };
	struct diag d;
	struct plan *p = parse_vars(disk, vars, 2, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_STRING_EQUAL(p->target.device, "/dev/sdq");
	CU_ASSERT_STRING_EQUAL(p->target.confirm, "WD Blue 1TB");
	diag_release(&d);
	plan_free(p);
	/* A value from --var is checked as one written in the plan, at the $name. */
	const char *bad[] = { "disk=sdq", "confirm=x\ny" };
	p = parse_vars(disk, bad, 2, &d);
	CU_ASSERT(has_error(&d, 4, 19, "(the value of $disk, from --var)"));
	CU_ASSERT(has_error(&d, 4, 35, "'confirm' (the value of $confirm, from --var) contains a "
			    "control character"));
	diag_release(&d);
	plan_free(p);
	p = parse_vars(disk, NULL, 0, &d);
	CU_ASSERT(has_error(&d, 4, 19, "undefined variable '$disk' in the device: give it with "
			    "--var disk=VALUE"));
	diag_release(&d);
	plan_free(p);

	static const char image[] = HDR "target:\n  image: { path: $img, size: $size }\n"
		"layouts:\n  - name: l\n    partitions:\n      - { name: a, fs: ext4, size: rest }\n"
		"steps:\n  - null: {}\n";
	const char *iv[] = { "img=/var/tmp/h1.img", "size=256M" };
	p = parse_vars(image, iv, 2, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_STRING_EQUAL(p->target.image_path, "/var/tmp/h1.img");
	CU_ASSERT_EQUAL(p->target.image_size, 256ull << 20);
	diag_release(&d);
	plan_free(p);
	const char *small[] = { "img=/var/tmp/h1.img", "size=4K" };
	p = parse_vars(image, small, 2, &d);
	CU_ASSERT(has_error(&d, 4, 30, "image size '4K' (the value of $size, from --var) is too "
			    "small"));
	diag_release(&d);
	plan_free(p);
	/* A dirs target's folders and names: each host of a fleet its own. */
	static const char dirs[] = HDR "target:\n  dirs: [$d, /srv/b]\n  names: [$n, b]\n"
		"steps:\n  - null: {}\n";
	const char *dv[] = { "d=/scratch/rig", "n=host1" };
	p = parse_vars(dirs, dv, 2, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_STRING_EQUAL(p->target.dirs[0], "/scratch/rig");
	CU_ASSERT_STRING_EQUAL(p->target.names[0], "host1");
	diag_release(&d);
	plan_free(p);
	const char *dup[] = { "d=/srv/b", "n=b" };
	p = parse_vars(dirs, dup, 2, &d);
	CU_ASSERT(has_error(&d, 4, 14, "directory '/srv/b' appears twice in 'dirs'"));
	diag_release(&d);
	plan_free(p);
	const char *badname[] = { "d=/scratch/rig", "n=no good" };
	p = parse_vars(dirs, badname, 2, &d);
	CU_ASSERT(has_error(&d, 5, 11, "invalid volume name 'no good' (the value of $n, from --var)"));
	diag_release(&d);
	plan_free(p);
	p = parse_vars(dirs, NULL, 0, &d);
	CU_ASSERT(has_error(&d, 4, 10, "undefined variable '$d' in the directory path: give it "
			    "with --var d=VALUE"));
	diag_release(&d);
	plan_free(p);
	const char *only_d[] = { "d=/scratch/rig" };
	p = parse_vars(dirs, only_d, 1, &d);
	CU_ASSERT(has_error(&d, 5, 11, "undefined variable '$n' in the volume name"));
	diag_release(&d);
	plan_free(p);
	/* `$$` is a literal `$`. */
	static const char dollar[] = HDR "target:\n  image: { path: $$img, size: 1G }\n"
		"layouts:\n  - name: l\n    partitions:\n      - { name: a, fs: ext4, size: rest }\n"
		"steps:\n  - null: {}\n";
	p = parse_vars(dollar, NULL, 0, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_STRING_EQUAL(p->target.image_path, "$img");
	diag_release(&d);
	plan_free(p);
}

static void test_errors(void)
{
	static const char plan[] = HDR DIRS "steps:\n"
		"  - null: { value: $v }\n"
		"  - sweep:\n"
		"      w: [7, 8]\n"
		"      steps:\n"
		"        - null: { value: $w }\n";
	struct diag d;
	const char *unknown[] = { "v=1", "vv=2" };
	struct plan *p = parse_vars(plan, unknown, 2, &d);
	CU_ASSERT_EQUAL(d.nerrors, 1);
	CU_ASSERT(has_error(&d, 0, 0, "unknown variable in --var vv=2: the plan has no $vv"));
	diag_release(&d);
	plan_free(p);
	const char *shadow[] = { "v=1", "w=3" };
	p = parse_vars(plan, shadow, 2, &d);
	CU_ASSERT_EQUAL(d.nerrors, 1);
	CU_ASSERT(has_error(&d, 8, 7, "sweep variable 'w' is also given with --var w=3: a --var "
			    "may not shadow a sweep variable"));
	diag_release(&d);
	plan_free(p);
	const char *twice[] = { "v=1", "v=2" };
	p = parse_vars(plan, twice, 2, &d);
	CU_ASSERT(has_error(&d, 0, 0, "--var v is given twice"));
	diag_release(&d);
	plan_free(p);
	static const char *const malformed[] = { "v", "=1", "V=1", "$v=1", "1v=2" };
	for (size_t i = 0; i < sizeof(malformed) / sizeof(*malformed); i++) {
		struct strbuf e = STRBUF_INIT;
		size_t n;
		CU_ASSERT_EQUAL(plan_var_split(malformed[i], &n, &e), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(e.buf, malformed[i]));
		sb_release(&e);
	}
	struct strbuf e = STRBUF_INIT;
	size_t n = 0;
	CU_ASSERT_EQUAL(plan_var_split("disk=/dev/sdb=x", &n, &e), 0);
	CU_ASSERT_EQUAL(n, 4);
	sb_release(&e);
}

/* rig run records the values; rig resume's and the reports' reading of them. */
static void test_run_records_vars(void)
{
	char *dir = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, db = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", dir);
	sb_addf(&out, "%s/out", dir);
	sb_addf(&db, "%s/out/results.db", dir);
	CU_ASSERT_EQUAL(test_write_file(plan.buf, HDR "target:\n  dirs: [vol]\nsteps:\n"
					"  - null: { value: $v }\n"), 0);
	char *text = NULL;
	const char *bad[] = { "run", "-q", "--var", "v", plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig_in(dir, bad, &text), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--var takes NAME=VALUE"));
	free(text);
	const char *none[] = { "validate", plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig_in(dir, none, &text), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "give it with --var v=VALUE"));
	free(text);
	const char *plan_cmd[] = { "plan", "--var", "v=5", plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig_in(dir, plan_cmd, &text), 0);
	free(text);
	const char *args[] = { "run", "-q", "--var", "v=31", "-o", out.buf, plan.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig_in(dir, args, &text), 0);
	free(text);
	sqlite3 *h = NULL;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(db.buf, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	CU_ASSERT_EQUAL(sqlite3_prepare_v2(h, "SELECT (SELECT options_json FROM run), (SELECT "
					   "value FROM samples WHERE metric = 'value')", -1, &st,
					   NULL), SQLITE_OK);
	CU_ASSERT_EQUAL_FATAL(sqlite3_step(st), SQLITE_ROW);
	struct store_run_options ro;
	CU_ASSERT_EQUAL(store_run_options_parse((const char *)sqlite3_column_text(st, 0), &ro), 0);
	CU_ASSERT_EQUAL_FATAL(ro.nvars, 1);
	CU_ASSERT_STRING_EQUAL(ro.vars[0], "v=31");
	CU_ASSERT_EQUAL(sqlite3_column_double(st, 1), 31.0);
	store_run_options_release(&ro);
	sqlite3_finalize(st);
	sqlite3_close(h);
	/* The reports parse the stored plan with the recorded values. */
	const char *rep[] = { "report", out.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig_in(dir, rep, &text), 0);
	CU_ASSERT_PTR_NULL(strstr(text, "does not validate"));
	free(text);
	test_rmtree(dir);
	free(dir);
	sb_release(&plan);
	sb_release(&out);
	sb_release(&db);
}

/* The fleet's plan validates with a host's values, on macOS. */
static void test_fleet_plan(void)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/fleet/plans/ten-containers.yaml", test_src());
	const char *vars[] = { "disk=disk4", "confirm=ST2000LM007-1R8174" };
	struct plan_options o = { .platform = plan_platform_find("macos"), .vars = vars, .nvars = 2 };
	struct diag d;
	diag_init(&d, NULL, NULL);
	struct plan *p = plan_parse_file(path.buf, &o, &d);
	CU_ASSERT_EQUAL(d.n, 0);
	if (d.n)
		diag_print(&d, stderr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(p->target.device, "disk4");
	diag_release(&d);
	plan_free(p);
	sb_release(&path);
}

void register_plan_vars_tests(void)
{
	CU_pSuite s = test_suite_e2e("plan --var");
	test_add(s, "module parameters and the schedule's bindings", test_params_and_schedule);
	test_add(s, "messages at the $name, saying --var", test_messages_at_use);
	test_add(s, "the target: device, confirm, image path and size, folders and names", test_target);
	test_add(s, "unknown, shadowing, twice, malformed", test_errors);
	test_add(s, "rig run records the values for resume and report", test_run_records_vars);
	test_add(s, "fleet/plans/ten-containers.yaml with a host's values", test_fleet_plan);
}
