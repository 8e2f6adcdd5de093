/*
 * Helpers for the provisioning suites; see provision_util.h. Commands run
 * through rig's own spawner (argument vectors, never a shell).
 */
#include "provision_util.h"

#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/spawn.h"
#include "provision/linux/linux.h"
#include "test.h"

int pt_cmd(const char *const *argv, char **out)
{
	struct spawn_result r;
	struct strbuf err = STRBUF_INIT;
	struct spawn_opts o = { .split = 1, .cancel = NULL };
	int rc = plat_spawn_run_opts(NULL, argv, NULL, &o, &r, &err);
	if (out)
		*out = rc == 0 ? xstrdup(r.stdout_text) : sb_detach(&err);
	sb_release(&err);
	if (rc < 0)
		return -1;
	int status = r.exited ? r.status : -1;
	plat_spawn_result_release(&r);
	return status;
}

void pt_plant(const char *root, const char *path, const char *text)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/%s", root, path);
	char *dir = xstrdup(p.buf);
	*strrchr(dir, '/') = 0;
	const char *mk[] = { "mkdir", "-p", dir, NULL };
	CU_ASSERT_EQUAL(pt_cmd(mk, NULL), 0);
	free(dir);
	CU_ASSERT_EQUAL(test_write_file(p.buf, text), 0);
	sb_release(&p);
}

int pt_script(const char *root, const char *script, char **out)
{
	struct strbuf s = STRBUF_INIT;
	sb_addf(&s, "%s/%s", root, script);
	const char *argv[] = { "sh", s.buf, NULL };
	int rc = pt_cmd(argv, out);
	sb_release(&s);
	return rc;
}

char *pt_query(const char *db, const char *sql)
{
	sqlite3 *h;
	char *res = NULL;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return NULL;
	}
	sqlite3_busy_timeout(h, 2000);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			res = xstrdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return res;
}

char *pt_run_query(const char *run_dir, const char *sql)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/results.db", run_dir);
	char *v = access(p.buf, R_OK) == 0 ? pt_query(p.buf, sql) : NULL;
	sb_release(&p);
	return v;
}

char *pt_config(const char *name, const char *const *pairs)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/configs/%s.yaml", test_src(), name);
	char *text = test_read_file(p.buf, NULL);
	sb_release(&p);
	if (!text)
		return NULL;
	for (size_t i = 0; pairs[i] && pairs[i + 1]; i += 2) {
		char *at = strstr(text, pairs[i]);
		if (!at) {
			fprintf(stderr, "\nconfigs/%s.yaml no longer contains '%s'\n", name, pairs[i]);
			free(text);
			return NULL;
		}
		struct strbuf sb = STRBUF_INIT;
		sb_add(&sb, text, (size_t)(at - text));
		sb_adds(&sb, pairs[i + 1]);
		sb_adds(&sb, at + strlen(pairs[i]));
		free(text);
		text = sb_detach(&sb);
	}
	return text;
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

int pt_leftovers(const char *dir, struct strbuf *what)
{
	int n = 0;
	/* Mounts, deepest first (mountinfo lists them in mount order). */
	char *mi = test_read_file("/proc/self/mountinfo", NULL);
	char *mounts[64];
	size_t nm = 0;
	for (char *line = mi ? strtok(mi, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		char mp[4096];
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && under(mp, dir) && nm < 64)
			mounts[nm++] = xstrdup(mp);
	}
	free(mi);
	while (nm-- > 0) {
		sb_addf(what, "mounted: %s\n", mounts[nm]);
		const char *argv[] = { "umount", "--lazy", mounts[nm], NULL };
		pt_cmd(argv, NULL);
		free(mounts[nm]);
		n++;
	}
	/* Loop devices over files under dir. */
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "loop", 4))
			continue;
		char *b = prov_linux_attr("", "/sys/block/%s/loop/backing_file", e->d_name);
		if (b && under(b, dir)) {
			struct strbuf dev = STRBUF_INIT;
			sb_addf(&dev, "/dev/%s", e->d_name);
			sb_addf(what, "attached: %s over %s\n", dev.buf, b);
			if (prov_linux_partition_count("", e->d_name)) {
				const char *px[] = { "partx", "--delete", dev.buf, NULL };
				pt_cmd(px, NULL);
			}
			const char *lo[] = { "losetup", "--detach", dev.buf, NULL };
			pt_cmd(lo, NULL);
			sb_release(&dev);
			n++;
		}
		free(b);
	}
	if (d)
		closedir(d);
	/* And what losetup itself says. */
	char *out = NULL;
	const char *la[] = { "losetup", "-a", NULL };
	if (pt_cmd(la, &out) == 0 && out && strstr(out, dir)) {
		sb_addf(what, "losetup -a still lists %s:\n%s", dir, out);
		n++;
	}
	free(out);
	return n;
}

int pt_rig(const char *bin_dir, const char *const *args, char **out)
{
	char *old = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	if (bin_dir) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s:%s", bin_dir, old ? old : "/usr/sbin:/usr/bin:/sbin:/bin");
		setenv("PATH", p.buf, 1);
		sb_release(&p);
	}
	int rc = test_run_rig(args, out);
	if (bin_dir) {
		if (old)
			setenv("PATH", old, 1);
		else
			unsetenv("PATH");
	}
	free(old);
	return rc;
}

int pt_require_provisioning(CU_pSuite s, const char *why)
{
	if (!test_require_root(s, why))
		return 0;
	if (!pt_have_tools()) {
		printf("SKIPPED suite '%s': sgdisk, losetup, partx or mkfs.* missing (./setup)\n",
		       s->pName);
		CU_set_suite_active(s, CU_FALSE);
		return 0;
	}
	return 1;
}

int pt_have_tools(void)
{
	static const char *const tools[] = { "sgdisk", "losetup", "partx", "mkfs.ext4",
					     "mkfs.xfs", "mkfs.btrfs", NULL };
	static const char *const dirs[] = { "/usr/sbin", "/usr/bin", "/sbin", "/bin", NULL };
	for (size_t i = 0; tools[i]; i++) {
		int found = 0;
		for (size_t k = 0; dirs[k] && !found; k++) {
			struct strbuf p = STRBUF_INIT;
			sb_addf(&p, "%s/%s", dirs[k], tools[i]);
			found = access(p.buf, X_OK) == 0;
			sb_release(&p);
		}
		if (!found)
			return 0;
	}
	return 1;
}

void pt_eq_text(const char *what, const char *got, const char *want)
{
	int ok = got && !strcmp(got, want);
	if (!ok)
		fprintf(stderr, "\n%s:\n--- want\n%s--- got\n%s---\n", what, want, got ? got : "(none)");
	CU_ASSERT(ok);
}

void pt_has(const char *what, const char *got, const char *want)
{
	int ok = got && strstr(got, want);
	if (!ok)
		fprintf(stderr, "\n%s lacks:\n%s\nin:\n%s\n", what, want, got ? got : "(none)");
	CU_ASSERT(ok);
}

void pt_lacks(const char *what, const char *got, const char *bad)
{
	int ok = got && !strstr(got, bad);
	if (!ok)
		fprintf(stderr, "\n%s has (it must not):\n%s\nin:\n%s\n", what, bad,
			got ? got : "(none)");
	CU_ASSERT(ok);
}

void pt_mac_clean(const char *state)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/Volumes", state);
	char *out = NULL;
	const char *ls[] = { "ls", "-A", p.buf, NULL };
	CU_ASSERT_EQUAL(pt_cmd(ls, &out), 0);
	pt_eq_text("mounted volumes left (fake Volumes/)", out, "");
	free(out);
	sb_release(&p);
}
