/*
 * The macOS backend: image and disk targets, with diskutil and hdiutil.
 * For each layout, from scratch:
 *
 *   image  (with --force an existing file is checked again just before:
 *          a regular file, not attached)
 *          `hdiutil create -sectors N -layout NONE -type UDIF PATH` (a blank
 *          disk image, no partition map, no file system; hdiutil names the
 *          file it made on its `created:` line), then
 *          `hdiutil attach -nomount -plist FILE` (the whole disk from
 *          system-entities)
 *   disk   the safety rules again, on facts read afresh, and the identity
 *          (media name, serial where known, size, whole, virtual, internal)
 *          compared with the disk checked and confirmed in prepare
 *   both   `diskutil info -plist DISK` (TotalSize; a disk target's identity
 *          compared again: command.c's prov_same_disk, as on Linux), an
 *          image's disk checked to be still its file's (`hdiutil info
 *          -plist`), then
 *          `diskutil partitionDisk DISK GPT FMT NAME BYTESB ... "Free Space" gap R`
 *          with byte sizes from macos_layout.c; then the result is re-read
 *          (`diskutil list -plist DISK`, `diskutil apfs list -plist`) and
 *          checked against the plan (types, order, sizes, one container
 *          and one volume per APFS partition); each volume's
 *          `diskutil info -plist` gives its mount point (mounted with
 *          `diskutil mount` when it is not), file system and offset.
 *
 * Teardown: an image is detached (`hdiutil detach`, again while it says
 * "Resource busy", then with -force) and its file deleted unless `keep:
 * true`; a disk keeps its partitions and is unmounted (`diskutil
 * unmountDisk`). Remount: `diskutil unmount` and `diskutil mount` of the
 * volume, and it must come back at the same mount point.
 *
 * partitionDisk is given no partition count: with the "Free Space" triplet
 * the man page leaves open whether that counts, and the count is optional.
 * Volumes stay where diskutil mounts them (/Volumes/NAME): rig does not
 * choose mount points on macOS. A layout is made from scratch with
 * partitionDisk, except one whose first partition says `keep: true`: that
 * partition is resized in place (`diskutil apfs resizeContainer` or
 * `diskutil resizeVolume`, keep_layout below), the way the halves article
 * grew its layout, and the new partitions go into the space it frees.
 *
 * Errors name the command and what diskutil said: its `Error: -NNNNN:` line
 * or the ErrorMessage of its -plist error dict, then its first lines of
 * output. Every command goes through the spawner (logged; in `rig plan`
 * only printed, and names known only at run time are placeholders: diskN
 * for an attached image, /Volumes/NAME). Read-only queries in `rig plan`
 * (the target disk's facts and size) run for real, unlogged, when diskutil
 * is there.
 *
 * The cache: purge(8) is the platform's (platform/macos.c), as root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/platform.h"
#include "provision/command.h"
#include "provision/engine.h"
#include "provision/journal.h"
#include "provision/macos/macos.h"
#include "provision/macos/macos_resume.h"
#include "provision/vol_facts.h"

#define DETACH_TRIES 3       /* plain detaches while "Resource busy", then -force */
#define DETACH_WAIT_MS 500

struct mvol {
	struct mac_made m;
	char *mount;
	char *work;              /* mount/rig-RUNID: where the modules work */
	struct mac_info part;    /* diskutil info of the partition */
	struct mac_info vol;     /* ... and of the volume (the same for non-APFS) */
	struct mac_snaps snaps;  /* snapshots taken and not deleted (macos_cond.c) */
};

struct mx {
	int dry;
	int is_image;
	char *image_file;        /* the file hdiutil creates: the plan's path, .dmg added */
	char *image_key;         /* ... absolute: what the journal knows it by (a resume
	                          * gets the plan's relative paths made absolute) */
	char *image_made;        /* the file it did create (its `created:` line) */
	char *disk;              /* diskN: the target, or the attached image */
	int attached;
	int partitioned;
	int kept_reused;         /* a resumed keep layout found made: no resize */
	uint64_t total;          /* TotalSize; 0 unknown */
	struct mac_info info;    /* the disk target's, as last read */
	struct disk_facts facts;
	struct disk_identity id; /* the disk target as checked and confirmed in prepare */
	struct prov_extent **fit; /* per layout (prov_fit_layouts); NULL: the size is unknown */
	struct mvol *v;
	size_t nv;
	size_t li;               /* the layout of v */
	struct mac_leftover found; /* a resumed run: what the killed one left (find) */
};

/* --- commands --- */

/* What diskutil said about its failure: its Error line or error dict. */
static void diskutil_says(const struct spawn_result *r, struct strbuf *sb)
{
	long code = 0;
	struct strbuf msg = STRBUF_INIT;
	if (r->output && prov_mac_error_line(r->output, &code, &msg)) {
		sb_addf(sb, "error %ld: %s", code, msg.buf);
	} else if (r->stdout_text && r->stdout_len) {
		struct mac_info i;
		struct strbuf e = STRBUF_INIT;
		if (prov_mac_parse_info(r->stdout_text, r->stdout_len, &i, &e) == 0 && i.error)
			sb_adds(sb, i.error);
		prov_mac_info_release(&i);
		sb_release(&e);
	}
	sb_release(&msg);
}

/* Run a command; on failure ctx->err leads with what the tool said. */
static int mx_run(struct provision_ctx *ctx, const char *const *argv, struct spawn_result *out)
{
	struct spawn_result r;
	struct strbuf e = STRBUF_INIT;
	struct provision_ctx q = *ctx;
	q.err = &e;
	int rc = prov_run_result(&q, argv, &r);
	if (rc < 0) {
		struct strbuf says = STRBUF_INIT;
		diskutil_says(&r, &says);
		if (says.len) {
			struct strbuf t = STRBUF_INIT;
			plat_spawn_argv_text(&t, argv);
			sb_addf(ctx->err, "%s: %s; ", t.buf, says.buf);
			sb_release(&t);
		}
		sb_adds(ctx->err, e.buf);
		sb_release(&says);
	}
	sb_release(&e);
	if (out && rc == 0)
		*out = r;
	else
		plat_spawn_result_release(&r);
	return rc;
}

/* mx_run as action on object, journaled around it (journal.h). */
static int mx_act(struct provision_ctx *ctx, const char *action, const char *object,
		  const char *identity, const char *const *argv, struct spawn_result *out)
{
	int64_t j = prov_journal_begin(ctx, action, object, argv, identity);
	int rc = mx_run(ctx, argv, out);
	prov_journal_end(ctx, j, rc);
	return rc;
}

/* A command whose stdout is a plist, parsed by parse; nothing parsed in dry run. */
static int mx_plist(struct provision_ctx *ctx, struct mx *s, const char *const *argv,
		    int (*parse)(const char *, size_t, void *, struct strbuf *), void *res)
{
	struct spawn_result r;
	int rc = mx_run(ctx, argv, &r);
	if (rc < 0 || s->dry) {
		if (rc == 0)
			plat_spawn_result_release(&r);
		return rc;
	}
	struct strbuf e = STRBUF_INIT;
	rc = parse(r.stdout_text ? r.stdout_text : "", r.stdout_len, res, &e);
	if (rc < 0) {
		struct strbuf t = STRBUF_INIT;
		plat_spawn_argv_text(&t, argv);
		sb_addf(ctx->err, "%s printed no usable plist: %s", t.buf, e.buf);
		sb_release(&t);
		rc = -EIO;
	}
	sb_release(&e);
	plat_spawn_result_release(&r);
	return rc;
}

