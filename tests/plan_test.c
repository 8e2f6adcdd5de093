/*
 * Tests of the plan parser and validator (plan/plan.c, plan_target.c,
 * plan_steps.c, plan_report.c), parameter binding (plan/params.c) and diagnostics
 * (lib/diag.c): a table of invalid plans, each with the exact position and
 * message of its first error; every shipped plan in configs/ validating
 * cleanly; parsed values; platform inference and --fs-map.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "modules/module.h"
#include "modules/tree.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "provision/driver.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

void register_plan_tests(void);

static struct plan *parse_opt(const char *text, const struct plan_options *o, struct diag *d)
{
	diag_init(d, "plan.yaml", NULL);
	return plan_parse_text("plan.yaml", text, strlen(text), o, d);
}

static struct plan *parse(const char *text, struct diag *d)
{
	return parse_opt(text, NULL, d);
}

/* The first error by position (as diag_print shows them). */
static const struct diag_item *first_error(const struct diag *d)
{
	const struct diag_item *best = NULL;
	for (size_t i = 0; i < d->n; i++) {
		const struct diag_item *it = &d->items[i];
		if (it->level != DIAG_ERROR)
			continue;
		if (!best || it->mark.line < best->mark.line ||
		    (it->mark.line == best->mark.line && it->mark.col < best->mark.col))
			best = it;
	}
	return best;
}

/* A step's parameter as written, by name. */
static const struct pval *pval_of(const struct plan_step *st, const char *name)
{
	const struct rig_param *rp = mod_param(st->module, name);
	return rp ? &st->params[rp - st->module->params] : NULL;
}

/* A bound field, found through the module's own table (no struct layout
 * assumed here). */
static const void *field(const void *args, const struct rig_module *m, const char *name)
{
	const struct rig_param *rp = mod_param(m, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rp);
	return (const char *)args + rp->offset;
}

static uint64_t u64_of(const void *args, const struct rig_module *m, const char *name)
{
	uint64_t v;
	memcpy(&v, field(args, m, name), sizeof(v));
	return v;
}

static void dump(const struct diag *d)
{
	diag_print(d, stdout);
}

/* --- invalid plans --- */

#define HDR "rig: 1\nname: t\n"
#define DIRS "target:\n  dirs: [/tmp/a, /tmp/b]\n"
#define STEPS "steps:\n  - write: {}\n"
#define IMG "target:\n  image: { path: /tmp/x.img, size: 1G }\n"
#define LAYOUT_OPEN "layouts:\n  - name: l\n    partitions:\n"
#define LAYOUT_EXT4 LAYOUT_OPEN "      - { name: A, fs: ext4, size: rest }\n"
#define LAYOUT_APFS LAYOUT_OPEN "      - { name: A, fs: apfs, size: rest }\n"
#define ONE_STEP(s) HDR DIRS "steps:\n  - " s "\n"
/* Steps 1 write, 2 a cycle of null and pause, 3 exec; then report.headline,
 * whose entries start at line 15. */
#define HSTEPS "steps:\n  - write: {}\n  - cycle:\n      times: 2\n      steps:\n" \
	"        - null: {}\n        - pause: { time: 1s }\n  - exec: { run: [\"true\"] }\n" \
	"report:\n  headline:\n"

struct bad_case {
	const char *name;
	const char *yaml;
	int line, col;
	const char *msg;   /* a substring of the first error's message */
	int nerrors;       /* expected number of errors; 0 = not checked */
};

