/*
 * Facts about Linux block devices, read from files only: /sys/block
 * (sizes, sector sizes, model, serial, partitions, holders, loop backing
 * files), /proc/self/mountinfo (what is mounted, and from which device /
 * is), /proc/swaps and, when it exists, the udev database (serials of SCSI
 * and USB disks, which sysfs does not show as text). Every path is read
 * under a root prefix, so the tests run the same code against recorded
 * trees in tests/fixtures/linux/.
 *
 * Decisions: a device counts as used when the device itself, one of its
 * partitions, or anything built on them (their holders: device mapper,
 * RAID, crypt, recursively) is mounted or is swap; "/" is looked up by the
 * mount's major:minor and, for file systems that report an anonymous
 * device (btrfs), by its source path. Rejected: parsing `lsblk --json`
 * (another program's output format to follow, and it reads the same
 * files); BLKGETSIZE64 and friends (opening a disk to ask about it, and
 * Linux-only calls in a file that builds everywhere).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/linux/linux.h"
#include "provision/provision.h"

/* --- reading files under a root --- */

static char *read_whole(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && sb.len < max)
		sb_add(&sb, buf, n);
	fclose(f);
	if (len)
		*len = sb.len;
	return sb_detach(&sb);
}

static char *trim_owned(char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	size_t k = 0;
	while (s[k] && isspace((unsigned char)s[k]))
		k++;
	memmove(s, s + k, n - k + 1);
	if (!*s) {
		free(s);
		return NULL;
	}
	return s;
}

char *prov_linux_attr(const char *root, const char *fmt, ...)
{
	struct strbuf p = STRBUF_INIT;
	sb_adds(&p, root);
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&p, fmt, ap);
	va_end(ap);
	char *s = trim_owned(read_whole(p.buf, 1 << 16, NULL));
	sb_release(&p);
	return s;
}

static int exists_under(const char *root, const char *fmt, const char *a, const char *b)
{
	struct strbuf p = STRBUF_INIT;
	sb_adds(&p, root);
	sb_addf(&p, fmt, a, b);
	int ok = access(p.buf, F_OK) == 0;
	sb_release(&p);
	return ok;
}

static uint64_t attr_u64(const char *root, const char *path, uint64_t def)
{
	char *s = prov_linux_attr(root, "%s", path);
	uint64_t v = def;
	if (s) {
		char *end;
		unsigned long long x = strtoull(s, &end, 10);
		if (end != s)
			v = x;
		free(s);
	}
	return v;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Entry names of a directory under root, sorted. */
static size_t list_dir(const char *root, const char *dir, char ***out)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s%s", root, dir);
	DIR *d = opendir(p.buf);
	sb_release(&p);
	char **v = NULL;
	size_t n = 0, alloc = 0;
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			XGROW(v, n + 1, alloc);
			v[n++] = xstrdup(e->d_name);
		}
		closedir(d);
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* --- the block devices of a machine --- */

struct bdev {
	char *name;       /* sda, sda1, dm-0 */
	char *dev;        /* "8:1" */
	char *parent;     /* a partition's disk, else NULL */
	char **holders;
	size_t nholders;
};

struct bdevs {
	struct bdev *v;
	size_t n, alloc;
};

static void add_bdev(struct bdevs *b, const char *root, const char *dir, const char *name,
		     const char *parent)
{
	XGROW(b->v, b->n + 1, b->alloc);
	struct bdev *d = &b->v[b->n++];
	memset(d, 0, sizeof(*d));
	d->name = xstrdup(name);
	d->parent = parent ? xstrdup(parent) : NULL;
	d->dev = prov_linux_attr(root, "%s/dev", dir);
	struct strbuf h = STRBUF_INIT;
	sb_addf(&h, "%s/holders", dir);
	d->nholders = list_dir(root, h.buf, &d->holders);
	sb_release(&h);
}

static void scan_bdevs(const char *root, struct bdevs *b)
{
	memset(b, 0, sizeof(*b));
	char **disks;
	size_t nd = list_dir(root, "/sys/block", &disks);
	struct strbuf dir = STRBUF_INIT, sub = STRBUF_INIT;
	for (size_t i = 0; i < nd; i++) {
		sb_reset(&dir);
		sb_addf(&dir, "/sys/block/%s", disks[i]);
		add_bdev(b, root, dir.buf, disks[i], NULL);
		char **ent;
		size_t ne = list_dir(root, dir.buf, &ent);
		for (size_t k = 0; k < ne; k++) {
			if (!exists_under(root, "/sys/block/%s/%s/partition", disks[i], ent[k]))
				continue;
			sb_reset(&sub);
			sb_addf(&sub, "%s/%s", dir.buf, ent[k]);
			add_bdev(b, root, sub.buf, ent[k], disks[i]);
		}
		free_list(ent, ne);
	}
	free_list(disks, nd);
	sb_release(&dir);
	sb_release(&sub);
}

