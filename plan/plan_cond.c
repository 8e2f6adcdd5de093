/*
 * Volume conditions of a plan's partitions (`indexing`, `defrag`,
 * `snapshots`) and the rules of the snapshot step, checked against what
 * the platform and each file system can do: the driver's abilities and
 * its file systems' flags (provision/driver.h), never their names.
 *
 * A condition the platform or file system cannot honour is an error at
 * its key, naming what can. When --fs-map put the file system in place
 * (a macOS plan rehearsed on Linux), it is a warning instead and the
 * condition is marked not applied, so that the seed plans still rehearse;
 * the volume's facts say it was not applied.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"
#include "plan/platform.h"

#define MAX_KEEP 100000

static const char *const onoff[] = { "off", "on", NULL };

void plan_parse_conditions(struct pctx *c, const struct key *ix, const struct key *df,
			   const struct key *sn, struct plan_partition *pt)
{
	int v;
	pt->indexing = pt->defrag = COND_UNSET;
	pt->snapshots = SNAP_UNSET;
	if (ix->key && plan_key_choice(c, ix, onoff, &v) == 0) {
		pt->indexing = v ? COND_ON : COND_OFF;
		pt->indexing_mark = plan_node_mark(ix->key);
	}
	if (df->key && plan_key_choice(c, df, onoff, &v) == 0) {
		pt->defrag = v ? COND_ON : COND_OFF;
		pt->defrag_mark = plan_node_mark(df->key);
	}
	if (!sn->key)
		return;
	const char *s = plan_key_scalar(c, sn, "keep N or none");
	if (!s)
		return;
	char *end = NULL;
	long n = -1;
	if (!strcmp(s, "none"))
		n = 0;
	else if (!strncmp(s, "keep ", 5) && s[5] >= '0' && s[5] <= '9')
		n = strtol(s + 5, &end, 10);
	if (n < 0 || (n > 0 && *end) || n > MAX_KEEP || (end && n == 0)) {
		diag_error(c->d, plan_node_mark(sn->val), "invalid snapshots '%s': give 'keep N' (N "
			   "from 1 to %d: this volume keeps its last N) or 'none' (the snapshot "
			   "step skips it)", s, MAX_KEEP);
		return;
	}
	pt->snapshots = (int)n;
	pt->snapshots_mark = plan_node_mark(sn->key);
}

/* --- the checks --- */

/* Does any module step (at any depth) have every flag of want? */
static const struct plan_step *find_step(const struct plan_step *s, size_t n, unsigned want)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i].kind == STEP_MODULE && (s[i].module->flags & want) == want)
			return &s[i];
		const struct plan_step *in = find_step(s[i].steps, s[i].nsteps, want);
		if (in)
			return in;
	}
	return NULL;
}

/*
 * Condition bit of pt cannot be honoured: an error at m, or with a file
 * system --fs-map put there, a warning and the condition not applied
 * (on every partition of the entry: `count` expands one entry to many).
 */
static void refuse(struct pctx *c, struct plan_partition *entry, size_t n, unsigned bit,
		   struct mark m, const char *why)
{
	for (size_t i = 0; i < n; i++)
		entry[i].not_applied |= entry[0].mapped_from ? bit : 0;
	if (entry[0].mapped_from)
		diag_warning(c->d, m, "%s (%s is mapped from %s by --fs-map): not applied, and "
			     "recorded so in the volume's facts", why, entry[0].fs,
			     entry[0].mapped_from);
	else
		diag_error(c->d, m, "%s", why);
}

/* "macos": the drivers with every ability of want, for messages. */
static void drivers_with(struct strbuf *sb, unsigned want)
{
	for (size_t i = 0; plan_platforms[i]; i++)
		if ((plan_platforms[i]->abilities & want) == want)
			sb_addf(sb, "%s%s", sb->len ? " and " : "", plan_platforms[i]->name);
}

