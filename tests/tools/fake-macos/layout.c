/*
 * diskutil's verbs that change a disk's partitions: partitionDisk, apfs
 * resizeContainer (and its `limits -plist`) and resizeVolume. Sizes follow
 * diskutil: a GPT disk gets a 209715200-byte EFI partition at 20480,
 * partitions start on 1 MiB boundaries, the last one is stretched to the
 * end unless a "Free Space" triplet follows it, and "R" is what is left.
 * The lines printed follow the recorded outputs (tests/fixtures/macos/);
 * resizeVolume's and the -69521 wording are the fake's own.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "lib/xalloc.h"

/* One triplet of the command line, and where it goes. */
struct slot {
	const char *fmt, *name, *size;
	long long bytes, start;
	const char *fs, *cs; /* fs: apfs, hfs, exfat, msdos; cs: a case-sensitive personality or "" */
	int free_space;
};

static long long ceil_mib(long long v)
{
	return (v + MIB - 1) / MIB * MIB;
}

/* A diskutil size: 123, 123B, 10G (powers of ten), 50% of total. 0 when it is not one. */
static int bytes_of(const char *s, long long total, long long *v)
{
	static const struct {
		char unit;
		long long mult;
	} units[] = { { 'B', 1 }, { 'K', 1000 }, { 'M', 1000000 }, { 'G', 1000000000 },
		      { 'T', 1000000000000 } };
	size_t n = strlen(s);
	long long mult = 1;
	int percent = n > 0 && s[n - 1] == '%';
	if (percent)
		n--;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]) && n > 0 && !percent; i++) {
		if (s[n - 1] == units[i].unit) {
			mult = units[i].mult;
			n--;
			break;
		}
	}
	char *digits = xstrndup(s, n), *end;
	long long x = strtoll(digits, &end, 10);
	int ok = n > 0 && !*end;
	free(digits);
	*v = percent ? total * x / 100 : x * mult;
	return ok;
}

/* 1234567 -> 1,234,567 (diskutil's byte counts). */
static const char *commas(long long v, char out[40])
{
	char digits[32];
	snprintf(digits, sizeof(digits), "%lld", v < 0 ? -v : v);
	size_t n = strlen(digits), k = 0;
	if (v < 0)
		out[k++] = '-';
	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	out[k] = '\0';
	return out;
}

static int file_system(struct slot *s)
{
	static const struct {
		const char *fmt, *fs, *cs;
	} fmts[] = {
		{ "APFS", "apfs", "" },
		{ "JHFS+", "hfs", "" },
		{ "EXFAT", "exfat", "" },
		{ "MS-DOS FAT32", "msdos", "" },
		{ "CASE-SENSITIVE APFS", "apfs", "Case-sensitive APFS" },
		{ "CASE-SENSITIVE JOURNALED HFS+", "hfs", "Case-sensitive Journaled HFS+" },
	};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		const char *a = s->fmt, *b = fmts[i].fmt;
		while (*a && *b && toupper((unsigned char)*a) == *b) {
			a++;
			b++;
		}
		if (!*a && !*b) {
			s->fs = fmts[i].fs;
			s->cs = fmts[i].cs;
			return 1;
		}
	}
	return 0;
}

/*
 * Where the triplets' partitions go, from at to end (checked before
 * anything changes): sizes in bytes, R the rest, the last real partition
 * stretched to the end unless Free Space follows it. Prints diskutil's
 * error and returns -1 when they do not fit.
 */
static int lay_out(struct slot *s, size_t n, long long total, long long at, long long end)
{
	long long used = 0;
	size_t rest = n, last_real = n;
	for (size_t i = 0; i < n; i++) {
		s[i].free_space = !strcmp(s[i].fmt, "Free Space");
		if (!s[i].free_space)
			last_real = i;
		if (!strcmp(s[i].size, "R")) {
			rest = i;
			continue;
		}
		if (!bytes_of(s[i].size, total, &s[i].bytes)) {
			printf("Error: -69742: Invalid size %s\n", s[i].size);
			return -1;
		}
	}
	if (rest < n) {
		for (size_t i = 0; i < n; i++)
			used += i == rest ? 0 : ceil_mib(s[i].bytes);
		s[rest].bytes = (end - ceil_mib(at) - used) / MIB * MIB;
	}
	for (size_t i = 0; i < n; i++) {
		long long sz = s[i].bytes;
		if (s[i].free_space) {
			at += sz;
			continue;
		}
		at = ceil_mib(at);
		if (i == last_real && i == n - 1)
			sz = (end - at) / MIB * MIB;
		if (sz <= 0 || at + sz > end) {
			puts("Error: -69519: The target disk is too small for this operation");
			return -1;
		}
		if (!file_system(&s[i])) {
			printf("Error: -69851: unknown file system %s\n", s[i].fmt);
			return -1;
		}
		s[i].start = at;
		s[i].bytes = sz;
		at += sz;
	}
	return 0;
}

