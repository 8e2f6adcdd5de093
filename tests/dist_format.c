/* A size distribution's canonical text (dist_format.h). */
#include "dist_format.h"

void dist_format(struct strbuf *sb, const struct size_dist *d)
{
	switch (d->kind) {
	case DIST_FIXED:
		units_format_size(sb, d->lo);
		return;
	case DIST_LIST:
		sb_addch(sb, '[');
		for (size_t i = 0; i < d->nlist; i++) {
			if (i)
				sb_adds(sb, ", ");
			units_format_size(sb, d->list[i]);
		}
		sb_addch(sb, ']');
		return;
	case DIST_INVSQUARE:
		sb_adds(sb, "inverse-square(");
		units_format_size(sb, d->lo);
		sb_adds(sb, "..");
		units_format_size(sb, d->hi);
		sb_addch(sb, ')');
		return;
	case DIST_LOGUNIFORM:
		units_format_size(sb, d->lo);
		sb_adds(sb, "..");
		units_format_size(sb, d->hi);
		return;
	}
}
