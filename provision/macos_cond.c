/*
 * Volume conditions and snapshots of the macOS driver (the flags of
 * macos_driver.c's file systems), each command through the spawner and
 * journaled, addressed by the volume's mount point (diskutil takes a
 * mount point wherever it takes a device, and so do mdutil and tmutil):
 *
 *   indexing  `mdutil -i off|on MOUNT` after the volume is mounted, and
 *             again after each remount (Spotlight keeps the setting in the
 *             volume's own store; setting it again costs nothing).
 *   defrag    `diskutil apfs defragment MOUNT enable|disable`: APFS's
 *             automatic background defragmentation, per volume.
 *   snapshots There is no other public way to make an APFS snapshot: the
 *             fs_snapshot_create() call needs an entitlement Apple grants
 *             to backup vendors. So a snapshot is a Time Machine local
 *             snapshot: `tmutil localsnapshot MOUNT` prints "Created local
 *             snapshot with date: DATE"; `diskutil apfs listSnapshots
 *             -plist MOUNT` then gives its name on that volume (the name
 *             has changed between versions: com.apple.TimeMachine.DATE,
 *             later with .local), and `diskutil apfs deleteSnapshot MOUNT
 *             -name NAME` deletes it. What this means for a run
 *             (docs/plan-language.md says it too):
 *             - Time Machine snapshots only volumes it backs up: a volume
 *               excluded from Time Machine gets none, and the step fails
 *               saying so (the listing shows no snapshot of that date);
 *             - Time Machine thins local snapshots itself (after 24 hours,
 *               and when a volume passes about 80% full), so `keep N` is
 *               an upper bound there, not a guarantee;
 *             - the date has one-second resolution: two snapshots of a
 *               volume are taken at least a second apart;
 *             - older macOS versions may snapshot every backed-up volume,
 *               not only MOUNT; rig deletes only the ones it found on its
 *               own volumes.
 *             Sources: tmutil(8); public scripts that drive the same
 *             commands (see the fixtures' SOURCES.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../platform/platform.h"
#include "../rig/util/xalloc.h"
#include "command.h"
#include "driver.h"
#include "journal.h"
#include "macos.h"
#include "vol_facts.h"

#define SNAP_GAP_NS 1100000000ull /* tmutil's dates are whole seconds */

/* The argv of pt's indexing or defrag command on mount; 0 when there is none. */
static int indexing_argv(const struct plan_partition *pt, const char *mount, const char **argv)
{
	if (pt->indexing == COND_UNSET || (pt->not_applied & PCOND_INDEXING))
		return 0;
	argv[0] = "mdutil";
	argv[1] = "-i";
	argv[2] = pt->indexing == COND_ON ? "on" : "off";
	argv[3] = mount;
	argv[4] = NULL;
	return 1;
}

static int defrag_argv(const struct plan_partition *pt, const char *mount, const char **argv)
{
	if (pt->defrag == COND_UNSET || (pt->not_applied & PCOND_DEFRAG))
		return 0;
	argv[0] = "diskutil";
	argv[1] = "apfs";
	argv[2] = "defragment";
	argv[3] = mount;
	argv[4] = pt->defrag == COND_ON ? "enable" : "disable";
	argv[5] = NULL;
	return 1;
}

int mac_cond_apply(struct provision_ctx *ctx, const struct plan_partition *pt, const char *mount)
{
	const char *argv[6];
	int rc = 0;
	if (indexing_argv(pt, mount, argv))
		rc = prov_journal_run(ctx, "set-indexing", mount, argv, NULL);
	if (rc == 0 && defrag_argv(pt, mount, argv))
		rc = prov_journal_run(ctx, "set-defrag", mount, argv, NULL);
	return rc;
}

void mac_cond_facts(const struct provision_ctx *ctx, const struct plan_partition *pt,
		    const char *mount, struct vol_facts *f, struct prov_cond_text *t)
{
	const char *argv[6];
	struct strbuf ix = STRBUF_INIT, df = STRBUF_INIT;
	if (indexing_argv(pt, mount, argv))
		spawn_argv_text(&ix, argv);
	if (defrag_argv(pt, mount, argv))
		spawn_argv_text(&df, argv);
	prov_cond_facts(ctx, pt, ix.buf, df.buf, f, t);
	sb_release(&ix);
	sb_release(&df);
}

/* --- snapshots --- */

