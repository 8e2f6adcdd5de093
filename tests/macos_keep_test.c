/*
 * Layouts that keep their first partition (`keep: true`, provision/macos/macos.c,
 * docs/plan-language.md) end to end on Linux, with the fake diskutil of
 * tests/tools/fake-macos/: the halves article's method (a whole APFS container shrunk to
 * half with HFS+ added after it, then the other way round with
 * resizeVolume), a disk as found, a disk that is not the state a keep
 * layout starts from (stopped before any command changes it), diskutil's
 * failures (-69606, below the minimum), and rig resume after a kill at
 * the resize.
 *
 * What survives is measured by the plan itself: an exec step, first in
 * every layout, prints `entries=N` (what is in its work folder: 0, so a
 * kept volume was cleared of this run's files) and `planted=1` when a file
 * it left at the volume's root (outside rig's work folder) in an earlier
 * layout is still there, else plants it.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "macos_fx.h"
#include "provision_util.h"
#include "test.h"

/* fake-macos ctl with a list of arguments */
static void kctl(struct fx *x, const char *const *a)
{
	const char *v[7] = { 0 };
	for (size_t i = 0; i < 7 && a[i]; i++)
		v[i] = a[i];
	ctl(x, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
}

static int run_text(struct fx *x, const char *text, char **out)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL_FATAL(test_write_file(x->plan, text), 0);
	const char *args[] = { "run", "--platform", "macos", "--yes", "-q", "-o", x->run, x->plan,
			       NULL };
	return pt_rig(x->bin, args, out);
}

#define PROBE                                                                            \
	"  - exec: { run: [sh, -c, \"echo entries=$(ls -A | wc -l); if [ -e ../planted ]; " \
	"then echo planted=1; else echo planted=0; echo by-the-test > ../planted; fi\"], "  \
	"parse: key=value }\n"

/* configs/apfs-grown-halves.yaml with the probe first and small files */
static char *grown_plan(void)
{
	static const char *const pairs[] = {
		"  - write: { files: 160, sizes: 2M..2G, block: 1M }\n",
		PROBE "  - write: { files: 2, sizes: 64K..128K, block: 64K }\n", NULL
	};
	return pt_config("apfs-grown-halves", pairs);
}

#define SAFETY_READS                                                             \
	"diskutil info -plist /\n"                                               \
	"diskutil info -plist disk0s2\n"                                         \
	"diskutil list -plist\n"                                                 \
	"diskutil apfs list -plist\n"                                            \
	"diskutil info -plist disk4\n"

/* The exec probe that opens both layouts' cells counted 0 entries in each
 * volume's work folder (superseded samples of a resumed run left out). */
static void work_folders_empty(const char *run, const char *what)
{
	char *probe = pt_run_query(run, "SELECT group_concat(CAST(value AS INTEGER), ',') "
					"FROM samples WHERE metric = 'entries' AND superseded = 0");
	pt_eq_text(what, probe, "0,0");
	free(probe);
}

