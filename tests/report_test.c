/*
 * Tests of the reports (reports/report.c and what it calls) on results
 * stores made with the store API: two layouts with a baseline, a dirs run,
 * one repetition, a failed run, an empty run. summary.csv is read back by
 * a strict RFC 4180 reader and by Python's csv module (when python3 is
 * there), its numbers checked against values recomputed here; results.json
 * is parsed with json-c and validated against docs/results.schema.json by
 * the small validator below (the keywords the schema uses: type, enum,
 * const, required, properties, additionalProperties, items, anyOf,
 * minimum, $ref) and, when installed, by Python's jsonschema; report.html
 * is checked for what a reader must find in it. The rendered page is
 * checked in Chromium by report_view_test.c.
 */
#include <json-c/json.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "report_util.h"
#include "reports/csv.h"
#include "reports/report.h"
#include "reports/report_data.h"
#include "reports/summary.h"
#include "store/store.h"
#include "test.h"

/* --- a JSON Schema validator for the keywords docs/results.schema.json uses --- */

static int type_is(json_object *v, const char *t)
{
	enum json_type jt = json_object_get_type(v);
	if (!strcmp(t, "null"))
		return jt == json_type_null;
	if (!strcmp(t, "boolean"))
		return jt == json_type_boolean;
	if (!strcmp(t, "integer"))
		return jt == json_type_int;
	if (!strcmp(t, "number"))
		return jt == json_type_int || jt == json_type_double;
	if (!strcmp(t, "string"))
		return jt == json_type_string;
	if (!strcmp(t, "object"))
		return jt == json_type_object;
	if (!strcmp(t, "array"))
		return jt == json_type_array;
	return 0;
}

static int json_equal(json_object *a, json_object *b)
{
	if (json_object_get_type(a) != json_object_get_type(b))
		return 0;
	return !strcmp(json_object_to_json_string(a), json_object_to_json_string(b));
}

static int validate(json_object *root, json_object *schema, json_object *v, struct strbuf *where,
		    struct strbuf *why);

static int validate_at(json_object *root, json_object *schema, json_object *v, struct strbuf *where,
		       const char *step, struct strbuf *why)
{
	size_t len = where->len;
	sb_adds(where, step);
	int ok = validate(root, schema, v, where, why);
	sb_setlen(where, len);
	return ok;
}

static int validate(json_object *root, json_object *schema, json_object *v, struct strbuf *where,
		    struct strbuf *why)
{
	json_object *k;
	if (json_object_object_get_ex(schema, "$ref", &k)) {
		const char *ref = json_object_get_string(k);
		json_object *target = root;
		if (strncmp(ref, "#/$defs/", 8) || !json_object_object_get_ex(root, "$defs", &target) ||
		    !json_object_object_get_ex(target, ref + 8, &target)) {
			sb_addf(why, "%s: unresolvable $ref %s", where->buf, ref);
			return 0;
		}
		return validate(root, target, v, where, why);
	}
	if (json_object_object_get_ex(schema, "anyOf", &k)) {
		for (size_t i = 0; i < json_object_array_length(k); i++) {
			struct strbuf ignore = STRBUF_INIT;
			int ok = validate(root, json_object_array_get_idx(k, i), v, where, &ignore);
			sb_release(&ignore);
			if (ok)
				return 1;
		}
		sb_addf(why, "%s: matches none of anyOf", where->buf);
		return 0;
	}
	if (json_object_object_get_ex(schema, "type", &k)) {
		int ok = 0;
		if (json_object_is_type(k, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(k); i++)
				ok |= type_is(v, json_object_get_string(json_object_array_get_idx(k, i)));
		} else {
			ok = type_is(v, json_object_get_string(k));
		}
		if (!ok) {
			sb_addf(why, "%s: %s is not of type %s", where->buf, json_object_to_json_string(v),
				json_object_to_json_string(k));
			return 0;
		}
	}
	if (json_object_object_get_ex(schema, "const", &k) && !json_equal(k, v)) {
		sb_addf(why, "%s: not the constant %s", where->buf, json_object_to_json_string(k));
		return 0;
	}
	if (json_object_object_get_ex(schema, "enum", &k)) {
		int ok = 0;
		for (size_t i = 0; i < json_object_array_length(k); i++)
			ok |= json_equal(json_object_array_get_idx(k, i), v);
		if (!ok) {
			sb_addf(why, "%s: %s not in enum", where->buf, json_object_to_json_string(v));
			return 0;
		}
	}
	if (json_object_object_get_ex(schema, "minimum", &k) &&
	    (type_is(v, "number")) && json_object_get_double(v) < json_object_get_double(k)) {
		sb_addf(why, "%s: below the minimum", where->buf);
		return 0;
	}
	if (json_object_is_type(v, json_type_object)) {
		json_object *props = NULL, *req, *addl;
		json_object_object_get_ex(schema, "properties", &props);
		if (json_object_object_get_ex(schema, "required", &req))
			for (size_t i = 0; i < json_object_array_length(req); i++) {
				const char *name = json_object_get_string(json_object_array_get_idx(req, i));
				if (!json_object_object_get_ex(v, name, NULL)) {
					sb_addf(why, "%s: required property '%s' missing", where->buf, name);
					return 0;
				}
			}
		int closed = json_object_object_get_ex(schema, "additionalProperties", &addl) &&
			     !json_object_get_boolean(addl);
		json_object_object_foreach(v, name, val) {
			json_object *ps;
			if (props && json_object_object_get_ex(props, name, &ps)) {
				struct strbuf step = STRBUF_INIT;
				sb_addf(&step, ".%s", name);
				int ok = validate_at(root, ps, val, where, step.buf, why);
				sb_release(&step);
				if (!ok)
					return 0;
			} else if (closed) {
				sb_addf(why, "%s: property '%s' is not allowed", where->buf, name);
				return 0;
			}
		}
	}
	if (json_object_is_type(v, json_type_array) && json_object_object_get_ex(schema, "items", &k))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			char step[32];
			snprintf(step, sizeof(step), "[%zu]", i);
			if (!validate_at(root, k, json_object_array_get_idx(v, i), where, step, why))
				return 0;
		}
	return 1;
}

/* Validate the file at path against the repo's schema; 1 if valid. */
static int validate_file(const char *path, struct strbuf *why)
{
	struct strbuf sp = STRBUF_INIT, where = STRBUF_INIT;
	sb_addf(&sp, "%s/docs/results.schema.json", test_src());
	json_object *schema = json_object_from_file(sp.buf), *doc = json_object_from_file(path);
	int ok = 0;
	if (!schema)
		sb_addf(why, "cannot read %s", sp.buf);
	else if (!doc)
		sb_addf(why, "%s is not JSON", path);
	else {
		sb_adds(&where, "$");
		ok = validate(schema, schema, doc, &where, why);
	}
	json_object_put(schema);
	json_object_put(doc);
	sb_release(&sp);
	sb_release(&where);
	return ok;
}

/* --- running the reports on a fixture --- */

struct rfx {
	char *dir;
	struct fx_opts o;
};