/* The name of the snapshot of date on mount that the run does not know
 * yet; NULL with the reason in err. */
static char *find_new(struct provision_ctx *ctx, const char *mount, const char *date,
		      const struct prov_snap_list *known)
{
	const char *argv[] = { "diskutil", "apfs", "listSnapshots", "-plist", mount, NULL };
	struct spawn_result r;
	if (prov_run(ctx, argv, &r) < 0)
		return NULL;
	struct mac_snapshots sn;
	struct strbuf e = STRBUF_INIT;
	char *name = NULL;
	if (mac_parse_snapshots(r.stdout_text ? r.stdout_text : "", r.stdout_len, &sn, &e) < 0) {
		sb_addf(ctx->err, "diskutil apfs listSnapshots -plist %s printed no usable plist: %s",
			mount, e.buf);
	} else {
		for (size_t i = 0; i < sn.n && !name; i++) {
			int seen = 0;
			for (size_t j = 0; j < known->n; j++)
				seen |= !strcmp(known->names[j], sn.names[i]);
			if (!seen && strstr(sn.names[i], date))
				name = xstrdup(sn.names[i]);
		}
		if (!name)
			sb_addf(ctx->err, "tmutil localsnapshot %s made no snapshot of that volume "
					  "(diskutil apfs listSnapshots lists %zu, none new of date %s): "
					  "Time Machine snapshots only the volumes it backs up; take the "
					  "volume out of its exclusions (tmutil removeexclusion -v %s)",
				mount, sn.n, date, mount);
	}
	mac_snapshots_release(&sn);
	sb_release(&e);
	spawn_result_release(&r);
	return name;
}

int mac_snapshot_take(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn,
		      char **name)
{
	int dry = spawner_dry_run(ctx->sp);
	if (!dry && sn->last_ns) {
		uint64_t since = plat_clock_ns() - sn->last_ns;
		if (since < SNAP_GAP_NS) {
			uint64_t w = SNAP_GAP_NS - since;
			struct timespec ts = { (time_t)(w / 1000000000u), (long)(w % 1000000000u) };
			nanosleep(&ts, NULL);
		}
	}
	const char *argv[] = { "tmutil", "localsnapshot", mount, NULL };
	struct spawn_result r;
	int rc = prov_journal_run(ctx, "take-snapshot", mount, argv, &r);
	if (rc < 0)
		return rc;
	sn->last_ns = plat_clock_ns();
	struct strbuf dd = STRBUF_INIT;
	sb_addf(&dd, "DATE%u", ++sn->taken);
	char *date = dry ? sb_detach(&dd) : mac_tmutil_date(r.stdout_text);
	sb_release(&dd);
	spawn_result_release(&r);
	if (!date) {
		sb_addf(ctx->err, "tmutil localsnapshot %s did not say \"Created local snapshot with "
				  "date: ...\"", mount);
		return -EIO;
	}
	char *got = NULL;
	if (dry) {
		const char *ls[] = { "diskutil", "apfs", "listSnapshots", "-plist", mount, NULL };
		rc = prov_run(ctx, ls, NULL);
		struct strbuf nm = STRBUF_INIT;
		sb_addf(&nm, "com.apple.TimeMachine.%s.local", date);
		got = sb_detach(&nm);
	} else {
		got = find_new(ctx, mount, date, &sn->l);
		rc = got ? 0 : -EIO;
	}
	free(date);
	if (rc == 0) {
		prov_snap_list_add(&sn->l, got);
		*name = got;
	} else {
		free(got);
	}
	return rc;
}

int mac_snapshot_drop(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn,
		      const char *name)
{
	const char *argv[] = { "diskutil", "apfs", "deleteSnapshot", mount, "-name", name, NULL };
	int rc = prov_journal_run(ctx, "delete-snapshot", mount, argv, NULL);
	if (rc == 0)
		prov_snap_list_remove(&sn->l, name);
	return rc;
}

struct mac_drop {
	const char *mount;
	struct mac_snaps *sn;
};

static int drop_fn(struct provision_ctx *ctx, void *opaque, const char *name)
{
	struct mac_drop *d = opaque;
	return mac_snapshot_drop(ctx, d->mount, d->sn, name);
}

void mac_snapshots_teardown(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn)
{
	struct mac_drop d = { mount, sn };
	prov_snap_list_teardown(ctx, &sn->l, mount, drop_fn, &d);
	sn->last_ns = 0;
}
