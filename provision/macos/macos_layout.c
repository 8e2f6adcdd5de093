/*
 * The sizes of a layout on a macOS disk, and the check of what diskutil
 * made (see macos.h). Pure functions of the plan and of parsed plists.
 *
 * Sizes are bytes computed from the disk's TotalSize, because diskutil's
 * percentages are of the whole map (EFI partition included) and its
 * output sizes are rounded: space for partitions starts at the first
 * 1 MiB boundary after the EFI partition (partitions on media over 1 GiB
 * are 1 MiB aligned since 10.14) and ends 1 MiB before the end (the
 * backup GPT, and room for diskutil's own rounding). Shares are rounded
 * down to whole MiB, so `count: 10, size: 10%` gives ten equal
 * containers and no partition start needs padding; a byte size is kept as
 * written. The partitionDisk command ends with a "Free Space" triplet of
 * size R, so the last partition keeps its size instead of being stretched
 * to the end of the disk (diskutil(8), "the last partition is normally
 * stretched").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/macos/macos.h"

#define SIZE_SLACK (2 * MAC_MIB) /* what diskutil may take or give for alignment */

static const struct {
	const char *fs, *format, *type, *content;
} fs_names[] = {
	{ "apfs", "APFS", "apfs", "Apple_APFS" },
	{ "hfs+", "JHFS+", "hfs", "Apple_HFS" },
	/* The case-sensitive personalities, by their exact names (diskutil
	 * listFilesystems; their aliases APFSX and JHFSX would do too). */
	{ "apfsx", "Case-sensitive APFS", "apfs", "Apple_APFS" },
	{ "jhfsx", "Case-sensitive Journaled HFS+", "hfs", "Apple_HFS" },
	{ "exfat", "ExFAT", "exfat", "Microsoft Basic Data" },
	{ "fat32", "MS-DOS FAT32", "msdos", "Microsoft Basic Data" },
};

static int fs_index(const char *fs)
{
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++)
		if (!strcmp(fs_names[i].fs, fs))
			return (int)i;
	return -1;
}

const char *prov_mac_format(const char *fs)
{
	int i = fs_index(fs);
	return i < 0 ? NULL : fs_names[i].format;
}

const char *prov_mac_fs_type(const char *fs)
{
	int i = fs_index(fs);
	return i < 0 ? NULL : fs_names[i].type;
}

const char *prov_mac_content(const char *fs)
{
	int i = fs_index(fs);
	return i < 0 ? NULL : fs_names[i].content;
}

int prov_mac_is_apfs(const char *fs)
{
	const char *c = prov_mac_content(fs);
	return c && !strcmp(c, "Apple_APFS");
}

static uint64_t mib_up(uint64_t x)
{
	return (x + MAC_MIB - 1) / MAC_MIB * MAC_MIB;
}

int prov_mac_layout_sizes(const struct plan_layout *l, uint64_t total, uint64_t *sizes,
		     struct strbuf *err)
{
	uint64_t first = mib_up(MAC_EFI_START + MAC_EFI_BYTES);
	uint64_t end = total > MAC_MIB ? (total - MAC_MIB) / MAC_MIB * MAC_MIB : 0;
	if (end <= first + MAC_MIB) {
		sb_addf(err, "the disk (%llu bytes) is too small for the EFI partition diskutil "
			     "adds (%llu bytes) and a partition", (unsigned long long)total,
			(unsigned long long)MAC_EFI_BYTES);
		return -ENOSPC;
	}
	uint64_t usable = end - first, used = 0;
	size_t rest = l->nparts;
	for (size_t i = 0; i < l->nparts; i++) {
		const struct plan_partition *pt = &l->parts[i];
		switch (pt->size_kind) {
		case PSIZE_BYTES:
			sizes[i] = pt->bytes;
			break;
		case PSIZE_PERCENT:
			sizes[i] = (uint64_t)((double)usable * pt->percent / 100.0) / MAC_MIB * MAC_MIB;
			break;
		case PSIZE_REST:
			rest = i;
			sizes[i] = 0;
			continue;
		}
		if (!sizes[i]) {
			sb_addf(err, "partition %s would be empty: its share of the %llu usable bytes "
				     "is less than 1 MiB", pt->name, (unsigned long long)usable);
			return -ENOSPC;
		}
		used += mib_up(sizes[i]);
	}
	if (rest < l->nparts) {
		sizes[rest] = used < usable ? (usable - used) / MAC_MIB * MAC_MIB : 0;
		used += sizes[rest];
		if (!sizes[rest]) {
			sb_addf(err, "partition %s (rest) would be empty: the others take %llu of "
				     "the %llu usable bytes", l->parts[rest].name,
				(unsigned long long)used, (unsigned long long)usable);
			return -ENOSPC;
		}
	}
	if (used > usable) {
		sb_addf(err, "the partitions take %llu bytes (each start aligned to 1 MiB); the "
			     "disk has %llu after the EFI partition and before the last MiB",
			(unsigned long long)used, (unsigned long long)usable);
		return -ENOSPC;
	}
	return 0;
}