static void test_grown(void)
{
	struct fx x;
	fx_init(&x, 0);
	char *text = grown_plan(), *out = NULL;
	int rc = run_text(&x, text, &out);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", out ? out : "");
	CU_ASSERT_EQUAL(rc, 0);
	char *c = calls_from(&x, NULL);
	pt_eq_text("grown: the commands", c,
		SAFETY_READS
		/* apfs-whole: from scratch */
		SAFETY_READS
		"diskutil info -plist disk4\n"
		"diskutil partitionDisk disk4 GPT APFS APFS 2000187031552B 'Free Space' gap R\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\n"
		"diskutil info -plist disk5s1\n"
		"diskutil unmountDisk disk4\n"
		/* apfs-grown: the state, the kept volume mounted, its limits, the
		 * identity again, the resize, the re-read and the volumes */
		SAFETY_READS
		"diskutil info -plist disk4\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk5s1\n"
		"diskutil mount disk5s1\n"
		"diskutil info -plist disk5s1\n"
		"diskutil apfs resizeContainer disk4s2 limits -plist\n"
		"diskutil info -plist disk4\n"
		"diskutil apfs resizeContainer disk4s2 1000092991488B JHFS+ HFS 1000094040064B "
		"'Free Space' gap R\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\n"
		"diskutil info -plist disk5s1\n"
		"diskutil info -plist disk4s3\n"
		"diskutil unmountDisk disk4\n"
		/* hfs-whole: from scratch */
		SAFETY_READS
		"diskutil info -plist disk4\n"
		"diskutil partitionDisk disk4 GPT JHFS+ HFS 2000187031552B 'Free Space' gap R\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\n"
		"diskutil unmountDisk disk4\n"
		/* hfs-grown: no limits for HFS+ (diskutil's error speaks) */
		SAFETY_READS
		"diskutil info -plist disk4\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\n"
		"diskutil mount disk4s2\n"
		"diskutil info -plist disk4s2\n"
		"diskutil info -plist disk4\n"
		"diskutil resizeVolume disk4s2 1000092991488B APFS APFS 1000094040064B "
		"'Free Space' gap R\n"
		"diskutil list -plist disk4\n"
		"diskutil apfs list -plist\n"
		"diskutil info -plist disk4s2\n"
		"diskutil info -plist disk4s3\n"
		"diskutil info -plist disk6s1\n"
		"diskutil unmountDisk disk4\n");
	char *v = pt_run_query(x.run, "SELECT group_concat(layout || ':' || name || ':' || position "
				      "|| ':' || offset_start || ':' || offset_end || ':' || device, ' ') "
				      "FROM (SELECT * FROM volumes ORDER BY id)");
	pt_eq_text("grown: the volume mapping", v,
		"apfs-whole:APFS:1:210763776:2000397795328:/dev/disk5s1 "
		"apfs-grown:APFS:1:210763776:1000303755264:/dev/disk5s1 "
		"apfs-grown:HFS:2:1000303755264:2000397795328:/dev/disk4s3 "
		"hfs-whole:HFS:1:210763776:2000397795328:/dev/disk4s2 "
		"hfs-grown:HFS:1:210763776:1000303755264:/dev/disk4s2 "
		"hfs-grown:APFS:2:1000303755264:2000397795328:/dev/disk6s1");
	/* the probe: each work folder empty at the layout's start; the file
	 * planted at the root survives in the kept volumes, and only there */
	char *probe = pt_run_query(x.run,
		"SELECT group_concat(x, ' ') FROM (SELECT c.layout || ':' || v.name || ':' || "
		"group_concat(s.metric || '=' || CAST(s.value AS INTEGER), ',') AS x FROM cells c "
		"JOIN volumes v ON v.id = c.volume_id JOIN samples s ON s.seq = c.seq WHERE "
		"c.module = 'exec' AND s.metric IN ('entries', 'planted') GROUP BY c.seq ORDER BY "
		"c.seq)");
	pt_eq_text("grown: what each layout's volumes held at its start", probe,
		"apfs-whole:APFS:entries=0,planted=0 "
		"apfs-grown:APFS:entries=0,planted=1 apfs-grown:HFS:entries=0,planted=0 "
		"hfs-whole:HFS:entries=0,planted=0 "
		"hfs-grown:HFS:entries=0,planted=1 hfs-grown:APFS:entries=0,planted=0");
	/* samples of every step on every layout's volumes */
	char *cells = pt_run_query(x.run, "SELECT group_concat(n, ',') FROM (SELECT c.layout || '/' "
					  "|| count(DISTINCT c.seq) || '/' || count(s.id) AS n FROM cells c "
					  "JOIN samples s ON s.seq = c.seq WHERE c.status = 'done' GROUP BY "
					  "c.layout ORDER BY min(c.seq))");
	CU_ASSERT_PTR_NOT_NULL(cells);
	char *done = pt_run_query(x.run, "SELECT count(*) || ' ' || sum(status = 'done') || ' ' || "
					 "(SELECT count(DISTINCT seq) FROM samples) FROM cells");
	pt_eq_text("grown: cells, done, with samples", done, "18 18 18");
	/* provenance: the kept volumes' facts and the command log */
	char *kept = pt_run_query(x.run, "SELECT group_concat(layout || ':' || name || ':' || "
					 "json_extract(facts_json, '$.kept') || ':' || "
					 "ifnull(json_extract(facts_json, '$.kept_from'), '-'), ' ') FROM "
					 "(SELECT * FROM volumes ORDER BY id)");
	pt_eq_text("grown: kept facts", kept,
		"apfs-whole:APFS:0:- apfs-grown:APFS:1:apfs-whole apfs-grown:HFS:0:- "
		"hfs-whole:HFS:0:- hfs-grown:HFS:1:hfs-whole hfs-grown:APFS:0:-");
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/commands.log", x.run);
	char *log = test_read_file(p.buf, NULL);
	pt_has("grown: commands.log", log, "# keep disk4s2 (apfs 'APFS', APFS container disk5) of "
					"layout apfs-whole: not a fresh file system; its data stays, "
					"and it is resized to 1000092991488B\n");
	pt_has("grown: commands.log", log, "# keep disk4s2 (hfs+ 'HFS') of layout hfs-whole: not a "
					"fresh file system");
	sb_reset(&p);
	sb_addf(&p, "# remove this run's work folder %s/Volumes/HFS/rig-run from the kept volume\n",
		x.state);
	pt_has("grown: commands.log", log, p.buf);
	/* the diskutil output, in commands.log as every command's */
	pt_has("grown: commands.log", log, "Shrinking APFS Physical Store disk4s2 from "
					"2,000,187,031,552 to 1,000,092,991,488 bytes\n");
	char *html = NULL;
	sb_reset(&p);
	sb_addf(&p, "%s/report.html", x.run);
	html = test_read_file(p.buf, NULL);
	pt_has("grown: report.html", html, "kept from apfs-whole");
	pt_mac_clean(x.state);
	free(html);
	free(log);
	sb_release(&p);
	free(kept);
	free(done);
	free(cells);
	free(probe);
	free(v);
	free(c);
	free(out);
	free(text);
	fx_done(&x);
}

