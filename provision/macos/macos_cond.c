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
 *             snapshot: `tmutil localsnapshot`, as tmutil(8) documents it
 *             (no argument: it "creates new local Time Machine snapshots of
 *             all APFS volumes included in the Time Machine backup"),
 *             prints "Created local snapshot with date: DATE"; `diskutil
 *             apfs listSnapshots -plist MOUNT` then gives its name on that
 *             volume (the name has changed between versions:
 *             com.apple.TimeMachine.DATE, later with .local), and `diskutil
 *             apfs deleteSnapshot MOUNT -name NAME` deletes it. What this
 *             means for a run (docs/plan-language.md says it too):
 *             - Time Machine snapshots only volumes it includes: before the
 *               first snapshot of a volume, `tmutil isexcluded MOUNT` must
 *               say [Included], or the step is refused with the fix; and
 *               after each, the listing must show a new one of that date;
 *             - the other included volumes (the boot volume's data) get a
 *               snapshot too; they are Time Machine's, which thins them
 *               after 24 hours, and rig leaves them alone;
 *             - Time Machine thins local snapshots itself (after 24 hours,
 *               and when a volume passes about 80% full): the snapshot
 *               step lists the volume after each snapshot and records any
 *               of the run's that are gone (modules/snapshot.c);
 *             - `snapshots: none` on APFS: the volume is excluded from Time
 *               Machine for the run (`tmutil addexclusion -v MOUNT`, by the
 *               volume's UUID) and included again at teardown (`tmutil
 *               removeexclusion -v`), so hourly snapshots cannot land on
 *               it; the snapshot step lists it in every cycle and records
 *               any that did as a warning;
 *             - deleteSnapshot returns before APFS has let the snapshot
 *               go: rig lists the volume until it is gone (up to a
 *               minute), so the next step starts without it;
 *             - the date has one-second resolution: two snapshots of a
 *               volume are taken at least a second apart.
 *             Sources: tmutil(8); public scripts that drive the same
 *             commands (see the fixtures' SOURCES.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/xalloc.h"
#include "plan/platform.h"
#include "platform/platform.h"
#include "provision/command.h"
#include "provision/driver.h"
#include "provision/journal.h"
#include "provision/macos/macos.h"
#include "provision/vol_facts.h"

#define SNAP_GAP_NS 1100000000ull /* tmutil's dates are whole seconds */
/* How long a deleted snapshot may stay listed: APFS frees it in the background. */
#define DROP_WAIT_NS 60000000000ull

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

/* `snapshots: none` on a file system that takes them: keep Time Machine off it. */
static int wants_exclusion(const struct provision_ctx *ctx, const struct plan_partition *pt)
{
	return pt->snapshots == 0 && !(pt->not_applied & PCOND_SNAPSHOTS) &&
	       plan_fs_can(ctx->plan->platform, pt->fs, PLAN_FS_SNAPSHOTS);
}

int prov_mac_cond_apply(struct provision_ctx *ctx, const struct plan_partition *pt, const char *mount,
		   struct mac_snaps *sn)
{
	const char *argv[6];
	int rc = 0;
	if (indexing_argv(pt, mount, argv))
		rc = prov_journal_run(ctx, "set-indexing", mount, argv, NULL);
	if (rc == 0 && defrag_argv(pt, mount, argv))
		rc = prov_journal_run(ctx, "set-defrag", mount, argv, NULL);
	if (rc == 0 && sn && !sn->excluded && wants_exclusion(ctx, pt)) {
		const char *ex[] = { "tmutil", "addexclusion", "-v", mount, NULL };
		rc = prov_journal_run(ctx, "exclude-from-time-machine", mount, ex, NULL);
		if (rc == 0)
			sn->excluded = 1;
	}
	return rc;
}

void prov_mac_cond_facts(const struct provision_ctx *ctx, const struct plan_partition *pt,
		    const char *mount, struct vol_facts *f, struct prov_cond_text *t)
{
	const char *argv[6];
	struct strbuf ix = STRBUF_INIT, df = STRBUF_INIT;
	if (indexing_argv(pt, mount, argv))
		plat_spawn_argv_text(&ix, argv);
	if (defrag_argv(pt, mount, argv))
		plat_spawn_argv_text(&df, argv);
	prov_cond_facts(ctx, pt, ix.buf, df.buf, f, t);
	sb_release(&ix);
	sb_release(&df);
}

/* --- snapshots --- */

int prov_mac_snapshot_list(struct provision_ctx *ctx, const char *mount, char ***names, size_t *n)
{
	const char *argv[] = { "diskutil", "apfs", "listSnapshots", "-plist", mount, NULL };
	struct spawn_result r;
	*names = NULL;
	*n = 0;
	if (prov_run(ctx, argv, &r) < 0)
		return -EIO;
	int rc = 1; /* a dry run lists nothing */
	if (!plat_spawner_dry_run(ctx->sp)) {
		rc = 0;
		struct mac_snapshots sn;
		struct strbuf e = STRBUF_INIT;
		if (prov_mac_parse_snapshots(r.stdout_text ? r.stdout_text : "", r.stdout_len, &sn, &e) < 0) {
			sb_addf(ctx->err, "diskutil apfs listSnapshots -plist %s printed no usable "
					  "plist: %s", mount, e.buf);
			rc = -EIO;
		} else {
			*names = sn.names;
			*n = sn.n;
			sn.names = NULL;
			sn.n = 0;
		}
		prov_mac_snapshots_release(&sn);
		sb_release(&e);
	}
	plat_spawn_result_release(&r);
	return rc;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The name of the snapshot of date on mount that the run does not know
 * yet; NULL with the reason in err. */
static char *find_new(struct provision_ctx *ctx, const char *mount, const char *date,
		      const struct prov_snap_list *known)
{
	char **names = NULL;
	size_t n = 0;
	if (prov_mac_snapshot_list(ctx, mount, &names, &n) < 0)
		return NULL;
	char *name = NULL;
	for (size_t i = 0; i < n && !name; i++) {
		int seen = 0;
		for (size_t j = 0; j < known->n; j++)
			seen |= !strcmp(known->names[j], names[i]);
		if (!seen && strstr(names[i], date))
			name = xstrdup(names[i]);
	}
	if (!name)
		sb_addf(ctx->err, "tmutil localsnapshot made no snapshot of %s (diskutil apfs "
				  "listSnapshots lists %zu, none new of date %s), though tmutil "
				  "isexcluded says Time Machine includes it: is Time Machine set up on "
				  "this Mac (a backup disk chosen)? tmutil destinationinfo tells",
			mount, n, date);
	free_names(names, n);
	return name;
}

/* `tmutil isexcluded MOUNT` says [Included]: 0; else the refusal in err. */
static int check_included(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn)
{
	if (sn->included)
		return 0;
	const char *argv[] = { "tmutil", "isexcluded", mount, NULL };
	struct spawn_result r;
	if (prov_run(ctx, argv, &r) < 0)
		return -EIO;
	const char *out = r.stdout_text ? r.stdout_text : "";
	int rc = 0;
	if (plat_spawner_dry_run(ctx->sp) || strstr(out, "[Included]")) {
		sn->included = 1;
	} else if (strstr(out, "[Excluded]")) {
		sb_addf(ctx->err, "Time Machine excludes %s (tmutil isexcluded %s: [Excluded]), and "
				  "tmutil localsnapshot takes snapshots only of the volumes Time "
				  "Machine includes, so the plan's snapshots would not be taken: "
				  "include the volume for the run (sudo tmutil removeexclusion -v %s, "
				  "or -p for an exclusion by path) and run again",
			mount, mount, mount);
		rc = -EPERM;
	} else {
		sb_addf(ctx->err, "tmutil isexcluded %s printed neither [Included] nor [Excluded]: %s",
			mount, out);
		rc = -EIO;
	}
	plat_spawn_result_release(&r);
	return rc;
}

int prov_mac_snapshot_take(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn,
		      char **name)
{
	int dry = plat_spawner_dry_run(ctx->sp);
	int rc = check_included(ctx, mount, sn);
	if (rc < 0)
		return rc;
	if (!dry && sn->last_ns) {
		uint64_t since = plat_clock_ns() - sn->last_ns;
		if (since < SNAP_GAP_NS) {
			uint64_t w = SNAP_GAP_NS - since;
			struct timespec ts = { (time_t)(w / 1000000000u), (long)(w % 1000000000u) };
			nanosleep(&ts, NULL);
		}
	}
	const char *argv[] = { "tmutil", "localsnapshot", NULL };
	struct spawn_result r;
	rc = prov_journal_run(ctx, "take-snapshot", mount, argv, &r);
	if (rc < 0)
		return rc;
	sn->last_ns = plat_clock_ns();
	struct strbuf dd = STRBUF_INIT;
	sb_addf(&dd, "DATE%u", ++sn->taken);
	char *date = dry ? sb_detach(&dd) : prov_mac_tmutil_date(r.stdout_text);
	sb_release(&dd);
	plat_spawn_result_release(&r);
	if (!date) {
		sb_adds(ctx->err, "tmutil localsnapshot did not say \"Created local snapshot with "
				  "date: ...\"");
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

/* List mount until name is gone, up to DROP_WAIT_NS. */
static int wait_gone(struct provision_ctx *ctx, const char *mount, const char *name)
{
	uint64_t t0 = plat_clock_ns(), pause_ns = 50000000ull;
	for (;;) {
		char **names = NULL;
		size_t n = 0;
		if (prov_mac_snapshot_list(ctx, mount, &names, &n) < 0)
			return -EIO;
		int listed = 0;
		for (size_t i = 0; i < n; i++)
			listed |= !strcmp(names[i], name);
		free_names(names, n);
		if (!listed)
			return 0;
		if (plat_clock_ns() - t0 > DROP_WAIT_NS) {
			sb_addf(ctx->err, "diskutil apfs deleteSnapshot %s -name %s finished, but "
					  "listSnapshots still lists it after %llu s",
				mount, name, (unsigned long long)(DROP_WAIT_NS / 1000000000u));
			return -ETIMEDOUT;
		}
		struct timespec ts = { (time_t)(pause_ns / 1000000000u),
				       (long)(pause_ns % 1000000000u) };
		nanosleep(&ts, NULL);
		if (pause_ns < 2000000000ull)
			pause_ns *= 2;
	}
}

int prov_mac_snapshot_drop(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn,
		      const char *name)
{
	const char *argv[] = { "diskutil", "apfs", "deleteSnapshot", mount, "-name", name, NULL };
	int rc = prov_journal_run(ctx, "delete-snapshot", mount, argv, NULL);
	if (rc == 0 && !plat_spawner_dry_run(ctx->sp))
		rc = wait_gone(ctx, mount, name);
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
	return prov_mac_snapshot_drop(ctx, d->mount, d->sn, name);
}

void prov_mac_snapshots_teardown(struct provision_ctx *ctx, const char *mount, struct mac_snaps *sn)
{
	struct mac_drop d = { mount, sn };
	prov_snap_list_teardown(ctx, &sn->l, mount, drop_fn, &d);
	sn->last_ns = 0;
	sn->included = 0;
	if (sn->excluded) {
		const char *argv[] = { "tmutil", "removeexclusion", "-v", mount, NULL };
		struct strbuf e = STRBUF_INIT;
		struct provision_ctx q = *ctx;
		q.err = &e;
		if (prov_journal_run(&q, "include-in-time-machine", mount, argv, NULL) < 0)
			prov_note(ctx, 1, "%s stays excluded from Time Machine (the run excluded it for "
					  "'snapshots: none'): %s; include it with: sudo tmutil "
					  "removeexclusion -v %s", mount, e.buf, mount);
		sb_release(&e);
		sn->excluded = 0;
	}
}
