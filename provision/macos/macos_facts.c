/*
 * What the safety rules need to know about a macOS disk (see macos.h),
 * from diskutil's plists alone:
 *
 *   root-disk      `diskutil info -plist /` names the volume that holds /,
 *                  its APFS container (APFSContainerReference) and the
 *                  container's physical stores (APFSPhysicalStores); each
 *                  store's `diskutil info -plist` names its ParentWholeDisk.
 *                  The container and those whole disks hold /. When a
 *                  store cannot be read, the disk its name says (disk0s2 ->
 *                  disk0) is taken, with a note: refusing too much is safe.
 *                  When / itself cannot be read, every disk is refused.
 *   system-volume  every volume on the disk (its partitions', a whole-disk
 *                  volume's, and those of APFS containers whose physical
 *                  store is one of its partitions, from `diskutil list` and
 *                  `diskutil apfs list`) mounted at / or under /System.
 *   whole-disk     WholeDisk; unknown counts as not whole.
 *   virtual        VirtualOrPhysical = Virtual.
 *   internal       Internal (absent: unknown, not refused).
 *   read-only      WritableMedia = false.
 *   confirm        MediaName; diskutil's plists carry no serial number.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/spawn.h"
#include "provision/macos/macos.h"
#include "provision/provision.h"

int prov_mac_spawn_query(void *spawner, const char *const *argv, char **out, struct strbuf *err)
{
	struct spawn_opts o = { .split = 1, .cancel = NULL };
	struct spawn_result r;
	if (plat_spawn_run_opts(spawner, argv, NULL, &o, &r, err) < 0)
		return -1;
	int failed = !r.exited || r.status != 0;
	if (failed && (!r.stdout_text || !strstr(r.stdout_text, "<plist"))) {
		/* Not diskutil's error dict: it did not run, or said why in text. */
		struct strbuf t = STRBUF_INIT;
		plat_spawn_argv_text(&t, argv);
		sb_addf(err, "%s failed with %s %d", t.buf, r.exited ? "exit status" : "signal",
			r.status);
		if (r.output_len)
			sb_addf(err, ": %.*s", (int)strcspn(r.output, "\n"), r.output);
		sb_release(&t);
		plat_spawn_result_release(&r);
		return -1;
	}
	*out = r.stdout_text ? xstrdup(r.stdout_text) : xstrdup("");
	plat_spawn_result_release(&r);
	return 0;
}

char *prov_mac_whole_of(const char *id)
{
	if (!strncmp(id, "/dev/", 5))
		id += 5;
	size_t n = strlen(id);
	if (!strncmp(id, "disk", 4)) {
		const char *p = id + 4;
		while (*p >= '0' && *p <= '9')
			p++;
		n = (size_t)(p - id);
	}
	return xstrndup(id, n);
}

int prov_mac_read_info(mac_query_fn q, void *opaque, const char *path, struct mac_info *info,
		  struct strbuf *err)
{
	const char *argv[] = { "diskutil", "info", "-plist", path, NULL };
	char *out = NULL;
	memset(info, 0, sizeof(*info));
	if (q(opaque, argv, &out, err) < 0)
		return -1;
	struct strbuf e = STRBUF_INIT;
	int rc = prov_mac_parse_info(out, strlen(out), info, &e);
	if (rc < 0)
		sb_addf(err, "diskutil info -plist %s printed no usable plist: %s", path, e.buf);
	sb_release(&e);
	free(out);
	return rc;
}

/* Parse a query's plist with one of the parsers; -1 with the reason. */
static int read_plist(mac_query_fn q, void *opaque, const char *const *argv,
		      int (*parse)(const char *, size_t, void *, struct strbuf *), void *res,
		      struct strbuf *err)
{
	char *out = NULL;
	if (q(opaque, argv, &out, err) < 0)
		return -1;
	struct strbuf e = STRBUF_INIT;
	int rc = parse(out, strlen(out), res, &e);
	if (rc < 0) {
		struct strbuf t = STRBUF_INIT;
		plat_spawn_argv_text(&t, argv);
		sb_addf(err, "%s: %s", t.buf, e.buf);
		sb_release(&t);
	}
	sb_release(&e);
	free(out);
	return rc;
}

static int parse_list(const char *b, size_t n, void *res, struct strbuf *e)
{
	return prov_mac_parse_list(b, n, res, e);
}

static int parse_apfs(const char *b, size_t n, void *res, struct strbuf *e)
{
	return prov_mac_parse_apfs(b, n, res, e);
}

static void add_root(struct mac_system *s, const char *disk, const char *why)
{
	for (size_t i = 0; i < s->nroot; i++)
		if (!strcmp(s->root_disks[i], disk))
			return;
	s->root_disks = xrealloc(s->root_disks, (s->nroot + 1) * sizeof(char *));
	s->root_why = xrealloc(s->root_why, (s->nroot + 1) * sizeof(char *));
	s->root_disks[s->nroot] = xstrdup(disk);
	s->root_why[s->nroot] = xstrdup(why);
	s->nroot++;
}

