/* What the subcommands share: the command table and plan loading. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "lib/diag.h"
#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "plan/platform.h"
#include "platform/platform.h"
#include "provision/driver.h"
#include "provision/safety.h"
#include "rig/cmd/cmd.h"

const struct rig_cmd cmd_table[] = {
	{ "run", cmd_run, "run a plan: provision, measure, record, report",
	  "usage: rig run [options] PLAN\n"
	  "\n"
	  "Runs the plan and writes a run folder (runs/<UTC time>-<name>/ unless -o):\n"
	  "plan.yaml, results.db, results.csv, files.csv and commands.log.\n"
	  "\n"
	  "  -o, --output DIR      the run folder (must not exist, or be empty)\n"
	  "      --runs DIR        where run folders go (default: runs)\n"
	  "      --seed N          seed every random choice (overrides the plan's)\n"
	  "      --platform NAME   linux or macos (default: this machine's); macos on Linux\n"
	  "                        runs the macOS backend with the diskutil and hdiutil\n"
	  "                        first on PATH (only the test fakes of build/tools/macos)\n"
	  "      --fs-map MAP      rewrite file systems, e.g. apfs=ext4,hfs+=xfs\n"
	  "      --var NAME=VALUE  the value of $NAME where no sweep binds it: module\n"
	  "                        parameters, and the target's device, confirm, image\n"
	  "                        path and size, dirs and names (repeatable; recorded\n"
	  "                        for rig resume)\n"
	  "  -y, --yes             do not ask before erasing a disk target\n"
	  "      --force           overwrite an image file that rig did not make\n"
	  "      --allow RULES     waive safety rules for a disk target: loop (a loop device\n"
	  "                        rig did not attach), virtual (macOS: Virtual), internal\n"
	  "                        (macOS: Internal); comma-separated\n"
	  "      --image-size SIZE replace the image target's size (e.g. 512M, for quick runs)\n"
	  "      --no-fit-check    run a layout whose data does not fit its volumes (the\n"
	  "                        check made after provisioning each layout, before its\n"
	  "                        first cell writes: the warnings of `rig plan`)\n"
	  "  -q, --quiet           no progress lines\n"
	  "      --json-progress   progress as one JSON object per event on stderr, for\n"
	  "                        other programs (docs/progress.md); also with -q\n"
	  "\n"
	  "On a terminal, progress is one live line: [cell/total], elapsed time, ETA,\n"
	  "the step and volume, the last headline value, and the setup or filling work\n"
	  "under way; otherwise a plain line per cell.\n"
	  "Ctrl-C stops between operations and keeps everything measured; `rig resume\n"
	  "RUN` continues a run that stopped (Ctrl-C, a crash, a kill, a reboot).\n"
	  "One run per target: a disk, image or directory another rig run is using is\n"
	  "refused at once, naming that run, with no run folder made (locks in /run/rig,\n"
	  "or $RIG_LOCK_DIR; see the README, \"One run per target\").\n"
	  "Exit status: 0 completed, 1 failed or interrupted, 2 bad usage, invalid plan\n"
	  "or refused before it started.\n" },
	{ "resume", cmd_resume, "continue an interrupted run in its run folder",
	  "usage: rig resume [options] RUN\n"
	  "\n"
	  "Continues the run in folder RUN after Ctrl-C, a crash, a kill, a power cut or a\n"
	  "reboot: runs the cells not yet done in the original order, with the plan, seed\n"
	  "and options the run recorded, appending to RUN's store and rewriting its\n"
	  "reports. What the stopped run left provisioned (mounts, loop devices, work\n"
	  "folders) is found and kept only when it is exactly what was recorded and no\n"
	  "later cell needs module state that died with the process (read needs write's\n"
	  "file set); otherwise it is torn down, the layout is provisioned afresh and its\n"
	  "cells run again from its first. Samples of cells run again stay in the store,\n"
	  "marked superseded, and are not counted. A completed run is left alone.\n"
	  "Refused: a run still going, a run made by another rig version, a plan.yaml\n"
	  "changed since the run started, a target another run is using, a target that\n"
	  "cannot be prepared (not root, tools missing; the run stays resumable).\n"
	  "\n"
	  "  -y, --yes             do not ask before erasing a disk target\n"
	  "      --force           overwrite an image file that rig did not make\n"
	  "      --allow RULES     waive more safety rules (added to the run's own)\n"
	  "      --no-fit-check    as for rig run (a run started with it keeps it)\n"
	  "  -q, --quiet           no progress lines\n"
	  "      --json-progress   progress as one JSON object per event on stderr, for\n"
	  "                        other programs (docs/progress.md); also with -q\n"
	  "\n"
	  "Exit status: 0 completed (or was already), 1 failed or interrupted again,\n"
	  "2 bad usage or a run that cannot be resumed.\n" },
	{ "plan", cmd_plan, "show what a plan would do, touching nothing",
	  "usage: rig plan [options] PLAN\n"
	  "\n"
	  "Validates the plan and prints its schedule: one line per phase, the volumes\n"
	  "in the order they will be measured; and, for provisioned targets, the exact\n"
	  "commands the backend would run. Nothing is run, nothing is written. Says\n"
	  "when a rig run is using the target (`rig run` would be refused).\n"
	  "\n"
	  "Estimates, per layout and in total, the bytes written, the files created\n"
	  "and the run time: sizes as the run draws them when the seed is known (the\n"
	  "plan's or --seed), else expected; time-bound steps exactly, data at an\n"
	  "assumed rate (400 MB/s, a disk target 150 MB/s), file operations at\n"
	  "10000/s, provisioning 2 s per volume; the assumptions are printed with\n"
	  "the numbers. Warns (file:line:column) where the data cannot fit its\n"
	  "volume: a file larger than it, a step needing more than is left (after a\n"
	  "fill, the other steps' data), with the numbers and what to change; rig run\n"
	  "makes the same check after provisioning and refuses. A disk whose size\n"
	  "cannot be read here is checked at run time only.\n"
	  "\n"
	  "      --seed N          the seed for orders and sizes (default: the plan's, else\n"
	  "                        0 for orders and expected sizes)\n"
	  "      --platform NAME   linux or macos (default: this machine's); for macos the\n"
	  "                        target's size is read with the diskutil first on PATH\n"
	  "      --fs-map MAP      rewrite file systems, e.g. apfs=ext4,hfs+=xfs\n"
	  "      --image-size SIZE the image target's size, as rig run --image-size\n"
	  "      --assume-rate R   bytes per second for the estimate (e.g. 150MB/s)\n"
	  "      --assume-ops N    file operations (create, rename, unlink) per second on\n"
	  "                        the target (default 10000, flash's; a hard disk: its seeks)\n"
	  "      --assume-walk FS=N,...  entries a cold walk stats per second on file\n"
	  "                        system FS (defaults measured: docs/plan-language.md)\n"
	  "      --from RUN        correct the estimate by what RUN (an earlier, shorter\n"
	  "                        run on the same disk) took: per module and file system,\n"
	  "                        its cells' time over this estimate of them; provisioning\n"
	  "                        as measured there\n"
	  "      --var NAME=VALUE  the value of $NAME (as rig run; repeatable)\n"
	  "      --full            one line per cell instead of per phase\n" },
	{ "validate", cmd_validate, "check plans and report every error",
	  "usage: rig validate [options] PLAN...\n"
	  "\n"
	  "Checks each plan against the plan language and prints every error as\n"
	  "file:line:column. Without --platform a plan is checked for the platform its\n"
	  "file systems belong to (apfs/hfs+/exfat/fat32: macos; ext4/xfs/btrfs: linux).\n"
	  "\n"
	  "      --platform NAME   check the file systems against linux or macos\n"
	  "      --fs-map MAP      rewrite file systems first, e.g. apfs=ext4,hfs+=xfs\n"
	  "      --image-size SIZE check the fit against this image size\n"
	  "      --var NAME=VALUE  the value of $NAME (as rig run; repeatable)\n"
	  "\n"
	  "Also warns where a plan's data cannot fit its target, as rig plan does (a\n"
	  "warning does not make a plan invalid; rig run refuses it).\n"
	  "Exit status: 0 all valid, 2 any invalid.\n" },
	{ "report", cmd_report, "write a run's reports again from its results store",
	  "usage: rig report RUN\n"
	  "       rig report --db URL [-o DIR] [HOST/]RUN\n"
	  "\n"
	  "Reads RUN/results.db and writes results.csv, files.csv, summary.csv,\n"
	  "findings.csv, and\n"
	  "report.html with figures/ and results.json as the plan's report.formats ask.\n"
	  "Reports are functions of the store alone; measured data is never changed.\n"
	  "\n"
	  "      --db URL       read the run from the shared PostgreSQL store at URL (see\n"
	  "                     rig help push) instead of a folder: RUN is the run's id,\n"
	  "                     HOST/RUN when runs of several hosts share it; the run\n"
	  "                     folder DIR gets its results.db and the same reports\n"
	  "  -o, --output DIR   with --db: the folder (new or empty; default: RUN)\n" },
	{ "compare", cmd_compare, "compare runs side by side, or file systems within runs",
	  "usage: rig compare [--db URL] [-o DIR] RUN_A RUN_B...\n"
	  "       rig compare --within [--against FS] [--db URL] [-o DIR] RUN...\n"
	  "\n"
	  "Joins runs on (step, volume or file system, metric), compares each with the\n"
	  "first (percent difference, 95% interval, Welch p), warns when plans, hosts or\n"
	  "disks differ, and writes DIR/compare.html and DIR/compare.csv. Without -o,\n"
	  "DIR is a new folder compare-FIRST-N in the current directory (FIRST: the\n"
	  "first run's id, N: 1, 2, ... the first free one). Quantities the plan sets\n"
	  "(bytes written, files created) are left out of the statistics.\n"
	  "\n"
	  "With --within, compares inside each run instead: every volume or file system\n"
	  "against the run's reference on the same disk, paired in each layout, and\n"
	  "pooled over the layouts only when every cell of the run completed; one row\n"
	  "per run (its disk) in DIR/compare.html and DIR/compare-within.csv.\n"
	  "\n"
	  "  -o, --output DIR   where the files go (default: the current directory)\n"
	  "      --within       file systems within each run, tabulated across runs\n"
	  "      --against FS   with --within: the reference, a volume name or else a\n"
	  "                     file system, case-insensitive (default: each run's\n"
	  "                     report.baseline)\n"
	  "      --db URL       the runs are in the shared PostgreSQL store at URL (see\n"
	  "                     rig help push): each RUN is a run's id, or HOST/RUN when\n"
	  "                     runs of several hosts share it; the pages are those of\n"
	  "                     the run folders, naming each run as given\n" },
	{ "push", cmd_push, "load a run into the shared PostgreSQL results store",
	  "usage: rig push [--host NAME] RUN URL\n"
	  "\n"
	  "Loads the run in folder RUN (its results.db: plan, options, host and volume\n"
	  "facts, cells, samples, file samples, notes, commands, events, resumes, journal,\n"
	  "time accounting and estimates) and its findings into the PostgreSQL database\n"
	  "URL (postgresql://[USER@]HOST[:PORT]/DATABASE, or libpq's key=value pairs),\n"
	  "in schema rig, which it creates or migrates first (docs/results-store.md).\n"
	  "A run is stored once under HOST/RUN (its host name and id): pushing it again\n"
	  "sends nothing, and a run that went on since (resumed) replaces its copy. One\n"
	  "transaction: a failure or a kill leaves the database as it was. rig report\n"
	  "--db and rig compare --db read the runs back.\n"
	  "\n"
	  "      --host NAME   the host name to store the run under (default: the one the\n"
	  "                    run recorded), e.g. the inventory's name of a fleet's rig\n"
	  "\n"
	  "The password comes from ~/.pgpass or PGPASSWORD (or PGSERVICE, PGPASSFILE:\n"
	  "libpq's environment), never from URL: a URL holding one is refused.\n"
	  "Nothing else in rig connects to a database.\n"
	  "Exit status: 0 stored or unchanged, 1 failed, 2 bad usage.\n" },
	{ "devices", cmd_devices, "list disks and whether rig may erase them",
	  "usage: rig devices [--platform NAME]\n"
	  "\n"
	  "Lists this machine's disks (Linux: from /sys/block; macOS: from diskutil list\n"
	  "and info -plist) with size, rotational flag or solid state, model (macOS: media\n"
	  "name), serial and what is mounted from them, which rig run is using one, and\n"
	  "says whether rig would erase each as a disk target, or which safety rule\n"
	  "refuses it. Changes nothing.\n"
	  "\n"
	  "      --platform NAME   linux or macos (default: this machine's); macos uses the\n"
	  "                        diskutil first on PATH (on Linux: build/tools/macos)\n" },
	{ "help", cmd_help, "show help on a command, a module or a topic",
	  "usage: rig help [COMMAND | MODULE | TOPIC]\n" },
	{ "version", cmd_version, "print rig's version", "usage: rig --version\n" },
	{ NULL, NULL, NULL, NULL },
};

const struct rig_cmd *cmd_find(const char *name)
{
	for (const struct rig_cmd *c = cmd_table; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int cmd_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "rig %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	const struct rig_cmd *c = cmd_find(name);
	if (c)
		fprintf(stderr, "\n%s", c->usage);
	return EXIT_USAGE;
}

int cmd_parse_seed(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > 0x7fffffffffffffffull)
		return -1;
	*out = v;
	return 0;
}

int cmd_parse_image_size(const char *cmd, const char *arg, uint64_t *out)
{
	const char *why = NULL;
	if (units_parse_size(arg, out, &why) < 0 || *out < (1u << 20)) {
		struct strbuf hint = STRBUF_INIT;
		units_suggest(&hint, arg, UNITS_SIZE);
		int rc = cmd_usage_error(cmd, "--image-size takes a size of at least 1M (e.g. 512M), "
					 "not '%s'%s", arg, hint.buf);
		sb_release(&hint);
		return rc;
	}
	return 0;
}

int cmd_parse_rate(const char *cmd, const char *arg, double *out)
{
	const char *why = NULL;
	size_t n = strlen(arg);
	uint64_t v = 0;
	if (n > 2 && !strcmp(arg + n - 2, "/s")) {
		char *size = xstrndup(arg, n - 2);
		int rc = units_parse_size(size, &v, &why);
		free(size);
		if (rc == 0 && v > 0) {
			*out = (double)v;
			return 0;
		}
	}
	return cmd_usage_error(cmd, "--assume-rate takes a size per second, e.g. 150MB/s or "
			       "1GiB/s, not '%s'", arg);
}

int cmd_parse_ops(const char *cmd, const char *arg, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(arg, &end);
	if (end && !strcmp(end, "/s"))
		end += 2;
	if (end != arg && end && !*end && !errno && v > 0 && v < 1e12) {
		*out = v;
		return 0;
	}
	return cmd_usage_error(cmd, "--assume-ops takes file operations per second, e.g. 150 "
			       "for a hard disk, not '%s'", arg);
}

int cmd_parse_allow(const char *cmd, const char *arg, unsigned *allow)
{
	struct strbuf e = STRBUF_INIT;
	int rc = 0;
	if (prov_safety_parse_allow(arg, allow, &e) < 0)
		rc = cmd_usage_error(cmd, "%s", e.buf);
	sb_release(&e);
	return rc;
}

int cmd_parse_platform(const char *cmd, const char *s, const struct plan_platform **out)
{
	*out = plan_platform_find(s);
	if (*out)
		return 0;
	struct strbuf names = STRBUF_INIT;
	plan_platform_names(&names);
	int rc = cmd_usage_error(cmd, "unknown platform '%s' (%s)", s, names.buf);
	sb_release(&names);
	return rc;
}

int cmd_parse_var(const char *cmd, const char *arg, const char **vars, size_t *n)
{
	struct strbuf e = STRBUF_INIT;
	size_t len;
	int rc = 0;
	if (plan_var_split(arg, &len, &e) < 0)
		rc = cmd_usage_error(cmd, "%s", e.buf);
	for (size_t i = 0; !rc && i < *n; i++)
		if (!strncmp(vars[i], arg, len + 1))
			rc = cmd_usage_error(cmd, "--var %.*s is given twice ('%s', then '%s')", (int)len,
					     arg, vars[i], arg);
	if (!rc && *n == CMD_MAX_VARS)
		rc = cmd_usage_error(cmd, "more than %d --var options", CMD_MAX_VARS);
	if (!rc)
		vars[(*n)++] = arg;
	sb_release(&e);
	return rc;
}

struct plan *cmd_load_plan(const char *path, const struct plan_options *o, int *nerrors)
{
	struct diag d;
	diag_init(&d, path, NULL);
	struct plan *p = plan_parse_file(path, o, &d);
	diag_print(&d, stderr);
	*nerrors = (int)d.nerrors;
	if (!p && !d.nerrors) {
		fprintf(stderr, "%s: cannot read the plan\n", path);
		*nerrors = 1;
	}
	diag_release(&d);
	if (*nerrors) {
		plan_free(p);
		return NULL;
	}
	return p;
}
