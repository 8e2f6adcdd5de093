/*
 * The provisioning engine (provision/engine.c, resume.c) driving a
 * driver's primitives (driver.h, struct prov_prims): a recording driver
 * checks the order for image and disk targets, that a failure or Ctrl-C in
 * any step stops there and undoes what was done, that a teardown goes on
 * after a failed primitive and reports every failure, that a driver
 * without `format` (macOS's) is not asked to format, and that a resumed
 * run's leftovers are found and either verified and adopted or torn down
 * and swept (prov_resume). Also: fitting layouts through the drivers' fit,
 * the estimates' use of it, and file-system aliases.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "provision/driver.h"
#include "provision/engine.h"
#include "provision/journal.h"
#include "provision/linux/linux.h"
#include "provision/macos/macos.h"
#include "provision/provision.h"
#include "test.h"

/* --- a driver that records --- */

struct rec {
	struct strbuf log;
	const char *fail;           /* the calls that fail ("mount 1|detach"), or NULL */
	const char *cancel_after;   /* the call after which Ctrl-C is pressed */
	volatile sig_atomic_t *cancel;
	size_t nv;
	int attached, made, partitioned;
	int mounted[8];
	int found_nothing, differs; /* a resumed run: what find and verify see */
};

static int call(struct provision_ctx *ctx, const char *what)
{
	struct rec *r = ctx->state;
	sb_addf(&r->log, "%s%s", r->log.len ? ", " : "", what);
	if (r->cancel_after && !strcmp(r->cancel_after, what))
		*r->cancel = 1;
	size_t n = strlen(what);
	const char *at = r->fail ? strstr(r->fail, what) : NULL;
	if (at && (at == r->fail || at[-1] == '|') && (at[n] == '|' || !at[n])) {
		sb_addf(ctx->err, "%s failed", what);
		return -EIO;
	}
	return 0;
}

static int callk(struct provision_ctx *ctx, const char *what, size_t k)
{
	char b[64];
	snprintf(b, sizeof(b), "%s %zu", what, k);
	return call(ctx, b);
}

static int r_fit(const struct plan_layout *l, uint64_t total, uint32_t sector,
		 struct prov_extent *out, struct strbuf *why)
{
	(void)sector;
	if (total < l->nparts * 100) {
		sb_adds(why, "too small");
		return -ENOSPC;
	}
	for (size_t k = 0; k < l->nparts; k++)
		out[k] = (struct prov_extent){ k * 100, 100 };
	return 0;
}

static int r_begin(struct provision_ctx *ctx, size_t li)
{
	((struct rec *)ctx->state)->nv = ctx->plan->layouts[li].nparts;
	return callk(ctx, "begin", li);
}

static int r_create(struct provision_ctx *ctx)
{
	int rc = call(ctx, "create");
	((struct rec *)ctx->state)->made = rc == 0;
	return rc;
}

static int r_attach(struct provision_ctx *ctx)
{
	int rc = call(ctx, "attach");
	((struct rec *)ctx->state)->attached = rc == 0;
	return rc;
}

static int r_open(struct provision_ctx *ctx)
{
	return call(ctx, "open");
}

static int r_partition(struct provision_ctx *ctx, size_t li)
{
	int rc = callk(ctx, "partition", li);
	((struct rec *)ctx->state)->partitioned = rc == 0;
	return rc;
}

static int r_format(struct provision_ctx *ctx, size_t li, size_t k)
{
	(void)li;
	return callk(ctx, "format", k);
}

static int r_mount(struct provision_ctx *ctx, size_t li, size_t k)
{
	(void)li;
	int rc = callk(ctx, "mount", k);
	((struct rec *)ctx->state)->mounted[k] = rc == 0;
	return rc;
}

static int r_cond(struct provision_ctx *ctx, size_t li, size_t k)
{
	(void)li;
	return callk(ctx, "cond", k);
}

static void r_volume(struct provision_ctx *ctx, size_t li, size_t k, struct volume *v)
{
	callk(ctx, "volume", k);
	prov_volume_set(v, ctx, li, k, "/w", NULL, k * 100, k * 100 + 100);
}

static size_t r_volumes(const struct provision_ctx *ctx)
{
	return ((const struct rec *)ctx->state)->nv;
}

