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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../provision/provision.h"
#include "../schedule.h"
#include "../util/strbuf.h"
#include "cmd.h"

/* The backend in dry-run mode, printing what it would do. */
struct dry {
	const struct backend_ops *ops;  /* NULL: no backend (err says why) */
	struct spawner sp;
	struct provision_ctx ctx;
	struct strbuf err;
	int prepared;
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

static void dry_start(struct dry *d, const struct plan *p)
{
	memset(d, 0, sizeof(*d));
	sb_init(&d->err);
	if (p->target.kind == TARGET_DIRS)
		return;
	d->ops = provision_backend(p, &d->err);
	if (!d->ops) {
		printf("\nprovision: %s\n", d->err.buf);
		return;
	}
	d->sp = spawner_dry(dry_command, NULL);
	d->ctx.plan = p;
	d->ctx.run_id = "RUN";
	d->ctx.run_dir = "RUN";
	d->ctx.sp = &d->sp;
	d->ctx.err = &d->err;
	d->ctx.note = dry_note;
	if (d->ops == &provision_macos_ops)
		printf("\nprovision with the %s backend (nothing is run here%s; volumes stay where "
		       "diskutil mounts them, /Volumes/NAME):\n", d->ops->name,
		       p->target.kind == TARGET_IMAGE ? "; diskN stands for the disk hdiutil attaches "
							"at run time" : "");
	else
		printf("\nprovision with the %s backend (nothing is run here; RUN stands for the run "
		       "folder%s):\n", d->ops->name,
		       p->target.kind == TARGET_IMAGE ? ", /dev/loopN for the loop device losetup "
							"picks at run time" : "");
	if (d->ops->prepare && d->ops->prepare(&d->ctx) < 0) {
		printf("  rig run would stop here: %s\n", d->err.buf);
		d->ops = NULL;
		return;
	}
	d->prepared = 1;
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
		for (size_t i = 0; i < n; i++)
			volume_release(&v[i]);
		free(v);
		return;
	}
	printf("  teardown of layout %s:\n", plan_layout_name(d->ctx.plan, li));
	if (d->ops->teardown(&d->ctx, li) < 0)
		printf("  (teardown: %s)\n", d->err.buf);
}

static void dry_end(struct dry *d)
{
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
			 const struct schedule *s)
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
		units_format_size(&sb, t->image_size);
		printf("target   image %s, %s%s\n", t->image_path, sb.buf,
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
	char *who = provision_target_keys(p, 0, &keys, &err) == 0
			    ? target_keys_holder(&keys, &which) : NULL;
	if (who)
		printf("in use   %s is in use by %s: rig run is refused until it ends\n",
		       keys.v[which].what, who);
	free(who);
	target_keys_release(&keys);
	sb_release(&err);
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

int cmd_plan(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 'S' },
		{ "platform", required_argument, NULL, 'P' },
		{ "fs-map", required_argument, NULL, 'M' },
		{ "full", no_argument, NULL, 'F' },
		{ "var", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan_options po = { .platform = NULL, .fs_map = NULL };
	const char *vars[CMD_MAX_VARS];
	po.vars = vars;
	uint64_t seed = 0;
	int seed_given = 0, full = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (cmd_parse_seed(optarg, &seed) < 0)
				return cmd_usage_error("plan", "--seed takes an integer from 0 to 2^63-1, not '%s'", optarg);
			seed_given = 1;
			break;
		case 'P':
			if (cmd_parse_platform("plan", optarg, &po.platform))
				return EXIT_USAGE;
			break;
		case 'M': po.fs_map = optarg; break;
		case 'F': full = 1; break;
		case 'V':
			if (cmd_parse_var("plan", optarg, vars, &po.nvars))
				return EXIT_USAGE;
			break;
		default: return cmd_usage_error("plan", "unknown option");
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("plan", optind >= argc ? "no plan given" : "one plan at a time");
	int nerr;
	struct plan *p = cmd_load_plan(argv[optind], &po, &nerr);
	if (!p)
		return EXIT_USAGE;
	if (!seed_given && p->has_seed)
		seed = p->seed;
	struct schedule s;
	if (schedule_build(p, seed, &s) < 0) {
		fprintf(stderr, "rig plan: cannot build the schedule\n");
		plan_free(p);
		return EXIT_FAILED;
	}
	print_header(p, seed, seed_given || p->has_seed, &s);
	print_in_use(p);
	struct dry dry;
	dry_start(&dry, p);
	long layout = -1;
	uint32_t rep = 0;
	for (size_t i = 0; i < s.n;) {
		const struct cell *cl = &s.cells[i];
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
			while (j < s.n && s.cells[j].phase == cl->phase)
				j++;
		if (j - i > 1)
			printf("  seq %4u-%-4u  step %-14s %-10s", cl->seq, s.cells[j - 1].seq,
			       cl->path, cl->step->module->name);
		else
			printf("  seq %-9u  step %-14s %-10s", cl->seq, cl->path,
			       cl->step->module->name);
		for (size_t k = i; k < j; k++)
			printf(" %s", plan_volume_name(p, cl->layout, s.cells[k].volume));
		if (cl->sweep_var)
			printf("   (%s = %s)", cl->sweep_var, cl->sweep_value);
		printf("\n");
		i = j;
	}
	if (layout >= 0 && p->target.kind != TARGET_DIRS)
		dry_layout(&dry, (size_t)layout, 1);
	dry_end(&dry);
	schedule_free(&s);
	plan_free(p);
	return EXIT_OK;
}
