/*
 * The report as a user gets it: report.html rendered by headless Chromium
 * (Debian's `chromium`, installed by ./setup), which must paint a page that
 * is not blank, with the figures' colours on it, and log nothing to the
 * console; its DOM must hold every section and figure. A page with a
 * console error is checked first, so the console check is known to catch
 * one. Without Chromium the suite is skipped with a message.
 *
 * Also end to end through the rig binary: `rig run` of a null-module plan
 * with a cycle, a sweep and repetitions, `rig report` on it, and `rig
 * compare` of two runs.
 */
#include <cairo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "report_util.h"
#include "test.h"

static char *chromium_bin;

static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = path; *p;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		sb_reset(&sb);
		sb_add(&sb, p, n);
		sb_addf(&sb, "/%s", name);
		if (access(sb.buf, X_OK) == 0)
			return sb_detach(&sb);
		p += n + (e ? 1 : 0);
	}
	sb_release(&sb);
	return NULL;
}

struct shot {
	int rc;
	char *log;          /* Chromium's stderr */
	char *dom;          /* --dump-dom output */
	int console_lines;  /* messages the page logged to the console */
	double nonwhite;    /* share of pixels that are not white */
	int figure_blue;    /* pixels of the first figure colour (0, 114, 178) */
};

/* Screenshot url into png and dump its DOM, each with a fresh profile. */
static void render(const char *url, const char *png, struct shot *s)
{
	memset(s, 0, sizeof(*s));
	char *prof = test_tmpdir();
	struct strbuf shot = STRBUF_INIT, user = STRBUF_INIT;
	sb_addf(&shot, "--screenshot=%s", png);
	sb_addf(&user, "--user-data-dir=%s", prof);
	const char *argv[] = { chromium_bin, "--headless", "--no-sandbox", "--disable-gpu",
			       "--disable-background-networking", "--disable-component-update",
			       "--disable-sync", "--no-first-run", user.buf, "--enable-logging=stderr",
			       "--log-level=0", shot.buf, "--window-size=1200,2000", url, NULL };
	char *out = NULL;
	s->rc = rfx_run(argv, &out, &s->log);
	free(out);
	test_rmtree(prof);
	free(prof);
	prof = test_tmpdir();
	sb_reset(&user);
	sb_addf(&user, "--user-data-dir=%s", prof);
	const char *dargv[] = { chromium_bin, "--headless", "--no-sandbox", "--disable-gpu",
				"--disable-background-networking", "--disable-component-update",
				"--disable-sync", "--no-first-run", user.buf, "--enable-logging=stderr",
				"--log-level=0", "--dump-dom", url, NULL };
	char *log2 = NULL;
	rfx_run(dargv, &s->dom, &log2);
	test_rmtree(prof);
	free(prof);
	for (const char *logs[] = { s->log, log2 }, **l = logs; l < logs + 2; l++)
		for (const char *p = *l ? strstr(*l, ":CONSOLE") : NULL; p; p = strstr(p + 1, ":CONSOLE"))
			s->console_lines++;
	free(log2);
	sb_release(&shot);
	sb_release(&user);

	cairo_surface_t *img = cairo_image_surface_create_from_png(png);
	if (cairo_surface_status(img) == CAIRO_STATUS_SUCCESS) {
		cairo_surface_flush(img);
		int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
		int stride = cairo_image_surface_get_stride(img);
		const unsigned char *data = cairo_image_surface_get_data(img);
		long nonwhite = 0;
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				uint32_t px = *(const uint32_t *)(data + (size_t)y * stride + (size_t)x * 4);
				unsigned r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
				nonwhite += r < 250 || g < 250 || b < 250;
				s->figure_blue += r == 0 && g == 114 && b == 178;
			}
		s->nonwhite = w && h ? (double)nonwhite / ((double)w * h) : 0;
	}
	cairo_surface_destroy(img);
}

static void shot_free(struct shot *s)
{
	free(s->log);
	free(s->dom);
}