static void rfx_open(struct rfx *f, const struct fx_opts *o)
{
	f->dir = test_tmpdir();
	f->o = *o;
	CU_ASSERT_EQUAL_FATAL(rfx_make_store(f->dir, o), 0);
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", f->dir);
	struct store *s = store_open(p.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	int rc = rep_write(s, f->dir, &err);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\nreports_write: %s\n", err.buf);
	store_close(s);
	sb_release(&p);
	sb_release(&err);
}

static void rfx_close(struct rfx *f)
{
	test_rmtree(f->dir);
	free(f->dir);
}

static char *rfx_file(const struct rfx *f, const char *name)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", f->dir, name);
	char *t = test_read_file(p.buf, NULL);
	sb_release(&p);
	return t;
}

static int col_of(char **header, const char *name)
{
	for (int i = 0; header[i]; i++)
		if (!strcmp(header[i], name))
			return i;
	return -1;
}

/* The summary.csv row with these key columns, or NULL. */
static char **find_row(char ***rows, const char *layout, const char *step, const char *volume,
		       const char *metric)
{
	int cl = col_of(rows[0], "layout"), cs = col_of(rows[0], "step"), cv = col_of(rows[0], "volume"),
	    cm = col_of(rows[0], "metric");
	for (size_t i = 1; rows[i]; i++)
		if (!strcmp(rows[i][cl], layout) && !strcmp(rows[i][cs], step) &&
		    !strcmp(rows[i][cv], volume) && !strcmp(rows[i][cm], metric))
			return rows[i];
	return NULL;
}

static void test_summary_csv(void)
{
	struct fx_opts o = { .reps = 4, .seed = 7 };
	struct rfx f;
	rfx_open(&f, &o);
	char *text = rfx_file(&f, "summary.csv");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	char ***rows;
	CU_ASSERT_EQUAL(rfx_csv_parse(text, &rows), 0);
	/* The header, spelled out: the grouping columns, the statistics, the
	 * baseline difference, then outliers and drift, then passes. */
	const char *want =
		"run,layout,step,module,volume,fs,position,cycle,sweep_var,sweep_value,metric,unit,"
		"n,mean,sd,median,min,max,ci_low,ci_high,baseline,pct_of_baseline,diff_pct,diff_ci_low,"
		"diff_ci_high,p_value,outliers,missing,drift_slope,drift_ci_low,drift_ci_high,drift,"
		"passes,best_of_passes";
	CU_ASSERT_EQUAL(strncmp(text, want, strlen(want)), 0);
	CU_ASSERT_EQUAL(text[strlen(want)], '\n');
	size_t nrows = 0;
	while (rows[nrows])
		nrows++;
	/* 2 layouts x 2 volumes x (2 steps x 2 metrics + 6 null paths x 2 metrics). */
	CU_ASSERT_EQUAL(nrows, 1 + 2 * 2 * (2 * 2 + 6 * 2));
	for (size_t i = 1; i < nrows; i++) {
		size_t nf = 0;
		while (rows[i][nf])
			nf++;
		CU_ASSERT_EQUAL(nf, 34);
	}
	/* Step 1's mean rate of ext4 in ext4-first, recomputed independently. */
	char **r = find_row(rows, "ext4-first", "1", "ext4", "rate");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	double mean = strtod(r[col_of(rows[0], "mean")], NULL);
	double expect = rfx_expected_mean(&o, 0, "ext4");
	CU_ASSERT_DOUBLE_EQUAL(mean, expect, 1e-9 * expect);
	CU_ASSERT_STRING_EQUAL(r[col_of(rows[0], "n")], "4");
	CU_ASSERT_STRING_EQUAL(r[col_of(rows[0], "baseline")], "ext4");
	CU_ASSERT_STRING_EQUAL(r[col_of(rows[0], "pct_of_baseline")], "100");
	/* xfs at position 2 in ext4-first is slower than ext4: about -20%, the
	 * interval excludes 0, Welch's p is small. */
	r = find_row(rows, "ext4-first", "1", "xfs", "rate");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	double diff = strtod(r[col_of(rows[0], "diff_pct")], NULL);
	double hi = strtod(r[col_of(rows[0], "diff_ci_high")], NULL);
	double mx = rfx_expected_mean(&o, 0, "xfs");
	CU_ASSERT_DOUBLE_EQUAL(diff, 100 * mx / expect - 100, 1e-9);
	CU_ASSERT_TRUE(diff < -15 && diff > -25 && hi < 0);
	CU_ASSERT_TRUE(strtod(r[col_of(rows[0], "p_value")], NULL) < 0.01);
	/* Cycles and sweeps are grouping columns. */
	r = find_row(rows, "xfs-first", "3.cycle2.1", "xfs", "value");
	CU_ASSERT_TRUE(r && !strcmp(r[col_of(rows[0], "cycle")], "2"));
	r = find_row(rows, "xfs-first", "4.sweep3.1", "ext4", "value");
	CU_ASSERT_TRUE(r && !strcmp(r[col_of(rows[0], "sweep_var")], "level") &&
		       !strcmp(r[col_of(rows[0], "sweep_value")], "90%"));
	rfx_csv_free(rows);

	/* Python's csv module reads it to the same number of rows. */
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/summary.csv", f.dir);
	const char *py[] = { "python3", "-c",
			     "import csv,sys\nrows=list(csv.reader(open(sys.argv[1],newline=''),strict=True))\n"
			     "assert all(len(r)==34 for r in rows)\nprint(len(rows))", p.buf, NULL };
	char *out = NULL, *err = NULL;
	int rc = rfx_run(py, &out, &err);
	if (rc == 127) {
		printf("\nSKIPPED: python3 not found; summary.csv read by the built-in reader only\n");
	} else {
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(atoi(out), 65);
	}
	free(out);
	free(err);
	sb_release(&p);
	free(text);
	rfx_close(&f);
}

/* --- results.json's column tables (format 2) --- */

/* Check a table of results.json (cells, samples, files): a count, and
 * every other member a column of count rows: an array, a factor (levels,
 * and codes that each name a level), or null (pass, when no sample has
 * one). Returns count, or -1 after failing an assertion. */
static long table_rows(json_object *doc, const char *name)
{
	json_object *t, *c;
	if (!json_object_object_get_ex(doc, name, &t) || !json_object_is_type(t, json_type_object) ||
	    !json_object_object_get_ex(t, "count", &c)) {
		CU_FAIL("results.json: a table without its count");
		return -1;
	}
	size_t n = (size_t)json_object_get_int64(c);
	int ok = 1;
	json_object_object_foreach(t, col, v) {
		json_object *levels, *codes;
		if (!strcmp(col, "count") || json_object_is_type(v, json_type_null))
			continue;
		if (json_object_is_type(v, json_type_array)) {
			ok &= json_object_array_length(v) == n;
		} else if (json_object_object_get_ex(v, "levels", &levels) &&
			   json_object_object_get_ex(v, "codes", &codes)) {
			ok &= json_object_array_length(codes) == n;
			for (size_t i = 0; i < json_object_array_length(codes); i++) {
				int64_t k = json_object_get_int64(json_object_array_get_idx(codes, i));
				ok &= k >= 0 && (size_t)k < json_object_array_length(levels);
			}
		} else {
			ok = 0;
		}
		if (!ok) {
			fprintf(stderr, "\nresults.json: %s.%s is not a column of %zu rows\n", name, col, n);
			CU_FAIL("results.json: a column of the wrong length");
			return -1;
		}
	}
	return (long)n;
}

