/*
 * The fake's state folder (main.c describes its files): key=value disk
 * files, partition lines, the disk counter, faults, and the mount points
 * as links into data/. A file that changes is written whole to NAME.tmp
 * and renamed over NAME, so a reader in another fake process sees the old
 * file or the new one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake.h"
#include "lib/files.h"
#include "lib/xalloc.h"

void fake_err(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

const char *fake_path(struct fake *fk, struct strbuf *p, const char *fmt, ...)
{
	va_list ap;
	sb_reset(p);
	sb_addf(p, "%s/", fk->dir);
	va_start(ap, fmt);
	sb_vaddf(p, fmt, ap);
	va_end(ap);
	return p->buf;
}

int fake_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int fake_has_bytes(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && st.st_size > 0;
}

static int write_all(int fd, const char *text, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, text, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		text += w;
		n -= (size_t)w;
	}
	return 0;
}

void fake_write(const char *path, const char *text)
{
	struct strbuf tmp = STRBUF_INIT;
	sb_addf(&tmp, "%s.tmp", path);
	int fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = fd < 0 ? -errno : write_all(fd, text, strlen(text));
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp.buf, path) < 0)
		rc = -errno;
	if (rc < 0)
		fake_err("fake-macos: cannot write %s: %s\n", path, strerror(-rc));
	sb_release(&tmp);
}

void fake_append(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int rc = fd < 0 ? -errno : write_all(fd, text, strlen(text));
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		fake_err("fake-macos: cannot append to %s: %s\n", path, strerror(-rc));
}

void fake_mkdir(struct fake *fk, const char *name)
{
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	if (files_mkdirs(fake_path(fk, &p, "%s", name), &err) < 0)
		fake_err("fake-macos: %s\n", err.buf);
	sb_release(&p);
	sb_release(&err);
}

char *fake_whole_of(const char *id)
{
	if (!strncmp(id, "/dev/", 5))
		id += 5;
	size_t n = 0;
	while (id[n] && !(id[n] == 's' && id[n + 1] >= '0' && id[n + 1] <= '9'))
		n++;
	return xstrndup(id, n);
}

long long fake_num(const char *s)
{
	return strtoll(s, NULL, 10);
}

char **fake_lines(const char *path, size_t *n)
{
	struct strbuf sb = STRBUF_INIT;
	char **v = NULL;
	size_t alloc = 0;
	*n = 0;
	files_read(path, &sb);
	for (char *at = sb.buf; *at;) {
		char *nl = strchr(at, '\n');
		size_t len = nl ? (size_t)(nl - at) : strlen(at);
		XGROW(v, *n + 1, alloc);
		v[(*n)++] = xstrndup(at, len);
		at += len + (nl ? 1 : 0);
	}
	sb_release(&sb);
	return v;
}

void fake_names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder path, without the hidden ones, in byte order (the
 * order of the script's globs and ls for these names). */
static char **list_dir(const char *path, size_t *n)
{
	char **v = NULL;
	size_t alloc = 0;
	*n = 0;
	DIR *d = opendir(path);
	if (!d)
		return NULL;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		XGROW(v, *n + 1, alloc);
		v[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), by_name);
	return v;
}

char *fake_kv(struct fake *fk, const char *disk, const char *key)
{
	struct strbuf p = STRBUF_INIT;
	size_t n, klen = strlen(key);
	char **lines = fake_lines(fake_path(fk, &p, "disks/%s", disk), &n);
	char *v = NULL;
	for (size_t i = 0; i < n && !v; i++) {
		if (!strncmp(lines[i], key, klen) && lines[i][klen] == '=')
			v = xstrdup(lines[i] + klen + 1);
	}
	fake_names_free(lines, n);
	sb_release(&p);
	return v ? v : xstrdup("");
}

void fake_kv_set(struct fake *fk, const char *disk, const char *key, const char *value)
{
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	size_t n, klen = strlen(key);
	char **lines = fake_lines(fake_path(fk, &p, "disks/%s", disk), &n);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(lines[i], key, klen) || lines[i][klen] != '=')
			sb_addf(&text, "%s\n", lines[i]);
	}
	sb_addf(&text, "%s=%s\n", key, value);
	fake_write(p.buf, text.buf);
	fake_names_free(lines, n);
	sb_release(&p);
	sb_release(&text);
}

