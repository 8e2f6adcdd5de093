/*
 * The fit check a run makes after provisioning a layout (runner-internal;
 * run_fit.c): 0 when the layout's data fits its volumes as they are (or
 * --no-fit-check), -ENOSPC with every warning in err otherwise.
 */
#ifndef RIG_RUN_FIT_H
#define RIG_RUN_FIT_H

#include <stddef.h>

struct run;
struct schedule;
struct strbuf;

int run_fit_check(struct run *run, const struct schedule *s, size_t li, struct strbuf *err);

#endif