int prov_macos_plist_info(const char *b, size_t n, void *res, struct strbuf *e)
{
	struct mac_info *i = res;
	if (prov_mac_parse_info(b, n, i, e) < 0)
		return -1;
	if (i->error) {
		sb_adds(e, i->error);
		return -1;
	}
	return 0;
}

int prov_macos_plist_list(const char *b, size_t n, void *res, struct strbuf *e)
{
	return prov_mac_parse_list(b, n, res, e);
}

int prov_macos_plist_apfs(const char *b, size_t n, void *res, struct strbuf *e)
{
	return prov_mac_parse_apfs(b, n, res, e);
}

static int p_attach(const char *b, size_t n, void *res, struct strbuf *e)
{
	return prov_mac_parse_attach(b, n, res, e);
}

int prov_macos_plist_hdi_info(const char *b, size_t n, void *res, struct strbuf *e)
{
	return prov_mac_parse_hdi_info(b, n, res, e);
}

static int p_limits(const char *b, size_t n, void *res, struct strbuf *e)
{
	return prov_mac_parse_limits(b, n, res, e);
}

/* `hdiutil info -plist`: the disk an image file is attached as, or NULL
 * (caller frees); -1 when hdiutil cannot say. */
static int attached_as(struct provision_ctx *ctx, struct mx *s, const char *file, char **disk)
{
	const char *argv[] = { "hdiutil", "info", "-plist", NULL };
	struct mac_hdi_info h = { 0 };
	*disk = NULL;
	int rc = mx_plist(ctx, s, argv, prov_macos_plist_hdi_info, &h);
	for (size_t i = 0; rc == 0 && i < h.nimages && !*disk; i++) {
		/* hdiutil names the resolved path: the plan's may pass through a
		 * symlink (on a Mac /tmp and /var are links to /private/...) */
		if (!h.images[i].path || !files_same(h.images[i].path, file))
			continue;
		for (size_t k = 0; k < h.images[i].nents && !*disk; k++)
			if (h.images[i].ents[k].dev && !strncmp(h.images[i].ents[k].dev, "/dev/", 5))
				*disk = prov_mac_whole_of(h.images[i].ents[k].dev);
		if (!*disk)
			*disk = xstrdup("a disk");
	}
	prov_mac_hdi_info_release(&h);
	return rc;
}

static int info_of(struct provision_ctx *ctx, struct mx *s, const char *dev, struct mac_info *i)
{
	const char *argv[] = { "diskutil", "info", "-plist", dev, NULL };
	memset(i, 0, sizeof(*i));
	return mx_plist(ctx, s, argv, prov_macos_plist_info, i);
}

static int cancelled(struct provision_ctx *ctx, int rc)
{
	if (rc == 0 && prov_cancelled(ctx))
		return -EINTR;
	return rc;
}

/* --- the target --- */

static int query_ctx(void *opaque, const char *const *argv, char **out, struct strbuf *err)
{
	struct provision_ctx *ctx = opaque;
	return prov_mac_spawn_query(ctx->sp, argv, out, err);
}

static int query_quiet(void *opaque, const char *const *argv, char **out, struct strbuf *err)
{
	(void)opaque;
	struct spawner real = plat_spawner_fault(plat_spawner_real(NULL, NULL));
	return prov_mac_spawn_query(&real, argv, out, err);
}

/* Read the disk target's facts and apply the rules; dry: only say it. */
static int check_disk(struct provision_ctx *ctx, struct mx *s)
{
	const struct plan_target *t = &ctx->plan->target;
	mac_query_fn q = s->dry ? query_quiet : query_ctx;
	struct mac_system sys;
	struct strbuf e = STRBUF_INIT, fact = STRBUF_INIT;
	prov_mac_system_read(q, ctx, &sys);
	prov_mac_info_release(&s->info);
	prov_disk_facts_release(&s->facts);
	if (prov_mac_read_info(q, ctx, t->device, &s->info, &e) < 0)
		s->info.error = xstrdup(e.buf);
	prov_mac_disk_facts(&sys, t->device, &s->info, &s->facts);
	prov_mac_system_release(&sys);
	const struct safety_rule *rule = NULL;
	int rc = prov_safety_check(&s->facts, t->confirm, ctx->allow, &rule, &fact);
	if (s->dry) {
		if (rc < 0)
			prov_note(ctx, 1, "on this machine rig would refuse %s: %s (rule %s)",
				  t->device, fact.buf, rule->name);
		else
			prov_note(ctx, 0, "on this machine %s passes every safety rule; rig run asks "
					  "to type its media name unless --yes", t->device);
		rc = 0;
	} else if (rc < 0) {
		sb_addf(ctx->err, "refusing to erase %s: %s (rule %s: %s)", t->device, fact.buf,
			rule->name, rule->what);
	} else if (s->id.taken && !prov_same_disk(ctx, &s->id, &s->facts, t->device, NULL)) {
		rc = -EPERM;
	}
	sb_release(&e);
	sb_release(&fact);
	return rc;
}

static int check_tools(struct provision_ctx *ctx, const struct mx *s)
{
	const char *tools[] = { "diskutil", s->is_image ? "hdiutil" : NULL };
	struct strbuf missing = STRBUF_INIT;
	for (size_t k = 0; k < 2; k++)
		if (tools[k] && !prov_in_path(tools[k]))
			sb_addf(&missing, "%s%s", missing.len ? ", " : "", tools[k]);
	if (!missing.len)
		return 0;
	sb_addf(ctx->err, "missing tools: %s (they come with macOS; on Linux, only the fake "
			  "ones of build/tools/macos can stand in for them)", missing.buf);
	sb_release(&missing);
	return -ENOENT;
}

static char *image_file_of(const char *path)
{
	size_t n = strlen(path);
	struct strbuf sb = STRBUF_INIT;
	sb_adds(&sb, path);
	if (n < 4 || strcmp(path + n - 4, ".dmg"))
		sb_adds(&sb, ".dmg");
	return sb_detach(&sb);
}

/* Before anything changes, and again just before hdiutil create: may the
 * image file be (re)made? */
static int check_image(struct provision_ctx *ctx, struct mx *s, int quiet)
{
	struct stat st;
	if (lstat(s->image_file, &st) < 0)
		return 0;
	char *disk = NULL;
	int rc = attached_as(ctx, s, s->image_file, &disk);
	if (rc == 0 && disk) {
		sb_addf(ctx->err, "image %s is attached as %s; detach it first (hdiutil detach %s) "
				  "if nothing uses it", s->image_file, disk, disk);
		free(disk);
		return -EBUSY;
	}
	if (rc < 0)
		return rc;
	if (!S_ISREG(st.st_mode)) {
		sb_addf(ctx->err, "image %s exists and is not a regular file; rig never "
				  "overwrites it", s->image_file);
		return -EEXIST;
	}
	if (!ctx->force) {
		sb_addf(ctx->err, "image %s exists; pass --force to overwrite it, or choose "
				  "another path", s->image_file);
		return -EEXIST;
	}
	if (!quiet)
		prov_note(ctx, 1, "overwriting %s (--force)", s->image_file);
	return 0;
}

