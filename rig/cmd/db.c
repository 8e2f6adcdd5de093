/*
 * --db URL of rig report and rig compare: runs of the shared store
 * (store/store_pg.h) pulled into SQLite stores of their own, so that the
 * reports' code reads them as it reads run folders, unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "rig/cmd/cmd.h"
#include "store/store_pg.h"

int cmd_db_pull(const char *cmd, const char *url, char *const *refs, const char *const *dirs, size_t n)
{
	struct strbuf err = STRBUF_INIT, path = STRBUF_INIT;
	int rc = 0;
	if (rep_pg_check_conninfo(url, &err) < 0) {
		fprintf(stderr, "rig %s: %s\n", cmd, err.buf);
		sb_release(&err);
		return EXIT_USAGE;
	}
	struct pgstore *p = store_pg_connect(url, &err);
	if (!p)
		rc = -EIO;
	for (size_t i = 0; i < n && rc == 0; i++) {
		sb_reset(&path);
		sb_addf(&path, "%s/results.db", dirs[i]);
		rc = store_pg_pull(p, refs[i], path.buf, &err);
	}
	if (rc < 0)
		fprintf(stderr, "rig %s: %s\n", cmd, err.buf);
	store_pg_close(p);
	sb_release(&err);
	sb_release(&path);
	return rc < 0 ? EXIT_FAILED : EXIT_OK;
}

char *cmd_db_tmpdir(const char *cmd, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	struct strbuf root = STRBUF_INIT, sub = STRBUF_INIT;
	sb_addf(&root, "%s/rig-db-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root.buf)) {
		fprintf(stderr, "rig %s: cannot create a temporary folder %s: %s\n", cmd, root.buf,
			strerror(errno));
		sb_release(&root);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		sb_reset(&sub);
		sb_addf(&sub, "%s/%zu", root.buf, i + 1);
		if (mkdir(sub.buf, 0700) < 0) {
			fprintf(stderr, "rig %s: cannot create %s: %s\n", cmd, sub.buf, strerror(errno));
			cmd_db_rmtmp(sb_detach(&root), i);
			sb_release(&sub);
			return NULL;
		}
	}
	sb_release(&sub);
	return sb_detach(&root);
}

void cmd_db_rmtmp(char *root, size_t n)
{
	static const char *const names[] = { "results.db", "results.db-wal", "results.db-shm",
					     "results.db-journal" };
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			sb_reset(&sb);
			sb_addf(&sb, "%s/%zu/%s", root, i + 1, names[k]);
			unlink(sb.buf);
		}
		sb_reset(&sb);
		sb_addf(&sb, "%s/%zu", root, i + 1);
		rmdir(sb.buf);
	}
	rmdir(root);
	sb_release(&sb);
	free(root);
}
