/*
 * Parsers of diskutil's and hdiutil's plists and error lines; see
 * macos_plist.h. libplist builds the tree; these functions copy out the
 * keys rig uses and free it. Getters of the wrong node type (an <integer>
 * where a <string> was expected) leave the value unknown.
 *
 * Input: the first "<?xml" or "<plist" (or a binary "bplist") is where the
 * plist starts: hdiutil and diskutil may print lines before it. libplist
 * 2.2's plist_from_memory takes three arguments, 2.3's four (the format it
 * found, which may be NULL); the Makefile defines RIG_LIBPLIST_FORMAT_ARG
 * when pkg-config reports 2.3 or later.
 */
#include "provision/macos/macos_plist.h"

#include <plist/plist.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"

/* --- libplist access --- */

static const char *find_start(const char *buf, size_t len)
{
	static const char *const marks[] = { "bplist", "<?xml", "<plist" };
	for (size_t i = 0; i < len; i++)
		for (size_t k = 0; k < 3; k++) {
			size_t n = strlen(marks[k]);
			if (len - i >= n && !memcmp(buf + i, marks[k], n))
				return buf + i;
		}
	return NULL;
}

/* The root dict, or NULL with the reason. Caller frees with plist_free. */
static plist_t parse_root(const char *buf, size_t len, struct strbuf *err)
{
	const char *start = buf ? find_start(buf, len) : NULL;
	if (!start) {
		sb_adds(err, "not a property list (no <?xml, <plist or bplist)");
		return NULL;
	}
	size_t n = len - (size_t)(start - buf);
	if (n > UINT32_MAX) {
		sb_adds(err, "property list too large");
		return NULL;
	}
	plist_t root = NULL;
#ifdef RIG_LIBPLIST_FORMAT_ARG
	plist_from_memory(start, (uint32_t)n, &root, NULL);
#else
	plist_from_memory(start, (uint32_t)n, &root);
#endif
	if (!root) {
		sb_adds(err, "not a valid property list");
		return NULL;
	}
	if (!PLIST_IS_DICT(root)) {
		sb_adds(err, "the property list is not a dictionary");
		plist_free(root);
		return NULL;
	}
	return root;
}

static char *str_of(plist_t n)
{
	if (!PLIST_IS_STRING(n))
		return NULL;
	uint64_t len = 0;
	const char *s = plist_get_string_ptr(n, &len);
	return s ? xstrndup(s, (size_t)len) : NULL;
}

static char *dstr(plist_t dict, const char *key)
{
	return str_of(plist_dict_get_item(dict, key));
}

/* A string that means nothing when empty (MountPoint "", MediaName ""). */
static char *dstr_nonempty(plist_t dict, const char *key)
{
	char *s = dstr(dict, key);
	if (s && !*s) {
		free(s);
		return NULL;
	}
	return s;
}

static uint64_t duint(plist_t dict, const char *key, int *has)
{
	plist_t n = plist_dict_get_item(dict, key);
	uint64_t v = 0;
	if (!PLIST_IS_UINT(n)) {
		if (has)
			*has = 0;
		return 0;
	}
	plist_get_uint_val(n, &v);
	if (has)
		*has = 1;
	return v;
}

static int dbool(plist_t dict, const char *key)
{
	plist_t n = plist_dict_get_item(dict, key);
	if (!PLIST_IS_BOOLEAN(n))
		return MAC_UNKNOWN;
	uint8_t b = 0;
	plist_get_bool_val(n, &b);
	return b ? 1 : 0;
}

/* The dicts of array key, or 0 when absent or not an array. */
static uint32_t darray(plist_t dict, const char *key, plist_t *arr)
{
	*arr = plist_dict_get_item(dict, key);
	if (!PLIST_IS_ARRAY(*arr))
		return 0;
	return plist_array_get_size(*arr);
}

/* The strings of an array of dicts, taking key of each (or the strings of
 * an array of strings when key is NULL). */