static void free_bdevs(struct bdevs *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->v[i].name);
		free(b->v[i].dev);
		free(b->v[i].parent);
		free_list(b->v[i].holders, b->v[i].nholders);
	}
	free(b->v);
}

static struct bdev *find_name(struct bdevs *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].name, name))
			return &b->v[i];
	return NULL;
}

static struct bdev *find_dev(struct bdevs *b, const char *majmin)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].dev && !strcmp(b->v[i].dev, majmin))
			return &b->v[i];
	return NULL;
}

/* The kernel name behind a /dev path: resolved on this machine, the last
 * component in a fixture. */
static char *dev_name(const char *root, const char *path)
{
	if (strncmp(path, "/dev/", 5))
		return NULL;
	char buf[PATH_MAX];
	const char *p = path;
	if (!*root && realpath(path, buf))
		p = buf;
	const char *slash = strrchr(p, '/');
	return xstrdup(slash ? slash + 1 : p);
}

/* The set of devices a disk's data lives on or under: the device, its
 * partitions, and everything built on them. via[i] names the member of the
 * device that holder i is built on (for messages). */
struct family {
	char **names;
	char **via;
	size_t n, alloc;
};

static int in_family(const struct family *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], name))
			return (int)i;
	return -1;
}

static void family_add(struct family *f, const char *name, const char *via)
{
	if (in_family(f, name) >= 0)
		return;
	XGROW(f->names, f->n + 1, f->alloc);
	f->via = xrealloc(f->via, f->alloc * sizeof(*f->via));
	f->names[f->n] = xstrdup(name);
	f->via[f->n] = via ? xstrdup(via) : NULL;
	f->n++;
}

static void family_build(struct bdevs *b, const char *name, struct family *f)
{
	memset(f, 0, sizeof(*f));
	family_add(f, name, NULL);
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].parent && !strcmp(b->v[i].parent, name))
			family_add(f, b->v[i].name, NULL);
	for (size_t i = 0; i < f->n; i++) { /* grows while walking: holders of holders */
		struct bdev *d = find_name(b, f->names[i]);
		if (!d)
			continue;
		for (size_t k = 0; k < d->nholders; k++)
			family_add(f, d->holders[k], f->via[i] ? f->via[i] : f->names[i]);
	}
}

static void family_free(struct family *f)
{
	free_list(f->names, f->n);
	free_list(f->via, f->n);
}

/* "sdb1" or "dm-0 (on sde1)". */
static void describe_member(struct strbuf *sb, const struct family *f, int i)
{
	sb_adds(sb, f->names[i]);
	if (f->via[i])
		sb_addf(sb, " (built on %s)", f->via[i]);
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

struct mount_line {
	char *majmin, *dir, *opts, *fstype, *source, *superopts;
};

/* Split one mountinfo line in place; 0 on success. */
static int parse_mount_line(char *line, struct mount_line *m)
{
	char *field[6] = { 0 };
	char *save = NULL, *tok;
	int i = 0;
	for (tok = strtok_r(line, " \n", &save); tok && i < 6; tok = strtok_r(NULL, " \n", &save))
		field[i++] = tok;
	if (i < 6)
		return -1;
	/* Optional fields up to "-", then fstype, source, super options. */
	while (tok && strcmp(tok, "-"))
		tok = strtok_r(NULL, " \n", &save);
	if (!tok)
		return -1;
	m->majmin = field[2];
	m->dir = field[4];
	m->opts = field[5];
	m->fstype = strtok_r(NULL, " \n", &save);
	m->source = strtok_r(NULL, " \n", &save);
	m->superopts = strtok_r(NULL, " \n", &save);
	if (!m->fstype || !m->source)
		return -1;
	unescape(m->dir);
	unescape(m->source);
	return 0;
}

/* The member of the family a mount is from, or -1. */
static int mount_member(struct bdevs *b, const struct family *f, const char *root,
			const struct mount_line *m)
{
	struct bdev *d = find_dev(b, m->majmin);
	if (d) {
		int i = in_family(f, d->name);
		if (i >= 0)
			return i;
	}
	char *name = dev_name(root, m->source);
	int i = name ? in_family(f, name) : -1;
	free(name);
	return i;
}

static void check_mounts(const char *root, struct bdevs *b, const struct family *fam,
			 struct disk_facts *f)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/proc/self/mountinfo", root);
	char *text = read_whole(p.buf, 16 << 20, NULL);
	sb_release(&p);
	if (!text)
		return;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mount_line m;
		char *copy = xstrdup(line);
		if (parse_mount_line(copy, &m) == 0) {
			int i = mount_member(b, fam, root, &m);
			if (i >= 0) {
				struct strbuf sb = STRBUF_INIT;
				if (!strcmp(m.dir, "/") && !f->root_via) {
					sb_adds(&sb, "/ is mounted from ");
					describe_member(&sb, fam, i);
					f->root_via = sb_detach(&sb);
				} else if (strcmp(m.dir, "/") && !f->mounted) {
					describe_member(&sb, fam, i);
					sb_addf(&sb, " is mounted on %s", m.dir);
					f->mounted = sb_detach(&sb);
				}
				sb_release(&sb);
			}
		}
		free(copy);
	}
	free(text);
}