static struct slot *slots_of(int argc, char **argv, size_t *n)
{
	*n = (size_t)argc / 3;
	struct slot *s = xcalloc(*n ? *n : 1, sizeof(*s));
	for (size_t i = 0; i < *n; i++) {
		s[i].fmt = argv[3 * i];
		s[i].name = argv[3 * i + 1];
		s[i].size = argv[3 * i + 2];
	}
	return s;
}

static const char *content_of_fs(const char *fs)
{
	return !strcmp(fs, "apfs") ? "Apple_APFS" : !strcmp(fs, "hfs") ? "Apple_HFS"
								: "Microsoft Basic Data";
}

/* Partition number k of disk for slot s, appended to ps: an APFS one gets
 * a container (the next disk number) whose volume is CONTAINERs1. */
static void add_slot(struct fake *fk, const char *disk, int k, const struct slot *s,
		     struct parts *ps)
{
	struct strbuf pid = STRBUF_INIT, vol = STRBUF_INIT, start = STRBUF_INIT, size = STRBUF_INIT,
		      label = STRBUF_INIT, p = STRBUF_INIT, text = STRBUF_INIT;
	sb_addf(&pid, "%ss%d", disk, k);
	sb_adds(&vol, pid.buf);
	sb_addf(&start, "%lld", s->start);
	sb_addf(&size, "%lld", s->bytes);
	if (!strcmp(s->fs, "apfs")) {
		long long c = fake_next_disk(fk);
		sb_addf(&text, "kind=container\nsize=%lld\nstore=%s\nparent=%s\n", s->bytes, pid.buf,
			disk);
		fake_write(fake_path(fk, &p, "disks/disk%lld", c), text.buf);
		sb_reset(&vol);
		sb_addf(&vol, "disk%llds1", c);
	}
	sb_adds(&label, s->name);
	for (size_t i = 0; !strcmp(s->fs, "msdos") && i < label.len; i++)
		label.buf[i] = (char)toupper((unsigned char)label.buf[i]); /* FAT labels are capitals */
	fake_personality(fk, vol.buf, s->cs);
	const char *f[P_FIELDS] = { pid.buf, content_of_fs(s->fs), s->fs, label.buf, start.buf,
				    size.buf, vol.buf, "" };
	fake_parts_add(ps, f);
	sb_release(&pid);
	sb_release(&vol);
	sb_release(&start);
	sb_release(&size);
	sb_release(&label);
	sb_release(&p);
	sb_release(&text);
}

/* The triplets of `partitionDisk DISK [N] GPT fmt name size ...`: 0 with
 * *disk and *first (their index) set, or 1 with diskutil's error printed. */
static int partition_args(struct fake *fk, int argc, char **argv, const char **disk, int *first)
{
	struct strbuf p = STRBUF_INIT;
	int i = 1;
	*disk = argc > 0 ? argv[0] : "";
	if (!strncmp(*disk, "/dev/", 5))
		*disk += 5;
	char *kind = fake_kv(fk, *disk, "kind");
	int found = fake_is_file(fake_path(fk, &p, "disks/%s", *disk)) && strcmp(kind, "container");
	free(kind);
	sb_release(&p);
	if (!found) {
		printf("Could not find disk: %s\n", *disk);
		return 1;
	}
	if (i < argc && isdigit((unsigned char)argv[i][0])) /* the partition count */
		i++;
	if (i >= argc || strcmp(argv[i], "GPT")) {
		printf("fake-macos: only GPT is modelled, not '%s'\n", i < argc ? argv[i] : "");
		return 1;
	}
	*first = ++i;
	if ((argc - i) % 3 || argc == i) {
		puts("Error: -69893: The number of partitions and their format, name and size "
		     "triplets do not match");
		return 1;
	}
	return 0;
}

/* The disk's new partition map, after EFI the slots', formatted and mounted. */
static void partition_apply(struct fake *fk, const char *disk, const struct slot *s, size_t n)
{
	struct parts ps = { 0 };
	struct strbuf efi = STRBUF_INIT, efi_size = STRBUF_INIT;
	fake_drop_partitions(fk, disk);
	puts("Creating the partition map");
	sb_addf(&efi, "%ss1", disk);
	sb_addf(&efi_size, "%lld", EFI_BYTES);
	const char *f[P_FIELDS] = { efi.buf, "EFI", "msdos", "EFI", "20480", efi_size.buf, efi.buf, "" };
	fake_parts_add(&ps, f);
	for (size_t i = 0, k = 2; i < n; i++) {
		if (!s[i].free_space)
			add_slot(fk, disk, (int)k++, &s[i], &ps);
	}
	fake_parts_write(fk, disk, &ps);
	puts("Waiting for partitions to activate");
	for (size_t i = 0; i < ps.n; i++) {
		char **pf = ps.v[i].f;
		if (!strcmp(pf[P_CONTENT], "EFI"))
			continue;
		printf("Formatting %s as %s with name %s\n", pf[P_ID], pf[P_FS], pf[P_NAME]);
		free(fake_mount(fk, pf[P_VOLUME], pf[P_NAME]));
	}
	fake_parts_release(&ps);
	sb_release(&efi);
	sb_release(&efi_size);
}

