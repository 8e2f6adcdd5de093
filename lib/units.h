/*
 * The plan language's unit grammar: sizes, percentages, durations, ranges
 * and size distributions.
 *
 *   size      512 | 4K | 1M | 2G | 1T     (powers of two: KiB, MiB, GiB, TiB)
 *             4KB | 1MB | 2GB | 1TB       (powers of ten)
 *   percent   50% | 12.5%                 (0 < p <= 100 checked by callers)
 *   duration  500ms | 10s | 5m | 1h       (a bare number is an error: say the unit)
 *   range     2M..2G                      (lo <= hi)
 *   dist      SIZE | RANGE | inverse-square(RANGE) | a YAML list of SIZEs
 *
 * Parsers return 0, or -EINVAL with a short reason in *why (a static string)
 * that callers put after the offending text. Formatters produce the
 * canonical text, which parses back to the same value (round trip).
 */
#ifndef RIG_UNITS_H
#define RIG_UNITS_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

int units_parse_size(const char *s, uint64_t *out, const char **why);
int units_parse_percent(const char *s, double *out, const char **why);
int units_parse_duration(const char *s, uint64_t *ns, const char **why);
int units_parse_size_range(const char *s, uint64_t *lo, uint64_t *hi,
			   const char **why);
/* A plain non-negative integer, as written in YAML (no unit). */
int units_parse_uint(const char *s, uint64_t *out, const char **why);

/* Canonical text: of the units that divide exactly, binary or decimal,
 * the one giving the smallest number ("4K", "1536M", "4KB", "2GB", "1KB"
 * for 1000); plain bytes when none divides ("1500"). */
void units_format_size(struct strbuf *sb, uint64_t bytes);
/* "500ms", "10s", "5m", "1500us"; the largest unit that divides exactly
 * (ns for the rest; "0s" for zero). The parser accepts ns and us too. */
void units_format_duration(struct strbuf *sb, uint64_t ns);
/* "50%", "12.5%" (shortest text that parses back to the same double). */
void units_format_percent(struct strbuf *sb, double pct);

/*
 * Near misses of the grammar, for "did you mean" in errors: s with every
 * unit that follows a number written as the grammar spells it (4k -> 4K,
 * mb -> MB, 1KiB -> 1K, 512B -> 512, 10S -> 10s, 5 min -> 5m, 2 sec -> 2s),
 * kept only when the result differs from s and parses as the kind. Appends
 * " (did you mean 'TEXT'?)" to sb and returns 1 then; 0, nothing added,
 * otherwise. UNITS_DIST covers sizes, ranges and inverse-square(RANGE).
 */
enum units_kind { UNITS_SIZE, UNITS_DURATION, UNITS_DIST };
int units_suggest(struct strbuf *sb, const char *s, enum units_kind kind);

enum dist_kind {
	DIST_FIXED,      /* every file `lo` bytes */
	DIST_LIST,       /* file i gets list[i % n] */
	DIST_LOGUNIFORM, /* log-uniform between lo and hi */
	DIST_INVSQUARE,  /* density proportional to 1/x^2 on [lo, hi] */
};

struct size_dist {
	enum dist_kind kind;
	uint64_t lo, hi;  /* FIXED: lo == hi; LIST: min and max of the list */
	uint64_t *list;   /* LIST only; owned */
	size_t nlist;
};

/* Parse a scalar distribution (FIXED, LOGUNIFORM, INVSQUARE). Lists come
 * from YAML sequences and are built with units_dist_list(). */
int units_parse_dist(const char *s, struct size_dist *d, const char **why);
int units_dist_list(const char *const *items, size_t n, struct size_dist *d,
		   size_t *bad_index, const char **why);
void units_dist_release(struct size_dist *d);
/* Draw one size given a uniform u in [0,1). */
uint64_t units_dist_draw(const struct size_dist *d, double u, size_t index);
/* The analytic mean of the distribution, in bytes. */
double units_dist_mean(const struct size_dist *d);
/* The expected total of n files drawn from d: n x the mean, except for a
 * list, which files take in turn (exact: list[i % nlist] summed). */
double units_dist_total(const struct size_dist *d, uint64_t n);

/* A number for people, as the reports print it: |v| with 4 significant
 * digits, thousands grouped with commas from 1,000 (to 10^15), no sign
 * (the caller writes its own minus: ASCII or typographic). */
void units_format_magnitude(struct strbuf *sb, double v);

#endif