long long fake_next_disk(struct fake *fk)
{
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	long long n = 2;
	if (files_read(fake_path(fk, &p, "next"), &text) == 0)
		n = fake_num(text.buf);
	sb_reset(&text);
	sb_addf(&text, "%lld\n", n + 1);
	fake_write(p.buf, text.buf);
	sb_release(&p);
	sb_release(&text);
	return n;
}

/* disks/ in number order: the names less "disk" as numbers (sort -n),
 * ties in byte order. */
static int by_number(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	const char *nx = strncmp(x, "disk", 4) ? x : x + 4, *ny = strncmp(y, "disk", 4) ? y : y + 4;
	long long vx = strtoll(nx, NULL, 10), vy = strtoll(ny, NULL, 10);
	if (vx != vy)
		return vx < vy ? -1 : 1;
	return strcmp(nx, ny);
}

char **fake_disk_ids(struct fake *fk, size_t *n)
{
	struct strbuf p = STRBUF_INIT;
	char **v = list_dir(fake_path(fk, &p, "disks"), n);
	if (*n)
		qsort(v, *n, sizeof(*v), by_number);
	for (size_t i = 0; i < *n; i++) {
		if (strncmp(v[i], "disk", 4)) { /* the script's sed put "disk" before any name */
			sb_reset(&p);
			sb_addf(&p, "disk%s", v[i]);
			free(v[i]);
			v[i] = xstrdup(p.buf);
		}
	}
	sb_release(&p);
	return v;
}

/* A count as test(1)'s -gt reads it: 1 with *v set, or 0 when it is not one. */
static int test_int(const char *s, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *s && !*end && errno == 0;
}

int fake_fault(struct fake *fk, const char *name, const char *arg)
{
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	const char *path = fake_path(fk, &p, "faults");
	if (!fake_is_file(path)) {
		sb_release(&p);
		return 0;
	}
	size_t n;
	char **lines = fake_lines(path, &n);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		/* the words NAME COUNT [ARG]; the line is written back as "NAME COUNT ARG" */
		char *w[3] = { "", "", "" };
		int k = 0;
		for (char *s = strtok(lines[i], " \t"); s && k < 3; s = strtok(NULL, " \t"))
			w[k++] = s;
		if (!k)
			continue;
		long long count;
		struct strbuf num = STRBUF_INIT;
		sb_adds(&num, w[1]);
		if (!found && !strcmp(w[0], name) && test_int(w[1], &count) && count > 0 &&
		    (!*w[2] || !strcmp(w[2], arg))) {
			found = 1;
			sb_reset(&num);
			sb_addf(&num, "%lld", count - 1);
		}
		sb_addf(&text, "%s %s %s\n", w[0], num.buf, w[2]);
		sb_release(&num);
	}
	fake_write(path, text.buf);
	fake_names_free(lines, n);
	sb_release(&p);
	sb_release(&text);
	return found;
}

/* --- partition lines --- */

static void part_parse(struct part *p, char *line)
{
	p->line = line;
	p->buf = xstrdup(line);
	char *at = p->buf, *end = p->buf + strlen(p->buf);
	for (int i = 0; i < P_FIELDS; i++) {
		p->f[i] = at;
		if (i == P_FIELDS - 1 || at == end) {
			at = end; /* the last field is the rest of the line; missing ones are "" */
			continue;
		}
		char *bar = strchr(at, '|');
		if (bar) {
			*bar = '\0';
			at = bar + 1;
		} else {
			at = end;
		}
	}
}

void fake_part_release(struct part *p)
{
	free(p->line);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

void fake_part_copy(struct part *to, const struct part *p)
{
	part_parse(to, xstrdup(p->line));
}

static char *join_fields(const char *const f[P_FIELDS])
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < P_FIELDS; i++)
		sb_addf(&sb, "%s%s", i ? "|" : "", f[i]);
	return sb_detach(&sb);
}