static void trace_root(mac_query_fn q, void *opaque, struct mac_system *s)
{
	struct mac_info root;
	struct strbuf e = STRBUF_INIT, why = STRBUF_INIT;
	if (prov_mac_read_info(q, opaque, "/", &root, &e) < 0 || root.error || !root.id) {
		sb_addf(&why, "cannot tell which disk holds / (diskutil info -plist /: %s)",
			e.len ? e.buf : root.error ? root.error : "no DeviceIdentifier");
		s->root_error = sb_detach(&why);
		prov_mac_info_release(&root);
		sb_release(&e);
		return;
	}
	if (root.container) {
		sb_addf(&why, "/ is on %s, a volume of APFS container %s", root.id, root.container);
		add_root(s, root.container, why.buf);
		for (size_t i = 0; i < root.nstores; i++) {
			struct mac_info st;
			sb_reset(&e);
			sb_reset(&why);
			int ok = prov_mac_read_info(q, opaque, root.stores[i], &st, &e) == 0 && !st.error &&
				 st.parent;
			char *whole = ok ? xstrdup(st.parent) : prov_mac_whole_of(root.stores[i]);
			sb_addf(&why, "/ is on %s in APFS container %s, whose physical store %s is on %s",
				root.id, root.container, root.stores[i], whole);
			if (!ok)
				sb_addf(&why, " (by its name: diskutil info -plist %s said %s)",
					root.stores[i], e.len ? e.buf : st.error ? st.error : "no ParentWholeDisk");
			add_root(s, whole, why.buf);
			free(whole);
			prov_mac_info_release(&st);
		}
		if (!root.nstores) {
			sb_reset(&why);
			sb_addf(&why, "cannot tell which disk holds /: container %s of %s lists no "
				      "physical store", root.container, root.id);
			s->root_error = sb_detach(&why);
		}
	} else {
		char *whole = root.parent ? xstrdup(root.parent) : prov_mac_whole_of(root.id);
		sb_addf(&why, "/ is on %s of %s", root.id, whole);
		add_root(s, whole, why.buf);
		free(whole);
	}
	prov_mac_info_release(&root);
	sb_release(&e);
	sb_release(&why);
}

void prov_mac_system_read(mac_query_fn q, void *opaque, struct mac_system *s)
{
	memset(s, 0, sizeof(*s));
	trace_root(q, opaque, s);
	struct strbuf e = STRBUF_INIT;
	const char *list[] = { "diskutil", "list", "-plist", NULL };
	const char *apfs[] = { "diskutil", "apfs", "list", "-plist", NULL };
	/* Without them no disk's volumes (at /, under /System) can be told:
	 * every disk is refused, as when / cannot be traced. A diskutil that
	 * lists the disks but fails `apfs list` may be a macOS before 10.13,
	 * which has no such verb and which rig does not support: the message
	 * says what rig needs, once for every disk. */
	int listed = read_plist(q, opaque, list, parse_list, &s->list, &e) == 0;
	if (listed && read_plist(q, opaque, apfs, parse_apfs, &s->apfs, &e) < 0 &&
	    !s->root_error) {
		struct strbuf why = STRBUF_INIT;
		sb_addf(&why, "the volumes of the disks cannot be told: %s (rig needs macOS 10.13, "
			      "High Sierra, or later, whose diskutil has apfs list)", e.buf);
		s->root_error = sb_detach(&why);
	} else if (!listed && !s->root_error) {
		struct strbuf why = STRBUF_INIT;
		sb_addf(&why, "the volumes of the disks cannot be told: %s", e.buf);
		s->root_error = sb_detach(&why);
	}
	sb_release(&e);
}

void prov_mac_system_release(struct mac_system *s)
{
	free(s->root_error);
	for (size_t i = 0; i < s->nroot; i++) {
		free(s->root_disks[i]);
		free(s->root_why[i]);
	}
	free(s->root_disks);
	free(s->root_why);
	prov_mac_list_release(&s->list);
	prov_mac_apfs_release(&s->apfs);
	memset(s, 0, sizeof(*s));
}

static int is_system_mount(const char *m)
{
	return m && (!strcmp(m, "/") || !strcmp(m, "/System") || !strncmp(m, "/System/", 8));
}

/* Whether container c (a list entry) lives on whole disk `disk`. */
static int container_on(const struct mac_system *s, const struct mac_disk *c, const char *disk)
{
	int on = 0;
	for (size_t i = 0; i < c->nstores && !on; i++) {
		char *w = prov_mac_whole_of(c->stores[i]);
		on = !strcmp(w, disk);
		free(w);
	}
	const struct mac_container *ac = NULL;
	for (size_t i = 0; i < s->apfs.n && !ac; i++)
		if (s->apfs.c[i].ref && c->id && !strcmp(s->apfs.c[i].ref, c->id))
			ac = &s->apfs.c[i];
	for (size_t i = 0; ac && i < ac->nstores && !on; i++) {
		char *w = prov_mac_whole_of(ac->stores[i].id ? ac->stores[i].id : "");
		on = !strcmp(w, disk);
		free(w);
	}
	return on;
}