/* Row i of a column: the element of an array, or a factor's level. */
static json_object *cell_at(json_object *doc, const char *table, const char *col, size_t i)
{
	json_object *t, *c, *levels, *codes;
	if (!json_object_object_get_ex(doc, table, &t) || !json_object_object_get_ex(t, col, &c))
		return NULL;
	if (json_object_is_type(c, json_type_array))
		return json_object_array_get_idx(c, i);
	if (!json_object_object_get_ex(c, "levels", &levels) || !json_object_object_get_ex(c, "codes", &codes))
		return NULL;
	return json_object_array_get_idx(levels, (size_t)json_object_get_int64(json_object_array_get_idx(codes, i)));
}

static const char *text_at(json_object *doc, const char *table, const char *col, size_t i)
{
	json_object *v = cell_at(doc, table, col, i);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* The samples of results.json, read back row by row, against results.csv:
 * the same rows in the same order (by seq, then measurement order), the
 * same metric, unit, cache and pass, and the same value to the bit. */
static void samples_match_csv(json_object *doc, const char *csv_text, size_t nsamples)
{
	char ***rows = NULL;
	CU_ASSERT_EQUAL_FATAL(rfx_csv_parse(csv_text, &rows), 0);
	int cseq = col_of(rows[0], "seq"), cmet = col_of(rows[0], "metric"), cval = col_of(rows[0], "value"),
	    cunit = col_of(rows[0], "unit"), ccache = col_of(rows[0], "cache"), cpass = col_of(rows[0], "pass");
	/* JSON rows in results.csv's order: a stable sort by seq. */
	size_t *ord = xmalloc((nsamples ? nsamples : 1) * sizeof(*ord));
	for (size_t i = 0; i < nsamples; i++) {
		size_t j = i;
		int64_t seq = json_object_get_int64(cell_at(doc, "samples", "seq", i));
		while (j > 0 && json_object_get_int64(cell_at(doc, "samples", "seq", ord[j - 1])) > seq) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = i;
	}
	size_t r = 0, bad = 0;
	for (; rows[r + 1] && r < nsamples; r++) {
		char **row = rows[r + 1];
		size_t i = ord[r];
		json_object *v = cell_at(doc, "samples", "value", i), *pass = cell_at(doc, "samples", "pass", i);
		int same = atoll(row[cseq]) == json_object_get_int64(cell_at(doc, "samples", "seq", i)) &&
			   !strcmp(row[cmet], text_at(doc, "samples", "metric", i)) &&
			   !strcmp(row[cunit], text_at(doc, "samples", "unit", i)) &&
			   !strcmp(row[ccache], text_at(doc, "samples", "cache", i)) &&
			   (*row[cval] ? v && strtod(row[cval], NULL) == json_object_get_double(v)
				       : !v || json_object_is_type(v, json_type_null)) &&
			   (*row[cpass] ? pass && atoll(row[cpass]) == json_object_get_int64(pass)
					: !pass || json_object_is_type(pass, json_type_null));
		if (!same && bad++ < 3)
			fprintf(stderr, "\nresults.json sample %zu differs from results.csv row %zu\n", i, r + 1);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(r, nsamples);
	CU_ASSERT_PTR_NULL(rows[r + 1]);
	free(ord);
	rfx_csv_free(rows);
}

static void test_results_json(void)
{
	struct fx_opts o = { .reps = 3, .seed = 3 };
	struct rfx f;
	rfx_open(&f, &o);
	struct strbuf p = STRBUF_INIT, why = STRBUF_INIT;
	sb_addf(&p, "%s/results.json", f.dir);
	int ok = validate_file(p.buf, &why);
	CU_ASSERT_TRUE(ok);
	if (!ok)
		fprintf(stderr, "\nresults.json: %s\n", why.buf);
	json_object *doc = json_object_from_file(p.buf), *a;
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	/* The same content as the CSVs: every sample, every file, every group;
	 * cells, samples and files as columns of one length each. */
	CU_ASSERT_EQUAL(table_rows(doc, "samples"), 2 * 3 * 8 * 2 * 2);
	CU_ASSERT_EQUAL(table_rows(doc, "files"), 2 * 3 * 2 * 2 * 4);
	long ncells = table_rows(doc, "cells");
	CU_ASSERT_TRUE(ncells > 0);
	CU_ASSERT_TRUE(json_object_object_get_ex(doc, "summary", &a));
	CU_ASSERT_EQUAL(json_object_array_length(a), 64);
	char *csv = rfx_file(&f, "results.csv");
	CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
	samples_match_csv(doc, csv, 2 * 3 * 8 * 2 * 2);
	free(csv);
	/* Each file row names its cell, its file and its numbers. */
	CU_ASSERT_PTR_NOT_NULL(text_at(doc, "files", "file", 0));
	CU_ASSERT_TRUE(json_object_get_int64(cell_at(doc, "files", "bytes", 0)) > 0);
	/* Factors: the cells' steps as levels, each once, every cell's step among them. */
	json_object *cells = NULL, *step = NULL, *levels = NULL;
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(doc, "cells", &cells) &&
			     json_object_object_get_ex(cells, "step", &step) &&
			     json_object_object_get_ex(step, "levels", &levels));
	for (size_t i = 0; i < json_object_array_length(levels); i++)
		for (size_t j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(json_object_get_string(json_object_array_get_idx(levels, i)),
						   json_object_get_string(json_object_array_get_idx(levels, j)));
	CU_ASSERT_STRING_EQUAL(text_at(doc, "cells", "status", 0), "done");
	/* Provenance: the plan text and the bad bytes of a command's output
	 * survive as valid UTF-8. */
	json_object *run, *cmds, *v;
	CU_ASSERT_TRUE(json_object_object_get_ex(doc, "run", &run) &&
		       json_object_object_get_ex(run, "plan_text", &v) &&
		       strstr(json_object_get_string(v), "baseline: ext4"));
	CU_ASSERT_TRUE(json_object_object_get_ex(doc, "commands", &cmds) &&
		       strstr(json_object_to_json_string(cmds), "\xef\xbf\xbd"));
	json_object_put(doc);

	/* An invalid document is refused: the validator can fail. */
	struct strbuf bad = STRBUF_INIT;
	sb_addf(&bad, "%s/bad.json", f.dir);
	test_write_file(bad.buf, "{\"format\":\"rig-results\",\"format_version\":2}");
	sb_reset(&why);
	CU_ASSERT_FALSE(validate_file(bad.buf, &why));
	/* So is format 1's layout (an object per sample) under format 2, and a
	 * column that is not one (a factor without its levels). */
	struct strbuf old = STRBUF_INIT;
	sb_addf(&old, "%s/old.json", f.dir);
	json_object *jo = json_object_from_file(p.buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(jo);
	json_object *one = json_object_new_object();
	json_object_object_add(one, "seq", json_object_new_int(1));
	json_object *rowsv = json_object_new_array();
	json_object_array_add(rowsv, one);
	json_object_object_add(jo, "samples", rowsv);
	json_object_to_file(old.buf, jo);
	sb_reset(&why);
	CU_ASSERT_FALSE(validate_file(old.buf, &why));
	json_object_put(jo);
	jo = json_object_from_file(p.buf);
	json_object *cl = NULL, *metric = NULL;
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(jo, "samples", &cl) &&
			     json_object_object_get_ex(cl, "metric", &metric));
	json_object_object_del(metric, "levels");
	json_object_to_file(old.buf, jo);
	sb_reset(&why);
	CU_ASSERT_FALSE(validate_file(old.buf, &why));
	json_object_put(jo);
	sb_release(&old);

	/* Python's jsonschema, when installed, agrees. */
	struct strbuf schema = STRBUF_INIT;
	sb_addf(&schema, "%s/docs/results.schema.json", test_src());
	const char *py[] = { "python3", "-c",
			     "import json,sys\ntry:\n import jsonschema\nexcept ImportError:\n sys.exit(3)\n"
			     "jsonschema.validate(json.load(open(sys.argv[1])),json.load(open(sys.argv[2])))\n"
			     "try:\n jsonschema.validate(json.load(open(sys.argv[3])),json.load(open(sys.argv[2])))\n"
			     " sys.exit(4)\nexcept jsonschema.ValidationError:\n pass\n",
			     p.buf, schema.buf, bad.buf, NULL };
	char *out = NULL, *err = NULL;
	int rc = rfx_run(py, &out, &err);
	if (rc == 127 || rc == 3)
		printf("\nSKIPPED: python3 jsonschema not installed; results.json checked by the built-in "
		       "validator only\n");
	else
		CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0 && rc != 3 && rc != 127)
		fprintf(stderr, "\njsonschema: %s%s\n", out, err);
	free(out);
	free(err);
	sb_release(&schema);
	sb_release(&bad);
	sb_release(&p);
	sb_release(&why);
	rfx_close(&f);
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Every id="..." in the page once. */
static int ids_unique(const char *html)
{
	size_t n = 0, alloc = 0;
	char **ids = NULL;
	int ok = 1;
	for (const char *p = strstr(html, " id=\""); p; p = strstr(p + 1, " id=\"")) {
		const char *s = p + 5, *e = strchr(s, '"');
		if (!e)
			break;
		char *id = xstrndup(s, (size_t)(e - s));
		for (size_t i = 0; i < n && ok; i++)
			if (!strcmp(ids[i], id)) {
				fprintf(stderr, "\nduplicate id %s\n", id);
				ok = 0;
			}
		XGROW(ids, n + 1, alloc);
		ids[n++] = id;
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	return ok;
}

static void test_html_layouts(void)
{
	struct fx_opts o = { .reps = 4, .seed = 11 };
	struct rfx f;
	rfx_open(&f, &o);
	char *h = rfx_file(&f, "report.html");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	/* Self-contained: no scripts, nothing fetched. */
	CU_ASSERT_PTR_NULL(strstr(h, "<script"));
	CU_ASSERT_PTR_NULL(strstr(h, "src="));
	CU_ASSERT_PTR_NULL(strstr(h, "href=\"http"));
	CU_ASSERT_PTR_NULL(strstr(h, "url(http"));
	CU_ASSERT_TRUE(ids_unique(h));
	/* The title is escaped; the description and findings come first. */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "<h1>Synthetic &lt;halves&gt; &amp; &quot;quotes&quot;</h1>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "A synthetic run for the report tests."));
	const char *findings = strstr(h, "id=\"findings\""), *prov = strstr(h, "id=\"provenance\"");
	CU_ASSERT_TRUE(findings && prov && findings < prov);
	/* Halves in both orders: the finding is the crossed design's, first. */
	const char *lead = strstr(h, "<p class=\"lead\">");
	CU_ASSERT_TRUE(lead && lead > findings && lead < prov);
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "follows position, not the file system; position 1: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "(interaction)"));
	/* The source articles' table, per-step sections, the figures. */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Difference from ext4 (percent of its mean"));
	CU_ASSERT_EQUAL(count(h, "<h2 id=\"step-"), 4);
	CU_ASSERT_EQUAL(count(h, "<svg"), count(h, "</svg>"));
	CU_ASSERT_TRUE(count(h, "<figure") >= 7); /* 4 steps, 2 file sets, drift, partition map */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Partition map to scale"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "against the cycle"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "against the sweep value"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "fitted rate (MB/s)"));
	/* Provenance as recorded, and facts not recorded said so. */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Test CPU @ 3.0 GHz"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Test Disk"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "rotational (hard disk)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "rw,relatime"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "direct+drop_caches"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "sgdisk --zap-all /dev/loop0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "&lt;b&gt;")); /* command output escaped */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "cache.flush is requested but rig is not root"));
	CU_ASSERT_PTR_NULL(strstr(h, "This run failed"));
	free(h);
	/* Figures for papers: SVG and PDF of each. */
	char *svg = rfx_file(&f, "figures/step-1-write-rate.svg");
	char *pdf = rfx_file(&f, "figures/step-1-write-rate.pdf");
	CU_ASSERT_TRUE(svg && strstr(svg, "<svg"));
	CU_ASSERT_TRUE(pdf && !strncmp(pdf, "%PDF", 4));
	free(svg);
	free(pdf);
	char *map = rfx_file(&f, "figures/partition-map.pdf");
	CU_ASSERT_PTR_NOT_NULL(map);
	free(map);
	rfx_close(&f);
}

