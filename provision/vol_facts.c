/* A volume's facts as JSON; see vol_facts.h. */
#include "provision/vol_facts.h"

#include "lib/strbuf.h"

static void key(struct strbuf *j, const char *k)
{
	sb_addf(j, "%s\"%s\":", j->len > 1 ? "," : "", k);
}

static void str(struct strbuf *j, const char *k, const char *v)
{
	key(j, k);
	if (v)
		sb_add_json(j, v);
	else
		sb_adds(j, "null");
}

static void tri(struct strbuf *j, const char *k, int v)
{
	key(j, k);
	sb_adds(j, v == VF_UNKNOWN ? "null" : v ? "true" : "false");
}

static void num(struct strbuf *j, const char *k, int known, uint64_t v)
{
	key(j, k);
	if (known)
		sb_addf(j, "%llu", (unsigned long long)v);
	else
		sb_adds(j, "null");
}

char *prov_vol_facts_json(const struct vol_facts *f)
{
	struct strbuf j = STRBUF_INIT;
	sb_addch(&j, '{');
	str(&j, "target", f->target);
	str(&j, "disk", f->disk);
	str(&j, "partition", f->partition);
	str(&j, "volume", f->volume);
	str(&j, "container", f->container);
	num(&j, "number", f->number != 0, f->number);
	str(&j, "name", f->name);
	str(&j, "image", f->image);
	str(&j, "model", f->model);
	str(&j, "serial", f->serial);
	str(&j, "bus", f->bus);
	tri(&j, "rotational", f->rotational);
	tri(&j, "internal", f->internal);
	num(&j, "sector_size", f->sector_size != 0, f->sector_size);
	num(&j, "first_sector", f->has_sectors, f->first_sector);
	num(&j, "last_sector", f->has_sectors, f->last_sector);
	num(&j, "partition_bytes", f->partition_bytes != 0, f->partition_bytes);
	str(&j, "fs", f->fs);
	str(&j, "format_command", f->format_command);
	str(&j, "fs_personality", f->fs_personality);
	str(&j, "fs_type", f->fs_type);
	num(&j, "block_size", f->block_size != 0, f->block_size);
	str(&j, "mount_point", f->mount_point);
	str(&j, "mount_options", f->mount_options);
	str(&j, "super_options", f->super_options);
	num(&j, "capacity_bytes", f->has_space, f->capacity_bytes);
	num(&j, "free_bytes", f->has_space, f->free_bytes);
	tri(&j, "loop_direct_io", f->loop_direct_io);
	tri(&j, "kept", f->kept);
	str(&j, "kept_from", f->kept_from);
	str(&j, "work_dir", f->work_dir);
	str(&j, "indexing", f->indexing);
	str(&j, "indexing_applied", f->indexing_applied);
	str(&j, "defrag", f->defrag);
	str(&j, "defrag_applied", f->defrag_applied);
	str(&j, "snapshots", f->snapshots);
	str(&j, "snapshots_applied", f->snapshots_applied);
	sb_addch(&j, '}');
	return sb_detach(&j);
}
