/*
 * The walk over the schedule's cells (runner-internal): a fresh
 * provisioning where the schedule starts a layout (or, with reprovision:
 * repeat, a repetition), the caches defeated before read-type steps, each
 * cell's parameters bound, its seed derived, its module run, and every
 * sample stored as it is measured.
 */
#ifndef RIG_RUN_CELLS_H
#define RIG_RUN_CELLS_H

#include <stddef.h>

struct run;
struct schedule;
struct strbuf;

/* Whether cache.flush can be applied (root) and cache.remount (the
 * backend): warnings when not; sets run->flush_ok. */
void run_cells_check_cache(struct run *run);

/*
 * Run cells from..n-1 in order until one fails or run_cancel is raised;
 * the first cell provisions when nothing is. *done counts the cells that
 * ran to the end. The last layout stays provisioned. 0, or negative with
 * the reason in err (the failed cell is stored as failed).
 */
int run_cells_walk(struct run *run, const struct schedule *sched, size_t from, size_t *done,
		   struct strbuf *err);

#endif
