/*
 * The snapshot step and volume conditions on Linux, end to end as root on
 * a loop-device image: btrfs snapshots kept and deleted (`keep: 3` over
 * five churn cycles leaves exactly three before teardown, counted by btrfs
 * itself from inside the run, and nothing after), defrag as btrfs's
 * autodefrag mount option, indexing recorded as nothing to do, and the
 * modules never walking rig's snapshot folder. Skipped, saying so, when
 * not root or when the btrfs tools are missing.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "provision_util.h"
#include "test.h"

static const char plan[] =
	"rig: 1\nname: snapshots\ntarget:\n  image: { path: %s/disk.img, size: 600M }\n"
	"layouts:\n  - name: one\n    partitions:\n"
	"      - { name: B, fs: btrfs, size: 60%%, defrag: on, indexing: off }\n"
	"      - { name: E, fs: ext4, size: rest }\n"
	"cache: { flush: false }\n"
	"steps:\n  - tree: { files: 60, dirs: 3 }\n"
	"  - cycle:\n      times: 5\n      steps:\n"
	"        - churn: { fraction: 20%% }\n        - snapshot: { keep: 3 }\n"
	"  - exec: { run: [sh, -c, \"echo kept=$(btrfs subvolume list {dir} 2>/dev/null | "
	"grep -c rig-snapshots/snap-)\"], parse: key=value }\n"
	"  - enumerate: {}\n";

static char *q(const char *out, const char *sql)
{
	return pt_run_query(out, sql);
}

static void test_keep_three(void)
{
	char *tmp = test_tmpdir();
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT, out = STRBUF_INIT, img = STRBUF_INIT;
	sb_addf(&p, "%s/plan.yaml", tmp);
	sb_addf(&out, "%s/out", tmp);
	sb_addf(&img, "%s/disk.img", tmp);
	sb_addf(&text, plan, tmp);
	CU_ASSERT_EQUAL_FATAL(test_write_file(p.buf, text.buf), 0);
	const char *args[] = { "run", "-q", "-o", out.buf, p.buf, NULL };
	char *o = NULL;
	int rc = pt_rig(NULL, args, &o);
	if (rc != 0)
		fprintf(stderr, "\n%s\n", o ? o : "");
	CU_ASSERT_EQUAL(rc, 0);
	/* counted by btrfs inside the run, after the last cycle: 3 on btrfs, 0 on ext4 */
	char *v = q(out.buf, "SELECT group_concat(v.name || '=' || s.value, ' ') FROM samples s "
			     "JOIN cells c ON c.seq = s.seq JOIN volumes v ON v.id = c.volume_id "
			     "WHERE c.module = 'exec' AND s.metric = 'kept' ORDER BY v.name");
	pt_eq_text("btrfs counts the snapshots kept", v, "B=3.0 E=0.0");
	free(v);
	/* the module's own record, cycle by cycle */
	v = q(out.buf, "SELECT group_concat(s.value, ' ') FROM samples s JOIN cells c ON c.seq = "
		       "s.seq WHERE c.module = 'snapshot' AND s.metric = 'snapshots' ORDER BY c.seq");
	pt_eq_text("snapshots per cycle", v, "1.0 2.0 3.0 3.0 3.0");
	free(v);
	v = q(out.buf, "SELECT count(*) FROM commands WHERE argv LIKE "
		       "'btrfs subvolume snapshot -r %/mnt/B %/mnt/B/.rig-snapshots/snap-000_' "
		       "AND status = 0");
	pt_eq_text("five snapshots taken", v, "5");
	free(v);
	/* two deleted beyond keep during the run, three at teardown */
	v = q(out.buf, "SELECT count(*) FROM commands WHERE argv LIKE 'btrfs subvolume delete "
		       "%/mnt/B/.rig-snapshots/snap-000_' AND status = 0");
	pt_eq_text("every snapshot deleted", v, "5");
	free(v);
	v = q(out.buf, "SELECT group_concat(value, '|') FROM notes WHERE key = 'skipped'");
	pt_has("ext4 is skipped with a note", v, "ext4 takes no snapshots");
	free(v);
	/* the snapshots are not walked: both volumes hold the same tree */
	v = q(out.buf, "SELECT count(DISTINCT s.value) FROM samples s JOIN cells c ON c.seq = "
		       "s.seq WHERE c.module = 'enumerate' AND s.metric = 'entries'");
	pt_eq_text("enumerate sees the same entries on both", v, "1");
	free(v);
	v = q(out.buf, "SELECT count(*) FROM journal WHERE action IN ('take-snapshot', "
		       "'delete-snapshot')");
	pt_eq_text("journaled", v, "10");
	free(v);
	v = q(out.buf, "SELECT facts_json FROM volumes WHERE name = 'B'");
	pt_has("defrag in the facts", v, "\"defrag\":\"on\",\"defrag_applied\":\"mount -o "
	       "autodefrag\"");
	pt_has("mounted with autodefrag", v, "autodefrag");
	pt_has("indexing in the facts", v, "\"indexing\":\"off\",\"indexing_applied\":\"nothing to "
	       "do: linux has no per-volume indexer\"");
	free(v);
	CU_ASSERT_NOT_EQUAL(access(img.buf, F_OK), 0); /* the image is gone */
	struct strbuf what = STRBUF_INIT;
	int n = pt_leftovers(tmp, &what);
	if (n)
		fprintf(stderr, "\nleft behind:\n%s", what.buf);
	CU_ASSERT_EQUAL(n, 0);
	sb_release(&what);
	free(o);
	test_rmtree(tmp);
	free(tmp);
	sb_release(&p);
	sb_release(&text);
	sb_release(&out);
	sb_release(&img);
}

static int have_btrfs(void)
{
	static const char *const at[] = { "/usr/bin/btrfs", "/usr/sbin/btrfs", "/sbin/btrfs",
					  "/bin/btrfs", NULL };
	for (size_t i = 0; at[i]; i++)
		if (access(at[i], X_OK) == 0)
			return 1;
	return 0;
}

void register_snapshot_tests(void)
{
	CU_pSuite s = test_suite("snapshot step and conditions on btrfs (Linux, root)");
	if (!pt_require_provisioning(s, "loop devices, mkfs.btrfs, mount and btrfs snapshots"))
		return;
	if (!have_btrfs()) {
		printf("SKIPPED suite '%s': the btrfs tool (btrfs-progs) is missing\n", s->pName);
		CU_set_suite_active(s, CU_FALSE);
		return;
	}
	test_add(s, "keep 3 over five churn cycles: 3 before teardown, none after",
		 test_keep_three);
}
