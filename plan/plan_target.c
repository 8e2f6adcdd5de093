/*
 * The target and layouts of a plan, and the platform its file systems
 * belong to. Partition entries are expanded here (`count` and `{n}`), sizes
 * checked per layout (one `rest`, percentages at most 100%), and names
 * checked against what they will become: volume names and file-system
 * labels, so a name that mkfs would refuse is an error at validation, not
 * at provisioning half an hour into a run.
 *
 * The platform is decided after all partitions are known: either the one
 * asked for (each file system must be one it can make) or, when none is,
 * the one that can make all of them. What a platform makes and accepts is
 * its driver's (provision/driver.h): nothing here names a platform.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"
#include "plan/platform.h"

#define MAX_PARTITIONS 128 /* a GPT holds 128 entries */
#define MIN_IMAGE_SIZE (1ull << 20)

/* --- --fs-map --- */

/* The name of the file system s[0..n) names (itself, or one of its
 * aliases: "jhfs+" is hfs+), or NULL. */
static const char *known_fs(const char *s, size_t n)
{
	char *name = xstrndup(s, n);
	const struct plan_fs *f = NULL;
	for (size_t i = 0; plan_platforms[i] && !f; i++)
		f = plan_platform_fs(plan_platforms[i], name);
	free(name);
	return f ? f->name : NULL;
}

/* "ext4, xfs, btrfs": the file systems d makes. */
static void fs_names(struct strbuf *sb, const struct plan_platform *d)
{
	for (const struct plan_fs *f = d->fs; f->name; f++)
		sb_addf(sb, "%s%s", f == d->fs ? "" : ", ", f->name);
}

/* "linux: ext4, xfs, btrfs; macos: apfs, ...": every platform's. */
static void all_fs_names(struct strbuf *sb)
{
	for (size_t i = 0; plan_platforms[i]; i++) {
		sb_addf(sb, "%s%s: ", i ? "; " : "", plan_platforms[i]->name);
		fs_names(sb, plan_platforms[i]);
	}
}

static void map_error(struct pctx *c, const char *why, const char *part, size_t len)
{
	diag_error(c->d, (struct mark){ 0, 0, 0 }, "invalid --fs-map '%s': %s '%.*s'",
		   c->opt->fs_map, why, (int)len, part);
}

void plan_parse_fs_map(struct pctx *c)
{
	const char *s = c->opt->fs_map;
	if (!s || !*s)
		return;
	while (*s) {
		size_t n = strcspn(s, ",");
		const char *eq = memchr(s, '=', n);
		if (!eq) {
			map_error(c, "expected FROM=TO pairs separated by commas, not", s, n);
		} else {
			const char *from = s, *to = eq + 1;
			size_t nf = (size_t)(eq - s), nt = n - nf - 1;
			while (nf && from[nf - 1] == ' ')
				nf--;
			while (nf && *from == ' ')
				from++, nf--;
			while (nt && *to == ' ')
				to++, nt--;
			while (nt && to[nt - 1] == ' ')
				nt--;
			const char *kf = known_fs(from, nf), *kt = known_fs(to, nt);
			if (!kf)
				map_error(c, "unknown file system", from, nf);
			else if (!kt)
				map_error(c, "unknown file system", to, nt);
			else if (c->nmap == NKEYS(c->map_from))
				map_error(c, "too many entries at", s, n);
			else {
				for (size_t i = 0; i < c->nmap; i++)
					if (c->map_from[i] == kf) {
						map_error(c, "file system mapped twice:", from, nf);
						kf = NULL;
					}
				if (kf) {
					c->map_from[c->nmap] = kf;
					c->map_to[c->nmap++] = kt;
				}
			}
		}
		s += n;
		if (*s == ',')
			s++;
	}
}

/* --- target --- */

/* The last path component of a directory, for its volume name. */
static char *last_component(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && path[b - 1] != '/')
		b--;
	return xstrndup(path + b, n - b);
}

/* " (the value of $x, from --var)" for a value that came from --var x;
 * "" when via is NULL. In c's buffer: one use per message. */
static const char *from_var(struct pctx *c, const char *via)
{
	if (!via)
		return "";
	snprintf(c->via_note, sizeof(c->via_note), " (the value of $%s, from --var)", via);
	return c->via_note;
}

/*
 * A value of the target as the run uses it: `$name` is the value of
 * `--var name=VALUE` (*via: name), `$$...` the text less its first `$`,
 * anything else the text as written (also for NULL). NULL after reporting
 * a `$name` that no --var gives: a sweep's variable cannot reach the
 * target, which is provisioned before any step runs.
 */
