/*
 * The unit grammar of plan files (see units.h and docs/plan-language.md):
 * sizes, percentages, durations, ranges and size distributions, with
 * formatters whose output parses back to the same value.
 *
 * Sizes and durations are whole numbers with a unit: "1.5G" is refused
 * rather than rounded, because a plan should say exactly what it means and
 * the canonical form of every value is an integer ("1536M"). Numbers are
 * parsed by hand, not with strtoull, so that signs, spaces, hex and
 * overflow are all errors instead of silent wrap-arounds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"

struct unit {
	const char *suffix;
	uint64_t mult;
};

static const struct unit size_units[] = {
	{ "", 1 },
	{ "K", 1ull << 10 }, { "M", 1ull << 20 }, { "G", 1ull << 30 }, { "T", 1ull << 40 },
	{ "KB", 1000ull }, { "MB", 1000000ull }, { "GB", 1000000000ull },
	{ "TB", 1000000000000ull },
	{ NULL, 0 },
};

static const struct unit duration_units[] = {
	{ "ns", 1 }, { "us", 1000ull }, { "ms", 1000000ull }, { "s", 1000000000ull },
	{ "m", 60000000000ull }, { "h", 3600000000000ull },
	{ NULL, 0 },
};

/* Leading decimal digits of s into *v; *end after them. -ERANGE on
 * overflow, -EINVAL when there is no digit. */
static int parse_digits(const char *s, uint64_t *v, const char **end)
{
	uint64_t x = 0;
	const char *p = s;
	int over = 0;
	while (*p >= '0' && *p <= '9') {
		unsigned dgt = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - dgt) / 10)
			over = 1;
		else
			x = x * 10 + dgt;
		p++;
	}
	*end = p;
	if (p == s)
		return -EINVAL;
	if (over)
		return -ERANGE;
	*v = x;
	return 0;
}

static const char *number_problem(const char *s)
{
	if (!*s)
		return "the value is empty";
	if (*s == '-')
		return "it cannot be negative";
	if (*s == '+' || *s == ' ' || *s == '\t')
		return "write the number without a sign or spaces";
	return "it does not start with a number";
}

int units_parse_uint(const char *s, uint64_t *out, const char **why)
{
	const char *end;
	int r = parse_digits(s, out, &end);
	if (r == -ERANGE) {
		*why = "it is too large (the maximum is 18446744073709551615)";
		return -EINVAL;
	}
	if (r < 0) {
		*why = number_problem(s);
		return -EINVAL;
	}
	if (*end == '.' || *end == 'e' || *end == 'E') {
		*why = "expected a whole number";
		return -EINVAL;
	}
	if (*end) {
		*why = "expected a plain whole number without a unit";
		return -EINVAL;
	}
	return 0;
}

/* A whole number followed by one of the units; the multiplied value. */
static int parse_with_unit(const char *s, const struct unit *units, uint64_t *out,
			   const char **end_unit, const char **why)
{
	uint64_t v;
	const char *end;
	int r = parse_digits(s, &v, &end);
	*end_unit = NULL;
	if (r == -ERANGE) {
		*why = "it is too large for 64 bits";
		return -EINVAL;
	}
	if (r < 0) {
		*why = number_problem(s);
		return -EINVAL;
	}
	if (*end == '.' || *end == ',') {
		*why = "it must be a whole number in its unit (write 1536M, not 1.5G; 1500ms, not 1.5s)";
		return -EINVAL;
	}
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcmp(end, u->suffix))
			continue;
		if (v && u->mult > UINT64_MAX / v) {
			*why = "it is too large for 64 bits";
			return -EINVAL;
		}
		*out = v * u->mult;
		*end_unit = u->suffix;
		return 0;
	}
	*end_unit = end;
	return -EINVAL;
}

int units_parse_size(const char *s, uint64_t *out, const char **why)
{
	const char *unit;
	if (parse_with_unit(s, size_units, out, &unit, why) == 0)
		return 0;
	if (unit)
		*why = "unknown unit: sizes are bytes (512), K M G T (powers of two) "
		       "or KB MB GB TB (powers of ten)";
	return -EINVAL;
}