static char **strings_of(plist_t dict, const char *akey, const char *key, size_t *count)
{
	plist_t arr;
	uint32_t n = darray(dict, akey, &arr);
	char **out = xcalloc(n ? n : 1, sizeof(char *));
	size_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		plist_t it = plist_array_get_item(arr, i);
		char *s = key ? (PLIST_IS_DICT(it) ? dstr(it, key) : NULL) : str_of(it);
		if (s)
			out[k++] = s;
	}
	*count = k;
	return out;
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* diskutil's error dict: {Error: true, ErrorMessage: ..., ExitCode: 1}. */
static char *error_of(plist_t root)
{
	if (dbool(root, "Error") != 1)
		return NULL;
	char *m = dstr_nonempty(root, "ErrorMessage");
	return m ? m : xstrdup("Error (no message)");
}

static int refuse_error_dict(plist_t root, struct strbuf *err)
{
	char *e = error_of(root);
	if (!e)
		return 0;
	sb_adds(err, e);
	free(e);
	plist_free(root);
	return 1;
}

/* --- diskutil list -plist --- */

static void entry_of(plist_t d, struct mac_entry *e)
{
	e->id = dstr(d, "DeviceIdentifier");
	e->content = dstr(d, "Content");
	e->name = dstr(d, "VolumeName");
	e->mount = dstr_nonempty(d, "MountPoint");
	e->size = duint(d, "Size", NULL);
	if (!e->mount) {
		/* A sealed system volume is mounted as its snapshot (macOS 11+). */
		plist_t snaps;
		uint32_t n = darray(d, "MountedSnapshots", &snaps);
		for (uint32_t i = 0; i < n && !e->mount; i++) {
			plist_t s = plist_array_get_item(snaps, i);
			if (PLIST_IS_DICT(s))
				e->mount = dstr_nonempty(s, "SnapshotMountPoint");
		}
	}
}

static void entry_release(struct mac_entry *e)
{
	free(e->id);
	free(e->content);
	free(e->name);
	free(e->mount);
}

static struct mac_entry *entries_of(plist_t dict, const char *key, size_t *count)
{
	plist_t arr;
	uint32_t n = darray(dict, key, &arr);
	struct mac_entry *v = xcalloc(n ? n : 1, sizeof(*v));
	size_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		plist_t it = plist_array_get_item(arr, i);
		if (PLIST_IS_DICT(it))
			entry_of(it, &v[k++]);
	}
	*count = k;
	return v;
}

static void entries_release(struct mac_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		entry_release(&v[i]);
	free(v);
}

int prov_mac_parse_list(const char *buf, size_t len, struct mac_list *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	plist_t root = parse_root(buf, len, err);
	if (!root || refuse_error_dict(root, err))
		return -1;
	out->whole = strings_of(root, "WholeDisks", NULL, &out->nwhole);
	plist_t arr;
	uint32_t n = darray(root, "AllDisksAndPartitions", &arr);
	out->disks = xcalloc(n ? n : 1, sizeof(*out->disks));
	for (uint32_t i = 0; i < n; i++) {
		plist_t d = plist_array_get_item(arr, i);
		if (!PLIST_IS_DICT(d))
			continue;
		struct mac_disk *md = &out->disks[out->ndisks++];
		md->id = dstr(d, "DeviceIdentifier");
		md->content = dstr(d, "Content");
		md->mount = dstr_nonempty(d, "MountPoint");
		md->name = dstr(d, "VolumeName");
		md->size = duint(d, "Size", NULL);
		md->parts = entries_of(d, "Partitions", &md->nparts);
		md->vols = entries_of(d, "APFSVolumes", &md->nvols);
		md->stores = strings_of(d, "APFSPhysicalStores", "DeviceIdentifier", &md->nstores);
	}
	plist_free(root);
	return 0;
}

void prov_mac_list_release(struct mac_list *l)
{
	free_strings(l->whole, l->nwhole);
	for (size_t i = 0; i < l->ndisks; i++) {
		struct mac_disk *d = &l->disks[i];
		free(d->id);
		free(d->content);
		free(d->mount);
		free(d->name);
		entries_release(d->parts, d->nparts);
		entries_release(d->vols, d->nvols);
		free_strings(d->stores, d->nstores);
	}
	free(l->disks);
	memset(l, 0, sizeof(*l));
}