/* The first volume of disk (or of a container on it) at / or under /System. */
static char *system_mount(const struct mac_system *s, const char *disk)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < s->list.ndisks && !sb.len; i++) {
		const struct mac_disk *d = &s->list.disks[i];
		if (!d->id)
			continue;
		int mine = !strcmp(d->id, disk);
		if (mine && is_system_mount(d->mount))
			sb_addf(&sb, "%s is mounted at %s", d->id, d->mount);
		for (size_t k = 0; mine && k < d->nparts && !sb.len; k++)
			if (is_system_mount(d->parts[k].mount))
				sb_addf(&sb, "%s is mounted at %s", d->parts[k].id, d->parts[k].mount);
		if (!mine && !container_on(s, d, disk))
			continue;
		for (size_t k = 0; k < d->nvols && !sb.len; k++)
			if (is_system_mount(d->vols[k].mount)) {
				sb_addf(&sb, "%s is mounted at %s", d->vols[k].id, d->vols[k].mount);
				if (!mine)
					sb_addf(&sb, " (APFS container %s on %s)", d->id, disk);
			}
	}
	if (sb.len)
		return sb_detach(&sb);
	sb_release(&sb);
	return NULL;
}

void prov_mac_disk_facts(const struct mac_system *s, const char *path, const struct mac_info *info,
		    struct disk_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	f->name = prov_mac_whole_of(path);
	if (info->id) {
		free(f->name);
		f->name = xstrdup(info->id);
	}
	f->internal = -1;
	f->rotational = -1;
	if (info->error || !info->id) {
		f->missing = xstrdup(info->error ? info->error : "diskutil info printed no DeviceIdentifier");
		return;
	}
	f->exists = 1;
	f->whole = info->whole == 1;
	if (!f->whole)
		f->parent = info->parent ? xstrdup(info->parent) : NULL;
	if (s->root_error) {
		f->root_via = xstrdup(s->root_error);
	} else {
		for (size_t i = 0; i < s->nroot && !f->root_via; i++)
			if (!strcmp(s->root_disks[i], f->name))
				f->root_via = xstrdup(s->root_why[i]);
	}
	f->system_mount = system_mount(s, f->name);
	f->is_virtual = info->virt && !strcmp(info->virt, "Virtual");
	f->internal = info->internal;
	f->read_only = info->writable_media == 0;
	f->size = info->total_size ? info->total_size : info->size;
	f->sector = info->block_size;
	f->rotational = info->solid_state == 1 ? 0 : info->solid_state == 0 ? 1 : -1;
	f->removable = info->removable == 1;
	f->model = info->media ? xstrdup(info->media) : NULL;
}

void prov_mac_disk_keys(const char *id, const char *what, struct target_keys *keys)
{
	char *whole = prov_mac_whole_of(id);
	struct strbuf key = STRBUF_INIT;
	sb_addf(&key, "disk-%s", whole);
	prov_target_keys_add(keys, key.buf, what);
	sb_release(&key);
	free(whole);
}

void prov_macos_devices_report(mac_query_fn q, void *opaque, struct strbuf *out)
{
	struct mac_system s;
	prov_mac_system_read(q, opaque, &s);
	if (s.root_error)
		sb_addf(out, "warning: %s; every disk is refused\n", s.root_error);
	if (!s.list.nwhole)
		sb_adds(out, "no disks found (diskutil list -plist lists no WholeDisks)\n");
	for (size_t i = 0; i < s.list.nwhole; i++) {
		struct mac_info info;
		struct strbuf e = STRBUF_INIT, extra = STRBUF_INIT;
		struct disk_facts f;
		if (prov_mac_read_info(q, opaque, s.list.whole[i], &info, &e) < 0)
			info.error = xstrdup(e.buf);
		prov_mac_disk_facts(&s, s.list.whole[i], &info, &f);
		sb_addf(&extra, "%s", info.internal == 1 ? "internal" : info.internal == 0 ? "external"
							 : "internal or external unknown");
		if (info.bus)
			sb_addf(&extra, ", %s", info.bus);
		if (info.virt)
			sb_addf(&extra, ", %s", info.virt);
		struct target_keys keys = { 0 };
		prov_mac_disk_keys(s.list.whole[i], s.list.whole[i], &keys);
		f.rig_run = prov_target_keys_holder(&keys, NULL);
		prov_target_keys_release(&keys);
		prov_safety_describe(&f, s.list.whole[i], extra.buf, out);
		prov_disk_facts_release(&f);
		prov_mac_info_release(&info);
		sb_release(&e);
		sb_release(&extra);
	}
	prov_mac_system_release(&s);
}
