/*
 * rig plan PLAN: what the plan would do, without touching anything. The
 * schedule is the same pure function the runner uses, so what is printed is
 * what will run (for a drawn seed, the random order is shown for seed 0).
 *
 * For image and disk targets the provisioning backend itself runs with a
 * dry-run spawner: it goes through prepare, provision and teardown of each
 * layout exactly as `rig run` would, but every command is only printed
 * ($ lines), and what is not a command (creating the image file, waiting
 * for partition nodes) is printed as a # line. Names known only at run
 * time are placeholders: RUN is the run folder, /dev/loopN the loop device
 * losetup picks. A target that a rig run is using now (it holds the
 * target's lock) is said after the header. Rejected: a separate
 * description of the commands here (it would drift from what the backend
 * runs).
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <signal.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/schedule.h"
#include "provision/driver.h"
#include "provision/engine.h"
#include "provision/provision.h"
#include "rig/cmd/cmd.h"
#include "rig/run/plan_calibrate.h"
#include "rig/run/plan_estimate.h"

/* The backend in dry-run mode, printing what it would do. */
struct dry {
	const struct backend_ops *ops;  /* NULL: no backend (err says why) */
	struct spawner sp;
	struct provision_ctx ctx;
	struct strbuf err;
	int prepared;
	/* The layout provisioned (dry), for the modules that run in a dry
	 * run (MOD_DRY_RUNS), with their per-volume state: nvols * nmods. */
	struct volume *vols;
	size_t nvols, nmods;
	void **slots;
};

static void dry_command(void *opaque, const char *argv_text, const struct spawn_result *r)
{
	(void)opaque;
	(void)r;
	printf("    $ %s\n", argv_text);
}

static void dry_note(void *opaque, int warning, const char *text)
{
	(void)opaque;
	printf("    %s %s\n", warning ? "!" : "#", text);
}

static void dry_start(struct dry *d, const struct plan *p, uint64_t image_size)
{
	memset(d, 0, sizeof(*d));
	sb_init(&d->err);
	if (p->target.kind == TARGET_DIRS)
		return;
	d->ops = prov_backend(p, &d->err);
	if (!d->ops) {
		printf("\nprovision: %s\n", d->err.buf);
		return;
	}
	d->sp = plat_spawner_dry(dry_command, NULL);
	d->ctx.plan = p;
	d->ctx.run_id = "RUN";
	d->ctx.run_dir = "RUN";
	d->ctx.image_size = image_size;
	d->ctx.sp = &d->sp;
	d->ctx.err = &d->err;
	d->ctx.note = dry_note;
	printf("\nprovision with the %s backend (nothing is run here; %s%s%s):\n", d->ops->name,
	       prov_driver_of(p->platform)->dry_legend, p->target.kind == TARGET_IMAGE ? ", " : "",
	       p->target.kind == TARGET_IMAGE ? prov_driver_of(p->platform)->dry_legend_image : "");
	if (d->ops->prepare && d->ops->prepare(&d->ctx) < 0) {
		printf("  rig run would stop here: %s\n", d->err.buf);
		d->ops = NULL;
		return;
	}
	d->prepared = 1;
}

static void dry_vols_release(struct dry *d)
{
	for (size_t i = 0; i < d->nvols * d->nmods; i++)
		if (d->slots[i] && mod_all[i % d->nmods]->release_state)
			mod_all[i % d->nmods]->release_state(d->slots[i]);
	for (size_t i = 0; i < d->nvols; i++)
		prov_volume_release(&d->vols[i]);
	free(d->vols);
	free(d->slots);
	d->vols = NULL;
	d->slots = NULL;
	d->nvols = 0;
}

static void dry_sink_note(void *opaque, const char *key, const char *value)
{
	printf("    # %s: %s %s\n", (const char *)opaque, key, value);
}

