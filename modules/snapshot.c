/*
 * snapshot: a read-only snapshot of the volume, keeping the last N (the
 * enumeration article's "snapshots retained" condition: a volume that
 * keeps snapshots ages differently, since what churn deletes stays held).
 *
 * How a snapshot is taken and deleted is the platform driver's
 * (ctx->snap; provision/linux/linux_cond.c, macos_cond.c); this file only
 * decides which to keep. The partition's `snapshots:` overrides the
 * step's keep for its volume: `none` skips it, `keep N` keeps N. A volume
 * whose file system takes no snapshots (HFS+ beside APFS) records a skip
 * note, not an error: the plan refused the step where no volume can.
 *
 * The names the run took on a volume, oldest first, are the volume's
 * state (ctx->volstate); the driver deletes any left at teardown.
 *
 * Where the driver can list a volume's snapshots (macOS, whose Time
 * Machine takes and thins snapshots of its own), the step checks that the
 * condition held: after taking, the metric `listed` (every snapshot the
 * volume has) and a warning for each of the run's that is gone (thinned;
 * it leaves the state, so nothing tries to delete it); on a volume whose
 * partition says `snapshots: none`, the metric `appeared` (snapshots it
 * has, which should be 0) and a warning naming any.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "platform/platform.h"

struct snapshot_args {
	uint64_t keep; /* 0: all */
};

struct snap_state {
	char **names; /* oldest first */
	size_t n, alloc;
};

static const struct rig_param snapshot_params[] = {
	{ .name = "keep", .type = PT_UINT, .offset = offsetof(struct snapshot_args, keep),
	  .def = NULL, .min = 1, .max = 100000,
	  .help = "how many of the volume's snapshots to keep, the newest (left out: all); a "
		  "partition's `snapshots: keep N` overrides it for its volume" },
	{ .name = NULL },
};

static const struct rig_metric snapshot_metrics[] = {
	{ "seconds", "s", "time to take the snapshot and delete those beyond keep", 0 },
	{ "snapshots", "count", "snapshots the run keeps on the volume after this step (set by the plan)", 1 },
	{ "deleted", "count", "snapshots deleted by this step (beyond keep; set by the plan)", 1 },
	{ "listed", "count", "snapshots the volume has after this step, the run's and others", 0 },
	{ "appeared", "count", "snapshots on a volume that takes none (snapshots: none)", 0 },
	{ NULL, NULL, NULL, 0 },
};