static const char *target_text(struct pctx *c, const yaml_node_t *n, const char *s,
			       const char *what, const char **via)
{
	*via = NULL;
	if (!s || s[0] != '$')
		return s;
	if (s[1] == '$')
		return s + 1;
	if (!plan_params_var_name_ok(s + 1))
		return s;
	const struct binding *b = plan_var_use(c, s + 1);
	if (b) {
		*via = b->var;
		return b->value;
	}
	diag_error(c->d, plan_node_mark(n), "undefined variable '%s' in %s: give it with --var %s=VALUE",
		   s, what, s + 1);
	return NULL;
}

/*
 * Text from the plan (or a --var, *via) that goes into a command's
 * arguments, commands.log or `rig plan`'s output (paths, the device,
 * confirm): at most max bytes, no NUL and no control character (a newline
 * would forge a line of the command log; arguments are vectors, so no other
 * character is special). 1 when s is fine; else an error at n, naming what
 * it is.
 */
static int text_ok(struct pctx *c, const yaml_node_t *n, const char *s, const char *via,
		   const char *what, size_t max)
{
	if (!s)
		return 1;
	/* The node's length: a NUL inside the plan's text is refused too. */
	size_t len = s == plan_node_text(n) ? n->data.scalar.length : strlen(s);
	if (len > max) {
		diag_error(c->d, plan_node_mark(n), "%s is too long%s: %zu bytes, at most %zu", what,
			   from_var(c, via), len, max);
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f) {
			diag_error(c->d, plan_node_mark(n), "%s%s contains a control character (byte 0x%02x "
				   "at offset %zu): paths, devices and confirm are used in commands and "
				   "their log, one line each", what, from_var(c, via), ch, i);
			return 0;
		}
	}
	return 1;
}

#define PATH_TEXT_MAX 4095   /* PATH_MAX less its NUL */
#define DEVICE_TEXT_MAX 255
#define CONFIRM_TEXT_MAX 255

static const char name_rule[] =
	"use 1 to 64 letters, digits, '.', '_', '+' or '-', starting with a letter or digit";

static void parse_dirs(struct pctx *c, struct key *dk, struct key *nk)
{
	struct plan_target *t = &c->p->target;
	yaml_node_t *seq = plan_key_seq(c, dk, "a list of directories");
	yaml_node_t *names = nk->key ? plan_key_seq(c, nk, "a list of volume names") : NULL;
	if (!seq)
		return;
	size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	if (!n) {
		diag_error(c->d, plan_node_mark(seq), "'dirs' is empty: give at least one directory");
		return;
	}
	size_t nn = names ? (size_t)(names->data.sequence.items.top - names->data.sequence.items.start) : 0;
	if (names && nn != n) {
		diag_error(c->d, plan_node_mark(names), "'names' has %zu entr%s but 'dirs' has %zu: give "
			   "one name per directory", nn, nn == 1 ? "y" : "ies", n);
		names = NULL;
	}
	t->dirs = xcalloc(n, sizeof(char *));
	t->names = xcalloc(n, sizeof(char *));
	yaml_node_t **where = xcalloc(n, sizeof(*where));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *dn = plan_node_at(c, seq->data.sequence.items.start[i]);
		const char *via = NULL, *written = plan_node_text(dn);
		if (!written || plan_node_is_null(dn) || !*written) {
			diag_error(c->d, plan_node_mark(dn), "expected a directory path in 'dirs', not %s",
				   written ? "nothing" : plan_node_kind(dn));
			continue;
		}
		/* $name: each host of a fleet its own folder (--var) */
		const char *path = target_text(c, dn, written, "the directory path", &via);
		if (!path)
			continue;
		if (!*path) {
			diag_error(c->d, plan_node_mark(dn), "the directory path is empty%s",
				   from_var(c, via));
			continue;
		}
		if (!text_ok(c, dn, path, via, "the directory path", PATH_TEXT_MAX))
			continue;
		int twice = 0;
		for (size_t j = 0; j < t->ndirs && !twice; j++)
			twice = !strcmp(t->dirs[j], path);
		if (twice)
			diag_error(c->d, plan_node_mark(dn), "directory '%s'%s appears twice in 'dirs'",
				   path, from_var(c, via));
		char *name = NULL;
		yaml_node_t *at = dn;
		if (names) {
			at = plan_node_at(c, names->data.sequence.items.start[i]);
			const char *nvia = NULL, *s = plan_node_text(at);
			if (!s || plan_node_is_null(at)) {
				diag_error(c->d, plan_node_mark(at), "expected a volume name in 'names', "
					   "not %s", s ? "nothing" : plan_node_kind(at));
			} else if (!(s = target_text(c, at, s, "the volume name", &nvia))) {
				/* an undefined variable, said */
			} else if (!plan_name_ok(s)) {
				diag_error(c->d, plan_node_mark(at), "invalid volume name '%s'%s: %s", s,
					   from_var(c, nvia), name_rule);
			} else {
				name = xstrdup(s);
			}
		} else {
			name = last_component(path);
			if (!plan_name_ok(name)) {
				diag_error(c->d, plan_node_mark(dn), "cannot name a volume after directory '%s'%s "
					   "('%s' is not a valid name: %s); give the volumes names with "
					   "'names:'", path, from_var(c, via), name, name_rule);
				free(name);
				name = NULL;
			}
		}
		if (name && !twice) {
			for (size_t j = 0; j < t->ndirs; j++) {
				if (t->names[j] && !strcmp(t->names[j], name)) {
					diag_error(c->d, plan_node_mark(at), "duplicate volume name '%s' (also at "
						   "line %d)%s", name, plan_node_mark(where[j]).line,
						   names ? "" : "; give the volumes names with 'names:'");
					break;
				}
			}
		}
		where[t->ndirs] = at;
		t->dirs[t->ndirs] = xstrdup(path);
		t->names[t->ndirs] = name ? name : xstrdup("");
		t->ndirs++;
	}
	free(where);
}