static int r_unmount(struct provision_ctx *ctx, size_t k)
{
	struct rec *r = ctx->state;
	if (!r->mounted[k])
		return 0;
	int rc = callk(ctx, "unmount", k);
	r->mounted[k] = rc < 0;
	return rc;
}

static void r_end(struct provision_ctx *ctx)
{
	call(ctx, "end");
	((struct rec *)ctx->state)->nv = 0;
}

static int r_detach(struct provision_ctx *ctx)
{
	struct rec *r = ctx->state;
	if (!r->attached)
		return 0;
	int rc = call(ctx, "detach");
	r->attached = rc < 0;
	return rc;
}

static int r_delete(struct provision_ctx *ctx)
{
	struct rec *r = ctx->state;
	if (!r->made || r->attached)
		return 0;
	r->made = 0;
	return call(ctx, "delete");
}

static int r_release(struct provision_ctx *ctx)
{
	struct rec *r = ctx->state;
	r->partitioned = 0;
	return call(ctx, "release");
}

static int r_left(const struct provision_ctx *ctx)
{
	const struct rec *r = ctx->state;
	return r->nv || r->attached || r->made;
}

static void r_free(void *state)
{
	(void)state; /* the test's */
}

/* A resumed run's primitives: find puts an attached image with two mounted
 * volumes into the state (none when found_nothing); verify says why not
 * when differs is set. */
static int r_find(struct provision_ctx *ctx, struct strbuf *what)
{
	struct rec *r = ctx->state;
	int rc = call(ctx, "find");
	if (rc == 0 && !r->found_nothing) {
		r->nv = 2;
		r->mounted[0] = r->mounted[1] = 1;
		r->attached = r->made = 1;
		sb_adds(what, "2 mounts, the image");
	}
	return rc;
}

static int r_verify(struct provision_ctx *ctx, struct strbuf *why)
{
	int rc = call(ctx, "verify");
	if (((struct rec *)ctx->state)->differs)
		sb_adds(why, "volume A moved");
	return rc;
}

static void r_adopt(struct provision_ctx *ctx, struct strbuf *kept)
{
	call(ctx, "adopt");
	sb_adds(kept, "the image with 2 mounted volumes");
}

static int r_sweep(struct provision_ctx *ctx)
{
	return call(ctx, "sweep");
}

static const struct prov_resume_prims rec_resume = {
	.find = r_find,
	.verify = r_verify,
	.adopt = r_adopt,
	.sweep = r_sweep,
};

static struct prov_prims rec_prims = {
	.fit = r_fit,
	.begin = r_begin,
	.create_image = r_create,
	.attach = r_attach,
	.open_disk = r_open,
	.partition = r_partition,
	.format = r_format,
	.mount = r_mount,
	.conditions = r_cond,
	.volume = r_volume,
	.volumes = r_volumes,
	.unmount = r_unmount,
	.end_volumes = r_end,
	.detach = r_detach,
	.delete_image = r_delete,
	.release_disk = r_release,
	.resume = &rec_resume,
	.left = r_left,
	.free_state = r_free,
};

static const struct plan_platform rec_platform = { .name = "recorder" };
static const struct prov_driver rec_driver = { .platform = &rec_platform, .prims = &rec_prims };

/* A plan of one layout with n partitions on an image (or a disk). */
struct fx {
	struct plan p;
	struct plan_layout l;
	struct plan_partition pt[3];
	struct rec r;
	struct strbuf err;
	volatile sig_atomic_t cancel;
	struct provision_ctx ctx;
};

static void fx_init(struct fx *f, enum target_kind kind, size_t n)
{
	static char *names[] = { "A", "B", "C" };
	memset(f, 0, sizeof(*f));
	for (size_t k = 0; k < n; k++) {
		f->pt[k].name = names[k];
		f->pt[k].fs = "ext4";
	}
	f->l.name = "l";
	f->l.parts = f->pt;
	f->l.nparts = n;
	f->p.layouts = &f->l;
	f->p.nlayouts = 1;
	f->p.target.kind = kind;
	f->p.target.device = "/dev/sdz";
	f->p.platform = &rec_platform;
	sb_init(&f->r.log);
	sb_init(&f->err);
	f->r.cancel = &f->cancel;
	f->ctx.plan = &f->p;
	f->ctx.driver = &rec_driver;
	f->ctx.err = &f->err;
	f->ctx.cancel = &f->cancel;
	f->ctx.state = &f->r;
}