/* diskutil partitionDisk DISK [N] GPT fmt name size ... */
int fake_partition(struct fake *fk, int argc, char **argv)
{
	const char *disk;
	int first;
	if (partition_args(fk, argc, argv, &disk, &first))
		return 1;
	printf("Started partitioning on %s\nUnmounting disk\n", disk);
	if (fake_fault(fk, "partitionDisk-69888", "")) {
		puts("Error: -69888: Couldn't unmount disk");
		return 1;
	}
	char *total_s = fake_kv(fk, disk, "size");
	long long total = fake_num(total_s);
	size_t n;
	struct slot *s = slots_of(argc - first, argv + first, &n);
	int rc = lay_out(s, n, total, ceil_mib(20480 + EFI_BYTES), total - GPT_TAIL) < 0;
	if (!rc) {
		partition_apply(fk, disk, s, n);
		printf("Finished partitioning on %s\n", disk);
	}
	free(total_s);
	free(s);
	return rc;
}

/* Where the partition after id starts, or the end of the usable disk. */
static long long next_start(struct fake *fk, const char *id)
{
	char *disk = fake_whole_of(id), *size = fake_kv(fk, disk, "size");
	long long at = fake_num(size) - GPT_TAIL;
	struct parts ps;
	fake_parts_read(fk, disk, &ps);
	for (size_t i = 0; i + 1 < ps.n; i++) {
		if (!strcmp(ps.v[i].f[P_ID], id)) {
			if (*ps.v[i + 1].f[P_OFFSET])
				at = fake_num(ps.v[i + 1].f[P_OFFSET]);
			break;
		}
	}
	fake_parts_release(&ps);
	free(disk);
	free(size);
	return at;
}

/* A store's MinimumSizePreferred: its container's `minpref`, or 1 GiB. */
static long long minpref_of(struct fake *fk, const char *id)
{
	struct part l;
	fake_part_of(fk, id, &l);
	char *c = fake_whole_of(l.line ? l.f[P_VOLUME] : ""), *m = fake_kv(fk, c, "minpref");
	long long v = *m ? fake_num(m) : 1073741824LL;
	fake_part_release(&l);
	free(c);
	free(m);
	return v;
}

static const char lookup_error[] =
	"Error: -69808: Some information was unavailable during an internal lookup";

/* diskutil apfs resizeContainer STORE limits -plist */
int fake_limits(struct fake *fk, const char *store)
{
	const char *id = strncmp(store, "/dev/", 5) ? store : store + 5;
	struct part l;
	if (!fake_part_of(fk, id, &l) || strcmp(l.f[P_FS], "apfs")) {
		puts(lookup_error);
		fake_part_release(&l);
		return 1;
	}
	long long mp = minpref_of(fk, id);
	plist_head();
	puts("<dict>");
	plist_int(1, "CurrentSize", l.f[P_SIZE]);
	plist_num(1, "MaximumSize", next_start(fk, id) - fake_num(l.f[P_OFFSET]));
	plist_num(1, "MinimumSizeNoGuard", mp / 10 * 9);
	plist_num(1, "MinimumSizePreferred", mp);
	plist_str(1, "Type", "APFSPhysicalStore");
	puts("</dict>");
	plist_tail();
	fake_part_release(&l);
	return 0;
}

/* apfs resizeContainer's progress up to its fsck, and its failures. 0 to go on. */
static int apfs_preamble(struct fake *fk, const char *id, const struct part *l, long long psz,
			 long long new)
{
	char a[40], b[40];
	char *container = fake_whole_of(l->f[P_VOLUME]);
	puts("Started APFS operation");
	printf("Aligning shrink delta to %s bytes and targeting a new physical store size of %s "
	       "bytes\n", commas(psz - new, a), commas(new, b));
	printf("Determined the minimum size for the targeted physical store of this APFS Container "
	       "to be %s bytes\n", commas(minpref_of(fk, id), a));
	printf("Resizing APFS Container designated by APFS Container Reference %s\n", container);
	printf("The specific APFS Physical Store being resized is %s\n", id);
	printf("Verifying storage system\nUsing live mode\nPerforming fsck_apfs -n -x -l /dev/%s\n"
	       "Checking the container superblock\nVerifying allocated space\n"
	       "The volume /dev/%s appears to be OK\nStorage system check exit code is 0\n", id, id);
	free(container);
	if (fake_fault(fk, "resizeContainer-69606", "")) {
		printf("Shrinking APFS Physical Store %s from %s to %s bytes\n", id, commas(psz, a),
		       commas(new, b));
		puts("Shrinking APFS data structures\nAPFS Container Resize error code is 49187\n"
		     "Error: -69606: A problem occurred while resizing APFS Container structures");
		return -1;
	}
	if (fake_fault(fk, "resizeContainer-69521", "") || new < minpref_of(fk, id)) {
		puts("Error: -69521: The new size must be at least the minimum size of the APFS "
		     "Container");
		return -1;
	}
	return 0;
}