/*
 * The cells of a module that only runs commands (MOD_DRY_RUNS: snapshot),
 * run with the dry spawner so that their commands are listed where they
 * come, with their parameters bound as the run binds them.
 */
static void dry_cells(struct dry *d, const struct plan *p, const struct cell *cells, size_t n)
{
	static volatile sig_atomic_t no_cancel;
	for (size_t k = 0; k < n && d->ops && d->vols; k++) {
		const struct cell *cl = &cells[k];
		const struct rig_module *m = cl->step->module;
		if (!(m->flags & MOD_DRY_RUNS) || cl->volume >= d->nvols)
			return;
		size_t mi = 0;
		while (mod_all[mi] != m)
			mi++;
		struct volume *vol = &d->vols[cl->volume];
		struct diag dg;
		diag_init(&dg, p->file, p->text);
		void *args = xcalloc(1, m->args_size ? m->args_size : 1);
		struct strbuf err = STRBUF_INIT;
		struct prov_snapshots ps = { 0 };
		sb_init(&ps.skip);
		if (plan_params_bind(m, cl->step->params, cl->bindings, args, &dg, cl->step->mark) == 0) {
			struct rig_sink sink = { vol->name, NULL, NULL, dry_sink_note, NULL };
			struct rig_ctx ctx = {
				.dir = vol->dir,
				.volume = vol->name,
				.imaging = p->platform ? prov_driver_of(p->platform)->imaging : NULL,
				.rep = cl->rep,
				.cycle = cl->cycle,
				.sink = &sink,
				.cancel = &no_cancel,
				.volstate = &d->slots[cl->volume * d->nmods + mi],
				.sp = &d->sp,
				.err = &err,
			};
			if (m->flags & MOD_SNAPSHOTS) {
				prov_snapshots_init(&ps, d->ops, &d->ctx, vol,
						    &p->layouts[cl->layout].parts[cl->volume]);
				ctx.snap = &ps.s;
			}
			if (m->run(&ctx, args) < 0)
				printf("    rig run would stop here: %s\n", err.buf);
		}
		prov_snapshots_release(&ps);
		sb_release(&err);
		plan_params_free(m, args);
		free(args);
		diag_release(&dg);
	}
}

static void dry_layout(struct dry *d, size_t li, int teardown)
{
	if (!d->ops)
		return;
	sb_reset(&d->err);
	if (!teardown) {
		struct volume *v = NULL;
		size_t n = 0;
		printf("  provision%s:\n", d->ctx.plan->reprovision == REPROVISION_REPEAT
						 ? " (again before every repetition)" : "");
		if (d->ops->provision(&d->ctx, li, &v, &n) < 0) {
			printf("  rig run would stop here: %s\n", d->err.buf);
			return;
		}
		while (mod_all[d->nmods])
			d->nmods++;
		d->vols = v;
		d->nvols = n;
		d->slots = xcalloc(n * d->nmods + 1, sizeof(void *));
		return;
	}
	dry_vols_release(d);
	printf("  teardown of layout %s:\n", plan_layout_name(d->ctx.plan, li));
	if (d->ops->teardown(&d->ctx, li) < 0)
		printf("  (teardown: %s)\n", d->err.buf);
}

static void dry_end(struct dry *d)
{
	dry_vols_release(d);
	if (d->ops && d->ops->finish)
		d->ops->finish(&d->ctx);
	sb_release(&d->err);
}

static void print_size(const struct plan_partition *pt)
{
	struct strbuf sb = STRBUF_INIT;
	switch (pt->size_kind) {
	case PSIZE_BYTES: units_format_size(&sb, pt->bytes); break;
	case PSIZE_PERCENT: units_format_percent(&sb, pt->percent); break;
	case PSIZE_REST: sb_adds(&sb, "rest"); break;
	}
	printf("%s%s", sb.buf, pt->keep ? " kept (resized, not made)" : "");
	sb_release(&sb);
}