static void fx_release(struct fx *f)
{
	sb_release(&f->r.log);
	sb_release(&f->err);
}

static void release_vols(struct volume *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		prov_volume_release(&v[k]);
	free(v);
}

static void test_order_image(void)
{
	struct fx f;
	fx_init(&f, TARGET_IMAGE, 2);
	struct volume *v = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(prov_engine_provision(&f.ctx, 0, &v, &n), 0);
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "begin 0, create, attach, partition 0, format 0, mount 0, "
					    "cond 0, format 1, mount 1, cond 1, volume 0, volume 1");
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(v[1].name, "B");
	CU_ASSERT_EQUAL(v[1].position, 2);
	CU_ASSERT_EQUAL(v[1].offset_start, 100);
	release_vols(v, n);
	sb_reset(&f.r.log);
	CU_ASSERT_EQUAL(prov_engine_teardown(&f.ctx, 0), 0);
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "unmount 1, unmount 0, end, detach, delete");
	/* a second teardown has nothing left to undo */
	sb_reset(&f.r.log);
	CU_ASSERT_EQUAL(prov_engine_teardown(&f.ctx, 0), 0);
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "end");
	fx_release(&f);
}

static void test_order_disk(void)
{
	struct fx f;
	fx_init(&f, TARGET_DISK, 1);
	rec_prims.format = NULL; /* as macOS: partitionDisk formats */
	struct volume *v = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(prov_engine_provision(&f.ctx, 0, &v, &n), 0);
	rec_prims.format = r_format;
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "begin 0, open, partition 0, mount 0, cond 0, volume 0");
	release_vols(v, n);
	sb_reset(&f.r.log);
	CU_ASSERT_EQUAL(prov_engine_teardown(&f.ctx, 0), 0);
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "unmount 0, end, release");
	fx_release(&f);
}

/* A failure in any step stops there; what was done is undone; the error
 * says the step's failure first. */
static void test_failure_undoes(void)
{
	static const struct {
		const char *fail, *log;
	} rows[] = {
		{ "attach", "begin 0, create, attach, end, delete" },
		{ "partition 0", "begin 0, create, attach, partition 0, end, detach, delete" },
		{ "mount 1", "begin 0, create, attach, partition 0, format 0, mount 0, cond 0, format 1, "
			     "mount 1, unmount 0, end, detach, delete" },
		{ "cond 0", "begin 0, create, attach, partition 0, format 0, mount 0, cond 0, unmount 0, "
			    "end, detach, delete" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fx f;
		fx_init(&f, TARGET_IMAGE, 2);
		f.r.fail = rows[i].fail;
		struct volume *v = NULL;
		size_t n = 0;
		CU_ASSERT_EQUAL(prov_engine_provision(&f.ctx, 0, &v, &n), -EIO);
		CU_ASSERT_PTR_NULL(v);
		CU_ASSERT_STRING_EQUAL(f.r.log.buf, rows[i].log);
		CU_ASSERT_PTR_NOT_NULL(strstr(f.err.buf, rows[i].fail));
		CU_ASSERT_FALSE(r_left(&f.ctx));
		fx_release(&f);
	}
}

static void test_cancel_between_steps(void)
{
	struct fx f;
	fx_init(&f, TARGET_IMAGE, 2);
	f.r.cancel_after = "partition 0";
	struct volume *v = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL(prov_engine_provision(&f.ctx, 0, &v, &n), -EINTR);
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "begin 0, create, attach, partition 0, end, detach, "
					    "delete");
	CU_ASSERT_PTR_NOT_NULL(strstr(f.err.buf, "interrupted"));
	fx_release(&f);
}

/* A teardown goes on after a failed primitive and reports them all, the
 * first one's errno returned; the end of the run tries once more. */
