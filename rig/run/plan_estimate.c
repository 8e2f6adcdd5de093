/* Estimates and the fit check: see plan_estimate.h. */
#include "rig/run/plan_estimate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "modules/estimate.h"
#include "modules/module.h"
#include "provision/driver.h"

/* What one volume holds as the walk goes. */
struct vstate {
	struct est_slot *slots;  /* one per module slot (slot_of) */
	double capacity;         /* bytes; 0 unknown */
	double base;             /* bytes in use that no step put there */
	const struct plan_step *fill; /* the last step that set the level, or NULL */
	double fill_level;       /* the share of capacity in use after it */
};

enum fit_kind { FIT_LARGEST, FIT_ROOM };

static void format_bytes(struct strbuf *sb, double bytes);

/* One warning to give: the worst cell of a step with this problem. */
struct fitw {
	const struct plan_step *step;
	enum fit_kind kind;
	size_t hits;
	double need, avail, capacity, largest, extra, level;
	double lmax;             /* the highest fill level every hit allows (1: no fill) */
	const struct plan_step *fill;
	const char *volume, *layout, *sweep_var, *sweep_value;
};

/*
 * Cold walks measured, in entries statted per second. apfs and hfs+: the
 * enumeration article (001/002) on a 2 TB WD hard disk, a million files:
 * HFS+ 20-27 s a walk throughout (about 40,000/s), APFS 80 s at first and
 * 300-380 s after 20 cycles of churn (about 4,300/s over the cycles). The
 * Linux file systems: enumerate here on a loop device over an image file
 * (bench/README.md, "Cold walks"); a hard disk is slower.
 */
static const struct plan_est_walk walk_defaults[] = {
	{ "hfs+", 40000 }, { "jhfsx", 40000 }, { "apfs", 4300 }, { "apfsx", 4300 },
	{ "ext4", PLAN_EST_WALK_EXT4 }, { "xfs", PLAN_EST_WALK_XFS },
	{ "btrfs", PLAN_EST_WALK_BTRFS },
};

double run_plan_est_walk_rate(const struct plan_est_options *o, const char *fs, const char **from)
{
	for (size_t i = 0; fs && o && i < o->nwalk; i++)
		if (!strcmp(o->walk[i].fs, fs)) {
			if (from)
				*from = "--assume-walk";
			return o->walk[i].rate;
		}
	for (size_t i = 0; fs && i < sizeof(walk_defaults) / sizeof(walk_defaults[0]); i++)
		if (!strcmp(walk_defaults[i].fs, fs)) {
			if (from)
				*from = "measured";
			return walk_defaults[i].rate;
		}
	if (from)
		*from = "the file operations' rate";
	return PLAN_EST_FILE_OPS;
}