static void print_header(const struct plan *p, uint64_t seed, int seed_known,
			 const struct schedule *s, uint64_t image_size)
{
	const struct plan_target *t = &p->target;
	printf("plan %s (%s) is valid", p->name, p->file);
	if (p->platform)
		printf(" for %s", plan_platform_name(p->platform));
	printf(".\n");
	if (p->description)
		printf("%s\n", p->description);
	switch (t->kind) {
	case TARGET_DIRS:
		printf("target   directories:");
		for (size_t i = 0; i < t->ndirs; i++)
			printf("%s %s = %s", i ? "," : "", t->names[i], t->dirs[i]);
		printf("\n");
		break;
	case TARGET_IMAGE: {
		struct strbuf sb = STRBUF_INIT;
		units_format_size(&sb, image_size ? image_size : t->image_size);
		printf("target   image %s, %s%s%s\n", t->image_path, sb.buf,
		       image_size ? " (--image-size)" : "",
		       t->keep ? ", kept afterwards" : ", removed afterwards");
		sb_release(&sb);
		break;
	}
	case TARGET_DISK:
		printf("target   disk %s (ERASED), confirm \"%s\"\n", t->device, t->confirm);
		break;
	}
	printf("order    %s, %u repetition%s%s\n", plan_order_name(p->order), p->repeat,
	       p->repeat == 1 ? "" : "s",
	       t->kind == TARGET_DIRS ? ""
	       : p->reprovision == REPROVISION_REPEAT ? ", provisioned afresh every repetition"
						      : ", provisioned afresh for every layout");
	if (seed_known)
		printf("seed     %llu\n", (unsigned long long)seed);
	else
		printf("seed     drawn at run time and recorded (orders below use seed %llu)\n",
		       (unsigned long long)seed);
	printf("cache    %s; %s%s\n", p->cache.direct ? "direct I/O" : "buffered I/O",
	       p->cache.flush ? "sync and drop caches before read steps (needs root)"
			      : "no flush before read steps",
	       p->cache.remount ? "; remount before read steps" : "");
	printf("cells    %zu in %u phases\n", s->n, s->nphases);
}

/* A rig run using the target now (its lock, util/lock.h): `rig run` would
 * be refused. Missing directories are not made here: nothing uses them. */
static void print_in_use(const struct plan *p)
{
	struct target_keys keys = { 0 };
	struct strbuf err = STRBUF_INIT;
	size_t which = 0;
	char *who = prov_target_keys(p, 0, &keys, &err) == 0
			    ? prov_target_keys_holder(&keys, &which) : NULL;
	if (who)
		printf("in use   %s is in use by %s: rig run is refused until it ends\n",
		       keys.v[which].what, who);
	free(who);
	prov_target_keys_release(&keys);
	sb_release(&err);
}

/* A disk target's size when this process can read it (open read-only and
 * seek to the end: nothing is written), else 0. */
static uint64_t disk_size(const struct plan *p)
{
	if (p->target.kind != TARGET_DISK)
		return 0;
	int fd = open(p->target.device, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	off_t end = lseek(fd, 0, SEEK_END);
	close(fd);
	return end > 0 ? (uint64_t)end : 0;
}

/* The estimate and the fit check: warnings to stderr at their lines, the
 * numbers to stdout. */
static void print_estimate(const struct plan *p, const struct schedule *s,
			   const struct plan_est_options *eo, const struct plan_calibration *cal)
{
	struct plan_est e;
	struct diag d;
	diag_init(&d, p->file, p->text);
	run_plan_estimate(p, s, eo, &e, &d);
	fflush(stdout);
	diag_print(&d, stderr);
	diag_release(&d);
	struct strbuf out = STRBUF_INIT;
	if (cal)
		run_plan_calibration_format(cal, &out);
	run_plan_estimate_format(p, &e, &out);
	if (cal)
		sb_addf(&out, "from       %zu of the plan's %zu cells corrected by the run; the others "
			      "(modules or file systems it did not have) at the assumptions\n",
			e.scaled, s->n);
	fputs(out.buf, stdout);
	sb_release(&out);
	run_plan_estimate_release(&e);
}

static void print_layout(const struct plan *p, size_t li, struct dry *d)
{
	if (p->target.kind == TARGET_DIRS)
		return;
	const struct plan_layout *l = &p->layouts[li];
	printf("\nlayout %s (%s): ", l->name, l->scheme);
	for (size_t i = 0; i < l->nparts; i++) {
		printf("%s%zu:%s %s ", i ? ", " : "", i + 1, l->parts[i].name, l->parts[i].fs);
		print_size(&l->parts[i]);
	}
	printf("\n");
	dry_layout(d, li, 0);
}

static void free_walk(struct plan_est_walk *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)w[i].fs);
	free(w);
}