/* Every layout fitted to s->total (prov_fit_layouts). */
static int layouts_fit(struct provision_ctx *ctx, struct mx *s)
{
	prov_fits_free(s->fit);
	s->fit = prov_fit_layouts(ctx, s->total, 512);
	return s->fit ? 0 : -ENOSPC;
}

static void free_vols(struct mx *s)
{
	for (size_t k = 0; k < s->nv; k++) {
		prov_mac_made_release(&s->v[k].m, 1);
		free(s->v[k].mount);
		free(s->v[k].work);
		prov_mac_info_release(&s->v[k].part);
		prov_mac_info_release(&s->v[k].vol);
		prov_snap_list_release(&s->v[k].snaps.l);
	}
	free(s->v);
	s->v = NULL;
	s->nv = 0;
}

static void free_state(void *state)
{
	struct mx *s = state;
	if (!s)
		return;
	free(s->image_file);
	free(s->image_key);
	free(s->image_made);
	free(s->disk);
	prov_mac_info_release(&s->info);
	prov_disk_facts_release(&s->facts);
	prov_disk_identity_release(&s->id);
	prov_fits_free(s->fit);
	free_vols(s);
	prov_mac_leftover_release(&s->found);
	free(s);
}

static int mx_prepare(struct provision_ctx *ctx)
{
	const struct plan *p = ctx->plan;
	struct mx *s = xcalloc(1, sizeof(*s));
	s->dry = plat_spawner_dry_run(ctx->sp);
	s->is_image = p->target.kind == TARGET_IMAGE;
	int rc = s->dry ? 0 : check_tools(ctx, s);
	if (rc == 0 && !s->dry && strcmp(plat_name(), "macos"))
		prov_note(ctx, 1, "the macOS backend runs on %s here (--platform macos): diskutil and "
				  "hdiutil are the ones first on PATH, and the file systems measured are "
				  "whatever their volumes are, not APFS or HFS+", plat_name());
	if (rc == 0 && s->is_image) {
		s->image_file = image_file_of(p->target.image_path);
		struct strbuf e = STRBUF_INIT;
		s->image_key = s->dry ? NULL : prov_absolute_image(s->image_file, &e);
		if (!s->image_key) /* a folder that does not exist: check_image says so */
			s->image_key = xstrdup(s->image_file);
		sb_release(&e);
		s->total = ctx->image_size ? ctx->image_size : p->target.image_size;
		s->total = (s->total + 511) / 512 * 512;
		if (!s->dry && ctx->resume)
			rc = prov_engine_resume(ctx, s);
		if (rc == 0 && !s->dry && !(ctx->resume && ctx->resume->reused))
			rc = check_image(ctx, s, 0);
	} else if (rc == 0) {
		rc = !s->dry && ctx->resume ? prov_engine_resume(ctx, s) : 0;
		if (rc == 0)
			rc = check_disk(ctx, s);
		if (rc == 0 && !s->dry && !ctx->yes)
			rc = prov_typed_confirmation(ctx, &s->facts);
		if (rc == 0 && !s->dry)
			prov_disk_identity_take(&s->id, &s->facts);
		s->total = s->facts.exists ? s->facts.size : 0;
		if (s->dry && !s->total)
			prov_note(ctx, 0, "the size of %s is not known here: S1, S2, ... stand for the "
					  "byte sizes computed from its TotalSize at run time",
				  p->target.device);
	}
	if (rc == 0 && s->total)
		rc = layouts_fit(ctx, s);
	if (rc < 0) {
		free_state(s);
		return rc;
	}
	ctx->state = s;
	return 0;
}

/* --- provisioning --- */

static int mx_create_image(struct provision_ctx *ctx)
{
	struct mx *s = ctx->state;
	struct strbuf sectors = STRBUF_INIT;
	sb_addf(&sectors, "%llu", (unsigned long long)(s->total / 512));
	const char *create[] = { "hdiutil", "create", "-sectors", sectors.buf, "-layout", "NONE",
				 "-type", "UDIF", ctx->force ? "-ov" : ctx->plan->target.image_path,
				 ctx->force ? ctx->plan->target.image_path : NULL, NULL };
	struct spawn_result r;
	/* -ov overwrites: the path is checked again right before */
	int rc = s->dry ? 0 : check_image(ctx, s, 1);
	if (rc == 0)
		rc = mx_act(ctx, "create-image", s->image_key, NULL, create, &r);
	sb_release(&sectors);
	if (rc < 0)
		return rc;
	s->image_made = s->dry ? xstrdup(s->image_file) : prov_mac_created_path(r.stdout_text);
	plat_spawn_result_release(&r);
	if (!s->image_made) {
		sb_addf(ctx->err, "hdiutil create printed no `created:` line; rig does not know "
				  "which file it made (it expected %s)", s->image_file);
		return -EIO;
	}
	return 0;
}

static int mx_attach(struct provision_ctx *ctx)
{
	struct mx *s = ctx->state;
	const char *attach[] = { "hdiutil", "attach", "-nomount", "-plist", s->image_made, NULL };
	struct mac_attach at = { 0 };
	int64_t j = prov_journal_begin(ctx, "attach", s->image_key, attach, NULL);
	int rc = mx_plist(ctx, s, attach, p_attach, &at);
	prov_journal_end(ctx, j, rc);
	if (rc < 0) {
		prov_mac_attach_release(&at);
		return rc;
	}
	if (s->dry) {
		s->disk = xstrdup("diskN");
	} else {
		/* The whole disk: the entry without a slice (with -layout NONE, the only one). */
		for (size_t i = 0; i < at.nents && !s->disk; i++) {
			const char *d = at.ents[i].dev;
			if (d && !strncmp(d, "/dev/disk", 9) && !strchr(d + 9, 's'))
				s->disk = xstrdup(d + 5);
		}
	}
	prov_mac_attach_release(&at);
	if (!s->disk) {
		sb_addf(ctx->err, "hdiutil attach -plist %s named no whole disk in system-entities",
			s->image_made);
		return -EIO;
	}
	s->attached = 1;
	return 0;
}

/*
 * Right before a command that erases s->disk: is it still the disk to
 * erase? A disk target: the one checked and confirmed in prepare, by the
 * facts of di (its `diskutil info -plist`, just read): media name, size,
 * whole, virtual, internal (rule identity, shared with Linux). An image: the
 * disk hdiutil lists its file as (`hdiutil info -plist`).
 */
static int still_the_disk(struct provision_ctx *ctx, struct mx *s, const struct mac_info *di,
			  const char *const *argv)
{
	if (s->dry)
		return 0;
	if (!s->is_image) {
		const char *dev = ctx->plan->target.device;
		struct mac_system none = { 0 };
		struct disk_facts now;
		prov_mac_disk_facts(&none, dev, di, &now);
		int ok = prov_same_disk(ctx, &s->id, &now, dev, argv);
		prov_disk_facts_release(&now);
		return ok ? 0 : -EPERM;
	}
	char *as = NULL;
	int rc = attached_as(ctx, s, s->image_made, &as);
	if (rc == 0 && (!as || strcmp(as, s->disk))) {
		struct strbuf cmd = STRBUF_INIT;
		plat_spawn_argv_text(&cmd, argv);
		sb_addf(ctx->err, "refusing to run %s: %s is no longer the disk of image %s "
				  "(hdiutil info lists the image as %s; rule identity)", cmd.buf,
			s->disk, s->image_made, as ? as : "not attached");
		sb_release(&cmd);
		rc = -EPERM;
	}
	free(as);
	return rc;
}