static void state_release(void *p)
{
	struct snap_state *s = p;
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* `snapshots: none`: none may be there. */
static int check_none(struct rig_ctx *ctx, const struct rig_snapshots *sn)
{
	char **names = NULL;
	size_t n = 0;
	int rc = sn->list(sn->opaque, &names, &n, ctx->err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	cell_metric(ctx, "appeared", (double)n, "count");
	if (n) {
		struct strbuf w = STRBUF_INIT;
		sb_addf(&w, "%zu snapshot%s on a volume whose partition says 'snapshots: none':", n,
			n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			sb_addf(&w, "%s %s", i ? "," : "", names[i]);
		cell_note(ctx, "warning", w.buf);
		sb_release(&w);
	}
	free_names(names, n);
	return 0;
}

/* After a snapshot: what the volume has; the run's that are gone leave s. */
static int check_kept(struct rig_ctx *ctx, const struct rig_snapshots *sn, struct snap_state *s)
{
	char **names = NULL;
	size_t n = 0;
	int rc = sn->list(sn->opaque, &names, &n, ctx->err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	cell_metric(ctx, "listed", (double)n, "count");
	for (size_t i = 0; i < s->n;) {
		int there = 0;
		for (size_t j = 0; j < n; j++)
			there |= !strcmp(names[j], s->names[i]);
		if (there) {
			i++;
			continue;
		}
		struct strbuf w = STRBUF_INIT;
		sb_addf(&w, "snapshot %s, which the run keeps, is gone: the system deleted it (Time "
			    "Machine thins local snapshots after 24 hours and on a volume near full)",
			s->names[i]);
		cell_note(ctx, "warning", w.buf);
		sb_release(&w);
		free(s->names[i]);
		memmove(s->names + i, s->names + i + 1, (s->n - i - 1) * sizeof(*s->names));
		s->n--;
	}
	free_names(names, n);
	return 0;
}

static int snapshot_run(struct rig_ctx *ctx, const void *a)
{
	const struct snapshot_args *args = a;
	const struct rig_snapshots *sn = ctx->snap;
	if (!sn) {
		sb_adds(ctx->err, "no snapshots here: the step needs a volume rig provisioned (an "
				  "image or disk target)");
		return -ENOTSUP;
	}
	if (sn->skip) {
		cell_note(ctx, "skipped", sn->skip);
		return sn->keep == 0 && sn->list ? check_none(ctx, sn) : 0;
	}
	struct snap_state *s = *ctx->volstate;
	if (!s)
		*ctx->volstate = s = xcalloc(1, sizeof(*s));
	uint64_t keep = sn->keep > 0 ? (uint64_t)sn->keep : args->keep;
	uint64_t t0 = plat_clock_ns();
	char *name = NULL;
	int rc = sn->take(sn->opaque, &name, ctx->err);
	if (rc < 0)
		return rc;
	XGROW(s->names, s->n + 1, s->alloc);
	s->names[s->n++] = name;
	cell_note(ctx, "snapshot", name);
	size_t deleted = 0;
	while (keep && s->n > keep) {
		rc = sn->drop(sn->opaque, s->names[0], ctx->err);
		if (rc < 0)
			return rc;
		free(s->names[0]);
		memmove(s->names, s->names + 1, (s->n - 1) * sizeof(*s->names));
		s->n--;
		deleted++;
	}
	double secs = (double)(plat_clock_ns() - t0) / 1e9;
	if (sn->list && (rc = check_kept(ctx, sn, s)) < 0)
		return rc;
	cell_metric(ctx, "seconds", secs, "s");
	cell_metric(ctx, "snapshots", (double)s->n, "count");
	cell_metric(ctx, "deleted", (double)deleted, "count");
	return 0;
}

/* For `rig plan`: a snapshot shares every block with its volume, so
 * nothing is written; taking one and deleting the oldest are counted as
 * two file operations at the assumed rate (a btrfs snapshot is metadata
 * only; macOS's tmutil takes longer, which the estimate does not know). */
static void snapshot_estimate(const void *a, struct est_cell *c)
{
	(void)a;
	c->ops = 2;
}

const struct rig_module mod_snapshot = {
	.name = "snapshot",
	.summary = "takes a read-only snapshot of the volume, keeping the last N",
	.help = "Takes a read-only snapshot of each volume and deletes the oldest beyond `keep` "
		"(left out: all are kept until the layout is torn down). A partition's "
		"`snapshots: keep N` keeps N on its volume instead, `snapshots: none` skips it. "
		"Linux btrfs: `btrfs subvolume snapshot -r MOUNT MOUNT/.rig-snapshots/snap-NNNN`, "
		"deleted with `btrfs subvolume delete`; the folder is rig's, and no module walks "
		"it. macOS APFS: `tmutil localsnapshot` (Time Machine local snapshots of the "
		"volumes it includes; the step is refused when `tmutil isexcluded` says it "
		"excludes the volume), found with `diskutil apfs listSnapshots -plist VOLUME`, "
		"deleted with `diskutil apfs deleteSnapshot VOLUME -name NAME` and listed until "
		"gone; after each snapshot the volume is listed (`listed`) and any of the run's "
		"that the system thinned is a warning; a `snapshots: none` APFS volume is kept "
		"out of Time Machine for the run and listed each time (`appeared`, a warning "
		"when not 0). A volume whose file system takes no "
		"snapshots (HFS+, ext4, xfs) records a note `skipped`, not an error; the plan "
		"is refused where no volume can, and on a dirs target. Snapshots left at the "
		"end of a layout are deleted at its teardown (they go with the file system "
		"anyway).",
	.kind = MOD_OTHER,
	.flags = MOD_SNAPSHOTS | MOD_DRY_RUNS,
	.headline = { "seconds", -1 },
	.params = snapshot_params,
	.estimate = snapshot_estimate,
	.args_size = sizeof(struct snapshot_args),
	.metrics = snapshot_metrics,
	.run = snapshot_run,
	.release_state = state_release,
};