/* The schedule, a line per phase (per cell with --full), each layout's
 * commands as the backend would run them before its cells and its
 * teardown after. */
static void print_schedule(const struct plan *p, const struct schedule *s, int full,
			   uint64_t image_size)
{
	struct dry dry;
	dry_start(&dry, p, image_size);
	long layout = -1;
	uint32_t rep = 0;
	for (size_t i = 0; i < s->n;) {
		const struct cell *cl = &s->cells[i];
		if ((long)cl->layout != layout) {
			if (layout >= 0 && p->target.kind != TARGET_DIRS)
				dry_layout(&dry, (size_t)layout, 1);
			layout = (long)cl->layout;
			rep = 0;
			print_layout(p, cl->layout, &dry);
		}
		if (cl->rep != rep) {
			rep = cl->rep;
			printf("\n%s%srep %u\n", plan_layout_name(p, cl->layout),
			       *plan_layout_name(p, cl->layout) ? "  " : "", rep);
		}
		/* A run of cells of one phase, or a single cell with --full or sequential. */
		size_t j = i + 1;
		if (!full)
			while (j < s->n && s->cells[j].phase == cl->phase)
				j++;
		if (j - i > 1)
			printf("  seq %4u-%-4u  step %-14s %-10s", cl->seq, s->cells[j - 1].seq,
			       cl->path, cl->step->module->name);
		else
			printf("  seq %-9u  step %-14s %-10s", cl->seq, cl->path,
			       cl->step->module->name);
		for (size_t k = i; k < j; k++)
			printf(" %s", plan_volume_name(p, cl->layout, s->cells[k].volume));
		if (cl->sweep_var)
			printf("   (%s = %s)", cl->sweep_var, cl->sweep_value);
		printf("\n");
		dry_cells(&dry, p, &s->cells[i], j - i);
		i = j;
	}
	if (layout >= 0 && p->target.kind != TARGET_DIRS)
		dry_layout(&dry, (size_t)layout, 1);
	dry_end(&dry);
}

/* rig plan's command line. */
struct plan_args {
	uint64_t image_size, seed;
	int seed_given, full;
	double rate, ops;
	const char *walk_text, *from;
	struct plan_options po;
	const char *vars[CMD_MAX_VARS];
};