static void test_teardown_collects(void)
{
	struct fx f;
	fx_init(&f, TARGET_IMAGE, 2);
	struct volume *v = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(prov_engine_provision(&f.ctx, 0, &v, &n), 0);
	release_vols(v, n);
	sb_reset(&f.r.log);
	f.r.fail = "unmount 1|detach";
	CU_ASSERT_EQUAL(prov_engine_teardown(&f.ctx, 0), -EIO);
	/* the image stays while it is attached */
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "unmount 1, unmount 0, end, detach");
	CU_ASSERT_STRING_EQUAL(f.err.buf, "unmount 1 failed; detach failed");
	CU_ASSERT(r_left(&f.ctx));
	f.r.fail = NULL;
	sb_reset(&f.r.log);
	prov_engine_finish(&f.ctx);
	CU_ASSERT_STRING_EQUAL(f.r.log.buf, "end, detach, delete");
	CU_ASSERT_PTR_NULL(f.ctx.state);
	fx_release(&f);
}

/* --- a resumed run: one decision over the driver's find, verify, adopt --- */

static void note_to(void *opaque, int warning, const char *text)
{
	struct strbuf *sb = opaque;
	sb_addf(sb, "%s%s%s", sb->len ? "\n" : "", warning ? "warning: " : "", text);
}

struct resume_fx {
	struct fx f;
	struct provision_resume r;
	struct strbuf why, notes;
};

/* As in a driver's prepare: its state not yet in ctx->state. */
static void resume_init(struct resume_fx *x, int reuse)
{
	fx_init(&x->f, TARGET_IMAGE, 2);
	x->f.ctx.state = NULL;
	sb_init(&x->why);
	sb_init(&x->notes);
	x->r = (struct provision_resume){ .layout = 0, .reuse = reuse, .why = &x->why };
	x->f.ctx.resume = &x->r;
	x->f.ctx.note = note_to;
	x->f.ctx.note_opaque = &x->notes;
}

static void resume_release(struct resume_fx *x)
{
	fx_release(&x->f);
	sb_release(&x->why);
	sb_release(&x->notes);
}

static void test_resume_keeps(void)
{
	struct resume_fx x;
	resume_init(&x, 1);
	CU_ASSERT_EQUAL(prov_engine_resume(&x.f.ctx, &x.f.r), 0);
	CU_ASSERT_STRING_EQUAL(x.f.r.log.buf, "find, verify, adopt");
	CU_ASSERT(x.r.reused);
	CU_ASSERT_STRING_EQUAL(x.why.buf, "");
	CU_ASSERT_STRING_EQUAL(x.notes.buf, "kept what the interrupted run provisioned: the image "
					    "with 2 mounted volumes");
	CU_ASSERT_PTR_NULL(x.f.ctx.state); /* prepare sets it when it succeeds */
	CU_ASSERT(x.f.r.attached); /* as after provision */
	resume_release(&x);
}

static void test_resume_tears_down(void)
{
	/* it differs: torn down, then swept, and the resume says why */
	struct resume_fx x;
	resume_init(&x, 1);
	x.f.r.differs = 1;
	CU_ASSERT_EQUAL(prov_engine_resume(&x.f.ctx, &x.f.r), 0);
	CU_ASSERT_STRING_EQUAL(x.f.r.log.buf, "find, verify, unmount 1, unmount 0, end, detach, "
					      "delete, sweep");
	CU_ASSERT_FALSE(x.r.reused);
	CU_ASSERT_STRING_EQUAL(x.why.buf, "volume A moved");
	CU_ASSERT_STRING_EQUAL(x.notes.buf, "tear down what the interrupted run left: 2 mounts, "
					    "the image");
	CU_ASSERT_FALSE(r_left(&(struct provision_ctx){ .state = &x.f.r }));
	CU_ASSERT_PTR_NULL(x.f.ctx.state);
	resume_release(&x);

	/* no reuse asked: nothing to verify, and the caller knows why */
	resume_init(&x, 0);
	CU_ASSERT_EQUAL(prov_engine_resume(&x.f.ctx, &x.f.r), 0);
	CU_ASSERT_STRING_EQUAL(x.f.r.log.buf, "find, unmount 1, unmount 0, end, detach, delete, "
					      "sweep");
	CU_ASSERT_STRING_EQUAL(x.why.buf, "");
	resume_release(&x);

	/* nothing found: nothing said, the teardown has nothing to do */
	resume_init(&x, 0);
	x.f.r.found_nothing = 1;
	CU_ASSERT_EQUAL(prov_engine_resume(&x.f.ctx, &x.f.r), 0);
	CU_ASSERT_STRING_EQUAL(x.f.r.log.buf, "find, end, sweep");
	CU_ASSERT_STRING_EQUAL(x.notes.buf, "");
	resume_release(&x);
}