static void test_html_dirs_one_rep_failed(void)
{
	struct fx_opts o = { .dirs = 1, .reps = 1, .fail = 1, .no_baseline = 1, .seed = 5 };
	struct rfx f;
	rfx_open(&f, &o);
	char *h = rfx_file(&f, "report.html");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "This run failed."));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "step 4.sweep3.1 (null) on volume xfs failed"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "Cells of this step did not complete"));
	/* One repetition: said once at the top, and in the tables. */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "single sample (one repetition)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "n/a (n = 1)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "with one sample per volume the difference cannot be told from noise"));
	/* No baseline: lowest against highest; dirs: no partition map. */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "lowest against highest"));
	CU_ASSERT_PTR_NULL(strstr(h, "Partition map to scale"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "no partition map"));
	free(h);
	/* formats default to csv always; json was asked for. */
	char *j = rfx_file(&f, "results.json");
	CU_ASSERT_PTR_NOT_NULL(j);
	free(j);
	rfx_close(&f);
}

static void test_formats_and_empty(void)
{
	/* csv only: no HTML, no JSON, but summary.csv. */
	struct fx_opts o = { .reps = 2, .formats = "[csv]" };
	struct rfx f;
	rfx_open(&f, &o);
	char *h = rfx_file(&f, "report.html"), *j = rfx_file(&f, "results.json"), *s = rfx_file(&f, "summary.csv");
	CU_ASSERT_PTR_NULL(h);
	CU_ASSERT_PTR_NULL(j);
	CU_ASSERT_PTR_NOT_NULL(s);
	free(h);
	free(j);
	free(s);
	rfx_close(&f);

	/* A run that stopped before its first cell: still a report. */
	char *dir = test_tmpdir();
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", dir);
	struct store *st = store_create(p.buf, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st);
	struct store_run r = { .id = "empty", .plan_name = "empty",
			       .plan_text = "rig: 1\nname: empty\ntarget: { dirs: [/tmp/x] }\nsteps:\n  - null: {}\n"
					    "report: { formats: [html, json] }\n",
			       .started_utc = "2024-01-01T00:00:00Z" };
	store_begin_run(st, &r, &err);
	CU_ASSERT_EQUAL(rep_write(st, dir, &err), 0);
	store_close(st);
	sb_reset(&p);
	sb_addf(&p, "%s/report.html", dir);
	h = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(h && strstr(h, "No step recorded a result") && strstr(h, "had not ended"));
	free(h);
	sb_reset(&p);
	sb_addf(&p, "%s/results.json", dir);
	struct strbuf why = STRBUF_INIT;
	CU_ASSERT_TRUE(validate_file(p.buf, &why));
	sb_release(&why);
	sb_reset(&p);
	sb_addf(&p, "%s/summary.csv", dir);
	s = test_read_file(p.buf, NULL);
	CU_ASSERT_TRUE(s && !strcmp(s, "run,layout,step,module,volume,fs,position,cycle,sweep_var,"
				       "sweep_value,metric,unit,n,mean,sd,median,min,max,ci_low,ci_high,"
				       "baseline,pct_of_baseline,diff_pct,diff_ci_low,diff_ci_high,p_value,"
				       "outliers,missing,drift_slope,drift_ci_low,drift_ci_high,drift,"
				       "passes,best_of_passes\n"));
	free(s);
	test_rmtree(dir);
	free(dir);
	sb_release(&p);
	sb_release(&err);
}

