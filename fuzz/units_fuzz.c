/*
 * libFuzzer harness: the unit grammar (lib/units.c). The input, up to its
 * first NUL, is given to every parser: size, duration, percent, plain
 * integer, size range and size distribution, and, split at commas, to the
 * size-list distribution. Besides crashes and undefined behaviour it checks
 * the grammar's promises (units.h):
 *
 *   - a failed parse gives a reason (*why), a successful one does not
 *     need one;
 *   - every value that parses formats to canonical text that parses back
 *     to the same value (round trip), and that text is a fixed point;
 *   - a range has lo <= hi; a distribution's draws and mean lie in
 *     [lo, hi].
 *
 * Build and run: make fuzz (see docs/testing.md).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "tests/dist_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *input, const char *text)
{
	fprintf(stderr, "units_fuzz: %s: input '%s'%s%s\n", what, input, text ? ", text " : "",
		text ? text : "");
	abort();
}

/* A parse result: 0 with no reason needed, or -EINVAL with a reason. */
static void check_result(int r, const char *why, const char *input, const char *parser)
{
	if (r != 0 && r != -EINVAL)
		fail(parser, input, "returned neither 0 nor -EINVAL");
	if (r && (!why || !*why))
		fail(parser, input, "failed without a reason");
}

/* A whole-number unit (size or duration): parse s; a value's canonical
 * text parses back to the same value. */
static void fuzz_u64(int (*parse)(const char *, uint64_t *, const char **),
		     void (*format)(struct strbuf *, uint64_t), const char *s, const char *name)
{
	uint64_t v = 0, back = 0;
	const char *why = NULL;
	int r = parse(s, &v, &why);
	check_result(r, why, s, name);
	if (r)
		return;
	struct strbuf sb = STRBUF_INIT;
	format(&sb, v);
	why = NULL;
	if (parse(sb.buf, &back, &why) || back != v)
		fail("canonical text does not parse back to the same value", s, sb.buf);
	sb_release(&sb);
}

static void percent_round_trip(double v, const char *input)
{
	struct strbuf sb = STRBUF_INIT;
	units_format_percent(&sb, v);
	double back = -1;
	const char *why = NULL;
	if (units_parse_percent(sb.buf, &back, &why) || back != v)
		fail("percent does not round-trip", input, sb.buf);
	sb_release(&sb);
}

static void check_dist(const struct size_dist *d, const char *input)
{
	if (d->lo > d->hi)
		fail("distribution with lo > hi", input, NULL);
	static const double us[] = { 0.0, 1e-300, 0.25, 0.5, 0.999999, 0.9999999999999999 };
	for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
		uint64_t x = units_dist_draw(d, us[i], i * 7919);
		if (x < d->lo || x > d->hi)
			fail("draw outside [lo, hi]", input, NULL);
	}
	double mean = units_dist_mean(d);
	/* The mean is computed in doubles: allow rounding of lo and hi. */
	if (!(mean >= (double)d->lo * (1 - 1e-12) && mean <= (double)d->hi * (1 + 1e-12)))
		fail("mean outside [lo, hi]", input, NULL);
	struct strbuf sb = STRBUF_INIT;
	dist_format(&sb, d);
	if (d->kind != DIST_LIST) {
		struct size_dist back;
		const char *why = NULL;
		if (units_parse_dist(sb.buf, &back, &why) || back.kind != d->kind ||
		    back.lo != d->lo || back.hi != d->hi)
			fail("distribution does not round-trip", input, sb.buf);
		units_dist_release(&back);
	}
	sb_release(&sb);
}

static void fuzz_list(const char *s)
{
	char *copy = strdup(s);
	const char *items[64];
	size_t n = 0;
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && n < 64;
	     tok = strtok_r(NULL, ",", &save))
		items[n++] = tok;
	struct size_dist d;
	size_t bad = (size_t)-1;
	const char *why = NULL;
	int r = units_dist_list(items, n, &d, &bad, &why);
	check_result(r, why, s, "units_dist_list");
	if (r) {
		if (bad >= (n ? n : 1))
			fail("units_dist_list: bad index out of range", s, NULL);
	} else {
		if (d.kind != DIST_LIST || d.nlist != n)
			fail("units_dist_list: wrong kind or count", s, NULL);
		check_dist(&d, s);
		units_dist_release(&d);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	uint64_t v, lo, hi;
	double pct;
	const char *why;
	int r;

	fuzz_u64(units_parse_size, units_format_size, s, "units_parse_size");
	fuzz_u64(units_parse_duration, units_format_duration, s, "units_parse_duration");

	why = NULL;
	r = units_parse_percent(s, &pct, &why);
	check_result(r, why, s, "units_parse_percent");
	if (!r) {
		if (!(pct >= 0) || !isfinite(pct))
			fail("percent negative or not finite", s, NULL);
		percent_round_trip(pct, s);
	}

	why = NULL;
	r = units_parse_uint(s, &v, &why);
	check_result(r, why, s, "units_parse_uint");

	why = NULL;
	r = units_parse_size_range(s, &lo, &hi, &why);
	check_result(r, why, s, "units_parse_size_range");
	if (!r && lo > hi)
		fail("range with lo > hi", s, NULL);

	struct size_dist d;
	why = NULL;
	r = units_parse_dist(s, &d, &why);
	check_result(r, why, s, "units_parse_dist");
	if (!r) {
		check_dist(&d, s);
		units_dist_release(&d);
	}

	fuzz_list(s);
	free(s);
	return 0;
}
