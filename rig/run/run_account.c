/* The time accounting in the store; see run_account.h. */
#include "rig/run/run_account.h"

#include "lib/strbuf.h"
#include "rig/run/plan_estimate.h"
#include "rig/run/run.h"
#include "rig/run/run_resume.h"
#include "rig/run/runner.h"
#include "store/store.h"

static void failed(struct run *run, const char *what, const struct strbuf *err)
{
	if (run->time_failed++)
		return;
	run_dir_event(&run->dir, "warning", "cannot record %s (the report's time accounting "
		      "will be incomplete): %s", what, err->buf);
}

/* Write the totals taken for the scope (li, seq), as a store write of the
 * scope now current. */
static void record(struct run *run, long li, uint32_t seq, int seq_ok, const uint64_t *ns)
{
	const char *names[RT_NCAT];
	double secs[RT_NCAT];
	size_t n = 0;
	for (int c = 0; c < RT_NCAT; c++) {
		if (!ns[c])
			continue;
		names[n] = mod_run_time_name((enum run_time_cat)c);
		secs[n++] = (double)ns[c] / 1e9;
	}
	if (!n || !run->dir.store)
		return;
	struct store_time t = {
		.resume_id = run->resume ? run->resume->resume_id : 0,
		.layout_index = li,
		.layout = li >= 0 ? plan_layout_name(run->plan, (size_t)li) : NULL,
		.seq = seq_ok ? seq : 0,
		.categories = names,
		.seconds = secs,
		.n = n,
	};
	struct strbuf err = STRBUF_INIT;
	enum run_time_cat was = mod_run_time_swap(&run->time, RT_STORE);
	if (store_add_times(run->dir.store, &t, &err) < 0)
		failed(run, "where the run's time went", &err);
	mod_run_time_swap(&run->time, was);
	sb_release(&err);
}

void run_account_scope(struct run *run, long li, uint32_t seq)
{
	if (!run->dir.store || (run->time_layout == li && run->time_seq == seq))
		return; /* no store yet: the time stays with the scope until there is */
	uint64_t ns[RT_NCAT];
	mod_run_time_take(&run->time, ns);
	long old_li = run->time_layout;
	uint32_t old_seq = run->time_seq;
	int old_ok = run->time_seq_recorded;
	run->time_layout = li;
	run->time_seq = seq;
	run->time_seq_recorded = 0;
	record(run, old_li, old_seq, old_ok, ns);
}

void run_account_flush(struct run *run)
{
	if (!run->dir.store)
		return;
	uint64_t ns[RT_NCAT];
	mod_run_time_take(&run->time, ns);
	record(run, run->time_layout, run->time_seq, run->time_seq_recorded, ns);
}

void run_account_estimate(struct run *run, const struct schedule *s)
{
	const struct plan *p = run->plan;
	struct plan_est_options o = {
		.seed = run->seed, .seed_known = 1, .seed_scheme = run->seed_scheme,
		.image_size = run->opt->image_size, .layout = -1,
	};
	struct plan_est e;
	struct diag d;
	diag_init(&d, p->file, p->text); /* the fit warnings: `rig plan`'s, and checked per layout */
	int rc = run_plan_estimate(p, s, &o, &e, &d);
	diag_release(&d);
	if (rc < 0)
		return;
	struct strbuf err = STRBUF_INIT;
	enum run_time_cat was = mod_run_time_swap(&run->time, RT_STORE);
	for (size_t li = 0; li < e.nlayouts; li++) {
		struct store_estimate se = {
			.layout_index = (long)li,
			.layout = plan_layout_name(p, li),
			.seconds = e.layouts[li].seconds,
			.written_bytes = e.layouts[li].written,
			.files = e.layouts[li].files,
			.not_estimated = e.layouts[li].not_estimated,
			.assumed_rate = e.rate,
			.provision_s = e.provision_s,
		};
		if (store_add_estimate(run->dir.store, &se, &err) < 0) {
			failed(run, "the plan's estimate", &err);
			break;
		}
	}
	mod_run_time_swap(&run->time, was);
	sb_release(&err);
	run_plan_estimate_release(&e);
}