static const struct bad_case bad_cases[] = {
	/* top level */
	{ "unsupported version", "rig: 2\nname: t\n" DIRS STEPS, 1, 6,
	  "unsupported plan-language version '2' (this rig supports version 1)", 1 },
	{ "missing rig", "name: t\n" DIRS STEPS, 1, 1, "missing key 'rig' in the plan", 1 },
	{ "bad plan name", "rig: 1\nname: My_Plan\n" DIRS STEPS, 2, 7, "invalid plan name 'My_Plan'", 1 },
	{ "plan name too long", "rig: 1\nname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n" DIRS STEPS,
	  2, 7, "invalid plan name", 1 },
	{ "unknown top-level key", HDR DIRS "stepz:\n  - write: {}\n" STEPS, 5, 1,
	  "unknown key 'stepz' in the plan (did you mean 'steps'?)", 1 },
	{ "repeat too large", HDR DIRS "repeat: 1000001\n" STEPS, 5, 9,
	  "'repeat' must be at most 1000000 (is 1000001)", 1 },
	{ "duplicate key", HDR "name: u\n" DIRS STEPS, 3, 1,
	  "duplicate key 'name' in the plan (first given at line 2)", 1 },
	{ "missing steps", HDR DIRS, 1, 1, "missing key 'steps' in the plan", 1 },
	{ "empty steps", HDR DIRS "steps: []\n", 5, 8, "'steps' is empty", 1 },
	{ "negative seed", HDR "seed: -4\n" DIRS STEPS, 3, 7,
	  "invalid number '-4' for 'seed': it cannot be negative", 1 },
	{ "seed is a mapping", HDR "seed: { a: 1 }\n" DIRS STEPS, 3, 7,
	  "expected a whole number for 'seed', not a mapping", 1 },
	{ "repeat 0", HDR DIRS "repeat: 0\n" STEPS, 5, 9, "'repeat' must be at least 1 (is 0)", 1 },
	{ "order typo", HDR DIRS "order: latn\n" STEPS, 5, 8,
	  "unknown value 'latn' for 'order' (expected one of alternate, counterbalance, latin, "
	  "random, sequential; did you mean 'latin'?)", 1 },
	{ "reprovision repeat on dirs", HDR DIRS "reprovision: repeat\n" STEPS, 5, 14,
	  "'reprovision: repeat' needs an image or disk target", 1 },
	{ "provision each on dirs", HDR DIRS "repeat: { times: 2, provision: each }\n" STEPS, 5, 32,
	  "'provision: each' needs an image or disk target", 1 },
	{ "repeat without times", HDR DIRS "repeat: { provision: once }\n" STEPS, 5, 9,
	  "missing key 'times' in repeat", 1 },
	{ "provision typo", HDR DIRS "repeat: { times: 2, provision: every }\n" STEPS, 5, 32,
	  "unknown value 'every' for 'provision' (expected one of once, each", 1 },
	{ "repeat key typo", HDR DIRS "repeat: { times: 2, provison: once }\n" STEPS, 5, 21,
	  "unknown key 'provison' in repeat", 1 },
	{ "provision contradicted", HDR IMG "layouts:\n  - name: l\n    partitions:\n"
	  "      - { name: a, fs: ext4, size: rest }\n"
	  "repeat: { times: 2, provision: each }\nreprovision: layout\n" STEPS, 10, 14,
	  "'reprovision: layout' contradicts 'provision: each' in repeat (line 9)", 1 },
	{ "remount on dirs", HDR DIRS "cache: { remount: true }\n" STEPS, 5, 19,
	  "'remount' needs an image or disk target", 1 },
	{ "cache yes", HDR DIRS "cache: { direct: yes }\n" STEPS, 5, 18,
	  "invalid value 'yes' for 'direct': expected true or false", 1 },
	{ "cache typo", HDR DIRS "cache: { flsh: true }\n" STEPS, 5, 10,
	  "unknown key 'flsh' in cache (did you mean 'flush'?)", 1 },
	{ "empty document", "", 1, 1, "the plan is empty", 1 },
	{ "plan is a list", "- a\n- b\n", 1, 1, "a plan is a mapping of keys", 1 },
	{ "yaml syntax error", "rig: 1\nname: t\n  bad: indent\n", 3, 6,
	  "invalid YAML: mapping values are not allowed in this context", 1 },
	{ "second document", HDR DIRS STEPS "---\nrig: 1\n", 8, 1, "a plan is one YAML document", 1 },

	/* target */
	{ "two target kinds", HDR "target:\n  dirs: [/tmp/a]\n  image: { path: /tmp/x, size: 1G }\n" STEPS,
	  5, 3, "target has both 'dirs' and 'image'", 1 },
	{ "empty target", HDR "target: {}\n" STEPS, 3, 1,
	  "target needs one of 'dirs', 'image' or 'disk'", 1 },
	{ "target is a scalar", HDR "target: /tmp/a\n" STEPS, 3, 9,
	  "expected a mapping for 'target' (dirs, image or disk), not a single value", 1 },
	{ "duplicate volume names", HDR "target:\n  dirs: [/x/a, /y/a]\n" STEPS, 4, 16,
	  "duplicate volume name 'a' (also at line 4)", 1 },
	{ "directory twice", HDR "target:\n  dirs: [/x/a, /x/a]\n" STEPS, 4, 16,
	  "directory '/x/a' appears twice in 'dirs'", 1 },
	{ "names of the wrong length", HDR "target:\n  dirs: [/x/a, /y/b]\n  names: [one]\n" STEPS,
	  5, 10, "'names' has 1 entry but 'dirs' has 2", 1 },
	{ "directory without a usable name", HDR "target:\n  dirs: [\"/x/my dir\"]\n" STEPS, 4, 10,
	  "cannot name a volume after directory '/x/my dir'", 1 },
	{ "names with an image", HDR "target:\n  image: { path: /x.img, size: 1G }\n  names: [a]\n"
	  LAYOUT_EXT4 STEPS, 5, 3, "'names' applies only to a dirs target", 1 },
	{ "layouts with dirs", HDR DIRS LAYOUT_EXT4 STEPS, 5, 1,
	  "'layouts' apply only to image and disk targets", 1 },
	{ "image without layouts", HDR IMG STEPS, 3, 1, "missing key 'layouts' in the plan", 1 },
	{ "bad image size", HDR "target:\n  image: { path: /x.img, size: 20X }\n" LAYOUT_EXT4 STEPS,
	  4, 32, "invalid size '20X' for the image: unknown unit", 1 },
	{ "image too small", HDR "target:\n  image: { path: /x.img, size: 1K }\n" LAYOUT_EXT4 STEPS,
	  4, 32, "image size '1K' is too small", 1 },
	{ "image without path", HDR "target:\n  image: { size: 1G }\n" LAYOUT_EXT4 STEPS, 4, 10,
	  "missing key 'path' in image", 1 },
	{ "device path on macos", HDR "target:\n  disk: { device: /dev/sdb, confirm: X }\n"
	  LAYOUT_APFS STEPS, 4, 19, "invalid device '/dev/sdb' for macos", 1 },
	{ "partition as device", HDR "target:\n  disk: { device: disk4s2, confirm: X }\n"
	  LAYOUT_APFS STEPS, 4, 19, "device 'disk4s2' is not a whole disk", 1 },
	{ "macos identifier on linux", HDR "target:\n  disk: { device: disk4, confirm: X }\n"
	  LAYOUT_EXT4 STEPS, 4, 19, "invalid device 'disk4' for linux", 1 },
	{ "disk without confirm", HDR "target:\n  disk: { device: disk4 }\n" LAYOUT_APFS STEPS, 4, 9,
	  "missing key 'confirm' in disk", 1 },

	/* layouts */
	{ "two rest partitions", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: rest }\n"
	  "      - { name: B, fs: ext4, size: rest }\n" STEPS, 9, 36,
	  "only one partition per layout may have size rest (layout 'l' has one at line 8)", 1 },
	{ "percentages over 100", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: 60% }\n"
	  "      - { name: B, fs: ext4, size: 50% }\n" STEPS, 9, 36,
	  "partition sizes in layout 'l' add up to 110% (more than 100%)", 1 },
	{ "rest gets nothing", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: 100% }\n"
	  "      - { name: B, fs: ext4, size: rest }\n" STEPS, 9, 36,
	  "partition of size rest in layout 'l' gets nothing", 1 },
	{ "zero percent", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: 0% }\n" STEPS, 8, 36,
	  "a percentage must be more than 0%", 1 },
	{ "partition size words", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: lots }\n" STEPS,
	  8, 36, "invalid size 'lots' for partition 'A'", 1 },
	{ "partitions larger than the image", HDR IMG LAYOUT_OPEN
	  "      - { name: A, fs: ext4, size: 2G }\n" STEPS, 6, 5,
	  "the partitions of layout 'l' need more than the image's 1G", 1 },
	{ "count without {n}", HDR IMG LAYOUT_OPEN "      - { count: 3, name: C, fs: ext4, size: 10% }\n"
	  STEPS, 8, 27, "partition name 'C' needs '{n}' with count 3", 1 },
	{ "count with rest", HDR IMG LAYOUT_OPEN "      - { count: 2, name: \"C{n}\", fs: ext4, size: rest }\n"
	  STEPS, 8, 51, "count 2 with size rest would make 2 rest partitions", 1 },
	{ "unknown file system", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ntfs, size: rest }\n" STEPS,
	  8, 24, "unknown file system 'ntfs'", 1 },
	{ "file system in capitals", HDR IMG LAYOUT_OPEN "      - { name: A, fs: XFS, size: rest }\n" STEPS,
	  8, 24, "did you mean 'xfs'?", 1 },
	{ "mixed platforms", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: 50% }\n"
	  "      - { name: B, fs: apfs, size: rest }\n" STEPS, 9, 24,
	  "the plan mixes macos file systems (apfs) and linux file systems (ext4)", 1 },
	{ "duplicate partition names", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: 50% }\n"
	  "      - { name: A, fs: ext4, size: rest }\n" STEPS, 9, 17,
	  "duplicate partition name 'A' in layout 'l' (also at line 8)", 1 },
	{ "duplicate layout names", HDR IMG LAYOUT_EXT4 "  - name: l\n    partitions:\n"
	  "      - { name: A, fs: ext4, size: rest }\n" STEPS, 9, 11,
	  "duplicate layout name 'l' (also at line 6)", 1 },
	/* text that goes into commands and their log */
	{ "image path with a newline", HDR "target:\n  image: { path: \"/tmp/a\\nb.img\", size: 1G }\n"
	  LAYOUT_EXT4 STEPS, 4, 18,
	  "the image path contains a control character (byte 0x0a at offset 6)", 1 },
	{ "image path names a folder", HDR "target:\n  image: { path: /tmp/.., size: 1G }\n"
	  LAYOUT_EXT4 STEPS, 4, 18, "the image path '/tmp/..' names a folder", 1 },
	{ "image path ends in a slash", HDR "target:\n  image: { path: /var/tmp/, size: 1G }\n"
	  LAYOUT_EXT4 STEPS, 4, 18, "give a file, such as /var/tmp/rig.img", 1 },
	{ "device with a blank", HDR "target:\n  disk: { device: \"/dev/sd b\", confirm: X }\n"
	  LAYOUT_EXT4 STEPS, 4, 19, "invalid device '/dev/sd b' for linux: character ' ' at offset 7", 1 },
	{ "device with a quote", HDR "target:\n  disk: { device: \"/dev/sdb'\", confirm: X }\n"
	  LAYOUT_EXT4 STEPS, 4, 19, "character ''' at offset 8", 1 },
	{ "device with a newline", HDR "target:\n  disk: { device: \"/dev/sdb\\n\", confirm: X }\n"
	  LAYOUT_EXT4 STEPS, 4, 19, "the device contains a control character (byte 0x0a", 1 },
	{ "device with a NUL", HDR "target:\n  disk: { device: \"/dev/sdb\\0/dev/sda\", confirm: X }\n"
	  LAYOUT_EXT4 STEPS, 4, 19, "the device contains a control character (byte 0x00 at offset 8)", 1 },
	{ "confirm with a tab", HDR "target:\n  disk: { device: /dev/sdb, confirm: \"X\\ty\" }\n"
	  LAYOUT_EXT4 STEPS, 4, 38, "'confirm' contains a control character (byte 0x09", 1 },
	{ "directory with a bell", HDR "target:\n  dirs: [\"/tmp/a\\u0007b\"]\n" STEPS, 4, 10,
	  "the directory path contains a control character (byte 0x07 at offset 6)", 1 },
	{ "bad partition name", HDR IMG LAYOUT_OPEN "      - { name: \"a b\", fs: ext4, size: rest }\n" STEPS,
	  8, 17, "invalid partition name 'a b'", 1 },
	{ "xfs label too long", HDR IMG LAYOUT_OPEN "      - { name: VeryLongName1, fs: xfs, size: rest }\n"
	  STEPS, 8, 9, "partition name 'VeryLongName1' is too long for an xfs label (at most 12", 1 },
	{ "fat32 label characters", HDR "target:\n  disk: { device: disk2, confirm: X }\n" LAYOUT_OPEN
	  "      - { name: my.stick, fs: fat32, size: rest }\n" STEPS, 8, 9,
	  "partition name 'my.stick' cannot be a fat32 label", 1 },
	{ "partition scheme", HDR IMG "layouts:\n  - name: l\n    scheme: mbr\n    partitions:\n"
	  "      - { name: A, fs: ext4, size: rest }\n" STEPS, 7, 13,
	  "unsupported partition scheme 'mbr' (plan language v1 supports gpt)", 1 },
	{ "layout without partitions", HDR IMG "layouts:\n  - name: l\n    partitions: []\n" STEPS, 7, 17,
	  "layout 'l' has no partitions", 1 },

	/* steps and parameters */
	{ "unknown module", ONE_STEP("randreed: {}"), 6, 5,
	  "unknown module 'randreed' (did you mean 'randread'?)", 1 },
	{ "unknown parameter", ONE_STEP("randread: { qdepth: 4 }"), 6, 17,
	  "unknown key 'qdepth' in step 'randread' (did you mean 'qd'?)", 1 },
	{ "parameter is a mapping", ONE_STEP("randread: { block: { a: 1 } }"), 6, 24,
	  "expected a size (e.g. 4K, 1MB) for 'block' in step 'randread', not a mapping", 1 },
	{ "size: lower-case unit", ONE_STEP("randread: { block: 4k }"), 6, 24,
	  "invalid size '4k' for 'block' in step 'randread': unknown unit: sizes are bytes (512), "
	  "K M G T (powers of two) or KB MB GB TB (powers of ten) (did you mean '4K'?)", 1 },
	{ "size distribution: lower-case units", ONE_STEP("write: { files: 2, sizes: 1mb..2mb }"), 6, 31,
	  "(did you mean '1MB..2MB'?)", 1 },
	{ "size list item: IEC unit", ONE_STEP("write: { files: 2, sizes: [1M, 4MiB] }"), 6, 36,
	  "invalid size distribution '4MiB' for 'sizes' in step 'write': unknown unit: sizes are bytes "
	  "(512), K M G T (powers of two) or KB MB GB TB (powers of ten) (did you mean '4M'?)", 1 },
	{ "duration: spelled out", ONE_STEP("pause: { time: 2 sec }"), 6, 20,
	  "(did you mean '2s'?)", 1 },
	{ "image size: lower case", HDR "target:\n  image: { path: /tmp/x.img, size: 1g }\n"
	  LAYOUT_EXT4 STEPS, 4, 36, "invalid size '1g' for the image: unknown unit: sizes are bytes "
	  "(512), K M G T (powers of two) or KB MB GB TB (powers of ten) (did you mean '1G'?)", 1 },
	{ "partition size: lower case", HDR IMG LAYOUT_OPEN "      - { name: A, fs: ext4, size: 512m }\n"
	  STEPS, 8, 36, "invalid size '512m' for partition 'A': unknown unit: sizes are bytes (512), K M "
	  "G T (powers of two) or KB MB GB TB (powers of ten) (did you mean '512M'?)", 1 },
	{ "parameter above maximum", ONE_STEP("randread: { qd: 2000 }"), 6, 21,
	  "'qd' in step 'randread' is 2000, above the maximum of 1024", 1 },
	{ "parameter below minimum", ONE_STEP("write: { files: 0 }"), 6, 21,
	  "'files' in step 'write' is 0, below the minimum of 1", 1 },
	{ "bare duration", ONE_STEP("pause: { time: 10 }"), 6, 20,
	  "invalid duration '10' for 'time' in step 'pause': a duration needs a unit", 1 },
	{ "fractional size", ONE_STEP("write: { size: 1.5G }"), 6, 20,
	  "invalid size distribution '1.5G' for 'size' in step 'write': it must be a whole number", 1 },
	{ "size and sizes", ONE_STEP("write: { size: 1G, sizes: 1M..2M }"), 6, 24,
	  "'size' and 'sizes' exclude each other in step 'write'", 1 },
	{ "reversed range", ONE_STEP("write: { sizes: 2G..2M }"), 6, 21,
	  "the lower bound is larger than the upper bound", 1 },
	{ "bad boolean", ONE_STEP("write: { sync: maybe }"), 6, 20,
	  "invalid boolean 'maybe' for 'sync' in step 'write': expected true or false", 1 },
	{ "duplicate parameter", ONE_STEP("write: { files: 1, files: 2 }"), 6, 24,
	  "duplicate key 'files' in step 'write' (first given at line 6)", 1 },
	{ "parameter without value", ONE_STEP("write: { files: }"), 6, 14,
	  "no value for 'files' in step 'write'", 1 },
	{ "mapping inside a list", ONE_STEP("write: { sizes: [1M, {a: 1}] }"), 6, 26,
	  "expected a single value in the list for 'sizes' in step 'write', not a mapping", 1 },
	{ "missing required parameter", ONE_STEP("fill: {}"), 6, 5,
	  "step 'fill' needs parameter 'to'", 1 },
	{ "step value is a scalar", ONE_STEP("write: 4"), 6, 12,
	  "step 'write' takes a mapping of parameters", 1 },
	{ "step without mapping", ONE_STEP("read"), 6, 5,
	  "step 'read' needs a mapping of parameters: write 'read: {}' for its defaults", 1 },
	{ "parameter outside its step", HDR DIRS "steps:\n  - write:\n    files: 4\n", 7, 5,
	  "'files' is a parameter of step 'write': put it inside the step", 1 },
	{ "two steps in one item", HDR DIRS "steps:\n  - write: {}\n    read: {}\n", 7, 5,
	  "a step has exactly one key, but 'read' follows 'write'", 1 },
	{ "enumerate: unknown parameter", HDR DIRS "steps:\n  - tree: {}\n  - enumerate: { depth: 1 }\n",
	  7, 18, "unknown key 'depth' in step 'enumerate' (expected one of order, cache)", 1 },
	{ "enumerate: order", HDR DIRS "steps:\n  - tree: {}\n  - enumerate: { order: ftw }\n", 7, 25,
	  "unknown value 'ftw' for 'order' in step 'enumerate' (expected one of inode, fts); "
	  "did you mean 'fts'?", 1 },
	{ "enumerate: cache", HDR DIRS "steps:\n  - tree: {}\n  - enumerate: { order: fts, cache: cold }\n",
	  7, 37, "unknown value 'cold' for 'cache' in step 'enumerate' (expected one of drop, keep)", 1 },
	{ "read before write", HDR DIRS "steps:\n  - read: {}\n  - write: {}\n", 6, 5,
	  "step 'read' needs a 'write' step before it", 1 },
	{ "churn without tree", ONE_STEP("churn: {}"), 6, 5,
	  "step 'churn' needs a 'tree' or 'sync' step before it", 1 },
	/* source folders: tree and churn with `at`, sync with `from` */
	{ "sync without a source", ONE_STEP("sync: { from: /tmp/src }"), 6, 5,
	  "step 'sync' needs a 'tree' step with 'at: /tmp/src' before it in the plan", 1 },
	{ "sync without from", HDR DIRS "steps:\n  - tree: { at: /tmp/src }\n  - sync: {}\n", 7, 5,
	  "step 'sync' needs parameter 'from'", 1 },
	{ "sync from another folder", HDR DIRS "steps:\n  - tree: { at: /tmp/src }\n"
	  "  - sync: { from: /tmp/other }\n", 7, 5,
	  "step 'sync' needs a 'tree' step with 'at: /tmp/other' before it", 1 },
	{ "sync after a volume tree", HDR DIRS "steps:\n  - tree: {}\n  - sync: { from: /tmp/src }\n",
	  7, 5, "step 'sync' needs a 'tree' step with 'at: /tmp/src' before it", 1 },
	{ "sync from a relative folder", HDR DIRS "steps:\n  - tree: { at: /tmp/src }\n"
	  "  - sync: { from: src }\n", 7, 19,
	  "invalid folder 'src' for 'from' in step 'sync': a folder must be an absolute path", 1 },
	{ "folder with ..", ONE_STEP("tree: { at: /tmp/x/../src }"), 6, 17,
	  "a folder may not have '.' or '..' in its path", 1 },
	{ "enumerate after a tree at a folder", HDR DIRS "steps:\n  - tree: { at: /tmp/src }\n"
	  "  - enumerate: {}\n", 7, 5,
	  "step 'enumerate' needs a 'tree' or 'sync' step before it in the plan (it works on what "
	  "'tree' left on the volume); a step with a folder works there, not on the volume", 1 },
	{ "churn at a folder without a tree there", HDR DIRS "steps:\n  - tree: {}\n"
	  "  - churn: { at: /tmp/src }\n", 7, 5,
	  "step 'churn' needs a 'tree' step with 'at: /tmp/src' before it", 1 },
	{ "churn at a folder: the tree is elsewhere", HDR DIRS "steps:\n  - tree: { at: /tmp/s1 }\n"
	  "  - churn: { at: /tmp/s2 }\n", 7, 5,
	  "step 'churn' needs a 'tree' step with 'at: /tmp/s2' before it", 1 },
	{ "folder inside the target", ONE_STEP("tree: { at: /tmp/a/src }"), 6, 17,
	  "'at' in step 'tree' is /tmp/a/src, inside the target's folder /tmp/a: a source folder "
	  "must be outside the target", 1 },
	{ "folder around the target", ONE_STEP("tree: { at: /tmp/ }"), 6, 17,
	  "'at' in step 'tree' is /tmp, around the target's folder /tmp/a", 2 },
	{ "folder is the image", HDR IMG LAYOUT_EXT4 "steps:\n  - tree: { at: /tmp/x.img }\n", 10, 17,
	  "'at' in step 'tree' is /tmp/x.img, the target's image file", 1 },
	{ "folder from a variable", HDR DIRS "steps:\n  - sweep:\n      d: [/tmp/s1, /tmp/s2]\n"
	  "      steps:\n        - tree: { at: $d }\n", 9, 23,
	  "'at' in step 'tree' must be written out, not a variable ('$d')", 1 },
	{ "module check: span below block", ONE_STEP("randread: { block: 1M, span: 4K }"), 6, 5,
	  "span (4096 bytes) is smaller than block (1048576 bytes)", 1 },
	{ "module check: tree dirs", ONE_STEP("tree: { dirs: 1, depth: 3 }"), 6, 5,
	  "dirs (1) must be at least depth (3)", 1 },
	{ "enum typo", ONE_STEP("exec: { run: [true], parse: fio }"), 6, 33,
	  "unknown value 'fio' for 'parse' in step 'exec' (expected one of none, fio-json, key=value); "
	  "did you mean 'fio-json'?", 1 },
	{ "enum list repeat", ONE_STEP("meta: { ops: [stat, stat] }"), 6, 25,
	  "'stat' appears twice in 'ops' of step 'meta'", 1 },
	{ "command as a scalar", ONE_STEP("exec: { run: fio }"), 6, 18,
	  "'run' in step 'exec' takes a list", 1 },
	{ "undefined variable", ONE_STEP("fill: { to: $level }"), 6, 17,
	  "undefined variable '$level' in parameter 'to' of step 'fill': no enclosing sweep defines it", 1 },

	/* cycle and sweep */
	{ "cycle times 0", ONE_STEP("cycle: { times: 0, steps: [ { write: {} } ] }"), 6, 21,
	  "'times' must be at least 1 (is 0)", 1 },
	{ "cycle without steps", ONE_STEP("cycle: { times: 2 }"), 6, 12, "missing key 'steps' in cycle", 1 },
	{ "cycle times variable", HDR DIRS "steps:\n  - sweep:\n      n: [1]\n      steps:\n"
	  "        - cycle: { times: $n, steps: [ { null: { value: $n } } ] }\n", 9, 27,
	  "cycle 'times' must be a number, not '$n'", 1 },
	{ "sweep value out of range", HDR DIRS "steps:\n  - sweep:\n      level: [90%, 120%]\n"
	  "      steps:\n        - fill: { to: $level }\n", 7, 20,
	  "'to' in step 'fill' is 120% (the value of $level): a percentage must be more than 0% and "
	  "at most 100%", 1 },
	{ "sweep value bad unit", HDR DIRS "steps:\n  - sweep:\n      bs: [4K, 4Q]\n"
	  "      steps:\n        - randread: { block: $bs }\n", 7, 16,
	  "invalid size '4Q' for 'block' in step 'randread' (the value of $bs)", 1 },
	{ "sweep with two variables", HDR DIRS "steps:\n  - sweep:\n      a: [1]\n      b: [2]\n"
	  "      steps:\n        - null: { value: $a }\n", 8, 7,
	  "sweep has a second variable 'b' (after 'a')", 1 },
	{ "sweep without variable", HDR DIRS "steps:\n  - sweep:\n      steps:\n        - write: {}\n", 6, 5,
	  "sweep needs a variable", 1 },
	{ "sweep shadowing", HDR DIRS "steps:\n  - sweep:\n      x: [1, 2]\n      steps:\n"
	  "        - sweep:\n            x: [3]\n            steps:\n"
	  "              - null: { value: $x }\n", 10, 13,
	  "sweep variable 'x' shadows the enclosing sweep's variable 'x' (line 6)", 1 },
	{ "sweep variable name", HDR DIRS "steps:\n  - sweep:\n      Level: [1]\n      steps:\n"
	  "        - null: {}\n", 7, 7, "invalid sweep variable name 'Level'", 1 },
	{ "sweep variable named like a factor", HDR DIRS "steps:\n  - sweep:\n      rep: [1]\n"
	  "      steps:\n        - null: {}\n", 7, 7, "sweep variable 'rep' has the name of a report factor", 1 },
	{ "variable in a sweep's list", HDR DIRS "steps:\n  - sweep:\n      x: [1, $y]\n      steps:\n"
	  "        - null: { value: $x }\n", 7, 14, "sweep values must be written out: '$y' is a variable", 1 },
	{ "duplicate sweep value", HDR DIRS "steps:\n  - sweep:\n      x: [1, 1]\n      steps:\n"
	  "        - null: { value: $x }\n", 7, 14, "value '1' appears twice in sweep 'x'", 1 },
	{ "sweep without values", HDR DIRS "steps:\n  - sweep:\n      x: []\n      steps:\n"
	  "        - null: { value: $x }\n", 7, 10, "sweep variable 'x' has no values", 1 },

	/* keep: true (a layout that keeps its first partition) */
	{ "keep on a second partition",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: w\n    partitions:\n      - { name: A, fs: apfs, size: 100% }\n  - name: g\n    partitions:\n      - { name: A, fs: apfs, size: 50% }\n      - { name: B, fs: hfs+, size: rest, keep: true }\nsteps:\n  - write: {}\n",
	  12, 48, "only the first partition of a layout may have 'keep: true' (partition 2 of layout 'g' has it)", 1 },
	{ "keep with count",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: g\n    partitions:\n      - { count: 2, name: \"A{n}\", fs: apfs, size: 10%, keep: true }\nsteps:\n  - write: {}\n",
	  8, 62, "'keep: true' with count 2", 1 },
	{ "keep not a boolean",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: g\n    partitions:\n      - { name: A, fs: apfs, size: 10%, keep: yes }\nsteps:\n  - write: {}\n",
	  8, 47, "invalid value 'yes' for 'keep': expected true or false", 1 },
	{ "keep with reprovision repeat",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: w\n    partitions:\n      - { name: A, fs: apfs, size: 100% }\n  - name: g\n    partitions:\n      - { name: A, fs: apfs, size: 50%, keep: true }\n      - { name: B, fs: hfs+, size: rest }\nreprovision: repeat\nsteps:\n  - write: {}\n",
	  11, 47, "'keep: true' in layout 'g' with 'reprovision: repeat'", 1 },
	{ "keep on linux",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: /dev/sdb, confirm: x }\nlayouts:\n  - name: w\n    partitions:\n      - { name: A, fs: ext4, size: 100% }\n  - name: g\n    partitions:\n      - { name: A, fs: ext4, size: 50%, keep: true }\n      - { name: B, fs: xfs, size: rest }\nsteps:\n  - write: {}\n",
	  11, 47, "'keep: true' is supported on macos only in this version", 1 },
	{ "keep exfat",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: g\n    partitions:\n      - { name: A, fs: exfat, size: 50%, keep: true }\nsteps:\n  - write: {}\n",
	  8, 48, "'keep: true' on exfat partition 'A': rig can keep apfs", 1 },
	{ "keep in an image's first layout",
	  "rig: 1\nname: t\ntarget:\n  image: { path: /tmp/x.img, size: 1G }\nlayouts:\n  - name: g\n    partitions:\n      - { name: A, fs: apfs, size: 50%, keep: true }\nsteps:\n  - write: {}\n",
	  8, 47, "'keep: true' in the first layout 'g' of an image target: a new image has nothing to keep", 1 },
	{ "keep in an image's later layout",
	  "rig: 1\nname: t\ntarget:\n  image: { path: /tmp/x.img, size: 1G }\nlayouts:\n  - name: w\n    partitions:\n      - { name: A, fs: apfs, size: 100% }\n  - name: g\n    partitions:\n      - { name: A, fs: apfs, size: 50%, keep: true }\nsteps:\n  - write: {}\n",
	  11, 47, "in this version rig keeps partitions of disk targets only", 1 },
	{ "keep after two partitions",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: w\n    partitions:\n      - { name: A, fs: apfs, size: 50% }\n      - { name: B, fs: hfs+, size: rest }\n  - name: g\n    partitions:\n      - { name: A, fs: apfs, size: 50%, keep: true }\n      - { name: B, fs: hfs+, size: rest }\nsteps:\n  - write: {}\n",
	  12, 47, "layout 'g' keeps partition 'A' (apfs), so the layout before it, 'w' (line 6), must leave exactly that one partition; it has 2 partitions", 1 },
	{ "keep another name",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: w\n    partitions:\n      - { name: A, fs: apfs, size: 100% }\n  - name: g\n    partitions:\n      - { name: Z, fs: apfs, size: 50%, keep: true }\n      - { name: B, fs: hfs+, size: rest }\nsteps:\n  - write: {}\n",
	  11, 47, "'w' (line 6), must leave exactly that one partition; its partition is named 'A', not 'Z'", 1 },
	{ "keep another fs",
	  "rig: 1\nname: t\ntarget:\n  disk: { device: disk4, confirm: x }\nlayouts:\n  - name: w\n    partitions:\n      - { name: A, fs: apfs, size: 100% }\n  - name: g\n    partitions:\n      - { name: A, fs: hfs+, size: 50%, keep: true }\n      - { name: B, fs: apfs, size: rest }\nsteps:\n  - write: {}\n",
	  11, 47, "its partition 'A' is apfs, not hfs+", 1 },

	/* report */
	{ "unknown baseline", HDR DIRS STEPS "report:\n  baseline: c\n", 8, 13,
	  "baseline 'c' is not a volume or layout of the plan", 1 },
	{ "unknown factor", HDR DIRS STEPS "report:\n  by: [volume, size]\n", 8, 16,
	  "unknown factor 'size' in report.by", 1 },
	{ "cycle factor without cycle", HDR DIRS STEPS "report:\n  by: [cycle]\n", 8, 8,
	  "factor 'cycle' in report.by, but the plan has no cycle step", 1 },
	{ "unknown format", HDR DIRS STEPS "report:\n  formats: [pdf]\n", 8, 13,
	  "unknown report format 'pdf'", 1 },
	{ "no formats", HDR DIRS STEPS "report:\n  formats: []\n", 8, 12, "report.formats is empty", 1 },
	{ "report typo", HDR DIRS STEPS "report:\n  tilte: x\n", 8, 3,
	  "unknown key 'tilte' in report (did you mean 'title'?)", 1 },

	/* report.headline (HSTEPS: the entries start at line 15, column 5) and compare */
	{ "headline: not a mapping", HDR DIRS STEPS "report:\n  headline: [write]\n", 8, 13,
	  "expected a mapping for 'report.headline' (step or module: metric), not a list", 1 },
	{ "headline: unknown module", HDR DIRS HSTEPS "    wirte: rate\n", 15, 5,
	  "unknown step 'wirte' in report.headline: give a module of the plan's steps or a step "
	  "path such as '1' or '2.cycle.1' (did you mean 'write'?)", 1 },
	{ "headline: module not in the plan", HDR DIRS HSTEPS "    read: rate\n", 15, 5,
	  "module 'read' in report.headline is not used by the plan's steps (they use write, "
	  "null, pause, exec)", 1 },
	{ "headline: no such step", HDR DIRS HSTEPS "    4: seconds\n", 15, 5,
	  "no step '4' in the plan for report.headline: the plan has 3 steps", 1 },
	{ "headline: no such step in a cycle", HDR DIRS HSTEPS "    2.cycle.3: value\n", 15, 5,
	  "no step '2.cycle.3' in the plan for report.headline: the cycle at step 2 has 2 steps", 1 },
	{ "headline: a cycle called a sweep", HDR DIRS HSTEPS "    2.sweep.1: value\n", 15, 5,
	  "no step '2.sweep.1' in the plan for report.headline: step 2 is a cycle, not a sweep", 1 },
	{ "headline: a module step called a cycle", HDR DIRS HSTEPS "    1.cycle.1: rate\n", 15, 5,
	  "no step '1.cycle.1' in the plan for report.headline: step 1 is a write, not a cycle", 1 },
	{ "headline: a cycle itself", HDR DIRS HSTEPS "    2: value\n", 15, 5,
	  "step '2' in report.headline is a cycle, not a measurement: give one of its steps, such "
	  "as '2.cycle.1'", 1 },
	{ "headline: a cycle number", HDR DIRS HSTEPS "    2.cycle1.1: value\n", 15, 5,
	  "step path '2.cycle1.1' in report.headline has a cycle or sweep number: a headline holds "
	  "for every cycle and sweep value, so leave them out ('2.cycle.1')", 1 },
	{ "headline: not a path", HDR DIRS HSTEPS "    1x: rate\n", 15, 5,
	  "invalid step path '1x' in report.headline", 1 },
	{ "headline: unknown metric", HDR DIRS HSTEPS "    write: rat\n", 15, 12,
	  "unknown metric 'rat' for 'write' in report.headline (write measures rate, "
	  "rate_median_file, rate_fit, overhead_fit, bytes, seconds; did you mean 'rate'?)", 1 },
	{ "headline: unknown metric of a path", HDR DIRS HSTEPS "    1: { metric: speed }\n", 15, 18,
	  "unknown metric 'speed' for '1' in report.headline (write measures rate,", 1 },
	{ "headline: a module without metrics", HDR DIRS HSTEPS "    2.cycle.2: seconds\n", 15, 16,
	  "unknown metric 'seconds' for '2.cycle.2' in report.headline: pause measures nothing", 1 },
	{ "headline: unknown key", HDR DIRS HSTEPS "    write: { metric: rate, bettr: lower }\n",
	  15, 28, "unknown key 'bettr' in report.headline 'write' (did you mean 'better'?)", 1 },
	{ "headline: better is higher or lower", HDR DIRS HSTEPS
	  "    write: { metric: rate, better: more }\n", 15, 36,
	  "unknown value 'more' for 'better' (expected one of higher, lower)", 1 },
	{ "headline: no metric", HDR DIRS HSTEPS "    write: { better: lower }\n", 15, 12,
	  "missing key 'metric' in report.headline 'write'", 1 },
	{ "headline: no value", HDR DIRS HSTEPS "    write:\n", 15, 5,
	  "no value for 'write' in report.headline (expected a metric name, or { metric: NAME, "
	  "better: higher or lower })", 1 },
	{ "headline: a list", HDR DIRS HSTEPS "    write: [rate]\n", 15, 12,
	  "expected a metric name, or { metric: NAME, better: higher or lower }, for 'write' in "
	  "report.headline, not a list", 1 },
	{ "headline: duplicate module", HDR DIRS HSTEPS "    write: rate\n    write: bytes\n", 16, 5,
	  "duplicate key 'write' in report.headline (first given at line 15)", 1 },
	{ "headline: one step twice", HDR DIRS HSTEPS "    2.cycle.1: value\n    02.cycle.01: seconds\n",
	  16, 5, "duplicate key '02.cycle.01' in report.headline (first given at line 15)", 1 },
	{ "compare: fs or volume", HDR DIRS STEPS "report:\n  compare: filesystem\n", 8, 12,
	  "unknown value 'filesystem' for 'compare' (expected one of fs, volume)", 1 },
	{ "compare: no auto", HDR DIRS STEPS "report:\n  compare: auto\n", 8, 12,
	  "unknown value 'auto' for 'compare' (expected one of fs, volume)", 1 },
};