/* The run's rdata, read again from its store. */
static struct rdata *rfx_rdata(const struct rfx *f)
{
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", f->dir);
	struct store *s = store_open(p.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct rdata *d = rep_rdata_load(s, &err);
	CU_ASSERT_PTR_NOT_NULL(d);
	store_close(s);
	sb_release(&p);
	sb_release(&err);
	return d;
}

/* report.fs_map of results.json, "(null)" when null, NULL when missing. */
static char *json_fs_map(const struct rfx *f)
{
	struct strbuf p = STRBUF_INIT, why = STRBUF_INIT;
	sb_addf(&p, "%s/results.json", f->dir);
	CU_ASSERT_TRUE(validate_file(p.buf, &why));
	json_object *doc = json_object_from_file(p.buf), *r, *v;
	char *out = NULL;
	if (doc && json_object_object_get_ex(doc, "report", &r) &&
	    json_object_object_get_ex(r, "fs_map", &v))
		out = xstrdup(v ? json_object_get_string(v) : "(null)");
	json_object_put(doc);
	sb_release(&p);
	sb_release(&why);
	return out;
}

#define MAC_OPTIONS "{\"platform\":\"linux\",\"fs_map\":\"apfs=ext4,hfs+=xfs\",\"image_size\":0," \
	"\"allow\":0,\"force\":false,\"cwd\":\"/tmp\"}"
#define MAPPED "File systems were mapped by <code>--fs-map apfs=ext4,hfs+=xfs</code>"

static void test_fs_map(void)
{
	/* A macOS plan rehearsed on a Linux disk: read as it was run, with its
	 * baseline, the mapping said once. */
	struct fx_opts o = { .reps = 2, .mac_plan = 1, .options_json = MAC_OPTIONS };
	struct rfx f;
	rfx_open(&f, &o);
	struct rdata *d = rfx_rdata(&f);
	CU_ASSERT_PTR_NULL(d->plan_problem);
	CU_ASSERT_PTR_NOT_NULL(d->plan);
	CU_ASSERT_TRUE(d->fs_map && !strcmp(d->fs_map, "apfs=ext4,hfs+=xfs"));
	CU_ASSERT_TRUE(d->baseline && !strcmp(d->baseline, "ext4"));
	CU_ASSERT_EQUAL(d->base_kind, RD_BASE_VOLUME);
	rep_rdata_free(d);
	char *h = rfx_file(&f, "report.html"), *j = json_fs_map(&f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL(count(h, MAPPED), 1);
	CU_ASSERT_EQUAL(count(h, "does not validate"), 0);
	CU_ASSERT_TRUE(j && !strcmp(j, "apfs=ext4,hfs+=xfs"));
	free(h);
	free(j);
	rfx_close(&f);

	/* The same run in a store without its options (rig 0.1): the plan does
	 * not validate (its first error is named, not a warning before it), and
	 * the report does what its banner says: defaults, so no results.json. */
	o.options_json = NULL;
	rfx_open(&f, &o);
	d = rfx_rdata(&f);
	CU_ASSERT_TRUE(d->plan_problem && strstr(d->plan_problem, "invalid device '/dev/sdb' for macos"));
	CU_ASSERT_PTR_NULL(d->plan);
	CU_ASSERT_PTR_NULL(d->fs_map);
	CU_ASSERT_PTR_NULL(d->baseline);
	CU_ASSERT_EQUAL(d->base_kind, RD_BASE_NONE);
	rep_rdata_free(d);
	h = rfx_file(&f, "report.html");
	j = rfx_file(&f, "results.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL(count(h, "File systems were mapped"), 0);
	CU_ASSERT_EQUAL(count(h, "does not validate"), 1);
	CU_ASSERT_PTR_NULL(j);
	free(h);
	free(j);
	rfx_close(&f);

	/* A Linux plan given the same --fs-map: nothing was mapped, nothing said
	 * (results.json has null). */
	struct fx_opts l = { .reps = 2, .options_json = MAC_OPTIONS };
	rfx_open(&f, &l);
	d = rfx_rdata(&f);
	CU_ASSERT_PTR_NULL(d->plan_problem);
	CU_ASSERT_PTR_NULL(d->fs_map);
	rep_rdata_free(d);
	h = rfx_file(&f, "report.html");
	j = json_fs_map(&f);
	CU_ASSERT_TRUE(h && count(h, "File systems were mapped") == 0);
	CU_ASSERT_TRUE(j && !strcmp(j, "(null)"));
	free(h);
	free(j);
	rfx_close(&f);
}

/* The shortest-form search as the contract states it: each precision
 * printed and parsed back. */
static void reference_double(struct strbuf *sb, double v)
{
	char buf[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	sb_adds(sb, buf);
}

static void test_double_format(void)
{
	/* Random bit patterns (every magnitude), measured-looking values, and
	 * values whose 17th digit is a tie. */
	uint64_t st = 88172645463325252ull;
	struct strbuf got = STRBUF_INIT, want = STRBUF_INIT;
	size_t bad = 0;
	for (long i = 0; i < 800000; i++) {
		st ^= st << 13;
		st ^= st >> 7;
		st ^= st << 17;
		double v;
		if (i % 4 == 0) {
			memcpy(&v, &st, sizeof(v));
		} else if (i % 4 == 1) {
			v = (double)(st >> 11) / 9007199254740992.0 * pow(10, (double)(i % 40) - 20);
		} else if (i % 4 == 2) {
			v = (double)(st % 100000000) / 1e4 + 0.5; /* short decimals */
		} else {
			/* Dyadic values: exact decimal expansions, ties at 17 digits. */
			v = ldexp((double)(st >> 4 & 0x3ffffffffffull), -(int)(st % 70));
		}
		if (!isfinite(v))
			continue;
		sb_reset(&got);
		sb_reset(&want);
		rep_csv_add_double(&got, v);
		reference_double(&want, v);
		if (strcmp(got.buf, want.buf) && bad++ < 5)
			fprintf(stderr, "\n%.17g: got %s, want %s\n", v, got.buf, want.buf);
	}
	CU_ASSERT_EQUAL(bad, 0);
	const double edge[] = { 0.1, 1.0 / 3, 1e21, 1e-6, 123456789012345.0, 1e15, 1234567890123456.7,
				9007199254740993.0, 5e-324, 1.7976931348623157e308, -2.5, 0.5, 100, -0.0 };
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		sb_reset(&got);
		sb_reset(&want);
		rep_csv_add_double(&got, edge[i]);
		reference_double(&want, edge[i]);
		CU_ASSERT_STRING_EQUAL(got.buf, want.buf);
	}
	sb_release(&got);
	sb_release(&want);
}

/* One field of a CSV row against the store's value of column i: NULL and
 * NaN are an empty field, integers and reals read back exactly, text is
 * itself. */
static int field_is(const char *f, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		return !*f;
	case SQLITE_INTEGER:
		return *f && strtoll(f, NULL, 10) == sqlite3_column_int64(st, i);
	case SQLITE_FLOAT: {
		double v = sqlite3_column_double(st, i);
		return isnan(v) ? !*f : *f && strtod(f, NULL) == v;
	}
	default:
		return !strcmp(f, (const char *)sqlite3_column_text(st, i));
	}
}

/* The SQL of what each file's rows hold, in their columns' order (all but
 * results.csv's pass, which numbers a cell's passes). */
static const char *const csv_sql[] = {
	"SELECT r.id, c.layout, c.rep, c.step, c.module, v.name, v.fs, v.position, v.offset_start,"
	" v.offset_end, c.cycle, c.sweep_var, c.sweep_value, x.seq, c.start_utc, x.metric, x.value,"
	" x.unit, x.cache FROM samples x JOIN cells c ON c.seq = x.seq"
	" JOIN volumes v ON v.id = c.volume_id, run r WHERE x.superseded = 0 ORDER BY x.seq, x.id",
	"SELECT r.id, c.layout, c.rep, c.step, c.module, v.name, v.fs, v.position, v.offset_start,"
	" v.offset_end, c.cycle, c.sweep_var, c.sweep_value, x.seq, c.start_utc, x.file, x.bytes,"
	" x.seconds, CASE WHEN x.seconds > 0 THEN x.bytes / x.seconds / 1e6 END,"
	" x.disk_offset_min, x.disk_offset_max FROM file_samples x JOIN cells c ON c.seq = x.seq"
	" JOIN volumes v ON v.id = c.volume_id, run r WHERE x.superseded = 0 ORDER BY x.seq, x.id",
};

/* results.csv and files.csv as rep_write writes them hold, row for row and
 * field for field, what the store holds (read here by SQL and parsed back
 * by the tests' own CSV reader). */
static void csv_matches_store(const char *dir)
{
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", dir);
	struct store *s = store_open(p.buf, 1, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(rep_write(s, dir, &err), 0);
	store_close(s);
	sqlite3 *db = NULL;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(p.buf, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	const char *names[] = { "results.csv", "files.csv" };
	for (int i = 0; i < 2; i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", dir, names[i]);
		char *text = test_read_file(p.buf, NULL);
		char ***rows = NULL;
		int n = text && rfx_csv_parse(text, &rows) == 0 ? 0 : -1;
		while (n >= 0 && rows[n])
			n++;
		free(text);
		CU_ASSERT_TRUE_FATAL(n >= 1);
		sqlite3_stmt *st = NULL;
		CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db, csv_sql[i], -1, &st, NULL), SQLITE_OK);
		int k = 1, bad = 0, rc;
		for (; (rc = sqlite3_step(st)) == SQLITE_ROW; k++)
			for (int j = 0; k < n && j < sqlite3_column_count(st); j++)
				if (!field_is(rows[k][j], st, j) && bad++ < 3)
					fprintf(stderr, "\n%s row %d column %s: '%s', the store has '%s'\n",
						names[i], k, rows[0][j], rows[k][j],
						(const char *)sqlite3_column_text(st, j));
		CU_ASSERT_EQUAL(bad, 0);
		/* as many rows as the store has */
		CU_ASSERT_EQUAL(rc, SQLITE_DONE);
		CU_ASSERT_EQUAL(k, n);
		sqlite3_finalize(st);
		rfx_csv_free(rows);
	}
	sqlite3_close(db);
	sb_release(&p);
	sb_release(&err);
}

static void test_csv_holds_the_store(void)
{
	struct fx_opts o = { .reps = 2, .seed = 4 };
	char *dir = test_tmpdir();
	CU_ASSERT_EQUAL_FATAL(rfx_make_store(dir, &o), 0);
	csv_matches_store(dir);
	test_rmtree(dir);
	free(dir);

	/* Awkward names, NULLs, NaN and infinities, samples inserted out of
	 * order, a file of zero seconds. */
	dir = test_tmpdir();
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", dir);
	struct store *s = store_create(p.buf, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct store_run r = { .id = "odd,run \"1\"", .plan_name = "odd", .plan_text = "not: [a plan",
			       .started_utc = "2024-01-01T00:00:00Z" };
	store_begin_run(s, &r, &err);
	struct store_volume v1 = { .layout = "l,1", .name = "a,b \"c\"\nd \xc3\x9c", .position = 1,
				   .has_offsets = 1, .offset_start = 0, .offset_end = 4096 };
	struct store_volume v2 = { .layout = "l,1", .name = "plain", .fs = "xfs", .position = 2 };
	store_add_volume(s, &v1, &err);
	store_add_volume(s, &v2, &err);
	struct store_cell c1 = { .seq = 1, .phase = 1, .layout = "l,1", .rep = 1, .step = "1.sweep2.1",
				 .module = "null", .volume_id = v1.id, .sweep_var = "x", .sweep_value = "a,\"b\"" };
	struct store_cell c2 = { .seq = 2, .phase = 1, .layout = "l,1", .rep = 1, .step = "2.cycle3.1",
				 .module = "null", .volume_id = v2.id, .cycle = 3 };
	store_cell_start(s, &c1, "2024-01-01T00:00:01Z", &err);
	store_cell_start(s, &c2, "2024-01-01T00:00:02Z", &err);
	store_add_sample(s, 2, "m", 1.0 / 3, "s", "direct", &err);
	store_add_sample(s, 1, "\"q\", m", NAN, "", "", &err);
	store_add_sample(s, 1, "m", INFINITY, "MB/s", "none", &err);
	store_add_sample(s, 2, "m2", -1e-300, "1", "", &err);
	store_add_file_sample(s, 1, "f,1", 1000, 0, &err);
	store_add_file_sample(s, 2, "f2", 123456789, 0.25, &err);
	store_close(s);
	csv_matches_store(dir);
	test_rmtree(dir);
	free(dir);
	sb_release(&p);
	sb_release(&err);
}

/*
 * The per-file fit of a fill step: on volume "few" two filler files (a line
 * through them is exact: r² 1 and an intercept that means nothing), on
 * "many" eight files of time = 3 ms + bytes / 200 MB/s with a little
 * scatter. Only "many" is fitted, its intercept with an interval that holds
 * 3 ms; "few" says why it has none, in report.html and results.json.
 */
static void test_fit_needs_points(void)
{
	char *dir = test_tmpdir();
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", dir);
	struct store *s = store_create(p.buf, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct store_run r = { .id = "fit", .plan_name = "fit", .started_utc = "2024-01-01T00:00:00Z",
			       .plan_text = "rig: 1\nname: fit\ntarget:\n  dirs: [/tmp/few, /tmp/many]\n"
					    "  names: [few, many]\nsteps:\n  - fill: { to: 10% }\n"
					    "report:\n  formats: [html, json]\n" };
	store_begin_run(s, &r, &err);
	struct store_volume v1 = { .layout = "", .name = "few", .position = 1 };
	struct store_volume v2 = { .layout = "", .name = "many", .position = 2 };
	store_add_volume(s, &v1, &err);
	store_add_volume(s, &v2, &err);
	for (uint32_t seq = 1; seq <= 2; seq++) {
		struct store_cell c = { .seq = seq, .phase = 1, .layout = "", .rep = 1, .step = "1",
					.module = "fill", .volume_id = seq == 1 ? v1.id : v2.id };
		store_cell_start(s, &c, "2024-01-01T00:00:01Z", &err);
		store_add_sample(s, seq, "rate", 200, "MB/s", "", &err);
		/* Two files whose line falls below 0 at 0 bytes. */
		static const double few_bytes[2] = { 64e6, 1e9 }, few_secs[2] = { 0.2, 5.0 };
		for (int f = 0; f < (seq == 1 ? 2 : 8); f++) {
			char fn[32];
			snprintf(fn, sizeof(fn), "filler-%d", f);
			double bytes = seq == 1 ? few_bytes[f] : (double)(f + 1) * 16e6;
			double secs = seq == 1 ? few_secs[f]
					       : 0.003 + bytes / 200e6 + (f % 2 ? 0.0005 : -0.0005);
			store_add_file_sample(s, seq, fn, (uint64_t)bytes, secs, &err);
		}
		store_cell_end(s, seq, "2024-01-01T00:00:02Z", "done", NULL, &err);
	}
	store_end_run(s, "2024-01-01T00:01:00Z", "completed", NULL, &err);
	CU_ASSERT_EQUAL_FATAL(err.len, 0);
	CU_ASSERT_EQUAL(rep_write(s, dir, &err), 0);
	store_close(s);

	struct rfx f = { .dir = dir };
	char *h = rfx_file(&f, "report.html");
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "no fit: 2 files timed (a line needs 5)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "fewer than 5 files fit it too closely"));
	/* The row of "few": no rate, intercept or r² (the exact line's 1.0000). */
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "<td>few</td><td class=\"num\">2</td><td colspan=\"3\">"
					 "no fit: 2 files timed (a line needs 5)</td></tr>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "<td>many</td><td class=\"num\">8</td>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(h, "intercept: overhead per file (ms, 95% CI)"));
	free(h);
	char *j = rfx_file(&f, "results.json");
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	json_object *root = json_tokener_parse(j);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	json_object *sets = json_object_object_get(root, "filesets");
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(sets), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *o = json_object_array_get_idx(sets, i);
		const char *vol = json_object_get_string(json_object_object_get(o, "volume"));
		const char *fit = json_object_get_string(json_object_object_get(o, "fit"));
		json_object *ov = json_object_object_get(o, "overhead_fit"),
			    *lo = json_object_object_get(o, "overhead_fit_low"),
			    *hi = json_object_object_get(o, "overhead_fit_high");
		if (!strcmp(vol, "few")) {
			CU_ASSERT_STRING_EQUAL(fit, "too_few_files");
			CU_ASSERT_PTR_NULL(ov);
			CU_ASSERT_PTR_NULL(json_object_object_get(o, "r2"));
		} else {
			CU_ASSERT_STRING_EQUAL(fit, "ok");
			CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(json_object_object_get(o, "rate_fit")),
					       200, 1);
			CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(ov), 0.003, 0.001);
			CU_ASSERT(json_object_get_double(lo) < 0.003 && json_object_get_double(hi) > 0.003);
			CU_ASSERT(json_object_get_double(lo) > 0); /* a real overhead */
		}
	}
	json_object_put(root);
	free(j);
	test_rmtree(dir);
	free(dir);
	sb_release(&p);
	sb_release(&err);
}

/*
 * Passes: a step whose cells recorded a metric several times. Two
 * repetitions of a seqread step, three passes each of rate (higher is
 * better, one pass NaN) and lat_p50 (lower is better), and a null step
 * with one sample per cell. Every pass is in n and the mean; the best of
 * passes is the median over the cells of each cell's best pass; results.csv
 * numbers the passes; results.json and report.html carry both.
 */
/* A run whose every finding says no clear effect: the lead says so in one
 * sentence, naming the groups and the widest interval, instead of quoting
 * the strongest row. */
static void test_lead_no_difference(void)
{
	static const double val[2][3] = { { 100, 120, 110 }, { 105, 115, 112 } };
	char *dir = test_tmpdir();
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", dir);
	struct store *s = store_create(p.buf, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct store_run r = { .id = "same", .plan_name = "same", .started_utc = "2024-01-01T00:00:00Z",
			       .plan_text = "rig: 1\nname: same\ntarget:\n  dirs: [/tmp/a, /tmp/b]\n"
					    "repeat: 3\nsteps:\n  - seqread: {}\n" };
	store_begin_run(s, &r, &err);
	struct store_volume v[2] = { { .layout = "", .name = "a", .fs = "ext4", .position = 1 },
				     { .layout = "", .name = "b", .fs = "ext4", .position = 2 } };
	store_add_volume(s, &v[0], &err);
	store_add_volume(s, &v[1], &err);
	for (uint32_t seq = 1; seq <= 6; seq++) {
		uint32_t rep = (seq + 1) / 2, k = (seq + 1) % 2;
		struct store_cell c = { .seq = seq, .phase = rep, .layout = "", .rep = rep, .step = "1",
					.module = "seqread", .volume_id = v[k].id };
		store_cell_start(s, &c, "2024-01-01T00:00:01Z", &err);
		store_add_sample(s, seq, "rate", val[k][rep - 1], "MB/s", "direct", &err);
		store_cell_end(s, seq, "2024-01-01T00:00:02Z", "done", NULL, &err);
	}
	store_end_run(s, "2024-01-01T00:01:00Z", "completed", NULL, &err);
	CU_ASSERT_EQUAL_FATAL(err.len, 0);
	CU_ASSERT_EQUAL(rep_write(s, dir, &err), 0);
	store_close(s);
	sb_reset(&p);
	sb_addf(&p, "%s/report.html", dir);
	char *html = test_read_file(p.buf, NULL);
	const char *lead = html ? strstr(html, "<p class=\"lead\">") : NULL;
	CU_ASSERT_PTR_NOT_NULL(lead ? strstr(lead, "<p class=\"lead\">No step shows a clear "
						   "difference between a and b; the widest interval "
						   "is <b>") : NULL);
	CU_ASSERT_PTR_NOT_NULL(lead ? strstr(lead, "</b>'s (rate), \xe2\x88\x92") : NULL);
	if (!lead || !strstr(lead, "No step shows"))
		fprintf(stderr, "\nthe lead: %.300s\n", lead ? lead : "(none)");
	/* no sentence in view for a row without an effect: the row is in the
	 * table, its sentence folded below it */
	CU_ASSERT_PTR_NOT_NULL(lead ? strstr(lead, "<details><summary>The 1 row without a clear "
						   "effect, as sentences</summary>") : NULL);
	CU_ASSERT_PTR_NULL(lead ? strstr(lead, "</p>\n<ul class=\"findings\">") : "no lead");
	CU_ASSERT_PTR_NOT_NULL(lead ? strstr(lead, "<tr><td>rate</td><td>difference</td>"
						   "<td>a vs b</td>") : NULL);
	free(html);
	sb_release(&p);
	sb_release(&err);
	test_rmtree(dir);
	free(dir);
}

static void test_passes(void)
{
	static const double rate[2][3] = { { 100, 130, 110 }, { 90, NAN, 120 } };
	static const double lat[2][3] = { { 50, 40, 60 }, { 70, 45, 55 } };
	char *dir = test_tmpdir();
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", dir);
	struct store *s = store_create(p.buf, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct store_run r = { .id = "passes", .plan_name = "passes", .started_utc = "2024-01-01T00:00:00Z",
			       .plan_text = "rig: 1\nname: passes\ntarget:\n  dirs: [/tmp/v]\nrepeat: 2\n"
					    "steps:\n  - seqread: { passes: 3 }\n  - null: {}\n"
					    "report:\n  formats: [html, csv, json]\n" };
	store_begin_run(s, &r, &err);
	struct store_volume v = { .layout = "", .name = "v", .fs = "ext4", .position = 1 };
	store_add_volume(s, &v, &err);
	for (uint32_t seq = 1; seq <= 4; seq++) {
		uint32_t rep = (seq + 1) / 2;
		struct store_cell c = { .seq = seq, .phase = seq, .layout = "", .rep = rep,
					.step = seq % 2 ? "1" : "2", .module = seq % 2 ? "seqread" : "null",
					.volume_id = v.id };
		store_cell_start(s, &c, "2024-01-01T00:00:01Z", &err);
		for (int k = 0; k < 3 && seq % 2; k++) {
			store_add_sample(s, seq, "rate", rate[rep - 1][k], "MB/s", "direct", &err);
			store_add_sample(s, seq, "lat_p50", lat[rep - 1][k], "us", "direct", &err);
		}
		if (!(seq % 2))
			store_add_sample(s, seq, "value", 1, "1", "", &err);
		store_cell_end(s, seq, "2024-01-01T00:00:02Z", "done", NULL, &err);
	}
	store_end_run(s, "2024-01-01T00:01:00Z", "completed", NULL, &err);
	CU_ASSERT_EQUAL_FATAL(err.len, 0);
	store_close(s);
	csv_matches_store(dir); /* writes the reports */

	struct rfx f = { .dir = dir };
	char *text = rfx_file(&f, "summary.csv");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	char ***rows;
	CU_ASSERT_EQUAL_FATAL(rfx_csv_parse(text, &rows), 0);
	int cn = col_of(rows[0], "n"), cm = col_of(rows[0], "mean"), cp = col_of(rows[0], "passes"),
	    cb = col_of(rows[0], "best_of_passes");
	char **g = find_row(rows, "", "1", "v", "rate");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_STRING_EQUAL(g[cn], "5");
	CU_ASSERT_DOUBLE_EQUAL(strtod(g[cm], NULL), 110, 1e-9);
	CU_ASSERT_STRING_EQUAL(g[cp], "3");
	CU_ASSERT_STRING_EQUAL(g[cb], "125"); /* median of 130 and 120 */
	g = find_row(rows, "", "1", "v", "lat_p50");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_STRING_EQUAL(g[cb], "42.5"); /* lower is better: median of 40 and 45 */
	g = find_row(rows, "", "2", "v", "value");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_STRING_EQUAL(g[cp], "1");
	CU_ASSERT_STRING_EQUAL(g[cb], "");
	rfx_csv_free(rows);
	free(text);

	/* results.csv: passes numbered in measurement order, per metric. */
	text = rfx_file(&f, "results.csv");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL_FATAL(rfx_csv_parse(text, &rows), 0);
	int cpass = col_of(rows[0], "pass"), cmet = col_of(rows[0], "metric");
	CU_ASSERT_EQUAL(cpass, 19); /* after the contract's first 19 columns */
	const char *want[][2] = { { "rate", "1" }, { "lat_p50", "1" }, { "rate", "2" }, { "lat_p50", "2" },
				  { "rate", "3" }, { "lat_p50", "3" }, { "value", "" } };
	for (size_t i = 0; i < 7; i++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(rows[1 + i]);
		CU_ASSERT_STRING_EQUAL(rows[1 + i][cmet], want[i][0]);
		CU_ASSERT_STRING_EQUAL(rows[1 + i][cpass], want[i][1]);
	}
	rfx_csv_free(rows);
	free(text);

	/* results.json: valid, with the same numbers. */
	sb_reset(&p);
	sb_addf(&p, "%s/results.json", dir);
	struct strbuf why = STRBUF_INIT;
	CU_ASSERT_TRUE(validate_file(p.buf, &why));
	json_object *doc = json_object_from_file(p.buf), *a, *x;
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(doc, "summary", &a));
	x = json_object_array_get_idx(a, 0);
	CU_ASSERT_TRUE(json_object_object_get_ex(x, "best_of_passes", &x));
	CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(x), 125, 1e-12);
	CU_ASSERT_EQUAL(table_rows(doc, "samples"), 14);
	x = cell_at(doc, "samples", "pass", 2);
	CU_ASSERT_TRUE(x && json_object_is_type(x, json_type_int));
	CU_ASSERT_EQUAL(json_object_get_int(x), 2);
	/* A metric recorded once: null (json-c reads a null as NULL; the
	 * schema holds the column there). */
	CU_ASSERT_PTR_NULL(cell_at(doc, "samples", "pass", 6));
	CU_ASSERT_STRING_EQUAL(text_at(doc, "samples", "metric", 6), "value");
	CU_ASSERT_STRING_EQUAL(text_at(doc, "samples", "metric", 2), "rate");
	json_object_put(doc);
	sb_release(&why);

	/* report.html: the column beside the interval, and what it is. */
	text = rfx_file(&f, "report.html");
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "<th class=\"num\">95% CI of the mean</th>"
					    "<th class=\"num\">best of passes</th>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "is each cell's best pass (highest)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "is each cell's best pass (lowest)"));
	const char *step2 = strstr(text, "id=\"step-2\"");
	CU_ASSERT_PTR_NOT_NULL_FATAL(step2);
	CU_ASSERT_PTR_NULL(strstr(step2, "best of passes")); /* no passes, no column */
	free(text);

	test_rmtree(dir);
	free(dir);
	sb_release(&p);
	sb_release(&err);
}

void register_report_tests(void)
{
	CU_pSuite s = test_suite("reports (summary.csv, results.json, report.html)");
	test_add(s, "summary.csv: columns, groups, means and differences recomputed", test_summary_csv);
	test_add(s, "results.json validates against docs/results.schema.json", test_results_json);
	test_add(s, "report.html with layouts, baseline, cycle, sweep, file sets", test_html_layouts);
	test_add(s, "report.html for a failed dirs run with one repetition", test_html_dirs_one_rep_failed);
	test_add(s, "formats: csv only; a run without cells", test_formats_and_empty);
	test_add(s, "a plan run with --fs-map is read as run, the mapping said once", test_fs_map);
	test_add(s, "numbers: the fast shortest form equals the printf-and-strtod search",
		 test_double_format);
	test_add(s, "results.csv and files.csv hold the store's rows, field for field",
		 test_csv_holds_the_store);
	test_add(s, "passes: numbered, best of passes beside the mean in every format", test_passes);
	test_add(s, "no clear difference anywhere: the lead says so, with the widest interval",
		 test_lead_no_difference);
	test_add(s, "file sets: no fit under 5 files, the intercept with its interval", test_fit_needs_points);
}