int prov_mac_name_matches(const char *fs, const char *got, const char *want)
{
	if (!got || !want)
		return 0;
	/* FAT keeps labels in capitals: "Data" comes back as "DATA". */
	return !strcmp(fs, "fat32") ? !strcasecmp(got, want) : !strcmp(got, want);
}

void prov_mac_made_release(struct mac_made *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].part);
		free(m[i].volume);
		free(m[i].container);
	}
	memset(m, 0, n * sizeof(*m));
}

static int differs(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) > SIZE_SLACK;
}

int prov_mac_fit(const struct plan_layout *l, uint64_t total, uint32_t sector, struct prov_extent *out,
	    struct strbuf *why)
{
	(void)sector; /* diskutil takes bytes */
	uint64_t *sizes = xcalloc(l->nparts ? l->nparts : 1, sizeof(*sizes));
	int rc = prov_mac_layout_sizes(l, total, sizes, why);
	uint64_t at = mib_up(MAC_EFI_START + MAC_EFI_BYTES);
	for (size_t i = 0; i < l->nparts && rc == 0; i++) {
		out[i].start = at;
		out[i].bytes = sizes[i];
		at += mib_up(sizes[i]);
	}
	free(sizes);
	return rc;
}

int prov_mac_layout_check(const struct plan_layout *l, const struct prov_extent *fit, const char *disk,
		     const struct mac_list *list, const struct mac_apfs *apfs,
		     struct mac_made *made, struct strbuf *err)
{
	const struct mac_disk *d = prov_mac_list_disk(list, disk);
	if (!d) {
		sb_addf(err, "diskutil list -plist %s does not list %s", disk, disk);
		return -EIO;
	}
	size_t k = 0;
	if (d->nparts && d->parts[0].content && !strcmp(d->parts[0].content, "EFI"))
		k = 1;
	if (d->nparts - k != l->nparts) {
		sb_addf(err, "%s has %zu partition(s) %s; layout %s has %zu", disk, d->nparts - k,
			k ? "after its EFI partition" : "and no EFI partition first", l->name,
			l->nparts);
		return -EIO;
	}
	for (size_t i = 0; i < l->nparts; i++, k++) {
		const struct plan_partition *pt = &l->parts[i];
		const struct mac_entry *e = &d->parts[k];
		const char *want = prov_mac_content(pt->fs);
		if (!e->id || !e->content || !want || strcmp(e->content, want)) {
			sb_addf(err, "partition %zu of %s (%s) is %s; layout %s wants %s (%s) there",
				i + 1, disk, e->id ? e->id : "?", e->content ? e->content : "of unknown type",
				l->name, want ? want : "?", pt->name);
			return -EIO;
		}
		if (!e->size || differs(e->size, fit[i].bytes)) {
			sb_addf(err, "%s (%s) has %llu bytes; rig asked for %llu (2 MiB of alignment "
				     "allowed)", e->id, pt->name, (unsigned long long)e->size,
				(unsigned long long)fit[i].bytes);
			return -EIO;
		}
		made[i].part = xstrdup(e->id);
		made[i].size = e->size;
		if (!prov_mac_is_apfs(pt->fs)) {
			made[i].volume = xstrdup(e->id);
			if (!prov_mac_name_matches(pt->fs, e->name, pt->name)) {
				sb_addf(err, "%s is named '%s'; layout %s names it '%s'", e->id,
					e->name ? e->name : "", l->name, pt->name);
				return -EIO;
			}
			continue;
		}
		const struct mac_container *c = prov_mac_apfs_with_store(apfs, e->id);
		if (!c || !c->ref) {
			sb_addf(err, "no APFS container has %s (%s) as its physical store "
				     "(diskutil apfs list -plist)", e->id, pt->name);
			return -EIO;
		}
		if (c->nstores != 1 || c->nvols != 1 || !c->vols[0].id || !c->vols[0].name ||
		    strcmp(c->vols[0].name, pt->name)) {
			sb_addf(err, "APFS container %s on %s has %zu physical store(s) and %zu "
				     "volume(s) (first: '%s'); rig expects one store and one volume '%s'",
				c->ref, e->id, c->nstores, c->nvols,
				c->nvols && c->vols[0].name ? c->vols[0].name : "", pt->name);
			return -EIO;
		}
		made[i].container = xstrdup(c->ref);
		made[i].volume = xstrdup(c->vols[0].id);
	}
	return 0;
}