static void check_swaps_and_holders(const char *root, const struct family *fam,
				    struct disk_facts *f)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/proc/swaps", root);
	char *text = read_whole(p.buf, 1 << 20, NULL);
	sb_release(&p);
	if (text) {
		char *save = NULL;
		for (char *line = strtok_r(text, "\n", &save); line && !f->in_use;
		     line = strtok_r(NULL, "\n", &save)) {
			char *sp = strpbrk(line, " \t");
			if (sp)
				*sp = '\0';
			unescape(line);
			char *name = dev_name(root, line);
			int i = name ? in_family(fam, name) : -1;
			free(name);
			if (i >= 0) {
				struct strbuf sb = STRBUF_INIT;
				describe_member(&sb, fam, i);
				sb_adds(&sb, " is active swap");
				f->in_use = sb_detach(&sb);
			}
		}
		free(text);
	}
	if (!f->in_use) {
		for (size_t i = 0; i < fam->n; i++) {
			if (!fam->via[i])
				continue;
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "%s is held by %s (device mapper, RAID, LVM or crypt)",
				fam->via[i], fam->names[i]);
			f->in_use = sb_detach(&sb);
			break;
		}
	}
}

/* Serial numbers: sysfs text where the driver gives it (NVMe, virtio, some
 * SCSI), else VPD page 0x80 (unit serial number), else udev's database. */
static char *read_serial(const char *root, const char *disk, const char *majmin)
{
	char *s = prov_linux_attr(root, "/sys/block/%s/device/serial", disk);
	if (!s)
		s = prov_linux_attr(root, "/sys/block/%s/serial", disk);
	if (!s) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/sys/block/%s/device/vpd_pg80", root, disk);
		size_t len = 0;
		char *raw = read_whole(p.buf, 4096, &len);
		sb_release(&p);
		if (raw && len > 4) {
			size_t n = ((size_t)(unsigned char)raw[2] << 8) | (unsigned char)raw[3];
			if (n > len - 4)
				n = len - 4;
			s = trim_owned(xstrndup(raw + 4, n));
		}
		free(raw);
	}
	if (!s && majmin) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/run/udev/data/b%s", root, majmin);
		char *db = read_whole(p.buf, 1 << 16, NULL);
		sb_release(&p);
		const char *key = "E:ID_SERIAL_SHORT=";
		char *at = db ? strstr(db, key) : NULL;
		if (at) {
			at += strlen(key);
			s = trim_owned(xstrndup(at, strcspn(at, "\n")));
		}
		free(db);
	}
	return s;
}