const struct mac_disk *prov_mac_list_disk(const struct mac_list *l, const char *id)
{
	for (size_t i = 0; id && i < l->ndisks; i++)
		if (l->disks[i].id && !strcmp(l->disks[i].id, id))
			return &l->disks[i];
	return NULL;
}

/* --- diskutil info -plist --- */

int prov_mac_parse_info(const char *buf, size_t len, struct mac_info *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	out->internal = out->solid_state = out->whole = out->removable = MAC_UNKNOWN;
	out->writable_media = out->writable = MAC_UNKNOWN;
	plist_t root = parse_root(buf, len, err);
	if (!root)
		return -1;
	out->error = error_of(root);
	if (out->error) {
		plist_free(root);
		return 0;
	}
	out->id = dstr(root, "DeviceIdentifier");
	out->node = dstr(root, "DeviceNode");
	out->parent = dstr_nonempty(root, "ParentWholeDisk");
	out->media = dstr_nonempty(root, "MediaName");
	out->bus = dstr_nonempty(root, "BusProtocol");
	out->content = dstr(root, "Content");
	out->fs_type = dstr_nonempty(root, "FilesystemType");
	out->fs_name = dstr_nonempty(root, "FilesystemName");
	out->mount = dstr_nonempty(root, "MountPoint");
	out->volume = dstr_nonempty(root, "VolumeName");
	out->container = dstr_nonempty(root, "APFSContainerReference");
	out->virt = dstr_nonempty(root, "VirtualOrPhysical");
	out->stores = strings_of(root, "APFSPhysicalStores", "APFSPhysicalStore", &out->nstores);
	out->internal = dbool(root, "Internal");
	out->solid_state = dbool(root, "SolidState");
	out->whole = dbool(root, "WholeDisk");
	int rm = dbool(root, "Removable"), rmm = dbool(root, "RemovableMedia");
	out->removable = rm == 1 || rmm == 1 ? 1 : rm == 0 || rmm == 0 ? 0 : MAC_UNKNOWN;
	out->writable_media = dbool(root, "WritableMedia");
	out->writable = dbool(root, "Writable");
	out->size = duint(root, "Size", NULL);
	out->total_size = duint(root, "TotalSize", NULL);
	uint64_t bs = duint(root, "DeviceBlockSize", NULL);
	out->block_size = bs <= UINT32_MAX ? (uint32_t)bs : 0;
	uint64_t ab = duint(root, "VolumeAllocationBlockSize", NULL);
	out->alloc_block = ab <= UINT32_MAX ? (uint32_t)ab : 0;
	out->offset = duint(root, "PartitionMapPartitionOffset", &out->has_offset);
	plist_free(root);
	return 0;
}

void prov_mac_info_release(struct mac_info *i)
{
	free(i->error);
	free(i->id);
	free(i->node);
	free(i->parent);
	free(i->media);
	free(i->bus);
	free(i->content);
	free(i->fs_type);
	free(i->fs_name);
	free(i->mount);
	free(i->volume);
	free(i->container);
	free(i->virt);
	free_strings(i->stores, i->nstores);
	memset(i, 0, sizeof(*i));
}

/* --- diskutil apfs list -plist --- */