static void test_console_check_catches_errors(void)
{
	char *dir = test_tmpdir();
	struct strbuf page = STRBUF_INIT, url = STRBUF_INIT, png = STRBUF_INIT;
	sb_addf(&page, "%s/bad.html", dir);
	test_write_file(page.buf, "<!DOCTYPE html><html><body><p>x</p><script>console.error('boom');"
				  "undefined_function();</script></body></html>");
	sb_addf(&url, "file://%s", page.buf);
	sb_addf(&png, "%s/bad.png", dir);
	struct shot s;
	render(url.buf, png.buf, &s);
	CU_ASSERT_EQUAL(s.rc, 0);
	CU_ASSERT_TRUE(s.console_lines >= 2);
	CU_ASSERT_TRUE(s.nonwhite < 0.01); /* and a nearly empty page is seen as one */
	shot_free(&s);
	test_rmtree(dir);
	free(dir);
	sb_release(&page);
	sb_release(&url);
	sb_release(&png);
}

static void test_report_renders(void)
{
	char *dir = test_tmpdir();
	struct fx_opts o = { .reps = 3, .seed = 9 };
	CU_ASSERT_EQUAL_FATAL(rfx_make_store(dir, &o), 0);
	const char *args[] = { "report", dir, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(args, &out), 0);
	free(out);
	struct strbuf url = STRBUF_INIT, png = STRBUF_INIT;
	sb_addf(&url, "file://%s/report.html", dir);
	sb_addf(&png, "%s/report.png", dir);
	struct shot s;
	render(url.buf, png.buf, &s);
	CU_ASSERT_EQUAL(s.rc, 0);
	CU_ASSERT_EQUAL(s.console_lines, 0);
	if (s.console_lines)
		fprintf(stderr, "\nChromium's console:\n%s\n", s.log);
	CU_ASSERT_TRUE(s.nonwhite > 0.03);
	if (s.figure_blue <= 300)
		fprintf(stderr, "\nfirst-colour pixels: %d\n", s.figure_blue);
	CU_ASSERT_TRUE(s.figure_blue > 300); /* the lead figure's first series is painted */
	/* The DOM as Chromium parsed it: every section, every figure. */
	CU_ASSERT_PTR_NOT_NULL(s.dom);
	if (s.dom) {
		CU_ASSERT_PTR_NOT_NULL(strstr(s.dom, "id=\"findings\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(s.dom, "id=\"provenance\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(s.dom, "id=\"step-4.sweep.1\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(s.dom, "</main>"));
		int figs = 0, svgs = 0;
		for (const char *p = strstr(s.dom, "<figure"); p; p = strstr(p + 1, "<figure"))
			figs++;
		for (const char *p = strstr(s.dom, "<svg"); p; p = strstr(p + 1, "<svg"))
			svgs++;
		CU_ASSERT_TRUE(figs >= 7);
		CU_ASSERT_EQUAL(figs, svgs);
	}
	shot_free(&s);
	test_rmtree(dir);
	free(dir);
	sb_release(&url);
	sb_release(&png);
}

/* --- end to end through the binary --- */

static void write_plan(const char *path, const char *dir, int seed)
{
	struct strbuf t = STRBUF_INIT;
	sb_addf(&t, "rig: 1\nname: e2e-report\nseed: %d\ntarget:\n  dirs: [\"%s/a\", \"%s/b\"]\n"
		    "repeat: 3\nsteps:\n  - null: { value: 5, files: 3 }\n"
		    "  - cycle:\n      times: 2\n      steps:\n        - null: { value: 7 }\n"
		    "  - sweep:\n      level: [90, 95]\n      steps:\n        - null: { value: $level }\n"
		    "report:\n  baseline: a\n  by: [cycle]\n  formats: [html, csv, json]\n",
		seed, dir, dir);
	test_write_file(path, t.buf);
	sb_release(&t);
}

static void test_run_report_compare(void)
{
	char *dir = test_tmpdir();
	struct strbuf plan = STRBUF_INIT, plan2 = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT,
		      cmp = STRBUF_INIT, p = STRBUF_INIT;
	sb_addf(&plan, "%s/plan.yaml", dir);
	sb_addf(&plan2, "%s/plan2.yaml", dir);
	write_plan(plan.buf, dir, 1);
	write_plan(plan2.buf, dir, 2);
	sb_addf(&a, "%s/run-a", dir);
	sb_addf(&b, "%s/run-b", dir);
	sb_addf(&cmp, "%s/cmp", dir);
	const char *ra[] = { "run", "-q", "-o", a.buf, plan.buf, NULL };
	const char *rb[] = { "run", "-q", "-o", b.buf, plan2.buf, NULL };
	char *out = NULL;
	CU_ASSERT_EQUAL(test_run_rig(ra, &out), 0);
	free(out);
	CU_ASSERT_EQUAL(test_run_rig(rb, &out), 0);
	free(out);
	/* rig report redraws everything the plan asks for. */
	const char *rep[] = { "report", a.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(rep, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "report.html"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "results.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "summary.csv"));
	free(out);
	sb_addf(&p, "%s/report.html", a.buf);
	char *h = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(h && strstr(h, "against the cycle") && strstr(h, "against the sweep value"));
	free(h);

	/* rig compare: both files, and the differing plans said how. */
	const char *cargs[] = { "compare", "-o", cmp.buf, a.buf, b.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(cargs, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "plans differ"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "first difference at line 3: 'seed: 1' against 'seed: 2'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "seeds differ"));
	free(out);
	sb_reset(&p);
	sb_addf(&p, "%s/compare.csv", cmp.buf);
	char *csv = test_read_file(p.buf, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	char ***rows;
	CU_ASSERT_EQUAL(rfx_csv_parse(csv, &rows), 0);
	size_t n = 0;
	while (rows[n])
		n++;
	/* (1 + 2 + 2 step paths) x 2 volumes x 2 metrics x 2 runs, plus the header. */
	CU_ASSERT_EQUAL(n, 1 + 5 * 2 * 2 * 2);
	CU_ASSERT_STRING_EQUAL(rows[1][7], "A");
	CU_ASSERT_STRING_EQUAL(rows[2][7], "B");
	rfx_csv_free(rows);
	free(csv);
	sb_reset(&p);
	sb_addf(&p, "%s/compare.html", cmp.buf);
	h = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(h && strstr(h, "The runs differ in more than the results") && strstr(h, "<svg"));
	free(h);
	/* Usage errors. */
	const char *one[] = { "compare", a.buf, NULL };
	CU_ASSERT_EQUAL(test_run_rig(one, &out), 2);
	free(out);
	const char *missing[] = { "compare", "-o", cmp.buf, a.buf, dir, NULL };
	CU_ASSERT_EQUAL(test_run_rig(missing, &out), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "cannot read run"));
	free(out);
	test_rmtree(dir);
	free(dir);
	sb_release(&plan);
	sb_release(&plan2);
	sb_release(&a);
	sb_release(&b);
	sb_release(&cmp);
	sb_release(&p);
}

void register_report_view_tests(void)
{
	CU_pSuite e = test_suite_e2e("rig report and rig compare (end to end)");
	test_add(e, "run, report, compare two runs", test_run_report_compare);
	CU_pSuite s = test_suite_e2e("report.html in headless Chromium");
	free(chromium_bin);
	chromium_bin = find_in_path("chromium");
	if (!chromium_bin)
		chromium_bin = find_in_path("chromium-browser");
	if (!chromium_bin) {
		printf("SKIPPED suite '%s': Chromium not found (Debian package chromium; ./setup "
		       "installs it)\n", s->pName);
		CU_set_suite_active(s, CU_FALSE);
		return;
	}
	test_add(s, "a console error is caught (the check can fail)", test_console_check_catches_errors);
	test_add(s, "the report paints figures and logs nothing", test_report_renders);
}