static void test_bad_plans(void)
{
	for (size_t i = 0; i < N(bad_cases); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct diag d;
		struct plan *p = parse(bc->yaml, &d);
		const struct diag_item *e = first_error(&d);
		int ok = e && e->mark.line == bc->line && e->mark.col == bc->col &&
			 strstr(e->msg, bc->msg) && (!bc->nerrors || (size_t)bc->nerrors == d.nerrors);
		if (!ok) {
			printf("\ncase '%s': want %d:%d '%s' (%d errors), got:\n", bc->name, bc->line,
			       bc->col, bc->msg, bc->nerrors);
			dump(&d);
		}
		CU_ASSERT(ok);
		diag_release(&d);
		plan_free(p);
	}
}

static void test_long_text(void)
{
	/* Lengths: a device of 256 bytes, an image path of 4096. */
	struct strbuf dev = STRBUF_INIT, img = STRBUF_INIT, y = STRBUF_INIT;
	sb_adds(&dev, "/dev/");
	while (dev.len < 256)
		sb_addch(&dev, 'a');
	sb_adds(&img, "/tmp/");
	while (img.len < 4096)
		sb_addch(&img, 'b');
	sb_addf(&y, HDR "target:\n  disk: { device: %s, confirm: X }\n" LAYOUT_EXT4 STEPS, dev.buf);
	struct diag d;
	struct plan *p = parse(y.buf, &d);
	const struct diag_item *e = first_error(&d);
	CU_ASSERT_TRUE(e && e->mark.line == 4 && e->mark.col == 19 &&
		       strstr(e->msg, "the device is too long: 256 bytes, at most 255"));
	diag_release(&d);
	plan_free(p);
	sb_reset(&y);
	sb_addf(&y, HDR "target:\n  image: { path: %s, size: 1G }\n" LAYOUT_EXT4 STEPS, img.buf);
	p = parse(y.buf, &d);
	e = first_error(&d);
	CU_ASSERT_TRUE(e && strstr(e->msg, "the image path is too long: 4096 bytes, at most 4095"));
	diag_release(&d);
	plan_free(p);
	/* at the limit: fine */
	sb_setlen(&img, 4095);
	sb_reset(&y);
	sb_addf(&y, HDR "target:\n  image: { path: %s, size: 1G }\n" LAYOUT_EXT4 STEPS, img.buf);
	p = parse(y.buf, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	diag_release(&d);
	plan_free(p);
	sb_release(&dev);
	sb_release(&img);
	sb_release(&y);
}

/* --- valid plans --- */

/* Parse the plan file at path, which must have no errors and no warnings. */
static struct plan *parse_clean(const char *path, struct diag *d)
{
	diag_init(d, NULL, NULL);
	struct plan_options o = { .platform = NULL };
	struct plan *p = plan_parse_file(path, &o, d);
	CU_ASSERT_EQUAL(d->nerrors, 0);
	CU_ASSERT_EQUAL(d->n, 0); /* no warnings either */
	if (d->n)
		dump(d);
	return p;
}

static void test_configs_validate(void)
{
	struct strbuf dir = STRBUF_INIT;
	sb_addf(&dir, "%s/configs", test_src());
	DIR *dp = opendir(dir.buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		struct strbuf path = STRBUF_INIT;
		sb_addf(&path, "%s/%s", dir.buf, e->d_name);
		struct diag d;
		struct plan *p = parse_clean(path.buf, &d);
		CU_ASSERT_PTR_NOT_NULL(p);
		n++;
		diag_release(&d);
		plan_free(p);
		sb_release(&path);
	}
	closedir(dp);
	CU_ASSERT(n >= 7);
	sb_release(&dir);
}

/* The enumeration article's plan walks as its tool did, from a cold cache
 * (issue #15): fts, cache drop, and the runner's flush before the walk. */
static void test_seed_enumeration_method(void)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/configs/enumeration-churn.yaml", test_src());
	struct diag d;
	struct plan *p = parse_clean(path.buf, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_TRUE(p->cache.flush);
	int found = 0;
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct plan_step *cy = &p->steps[i];
		for (size_t k = 0; cy->kind == STEP_CYCLE && k < cy->nsteps; k++) {
			const struct plan_step *st = &cy->steps[k];
			if (st->module != &mod_enumerate)
				continue;
			struct enumerate_args a;
			memset(&a, 0, sizeof(a));
			CU_ASSERT_EQUAL(plan_params_bind(st->module, st->params, NULL, &a, &d, st->mark), 0);
			CU_ASSERT_EQUAL(a.order, ENUMERATE_FTS);
			CU_ASSERT_EQUAL(a.cache, ENUMERATE_DROP);
			/* Said in the plan, not left to the defaults. */
			CU_ASSERT_TRUE(st->params[0].given && st->params[1].given);
			plan_params_free(st->module, &a);
			found++;
		}
	}
	CU_ASSERT_EQUAL(found, 1);
	diag_release(&d);
	plan_free(p);
	sb_release(&path);
}