static void test_resume_failures(void)
{
	/* a failed teardown: whose leftovers, and no sweep */
	struct resume_fx x;
	resume_init(&x, 0);
	x.f.r.fail = "detach";
	CU_ASSERT_EQUAL(prov_engine_resume(&x.f.ctx, &x.f.r), -EIO);
	CU_ASSERT_STRING_EQUAL(x.f.r.log.buf, "find, unmount 1, unmount 0, end, detach");
	CU_ASSERT_STRING_EQUAL(x.f.err.buf, "cannot tear down what the interrupted run left: "
					    "detach failed");
	CU_ASSERT_PTR_NULL(x.f.ctx.state);
	resume_release(&x);

	/* find or verify failing stops there */
	const char *fails[] = { "find", "verify" };
	for (size_t i = 0; i < 2; i++) {
		resume_init(&x, 1);
		x.f.r.fail = fails[i];
		CU_ASSERT_EQUAL(prov_engine_resume(&x.f.ctx, &x.f.r), -EIO);
		CU_ASSERT_STRING_EQUAL(x.f.r.log.buf, i ? "find, verify" : "find");
		CU_ASSERT_FALSE(x.r.reused);
		CU_ASSERT_STRING_EQUAL(x.notes.buf, "");
		resume_release(&x);
	}
}

/* --- fitting --- */

static void test_fit_layouts(void)
{
	struct fx f;
	fx_init(&f, TARGET_IMAGE, 3);
	struct prov_extent **fits = prov_fit_layouts(&f.ctx, 1000, 512);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fits);
	CU_ASSERT_EQUAL(fits[0][2].start, 200);
	CU_ASSERT_PTR_NULL(fits[1]);
	prov_fits_free(fits);
	CU_ASSERT_PTR_NULL(prov_fit_layouts(&f.ctx, 200, 512));
	CU_ASSERT_STRING_EQUAL(f.err.buf, "layout l does not fit the image (200 bytes): too small");
	fx_release(&f);

	/* the real drivers: partitions in order, none overlapping, inside the disk */
	struct plan_partition pt[3] = {
		{ .name = "A", .fs = "x", .size_kind = PSIZE_PERCENT, .percent = 30 },
		{ .name = "B", .fs = "x", .size_kind = PSIZE_BYTES, .bytes = 1000000000ull },
		{ .name = "C", .fs = "x", .size_kind = PSIZE_REST },
	};
	struct plan_layout l = { .name = "l", .parts = pt, .nparts = 3 };
	const struct prov_driver *ds[] = { prov_driver_of(plan_platform_find("linux")),
					   prov_driver_of(plan_platform_find("macos")) };
	for (size_t i = 0; i < 2; i++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(ds[i]);
		struct prov_extent e[3];
		struct strbuf why = STRBUF_INIT;
		uint64_t total = 20000000000ull;
		CU_ASSERT_EQUAL_FATAL(ds[i]->prims->fit(&l, total, 512, e, &why), 0);
		CU_ASSERT_EQUAL(e[1].bytes, 1000000000ull);
		for (size_t k = 0; k < 3; k++) {
			CU_ASSERT(e[k].start % (1 << 20) == 0);
			CU_ASSERT(k == 0 || e[k].start >= e[k - 1].start + e[k - 1].bytes);
			CU_ASSERT(e[k].start + e[k].bytes <= total);
		}
		/* 30% of what is usable, a little less than 30% of the disk */
		CU_ASSERT(e[0].bytes <= total * 3 / 10 && e[0].bytes > total * 29 / 100);
		CU_ASSERT_EQUAL(ds[i]->prims->fit(&l, 1200000000ull, 512, e, &why), -ENOSPC);
		sb_release(&why);
	}
}

/* --- aliases --- */