void fake_part_set(struct part *p, int i, const char *value)
{
	const char *f[P_FIELDS];
	for (int k = 0; k < P_FIELDS; k++)
		f[k] = k == i ? value : p->f[k];
	char *line = join_fields(f);
	fake_part_release(p);
	part_parse(p, line);
}

void fake_parts_add(struct parts *ps, const char *const f[P_FIELDS])
{
	XGROW(ps->v, ps->n + 1, ps->alloc);
	part_parse(&ps->v[ps->n++], join_fields(f));
}

static void parts_from_file(const char *path, struct parts *ps)
{
	size_t n;
	char **lines = fake_lines(path, &n);
	memset(ps, 0, sizeof(*ps));
	for (size_t i = 0; i < n; i++) {
		XGROW(ps->v, ps->n + 1, ps->alloc);
		part_parse(&ps->v[ps->n++], lines[i]);
	}
	free(lines);
}

int fake_parts_read(struct fake *fk, const char *disk, struct parts *ps)
{
	struct strbuf p = STRBUF_INIT;
	const char *path = fake_path(fk, &p, "parts/%s", disk);
	int rc = fake_is_file(path) ? 0 : -ENOENT;
	parts_from_file(path, ps);
	sb_release(&p);
	return rc;
}

static void parts_write_path(const char *path, const struct parts *ps)
{
	struct strbuf text = STRBUF_INIT;
	for (size_t i = 0; i < ps->n; i++)
		sb_addf(&text, "%s\n", ps->v[i].line);
	fake_write(path, text.buf);
	sb_release(&text);
}

void fake_parts_write(struct fake *fk, const char *disk, const struct parts *ps)
{
	struct strbuf p = STRBUF_INIT;
	parts_write_path(fake_path(fk, &p, "parts/%s", disk), ps);
	sb_release(&p);
}

void fake_parts_release(struct parts *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		fake_part_release(&ps->v[i]);
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}

static int part_matches(const struct part *p, enum part_key how, const char *key)
{
	switch (how) {
	case BY_ID_OR_VOLUME:
		return !strcmp(p->f[P_ID], key) || !strcmp(p->f[P_VOLUME], key);
	case BY_MOUNT:
		return !strcmp(p->f[P_MOUNT], key);
	case BY_ANY_NAME:
		return !strcmp(p->f[P_MOUNT], key) || !strcmp(p->f[P_VOLUME], key) ||
		       (!strncmp(key, "/dev/", 5) && !strcmp(p->f[P_VOLUME], key + 5));
	}
	return 0;
}

int fake_part_find(struct fake *fk, enum part_key how, const char *key, struct part *out)
{
	struct strbuf dir = STRBUF_INIT, p = STRBUF_INIT;
	size_t n;
	char **names = list_dir(fake_path(fk, &dir, "parts"), &n);
	int found = 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n && !found; i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", dir.buf, names[i]);
		if (!fake_is_file(p.buf))
			continue;
		struct parts ps;
		parts_from_file(p.buf, &ps);
		for (size_t k = 0; k < ps.n && !found; k++) {
			if (part_matches(&ps.v[k], how, key)) {
				fake_part_copy(out, &ps.v[k]);
				found = 1;
			}
		}
		fake_parts_release(&ps);
	}
	fake_names_free(names, n);
	sb_release(&dir);
	sb_release(&p);
	return found;
}

int fake_part_of(struct fake *fk, const char *id, struct part *out)
{
	char *disk = fake_whole_of(id);
	struct parts ps;
	int found = 0;
	memset(out, 0, sizeof(*out));
	fake_parts_read(fk, disk, &ps);
	for (size_t i = 0; i < ps.n && !found; i++) {
		if (!strcmp(ps.v[i].f[P_ID], id)) {
			fake_part_copy(out, &ps.v[i]);
			found = 1;
		}
	}
	fake_parts_release(&ps);
	free(disk);
	return found;
}

/* --- mounts: Volumes/NAME -> data/VOLUME --- */