static void parse_image(struct pctx *c, yaml_node_t *key, yaml_node_t *val)
{
	struct plan_target *t = &c->p->target;
	struct key k[] = { { "path", 0, 0 }, { "size", 0, 0 }, { "keep", 0, 0 } };
	if (plan_map_keys(c, val, k, NKEYS(k), "in image", "'image' ({ path, size })"))
		return;
	const char *via;
	if (plan_require_key(c, &k[0], val, "in image")) {
		const char *s = target_text(c, k[0].val, plan_key_scalar(c, &k[0], "a file path"),
					    "the image path", &via);
		const char *file = s ? (strrchr(s, '/') ? strrchr(s, '/') + 1 : s) : NULL;
		if (s && !*s)
			diag_error(c->d, plan_node_mark(k[0].val), "the image path is empty%s",
				   from_var(c, via));
		else if (s && (!*file || !strcmp(file, ".") || !strcmp(file, "..")))
			diag_error(c->d, plan_node_mark(k[0].val), "the image path '%s'%s names a folder: "
				   "give a file, such as %s%srig.img", s, from_var(c, via), s,
				   *file ? "/" : "");
		else if (s && text_ok(c, k[0].val, s, via, "the image path", PATH_TEXT_MAX))
			t->image_path = xstrdup(s);
	}
	if (plan_require_key(c, &k[1], val, "in image")) {
		const char *s = target_text(c, k[1].val, plan_key_scalar(c, &k[1], "a size such as 20G"),
					    "the image size", &via);
		const char *why;
		uint64_t v;
		if (s && units_parse_size(s, &v, &why)) {
			struct strbuf hint = STRBUF_INIT;
			units_suggest(&hint, s, UNITS_SIZE);
			diag_error(c->d, plan_node_mark(k[1].val), "invalid size '%s' for the image%s: %s%s",
				   s, from_var(c, via), why, hint.buf);
			sb_release(&hint);
		}
		else if (s && v < MIN_IMAGE_SIZE)
			diag_error(c->d, plan_node_mark(k[1].val), "image size '%s'%s is too small: an image "
				   "needs at least 1M for a partition table and file systems", s,
				   from_var(c, via));
		else if (s)
			t->image_size = v;
	}
	plan_key_bool(c, &k[2], &t->keep);
}

static void parse_disk(struct pctx *c, yaml_node_t *val)
{
	struct plan_target *t = &c->p->target;
	struct key k[] = { { "device", 0, 0 }, { "confirm", 0, 0 } };
	if (plan_map_keys(c, val, k, NKEYS(k), "in disk", "'disk' ({ device, confirm })"))
		return;
	const char *via;
	if (plan_require_key(c, &k[0], val, "in disk")) {
		const char *s = target_text(c, k[0].val, plan_key_scalar(c, &k[0], "a device (disk4 on "
					    "macOS, /dev/sdb on Linux)"), "the device", &via);
		if (s && text_ok(c, k[0].val, s, via, "the device", DEVICE_TEXT_MAX)) {
			t->device = xstrdup(s);
			c->device_mark = plan_node_mark(k[0].val);
			c->device_via = via;
		}
	}
	if (plan_require_key(c, &k[1], val, "in disk")) {
		const char *s = target_text(c, k[1].val, plan_key_scalar(c, &k[1], "the disk's media "
					    "name or serial"), "'confirm'", &via);
		if (s && !*s)
			diag_error(c->d, plan_node_mark(k[1].val), "'confirm' is empty%s: give the disk's "
				   "media name (model) or serial number", from_var(c, via));
		else if (s && text_ok(c, k[1].val, s, via, "'confirm'", CONFIRM_TEXT_MAX))
			t->confirm = xstrdup(s);
	}
}