int units_parse_duration(const char *s, uint64_t *ns, const char **why)
{
	const char *unit;
	if (parse_with_unit(s, duration_units, ns, &unit, why) == 0)
		return 0;
	if (unit && !*unit)
		*why = "a duration needs a unit: ms, s, m or h (e.g. 10s)";
	else if (unit)
		*why = "unknown unit: durations use ns, us, ms, s, m or h";
	return -EINVAL;
}

int units_parse_percent(const char *s, double *out, const char **why)
{
	const char *p = s;
	size_t digits = 0;
	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++, digits++;
	}
	if (!digits) {
		*why = number_problem(s);
		return -EINVAL;
	}
	if (*p != '%') {
		*why = *p ? "expected a percentage such as 50% or 12.5%"
			  : "a percentage needs a '%' (e.g. 50%)";
		return -EINVAL;
	}
	if (p[1]) {
		*why = "unexpected text after '%'";
		return -EINVAL;
	}
	char *num = xstrndup(s, (size_t)(p - s));
	double v = strtod(num, NULL);
	free(num);
	if (!isfinite(v)) {
		*why = "it is too large";
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int units_parse_size_range(const char *s, uint64_t *lo, uint64_t *hi, const char **why)
{
	const char *dots = strstr(s, "..");
	if (!dots) {
		*why = "expected a range MIN..MAX (e.g. 2M..2G)";
		return -EINVAL;
	}
	/* Spaces around ".." are allowed; the canonical form has none. */
	const char *a_end = dots;
	while (a_end > s && a_end[-1] == ' ')
		a_end--;
	const char *b = dots + 2;
	while (*b == ' ')
		b++;
	char *a = xstrndup(s, (size_t)(a_end - s));
	int r = units_parse_size(a, lo, why);
	free(a);
	if (r == 0)
		r = units_parse_size(b, hi, why);
	if (r)
		return r;
	if (*lo > *hi) {
		*why = "the lower bound is larger than the upper bound";
		return -EINVAL;
	}
	return 0;
}

static void format_unit(struct strbuf *sb, uint64_t v, const struct unit *u)
{
	sb_addf(sb, "%llu%s", (unsigned long long)(v / u->mult), u->suffix);
}

void units_format_size(struct strbuf *sb, uint64_t bytes)
{
	/* Of the units that divide exactly, the one giving the smallest
	 * number ("2GB", not "1953125K"); binary first, so it wins a tie. */
	static const int order[] = { 4, 3, 2, 1, 8, 7, 6, 5 };
	const struct unit *best = &size_units[0];
	for (size_t i = 0; bytes && i < sizeof(order) / sizeof(order[0]); i++) {
		const struct unit *u = &size_units[order[i]];
		if (bytes % u->mult == 0 && u->mult > best->mult)
			best = u;
	}
	format_unit(sb, bytes, best);
}

void units_format_duration(struct strbuf *sb, uint64_t ns)
{
	if (!ns) {
		sb_adds(sb, "0s");
		return;
	}
	size_t i = sizeof(duration_units) / sizeof(duration_units[0]) - 2;
	while (i > 0 && ns % duration_units[i].mult)
		i--;
	format_unit(sb, ns, &duration_units[i]);
}

void units_format_percent(struct strbuf *sb, double pct)
{
	/* Fixed notation (the grammar has no exponents), with the fewest
	 * decimals that read back as the same double. Every double's exact
	 * value has at most 1074 decimals, so the loop always ends with a text
	 * that parses back, also for tiny values such as 1.46e-17% (found by
	 * fuzz/units_fuzz.c: 30 decimals, the old limit, printed it as 0%). */
	char buf[400 + 1100];
	for (int prec = 0; prec <= 1100; prec++) {
		snprintf(buf, sizeof(buf), "%.*f", prec, pct);
		if (strtod(buf, NULL) == pct)
			break;
	}
	sb_addf(sb, "%s%%", buf);
}

int units_parse_dist(const char *s, struct size_dist *d, const char **why)
{
	static const char invsq[] = "inverse-square(";
	memset(d, 0, sizeof(*d));
	if (!strncmp(s, invsq, sizeof(invsq) - 1)) {
		size_t n = strlen(s);
		if (s[n - 1] != ')') {
			*why = "missing ')' after inverse-square(MIN..MAX";
			return -EINVAL;
		}
		char *inner = xstrndup(s + sizeof(invsq) - 1, n - sizeof(invsq));
		int r = units_parse_size_range(inner, &d->lo, &d->hi, why);
		free(inner);
		if (r)
			return r;
		if (d->lo == 0) {
			*why = "inverse-square needs a lower bound of at least 1 byte";
			return -EINVAL;
		}
		d->kind = DIST_INVSQUARE;
		return 0;
	}
	if (strchr(s, '(')) {
		*why = "unknown distribution: use SIZE, MIN..MAX (log-uniform), "
		       "inverse-square(MIN..MAX) or a list of sizes";
		return -EINVAL;
	}
	if (strstr(s, "..")) {
		int r = units_parse_size_range(s, &d->lo, &d->hi, why);
		if (r)
			return r;
		if (d->lo == 0) {
			*why = "a log-uniform range needs a lower bound of at least 1 byte";
			return -EINVAL;
		}
		d->kind = DIST_LOGUNIFORM;
		return 0;
	}
	int r = units_parse_size(s, &d->lo, why);
	if (r)
		return r;
	d->hi = d->lo;
	d->kind = DIST_FIXED;
	return 0;
}

int units_dist_list(const char *const *items, size_t n, struct size_dist *d,
		   size_t *bad_index, const char **why)
{
	memset(d, 0, sizeof(*d));
	if (!n) {
		*bad_index = 0;
		*why = "the list of sizes is empty";
		return -EINVAL;
	}
	uint64_t *list = xcalloc(n, sizeof(uint64_t));
	for (size_t i = 0; i < n; i++) {
		if (units_parse_size(items[i], &list[i], why)) {
			free(list);
			*bad_index = i;
			return -EINVAL;
		}
	}
	d->kind = DIST_LIST;
	d->list = list;
	d->nlist = n;
	d->lo = d->hi = list[0];
	for (size_t i = 1; i < n; i++) {
		if (list[i] < d->lo)
			d->lo = list[i];
		if (list[i] > d->hi)
			d->hi = list[i];
	}
	return 0;
}

void units_dist_release(struct size_dist *d)
{
	free(d->list);
	d->list = NULL;
	d->nlist = 0;
}

static uint64_t clamp_round(double x, uint64_t lo, uint64_t hi)
{
	if (!(x > (double)lo))
		return lo;
	if (x >= (double)hi)
		return hi;
	uint64_t v = (uint64_t)(x + 0.5);
	return v < lo ? lo : v > hi ? hi : v;
}

uint64_t units_dist_draw(const struct size_dist *d, double u, size_t index)
{
	switch (d->kind) {
	case DIST_FIXED:
		return d->lo;
	case DIST_LIST:
		return d->nlist ? d->list[index % d->nlist] : 0;
	case DIST_LOGUNIFORM:
		if (d->lo >= d->hi)
			return d->lo;
		return clamp_round((double)d->lo * exp(u * log((double)d->hi / (double)d->lo)),
				   d->lo, d->hi);
	case DIST_INVSQUARE: {
		/* Inverse CDF of the density c/x^2 on [lo, hi]. */
		if (d->lo >= d->hi)
			return d->lo;
		double a = 1.0 / (double)d->lo, b = 1.0 / (double)d->hi;
		return clamp_round(1.0 / (a - u * (a - b)), d->lo, d->hi);
	}
	}
	return d->lo;
}

double units_dist_mean(const struct size_dist *d)
{
	double lo = (double)d->lo, hi = (double)d->hi;
	switch (d->kind) {
	case DIST_FIXED:
		return lo;
	case DIST_LIST: {
		double sum = 0;
		for (size_t i = 0; i < d->nlist; i++)
			sum += (double)d->list[i];
		return d->nlist ? sum / (double)d->nlist : 0;
	}
	case DIST_LOGUNIFORM:
		return d->lo >= d->hi ? lo : (hi - lo) / log(hi / lo);
	case DIST_INVSQUARE:
		return d->lo >= d->hi ? lo : log(hi / lo) / (1.0 / lo - 1.0 / hi);
	}
	return lo;
}

double units_dist_total(const struct size_dist *d, uint64_t n)
{
	if (d->kind != DIST_LIST || !d->nlist)
		return (double)n * units_dist_mean(d);
	double sum = 0, whole = 0;
	for (size_t i = 0; i < d->nlist; i++) {
		whole += (double)d->list[i];
		if (i < n % d->nlist)
			sum += (double)d->list[i];
	}
	return (double)(n / d->nlist) * whole + sum;
}

/* --- near misses --- */

struct near_unit {
	const char *written; /* compared without case */
	const char *meant;
};

static const struct near_unit near_sizes[] = {
	{ "k", "K" }, { "m", "M" }, { "g", "G" }, { "t", "T" },
	{ "kb", "KB" }, { "mb", "MB" }, { "gb", "GB" }, { "tb", "TB" },
	{ "kib", "K" }, { "mib", "M" }, { "gib", "G" }, { "tib", "T" },
	{ "b", "" }, { "byte", "" }, { "bytes", "" },
	{ NULL, NULL },
};

static const struct near_unit near_durations[] = {
	{ "ns", "ns" }, { "us", "us" }, { "\xc2\xb5s", "us" }, { "ms", "ms" }, { "s", "s" },
	{ "m", "m" }, { "h", "h" },
	{ "nsec", "ns" }, { "usec", "us" }, { "msec", "ms" }, { "msecs", "ms" },
	{ "sec", "s" }, { "secs", "s" }, { "second", "s" }, { "seconds", "s" },
	{ "min", "m" }, { "mins", "m" }, { "minute", "m" }, { "minutes", "m" },
	{ "hr", "h" }, { "hrs", "h" }, { "hour", "h" }, { "hours", "h" },
	{ NULL, NULL },
};

static int unit_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static int same_letters(const char *a, size_t n, const char *b)
{
	size_t i = 0;
	for (; i < n && b[i]; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
		if (x >= 'A' && x <= 'Z')
			x = (unsigned char)(x - 'A' + 'a');
		if (x != y)
			return 0;
	}
	return i == n && !b[i];
}

int units_suggest(struct strbuf *sb, const char *s, enum units_kind kind)
{
	const struct near_unit *table = kind == UNITS_DURATION ? near_durations : near_sizes;
	struct strbuf fix = STRBUF_INIT;
	const char *p = s;
	while (*p) {
		if (!(*p >= '0' && *p <= '9')) {
			sb_addch(&fix, *p++);
			continue;
		}
		while (*p >= '0' && *p <= '9')
			sb_addch(&fix, *p++);
		const char *u = p;
		while (*u == ' ')
			u++;
		const char *e = u;
		while (unit_char((unsigned char)*e))
			e++;
		if (e == u)
			continue; /* no unit here: spaces, if any, are copied as they are */
		const char *meant = NULL;
		for (const struct near_unit *n = table; n->written && !meant; n++)
			if (same_letters(u, (size_t)(e - u), n->written))
				meant = n->meant;
		if (meant)
			sb_adds(&fix, meant);
		else
			sb_add(&fix, p, (size_t)(e - p));
		p = e;
	}
	int ok = strcmp(fix.buf, s) != 0;
	if (ok) {
		const char *why;
		uint64_t v;
		struct size_dist d;
		if (kind == UNITS_SIZE)
			ok = units_parse_size(fix.buf, &v, &why) == 0;
		else if (kind == UNITS_DURATION)
			ok = units_parse_duration(fix.buf, &v, &why) == 0;
		else if ((ok = units_parse_dist(fix.buf, &d, &why) == 0))
			units_dist_release(&d);
	}
	if (ok)
		sb_addf(sb, " (did you mean '%s'?)", fix.buf);
	sb_release(&fix);
	return ok;
}

void units_format_magnitude(struct strbuf *sb, double v)
{
	char buf[64];
	double a = fabs(v);
	if (a >= 1000 && a < 1e15) {
		snprintf(buf, sizeof(buf), "%.0f", a);
		size_t n = strlen(buf);
		for (size_t i = 0; i < n; i++) {
			if (i && (n - i) % 3 == 0)
				sb_addch(sb, ',');
			sb_addch(sb, buf[i]);
		}
		return;
	}
	snprintf(buf, sizeof(buf), "%.4g", a);
	sb_adds(sb, buf);
}