void prov_mac_disk_describe(const char *disk, const struct mac_list *list, const struct mac_apfs *apfs,
		       struct strbuf *sb)
{
	const struct mac_disk *d = prov_mac_list_disk(list, disk);
	if (!d) {
		sb_addf(sb, "diskutil list does not list %s", disk);
		return;
	}
	size_t k = d->nparts && d->parts[0].content && !strcmp(d->parts[0].content, "EFI") ? 1 : 0;
	if (k == d->nparts)
		sb_addf(sb, "%s holds nothing after %s", disk, k ? "its EFI partition" : "its map");
	for (size_t n = 0; k < d->nparts; k++, n++) {
		const struct mac_entry *e = &d->parts[k];
		sb_addf(sb, "%s%s %s, %llu bytes", n ? "; " : "", e->id ? e->id : "?",
			e->content ? e->content : "of unknown type", (unsigned long long)e->size);
		const struct mac_container *c = prov_mac_apfs_with_store(apfs, e->id);
		if (c) {
			sb_addf(sb, ", APFS container %s with %zu volume%s", c->ref ? c->ref : "?",
				c->nvols, c->nvols == 1 ? "" : "s");
			for (size_t v = 0; v < c->nvols; v++)
				sb_addf(sb, "%s'%s'", v ? ", " : " ", c->vols[v].name ? c->vols[v].name : "");
		} else if (e->name) {
			sb_addf(sb, ", volume '%s'", e->name);
		}
	}
}

int prov_mac_keep_start(const struct plan_partition *kp, const char *disk, const struct mac_list *list,
		   const struct mac_apfs *apfs, struct mac_made *kept, struct strbuf *why)
{
	struct plan_layout one = { 0 };
	one.name = "(the kept partition alone)";
	one.parts = (struct plan_partition *)kp;
	one.nparts = 1;
	const struct mac_disk *d = prov_mac_list_disk(list, disk);
	size_t k = d && d->nparts && d->parts[0].content && !strcmp(d->parts[0].content, "EFI");
	if (!d || d->nparts != k + 1 || !d->parts[k].size) {
		sb_addf(why, "it must hold exactly one partition besides EFI, %s '%s'",
			prov_mac_content(kp->fs), kp->name);
		return 0;
	}
	/* the size is whatever it is: check it against itself */
	struct prov_extent size = { 0, d->parts[k].size };
	struct strbuf e = STRBUF_INIT;
	int ok = prov_mac_layout_check(&one, &size, disk, list, apfs, kept, &e) == 0;
	if (!ok) {
		prov_mac_made_release(kept, 1);
		sb_adds(why, e.buf);
	}
	sb_release(&e);
	return ok;
}