static int before(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->start_mark.index < b->start_mark.index;
}

void plan_parse_target(struct pctx *c, yaml_node_t *key, yaml_node_t *val)
{
	struct plan_target *t = &c->p->target;
	struct key k[] = { { "dirs", 0, 0 }, { "names", 0, 0 }, { "image", 0, 0 }, { "disk", 0, 0 } };
	static const enum target_kind kinds[] = { TARGET_DIRS, TARGET_DIRS, TARGET_IMAGE, TARGET_DISK };
	t->mark = plan_node_mark(key);
	if (plan_map_keys(c, val, k, NKEYS(k), "in target", "'target' (dirs, image or disk)"))
		return;
	struct key *first = NULL;
	for (size_t i = 0; i < NKEYS(k); i++) {
		if (i == 1 || !k[i].key)
			continue;
		if (!first || before(k[i].key, first->key))
			first = &k[i];
	}
	if (!first) {
		diag_error(c->d, plan_node_mark(key), "target needs one of 'dirs', 'image' or 'disk'");
		return;
	}
	for (size_t i = 0; i < NKEYS(k); i++)
		if (i != 1 && k[i].key && &k[i] != first)
			diag_error(c->d, plan_node_mark(k[i].key), "target has both '%s' and '%s': give "
				   "exactly one of dirs, image or disk", first->name, k[i].name);
	c->target_known = 1;
	t->kind = kinds[first - k];
	t->mark = plan_node_mark(first->key);
	if (k[1].key && t->kind != TARGET_DIRS)
		diag_error(c->d, plan_node_mark(k[1].key), "'names' applies only to a dirs target: "
			   "partitions are named in the layouts");
	if (t->kind == TARGET_DIRS)
		parse_dirs(c, &k[0], &k[1]);
	else if (t->kind == TARGET_IMAGE)
		parse_image(c, first->key, first->val);
	else
		parse_disk(c, first->val);
}

/* --- layouts --- */

struct layout_sizes {
	double percent;        /* sum */
	uint64_t bytes;        /* sum */
	int rest_line;         /* line of the rest entry, 0 = none */
	struct mark rest_mark;
	struct mark over_mark; /* where the percentages passed 100 */
	int over;
};

/* Replace {n} in name by i. */
static char *expand_name(const char *name, uint64_t i)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *s = name; *s;) {
		if (!strncmp(s, "{n}", 3)) {
			sb_addf(&sb, "%llu", (unsigned long long)i);
			s += 3;
		} else {
			sb_addch(&sb, *s++);
		}
	}
	return sb_detach(&sb);
}

static int parse_part_size(struct pctx *c, struct key *sk, const char *pname,
			   struct plan_partition *out)
{
	const char *s = plan_key_scalar(c, sk, "a size, a percentage or rest");
	const char *why;
	if (!s)
		return -1;
	struct mark m = plan_node_mark(sk->val);
	if (!strcmp(s, "rest")) {
		out->size_kind = PSIZE_REST;
		return 0;
	}
	if (strchr(s, '%')) {
		if (units_parse_percent(s, &out->percent, &why)) {
			diag_error(c->d, m, "invalid size '%s' for partition '%s': %s", s, pname, why);
			return -1;
		}
		if (!(out->percent > 0 && out->percent <= 100)) {
			diag_error(c->d, m, "partition '%s' has size %s: a percentage must be more "
				   "than 0%% and at most 100%%", pname, s);
			return -1;
		}
		out->size_kind = PSIZE_PERCENT;
		return 0;
	}
	if (units_parse_size(s, &out->bytes, &why)) {
		struct strbuf hint = STRBUF_INIT;
		if (!units_suggest(&hint, s, UNITS_SIZE))
			sb_adds(&hint, " (or a percentage such as 50%, or rest)");
		diag_error(c->d, m, "invalid size '%s' for partition '%s': %s%s", s, pname, why,
			   hint.buf);
		sb_release(&hint);
		return -1;
	}
	if (!out->bytes) {
		diag_error(c->d, m, "partition '%s' has size 0", pname);
		return -1;
	}
	out->size_kind = PSIZE_BYTES;
	return 0;
}

static const char *map_fs(struct pctx *c, const char *fs, const char **orig)
{
	*orig = NULL;
	for (size_t i = 0; i < c->nmap; i++)
		if (!strcmp(c->map_from[i], fs)) {
			*orig = c->map_from[i];
			c->p->fs_mapped = 1;
			return c->map_to[i];
		}
	return fs;
}