static void test_all_errors_collected(void)
{
	struct diag d;
	struct plan *p = parse(HDR DIRS "repeat: 0\nsteps:\n  - randread: { qdepth: 4 }\n"
			       "  - pause: { time: 10 }\n", &d);
	CU_ASSERT_EQUAL(d.nerrors, 3);
	CU_ASSERT_EQUAL(d.items[0].mark.line, 5);
	diag_release(&d);
	plan_free(p);

	p = parse("rig: 3\nname: X\ntarget: {}\nsteps: []\nreport: { formats: [pdf] }\n", &d);
	CU_ASSERT_EQUAL(d.nerrors, 5);
	diag_release(&d);
	plan_free(p);
}

/* depth cycles inside each other, a null step in the innermost. */
static char *nested_cycles(int depth)
{
	struct strbuf sb = STRBUF_INIT;
	sb_adds(&sb, HDR DIRS "steps:\n");
	for (int i = 0; i < depth; i++)
		sb_addf(&sb, "%*s- cycle:\n%*stimes: 1\n%*ssteps:\n", 2 + 4 * i, "", 6 + 4 * i, "",
			6 + 4 * i, "");
	sb_addf(&sb, "%*s- null: {}\n", 2 + 4 * depth, "");
	return sb_detach(&sb);
}