void prov_linux_disk_facts(const char *root, const char *path, struct disk_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	f->rotational = -1;
	f->internal = -1;
	if (!*root) {
		struct stat st;
		if (stat(path, &st) < 0) {
			f->missing = xstrdup(strerror(errno));
			f->name = xstrdup(path);
			return;
		}
		if (!S_ISBLK(st.st_mode)) {
			f->missing = xstrdup("not a block device");
			f->name = xstrdup(path);
			return;
		}
	}
	f->name = dev_name(root, path);
	if (!f->name) {
		f->missing = xstrdup("not a device under /dev");
		f->name = xstrdup(path);
		return;
	}
	struct bdevs b;
	scan_bdevs(root, &b);
	struct bdev *me = find_name(&b, f->name);
	if (!me) {
		f->missing = xstrdup("no such block device in /sys/block");
		free_bdevs(&b);
		return;
	}
	f->exists = 1;
	f->whole = me->parent == NULL;
	const char *disk = me->parent ? me->parent : me->name;
	if (me->parent)
		f->parent = xstrdup(me->parent);
	struct strbuf dir = STRBUF_INIT;
	sb_addf(&dir, "/sys/block/%s", disk);
	if (me->parent)
		sb_addf(&dir, "/%s", me->name);
	struct strbuf a = STRBUF_INIT;
	sb_addf(&a, "%s/size", dir.buf);
	f->size = attr_u64(root, a.buf, 0) * 512; /* sysfs counts 512-byte units */
	sb_reset(&a);
	sb_addf(&a, "%s/ro", dir.buf);
	f->read_only = attr_u64(root, a.buf, 0) != 0;
	sb_reset(&a);
	sb_addf(&a, "/sys/block/%s/queue/logical_block_size", disk);
	f->sector = (uint32_t)attr_u64(root, a.buf, 0);
	sb_reset(&a);
	sb_addf(&a, "/sys/block/%s/queue/rotational", disk);
	f->rotational = (int)attr_u64(root, a.buf, (uint64_t)-1);
	if (f->rotational != 0 && f->rotational != 1)
		f->rotational = -1;
	sb_reset(&a);
	sb_addf(&a, "/sys/block/%s/removable", disk);
	f->removable = attr_u64(root, a.buf, 0) != 0;
	sb_release(&a);
	sb_release(&dir);
	f->model = prov_linux_attr(root, "/sys/block/%s/device/model", disk);
	struct bdev *dd = find_name(&b, disk);
	f->serial = read_serial(root, disk, dd ? dd->dev : NULL);
	/* An unattached loop device has no loop/ folder yet. */
	f->is_loop = exists_under(root, "/sys/block/%s/loop%s", disk, "") ||
		     (!strncmp(disk, "loop", 4) && !exists_under(root, "/sys/block/%s/device%s", disk, ""));
	if (f->is_loop)
		f->loop_backing = prov_linux_attr(root, "/sys/block/%s/loop/backing_file", disk);
	f->is_virtual = !f->is_loop && !exists_under(root, "/sys/block/%s/device%s", disk, "");

	struct family fam;
	family_build(&b, f->name, &fam);
	check_mounts(root, &b, &fam, f);
	check_swaps_and_holders(root, &fam, f);
	family_free(&fam);
	free_bdevs(&b);
}

void prov_linux_disk_keys(const char *root, const struct disk_facts *f, const char *what,
		     struct target_keys *keys)
{
	if (!f->exists)
		return;
	char *dev = prov_linux_attr(root, "/sys/block/%s/dev", f->whole ? f->name : f->parent);
	if (!dev)
		return;
	struct strbuf key = STRBUF_INIT;
	sb_addf(&key, "disk-%s", dev);
	if (f->serial)
		sb_addf(&key, "-%s", f->serial);
	prov_target_keys_add(keys, key.buf, what);
	const char *b = f->loop_backing;
	if (b && b[0] == '/') {
		const char *deleted = strstr(b, " (deleted)");
		struct strbuf file = STRBUF_INIT, w = STRBUF_INIT;
		sb_add(&file, b, deleted ? (size_t)(deleted - b) : strlen(b));
		sb_addf(&w, "%s (the loop device of image %s)", what, file.buf);
		prov_target_keys_image(keys, file.buf, w.buf);
		sb_release(&file);
		sb_release(&w);
	}
	sb_release(&key);
	free(dev);
}

size_t prov_linux_list_disks(const char *root, char ***names)
{
	char **all;
	size_t n = list_dir(root, "/sys/block", &all), k = 0;
	for (size_t i = 0; i < n; i++) {
		int keep = 1;
		if (!strncmp(all[i], "loop", 4)) {
			char *b = prov_linux_attr(root, "/sys/block/%s/loop/backing_file", all[i]);
			keep = b != NULL;
			free(b);
		}
		if (keep)
			all[k++] = all[i];
		else
			free(all[i]);
	}
	*names = all;
	return k;
}

/* Whether a loop device's backing_file text names file (the kernel adds
 * " (deleted)" when the file is gone). */
static int same_backing(const char *backing, const char *file)
{
	size_t n = strlen(file);
	return !strncmp(backing, file, n) && (!backing[n] || !strcmp(backing + n, " (deleted)"));
}

