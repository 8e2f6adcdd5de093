/*
 * What reports/model.c shares with the other model files (model_mixed.c); not
 * an interface for the rest of rig.
 */
#ifndef RIG_MODEL_INT_H
#define RIG_MODEL_INT_H

#include <stddef.h>

/*
 * Least squares by Householder QR: X is n x p row-major, n >= p >= 1.
 * Fills coef[p], xtxinv[p*p] = (X'X)^-1, *rss (not rounded to 0) and, when
 * logdet is not NULL, *logdet = log |X'X|; or returns -1 when X does not
 * have full column rank (model.c's header says how that is judged).
 */
int rep_model_qr_lsq(const double *X, const double *y, size_t n, size_t p, double *coef,
		 double *xtxinv, double *rss, double *logdet);

#endif