/* `levels` cycles, the first over the list [first], each next one over
 * two cycles of the list before it (aliases &a0, *a0, &a1, ...): the steps
 * double at every level. */
static void doubling_cycles(struct strbuf *sb, const char *indent, const char *first, int levels)
{
	sb_addf(sb, "%s- cycle: { times: 1, steps: &a0 [ %s ] }\n", indent, first);
	for (int i = 1; i < levels; i++)
		sb_addf(sb, "%s- cycle: { times: 1, steps: &a%d [ { cycle: { times: 1, steps: *a%d } }, "
			"{ cycle: { times: 1, steps: *a%d } } ] }\n", indent, i, i - 1, i - 1);
}

static void test_limits(void)
{
	struct diag d;
	char *text = nested_cycles(32);
	struct plan *p = parse(text, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	diag_release(&d);
	plan_free(p);
	free(text);

	/* The 33rd cycle's list of steps, which starts at its null step (each
	 * cycle takes three lines from line 6). */
	text = nested_cycles(32 + 1);
	p = parse(text, &d);
	CU_ASSERT_EQUAL(d.nerrors, 1);
	const struct diag_item *e = first_error(&d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "steps nested more than 32 deep"));
	CU_ASSERT_EQUAL(e->mark.line, 6 + 3 * 33);
	diag_release(&d);
	plan_free(p);
	free(text);

	/* An alias to a step list inside itself, one level down. */
	p = parse(HDR DIRS "steps:\n  - cycle:\n      times: 2\n      steps: &s\n"
		  "        - null: {}\n        - cycle: { times: 1, steps: *s }\n", &d);
	CU_ASSERT_EQUAL(d.nerrors, 1);
	e = first_error(&d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "this list of steps contains itself"));
	CU_ASSERT_EQUAL(e->mark.line, 8);
	diag_release(&d);
	plan_free(p);

	/* Thousands of steps through aliases, each using a variable of 20
	 * values: more bindings than the plan's budget even one value at a
	 * time (8,178 steps, under the step limit; one "too large" error). */
	struct strbuf sb = STRBUF_INIT;
	sb_adds(&sb, HDR DIRS "steps:\n  - sweep:\n      t: [");
	for (int i = 1; i <= 20; i++)
		sb_addf(&sb, "%s%ds", i > 1 ? ", " : "", i);
	sb_adds(&sb, "]\n      steps:\n");
	doubling_cycles(&sb, "        ", "{ pause: { time: $t } }, { pause: { time: $t } }", 11);
	p = parse(sb.buf, &d);
	CU_ASSERT_EQUAL(d.nerrors, 1);
	e = first_error(&d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "the plan is too large to check"));
	diag_release(&d);
	plan_free(p);
	sb_release(&sb);

	/* One level more doubles it past the step limit: refused before its
	 * steps are bound, at the plan's list, with the count; each aliased
	 * list is parsed once, so its own mistake is reported (once). */
	sb_reset(&sb);
	sb_adds(&sb, HDR DIRS "steps:\n");
	doubling_cycles(&sb, "  ", "{ pause: { tme: 1s } }, { null: {} }", 13);
	p = parse(sb.buf, &d);
	CU_ASSERT_EQUAL(d.nerrors, 2);
	CU_ASSERT_EQUAL_FATAL(d.n, 2);
	e = first_error(&d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "the plan has 32751 steps with its aliases expanded, "
					  "more than the 10000 a plan may have"));
	CU_ASSERT_EQUAL(e->mark.line, 6);
	CU_ASSERT_EQUAL(e->mark.col, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.items[1].msg, "unknown key 'tme' in step 'pause'"));
	diag_release(&d);
	plan_free(p);
	sb_release(&sb);

	/* Aliases that are not cycles stay allowed: the same list twice. */
	p = parse(HDR DIRS "steps:\n  - cycle: { times: 1, steps: &s [ { null: {} } ] }\n"
		  "  - cycle: { times: 2, steps: *s }\n", &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	diag_release(&d);
	plan_free(p);
}

