/*
 * Fake diskutil, hdiutil, purge, mdutil and tmutil, so that rig's macOS
 * backend runs on Linux in tests: `rig devices/plan/run --platform macos`
 * with the folder of their links first on PATH. Not a simulator of macOS:
 * it keeps a small state of fake disks and prints what the real tools
 * print for them, in the shapes of the recorded outputs in
 * tests/fixtures/macos/ (same keys, same nesting, tab indents).
 *
 * One program (the Makefile builds build/tools/fake-macos, and the links
 * diskutil, hdiutil, mdutil, purge and tmutil to it in build/tools/macos/;
 * the tests find that folder in $RIG_FAKE_MACOS_DIR). It is the tool its
 * name says, or, called as fake-macos, the tool its first argument names:
 * `fake-macos diskutil list -plist`, `fake-macos ctl boot`. It was a bash
 * script that forked sed, awk and grep for every lookup; under the
 * sanitized suites `rig devices` took 16 s.
 *
 *   RIG_FAKE_MACOS            the state folder (required): disks/, parts/,
 *                             Volumes/ (mount points: links into data/, where
 *                             each volume's files are), calls.log
 *                             (every call, one line each), faults, replay
 *   RIG_FAKE_MACOS_FIXTURES   where `replay` finds its files (optional)
 *
 * The state, files that tests read and write themselves:
 *   disks/ID      key=value lines: kind=physical|image|container, size, media,
 *                 internal, solid, bus, virtual, image, store, parent, minpref
 *   parts/ID      a whole disk's partitions, one line each in disk order:
 *                 id|content|fs|name|offset|size|volume|mount (volume: the
 *                 container's CONTAINERs1 for APFS, else the partition)
 *   next          the next disk number (2 when missing)
 *   data/VOLUME   a volume's files; Volumes/NAME (or "NAME 1", ...) a link to
 *                 it while it is mounted, so they survive an unmount and a mount
 *   personality/VOLUME, defrag/VOLUME, mdutil/VOLUME, snaps/VOLUME
 *                 the case-sensitive format it was made with, its defragment
 *                 setting, its indexing, its snapshots' names
 *   calls.log     every call but ctl: the tool and its arguments, an argument
 *                 in single quotes unless it is only [A-Za-z0-9_./:=%+,-]
 *
 * replay: lines "ARGV<TAB>FILE<TAB>STATUS"; a call whose argument vector
 * (as calls.log writes it) equals ARGV prints FILE and exits with STATUS,
 * before any state is looked at. This is how real captures are served.
 *
 * Faults (the file `faults`, lines "NAME COUNT [ARG]", COUNT calls each):
 *   partitionDisk-69888 N     partitionDisk fails: Error: -69888: Couldn't unmount disk
 *   detach-busy N             hdiutil detach (without -force): Resource busy, status 16
 *   info-error N DISK         diskutil info -plist DISK: the Error dict, status 1
 *   no-apfs N                 diskutil apfs list fails as on a macOS before 10.13 (no
 *                             apfs verb; the fake's wording, not a recording), status 1
 *   resizeContainer-69606 N   apfs resizeContainer fails as in the recorded tail
 *                             (tests/fixtures/macos/diskutil-apfs-resizeContainer-
 *                             error-69606-tail.txt), nothing changed
 *   resizeContainer-69521 N   apfs resizeContainer fails: Error: -69521 (the size is
 *                             below the minimum; the fake's wording, not a recording)
 *   tmutil-excluded N         tmutil isexcluded says [Excluded], and tmutil
 *                             localsnapshot MOUNT says it created one but puts none
 *                             on the volume (a volume Time Machine excludes)
 *   tmutil-noshot N           bare tmutil localsnapshot says it created one but
 *                             puts none anywhere (Time Machine not set up)
 *   snapshot-appears N [NAME] before listSnapshots lists volume NAME (or any), an
 *                             hourly Time Machine snapshot appears on it
 *                             (com.apple.TimeMachine.2020-01-01-000000.local)
 *   snapshot-thinned N [NAME] before listSnapshots lists volume NAME with two or
 *                             more snapshots, its oldest goes (Time Machine thinning)
 *
 * apfs resizeContainer STORE limits -plist: CurrentSize, MaximumSize (up to the
 * next partition or the end), MinimumSizePreferred (the container's `minpref`,
 * default 1 GiB; `ctl minpref`), MinimumSizeNoGuard (90% of it), Type. A resize
 * (apfs resizeContainer STORE SIZE [triplets], resizeVolume PART SIZE [triplets])
 * below MinimumSizePreferred fails with -69521 as well. It changes the size of
 * the partition in place (the volume keeps its files and stays mounted) and
 * makes the triplets' partitions after it, as partitionDisk does.
 *
 * Volume conditions and snapshots (SYNTHESIZED: no real capture of these
 * outputs was found; the shapes follow public scripts, see
 * tests/fixtures/macos/SOURCES.md): `mdutil -i on|off MOUNT`, `diskutil apfs
 * defragment MOUNT enable|disable` (APFS volumes only), `tmutil localsnapshot
 * [MOUNT]` ("Created local snapshot with date: D"; the snapshot
 * com.apple.TimeMachine.D.local goes on that APFS volume, or bare on every
 * mounted APFS volume not excluded), `tmutil isexcluded MOUNT` ("[Included]
 * MOUNT" or "[Excluded] ...", the shape apple.stackexchange.com/q/387003
 * shows), `tmutil addexclusion -v` and `removeexclusion -v MOUNT` (the file
 * tm-excluded), `diskutil apfs
 * listSnapshots -plist MOUNT` and `diskutil apfs deleteSnapshot MOUNT -name NAME`.
 *
 * Set up with `fake-macos ctl ...`:
 *   ctl boot                              disk0 (internal SSD) with container disk1, / on disk1s1
 *   ctl add-disk ID BYTES MEDIA [internal|external] [solid|rotational|unknown] [BUS] [virtual]
 *   ctl fault NAME COUNT [ARG]
 *   ctl partition ID FMT NAME [SIZE] ...  partitionDisk ID GPT ... (a disk as found; the last
 *                                         SIZE may be left out: it runs to the end)
 *   ctl minpref CONTAINER BYTES           the container's MinimumSizePreferred
 * Sizes follow diskutil: a GPT disk gets a 209715200-byte EFI partition at
 * 20480, partitions start on 1 MiB boundaries, the last one is stretched to
 * the end unless a "Free Space" triplet follows it.
 *
 * Files: main.c (this: the call, its log, replay), state.c (the state
 * folder), plist.c (diskutil list, info, apfs list), layout.c
 * (partitionDisk, resizes), volumes.c (mounts, conditions, snapshots,
 * tmutil, mdutil), diskutil.c (its verbs), hdiutil.c, ctl.c. Standalone
 * but for rig's strbuf, xalloc and files (libc only), and it starts no
 * other program: a call is one process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "lib/files.h"

static int fake_purge(struct fake *fk, int argc, char **argv)
{
	return 0;
}

static const struct tool {
	const char *name;
	fake_verb *run;
} tools[] = {
	{ "diskutil", fake_diskutil }, { "hdiutil", fake_hdiutil }, { "mdutil", fake_mdutil },
	{ "purge", fake_purge },       { "tmutil", fake_tmutil },
};

static const struct tool *tool_named(const char *name)
{
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	}
	return NULL;
}

/* An argument as calls.log writes it. */
static void add_arg(struct strbuf *sb, const char *a)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_./:=%+,-";
	if (*a && a[strspn(a, plain)] == '\0')
		sb_adds(sb, a);
	else
		sb_addf(sb, "'%s'", a);
}

