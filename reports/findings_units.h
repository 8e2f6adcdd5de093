/*
 * A crossed design analysed on its experimental units, the provisioned
 * volumes (docs/reports.md, "Findings"; methodology: "The unit of
 * replication"). Where a file system put the files is drawn once per
 * provisioning, so the passes over one volume are not independent: the
 * file-system and position effects rest on how many volumes were
 * provisioned.
 *
 * The main effects come from the mixed model of reports/model_mixed.c on the
 * fitted scale (log y, or y when some y <= 0, as rep_model_crossed_fit):
 * fixed effects for the factor compared (a: file system or volume), the
 * position (b) and the repetition (a block), a random intercept per
 * volume, REML, Satterthwaite's degrees of freedom. Where the
 * between-volume variance cannot be estimated (a singular fit, data
 * without noise, a model that cannot be fitted) they come from the
 * volumes' means instead: least squares of each volume's mean on a and b,
 * with the volumes' degrees of freedom. The interaction is always tested
 * on the volumes' means: the cell-means model against the additive one.
 */
#ifndef RIG_REPORTS_FINDINGS_UNITS_H
#define RIG_REPORTS_FINDINGS_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "reports/model.h"

/* Observation i: value y[i], level a[i] (0 .. na-1) and b[i] (0 .. nb-1),
 * repetition rep[i] and volume unit[i] (any numbering). log_scale and the
 * reference levels' least-squares means a_m0, b_m0 as rep_model_crossed_fit
 * gave them (the percentages are on its scale). */
struct fnd_unit_obs {
	const double *y;
	const uint32_t *a, *b, *rep, *unit;
	size_t n, na, nb;
	int log_scale;
	double a_m0, b_m0;
};

/* Percentages as model_crossed's (a[0] and b[0] the references: est 0,
 * the rest NaN). needed: provisioned volumes per combination of a and b
 * for an interval of a's effect within +-5% (t at the volumes' degrees of
 * freedom, the variances as estimated), 2 at least (one cannot tell the
 * factor from placement); 0 when more than 50 or not estimable. */
struct fnd_units {
	size_t units;            /* provisioned volumes */
	size_t min_cell;         /* the fewest volumes of any combination of a and b */
	int mixed;               /* 1: the mixed model; 0: the volumes' means */
	struct model_est *a, *b; /* [na], [nb] */
	struct model_est inter;  /* 2 x 2: the interaction as a percentage; else NaN */
	double int_f, int_df1, int_df2, int_p;
	unsigned needed;
};

/* 0, or -1 when the design is not crossed on its volumes (a volume with
 * two levels of a or b, a level without volumes), with everything NaN.
 * Release with rep_fnd_units_release either way. */
int rep_fnd_units_fit(const struct fnd_unit_obs *o, struct fnd_units *out);
void rep_fnd_units_release(struct fnd_units *u);

#endif