/*
 * The size arguments of layout li's partitions in sz[] (bytes, or S1B...
 * when the disk's size is unknown in `rig plan`), appended to argv at *n
 * as format, name and size triplets (the kept first partition of a resize:
 * its size alone), closed by a "Free Space" triplet of the remainder so
 * that the last partition is not stretched.
 */
static void triplets(const struct mx *s, const struct plan_layout *l, size_t li, int kept,
		     struct strbuf *sz, const char **argv, size_t *n)
{
	for (size_t i = 0; i < l->nparts; i++) {
		sb_init(&sz[i]);
		if (s->fit)
			sb_addf(&sz[i], "%lluB", (unsigned long long)s->fit[li][i].bytes);
		else
			sb_addf(&sz[i], "S%zuB", i + 1);
		if (i == 0 && kept) {
			argv[(*n)++] = sz[0].buf;
			continue;
		}
		argv[(*n)++] = prov_mac_format(l->parts[i].fs);
		argv[(*n)++] = l->parts[i].name;
		argv[(*n)++] = sz[i].buf;
	}
	argv[(*n)++] = "Free Space";
	argv[(*n)++] = "gap";
	argv[(*n)++] = "R";
	argv[*n] = NULL;
}

static void release_sizes(struct strbuf *sz, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_release(&sz[i]);
	free(sz);
}

static int partition_disk(struct provision_ctx *ctx, struct mx *s, size_t li,
			  const struct mac_info *di)
{
	const struct plan_layout *l = &ctx->plan->layouts[li];
	struct strbuf *sz = xcalloc(l->nparts, sizeof(*sz));
	const char **argv = xcalloc(3 * l->nparts + 10, sizeof(char *));
	size_t n = 0;
	argv[n++] = "diskutil";
	argv[n++] = "partitionDisk";
	argv[n++] = s->disk;
	argv[n++] = "GPT";
	triplets(s, l, li, 0, sz, argv, &n);
	int rc = still_the_disk(ctx, s, di, argv);
	if (rc == 0) {
		s->partitioned = 1;
		rc = mx_act(ctx, "partition", s->disk, NULL, argv, NULL);
	}
	release_sizes(sz, l->nparts);
	free(argv);
	return rc;
}

/* Re-read the disk and match each plan partition to what diskutil made. */
static int reread(struct provision_ctx *ctx, struct mx *s, size_t li)
{
	const char *verb = !ctx->plan->layouts[li].keeps ? "diskutil partitionDisk"
			   : prov_mac_is_apfs(ctx->plan->layouts[li].parts[0].fs)
				   ? "diskutil apfs resizeContainer"
				   : "diskutil resizeVolume";
	const struct plan_layout *l = &ctx->plan->layouts[li];
	const char *list[] = { "diskutil", "list", "-plist", s->disk, NULL };
	const char *apfs[] = { "diskutil", "apfs", "list", "-plist", NULL };
	struct mac_list ml = { 0 };
	struct mac_apfs ma = { 0 };
	int rc = mx_plist(ctx, s, list, prov_macos_plist_list, &ml);
	if (rc == 0)
		rc = mx_plist(ctx, s, apfs, prov_macos_plist_apfs, &ma);
	if (rc == 0 && s->dry) {
		prov_note(ctx, 0, "check that %s holds the EFI partition and then %zu partition%s of "
				  "the types, order and sizes above; then per volume `diskutil info "
				  "-plist` for its identifier, mount point and offset",
			  s->disk, l->nparts, l->nparts == 1 ? "" : "s");
		for (size_t k = 0; k < l->nparts; k++) {
			struct strbuf sb = STRBUF_INIT;
			sb_addf(&sb, "/Volumes/%s", l->parts[k].name);
			s->v[k].mount = sb_detach(&sb);
		}
	} else if (rc == 0) {
		struct mac_made *made = xcalloc(l->nparts, sizeof(*made));
		struct strbuf e = STRBUF_INIT;
		rc = prov_mac_layout_check(l, s->fit[li], s->disk, &ml, &ma, made, &e);
		if (rc < 0)
			sb_addf(ctx->err, "after %s%s on %s: %s", verb,
				s->kept_reused ? " (by the interrupted run)" : "", s->disk, e.buf);
		for (size_t k = 0; k < l->nparts; k++)
			s->v[k].m = made[k];
		free(made);
		sb_release(&e);
	}
	prov_mac_list_release(&ml);
	prov_mac_apfs_release(&ma);
	return rc;
}

/* The diskutil info of a volume's partition. */
static const struct mac_info *part_info(const struct mvol *v)
{
	return v->m.container ? &v->part : &v->vol;
}

/* Info of a volume's partition and volume; mount it when diskutil did not. */
static int map_volume(struct provision_ctx *ctx, struct mx *s, size_t li, size_t k)
{
	const struct plan_partition *pt = &ctx->plan->layouts[li].parts[k];
	struct mvol *v = &s->v[k];
	/* HFS+, ExFAT, FAT32: the partition is the volume, one info serves. */
	int rc = v->m.container ? info_of(ctx, s, v->m.part, &v->part) : 0;
	if (rc == 0)
		rc = info_of(ctx, s, v->m.volume, &v->vol);
	if (rc == 0 && !v->vol.mount) {
		const char *argv[] = { "diskutil", "mount", v->m.volume, NULL };
		rc = mx_act(ctx, "mount", v->m.volume, NULL, argv, NULL);
		if (rc == 0) {
			prov_mac_info_release(&v->vol);
			rc = info_of(ctx, s, v->m.volume, &v->vol);
		}
		if (rc == 0 && !v->vol.mount) {
			sb_addf(ctx->err, "%s (%s) is not mounted after diskutil mount %s", v->m.volume,
				pt->name, v->m.volume);
			rc = -EIO;
		}
	}
	if (rc < 0)
		return rc;
	const char *type = prov_mac_fs_type(pt->fs);
	if (!v->vol.fs_type || strcmp(v->vol.fs_type, type)) {
		sb_addf(ctx->err, "%s (%s) has file system %s; the plan asks for %s (%s)",
			v->m.volume, pt->name, v->vol.fs_type ? v->vol.fs_type : "unknown", pt->fs, type);
		return -EIO;
	}
	if (!prov_mac_name_matches(pt->fs, v->vol.volume, pt->name)) {
		sb_addf(ctx->err, "%s is named '%s'; the plan names it '%s'", v->m.volume,
			v->vol.volume ? v->vol.volume : "", pt->name);
		return -EIO;
	}
	v->mount = xstrdup(v->vol.mount);
	return 0;
}