static void test_parsed_values(void)
{
	struct diag d;
	struct plan *p = parse("rig: 1\nname: ten\nseed: 18446744073709551615\n"
			       "description: ten equal parts\n"
			       "target:\n  disk: { device: disk4, confirm: \"ST2000LM007\" }\n"
			       "layouts:\n  - name: tenths\n    partitions:\n"
			       "      - { count: 10, name: \"C{n}\", fs: apfs, size: 10% }\n"
			       "  - name: halves\n    scheme: gpt\n    partitions:\n"
			       "      - { name: HFS, fs: hfs+, size: 50% }\n"
			       "      - { name: Fixed, fs: exfat, size: 1G }\n"
			       "      - { name: APFS, fs: apfs, size: rest }\n"
			       "order: latin\nrepeat: 10\nreprovision: repeat\n"
			       "cache: { direct: false, flush: true, remount: true }\n"
			       "steps:\n  - write: { files: 20, sizes: 2M..2G }\n  - read: {}\n"
			       "report:\n  title: T\n  baseline: halves\n  by: [position, layout]\n"
			       "  formats: [json]\n", &d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->version, 1);
	CU_ASSERT_STRING_EQUAL(p->name, "ten");
	CU_ASSERT_STRING_EQUAL(p->description, "ten equal parts");
	CU_ASSERT(p->has_seed);
	CU_ASSERT_EQUAL(p->seed, UINT64_MAX);
	CU_ASSERT_EQUAL(p->target.kind, TARGET_DISK);
	CU_ASSERT_STRING_EQUAL(p->target.device, "disk4");
	CU_ASSERT_STRING_EQUAL(p->target.confirm, "ST2000LM007");
	CU_ASSERT_EQUAL(p->platform, plan_platform_find("macos"));
	CU_ASSERT_EQUAL_FATAL(p->nlayouts, 2);
	const struct plan_layout *l = &p->layouts[0];
	CU_ASSERT_STRING_EQUAL(l->name, "tenths");
	CU_ASSERT_STRING_EQUAL(l->scheme, "gpt");
	CU_ASSERT_EQUAL_FATAL(l->nparts, 10);
	for (size_t i = 0; i < 10; i++) {
		char want[8];
		snprintf(want, sizeof(want), "C%zu", i + 1);
		CU_ASSERT_STRING_EQUAL(l->parts[i].name, want);
		CU_ASSERT_STRING_EQUAL(l->parts[i].fs, "apfs");
		CU_ASSERT_EQUAL(l->parts[i].size_kind, PSIZE_PERCENT);
		CU_ASSERT_DOUBLE_EQUAL(l->parts[i].percent, 10.0, 0);
		CU_ASSERT_EQUAL(l->parts[i].mark.line, 10);
	}
	l = &p->layouts[1];
	CU_ASSERT_EQUAL_FATAL(l->nparts, 3);
	CU_ASSERT_EQUAL(l->parts[0].size_kind, PSIZE_PERCENT);
	CU_ASSERT_DOUBLE_EQUAL(l->parts[0].percent, 50.0, 0);
	CU_ASSERT_STRING_EQUAL(l->parts[0].fs, "hfs+");
	CU_ASSERT_EQUAL(l->parts[1].size_kind, PSIZE_BYTES);
	CU_ASSERT_EQUAL(l->parts[1].bytes, 1ull << 30);
	CU_ASSERT_EQUAL(l->parts[2].size_kind, PSIZE_REST);
	CU_ASSERT_STRING_EQUAL(plan_volume_name(p, 1, 2), "APFS");
	CU_ASSERT_EQUAL(p->order, ORDER_LATIN);
	CU_ASSERT_EQUAL(p->repeat, 10);
	CU_ASSERT_EQUAL(p->reprovision, REPROVISION_REPEAT);
	CU_ASSERT_EQUAL(p->cache.direct, 0);
	CU_ASSERT_EQUAL(p->cache.flush, 1);
	CU_ASSERT_EQUAL(p->cache.remount, 1);
	CU_ASSERT_EQUAL_FATAL(p->nsteps, 2);
	CU_ASSERT_EQUAL(p->steps[0].kind, STEP_MODULE);
	CU_ASSERT_STRING_EQUAL(p->steps[0].module->name, "write");
	const struct pval *pv = pval_of(&p->steps[0], "sizes");
	CU_ASSERT_PTR_NOT_NULL_FATAL(pv);
	CU_ASSERT(pv->given);
	CU_ASSERT_STRING_EQUAL(pv->text, "2M..2G");
	CU_ASSERT_EQUAL(pv->mark.line, 22);
	CU_ASSERT_EQUAL(pv->mark.col, 32);
	CU_ASSERT_EQUAL(pv->mark.len, 6);
	CU_ASSERT_FALSE(pval_of(&p->steps[0], "files")->is_seq);
	CU_ASSERT_STRING_EQUAL(pval_of(&p->steps[0], "files")->text, "20");
	CU_ASSERT_FALSE(pval_of(&p->steps[0], "block")->given); /* the default applies */
	CU_ASSERT_STRING_EQUAL(p->report.title, "T");
	CU_ASSERT_STRING_EQUAL(p->report.baseline, "halves");
	CU_ASSERT_EQUAL_FATAL(p->report.nby, 2);
	CU_ASSERT_STRING_EQUAL(p->report.by[0], "position");
	CU_ASSERT_STRING_EQUAL(p->report.by[1], "layout");
	CU_ASSERT_EQUAL(p->report.formats, FMT_JSON);
	diag_release(&d);
	plan_free(p);
}

