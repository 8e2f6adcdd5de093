/*
 * A size distribution's canonical text, for the tests and the units fuzz
 * harness: what units_parse_dist reads back to the same distribution.
 */
#ifndef RIG_TESTS_DIST_FORMAT_H
#define RIG_TESTS_DIST_FORMAT_H

#include "lib/strbuf.h"
#include "lib/units.h"

/* "1G", "2M..2G", "inverse-square(1K..1M)", "[1M, 4M]". */
void dist_format(struct strbuf *sb, const struct size_dist *d);

#endif