/* The facts recorded with a volume (vol_facts.h). */
static char *volume_facts(struct provision_ctx *ctx, const struct mx *s, size_t li, size_t k)
{
	const struct mvol *v = &s->v[k];
	const struct mac_info *d = s->is_image ? part_info(v) : &s->info;
	const struct plan_layout *l = &ctx->plan->layouts[li];
	struct strbuf mo = STRBUF_INIT;
	int kept = l->keeps && k == 0;
	struct vol_facts f = {
		.target = s->is_image ? "image" : "disk",
		.disk = s->disk,
		.partition = v->m.part,
		.volume = v->m.volume,
		.container = v->m.container,
		.number = (unsigned)k + 1,
		.name = l->parts[k].name,
		.image = s->is_image ? s->image_made : NULL,
		.model = s->is_image ? NULL : s->info.media,
		.serial = NULL, /* diskutil's plists have none */
		.bus = d->bus,
		.rotational = d->solid_state == MAC_UNKNOWN ? VF_UNKNOWN : !d->solid_state,
		.internal = d->internal == MAC_UNKNOWN ? VF_UNKNOWN : d->internal,
		.sector_size = d->block_size,
		.partition_bytes = v->m.size,
		.fs = l->parts[k].fs,
		.fs_personality = v->vol.fs_name,
		.fs_type = v->vol.fs_type,
		.block_size = v->vol.alloc_block,
		.mount_point = v->mount,
		.mount_options = plat_mount_flags(v->mount, &mo) == 0 ? mo.buf : NULL,
		.loop_direct_io = VF_UNKNOWN,
		.kept = kept,
		.kept_from = kept ? (li ? l[-1].name : "the disk as found") : NULL,
		.work_dir = v->work,
	};
	struct prov_cond_text ct;
	prov_mac_cond_facts(ctx, &l->parts[k], v->mount, &f, &ct);
	struct statvfs sv;
	if (!s->dry && v->mount && statvfs(v->mount, &sv) == 0) {
		f.has_space = 1;
		f.capacity_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
		f.free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	}
	char *json = prov_vol_facts_json(&f);
	prov_cond_text_release(&ct);
	sb_release(&mo);
	return json;
}

/* Before partitionDisk: `diskutil info -plist DISK`, kept in di for the
 * identity check, and its TotalSize (an attached image's disk: the layout
 * sizes follow it). */
static int read_size(struct provision_ctx *ctx, struct mx *s, struct mac_info *di)
{
	if (!s->dry && !s->is_image) {
		/* diskutil's error dict (a disk that is gone) is the identity
		 * check's to say; a read that failed otherwise is an error */
		struct strbuf e = STRBUF_INIT;
		int rc = prov_mac_read_info(query_ctx, ctx, s->disk, di, &e) < 0 ? -EIO : 0;
		if (rc < 0)
			sb_adds(ctx->err, e.buf);
		sb_release(&e);
		return rc;
	}
	int rc = info_of(ctx, s, s->disk, di);
	if (rc == 0 && !s->dry && s->is_image) {
		uint64_t total = di->total_size ? di->total_size : di->size;
		if (total != s->total) {
			s->total = total;
			rc = layouts_fit(ctx, s);
		}
	}
	return rc;
}


/* --- a layout that keeps its first partition --- */

/* dir/rig-RUNID: a volume's work folder (caller frees). */
static char *work_dir_of(const struct provision_ctx *ctx, const char *mount)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/rig-%s", mount, ctx->run_id);
	return sb_detach(&sb);
}

/* Remove this run's work folder from a volume mounted at mount. */
static int clear_work(struct provision_ctx *ctx, struct mx *s, const char *mount, const char *what)
{
	char *w = work_dir_of(ctx, mount);
	struct stat st;
	int rc = 0;
	if (s->dry) {
		prov_note(ctx, 0, "remove this run's work folder %s from %s, if it is there", w, what);
	} else if (lstat(w, &st) == 0) {
		prov_note(ctx, 0, "remove this run's work folder %s from %s", w, what);
		rc = prov_remove_tree(w, ctx->err);
	}
	free(w);
	return rc;
}

/* After a failed resize: what the disk holds now, appended to ctx->err. */
static void say_what_is_now(struct provision_ctx *ctx, struct mx *s)
{
	const char *list[] = { "diskutil", "list", "-plist", s->disk, NULL };
	const char *apfs[] = { "diskutil", "apfs", "list", "-plist", NULL };
	struct mac_list ml = { 0 };
	struct mac_apfs ma = { 0 };
	struct strbuf e = STRBUF_INIT, now = STRBUF_INIT;
	struct provision_ctx q = *ctx;
	q.err = &e;
	if (mx_plist(&q, s, list, prov_macos_plist_list, &ml) == 0 && mx_plist(&q, s, apfs, prov_macos_plist_apfs, &ma) == 0)
		prov_mac_disk_describe(s->disk, &ml, &ma, &now);
	else
		sb_addf(&now, "unknown (%s)", e.buf);
	sb_addf(ctx->err, "\n  %s now: %s", s->disk, now.buf);
	prov_mac_list_release(&ml);
	prov_mac_apfs_release(&ma);
	sb_release(&e);
	sb_release(&now);
}

/* `diskutil apfs resizeContainer STORE limits -plist`: may STORE shrink to target? */
static int check_limits(struct provision_ctx *ctx, struct mx *s, const char *store,
			uint64_t target)
{
	const char *argv[] = { "diskutil", "apfs", "resizeContainer", store, "limits", "-plist",
			       NULL };
	struct mac_limits lim;
	memset(&lim, 0, sizeof(lim));
	int rc = mx_plist(ctx, s, argv, p_limits, &lim);
	if (rc == 0 && !s->dry) {
		if (!lim.has_min_preferred) {
			prov_note(ctx, 1, "diskutil apfs resizeContainer %s limits -plist gives no "
					  "MinimumSizePreferred: the new size is not checked against it",
				  store);
		} else if (target < lim.min_preferred) {
			sb_addf(ctx->err, "refusing to shrink APFS store %s to %llu bytes: diskutil "
					  "apfs resizeContainer %s limits -plist gives MinimumSizePreferred "
					  "%llu bytes (CurrentSize %llu); free space on the kept volume or "
					  "give it a larger size", store, (unsigned long long)target, store,
				(unsigned long long)lim.min_preferred, (unsigned long long)lim.current);
			rc = -ENOSPC;
		}
		if (rc == 0 && lim.has_max && target > lim.max) {
			sb_addf(ctx->err, "refusing to grow APFS store %s to %llu bytes: diskutil apfs "
					  "resizeContainer %s limits -plist gives MaximumSize %llu bytes",
				store, (unsigned long long)target, store, (unsigned long long)lim.max);
			rc = -ENOSPC;
		}
	}
	prov_mac_limits_release(&lim);
	return rc;
}

/*
 * Is the disk the state layout li starts from (its kept partition alone)?
 * *kept: that partition. A resumed run also accepts the layout itself, as
 * the killed run made it (s->kept_reused). Anything else stops the run
 * before a command changes the disk, saying what the disk holds.
 */
