/*
 * The fit check at run time: once a layout is provisioned and before any
 * of its cells runs, the plan's estimate (plan_estimate.h) is walked over
 * that layout with the volumes' real sizes (statvfs: f_blocks, and what is
 * in use already), and a layout whose data does not fit is refused with
 * the warnings `rig plan` gives, unless --no-fit-check. Nothing of the
 * layout has been written then; the run stops as a failed provisioning
 * does (torn down, resumable with --no-fit-check).
 */
#include "rig/run/run_fit.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/statvfs.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "rig/run/plan_estimate.h"
#include "rig/run/run.h"
#include "rig/run/runner.h"

int run_fit_check(struct run *run, const struct schedule *s, size_t li, struct strbuf *err)
{
	if (run->opt->no_fit_check)
		return 0;
	const struct plan *p = run->plan;
	size_t n = run->prov.nvols;
	double *cap = xcalloc(n ? n : 1, sizeof(double)), *used = xcalloc(n ? n : 1, sizeof(double));
	for (size_t v = 0; v < n; v++) {
		struct statvfs sv;
		if (statvfs(run->prov.vols[v].dir, &sv) == 0) {
			cap[v] = (double)sv.f_blocks * (double)sv.f_frsize;
			used[v] = (double)(sv.f_blocks - sv.f_bfree) * (double)sv.f_frsize;
		}
	}
	struct plan_est_options o = {
		.seed = run->seed, .seed_known = 1, .seed_scheme = run->seed_scheme,
		.image_size = run->opt->image_size, .capacity = cap, .used = used, .layout = (long)li,
	};
	struct plan_est e;
	struct diag d;
	diag_init(&d, p->file, p->text);
	run_plan_estimate(p, s, &o, &e, &d);
	int rc = 0;
	if (d.n) {
		sb_addf(err, "the plan's data does not fit the volumes%s%s as provisioned; nothing "
			     "of it was written:", *plan_layout_name(p, li) ? " of layout " : "",
			plan_layout_name(p, li));
		for (size_t i = 0; i < d.n; i++) {
			char msg[1024];
			diag_format_item(&d, i, msg, sizeof(msg));
			sb_addf(err, "\n  %s", msg);
		}
		sb_adds(err, "\n(`rig plan` shows the same check; --no-fit-check runs it anyway)");
		rc = -ENOSPC;
	}
	diag_release(&d);
	run_plan_estimate_release(&e);
	free(cap);
	free(used);
	return rc;
}
