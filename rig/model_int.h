/*
 * What rig/model.c shares with the other model files (model_mixed.c); not
 * an interface for the rest of rig.
 */
#ifndef RIG_MODEL_INT_H
#define RIG_MODEL_INT_H

#include <stddef.h>

struct model_est;

/*
 * Least squares by Householder QR: X is n x p row-major, n >= p >= 1.
 * Fills coef[p], xtxinv[p*p] = (X'X)^-1, *rss (not rounded to 0) and, when
 * logdet is not NULL, *logdet = log |X'X|; or returns -1 when X does not
 * have full column rank (model.c's header says how that is judged).
 */
int model_qr_lsq(const double *X, const double *y, size_t n, size_t p, double *coef,
		 double *xtxinv, double *rss, double *logdet);

/* An estimate with variance var at df degrees of freedom: its 95% interval
 * (Student's t), and its t-test when its standard error is above 0 (NaN
 * for what df or var do not allow; model.h's conventions). */
void model_est_fill(struct model_est *e, double est, double var, double df);

#endif