int prov_mac_parse_apfs(const char *buf, size_t len, struct mac_apfs *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	plist_t root = parse_root(buf, len, err);
	if (!root || refuse_error_dict(root, err))
		return -1;
	plist_t arr;
	uint32_t n = darray(root, "Containers", &arr);
	out->c = xcalloc(n ? n : 1, sizeof(*out->c));
	for (uint32_t i = 0; i < n; i++) {
		plist_t d = plist_array_get_item(arr, i);
		if (!PLIST_IS_DICT(d))
			continue;
		struct mac_container *c = &out->c[out->n++];
		c->ref = dstr(d, "ContainerReference");
		c->designated = dstr(d, "DesignatedPhysicalStore");
		c->ceiling = duint(d, "CapacityCeiling", NULL);
		c->free = duint(d, "CapacityFree", NULL);
		c->stores = entries_of(d, "PhysicalStores", &c->nstores);
		plist_t vols;
		uint32_t nv = darray(d, "Volumes", &vols);
		c->vols = xcalloc(nv ? nv : 1, sizeof(*c->vols));
		for (uint32_t k = 0; k < nv; k++) {
			plist_t v = plist_array_get_item(vols, k);
			if (!PLIST_IS_DICT(v))
				continue;
			struct mac_apfs_volume *av = &c->vols[c->nvols++];
			av->id = dstr(v, "DeviceIdentifier");
			av->name = dstr(v, "Name");
			av->roles = strings_of(v, "Roles", NULL, &av->nroles);
			av->in_use = duint(v, "CapacityInUse", NULL);
		}
	}
	plist_free(root);
	return 0;
}

void prov_mac_apfs_release(struct mac_apfs *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct mac_container *c = &a->c[i];
		free(c->ref);
		free(c->designated);
		entries_release(c->stores, c->nstores);
		for (size_t k = 0; k < c->nvols; k++) {
			free(c->vols[k].id);
			free(c->vols[k].name);
			free_strings(c->vols[k].roles, c->vols[k].nroles);
		}
		free(c->vols);
	}
	free(a->c);
	memset(a, 0, sizeof(*a));
}

const struct mac_container *prov_mac_apfs_with_store(const struct mac_apfs *a, const char *store)
{
	for (size_t i = 0; store && i < a->n; i++)
		for (size_t k = 0; k < a->c[i].nstores; k++)
			if (a->c[i].stores[k].id && !strcmp(a->c[i].stores[k].id, store))
				return &a->c[i];
	return NULL;
}

/* --- diskutil apfs resizeContainer STORE limits -plist --- */

int prov_mac_parse_limits(const char *buf, size_t len, struct mac_limits *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	plist_t root = parse_root(buf, len, err);
	if (!root || refuse_error_dict(root, err))
		return -1;
	out->type = dstr_nonempty(root, "Type");
	out->current = duint(root, "CurrentSize", &out->has_current);
	out->min_preferred = duint(root, "MinimumSizePreferred", &out->has_min_preferred);
	out->min_noguard = duint(root, "MinimumSizeNoGuard", &out->has_min_noguard);
	out->max = duint(root, "MaximumSize", &out->has_max);
	plist_free(root);
	return 0;
}

void prov_mac_limits_release(struct mac_limits *l)
{
	free(l->type);
	memset(l, 0, sizeof(*l));
}

/* --- diskutil apfs listSnapshots -plist --- */

int prov_mac_parse_snapshots(const char *buf, size_t len, struct mac_snapshots *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	plist_t root = parse_root(buf, len, err);
	if (!root || refuse_error_dict(root, err))
		return -1;
	out->names = strings_of(root, "Snapshots", "SnapshotName", &out->n);
	plist_free(root);
	return 0;
}

void prov_mac_snapshots_release(struct mac_snapshots *s)
{
	free_strings(s->names, s->n);
	memset(s, 0, sizeof(*s));
}

char *prov_mac_tmutil_date(const char *text)
{
	static const char says[] = "Created local snapshot with date: ";
	const char *p = text ? strstr(text, says) : NULL;
	if (!p)
		return NULL;
	p += sizeof(says) - 1;
	size_t n = strspn(p, "0123456789-");
	return n ? xstrndup(p, n) : NULL;
}

/* --- hdiutil --- */

static struct mac_entity *entities_of(plist_t dict, size_t *count)
{
	plist_t arr;
	uint32_t n = darray(dict, "system-entities", &arr);
	struct mac_entity *v = xcalloc(n ? n : 1, sizeof(*v));
	size_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		plist_t it = plist_array_get_item(arr, i);
		if (!PLIST_IS_DICT(it))
			continue;
		v[k].dev = dstr(it, "dev-entry");
		v[k].hint = dstr(it, "content-hint");
		v[k].mount = dstr_nonempty(it, "mount-point");
		v[k].kind = dstr(it, "volume-kind");
		k++;
	}
	*count = k;
	return v;
}