/* The kept partition id gets its new size (its volume, files and mount
 * stay), and the slots are added after the disk's last line. */
static void resize_apply(struct fake *fk, const struct part *l, const char *disk, long long new,
			 const struct slot *s, size_t n)
{
	struct parts ps;
	struct strbuf size = STRBUF_INIT;
	sb_addf(&size, "%lld", new);
	fake_parts_read(fk, disk, &ps);
	for (size_t i = 0; i < ps.n; i++) {
		if (!strcmp(ps.v[i].f[P_ID], l->f[P_ID]))
			fake_part_set(&ps.v[i], P_SIZE, size.buf);
	}
	fake_parts_write(fk, disk, &ps);
	if (!strcmp(l->f[P_FS], "apfs")) {
		char *c = fake_whole_of(l->f[P_VOLUME]);
		fake_kv_set(fk, c, "size", size.buf);
		free(c);
	}
	int k = (int)ps.n + 1;
	for (size_t i = 0; i < n; i++) {
		if (s[i].free_space)
			continue;
		size_t at = ps.n;
		add_slot(fk, disk, k++, &s[i], &ps);
		fake_parts_write(fk, disk, &ps);
		char **f = ps.v[at].f;
		printf("Initialized /dev/r%s as a %s volume named %s\n", f[P_ID], f[P_FS], f[P_NAME]);
		free(fake_mount(fk, f[P_VOLUME], f[P_NAME]));
		fake_parts_release(&ps);
		fake_parts_read(fk, disk, &ps);
		puts("Mounting disk");
	}
	fake_parts_release(&ps);
	sb_release(&size);
}

/* diskutil apfs resizeContainer STORE SIZE [fmt name size ...] (kind apfs) and
 * diskutil resizeVolume PART SIZE [fmt name size ...] (kind hfs) */
int fake_resize(struct fake *fk, const char *kind, int argc, char **argv)
{
	const char *id = argc > 0 ? argv[0] : "", *size = argc > 1 ? argv[1] : "";
	if (!strncmp(id, "/dev/", 5))
		id += 5;
	int apfs = !strcmp(kind, "apfs");
	struct part l;
	if (!fake_part_of(fk, id, &l) || strcmp(l.f[P_FS], kind)) {
		puts(apfs ? lookup_error
			  : "Error: -69559: The target disk isn't eligible for this operation");
		fake_part_release(&l);
		return 1;
	}
	char *disk = fake_whole_of(id), *total_s = fake_kv(fk, disk, "size"), a[40];
	long long psz = fake_num(l.f[P_SIZE]), off = fake_num(l.f[P_OFFSET]), new = 0;
	long long total = fake_num(total_s), end = total - GPT_TAIL;
	int rc = 1;
	size_t n = 0;
	struct slot *s = NULL;
	if (!bytes_of(size, psz, &new)) {
		printf("Error: -69742: Invalid size %s\n", size);
		goto out;
	}
	if (apfs && apfs_preamble(fk, id, &l, psz, new) < 0)
		goto out;
	if (!apfs)
		printf("Resizing disk %s to %s bytes\nStarted partitioning on %s\nVerifying the disk\n",
		       id, commas(new, a), disk);
	s = slots_of(argc > 2 ? argc - 2 : 0, argv + 2, &n);
	if (lay_out(s, n, total, off + new, end) < 0)
		goto out;
	if (off + new > next_start(fk, id)) {
		puts("Error: -69519: The target disk is too small for this operation");
		goto out;
	}
	if (apfs) {
		char b[40];
		printf("Shrinking APFS Physical Store %s from %s to %s bytes\n", id, commas(psz, a),
		       commas(new, b));
		puts("Shrinking APFS data structures\nShrinking partition");
	}
	puts("Modifying partition map");
	resize_apply(fk, &l, disk, new, s, n);
	if (apfs)
		puts("Finished APFS operation");
	else
		printf("Finished partitioning on %s\n", disk);
	rc = 0;
out:
	free(s);
	free(disk);
	free(total_s);
	fake_part_release(&l);
	return rc;
}