/* 0, or the exit code after the usage error. */
static int parse_args(int argc, char **argv, struct plan_args *a)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 'S' },
		{ "platform", required_argument, NULL, 'P' },
		{ "fs-map", required_argument, NULL, 'M' },
		{ "full", no_argument, NULL, 'F' },
		{ "image-size", required_argument, NULL, 'I' },
		{ "assume-rate", required_argument, NULL, 'R' },
		{ "assume-walk", required_argument, NULL, 'W' },
		{ "assume-ops", required_argument, NULL, 'O' },
		{ "from", required_argument, NULL, 'f' },
		{ "var", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	a->po.vars = a->vars;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (cmd_parse_seed(optarg, &a->seed) < 0)
				return cmd_usage_error("plan", "--seed takes an integer from 0 to 2^63-1, not '%s'", optarg);
			a->seed_given = 1;
			break;
		case 'P':
			if (cmd_parse_platform("plan", optarg, &a->po.platform))
				return EXIT_USAGE;
			break;
		case 'M': a->po.fs_map = optarg; break;
		case 'F': a->full = 1; break;
		case 'I':
			if (cmd_parse_image_size("plan", optarg, &a->image_size))
				return EXIT_USAGE;
			break;
		case 'R':
			if (cmd_parse_rate("plan", optarg, &a->rate))
				return EXIT_USAGE;
			break;
		case 'V':
			if (cmd_parse_var("plan", optarg, a->vars, &a->po.nvars))
				return EXIT_USAGE;
			break;
		case 'O':
			if (cmd_parse_ops("plan", optarg, &a->ops))
				return EXIT_USAGE;
			break;
		case 'W': a->walk_text = optarg; break;
		case 'f': a->from = optarg; break;
		default: return cmd_usage_error("plan", "unknown option");
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("plan", optind >= argc ? "no plan given" : "one plan at a time");
	return 0;
}

/* The estimate's assumptions from the command line: --assume-walk parsed,
 * and what --from's run measured (cal filled when a->from). 0, or the exit
 * code after the message. */
static int assumptions(const struct plan_args *a, struct plan_est_options *eo,
		       struct plan_est_walk **walk, struct plan_calibration *cal)
{
	struct strbuf e = STRBUF_INIT;
	int rc = 0;
	size_t nwalk = 0;
	if (a->walk_text && run_plan_est_parse_walk(a->walk_text, walk, &nwalk, &e) < 0)
		rc = cmd_usage_error("plan", "%s", e.buf);
	*eo = (struct plan_est_options){ .rate = a->rate, .ops = a->ops, .layout = -1,
					 .walk = *walk, .nwalk = nwalk };
	if (rc == 0 && a->from) {
		if (run_plan_calibrate(a->from, eo, cal, &e) < 0) {
			fprintf(stderr, "rig plan: %s\n", e.buf);
			rc = EXIT_FAILED;
		}
		eo->scale = cal->scale;
		eo->nscale = cal->nscale;
		eo->provision_s = cal->provision_s;
	}
	sb_release(&e);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args a = { .po = { .platform = NULL, .fs_map = NULL } };
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	int nerr;
	struct plan *p = cmd_load_plan(argv[optind], &a.po, &nerr);
	if (!p)
		return EXIT_USAGE;
	if (a.image_size && p->target.kind != TARGET_IMAGE) {
		plan_free(p);
		return cmd_usage_error("plan", "--image-size applies to image targets only");
	}
	if (!a.seed_given && p->has_seed)
		a.seed = p->seed;
	struct schedule s = { 0 };
	struct plan_est_walk *walk = NULL;
	struct plan_est_options eo;
	struct plan_calibration cal = { 0 };
	/* Before anything is printed: a --from that cannot be read ends here. */
	rc = assumptions(&a, &eo, &walk, &cal);
	if (rc == 0 && plan_schedule_build(p, a.seed, &s) < 0) {
		fprintf(stderr, "rig plan: cannot build the schedule\n");
		rc = EXIT_FAILED;
	}
	if (rc == 0) {
		print_header(p, a.seed, a.seed_given || p->has_seed, &s, a.image_size);
		print_in_use(p);
		eo.seed = a.seed;
		eo.seed_known = a.seed_given || p->has_seed;
		eo.image_size = a.image_size;
		eo.disk_size = disk_size(p);
		print_estimate(p, &s, &eo, a.from ? &cal : NULL);
		print_schedule(p, &s, a.full, a.image_size);
	}
	run_plan_calibration_release(&cal);
	free_walk(walk, eo.nwalk);
	plan_schedule_free(&s);
	plan_free(p);
	return rc ? rc : EXIT_OK;
}