static void entities_release(struct mac_entity *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].dev);
		free(v[i].hint);
		free(v[i].mount);
		free(v[i].kind);
	}
	free(v);
}

int prov_mac_parse_attach(const char *buf, size_t len, struct mac_attach *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	plist_t root = parse_root(buf, len, err);
	if (!root)
		return -1;
	out->ents = entities_of(root, &out->nents);
	plist_free(root);
	return 0;
}

void prov_mac_attach_release(struct mac_attach *a)
{
	entities_release(a->ents, a->nents);
	memset(a, 0, sizeof(*a));
}

int prov_mac_parse_hdi_info(const char *buf, size_t len, struct mac_hdi_info *out, struct strbuf *err)
{
	memset(out, 0, sizeof(*out));
	plist_t root = parse_root(buf, len, err);
	if (!root)
		return -1;
	plist_t arr;
	uint32_t n = darray(root, "images", &arr);
	out->images = xcalloc(n ? n : 1, sizeof(*out->images));
	for (uint32_t i = 0; i < n; i++) {
		plist_t it = plist_array_get_item(arr, i);
		if (!PLIST_IS_DICT(it))
			continue;
		struct mac_image *im = &out->images[out->nimages++];
		im->path = dstr(it, "image-path");
		im->ents = entities_of(it, &im->nents);
	}
	plist_free(root);
	return 0;
}

void prov_mac_hdi_info_release(struct mac_hdi_info *h)
{
	for (size_t i = 0; i < h->nimages; i++) {
		free(h->images[i].path);
		entities_release(h->images[i].ents, h->images[i].nents);
	}
	free(h->images);
	memset(h, 0, sizeof(*h));
}

/* --- text --- */

int prov_mac_error_line(const char *text, long *code, struct strbuf *msg)
{
	const char *found = NULL;
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, "Error: -", 8))
			found = p;
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	if (!found)
		return 0;
	char *end;
	long c = strtol(found + 7, &end, 10);
	if (end == found + 7 || *end != ':' || c >= 0) /* "-0" is no error code */
		return 0;
	end++;
	while (*end == ' ')
		end++;
	size_t n = strcspn(end, "\r\n");
	*code = c;
	sb_add(msg, end, n);
	return 1;
}

char *prov_mac_created_path(const char *text)
{
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, "created: ", 9)) {
			size_t n = strcspn(p + 9, "\r\n");
			return n ? xstrndup(p + 9, n) : NULL;
		}
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

int prov_mac_plist_fuzz_one(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	int ok = 0;
	struct strbuf e = STRBUF_INIT;
	struct mac_list l;
	struct mac_info i;
	struct mac_apfs a;
	struct mac_attach at;
	struct mac_hdi_info h;
	struct mac_limits lim;
	struct mac_snapshots sn;
	ok += prov_mac_parse_snapshots(buf, size, &sn, &e) == 0;
	prov_mac_snapshots_release(&sn);
	ok += prov_mac_parse_limits(buf, size, &lim, &e) == 0;
	prov_mac_limits_release(&lim);
	ok += prov_mac_parse_list(buf, size, &l, &e) == 0;
	prov_mac_list_release(&l);
	ok += prov_mac_parse_info(buf, size, &i, &e) == 0;
	prov_mac_info_release(&i);
	ok += prov_mac_parse_apfs(buf, size, &a, &e) == 0;
	prov_mac_apfs_release(&a);
	ok += prov_mac_parse_attach(buf, size, &at, &e) == 0;
	prov_mac_attach_release(&at);
	ok += prov_mac_parse_hdi_info(buf, size, &h, &e) == 0;
	prov_mac_hdi_info_release(&h);
	sb_release(&e);
	return ok;
}