static const char as_found_plan[] =
	"rig: 1\nname: as-found\nseed: 1\n"
	"target:\n  disk: { device: disk4, confirm: \"WDC WD20SPZX-22UA7T0\" }\n"
	"layouts:\n  - name: grown\n    partitions:\n"
	"      - { name: Data, fs: %s, size: 25%%, keep: true }\n"
	"      - { name: New, fs: %s, size: rest }\n"
	"cache: { flush: false }\nsteps:\n" PROBE
	"  - write: { files: 1, size: 64K, block: 64K }\n";

static char *as_found(const char *kept, const char *other)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, as_found_plan, kept, other);
	return sb_detach(&sb);
}

/* The first layout keeps what the disk holds: a user's file stays. */
static void test_as_found(void)
{
	static const struct {
		const char *fs, *fmt, *other, *vol, *resize;
	} cases[] = {
		{ "apfs", "APFS", "hfs+", "disk5s1",
		  "diskutil apfs resizeContainer disk4s2 500045971456B JHFS+ New "
		  "1500141060096B 'Free Space' gap R\n" },
		{ "hfs+", "JHFS+", "apfs", "disk4s2",
		  "diskutil resizeVolume disk4s2 500045971456B APFS New 1500141060096B "
		  "'Free Space' gap R\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx x;
		fx_init(&x, 0);
		const char *fmt[] = { "partition", "disk4", cases[i].fmt, "Data", NULL };
		kctl(&x, fmt);
		struct strbuf f = STRBUF_INIT;
		sb_addf(&f, "%s/data/%s/thesis.txt", x.state, cases[i].vol);
		CU_ASSERT_EQUAL(test_write_file(f.buf, "the user's own file\n"), 0);
		char *text = as_found(cases[i].fs, cases[i].other), *out = NULL;
		int rc = run_text(&x, text, &out);
		if (rc != 0)
			fprintf(stderr, "\n%s\n", out ? out : "");
		CU_ASSERT_EQUAL(rc, 0);
		char *c = calls_from(&x, NULL);
		pt_has(cases[i].fs, c, cases[i].resize);
		if (!strcmp(cases[i].fs, "apfs"))
			pt_has(cases[i].fs, c, "diskutil apfs resizeContainer disk4s2 limits -plist\n");
		pt_lacks(cases[i].fs, c, "partitionDisk");
		char *kept = test_read_file(f.buf, NULL);
		pt_eq_text("the user's file on the kept volume", kept, "the user's own file\n");
		char *from = pt_run_query(x.run, "SELECT json_extract(facts_json, '$.kept_from') FROM "
						 "volumes WHERE name = 'Data'");
		pt_eq_text("kept from", from, "the disk as found");
		work_folders_empty(x.run, "work folders empty at the start");
		pt_mac_clean(x.state);
		free(from);
		free(kept);
		free(c);
		free(out);
		free(text);
		sb_release(&f);
		fx_done(&x);
	}
}

/* Not the state a keep layout starts from: stopped before any change. */
static void test_mismatch(void)
{
	static const struct {
		const char *name, *setup[8], *found;
	} cases[] = {
		{ "two partitions", { "APFS", "Data", "1G", "JHFS+", "Other", NULL },
		  "Found: disk4s2 Apple_APFS, 1000000000 bytes, APFS container disk5 with 1 volume "
		  "'Data'; disk4s3 Apple_HFS, 1999187738624 bytes, volume 'Other'" },
		{ "another name", { "APFS", "Photos", NULL },
		  "rig expects one store and one volume 'Data'. Found: disk4s2 Apple_APFS, "
		  "2000188080128 bytes, APFS container disk5 with 1 volume 'Photos'" },
		{ "another file system", { "JHFS+", "Data", NULL },
		  "partition 1 of disk4 (disk4s2) is Apple_HFS; layout (the kept partition alone) "
		  "wants Apple_APFS (Data) there. Found: disk4s2 Apple_HFS, 2000188080128 bytes, "
		  "volume 'Data'" },
		{ "an empty disk", { NULL }, "it must hold exactly one partition besides EFI, Apple_APFS 'Data'. Found: disk4 holds "
		  "nothing after its map" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx x;
		fx_init(&x, 0);
		if (cases[i].setup[0]) {
			const char *args[12] = { "partition", "disk4" };
			for (size_t k = 0; cases[i].setup[k]; k++)
				args[2 + k] = cases[i].setup[k];
			kctl(&x, args);
		}
		char *text = as_found("apfs", "hfs+"), *out = NULL;
		int rc = run_text(&x, text, &out);
		if (rc != 1)
			fprintf(stderr, "\n%s: exit %d\n%s\n", cases[i].name, rc, out ? out : "");
		CU_ASSERT_EQUAL(rc, 1);
		pt_has(cases[i].name, out, "layout grown keeps partition Data (apfs) of the disk as "
					"found, but disk4 is not the state it starts from");
		pt_has(cases[i].name, out, cases[i].found);
		pt_has(cases[i].name, out, "Nothing was changed");
		char *c = calls_from(&x, NULL);
		pt_lacks(cases[i].name, c, "resize");
		pt_lacks(cases[i].name, c, "partitionDisk");
		pt_lacks(cases[i].name, c, "diskutil mount");
		free(c);
		free(out);
		free(text);
		fx_done(&x);
	}
}

/* diskutil fails, or rig refuses below MinimumSizePreferred. */
static void test_faults(void)
{
	static const struct {
		const char *name, *ctl[5], *want[3];
		int resized; /* the resize command ran */
	} cases[] = {
		{ "-69606", { "fault", "resizeContainer-69606", "1", NULL },
		  { "diskutil apfs resizeContainer disk4s2 500045971456B JHFS+ New 1500141060096B "
		    "'Free Space' gap R: error -69606: A problem occurred while resizing APFS "
		    "Container structures; ",
		    "failed with exit status 1:",
		    "disk4 now: disk4s2 Apple_APFS, 2000188080128 bytes, APFS container disk5 with 1 "
		    "volume 'Data'" }, 1 },
		{ "-69521", { "fault", "resizeContainer-69521", "1", NULL },
		  { "error -69521: The new size must be at least the minimum size of the APFS "
		    "Container", "disk4 now: disk4s2 Apple_APFS", NULL }, 1 },
		{ "below MinimumSizePreferred", { "minpref", "disk5", "600000000000", NULL },
		  { "refusing to shrink APFS store disk4s2 to 500045971456 bytes: diskutil apfs "
		    "resizeContainer disk4s2 limits -plist gives MinimumSizePreferred 600000000000 "
		    "bytes (CurrentSize 2000188080128); free space on the kept volume or give it a "
		    "larger size", NULL, NULL }, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx x;
		fx_init(&x, 0);
		const char *fmt[] = { "partition", "disk4", "APFS", "Data", NULL };
		kctl(&x, fmt);
		kctl(&x, cases[i].ctl);
		char *text = as_found("apfs", "hfs+"), *out = NULL;
		int rc = run_text(&x, text, &out);
		CU_ASSERT_EQUAL(rc, 1);
		for (size_t k = 0; k < 3 && cases[i].want[k]; k++)
			pt_has(cases[i].name, out, cases[i].want[k]);
		char *c = calls_from(&x, NULL);
		if (cases[i].resized)
			pt_has(cases[i].name, c, "diskutil apfs resizeContainer disk4s2 500045971456B");
		else
			pt_lacks(cases[i].name, c, "diskutil apfs resizeContainer disk4s2 500045971456B");
		pt_mac_clean(x.state);
		free(c);
		free(out);
		free(text);
		fx_done(&x);
	}
}

/* Killed at the resize, `rig resume` finishes: after it, the disk already
 * holds the layout (no second resize); before it, it is resized then. */
static void test_resume(void)
{
	static const struct {
		const char *fault;
		int resizes; /* resize commands in all */
	} cases[] = {
		{ "signal:SIGKILL:after-spawn:diskutil apfs resizeContainer:2", 1 },
		{ "signal:SIGKILL:before-spawn:diskutil apfs resizeContainer:2", 1 },
		{ "signal:SIGKILL:io:write:1", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx x;
		fx_init(&x, 0);
		const char *fmt[] = { "partition", "disk4", "APFS", "Data", NULL };
		kctl(&x, fmt);
		char *text = as_found("apfs", "hfs+"), *out = NULL;
		setenv("RIG_FAULT", cases[i].fault, 1);
		int rc = run_text(&x, text, &out);
		unsetenv("RIG_FAULT");
		CU_ASSERT_NOT_EQUAL(rc, 0);
		free(out);
		out = NULL;
		const char *args[] = { "resume", "-y", x.run, NULL };
		rc = pt_rig(x.bin, args, &out);
		if (rc != 0)
			fprintf(stderr, "\n%s: resume exit %d\n%s\n", cases[i].fault, rc, out ? out : "");
		CU_ASSERT_EQUAL(rc, 0);
		char *c = calls_from(&x, NULL);
		int n = 0;
		for (const char *p = c; p && (p = strstr(p, "resizeContainer disk4s2 5000")); p++)
			n++;
		if (n != cases[i].resizes)
			fprintf(stderr, "\n%s: %d resizes\n%s\n", cases[i].fault, n, c ? c : "");
		CU_ASSERT_EQUAL(n, cases[i].resizes);
		char *done = pt_run_query(x.run, "SELECT count(*) || ' ' || sum(status = 'done') FROM "
						 "cells");
		pt_eq_text(cases[i].fault, done, "4 4");
		work_folders_empty(x.run, "work folders empty at the start, also when resumed");
		pt_mac_clean(x.state);
		free(done);
		free(c);
		free(out);
		free(text);
		fx_done(&x);
	}
}

void register_macos_keep_tests(void)
{
	CU_pSuite s = test_suite_e2e("macos keep layouts (fake diskutil resizeContainer, resizeVolume)");
	test_add(s, "rig run: apfs-grown-halves, the halves article's method", test_grown);
	test_add(s, "rig run: the first layout keeps the disk as found", test_as_found);
	test_add(s, "rig run: not the state to keep: stopped before any change", test_mismatch);
	test_add(s, "rig run: -69606, -69521, below MinimumSizePreferred", test_faults);
	test_add(s, "rig resume: killed at the resize", test_resume);
}
