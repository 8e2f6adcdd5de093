/* The time left in a run; see run_eta.h. */
#include "rig/run/run_eta.h"

#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "plan/schedule.h"

struct step_ref {
	const struct plan_step *step;
	size_t cell;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;
	if (x->step != y->step)
		return (uintptr_t)x->step < (uintptr_t)y->step ? -1 : 1;
	return x->cell < y->cell ? -1 : x->cell > y->cell;
}

void run_eta_init(struct run_eta *e, const struct schedule *s, size_t from)
{
	memset(e, 0, sizeof(*e));
	size_t n = s->n;
	e->step_of = xcalloc(n ? n : 1, sizeof(*e->step_of));
	/* Steps numbered by sorting the cells on their step (a schedule may
	 * hold a million cells: no quadratic search). */
	struct step_ref *refs = xcalloc(n ? n : 1, sizeof(*refs));
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct step_ref){ s->cells[i].step, i };
	qsort(refs, n, sizeof(*refs), cmp_ref);
	for (size_t i = 0; i < n; i++) {
		if (i && refs[i].step != refs[i - 1].step)
			e->nsteps++;
		e->step_of[refs[i].cell] = (uint32_t)e->nsteps;
	}
	if (n)
		e->nsteps++;
	free(refs);
	e->sum = xcalloc(e->nsteps ? e->nsteps : 1, sizeof(*e->sum));
	e->n = xcalloc(e->nsteps ? e->nsteps : 1, sizeof(*e->n));
	e->left = xcalloc(e->nsteps ? e->nsteps : 1, sizeof(*e->left));
	for (size_t i = from; i < n; i++)
		e->left[e->step_of[i]]++;
}

void run_eta_release(struct run_eta *e)
{
	free(e->step_of);
	free(e->sum);
	free(e->n);
	free(e->left);
	memset(e, 0, sizeof(*e));
}

void run_eta_done(struct run_eta *e, size_t i, double seconds)
{
	uint32_t k = e->step_of[i];
	e->sum[k] += seconds;
	e->n[k]++;
	if (e->left[k])
		e->left[k]--;
	e->cell_sum += seconds;
	e->cell_n++;
}

double run_eta_left(const struct run_eta *e, double elapsed)
{
	if (!e->cell_n)
		return -1;
	double mean = e->cell_sum / e->cell_n, left = 0;
	for (size_t k = 0; k < e->nsteps; k++)
		left += e->left[k] * (e->n[k] ? e->sum[k] / e->n[k] : mean);
	/* The time between cells (provisioning, flushes) in proportion. */
	double scale = e->cell_sum > 0 && elapsed > e->cell_sum ? elapsed / e->cell_sum : 1;
	return left * scale;
}
