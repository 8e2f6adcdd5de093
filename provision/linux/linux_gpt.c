/*
 * Where each partition of a layout goes on a GPT disk (see prov_gpt_layout in
 * linux.h). A pure function of the layout, the disk's size and its sector
 * size, so `rig plan` prints the same sector numbers `rig run` uses, and
 * the tests check it without a disk.
 *
 * Decisions: partitions follow each other in plan order from the first
 * 1 MiB boundary (the outer edge of a hard disk), every start 1 MiB
 * aligned. Percentages are of the usable space (1 MiB to the backup
 * table), so `count: 10, size: 10%` fills the disk; each is rounded down
 * to whole MiB, so equal shares are exactly equal and the rounding and
 * alignment go to the last partition, which runs to the end when the
 * layout means to fill the disk (a `rest`, or percentages adding up to
 * 100%). Byte sizes are kept exactly (to the sector): a plan that says 1GB
 * gets 10^9 bytes. Rejected: spreading the rounding over all partitions
 * (cumulative boundaries), which makes "equal" partitions differ by a MiB
 * and file systems made on them differ in geometry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "provision/linux/linux.h"

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

void prov_gpt_usable(uint64_t bytes, uint32_t sector, uint64_t *first, uint64_t *last)
{
	uint64_t total = bytes / sector;
	uint64_t table = (GPT_ENTRIES_BYTES + sector - 1) / sector; /* entry sectors */
	uint64_t first_lba = align_up((2 + table) * sector, GPT_ALIGN) / sector;
	/* The backup header is the last sector, its entries just before it. */
	*first = first_lba;
	*last = total > 1 + table + 1 ? total - 1 - table - 1 : 0;
}

int prov_gpt_layout(const struct plan_layout *l, uint64_t bytes, uint32_t sector,
	       struct gpt_part *out, struct strbuf *err)
{
	if (!sector || sector % 512 || GPT_ALIGN % sector) {
		sb_addf(err, "unsupported sector size %u", sector);
		return -EINVAL;
	}
	uint64_t first, last;
	prov_gpt_usable(bytes, sector, &first, &last);
	if (last < first + GPT_ALIGN / sector) {
		sb_addf(err, "the disk (%llu bytes) is too small for a partition table and "
			     "a partition", (unsigned long long)bytes);
		return -ENOSPC;
	}
	uint64_t usable = (last + 1 - first) * sector; /* bytes */
	uint64_t align = GPT_ALIGN / sector;           /* sectors */
	double percent = 0;
	int has_rest = 0;
	uint64_t fixed = 0; /* bytes taken by sized and percentage partitions */
	uint64_t *size = xcalloc(l->nparts ? l->nparts : 1, sizeof(*size));
	for (size_t i = 0; i < l->nparts; i++) {
		const struct plan_partition *pt = &l->parts[i];
		switch (pt->size_kind) {
		case PSIZE_BYTES:
			size[i] = align_up(pt->bytes, sector) / sector;
			break;
		case PSIZE_PERCENT:
			percent += pt->percent;
			size[i] = (uint64_t)((double)usable * pt->percent / 100.0) / GPT_ALIGN * align;
			break;
		case PSIZE_REST:
			has_rest = 1;
			break;
		}
		if (pt->size_kind != PSIZE_REST && !size[i]) {
			sb_addf(err, "partition %s would be empty: its share of the %llu usable "
				     "bytes is less than 1 MiB", pt->name, (unsigned long long)usable);
			free(size);
			return -ENOSPC;
		}
		fixed += size[i] * sector;
	}
	for (size_t i = 0; i < l->nparts; i++)
		if (l->parts[i].size_kind == PSIZE_REST)
			size[i] = fixed < usable ? (usable - fixed) / GPT_ALIGN * align : 0;
	int fill = has_rest || percent > 100 - 1e-9;
	uint64_t at = first;
	for (size_t i = 0; i < l->nparts; i++) {
		at = align_up(at, align);
		out[i].first = at;
		if (i + 1 == l->nparts && fill)
			out[i].last = last;
		else
			out[i].last = at + size[i] - 1;
		if ((!size[i] && !(i + 1 == l->nparts && fill)) || out[i].last > last ||
		    out[i].last < out[i].first) {
			sb_addf(err, "the partitions do not fit on the disk: %s would end at sector "
				     "%llu, the last usable sector is %llu (1 MiB alignment and the "
				     "partition table's %u KiB at each end included)",
				l->parts[i].name, (unsigned long long)(at + size[i] - 1),
				(unsigned long long)last, (2 * GPT_ENTRIES_BYTES) >> 10);
			free(size);
			return -ENOSPC;
		}
		at = out[i].last + 1;
	}
	free(size);
	return 0;
}

void prov_linux_part_path(struct strbuf *sb, const char *dev, size_t n)
{
	/* The kernel adds "p" after a name ending in a digit; loop devices
	 * always end in one (the dry run's /dev/loopN stands for it). */
	size_t len = strlen(dev);
	int digit = len && dev[len - 1] >= '0' && dev[len - 1] <= '9';
	int loop = !strncmp(dev, "/dev/loop", 9);
	sb_addf(sb, "%s%s%zu", dev, digit || loop ? "p" : "", n);
}