static void check_entry(struct pctx *c, struct plan_partition *pt, size_t n, int has_step)
{
	const struct plan_platform *d = c->p->platform;
	if (!plan_platform_fs(d, pt->fs))
		return; /* the platform cannot make it: that is the error */
	struct strbuf why = STRBUF_INIT, can = STRBUF_INIT;
	if (pt->indexing == COND_ON && !(d->abilities & PLAN_CAN_INDEX)) {
		drivers_with(&can, PLAN_CAN_INDEX);
		sb_addf(&why, "'indexing: on' on partition '%s': %s has no indexer to switch on "
			"(%s has; 'indexing: off' is accepted and recorded as nothing to do)",
			pt->name, d->name, can.len ? can.buf : "no platform");
		refuse(c, pt, n, PCOND_INDEXING, pt->indexing_mark, why.buf);
	}
	sb_reset(&why);
	sb_reset(&can);
	if (pt->defrag != COND_UNSET && !plan_fs_can(d, pt->fs, PLAN_FS_DEFRAG)) {
		plan_fs_with(&can, d, PLAN_FS_DEFRAG);
		sb_addf(&why, "'defrag' on %s partition '%s': on %s rig sets automatic "
			"defragmentation of %s only", pt->fs, pt->name, d->name,
			can.len ? can.buf : "no file system");
		refuse(c, pt, n, PCOND_DEFRAG, pt->defrag_mark, why.buf);
	}
	sb_reset(&why);
	sb_reset(&can);
	if (pt->snapshots > 0 && !plan_fs_can(d, pt->fs, PLAN_FS_SNAPSHOTS)) {
		plan_fs_with(&can, d, PLAN_FS_SNAPSHOTS);
		sb_addf(&why, "'snapshots: keep %d' on %s partition '%s': on %s rig takes snapshots "
			"of %s only ('snapshots: none' is accepted anywhere)", pt->snapshots, pt->fs,
			pt->name, d->name, can.len ? can.buf : "no file system");
		refuse(c, pt, n, PCOND_SNAPSHOTS, pt->snapshots_mark, why.buf);
	} else if (pt->snapshots > 0 && !has_step) {
		diag_warning(c->d, pt->snapshots_mark, "'snapshots: keep %d' on partition '%s' has "
			     "no effect: the plan has no snapshot step", pt->snapshots, pt->name);
	}
	sb_release(&why);
	sb_release(&can);
}

/* The snapshot step: an image or disk target with at least one volume
 * that can take snapshots. */
static void check_snapshot_step(struct pctx *c, const struct plan_step *st)
{
	const struct plan *p = c->p;
	if (p->target.kind == TARGET_DIRS) {
		diag_error(c->d, st->mark, "step '%s' needs an image or disk target: rig takes "
			   "snapshots only of volumes it provisions, not of the directories of a "
			   "dirs target", st->module->name);
		return;
	}
	const struct plan_platform *d = p->platform;
	size_t can = 0, could = 0;
	for (size_t li = 0; li < p->nlayouts; li++)
		for (size_t i = 0; i < p->layouts[li].nparts; i++) {
			const struct plan_partition *pt = &p->layouts[li].parts[i];
			if (!plan_platform_fs(d, pt->fs))
				return; /* the platform cannot make it: that is the error */
			if (plan_fs_can(d, pt->fs, PLAN_FS_SNAPSHOTS))
				can += pt->snapshots != 0;
			else if (pt->mapped_from &&
				 plan_fs_can(plan_platform_of_fs(pt->mapped_from), pt->mapped_from,
					     PLAN_FS_SNAPSHOTS))
				could++;
		}
	if (can)
		return;
	struct strbuf with = STRBUF_INIT;
	plan_fs_with(&with, d, PLAN_FS_SNAPSHOTS);
	if (could)
		diag_warning(c->d, st->mark, "step '%s': no volume can take snapshots once --fs-map "
			     "has replaced their file systems (on %s only %s can): the step records a "
			     "skip on every volume", st->module->name, d->name,
			     with.len ? with.buf : "none");
	else
		diag_error(c->d, st->mark, "step '%s': no volume of the plan can take snapshots "
			   "(on %s rig takes snapshots of %s only, and not of a partition with "
			   "'snapshots: none')", st->module->name, d->name,
			   with.len ? with.buf : "no file system");
	sb_release(&with);
}

static void check_steps(struct pctx *c, const struct plan_step *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i].kind == STEP_MODULE && (s[i].module->flags & MOD_SNAPSHOTS))
			check_snapshot_step(c, &s[i]);
		check_steps(c, s[i].steps, s[i].nsteps);
	}
}

void plan_check_conditions(struct pctx *c)
{
	struct plan *p = c->p;
	const struct plan_step *snap = find_step(p->steps, p->nsteps, MOD_SNAPSHOTS);
	if (snap && c->target_known && (p->platform || p->target.kind == TARGET_DIRS))
		check_steps(c, p->steps, p->nsteps);
	if (!p->platform)
		return;
	for (size_t li = 0; li < p->nlayouts; li++) {
		struct plan_layout *l = &p->layouts[li];
		for (size_t i = 0; i < l->nparts;) {
			size_t n = 1; /* the partitions of one entry (count) share its marks */
			while (i + n < l->nparts && l->parts[i + n].mark.line == l->parts[i].mark.line &&
			       l->parts[i + n].mark.col == l->parts[i].mark.col)
				n++;
			check_entry(c, &l->parts[i], n, snap != NULL);
			i += n;
		}
	}
}