/* A file system no platform makes: the names there are, and the nearest. */
static void unknown_fs(struct pctx *c, yaml_node_t *node, const char *fs)
{
	static const char *all[32];
	size_t n = 0;
	for (size_t i = 0; plan_platforms[i]; i++)
		for (const struct plan_fs *f = plan_platforms[i]->fs; f->name; f++)
			if (n < NKEYS(all))
				all[n++] = f->name;
	struct strbuf sb = STRBUF_INIT;
	all_fs_names(&sb);
	const char *near = diag_suggest(fs, all, n);
	diag_error(c->d, plan_node_mark(node), "unknown file system '%s' (%s%s%s%s)", fs, sb.buf,
		   near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	sb_release(&sb);
}

/* A partition's size (count of them) into the layout's sums: one rest at
 * most, percentages past 100 marked where they went over. */
static void add_size(struct pctx *c, struct layout_sizes *ls, const struct plan_partition *proto,
		     uint64_t count, const char *lname, struct mark sm)
{
	if (proto->size_kind == PSIZE_REST) {
		if (count > 1)
			diag_error(c->d, sm, "count %llu with size rest would make %llu rest "
				   "partitions: only one partition per layout may be rest",
				   (unsigned long long)count, (unsigned long long)count);
		else if (ls->rest_line)
			diag_error(c->d, sm, "only one partition per layout may have size rest "
				   "(layout '%s' has one at line %d)", lname, ls->rest_line);
		else {
			ls->rest_line = sm.line;
			ls->rest_mark = sm;
		}
	} else if (proto->size_kind == PSIZE_PERCENT) {
		ls->percent += proto->percent * (double)count;
		if (ls->percent > 100 + 1e-9 && !ls->over) {
			ls->over = 1;
			ls->over_mark = sm;
		}
	} else {
		ls->bytes += proto->bytes * count;
	}
}

static void parse_partition(struct pctx *c, struct plan_layout *l, const char *lname,
			    yaml_node_t *pn, size_t index, struct layout_sizes *ls)
{
	struct key k[] = { { "name", 0, 0 }, { "fs", 0, 0 }, { "size", 0, 0 }, { "count", 0, 0 },
			   { "keep", 0, 0 }, { "indexing", 0, 0 }, { "defrag", 0, 0 },
			   { "snapshots", 0, 0 } };
	struct strbuf where = STRBUF_INIT;
	sb_addf(&where, "in partition %zu of layout '%s'", index + 1, lname);
	if (plan_map_keys(c, pn, k, NKEYS(k), where.buf, "a partition ({ name, fs, size })")) {
		sb_release(&where);
		return;
	}
	uint64_t count = 1;
	int ok = 1;
	if (k[3].key && plan_key_uint(c, &k[3], 1, MAX_PARTITIONS, &count))
		ok = 0;
	const char *name = NULL;
	if (plan_require_key(c, &k[0], pn, where.buf) && (name = plan_key_scalar(c, &k[0], "a name"))) {
		if (count > 1 && !strstr(name, "{n}")) {
			diag_error(c->d, plan_node_mark(k[0].val), "partition name '%s' needs '{n}' with "
				   "count %llu, so that each partition gets its own name (e.g. \"%s{n}\")",
				   name, (unsigned long long)count, name);
			ok = 0;
		}
	}
	const char *fs = NULL, *orig = NULL;
	if (plan_require_key(c, &k[1], pn, where.buf) && (fs = plan_key_scalar(c, &k[1], "a file system"))) {
		const char *canon = known_fs(fs, strlen(fs));
		if (!canon) {
			unknown_fs(c, k[1].val, fs);
			fs = NULL;
		} else {
			fs = map_fs(c, canon, &orig);
			XGROW(c->fsrefs, c->nfsrefs + 1, c->fsrefs_alloc);
			c->fsrefs[c->nfsrefs++] = (struct fsref){ fs, orig, plan_node_mark(k[1].val), name };
		}
	}
	struct plan_partition proto = { 0 };
	proto.mapped_from = orig;
	plan_parse_conditions(c, &k[5], &k[6], &k[7], &proto);
	if (k[4].key && plan_key_bool(c, &k[4], &proto.keep) == 0 && proto.keep) {
		proto.keep_mark = plan_node_mark(k[4].val);
		if (index > 0) {
			diag_error(c->d, proto.keep_mark, "only the first partition of a layout may have "
				   "'keep: true' (partition %zu of layout '%s' has it): rig keeps the "
				   "partition at the start of the disk and makes the others after it",
				   index + 1, lname);
			proto.keep = 0;
		} else if (count > 1) {
			diag_error(c->d, proto.keep_mark, "'keep: true' with count %llu: rig keeps one "
				   "partition; give the kept one its own entry", (unsigned long long)count);
			proto.keep = 0;
		}
	}
	if (plan_require_key(c, &k[2], pn, where.buf) &&
	    parse_part_size(c, &k[2], name ? name : "?", &proto) == 0) {
		add_size(c, ls, &proto, count, lname, plan_node_mark(k[2].val));
	} else {
		ok = 0;
	}
	if (ok && name && fs) {
		if (l->nparts + count > MAX_PARTITIONS) {
			diag_error(c->d, plan_node_mark(pn), "layout '%s' has more than %d partitions "
				   "(a GPT holds %d)", lname, MAX_PARTITIONS, MAX_PARTITIONS);
			count = 0;
		}
		l->parts = xrealloc(l->parts, (l->nparts + count + 1) * sizeof(*l->parts));
		for (uint64_t i = 1; i <= count; i++) {
			char *pname = expand_name(name, i);
			int bad = !plan_name_ok(pname);
			if (bad && i == 1)
				diag_error(c->d, plan_node_mark(k[0].val), "invalid partition name '%s': %s",
					   pname, name_rule);
			for (size_t j = 0; !bad && j < l->nparts; j++)
				if (!strcmp(l->parts[j].name, pname)) {
					diag_error(c->d, plan_node_mark(k[0].val), "duplicate partition name '%s' "
						   "in layout '%s' (also at line %d)", pname, lname,
						   l->parts[j].mark.line);
					bad = 1;
				}
			struct plan_partition *pp = &l->parts[l->nparts++];
			*pp = proto;
			pp->name = pname;
			pp->fs = xstrdup(fs);
			pp->mark = plan_node_mark(pn);
			if (pp->keep && l->nparts == 1)
				l->keeps = 1;
			if (bad)
				break;
		}
	}
	sb_release(&where);
}

static void check_layout_sizes(struct pctx *c, const char *lname, const struct layout_sizes *ls,
			       yaml_node_t *ln)
{
	const struct plan_target *t = &c->p->target;
	if (ls->over)
		diag_error(c->d, ls->over_mark, "partition sizes in layout '%s' add up to %.4g%% "
			   "(more than 100%%)", lname, ls->percent);
	else if (ls->rest_line && ls->percent > 100 - 1e-9)
		diag_error(c->d, ls->rest_mark, "partition of size rest in layout '%s' gets nothing: "
			   "the other partitions already take 100%%", lname);
	if (t->kind == TARGET_IMAGE && t->image_size && !ls->over) {
		double need = (double)ls->bytes + ls->percent / 100.0 * (double)t->image_size;
		if (need > (double)t->image_size * (1 + 1e-12)) {
			struct strbuf sb = STRBUF_INIT;
			units_format_size(&sb, t->image_size);
			diag_error(c->d, plan_node_mark(ln), "the partitions of layout '%s' need more than "
				   "the image's %s", lname, sb.buf);
			sb_release(&sb);
		}
	}
}

static void parse_layout(struct pctx *c, yaml_node_t *ln, size_t index)
{
	struct plan *p = c->p;
	struct key k[] = { { "name", 0, 0 }, { "scheme", 0, 0 }, { "partitions", 0, 0 } };
	struct strbuf where = STRBUF_INIT;
	sb_addf(&where, "in layout %zu", index + 1);
	if (plan_map_keys(c, ln, k, NKEYS(k), where.buf, "a layout ({ name, partitions })")) {
		sb_release(&where);
		return;
	}
	struct plan_layout *l = &p->layouts[p->nlayouts++];
	l->mark = plan_node_mark(ln);
	const char *name = NULL;
	if (plan_require_key(c, &k[0], ln, where.buf) && (name = plan_key_scalar(c, &k[0], "a name"))) {
		if (!plan_name_ok(name)) {
			diag_error(c->d, plan_node_mark(k[0].val), "invalid layout name '%s': %s", name, name_rule);
		} else {
			for (size_t i = 0; i + 1 < p->nlayouts; i++)
				if (p->layouts[i].name && !strcmp(p->layouts[i].name, name))
					diag_error(c->d, plan_node_mark(k[0].val), "duplicate layout name '%s' "
						   "(also at line %d)", name, p->layouts[i].mark.line);
			sb_reset(&where);
			sb_addf(&where, "in layout '%s'", name);
		}
	}
	l->name = xstrdup(name ? name : "");
	l->scheme = xstrdup("gpt");
	if (k[1].key) {
		const char *s = plan_key_scalar(c, &k[1], "a partition scheme");
		if (s && strcmp(s, "gpt"))
			diag_error(c->d, plan_node_mark(k[1].val), "unsupported partition scheme '%s' "
				   "(plan language v1 supports gpt)", s);
	}
	char num[24];
	snprintf(num, sizeof(num), "%zu", index + 1);
	const char *lname = name ? name : num;
	if (plan_require_key(c, &k[2], ln, where.buf)) {
		yaml_node_t *seq = plan_key_seq(c, &k[2], "a list of partitions");
		if (seq && seq->data.sequence.items.start == seq->data.sequence.items.top)
			diag_error(c->d, plan_node_mark(seq), "layout '%s' has no partitions", lname);
		if (seq) {
			struct layout_sizes ls = { 0 };
			size_t i = 0;
			for (yaml_node_item_t *it = seq->data.sequence.items.start;
			     it < seq->data.sequence.items.top; it++, i++)
				parse_partition(c, l, lname, plan_node_at(c, *it), i, &ls);
			check_layout_sizes(c, lname, &ls, ln);
		}
	}
	sb_release(&where);
}

void plan_parse_layouts(struct pctx *c, const struct key *k)
{
	yaml_node_t *seq = plan_key_seq(c, k, "a list of layouts");
	if (!seq)
		return;
	size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	if (!n) {
		diag_error(c->d, plan_node_mark(seq), "'layouts' is empty: give at least one layout");
		return;
	}
	c->p->layouts = xcalloc(n, sizeof(struct plan_layout));
	for (size_t i = 0; i < n; i++)
		parse_layout(c, plan_node_at(c, seq->data.sequence.items.start[i]), i);
}

/* --- platform --- */

/* The distinct file systems of the plan that d makes. */
static void fs_set(struct pctx *c, const struct plan_platform *d, struct strbuf *sb)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nfsrefs; i++) {
		if (plan_platform_of_fs(c->fsrefs[i].fs) != d)
			continue;
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->fsrefs[j].fs, c->fsrefs[i].fs))
				dup = 1;
		if (!dup)
			sb_addf(sb, "%s%s", n++ ? ", " : "", c->fsrefs[i].fs);
	}
}