static int keep_state(struct provision_ctx *ctx, struct mx *s, size_t li, struct mac_made *kept)
{
	const struct plan_layout *l = &ctx->plan->layouts[li];
	const struct plan_partition *kp = &l->parts[0];
	const char *list[] = { "diskutil", "list", "-plist", s->disk, NULL };
	const char *apfs[] = { "diskutil", "apfs", "list", "-plist", NULL };
	struct mac_list ml = { 0 };
	struct mac_apfs ma = { 0 };
	struct strbuf why = STRBUF_INIT;
	if (s->dry)
		prov_note(ctx, 0, "layout %s keeps partition %s: check that %s holds exactly one "
				  "partition besides EFI, %s with %s named '%s' (%s); anything else "
				  "stops the run before a command changes the disk", l->name,
			  kp->name, s->disk, prov_mac_content(kp->fs),
			  !prov_mac_is_apfs(kp->fs) ? "its volume" : "one APFS container and one volume",
			  kp->name, li ? "as the layout before leaves it" : "the disk as found");
	int rc = mx_plist(ctx, s, list, prov_macos_plist_list, &ml);
	if (rc == 0)
		rc = mx_plist(ctx, s, apfs, prov_macos_plist_apfs, &ma);
	if (rc == 0 && s->dry) {
		struct strbuf id = STRBUF_INIT;
		sb_addf(&id, "%ss2", s->disk);
		kept->part = sb_detach(&id);
	} else if (rc == 0 && !prov_mac_keep_start(kp, s->disk, &ml, &ma, kept, &why)) {
		struct mac_made *made = xcalloc(l->nparts, sizeof(*made));
		struct strbuf e = STRBUF_INIT;
		if (ctx->resume && s->fit &&
		    prov_mac_layout_check(l, s->fit[li], s->disk, &ml, &ma, made, &e) == 0) {
			s->kept_reused = 1;
			prov_note(ctx, 0, "%s already holds layout %s (the interrupted run resized it): "
					  "no resize", s->disk, l->name);
		} else {
			struct strbuf found = STRBUF_INIT;
			prov_mac_disk_describe(s->disk, &ml, &ma, &found);
			sb_addf(ctx->err, "layout %s keeps partition %s (%s) of %s, but %s is not the "
					  "state it starts from: %s. Found: %s. Nothing was changed",
				l->name, kp->name, kp->fs, li ? "the layout before" : "the disk as found",
				s->disk, why.buf, found.buf);
			sb_release(&found);
			rc = -EIO;
		}
		prov_mac_made_release(made, l->nparts);
		free(made);
		sb_release(&e);
	}
	prov_mac_list_release(&ml);
	prov_mac_apfs_release(&ma);
	sb_release(&why);
	return rc;
}

/*
 * Layout li keeps its first partition: check the disk's state, mount the
 * kept volume and remove this run's work folder from it, then shrink or
 * grow it with diskutil and make the other partitions after it.
 */
static int keep_layout(struct provision_ctx *ctx, struct mx *s, size_t li)
{
	const struct plan_layout *l = &ctx->plan->layouts[li];
	const struct plan_partition *kp = &l->parts[0];
	int apfs = prov_mac_is_apfs(kp->fs);
	struct mac_made kept;
	memset(&kept, 0, sizeof(kept));
	s->kept_reused = 0;
	int rc = keep_state(ctx, s, li, &kept);
	if (rc == 0) /* from here on the teardown unmounts the disk */
		s->partitioned = 1;
	if (rc < 0 || s->kept_reused) {
		prov_mac_made_release(&kept, 1);
		return rc;
	}
	/* the kept volume: mounted, without this run's files of an earlier layout */
	struct mac_info vi;
	memset(&vi, 0, sizeof(vi));
	if (s->dry) {
		struct strbuf m = STRBUF_INIT;
		sb_addf(&m, "/Volumes/%s", kp->name);
		vi.mount = sb_detach(&m);
	} else {
		rc = info_of(ctx, s, kept.volume, &vi);
		if (rc == 0 && !vi.mount) {
			const char *mo[] = { "diskutil", "mount", kept.volume, NULL };
			rc = mx_act(ctx, "mount", kept.volume, NULL, mo, NULL);
			prov_mac_info_release(&vi);
			if (rc == 0)
				rc = info_of(ctx, s, kept.volume, &vi);
			if (rc == 0 && !vi.mount) {
				sb_addf(ctx->err, "the kept volume %s (%s) is not mounted after diskutil "
						  "mount %s", kept.volume, kp->name, kept.volume);
				rc = -EIO;
			}
		}
	}
	if (rc == 0)
		rc = clear_work(ctx, s, vi.mount, "the kept volume");
	prov_mac_info_release(&vi);
	rc = cancelled(ctx, rc);
	if (rc == 0 && apfs)
		rc = check_limits(ctx, s, kept.part, s->fit ? s->fit[li][0].bytes : 0);
	rc = cancelled(ctx, rc);
	struct strbuf *sz = xcalloc(l->nparts, sizeof(*sz));
	const char **argv = xcalloc(3 * l->nparts + 10, sizeof(char *));
	size_t n = 0;
	argv[n++] = "diskutil";
	if (apfs) {
		argv[n++] = "apfs";
		argv[n++] = "resizeContainer";
	} else {
		argv[n++] = "resizeVolume";
	}
	argv[n++] = kept.part;
	triplets(s, l, li, 1, sz, argv, &n);
	struct mac_info di;
	memset(&di, 0, sizeof(di));
	if (rc == 0)
		rc = info_of(ctx, s, s->disk, &di); /* the identity, right before */
	if (rc == 0)
		rc = still_the_disk(ctx, s, &di, argv);
	prov_mac_info_release(&di);
	if (rc == 0) {
		prov_note(ctx, 0, "keep %s (%s '%s'%s%s) of %s%s: not a fresh file system; its data "
				  "stays, and it is resized to %s", kept.part, kp->fs, kp->name,
			  kept.container ? ", APFS container " : "",
			  kept.container ? kept.container : "", li ? "layout " : "the disk as found",
			  li ? l[-1].name : "", sz[0].buf);
		s->partitioned = 1;
		rc = mx_act(ctx, "resize", s->disk, NULL, argv, NULL);
		if (rc < 0 && !s->dry)
			say_what_is_now(ctx, s);
	}
	release_sizes(sz, l->nparts);
	free(argv);
	prov_mac_made_release(&kept, 1);
	return rc;
}

/* --- the primitives (driver.h), in the engine's order --- */

static int mx_begin(struct provision_ctx *ctx, size_t li)
{
	struct mx *s = ctx->state;
	s->v = xcalloc(ctx->plan->layouts[li].nparts, sizeof(*s->v));
	s->nv = ctx->plan->layouts[li].nparts;
	s->li = li;
	return 0;
}

/* The disk again against the safety rules. */
static int mx_open_disk(struct provision_ctx *ctx)
{
	struct mx *s = ctx->state;
	int rc = s->dry ? 0 : check_disk(ctx, s);
	if (rc == 0 && !s->disk) /* kept when the last unmountDisk failed */
		s->disk = xstrdup(ctx->plan->target.device);
	return rc;
}

/* diskutil partitions, formats and mounts at once (partitionDisk, or the
 * resize of a kept partition); then what it made is matched to the plan. */