static void test_defaults(void)
{
	struct diag d;
	struct plan *p = parse(HDR "target:\n  dirs: [/tmp/x/a, /tmp/y/b/, rel/c]\n" STEPS, &d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	CU_ASSERT_FALSE(p->has_seed);
	CU_ASSERT_PTR_NULL(p->description);
	CU_ASSERT_EQUAL(p->order, ORDER_ALTERNATE);
	CU_ASSERT_EQUAL(p->repeat, 1);
	CU_ASSERT_EQUAL(p->reprovision, REPROVISION_LAYOUT);
	CU_ASSERT_EQUAL(p->cache.direct, 1);
	CU_ASSERT_EQUAL(p->cache.flush, 1);
	CU_ASSERT_EQUAL(p->cache.remount, 0);
	CU_ASSERT_EQUAL(p->report.formats, FMT_HTML | FMT_CSV);
	CU_ASSERT_PTR_NULL(p->report.title);
	CU_ASSERT_PTR_NULL(p->report.baseline);
	CU_ASSERT_EQUAL(p->report.nby, 0);
	CU_ASSERT_EQUAL(p->report.nheadlines, 0);
	CU_ASSERT_EQUAL(p->report.compare, COMPARE_AUTO);
	CU_ASSERT_EQUAL(p->platform, NULL);
	CU_ASSERT_EQUAL(p->target.kind, TARGET_DIRS);
	CU_ASSERT_EQUAL_FATAL(p->target.ndirs, 3);
	CU_ASSERT_STRING_EQUAL(p->target.dirs[1], "/tmp/y/b/");
	CU_ASSERT_STRING_EQUAL(p->target.names[0], "a");
	CU_ASSERT_STRING_EQUAL(p->target.names[1], "b");
	CU_ASSERT_STRING_EQUAL(p->target.names[2], "c");
	CU_ASSERT_EQUAL(plan_layout_count(p), 1);
	CU_ASSERT_EQUAL(p->nlayouts, 0);
	diag_release(&d);
	plan_free(p);

	p = parse(HDR "target:\n  dirs: [/x/a, /y/a]\n  names: [first, second]\n" STEPS
		  "report: { baseline: second }\n", &d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	CU_ASSERT_STRING_EQUAL(p->target.names[0], "first");
	CU_ASSERT_STRING_EQUAL(p->target.names[1], "second");
	diag_release(&d);
	plan_free(p);

	/* Empty sections mean their defaults; {n} without count is 1. */
	p = parse(HDR "target:\n  image: { path: /i, size: 1G }\n" LAYOUT_OPEN
		  "      - { name: \"v{n}\", fs: btrfs, size: 100M }\n"
		  "cache:\nreport:\nsteps:\n  - write:\n  - read: {}\n", &d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->cache.direct, 1);
	CU_ASSERT_EQUAL(p->report.formats, FMT_HTML | FMT_CSV);
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[0].name, "v1");
	CU_ASSERT_EQUAL(p->layouts[0].parts[0].bytes, 100ull << 20);
	CU_ASSERT_FALSE(pval_of(&p->steps[0], "files")->given);
	diag_release(&d);
	plan_free(p);

	p = parse(HDR "target:\n  image: { path: /var/tmp/r.img, size: 20GB, keep: true }\n"
		  LAYOUT_EXT4 STEPS, &d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->target.kind, TARGET_IMAGE);
	CU_ASSERT_STRING_EQUAL(p->target.image_path, "/var/tmp/r.img");
	CU_ASSERT_EQUAL(p->target.image_size, 20000000000ull);
	CU_ASSERT_EQUAL(p->target.keep, 1);
	CU_ASSERT_EQUAL(p->platform, plan_platform_find("linux"));
	diag_release(&d);
	plan_free(p);
}

static void test_steps_nesting(void)
{
	struct diag d;
	struct plan *p = parse(HDR DIRS "steps:\n"
			       "  - tree: { files: 100, dirs: 10, depth: 2 }\n"
			       "  - cycle:\n      times: 20\n      steps:\n"
			       "        - pause: { time: 10s }\n"
			       "        - enumerate: { order: fts }\n"
			       "        - churn: { fraction: 5% }\n"
			       "  - sweep:\n      level: [90%, 92.5%, 99%]\n      steps:\n"
			       "        - fill: { to: $level }\n"
			       "        - write: { files: 1, size: 100M }\n"
			       "        - read: {}\n"
			       "        - sweep:\n            qd: [1, 32]\n            steps:\n"
			       "              - randread: { qd: $qd, time: 1s }\n"
			       "  - meta: { ops: [create, unlink] }\n"
			       "  - exec: { run: [fio, --name=x, \"$$literal\"], parse: fio-json }\n"
			       "report:\n  by: [level, qd, cycle]\n", &d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(d.n, 0);
	CU_ASSERT_EQUAL_FATAL(p->nsteps, 5);
	const struct plan_step *cy = &p->steps[1];
	CU_ASSERT_EQUAL(cy->kind, STEP_CYCLE);
	CU_ASSERT_EQUAL(cy->times, 20);
	CU_ASSERT_EQUAL_FATAL(cy->nsteps, 3);
	CU_ASSERT_STRING_EQUAL(cy->steps[1].module->name, "enumerate");
	CU_ASSERT_TRUE(cy->steps[1].params[0].given);
	CU_ASSERT_STRING_EQUAL(cy->steps[1].params[0].text, "fts");
	CU_ASSERT_EQUAL(cy->steps[1].mark.line, 11);
	CU_ASSERT_EQUAL(cy->steps[1].mark.col, 11);
	const struct plan_step *sw = &p->steps[2];
	CU_ASSERT_EQUAL(sw->kind, STEP_SWEEP);
	CU_ASSERT_STRING_EQUAL(sw->var, "level");
	CU_ASSERT_EQUAL_FATAL(sw->nvalues, 3);
	CU_ASSERT_STRING_EQUAL(sw->values[1], "92.5%");
	CU_ASSERT_EQUAL(sw->value_marks[1].line, 14);
	CU_ASSERT_EQUAL(sw->value_marks[1].col, 20);
	CU_ASSERT_EQUAL(sw->value_marks[1].len, 5);
	CU_ASSERT_EQUAL_FATAL(sw->nsteps, 4);
	const struct plan_step *inner = &sw->steps[3];
	CU_ASSERT_EQUAL(inner->kind, STEP_SWEEP);
	CU_ASSERT_STRING_EQUAL(inner->var, "qd");
	CU_ASSERT_EQUAL_FATAL(inner->nsteps, 1);
	CU_ASSERT_STRING_EQUAL(pval_of(&inner->steps[0], "qd")->text, "$qd");
	const struct plan_step *ex = &p->steps[4];
	CU_ASSERT_STRING_EQUAL(ex->module->name, "exec");
	const struct pval *run = pval_of(ex, "run");
	CU_ASSERT(run->is_seq);
	CU_ASSERT_EQUAL_FATAL(run->nitems, 3);
	CU_ASSERT_STRING_EQUAL(run->items[1], "--name=x");
	CU_ASSERT_EQUAL(run->item_marks[1].col, 24);
	diag_release(&d);
	plan_free(p);
}

/* plan_params_bind on its own: defaults, groups, lists, sweep bindings. */
static void test_params_bind(void)
{
	const struct rig_module *w = mod_find("write");
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	struct diag d;
	diag_init(&d, "x", NULL);
	struct mark at = { 1, 1, 1 };
	void *args = calloc(1, w->args_size);
	CU_ASSERT_EQUAL(plan_params_bind(w, NULL, NULL, args, &d, at), 0);
	CU_ASSERT_EQUAL(u64_of(args, w, "files"), 1);
	const struct size_dist *sd = field(args, w, "size");
	CU_ASSERT_EQUAL(sd->kind, DIST_FIXED);
	CU_ASSERT_EQUAL(sd->lo, 1ull << 30);
	CU_ASSERT_EQUAL(u64_of(args, w, "block"), 1ull << 20);
	CU_ASSERT_EQUAL(*(const int *)field(args, w, "sync"), 1);
	plan_params_free(w, args);
	free(args);

	/* A list with a `$var` item, through a binding. */
	size_t np = mod_nparams(w);
	struct pval *vals = calloc(np, sizeof(struct pval));
	const struct rig_param *sizes = mod_param(w, "sizes");
	struct pval *sv = &vals[sizes - w->params];
	char *items[] = { "1M", "$big" };
	struct mark marks[] = { { 3, 4, 2 }, { 3, 8, 4 } };
	*sv = (struct pval){ .given = 1, .is_seq = 1, .items = items, .item_marks = marks,
			     .nitems = 2, .mark = { 3, 3, 1 }, .key_mark = { 3, 1, 5 } };
	struct binding b = { .var = "big", .value = "1G", .mark = { 9, 9, 2 } };
	args = calloc(1, w->args_size);
	CU_ASSERT_EQUAL(plan_params_bind(w, vals, &b, args, &d, at), 0);
	sd = field(args, w, "sizes");
	CU_ASSERT_EQUAL(sd->kind, DIST_LIST);
	CU_ASSERT_EQUAL_FATAL(sd->nlist, 2);
	CU_ASSERT_EQUAL(sd->list[1], 1ull << 30);
	plan_params_free(w, args);
	free(args);

	/* A bad value through a binding is reported at the binding's mark. */
	struct binding bad = { .var = "big", .value = "0", .mark = { 9, 9, 1 } };
	args = calloc(1, w->args_size);
	CU_ASSERT_EQUAL(plan_params_bind(w, vals, &bad, args, &d, at), 1);
	CU_ASSERT_EQUAL_FATAL(d.n, 1);
	CU_ASSERT_EQUAL(d.items[0].mark.line, 9);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.items[0].msg, "(the value of $big)"));
	plan_params_free(w, args);
	free(args);
	free(vals);
	diag_release(&d);

	/* An enum list not given is every choice in order. */
	const struct rig_module *m = mod_find("meta");
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	diag_init(&d, "x", NULL);
	args = calloc(1, m->args_size);
	CU_ASSERT_EQUAL(plan_params_bind(m, NULL, NULL, args, &d, at), 0);
	const struct enum_list *ops = field(args, m, "ops");
	CU_ASSERT_EQUAL_FATAL(ops->n, 4);
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(ops->items[i], i);
	plan_params_free(m, args);
	free(args);

	/* A group with no member given: the first with a default (time). */
	const struct rig_module *r = mod_find("randread");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	args = calloc(1, r->args_size);
	CU_ASSERT_EQUAL(plan_params_bind(r, NULL, NULL, args, &d, at), 0);
	CU_ASSERT_EQUAL(u64_of(args, r, "time"), 10000000000ull);
	CU_ASSERT_EQUAL(u64_of(args, r, "ops"), 0);
	plan_params_free(r, args);
	free(args);
	CU_ASSERT_EQUAL(d.n, 0);
	diag_release(&d);
	CU_ASSERT_STRING_EQUAL(plan_params_type_name(PT_SIZE), "size (e.g. 4K, 1MB)");
}

/* keep: true where it may be: the first layout of a disk target (the disk
 * as found), and after a layout leaving exactly the kept partition. */
static void test_keep_valid(void)
{
	static const char *const text = HDR "target:\n  disk: { device: disk4, confirm: x }\n"
		"layouts:\n  - name: found\n    partitions:\n"
		"      - { name: A, fs: apfs, size: 100%, keep: true }\n"
		"  - name: grown\n    partitions:\n"
		"      - { name: A, fs: apfs, size: 50%, keep: false }\n"
		"  - name: again\n    partitions:\n"
		"      - { name: A, fs: apfs, size: 40%, keep: true }\n"
		"      - { name: B, fs: hfs+, size: rest }\n" STEPS;
	struct diag d;
	struct plan *p = parse(text, &d);
	if (d.nerrors)
		dump(&d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->layouts[0].keeps, 1);
	CU_ASSERT_EQUAL(p->layouts[0].parts[0].keep, 1);
	CU_ASSERT_EQUAL(p->layouts[1].keeps, 0);
	CU_ASSERT_EQUAL(p->layouts[2].keeps, 1);
	CU_ASSERT_EQUAL(p->layouts[2].parts[1].keep, 0);
	diag_release(&d);
	plan_free(p);
}

static void test_platforms(void)
{
	static const char *const mac = HDR IMG LAYOUT_OPEN
		"      - { name: APFS, fs: apfs, size: 50% }\n"
		"      - { name: HFS, fs: hfs+, size: rest }\n" STEPS;
	struct diag d;
	struct plan_options o = { .platform = NULL };
	struct plan *p = parse_opt(mac, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->platform, plan_platform_find("macos"));
	diag_release(&d);
	plan_free(p);

	o.platform = plan_platform_find("linux");
	p = parse_opt(mac, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 2);
	const struct diag_item *e = first_error(&d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(e->mark.line, 8);
	CU_ASSERT_EQUAL(e->mark.col, 27);
	CU_ASSERT_STRING_EQUAL(e->msg, "file system 'apfs' cannot be made on linux (it can make "
			       "ext4, xfs, btrfs)");
	CU_ASSERT_EQUAL(p->platform, plan_platform_find("linux"));
	diag_release(&d);
	plan_free(p);

	o.fs_map = "apfs=ext4, hfs+=xfs";
	p = parse_opt(mac, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->platform, plan_platform_find("linux"));
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[0].fs, "ext4");
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[1].fs, "xfs");
	diag_release(&d);
	plan_free(p);

	/* The map alone (platform ANY) makes the plan a linux plan. */
	o.platform = NULL;
	o.fs_map = "apfs=ext4,hfs+=xfs";
	p = parse_opt(mac, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->platform, plan_platform_find("linux"));
	diag_release(&d);
	plan_free(p);

	/* Half a map: the mapped fs is named with its origin. */
	o.platform = plan_platform_find("macos");
	o.fs_map = "hfs+=xfs";
	p = parse_opt(mac, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 1);
	e = first_error(&d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "file system 'xfs' (mapped from 'hfs+' by --fs-map) "
					      "cannot be made on macos"));
	diag_release(&d);
	plan_free(p);

	static const char *const bad_maps[] = { "apfs", "apfs=ntfs", "apfs=ext4,apfs=xfs", "=ext4",
						"apfs=ext4,,hfs+=xfs" };
	for (size_t i = 0; i < N(bad_maps); i++) {
		o.platform = NULL;
		o.fs_map = bad_maps[i];
		p = parse_opt(mac, &o, &d);
		e = first_error(&d);
		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		CU_ASSERT_EQUAL(e->mark.line, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(e->msg, "invalid --fs-map"));
		diag_release(&d);
		plan_free(p);
	}

	/* Case-sensitive APFS and HFS+: macOS file systems, refused on Linux,
	 * mapped like any other. */
	static const char cs[] = HDR "target:\n  image: { path: /tmp/cs.img, size: 1G }\nlayouts:\n"
		"  - name: l\n    partitions:\n      - { name: A, fs: apfsx, size: 50% }\n"
		"      - { name: B, fs: jhfsx, size: rest }\n" STEPS;
	o.platform = NULL;
	o.fs_map = NULL;
	p = parse_opt(cs, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->platform, plan_platform_find("macos"));
	CU_ASSERT_EQUAL(plan_platform_fs(p->platform, "apfsx")->case_sensitive, 1);
	CU_ASSERT_EQUAL(plan_platform_fs(p->platform, "apfs")->case_sensitive, 0);
	diag_release(&d);
	plan_free(p);
	o.platform = plan_platform_find("linux");
	p = parse_opt(cs, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 2);
	e = first_error(&d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_STRING_EQUAL(e->msg, "file system 'apfsx' cannot be made on linux (it can make "
			       "ext4, xfs, btrfs)");
	diag_release(&d);
	plan_free(p);
	o.fs_map = "apfsx=ext4,jhfsx=xfs";
	p = parse_opt(cs, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[0].fs, "ext4");
	diag_release(&d);
	plan_free(p);

	/* dirs: no platform, whatever is asked. */
	o.platform = plan_platform_find("linux");
	o.fs_map = NULL;
	p = parse_opt(HDR DIRS STEPS, &o, &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->platform, NULL);
	diag_release(&d);
	plan_free(p);
}