/* Each name fits its file system's label (the platform's plan_fs). */
static void check_labels(struct pctx *c)
{
	const struct plan *p = c->p;
	for (size_t li = 0; li < p->nlayouts; li++) {
		int last_line = 0, last_col = 0;
		for (size_t i = 0; i < p->layouts[li].nparts; i++) {
			const struct plan_partition *pp = &p->layouts[li].parts[i];
			if (pp->mark.line == last_line && pp->mark.col == last_col)
				continue; /* one report per entry, not per count */
			const struct plan_fs *f = plan_platform_fs(p->platform, pp->fs);
			if (!f)
				continue;
			size_t bad = f->label_bad ? strcspn(pp->name, f->label_bad) : strlen(pp->name);
			if ((int)strlen(pp->name) > f->label_max) {
				diag_error(c->d, pp->mark, "partition name '%s' is too long for a%s %s label "
					   "(at most %d characters)", pp->name,
					   strchr("aeiou", pp->fs[0]) || pp->fs[0] == 'x' ? "n" : "",
					   pp->fs, f->label_max);
			} else if (pp->name[bad]) {
				diag_error(c->d, pp->mark, "partition name '%s' cannot be a%s %s label: "
					   "use letters, digits, '_' and '-'", pp->name,
					   strchr("aeiou", pp->fs[0]) ? "n" : "", pp->fs);
			} else {
				continue;
			}
			last_line = pp->mark.line;
			last_col = pp->mark.col;
		}
	}
}