static void test_aliases(void)
{
	const struct plan_platform *mac = plan_platform_find("macos");
	CU_ASSERT_STRING_EQUAL(plan_platform_fs(mac, "jhfs+")->name, "hfs+");
	CU_ASSERT_STRING_EQUAL(plan_platform_fs(mac, "Journaled HFS+")->name, "hfs+");
	CU_ASSERT_STRING_EQUAL(plan_platform_fs(mac, "case-sensitive apfs")->name, "apfsx");
	CU_ASSERT_STRING_EQUAL(plan_platform_fs(mac, "MS-DOS FAT32")->name, "fat32");
	CU_ASSERT_PTR_NULL(plan_platform_fs(mac, "HFS+")); /* not journaled: not rig's hfs+ */
	CU_ASSERT_PTR_NULL(plan_platform_fs(plan_platform_find("linux"), "jhfs+"));
	CU_ASSERT_STRING_EQUAL(plan_platform_of_fs("JHFSX")->name, "macos");

	/* a plan keeps rig's name; --fs-map takes aliases too */
	static const char text[] =
		"rig: 1\nname: a\ntarget:\n  image: { path: /tmp/x.img, size: 1G }\nlayouts:\n"
		"  - name: l\n    partitions:\n      - { name: A, fs: JHFS+, size: 50% }\n"
		"      - { name: B, fs: Case-sensitive APFS, size: rest }\nsteps:\n  - null: {}\n";
	struct diag d;
	diag_init(&d, "a.yaml", NULL);
	struct plan_options o = { .platform = NULL };
	struct plan *p = plan_parse_text("a.yaml", text, strlen(text), &o, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[0].fs, "hfs+");
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[1].fs, "apfsx");
	CU_ASSERT_PTR_EQUAL(p->platform, mac);
	plan_free(p);
	diag_release(&d);
	diag_init(&d, "a.yaml", NULL);
	o.fs_map = "journaled hfs+=ext4,apfsx=btrfs";
	p = plan_parse_text("a.yaml", text, strlen(text), &o, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[0].fs, "ext4");
	CU_ASSERT_STRING_EQUAL(p->layouts[0].parts[1].fs, "btrfs");
	plan_free(p);
	diag_release(&d);
}

/* A journal whose newest "*-image" row is the one the test sets. */
struct last_row {
	const char *action; /* NULL: no row */
	int done;
};

static int last_of(void *opaque, const char *object, const char *actions, char **action,
		   int *done)
{
	const struct last_row *r = opaque;
	if (!r->action)
		return 0;
	*action = xstrdup(r->action);
	*done = r->done;
	return 1;
}

/* Whose the image is, after a kill, from the journal's newest image row. */
static void test_image_made(void)
{
	const struct {
		struct last_row row;
		int made;
	} cases[] = {
		{ { NULL, 0 }, 0 },
		{ { "create-image", 1 }, 1 },
		{ { "create-image", -1 }, 1 },  /* killed while creating it */
		{ { "create-image", 0 }, 1 },
		{ { "delete-image", 1 }, 0 },   /* deleted */
		{ { "delete-image", -1 }, 1 },  /* killed before the unlink */
		{ { "delete-image", 0 }, 0 },   /* the unlink failed: reported then */
		{ { "keep-image", 1 }, 0 },
		{ { "keep-image", -1 }, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct last_row row = cases[i].row;
		struct prov_journal j = { .last = last_of, .opaque = &row };
		struct provision_ctx ctx = { .journal = &j };
		int got = prov_journal_image_made(&ctx, "/var/tmp/x.img");
		if (got != cases[i].made)
			printf("\n  %s done=%d: made %d, want %d\n", row.action ? row.action : "(none)",
			       row.done, got, cases[i].made);
		CU_ASSERT_EQUAL(got, cases[i].made);
	}
}

void register_engine_tests(void)
{
	CU_pSuite s = test_suite("provisioning engine (primitives in order)");
	test_add(s, "image target: the order of provision and teardown", test_order_image);
	test_add(s, "disk target, a driver without format", test_order_disk);
	test_add(s, "a failed step stops there and undoes what was done", test_failure_undoes);
	test_add(s, "Ctrl-C is looked at between steps", test_cancel_between_steps);
	test_add(s, "teardown goes on and reports every failure", test_teardown_collects);
	test_add(s, "resume: kept when it verifies", test_resume_keeps);
	test_add(s, "resume: else torn down and swept, and why", test_resume_tears_down);
	test_add(s, "resume: a failed find, verify or teardown", test_resume_failures);
	test_add(s, "layouts fitted by the drivers' fit", test_fit_layouts);
	test_add(s, "file-system aliases", test_aliases);
	test_add(s, "after a kill, the image is the run's by its newest journal row",
		 test_image_made);
}