/* What diag_print writes for d (free it). */
static char *printed(const struct diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	diag_print(d, f);
	fclose(f);
	return buf;
}

static void test_diag_format(void)
{
	struct diag d;
	const char *text = HDR DIRS "steps:\n  - randread: { qdepth: 4 }\n";
	struct plan *p = parse(text, &d);
	CU_ASSERT_EQUAL_FATAL(d.n, 1);
	char line[256];
	diag_format_item(&d, 0, line, sizeof(line));
	CU_ASSERT_STRING_EQUAL(line, "plan.yaml:6:17: error: unknown key 'qdepth' in step 'randread' "
			       "(did you mean 'qd'?)");
	char *buf = printed(&d);
	CU_ASSERT_STRING_EQUAL(buf, "plan.yaml:6:17: error: unknown key 'qdepth' in step 'randread' "
			       "(did you mean 'qd'?)\n"
			       "    6 |   - randread: { qdepth: 4 }\n"
			       "      |                 ^~~~~~\n");
	free(buf);
	diag_release(&d);
	plan_free(p);

	/* Sorted by position, warnings too; tabs kept under the caret. */
	diag_init(&d, "f.yaml", "a\n\tb: x\n");
	diag_error(&d, (struct mark){ 2, 5, 1 }, "second");
	diag_warning(&d, (struct mark){ 1, 1, 1 }, "first");
	diag_error(&d, (struct mark){ 0, 0, 0 }, "whole file");
	CU_ASSERT_EQUAL(d.nerrors, 2);
	buf = printed(&d);
	CU_ASSERT_STRING_EQUAL(buf, "f.yaml: error: whole file\n"
			       "f.yaml:1:1: warning: first\n"
			       "    1 | a\n"
			       "      | ^\n"
			       "f.yaml:2:5: error: second\n"
			       "    2 | \tb: x\n"
			       "      | \t   ^\n");
	free(buf);
	diag_release(&d);

	/* Reported out of order, two on one line, one past the text's end,
	 * columns counted in characters: printed in line order, each line
	 * found once (diag_print walks the text once). */
	diag_init(&d, "g.yaml", "one\ntwo\nthr\xc3\xa9" "e: x\n");
	diag_error(&d, (struct mark){ 3, 8, 1 }, "c");
	diag_error(&d, (struct mark){ 9, 1, 1 }, "past");
	diag_error(&d, (struct mark){ 1, 2, 2 }, "a");
	diag_error(&d, (struct mark){ 3, 1, 5 }, "b");
	buf = printed(&d);
	CU_ASSERT_STRING_EQUAL(buf, "g.yaml:1:2: error: a\n"
			       "    1 | one\n"
			       "      |  ^~\n"
			       "g.yaml:3:1: error: b\n"
			       "    3 | thr\xc3\xa9" "e: x\n"
			       "      | ^~~~~\n"
			       "g.yaml:3:8: error: c\n"
			       "    3 | thr\xc3\xa9" "e: x\n"
			       "      |        ^\n"
			       "g.yaml:9:1: error: past\n");
	free(buf);
	diag_release(&d);

	static const char *const words[] = { "qd", "threads", "span", "time", "ops", "block" };
	CU_ASSERT_STRING_EQUAL(diag_suggest("qdepth", words, N(words)), "qd");
	CU_ASSERT_STRING_EQUAL(diag_suggest("blok", words, N(words)), "block");
	CU_ASSERT_STRING_EQUAL(diag_suggest("TIME", words, N(words)), "time");
	CU_ASSERT_PTR_NULL(diag_suggest("xyzzy", words, N(words)));
}

static void test_headlines(void)
{
	struct diag d;
	struct plan *p = parse(HDR DIRS "steps:\n  - write: {}\n  - sweep:\n      level: [1, 2]\n"
			       "      steps:\n        - null: { value: $level }\n"
			       "        - cycle: { times: 2, steps: [randread: {}] }\n"
			       "  - exec: { run: [\"true\"], parse: key=value }\n"
			       "report:\n  headline:\n"
			       "    write: bytes\n"
			       "    1: { metric: seconds }\n"
			       "    02.sweep.1: { metric: value, better: lower }\n"
			       "    2.sweep.2.cycle.1: lat_p99\n"
			       "    exec: my_count\n"
			       "    3: { metric: free_b, better: lower }\n"
			       "    null: value\n"
			       "  compare: volume\n", &d);
	dump(&d);
	CU_ASSERT_EQUAL_FATAL(d.nerrors, 0);
	const struct plan_report *r = &p->report;
	CU_ASSERT_EQUAL(r->compare, COMPARE_VOLUME);
	CU_ASSERT_EQUAL_FATAL(r->nheadlines, 7);
	static const struct { const char *step, *metric; int better, line; } want[] = {
		{ "write", "bytes", 1, 15 },           /* unit B: higher */
		{ "1", "seconds", -1, 16 },            /* unit s: lower */
		{ "2.sweep.1", "value", -1, 17 },      /* as the plan says; numbers plain */
		{ "2.sweep.2.cycle.1", "lat_p99", -1, 18 }, /* us */
		{ "exec", "my_count", 0, 19 },         /* exec's own names: the unit decides later */
		{ "3", "free_b", -1, 20 },
		{ "null", "value", 1, 21 },            /* unit 1 */
	};
	for (size_t i = 0; i < N(want); i++) {
		CU_ASSERT_STRING_EQUAL(r->headlines[i].step, want[i].step);
		CU_ASSERT_STRING_EQUAL(r->headlines[i].metric, want[i].metric);
		CU_ASSERT_EQUAL(r->headlines[i].better, want[i].better);
		CU_ASSERT_EQUAL(r->headlines[i].mark.line, want[i].line);
		CU_ASSERT_EQUAL(r->headlines[i].mark.col, 5);
	}
	/* A step's own entry wins over its module's, given before or after it. */
	CU_ASSERT_PTR_EQUAL(plan_headline_for(p, "1", "write"), &r->headlines[1]);
	CU_ASSERT_PTR_EQUAL(plan_headline_for(p, "7", "write"), &r->headlines[0]);
	CU_ASSERT_PTR_EQUAL(plan_headline_for(p, "2.sweep.1", "null"), &r->headlines[2]);
	CU_ASSERT_PTR_EQUAL(plan_headline_for(p, "2.sweep.2.cycle.1", "randread"), &r->headlines[3]);
	CU_ASSERT_PTR_NULL(plan_headline_for(p, "5", "meta"));
	diag_release(&d);
	plan_free(p);

	p = parse(HDR DIRS STEPS "report: { compare: fs }\n", &d);
	CU_ASSERT_EQUAL(d.nerrors, 0);
	CU_ASSERT_EQUAL(p->report.compare, COMPARE_FS);
	CU_ASSERT_EQUAL(p->report.nheadlines, 0);
	diag_release(&d);
	plan_free(p);

	static const char *const lower[] = { "s", "ms", "us", "ns" };
	static const char *const higher[] = { "MB/s", "IO/s", "%", "B", "", "sec", NULL };
	for (size_t i = 0; i < N(lower); i++)
		CU_ASSERT_EQUAL(plan_unit_better(lower[i]), -1);
	for (size_t i = 0; i < N(higher); i++)
		CU_ASSERT_EQUAL(plan_unit_better(higher[i]), 1);
}

void register_plan_tests(void)
{
	CU_pSuite s = test_suite("plan");
	test_add(s, "invalid plans: first error's position and message", test_bad_plans);
	test_add(s, "paths, devices and confirm: length and control characters", test_long_text);
	test_add(s, "configs/*.yaml validate without errors", test_configs_validate);
	test_add(s, "configs/enumeration-churn.yaml enumerates with fts from a cold cache",
		 test_seed_enumeration_method);
	test_add(s, "every error of a file is collected", test_all_errors_collected);
	test_add(s, "limits: nesting depth, a list inside itself", test_limits);
	test_add(s, "parsed values: layouts, count/{n}, sizes, report", test_parsed_values);
	test_add(s, "defaults and volume names of dirs", test_defaults);
	test_add(s, "report.headline and compare: values, lookup, direction", test_headlines);
	test_add(s, "steps: cycle, sweep, nesting, marks", test_steps_nesting);
	test_add(s, "plan_params_bind: defaults, groups, lists, bindings", test_params_bind);
	test_add(s, "platform inference, explicit platform, --fs-map", test_platforms);
	test_add(s, "keep: true where it may be", test_keep_valid);
	test_add(s, "diagnostics: format, order, caret, suggestions", test_diag_format);
}