static int mx_partition(struct provision_ctx *ctx, size_t li)
{
	struct mx *s = ctx->state;
	struct mac_info di;
	memset(&di, 0, sizeof(di));
	int rc = cancelled(ctx, read_size(ctx, s, &di));
	if (rc == 0)
		rc = ctx->plan->layouts[li].keeps ? keep_layout(ctx, s, li)
						  : partition_disk(ctx, s, li, &di);
	prov_mac_info_release(&di);
	rc = cancelled(ctx, rc);
	return rc == 0 ? reread(ctx, s, li) : rc;
}

/* Where diskutil mounted the volume (mounted when it did not), and its
 * work folder there, empty (after a resumed keep layout the interrupted
 * run's files may be there). */
static int mx_mount(struct provision_ctx *ctx, size_t li, size_t k)
{
	struct mx *s = ctx->state;
	int rc = s->dry ? 0 : map_volume(ctx, s, li, k);
	if (rc == 0)
		s->v[k].work = work_dir_of(ctx, s->v[k].mount);
	if (rc == 0 && s->kept_reused)
		rc = clear_work(ctx, s, s->v[k].mount, ctx->plan->layouts[li].parts[k].name);
	if (rc == 0 && !s->dry && mkdir(s->v[k].work, 0777) < 0) {
		sb_addf(ctx->err, "cannot create work folder %s: %s", s->v[k].work, strerror(errno));
		rc = -EIO;
	}
	return rc;
}

static int mx_conditions(struct provision_ctx *ctx, size_t li, size_t k)
{
	struct mx *s = ctx->state;
	return prov_mac_cond_apply(ctx, &ctx->plan->layouts[li].parts[k], s->v[k].mount,
			      &s->v[k].snaps);
}

static void mx_volume(struct provision_ctx *ctx, size_t li, size_t k, struct volume *v)
{
	struct mx *s = ctx->state;
	if (s->dry) {
		prov_volume_set(v, ctx, li, k, s->v[k].work, NULL, 0, 0);
		return;
	}
	struct strbuf dev = STRBUF_INIT;
	sb_addf(&dev, "/dev/%s", s->v[k].m.volume);
	const struct mac_info *pi = part_info(&s->v[k]);
	prov_volume_set(v, ctx, li, k, s->v[k].work, dev.buf, pi->has_offset ? pi->offset : 0,
			pi->has_offset ? pi->offset + s->v[k].m.size : 0);
	sb_release(&dev);
	v->facts_json = volume_facts(ctx, s, li, k);
}

static int mx_remount(struct provision_ctx *ctx, struct volume *vol)
{
	struct mx *s = ctx->state;
	for (size_t k = 0; s && k < s->nv; k++) {
		struct mvol *v = &s->v[k];
		if (!v->work || strcmp(v->work, vol->dir))
			continue;
		const char *um[] = { "diskutil", "unmount", v->m.volume, NULL };
		const char *mo[] = { "diskutil", "mount", v->m.volume, NULL };
		int rc = mx_act(ctx, "unmount", v->m.volume, NULL, um, NULL);
		if (rc == 0)
			rc = mx_act(ctx, "mount", v->m.volume, NULL, mo, NULL);
		struct mac_info i;
		memset(&i, 0, sizeof(i));
		if (rc == 0)
			rc = info_of(ctx, s, v->m.volume, &i);
		if (rc == 0 && !s->dry && (!i.mount || strcmp(i.mount, v->mount))) {
			sb_addf(ctx->err, "%s came back at %s, not at %s where it was measured",
				v->m.volume, i.mount ? i.mount : "(not mounted)", v->mount);
			rc = -EIO;
		}
		prov_mac_info_release(&i);
		if (rc == 0)
			rc = prov_mac_cond_apply(ctx, &ctx->plan->layouts[s->li].parts[k], v->mount,
					    &v->snaps);
		return rc;
	}
	sb_addf(ctx->err, "cannot remount %s: not mounted by rig", vol->dir);
	return -ENOENT;
}

/* The volume of v (by its work folder) for the snapshot ops. */
static struct mvol *mvol_of(struct provision_ctx *ctx, const struct volume *vol)
{
	struct mx *s = ctx->state;
	for (size_t k = 0; s && k < s->nv; k++)
		if (s->v[k].work && s->v[k].mount && !strcmp(s->v[k].work, vol->dir))
			return &s->v[k];
	sb_addf(ctx->err, "no snapshot of %s: it is not a volume rig provisioned", vol->dir);
	return NULL;
}

static int mx_snapshot_take(struct provision_ctx *ctx, const struct volume *vol, char **name)
{
	struct mvol *v = mvol_of(ctx, vol);
	return v ? prov_mac_snapshot_take(ctx, v->mount, &v->snaps, name) : -ENOENT;
}

static int mx_snapshot_drop(struct provision_ctx *ctx, const struct volume *vol, const char *name)
{
	struct mvol *v = mvol_of(ctx, vol);
	return v ? prov_mac_snapshot_drop(ctx, v->mount, &v->snaps, name) : -ENOENT;
}

static int mx_snapshot_list(struct provision_ctx *ctx, const struct volume *vol, char ***names,
			    size_t *n)
{
	struct mvol *v = mvol_of(ctx, vol);
	if (!v)
		return -ENOENT;
	int rc = prov_mac_snapshot_list(ctx, v->mount, names, n);
	/* the run's that the system thinned are no longer the run's to delete */
	for (size_t i = 0; rc == 0 && i < v->snaps.l.n;) {
		int there = 0;
		for (size_t j = 0; j < *n; j++)
			there |= !strcmp((*names)[j], v->snaps.l.names[i]);
		if (there)
			i++;
		else
			prov_snap_list_remove(&v->snaps.l, v->snaps.l.names[i]);
	}
	return rc;
}

/* hdiutil detach, again while busy, at last with -force. */
static int try_detach(struct provision_ctx *ctx, struct mx *s)
{
	const char *argv[] = { "hdiutil", "detach", s->disk, NULL };
	struct strbuf first = STRBUF_INIT;
	for (int i = 0; i < (s->dry ? 1 : DETACH_TRIES); i++) {
		struct strbuf e = STRBUF_INIT;
		struct provision_ctx q = *ctx;
		q.err = &e;
		int rc = mx_run(&q, argv, NULL);
		int busy = rc < 0 && strstr(e.buf, "Resource busy");
		if (rc == 0 || !busy) {
			if (rc < 0)
				sb_adds(ctx->err, e.buf);
			sb_release(&e);
			sb_release(&first);
			return rc;
		}
		if (!first.len)
			sb_adds(&first, e.buf);
		sb_release(&e);
		prov_sleep_ms(DETACH_WAIT_MS);
	}
	const char *force[] = { "hdiutil", "detach", s->disk, "-force", NULL };
	int rc = mx_run(ctx, force, NULL);
	if (rc == 0)
		prov_note(ctx, 1, "%s stayed busy; it was detached with -force (%s)", s->disk, first.buf);
	else
		sb_addf(ctx->err, "; before that: %s", first.buf);
	sb_release(&first);
	return rc;
}

/* One journal row for all the tries. */
static int detach(struct provision_ctx *ctx, struct mx *s)
{
	int64_t j = prov_journal_begin(ctx, "detach", s->image_key, NULL, s->disk);
	int rc = try_detach(ctx, s);
	prov_journal_end(ctx, j, rc);
	return rc;
}

static size_t mx_volumes(const struct provision_ctx *ctx)
{
	return ((const struct mx *)ctx->state)->nv;
}