static void check_device(struct pctx *c, const struct plan_platform *d)
{
	const char *dev = c->p->target.device;
	if (!d || !dev || c->p->target.kind != TARGET_DISK)
		return;
	struct strbuf why = STRBUF_INIT;
	if (d->device_check(dev, &why) < 0)
		diag_error(c->d, c->device_mark, "%s%s", why.buf, from_var(c, c->device_via));
	sb_release(&why);
}

void plan_check_platform(struct pctx *c)
{
	struct plan *p = c->p;
	const struct plan_platform *want = c->opt->platform;
	p->platform = NULL;
	if (!c->target_known || p->target.kind == TARGET_DIRS)
		return;
	if (!want && c->nfsrefs) {
		const struct plan_platform *first = plan_platform_of_fs(c->fsrefs[0].fs);
		for (size_t i = 1; i < c->nfsrefs; i++) {
			const struct plan_platform *other = plan_platform_of_fs(c->fsrefs[i].fs);
			if (other == first)
				continue;
			/* Marked at the first entry of another platform: named first. */
			struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
			fs_set(c, other, &a);
			fs_set(c, first, &b);
			diag_error(c->d, c->fsrefs[i].mark, "the plan mixes %s file systems (%s) and "
				   "%s file systems (%s): one platform cannot make them all",
				   other ? other->name : "unknown", a.buf, first ? first->name : "unknown", b.buf);
			sb_release(&a);
			sb_release(&b);
			break;
		}
		p->platform = first;
	} else if (want) {
		for (size_t i = 0; i < c->nfsrefs; i++) {
			const struct fsref *r = &c->fsrefs[i];
			if (plan_platform_fs(want, r->fs))
				continue;
			struct strbuf can = STRBUF_INIT, from = STRBUF_INIT;
			fs_names(&can, want);
			if (r->orig)
				sb_addf(&from, " (mapped from '%s' by --fs-map)", r->orig);
			diag_error(c->d, r->mark, "file system '%s'%s cannot be made on %s (it can make %s)",
				   r->fs, from.buf, want->name, can.buf);
			sb_release(&can);
			sb_release(&from);
		}
		p->platform = want;
	}
	check_labels(c);
	check_device(c, p->platform);
}