char *prov_linux_loop_of(const char *root, const char *file)
{
	char **all;
	size_t n = list_dir(root, "/sys/block", &all);
	char *found = NULL;
	for (size_t i = 0; i < n && !found; i++) {
		if (strncmp(all[i], "loop", 4))
			continue;
		char *b = prov_linux_attr(root, "/sys/block/%s/loop/backing_file", all[i]);
		if (b && same_backing(b, file))
			found = xstrdup(all[i]);
		free(b);
	}
	free_list(all, n);
	return found;
}

static char *mount_entry(const char *root, const char *dir, int want_opts)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/proc/self/mountinfo", root);
	char *text = read_whole(p.buf, 16 << 20, NULL);
	sb_release(&p);
	if (!text)
		return NULL;
	char *found = NULL, *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mount_line m;
		if (parse_mount_line(line, &m) == 0 && !strcmp(m.dir, dir)) {
			struct strbuf sb = STRBUF_INIT;
			if (want_opts)
				sb_addf(&sb, "%s;%s", m.opts, m.superopts ? m.superopts : "");
			else
				sb_adds(&sb, m.source);
			free(found); /* the last one is on top */
			found = sb_detach(&sb);
		}
	}
	free(text);
	return found;
}

char *prov_linux_mount_options(const char *root, const char *dir)
{
	return mount_entry(root, dir, 1);
}

int prov_linux_is_mounted(const char *root, const char *dir)
{
	char *s = mount_entry(root, dir, 0);
	free(s);
	return s != NULL;
}

/* Whether path is prefix or below it. */
static int path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

size_t prov_linux_procs_using(const char *root, const char *const *needles, struct strbuf *what)
{
	char **pids;
	size_t np = list_dir(root, "/proc", &pids), found = 0;
	long self = (long)getpid();
	for (size_t i = 0; i < np; i++) {
		char *end;
		long pid = strtol(pids[i], &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/proc/%ld/cmdline", root, pid);
		size_t len = 0;
		char *cmd = read_whole(p.buf, 1 << 16, &len);
		sb_reset(&p);
		sb_addf(&p, "%s/proc/%ld/cwd", root, pid);
		char cwd[4096];
		ssize_t cn = readlink(p.buf, cwd, sizeof(cwd) - 1);
		cwd[cn > 0 ? cn : 0] = '\0';
		sb_release(&p);
		int hit = 0;
		for (size_t k = 0; needles[k] && !hit; k++) {
			hit = cn > 0 && path_under(cwd, needles[k]);
			for (size_t off = 0; cmd && off < len && !hit; off += strlen(cmd + off) + 1) {
				/* loop1 is not loop10, d.img not d.img2 */
				const char *m = strstr(cmd + off, needles[k]);
				hit = m && !isdigit((unsigned char)m[strlen(needles[k])]);
			}
		}
		if (hit) {
			for (size_t off = 0; cmd && off + 1 < len; off++)
				if (!cmd[off])
					cmd[off] = ' ';
			if (what)
				sb_addf(what, "%sPID %ld (%s)", found ? ", " : "", pid,
					cmd && *cmd ? cmd : "?");
			found++;
		}
		free(cmd);
	}
	free_list(pids, np);
	return found;
}

size_t prov_linux_mounts_under(const char *root, const char *prefix, struct linux_mount **out)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/proc/self/mountinfo", root);
	char *text = read_whole(p.buf, 16 << 20, NULL);
	sb_release(&p);
	*out = NULL;
	if (!text)
		return 0;
	size_t n = 0, len = strlen(prefix);
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mount_line m;
		if (parse_mount_line(line, &m) < 0 || strncmp(m.dir, prefix, len) || m.dir[len] != '/')
			continue;
		*out = xrealloc(*out, (n + 1) * sizeof(**out));
		(*out)[n].dir = xstrdup(m.dir);
		(*out)[n].source = xstrdup(m.source);
		(*out)[n].fstype = xstrdup(m.fstype);
		n++;
	}
	free(text);
	return n;
}

void prov_linux_mounts_free(struct linux_mount *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].dir);
		free(m[i].source);
		free(m[i].fstype);
	}
	free(m);
}

size_t prov_linux_partition_count(const char *root, const char *disk)
{
	struct strbuf dir = STRBUF_INIT;
	sb_addf(&dir, "/sys/block/%s", disk);
	char **ent;
	size_t ne = list_dir(root, dir.buf, &ent), n = 0;
	for (size_t k = 0; k < ne; k++)
		n += exists_under(root, "/sys/block/%s/%s/partition", disk, ent[k]);
	free_list(ent, ne);
	sb_release(&dir);
	return n;
}