/* The volume's snapshots; the volumes go with the detach or unmountDisk. */
static int mx_unmount(struct provision_ctx *ctx, size_t k)
{
	struct mx *s = ctx->state;
	if (s->v[k].mount)
		prov_mac_snapshots_teardown(ctx, s->v[k].mount, &s->v[k].snaps);
	return 0;
}

static void mx_end_volumes(struct provision_ctx *ctx)
{
	free_vols(ctx->state);
}

/* hdiutil detach, and hdiutil info no longer listing the image. */
static int mx_detach(struct provision_ctx *ctx)
{
	struct mx *s = ctx->state;
	int r = 0;
	if (s->attached) {
		r = detach(ctx, s);
		int detached = r == 0;
		char *still = NULL;
		if (r == 0 && !s->dry && (r = attached_as(ctx, s, s->image_made, &still)) == 0 && still) {
			sb_addf(ctx->err, "hdiutil info still lists %s as %s after hdiutil detach %s",
				s->image_made, still, s->disk);
			r = -EBUSY;
		}
		free(still);
		/* hdiutil detach said done; only hdiutil info listing it again keeps it attached */
		if (detached && r != -EBUSY)
			s->attached = 0;
	}
	s->partitioned = 0;
	if (!s->attached) {
		free(s->disk);
		s->disk = NULL;
	}
	return r;
}

static int mx_delete_image(struct provision_ctx *ctx)
{
	struct mx *s = ctx->state;
	if (!s->image_made || s->attached)
		return 0;
	int r = prov_image_end(ctx, s->image_made, s->image_key, ctx->plan->target.keep, "");
	free(s->image_made);
	s->image_made = NULL;
	return r;
}

/* A disk keeps its partitions, unmounted (the end of the run tries again
 * when it fails). */
static int mx_release_disk(struct provision_ctx *ctx)
{
	struct mx *s = ctx->state;
	int r = 0;
	if (s->partitioned && s->disk) {
		const char *argv[] = { "diskutil", "unmountDisk", s->disk, NULL };
		r = mx_act(ctx, "unmount", s->disk, NULL, argv, NULL);
	}
	s->partitioned = r < 0;
	if (!s->partitioned) {
		free(s->disk);
		s->disk = NULL;
	}
	return r;
}

static int mx_left(const struct provision_ctx *ctx)
{
	const struct mx *s = ctx->state;
	return s->nv || s->attached || s->image_made || s->partitioned;
}

/* --- a resumed run (driver.h, struct prov_resume_prims); macos_resume.c
 * looks, these put what it found into the state --- */

/* What the killed run left, in the state as this process's own. */
static int mx_resume_find(struct provision_ctx *ctx, struct strbuf *what)
{
	struct mx *s = ctx->state;
	struct mac_leftover *lo = &s->found;
	int rc = prov_mac_resume_find(ctx, s->image_file, s->image_key, lo);
	if (rc < 0 || (!lo->disk && !lo->image_made))
		return rc;
	sb_addf(what, "%s%s%s", lo->disk ? lo->disk : "", lo->disk && lo->image_made ? ", " : "",
		lo->image_made ? s->image_file : "");
	s->disk = lo->disk;
	lo->disk = NULL;
	s->attached = s->is_image && s->disk;
	s->partitioned = !s->is_image;
	if (lo->image_made)
		s->image_made = xstrdup(s->image_file);
	return 0;
}

static int mx_resume_verify(struct provision_ctx *ctx, struct strbuf *why)
{
	struct mx *s = ctx->state;
	return prov_mac_resume_verify(ctx, &s->found, why);
}

/* The state as after provision(layout): find attached the image; the
 * volumes are the ones verified, where they are mounted. */
static void mx_resume_adopt(struct provision_ctx *ctx, struct strbuf *kept)
{
	struct mx *s = ctx->state;
	struct mac_leftover *lo = &s->found;
	s->partitioned = 1;
	s->v = xcalloc(lo->n, sizeof(*s->v));
	s->nv = lo->n;
	s->li = ctx->resume->layout;
	for (size_t k = 0; k < lo->n; k++) {
		s->v[k].m = lo->made[k];
		s->v[k].mount = lo->mounts[k];
		s->v[k].work = work_dir_of(ctx, lo->mounts[k]);
		lo->mounts[k] = NULL;
	}
	memset(lo->made, 0, lo->n * sizeof(*lo->made));
	sb_addf(kept, "%s with %zu mounted volumes", s->disk, s->nv);
	prov_mac_leftover_release(lo);
}

/* After the teardown: an image the killed run made, which keep: true kept
 * there, goes too, since the resume makes it again from scratch. */
static int mx_resume_sweep(struct provision_ctx *ctx)
{
	struct mx *s = ctx->state;
	int rc = 0;
	struct stat st;
	if (s->found.image_made && ctx->plan->target.keep && lstat(s->image_file, &st) == 0)
		rc = prov_image_end(ctx, s->image_file, s->image_key, 0,
				    " (made by the interrupted run)");
	prov_mac_leftover_release(&s->found);
	return rc;
}

static const struct prov_resume_prims mx_resume_prims = {
	.find = mx_resume_find,
	.verify = mx_resume_verify,
	.adopt = mx_resume_adopt,
	.sweep = mx_resume_sweep,
};

/* What a run locks (prov_target_keys): the image file, or the disk
 * by its identifier, asking diskutil nothing. */
static int mx_keys(const struct plan *p, int create, struct target_keys *keys, struct strbuf *err)
{
	(void)create;
	const struct plan_target *t = &p->target;
	if (t->kind == TARGET_DISK) {
		struct strbuf what = STRBUF_INIT;
		sb_addf(&what, "disk %s", t->device);
		prov_mac_disk_keys(t->device, what.buf, keys);
		sb_release(&what);
		return 0;
	}
	char *file = image_file_of(t->image_path);
	char *abs = prov_absolute_image(file, err);
	free(file);
	if (!abs)
		return -ENOENT;
	prov_target_keys_image(keys, abs, NULL);
	free(abs);
	return 0;
}

const struct backend_ops prov_macos_ops = {
	.name = "macos",
	.keys = mx_keys,
	.prepare = mx_prepare,
	.provision = prov_engine_provision,
	.remount = mx_remount,
	.snapshot_take = mx_snapshot_take,
	.snapshot_drop = mx_snapshot_drop,
	.snapshot_list = mx_snapshot_list,
	.teardown = prov_engine_teardown,
	.finish = prov_engine_finish,
};

const struct prov_prims prov_macos_prims = {
	.fit = prov_mac_fit,
	.begin = mx_begin,
	.create_image = mx_create_image,
	.attach = mx_attach,
	.open_disk = mx_open_disk,
	.partition = mx_partition,
	.format = NULL, /* partitionDisk formats */
	.mount = mx_mount,
	.conditions = mx_conditions,
	.volume = mx_volume,
	.volumes = mx_volumes,
	.unmount = mx_unmount,
	.end_volumes = mx_end_volumes,
	.detach = mx_detach,
	.delete_image = mx_delete_image,
	.release_disk = mx_release_disk,
	.resume = &mx_resume_prims,
	.left = mx_left,
	.free_state = free_state,
};