/* --- keep --- */

/*
 * A layout that keeps its first partition starts from the state the one
 * before it left: exactly one partition besides EFI, of the kept file
 * system and name. Checked here where it can be (the layout before; an
 * image, which starts empty); the disk as found is checked at run time.
 */
void plan_check_keep(struct pctx *c)
{
	const struct plan *p = c->p;
	for (size_t li = 0; li < p->nlayouts; li++) {
		const struct plan_layout *l = &p->layouts[li];
		if (!l->keeps)
			continue;
		const struct plan_partition *kp = &l->parts[0];
		struct mark m = kp->keep_mark;
		if (p->platform && !(p->platform->abilities & PLAN_CAN_KEEP)) {
			struct strbuf can = STRBUF_INIT;
			for (size_t i = 0; plan_platforms[i]; i++)
				if (plan_platforms[i]->abilities & PLAN_CAN_KEEP)
					sb_addf(&can, "%s%s", can.len ? " and " : "", plan_platforms[i]->name);
			diag_error(c->d, m, "'keep: true' is supported on %s only in this version; %s "
				   "layouts are made from scratch", can.buf, p->platform->name);
			sb_release(&can);
			continue;
		}
		const struct plan_fs *kf = plan_platform_fs(p->platform, kp->fs);
		if (p->platform && (!kf || !kf->keep_how)) {
			struct strbuf can = STRBUF_INIT;
			for (const struct plan_fs *f = p->platform->fs; f->name; f++)
				if (f->keep_how)
					sb_addf(&can, "%s%s (%s)", can.len ? " and " : "", f->name,
						f->keep_how);
			diag_error(c->d, m, "'keep: true' on %s partition '%s': rig can keep %s "
				   "partitions", kp->fs, kp->name, can.buf);
			sb_release(&can);
			continue;
		}
		if (p->reprovision == REPROVISION_REPEAT) {
			diag_error(c->d, m, "'keep: true' in layout '%s' with 'reprovision: repeat': the "
				   "second repetition would start from the layout itself, not from one "
				   "partition '%s'; use reprovision: layout", l->name, kp->name);
			continue;
		}
		if (li == 0 && p->target.kind == TARGET_IMAGE) {
			diag_error(c->d, m, "'keep: true' in the first layout '%s' of an image target: a "
				   "new image has nothing to keep (keep the first partition of a disk "
				   "target, or of a layout that follows one making it)", l->name);
			continue;
		}
		if (p->target.kind == TARGET_IMAGE) {
			diag_error(c->d, m, "'keep: true' in layout '%s' of an image target: in this "
				   "version rig keeps partitions of disk targets only (an image is "
				   "detached and deleted after each layout)", l->name);
			continue;
		}
		if (li == 0)
			continue; /* the disk as found: checked when the run starts */
		const struct plan_layout *prev = &p->layouts[li - 1];
		struct strbuf why = STRBUF_INIT;
		if (prev->nparts != 1)
			sb_addf(&why, "it has %zu partitions", prev->nparts);
		else if (strcmp(prev->parts[0].name, kp->name))
			sb_addf(&why, "its partition is named '%s', not '%s'", prev->parts[0].name,
				kp->name);
		else if (strcmp(prev->parts[0].fs, kp->fs))
			sb_addf(&why, "its partition '%s' is %s, not %s", kp->name, prev->parts[0].fs,
				kp->fs);
		if (why.len)
			diag_error(c->d, m, "layout '%s' keeps partition '%s' (%s), so the layout before "
				   "it, '%s' (line %d), must leave exactly that one partition; %s",
				   l->name, kp->name, kp->fs, prev->name, prev->mark.line, why.buf);
		sb_release(&why);
	}
}