/* The mount field of every line of volume, in every parts/ file. */
static void set_mount(struct fake *fk, const char *volume, const char *mount)
{
	struct strbuf dir = STRBUF_INIT, p = STRBUF_INIT;
	size_t n;
	char **names = list_dir(fake_path(fk, &dir, "parts"), &n);
	for (size_t i = 0; i < n; i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", dir.buf, names[i]);
		if (!fake_is_file(p.buf))
			continue;
		struct parts ps;
		int changed = 0;
		parts_from_file(p.buf, &ps);
		for (size_t k = 0; k < ps.n; k++) {
			if (!strcmp(ps.v[k].f[P_VOLUME], volume)) {
				fake_part_set(&ps.v[k], P_MOUNT, mount);
				changed = 1;
			}
		}
		if (changed)
			parts_write_path(p.buf, &ps);
		fake_parts_release(&ps);
	}
	fake_names_free(names, n);
	sb_release(&dir);
	sb_release(&p);
}

char *fake_mount(struct fake *fk, const char *volume, const char *name)
{
	struct strbuf dir = STRBUF_INIT, data = STRBUF_INIT, err = STRBUF_INIT;
	struct stat st;
	fake_path(fk, &dir, "Volumes/%s", name);
	for (int k = 1; lstat(dir.buf, &st) == 0; k++)
		fake_path(fk, &dir, "Volumes/%s %d", name, k);
	if (files_mkdirs(fake_path(fk, &data, "data/%s", volume), &err) < 0)
		fake_err("fake-macos: %s\n", err.buf);
	if (symlink(data.buf, dir.buf) < 0)
		fake_err("fake-macos: cannot link %s: %s\n", dir.buf, strerror(errno));
	set_mount(fk, volume, dir.buf);
	sb_release(&data);
	sb_release(&err);
	return sb_detach(&dir);
}

void fake_unmount(struct fake *fk, const char *volume)
{
	struct part l;
	fake_part_find(fk, BY_ID_OR_VOLUME, volume, &l);
	const char *m = l.line ? l.f[P_MOUNT] : "";
	if (*m && strcmp(m, "/")) {
		/* Only the fake's own links: a mount point a test wrote into the
		 * state (/System/Volumes/Update) is a real path of this machine. */
		struct stat st;
		if (lstat(m, &st) == 0 && S_ISLNK(st.st_mode))
			unlink(m);
		set_mount(fk, volume, "");
	}
	fake_part_release(&l);
}

void fake_rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct strbuf p = STRBUF_INIT;
		for (struct dirent *e; d && (e = readdir(d));) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			sb_reset(&p);
			sb_addf(&p, "%s/%s", path, e->d_name);
			fake_rmtree(p.buf);
		}
		if (d)
			closedir(d);
		sb_release(&p);
		rmdir(path);
	} else {
		unlink(path);
	}
}

void fake_drop_partitions(struct fake *fk, const char *disk)
{
	struct parts ps;
	if (fake_parts_read(fk, disk, &ps) < 0) {
		fake_parts_release(&ps);
		return;
	}
	struct strbuf p = STRBUF_INIT;
	for (size_t i = 0; i < ps.n; i++) {
		const char *vol = ps.v[i].f[P_VOLUME];
		if (!*vol)
			continue;
		fake_unmount(fk, vol);
		fake_rmtree(fake_path(fk, &p, "data/%s", vol));
		fake_rmtree(fake_path(fk, &p, "snaps/%s", vol));
		char *c = fake_whole_of(vol);
		if (strcmp(c, disk))
			unlink(fake_path(fk, &p, "disks/%s", c));
		free(c);
	}
	unlink(fake_path(fk, &p, "parts/%s", disk));
	fake_parts_release(&ps);
	sb_release(&p);
}

void fake_personality(struct fake *fk, const char *volume, const char *name)
{
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	fake_mkdir(fk, "personality");
	unlink(fake_path(fk, &p, "personality/%s", volume));
	if (*name) {
		sb_addf(&text, "%s\n", name);
		fake_write(p.buf, text.buf);
	}
	sb_release(&p);
	sb_release(&text);
}