int run_plan_est_parse_walk(const char *text, struct plan_est_walk **out, size_t *n,
			struct strbuf *err)
{
	*out = NULL;
	*n = 0;
	char *copy = xstrdup(text), *save = NULL;
	int rc = 0;
	for (char *w = strtok_r(copy, ",", &save); w && rc == 0; w = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(w, '='), *end = NULL;
		double r = eq ? strtod(eq + 1, &end) : 0;
		if (!eq || eq == w || end == eq + 1 || *end || !(r > 0)) {
			sb_addf(err, "--assume-walk takes FS=ENTRIES_PER_SECOND[,FS=...], e.g. "
				     "apfs=4300,hfs+=40000; not '%s'", w);
			rc = -1;
			break;
		}
		*eq = '\0';
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[*n].fs = xstrdup(w);
		(*out)[(*n)++].rate = r;
	}
	free(copy);
	if (rc < 0) {
		for (size_t i = 0; i < *n; i++)
			free((char *)(*out)[i].fs);
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

struct walk {
	const struct plan *p;
	const struct plan_est_options *o;
	struct plan_est *e;
	size_t nmod;
	struct vstate *vols;
	size_t nvols;
	struct fitw *w;
	size_t nw, walloc;
	const struct plan_step **steps; /* cells counted per module step */
	size_t *ncells;
	size_t nsteps, salloc;
	double fit_image;        /* the smallest image every cell fits in; 0: not sought */
	struct est_slot source;  /* the source folder off the target (est_cell.source) */
	const struct plan_step *prev_step; /* the last cell's step and phase: a step in */
	uint32_t prev_phase;     /* a source folder counts once per phase */
};

static size_t slot_of(const struct rig_module *m)
{
	const struct rig_module *k = m->files_of ? m->files_of : m->needs ? m->needs : m;
	size_t i = 0;
	while (mod_all[i] && mod_all[i] != k)
		i++;
	return i;
}

/* statvfs of path or of its nearest existing ancestor (a folder the run
 * would make): 0 and the sizes, or -1. */
static int fs_of(const char *path, double *capacity, double *used)
{
	char *p = xstrdup(path);
	struct statvfs sv;
	int rc = -1;
	for (;;) {
		if (statvfs(*p ? p : ".", &sv) == 0) {
			*capacity = (double)sv.f_blocks * (double)sv.f_frsize;
			*used = (double)(sv.f_blocks - sv.f_bfree) * (double)sv.f_frsize;
			rc = 0;
			break;
		}
		char *slash = strrchr(p, '/');
		if (!slash || !*p)
			break;
		if (slash == p) {
			p[1] = 0;
			if (statvfs(p, &sv) == 0) {
				*capacity = (double)sv.f_blocks * (double)sv.f_frsize;
				*used = (double)(sv.f_blocks - sv.f_bfree) * (double)sv.f_frsize;
				rc = 0;
			}
			break;
		}
		*slash = 0;
	}
	free(p);
	return rc;
}

/*
 * What a file system of a partition of `bytes` reports as its blocks
 * (f_blocks), as mkfs makes them by default (measured on Linux: ext4 at
 * 512M, 1G, 20G within 1%; xfs the same): ext4 loses its inode tables (one
 * 256-byte inode per 16K) and its journal (e2fsprogs' default size for
 * the file system's size); xfs its log and metadata, 64 MiB from 512M up;
 * any other the assumed PLAN_EST_FS_SHARE.
 */
static double fs_blocks(const char *fs, double bytes)
{
	const double m = 1024.0 * 1024, g = 1024 * m;
	if (fs && !strcmp(fs, "ext4")) {
		double journal = bytes < g ? 16 * m : bytes < 2 * g ? 32 * m : bytes < 16 * g ? 64 * m
			       : bytes < 64 * g ? 128 * m : bytes < 128 * g ? 256 * m : g;
		double b = bytes * (1 - 1.0 / 64) - journal;
		return b > 0 ? b : 0;
	}
	if (fs && !strcmp(fs, "xfs"))
		return bytes > 512 * m ? bytes - 64 * m : bytes * 0.875;
	return bytes * PLAN_EST_FS_SHARE;
}

/* What a fresh file system has in use already (f_blocks - f_bfree): xfs
 * counts its metadata as used (measured: 29 MiB at 512M, 39 MiB at 1G,
 * 176 MiB at 20G); ext4 leaves it out of f_blocks instead. */
static double fs_used(const char *fs, double bytes)
{
	if (fs && !strcmp(fs, "xfs"))
		return 28.0 * 1024 * 1024 + 0.0075 * bytes;
	return 0;
}

/*
 * The bytes of each partition of l on a target of total bytes: as the
 * plan's platform driver fits it (driver.h, the sizes `rig run` makes),
 * else (no driver, a size that does not fit, or total unknown: 0) shares
 * of total, the absolute sizes exact even when total is unknown.
 */
static void partition_bytes(const struct plan *p, const struct plan_layout *l, double total,
			    double *out)
{
	const struct prov_prims *pr = p->platform ? prov_driver_of(p->platform)->prims : NULL;
	if (pr && total > 0) {
		struct prov_extent *ext = xcalloc(l->nparts ? l->nparts : 1, sizeof(*ext));
		struct strbuf why = STRBUF_INIT;
		int rc = pr->fit(l, (uint64_t)total, 512, ext, &why);
		for (size_t i = 0; i < l->nparts && rc == 0; i++)
			out[i] = (double)ext[i].bytes;
		sb_release(&why);
		free(ext);
		if (rc == 0)
			return;
	}
	double left = total - PLAN_EST_GPT_BYTES;
	long rest = -1;
	for (size_t i = 0; i < l->nparts; i++) {
		const struct plan_partition *pt = &l->parts[i];
		switch (pt->size_kind) {
		case PSIZE_BYTES: out[i] = (double)pt->bytes; break;
		case PSIZE_PERCENT: out[i] = pt->percent / 100.0 * total; break;
		case PSIZE_REST: out[i] = 0; rest = (long)i; break;
		}
		left -= out[i];
	}
	if (rest >= 0)
		out[rest] = left > 0 && total > 0 ? left : 0;
}

static double target_bytes(const struct plan *p, const struct plan_est_options *o)
{
	if (p->target.kind == TARGET_IMAGE)
		return (double)(o->image_size ? o->image_size : p->target.image_size);
	if (p->target.kind == TARGET_DISK)
		return (double)o->disk_size;
	return 0;
}

/* A fresh provisioning of layout li: empty volumes of the sizes known. */
static void fresh_volumes(struct walk *w, size_t li)
{
	const struct plan *p = w->p;
	for (size_t v = 0; v < w->nvols; v++)
		free(w->vols[v].slots);
	free(w->vols);
	w->nvols = plan_volume_count(p, li);
	w->vols = xcalloc(w->nvols ? w->nvols : 1, sizeof(*w->vols));
	double *parts = xcalloc(w->nvols ? w->nvols : 1, sizeof(double));
	double total = target_bytes(p, w->o);
	if (p->target.kind != TARGET_DIRS)
		partition_bytes(p, &p->layouts[li], total, parts);
	for (size_t v = 0; v < w->nvols; v++) {
		struct vstate *vs = &w->vols[v];
		vs->slots = xcalloc(w->nmod + 1, sizeof(*vs->slots));
		if (w->o->capacity) {
			vs->capacity = w->o->capacity[v];
			vs->base = w->o->used ? w->o->used[v] : 0;
		} else if (p->target.kind == TARGET_DIRS) {
			if (fs_of(p->target.dirs[v], &vs->capacity, &vs->base) < 0)
				vs->capacity = vs->base = 0;
		} else {
			vs->capacity = fs_blocks(p->layouts[li].parts[v].fs, parts[v]);
			vs->base = fs_used(p->layouts[li].parts[v].fs, parts[v]);
		}
		if (vs->capacity <= 0)
			w->e->sizes_known = 0;
	}
	free(parts);
}

static void count_cell(struct walk *w, const struct plan_step *st)
{
	for (size_t i = 0; i < w->nsteps; i++)
		if (w->steps[i] == st) {
			w->ncells[i]++;
			return;
		}
	if (w->nsteps == w->salloc) {
		w->salloc = w->salloc ? 2 * w->salloc : 8;
		w->steps = xrealloc(w->steps, w->salloc * sizeof(*w->steps));
		w->ncells = xrealloc(w->ncells, w->salloc * sizeof(*w->ncells));
	}
	w->steps[w->nsteps] = st;
	w->ncells[w->nsteps++] = 1;
}

static size_t cells_of(const struct walk *w, const struct plan_step *st)
{
	for (size_t i = 0; i < w->nsteps; i++)
		if (w->steps[i] == st)
			return w->ncells[i];
	return 0;
}

/* Note a problem of a cell; the worst cell of each (step, kind) is kept. */
static void fit_problem(struct walk *w, const struct cell *c, enum fit_kind kind,
			const struct vstate *vs, const struct est_cell *ec)
{
	struct fitw *f = NULL;
	for (size_t i = 0; i < w->nw; i++)
		if (w->w[i].step == c->step && w->w[i].kind == kind)
			f = &w->w[i];
	double avail = vs->capacity - ec->others;
	/* What the volume holds beyond the level the fill set. */
	double extra = vs->fill ? ec->others - vs->fill_level * vs->capacity : ec->others;
	if (extra < 0)
		extra = 0;
	double lmax = vs->fill ? (vs->capacity - ec->need - extra) / vs->capacity : 1;
	if (f) { /* the first cell is where the run would stop: its numbers are said */
		f->hits++;
		if (lmax < f->lmax)
			f->lmax = lmax;
		return;
	}
	XGROW(w->w, w->nw + 1, w->walloc);
	f = &w->w[w->nw++];
	memset(f, 0, sizeof(*f));
	f->step = c->step;
	f->kind = kind;
	f->hits = 1;
	f->lmax = lmax;
	f->need = ec->need;
	f->avail = avail;
	f->capacity = vs->capacity;
	f->largest = ec->largest;
	f->fill = vs->fill;
	f->level = vs->fill_level;
	f->extra = extra;
	f->volume = plan_volume_name(w->p, c->layout, c->volume);
	f->layout = plan_layout_name(w->p, c->layout);
	f->sweep_var = c->sweep_var;
	f->sweep_value = c->sweep_value;
}

/* Remember a module without an estimate, once, for the summary's words. */
static void note_skipped(struct plan_est_sum *sum, const char *name)
{
	for (size_t i = 0; i < sum->nskipped; i++)
		if (!strcmp(sum->skipped[i], name))
			return;
	if (sum->nskipped < sizeof(sum->skipped) / sizeof(sum->skipped[0]))
		sum->skipped[sum->nskipped++] = name;
}

/* Remember a walk rate used, once per file system, to say it. */
static void said_walk(struct plan_est *e, const char *fs, double rate, const char *from)
{
	for (size_t i = 0; i < e->nwalks; i++)
		if (e->walks[i].fs == fs || (fs && e->walks[i].fs && !strcmp(e->walks[i].fs, fs)))
			return;
	if (e->nwalks < PLAN_EST_WALKS_SAID) {
		e->walks[e->nwalks].fs = fs;
		e->walks[e->nwalks].rate = rate;
		e->walks[e->nwalks++].from = from;
	}
}

/* A cell's seconds corrected by --from's scale for its module and file
 * system, where the earlier run had such cells. */
static double scaled_seconds(struct walk *w, const char *module, const char *fs, double secs)
{
	for (size_t i = 0; i < w->o->nscale; i++) {
		const struct plan_est_scale *k = &w->o->scale[i];
		if (strcmp(k->module, module) || (!k->fs) != (!fs) || (fs && strcmp(k->fs, fs)))
			continue;
		w->e->scaled++;
		if (k->est > 0)
			return secs * k->took / k->est;
		return secs + (k->cells ? k->took / (double)k->cells : 0);
	}
	return secs;
}

static void walk_cell(struct walk *w, const struct cell *c, struct diag *scratch, int *rc)
{
	const struct plan *p = w->p;
	const struct rig_module *m = c->step->module;
	struct plan_est_sum *sum = &w->e->layouts[c->layout];
	count_cell(w, c->step);
	if (!m->estimate) {
		sum->not_estimated++;
		note_skipped(sum, m->name);
		note_skipped(&w->e->total, m->name);
		return;
	}
	void *args = xcalloc(1, m->args_size ? m->args_size : 1);
	if (plan_params_bind(m, c->step->params, c->bindings, args, scratch, c->step->mark)) {
		*rc = -EINVAL;
		plan_params_free(m, args);
		free(args);
		return;
	}
	struct vstate *vs = &w->vols[c->volume];
	struct est_slot *slot = &vs->slots[slot_of(m)];
	double others = vs->base;
	for (size_t k = 0; k <= w->nmod; k++)
		if (&vs->slots[k] != slot)
			others += vs->slots[k].bytes;
	struct est_cell ec = {
		.seed = plan_schedule_cell_seed(w->o->seed,
					   w->o->seed_scheme ? w->o->seed_scheme : SEED_CURRENT,
					   plan_layout_name(p, c->layout), c),
		.exact = w->o->seed_known,
		.capacity = vs->capacity,
		.others = others,
		.slot = slot,
		.source = &w->source,
		.again = w->prev_step == c->step && w->prev_phase == c->phase,
	};
	w->prev_step = c->step;
	w->prev_phase = c->phase;
	struct est_slot before = *slot;
	m->estimate(args, &ec);
	plan_params_free(m, args);
	free(args);
	double rate = w->e->rate;
	sum->written += ec.written + ec.write_seconds * rate;
	sum->timed_written += ec.write_seconds * rate;
	sum->files += ec.files;
	const char *fs = p->target.kind == TARGET_DIRS ? NULL
			 : p->layouts[c->layout].parts[c->volume].fs, *from = NULL;
	double wr = run_plan_est_walk_rate(w->o, fs, &from);
	double secs = ec.seconds + ec.moved / rate + ec.ops / w->e->ops +
		      ec.ops_off / PLAN_EST_FILE_OPS + ec.stats / PLAN_EST_STAT_RATE +
		      (ec.walk > 0 ? ec.walk / wr : 0);
	if (w->o->on_cell)
		w->o->on_cell(w->o->on_cell_arg, c, fs, secs);
	sum->seconds += scaled_seconds(w, m->name, fs, secs);
	if (ec.walk > 0)
		said_walk(w->e, fs, wr, from);
	if (ec.unknown)
		sum->unknown++;
	if (vs->capacity > 0) {
		/* A cell that does not fit stops the run there: the later cells
		 * are checked as if it had written nothing, so that one problem
		 * is not reported again by every cell after it. */
		if (ec.largest > vs->capacity) {
			fit_problem(w, c, FIT_LARGEST, vs, &ec);
			*slot = before;
		} else if (others + ec.need > vs->capacity * (1 + 1e-9)) {
			fit_problem(w, c, FIT_ROOM, vs, &ec);
			*slot = before;
		}
		if (m->flags & MOD_SETS_LEVEL) {
			vs->fill = c->step;
			vs->fill_level = (others + slot->bytes) / vs->capacity;
		}
	}
}

/* A size to give --image-size: rounded up to 64M, or to 1G from 4G. */
static void format_round_up(struct strbuf *sb, double bytes)
{
	double g = 1024.0 * 1024 * 1024, unit = bytes >= 4 * g ? g : 64.0 * 1024 * 1024;
	double n = ceil(bytes / unit);
	if (unit == g)
		sb_addf(sb, "%.0fG", n);
	else
		sb_addf(sb, "%.0fM", n * 64);
}

static void say_where(struct strbuf *sb, const struct walk *w, const struct fitw *f)
{
	sb_addf(sb, "volume %s", f->volume);
	if (*f->layout && w->p->nlayouts > 1)
		sb_addf(sb, " of layout %s", f->layout);
	if (f->sweep_var)
		sb_addf(sb, " at %s = %s", f->sweep_var, f->sweep_value);
}

static void say_hits(struct strbuf *sb, const struct walk *w, const struct fitw *f)
{
	size_t n = cells_of(w, f->step);
	if (n > 1)
		sb_addf(sb, " (%zu of the step's %zu cells)", f->hits, n);
}

static void warn_largest(const struct walk *w, const struct fitw *f, struct diag *d)
{
	struct strbuf sb = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	format_bytes(&a, f->largest);
	format_bytes(&b, f->capacity);
	sb_addf(&sb, "%s writes a file of %s, more than ", f->step->module->name, a.buf);
	say_where(&sb, w, f);
	sb_addf(&sb, " holds (about %s)", b.buf);
	say_hits(&sb, w, f);
	sb_adds(&sb, ": give smaller sizes or a larger ");
	sb_adds(&sb, w->p->target.kind == TARGET_DIRS ? "file system" : "partition");
	diag_warning(d, f->step->mark, "%s", sb.buf);
	sb_release(&sb);
	sb_release(&a);
	sb_release(&b);
}

static void warn_room(const struct walk *w, const struct fitw *f, struct diag *d)
{
	struct strbuf sb = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT;
	format_bytes(&a, f->need);
	format_bytes(&b, f->avail > 0 ? f->avail : 0);
	format_bytes(&c, f->capacity);
	sb_addf(&sb, "%s needs %s on ", f->step->module->name, a.buf);
	say_where(&sb, w, f);
	sb_addf(&sb, " but only %s of its %s is free then", b.buf, c.buf);
	if (f->fill)
		sb_addf(&sb, ", after %s to %.0f%% (line %d)", f->fill->module->name,
			100 * f->level, f->fill->mark.line);
	say_hits(&sb, w, f);
	/* What to change: the level, or a target large enough for the plan. */
	const char *sep = ": ";
	if (f->fill && f->lmax > 0) {
		sb_addf(&sb, "%slower the level to at most %.0f%%", sep, floor(100 * f->lmax));
		sep = ", or ";
	}
	if (w->fit_image > 0) {
		sb_addf(&sb, "%smake the image at least ", sep);
		format_round_up(&sb, w->fit_image);
		sb_adds(&sb, " (target.image.size or --image-size)");
	} else {
		/* With a fill, the level scales with the volume. */
		double cap = f->fill && f->level < 1 ? (f->need + f->extra) / (1 - f->level)
						     : f->capacity - f->avail + f->need;
		sb_addf(&sb, "%swrite less or give the volume at least ", sep);
		format_bytes(&sb, cap);
	}
	diag_warning(d, f->step->mark, "%s", sb.buf);
	sb_release(&sb);
	sb_release(&a);
	sb_release(&b);
	sb_release(&c);
}

static void walk_release(struct walk *w)
{
	for (size_t v = 0; v < w->nvols; v++)
		free(w->vols[v].slots);
	free(w->vols);
	free(w->w);
	free(w->steps);
	free(w->ncells);
}

/* Walk the schedule's cells (of o->layout, or all) into e and w's problems. */
static int walk_all(struct walk *w, const struct schedule *s)
{
	const struct plan *p = w->p;
	const struct plan_est_options *o = w->o;
	struct plan_est *e = w->e;
	memset(e, 0, sizeof(*e));
	e->nlayouts = plan_layout_count(p);
	e->layouts = xcalloc(e->nlayouts ? e->nlayouts : 1, sizeof(*e->layouts));
	e->rate_given = o->rate > 0;
	e->rate = o->rate > 0 ? o->rate
			      : p->target.kind == TARGET_DISK ? PLAN_EST_RATE_DISK : PLAN_EST_RATE_LOCAL;
	e->ops_given = o->ops > 0;
	e->ops = o->ops > 0 ? o->ops : PLAN_EST_FILE_OPS;
	e->exact = o->seed_known;
	e->seed = o->seed;
	e->sizes_known = 1;
	e->provision_given = o->provision_s > 0;
	e->provision_s = p->target.kind == TARGET_DIRS ? 0
			 : o->provision_s > 0 ? o->provision_s : PLAN_EST_PROVISION_S;
	while (mod_all[w->nmod])
		w->nmod++;
	struct diag scratch;
	diag_init(&scratch, p->file, p->text);
	int rc = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct cell *c = &s->cells[i];
		if (o->layout >= 0 && (long)c->layout != o->layout)
			continue;
		if (!w->vols || c->first_of_layout ||
		    (c->first_of_rep && p->reprovision == REPROVISION_REPEAT)) {
			fresh_volumes(w, c->layout);
			if (!o->capacity)
				e->layouts[c->layout].seconds += e->provision_s * (double)w->nvols;
		}
		walk_cell(w, c, &scratch, &rc);
	}
	diag_release(&scratch);
	for (size_t li = 0; li < e->nlayouts; li++) {
		e->total.written += e->layouts[li].written;
		e->total.timed_written += e->layouts[li].timed_written;
		e->total.files += e->layouts[li].files;
		e->total.seconds += e->layouts[li].seconds;
		e->total.unknown += e->layouts[li].unknown;
		e->total.not_estimated += e->layouts[li].not_estimated;
	}
	return rc;
}

/* Whether every cell fits an image of `image` bytes. */
static int fits_image(const struct plan *p, const struct schedule *s,
		      const struct plan_est_options *o, double image)
{
	struct plan_est_options o2 = *o;
	o2.image_size = (uint64_t)image;
	struct plan_est e;
	struct walk w = { .p = p, .o = &o2, .e = &e };
	walk_all(&w, s);
	int ok = w.nw == 0;
	walk_release(&w);
	run_plan_estimate_release(&e);
	return ok;
}

/* The smallest image size (to 1%) the plan fits, by bisection; 0 when
 * even 1024 times the image does not do. */
static double smallest_image(const struct plan *p, const struct schedule *s,
			     const struct plan_est_options *o)
{
	double lo = target_bytes(p, o), hi = lo;
	for (int i = 0; i < 10 && !fits_image(p, s, o, hi *= 2);)
		i++;
	if (!fits_image(p, s, o, hi))
		return 0;
	while (hi - lo > hi / 100) {
		double mid = (lo + hi) / 2;
		if (fits_image(p, s, o, mid))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

int run_plan_estimate(const struct plan *p, const struct schedule *s,
		  const struct plan_est_options *o, struct plan_est *e, struct diag *d)
{
	struct walk w = { .p = p, .o = o, .e = e };
	int rc = walk_all(&w, s);
	int rooms = 0;
	for (size_t i = 0; i < w.nw; i++)
		rooms += w.w[i].kind == FIT_ROOM;
	if (rooms && p->target.kind == TARGET_IMAGE && !o->capacity && target_bytes(p, o) > 0)
		w.fit_image = smallest_image(p, s, o);
	for (size_t i = 0; i < w.nw; i++) {
		if (w.w[i].kind == FIT_LARGEST)
			warn_largest(&w, &w.w[i], d);
		else
			warn_room(&w, &w.w[i], d);
	}
	e->nwarnings = w.nw;
	walk_release(&w);
	return rc;
}

void run_plan_estimate_release(struct plan_est *e)
{
	free(e->layouts);
	e->layouts = NULL;
}

/* "1.21 GiB", "300 MiB", "512 B": three significant digits, binary units. */
static void format_bytes(struct strbuf *sb, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;
	while (bytes >= 1023.5 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		bytes /= 1024;
		u++;
	}
	if (u == 0 || bytes >= 99.95)
		sb_addf(sb, "%.0f %s", bytes, unit[u]);
	else
		sb_addf(sb, bytes >= 9.995 ? "%.1f %s" : "%.2f %s", bytes, unit[u]);
}

/* "45 s", "3 min 20 s", "2 h 5 min". */
static void format_seconds(struct strbuf *sb, double s)
{
	double r = floor(s + 0.5);
	if (r < 60)
		sb_addf(sb, "%.0f s", r < 1 && s > 0 ? 1 : r);
	else if (r < 3600)
		sb_addf(sb, "%.0f min %.0f s", floor(r / 60), fmod(r, 60));
	else if (r < 86400 * 2)
		sb_addf(sb, "%.0f h %.0f min", floor(r / 3600), floor(fmod(r, 3600) / 60));
	else
		sb_addf(sb, "%.0f d %.0f h", floor(r / 86400), floor(fmod(r, 86400) / 3600));
}

static void format_sum(struct strbuf *out, const struct plan_est_sum *s)
{
	sb_adds(out, "writes ");
	format_bytes(out, s->written);
	if (s->timed_written > 0) {
		sb_adds(out, " (");
		format_bytes(out, s->timed_written);
		sb_adds(out, " of it by time-bound writes at the assumed rate)");
	}
	sb_addf(out, " in %.0f files, takes about ", s->files);
	format_seconds(out, s->seconds);
	if (s->unknown)
		sb_addf(out, " (+ %zu cell%s writing to a level of a volume whose size is unknown)",
			s->unknown, s->unknown == 1 ? "" : "s");
	if (s->not_estimated) {
		/* what they do depends on what they find when they run: a
		 * command's work, the changes a sync copies */
		sb_addf(out, " (+ %zu ", s->not_estimated);
		for (size_t i = 0; i < s->nskipped; i++)
			sb_addf(out, "%s%s", i == 0 ? "" : i + 1 < s->nskipped ? ", " : " and ",
				s->skipped[i]);
		sb_addf(out, " cell%s not estimated", s->not_estimated == 1 ? "" : "s");
		sb_adds(out, ": their work is known only when they run)");
	}
	sb_addch(out, '\n');
}

void run_plan_estimate_format(const struct plan *p, const struct plan_est *e, struct strbuf *out)
{
	struct strbuf r = STRBUF_INIT;
	sb_addf(&r, "%.0f MB/s", e->rate / 1e6);
	sb_adds(out, "estimate ");
	if (e->exact)
		sb_addf(out, "sizes as the run draws them with seed %llu", (unsigned long long)e->seed);
	else
		sb_adds(out, "expected sizes (the seed is drawn at run time)");
	sb_addf(out, "; assumed: data at %s (%s), %.0f file operations/s (%s)", r.buf,
		e->rate_given ? "--assume-rate"
		: p->target.kind == TARGET_DISK ? "a hard disk's; --assume-rate to change"
						: "--assume-rate to change",
		e->ops, e->ops_given ? "--assume-ops" : "flash's; --assume-ops to change");
	if (e->provision_s > 0)
		sb_addf(out, ", provisioning %.3g s per volume%s, file systems taking ext4's and "
			     "xfs's usual overhead (others: %.0f%% of their partition)",
			e->provision_s, e->provision_given ? " (measured: --from)" : "",
			100 - 100 * PLAN_EST_FS_SHARE);
	for (size_t i = 0; i < e->nwalks; i++)
		sb_addf(out, "%s %.0f entries/s on %s (%s)", i ? "," : ", cold walks:",
			e->walks[i].rate, e->walks[i].fs ? e->walks[i].fs : "the folder",
			e->walks[i].from);
	if (e->nwalks)
		sb_adds(out, " (--assume-walk to change)");
	sb_adds(out, "\n");
	size_t width = 5;
	for (size_t li = 0; li < e->nlayouts && p->target.kind != TARGET_DIRS; li++)
		if (strlen(plan_layout_name(p, li)) + 7 > width)
			width = strlen(plan_layout_name(p, li)) + 7;
	if (p->target.kind != TARGET_DIRS) {
		for (size_t li = 0; li < e->nlayouts; li++) {
			struct strbuf name = STRBUF_INIT;
			sb_addf(&name, "layout %s", plan_layout_name(p, li));
			sb_addf(out, "  %-*s  ", (int)width, name.buf);
			format_sum(out, &e->layouts[li]);
			sb_release(&name);
		}
	}
	sb_addf(out, "  %-*s  ", (int)width, "total");
	format_sum(out, &e->total);
	if (!e->sizes_known) {
		if (p->target.kind == TARGET_DISK)
			sb_addf(out, "fit      the size of %s is not known here: whether the data fits "
				     "is checked at run time, after provisioning, before anything is "
				     "written\n", p->target.device);
		else
			sb_adds(out, "fit      a volume's size is not known here: whether the data fits "
				     "is checked at run time\n");
	} else if (!e->nwarnings) {
		sb_adds(out, "fit      the data fits its volumes\n");
	} else {
		sb_addf(out, "fit      %zu warning%s (above): rig run refuses the plan unless "
			     "--no-fit-check\n", e->nwarnings, e->nwarnings == 1 ? "" : "s");
	}
	sb_release(&r);
}