/* Split a replay line at runs of tabs, as bash's `IFS=$'\t' read -r want
 * file status` does: the last field is the rest, less its trailing tabs. */
static void replay_fields(char *line, char *f[3])
{
	for (int i = 0; i < 3; i++) {
		line += strspn(line, "\t");
		f[i] = line;
		if (i < 2) {
			line += strcspn(line, "\t");
			if (*line)
				*line++ = '\0';
		}
	}
	size_t n = strlen(f[2]);
	while (n && f[2][n - 1] == '\t')
		f[2][--n] = '\0';
}

/* The entry of `replay` for this call: prints its file and returns its
 * status, or -1 when there is none. */
static int replay(struct fake *fk, const char *call)
{
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	int rc = -1;
	if (!fake_is_file(fake_path(fk, &p, "replay")) || files_read(p.buf, &text) < 0) {
		sb_release(&p);
		return -1;
	}
	/* whole lines only: bash's read leaves out a last line without its newline */
	for (char *at = text.buf, *nl; rc < 0 && (nl = strchr(at, '\n')); at = nl + 1) {
		char *f[3];
		*nl = '\0';
		replay_fields(at, f);
		if (strcmp(f[0], call))
			continue;
		const char *dir = getenv("RIG_FAKE_MACOS_FIXTURES");
		struct strbuf out = STRBUF_INIT;
		sb_reset(&p);
		sb_addf(&p, "%s/%s", dir && *dir ? dir : ".", f[1]);
		int e = files_read(p.buf, &out);
		fwrite(out.buf, 1, out.len, stdout);
		if (e < 0)
			fake_err("cat: %s: %s\n", p.buf, strerror(-e));
		char *end;
		long st = strtol(f[2], &end, 10);
		if (!*f[2] || *end) {
			fake_err("fake-macos: exit: %s: numeric argument required\n", f[2]);
			st = 2;
		}
		rc = (int)(st & 255);
		sb_release(&out);
	}
	sb_release(&p);
	sb_release(&text);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("RIG_FAKE_MACOS");
	if (!dir || !*dir) {
		fprintf(stderr, "fake-macos: RIG_FAKE_MACOS is not set (the fake's state folder)\n");
		return 70;
	}
	struct fake fk = { .dir = dir };
	fake_mkdir(&fk, "disks");
	fake_mkdir(&fk, "parts");
	fake_mkdir(&fk, "Volumes");

	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	const char *name = base;
	int first = 1; /* argv[first] is the tool's first argument */
	if (!tool_named(base)) {
		if (argc < 2) {
			fprintf(stderr, "usage: fake-macos ctl|diskutil|hdiutil|mdutil|purge|tmutil "
					"ARGS...\n");
			return 70;
		}
		name = argv[1];
		first = 2;
	}
	int rc;
	if (!strcmp(name, "ctl")) {
		rc = fake_ctl(&fk, argc - first, argv + first);
		fflush(stdout);
		return rc;
	}

	struct strbuf call = STRBUF_INIT, p = STRBUF_INIT;
	sb_adds(&call, name);
	for (int i = first; i < argc; i++) {
		sb_addch(&call, ' ');
		add_arg(&call, argv[i]);
	}
	sb_addch(&call, '\n');
	fake_append(fake_path(&fk, &p, "calls.log"), call.buf);
	sb_setlen(&call, call.len - 1);

	rc = replay(&fk, call.buf);
	if (rc < 0) {
		const struct tool *t = tool_named(name);
		if (t) {
			rc = t->run(&fk, argc - first, argv + first);
		} else {
			fprintf(stderr, "fake-macos: unknown tool %s\n", name);
			rc = 70;
		}
	}
	sb_release(&call);
	sb_release(&p);
	fflush(stdout);
	return rc;
}
