/*
 * The erase rules; see safety.h. Each rule is a row of one table (name,
 * the option that may waive it, the rule in words) and one check function
 * that reads the facts and, when the rule is broken, states the fact. The
 * order is the order a user should fix things in: a device that does not
 * exist is reported as such, not as "not confirmed".
 *
 * What is never waived: the disk holding /, a mounted or otherwise used
 * disk, a partition given for a whole disk, a read-only device or one
 * without a medium, and `confirm`. What a flag may waive: loop devices rig
 * did not attach (tests over a synthetic disk need them), virtual devices,
 * internal disks (macOS; Linux cannot tell, so it never refuses for it).
 * On macOS, `mounted` stays empty (partitionDisk unmounts an external
 * disk's volumes itself) and `system-volume` refuses a disk with a volume
 * at / or under /System.
 * Rejected: a blanket --force for disks (one flag that turns off every
 * rule is one typo away from erasing the wrong disk).
 */
#include "provision/safety.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

void prov_disk_facts_release(struct disk_facts *f)
{
	free(f->path);
	free(f->name);
	free(f->missing);
	free(f->parent);
	free(f->loop_backing);
	free(f->root_via);
	free(f->mounted);
	free(f->system_mount);
	free(f->in_use);
	free(f->rig_run);
	free(f->model);
	free(f->serial);
	memset(f, 0, sizeof(*f));
}

const struct safety_rule prov_safety_rules[] = {
	{ "exists", 0, "the device exists and is a block device" },
	{ "whole-disk", 0, "a whole disk, not a partition" },
	{ "root-disk", 0, "never the disk that holds /, directly or through LVM, RAID or crypt" },
	{ "system-volume", 0, "no volume of the disk is mounted at / or under /System" },
	{ "mounted", 0, "no file system on the disk is mounted" },
	{ "in-use", 0, "not used as swap, nor by device mapper or RAID" },
	{ "read-only", 0, "the device is writable" },
	{ "no-medium", 0, "the device has a medium (its size is not 0)" },
	{ "virtual", SAFETY_ALLOW_VIRTUAL, "a physical disk, not ram, zram, dm, md or nbd, nor "
					    "one macOS calls Virtual (--allow virtual)" },
	{ "loop", SAFETY_ALLOW_LOOP, "not a loop device rig did not attach (--allow loop)" },
	{ "internal", SAFETY_ALLOW_INTERNAL, "an external disk (--allow internal)" },
	{ "confirm", 0, "`confirm` equals the disk's model (macOS: media name) or serial" },
	{ NULL, 0, NULL },
};

/* Check functions, parallel to the table: 1 when the rule holds. */
typedef int (*rule_fn)(const struct disk_facts *f, const char *confirm, struct strbuf *fact);

static int r_exists(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	if (f->exists)
		return 1;
	sb_addf(fact, "%s: %s", f->path ? f->path : "(no device)",
		f->missing ? f->missing : "no such block device");
	return 0;
}

static int r_whole(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	if (f->whole)
		return 1;
	sb_addf(fact, "%s is a partition", f->name);
	if (f->parent)
		sb_addf(fact, " of %s; give the whole disk", f->parent);
	return 0;
}

static int r_text(const char *text, struct strbuf *fact)
{
	if (!text)
		return 1;
	sb_adds(fact, text);
	return 0;
}

static int r_root(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	return r_text(f->root_via, fact);
}

static int r_system(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	return r_text(f->system_mount, fact);
}

static int r_mounted(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	return r_text(f->mounted, fact);
}

static int r_in_use(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	return r_text(f->in_use, fact);
}

static int r_ro(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	if (!f->read_only)
		return 1;
	sb_addf(fact, "%s is read-only", f->name);
	return 0;
}

static int r_medium(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	if (f->size)
		return 1;
	sb_addf(fact, "%s has no medium (size 0)", f->name);
	return 0;
}

static int r_virtual(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	if (!f->is_virtual)
		return 1;
	sb_addf(fact, "%s is a virtual device", f->name);
	return 0;
}

static int r_loop(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	if (!f->is_loop || f->loop_by_rig)
		return 1;
	sb_addf(fact, "%s is a loop device rig did not attach", f->name);
	if (f->loop_backing)
		sb_addf(fact, " (over %s)", f->loop_backing);
	return 0;
}

static int r_internal(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	(void)confirm;
	if (f->internal != 1)
		return 1;
	sb_addf(fact, "%s is an internal disk", f->name);
	return 0;
}

static int r_confirm(const struct disk_facts *f, const char *confirm, struct strbuf *fact)
{
	if (!confirm || prov_safety_confirm_matches(f, confirm))
		return 1;
	sb_addf(fact, "confirm \"%s\" is neither the model (%s) nor the serial (%s) of %s",
		confirm, f->model ? f->model : "unknown", f->serial ? f->serial : "unknown",
		f->name);
	if (f->is_loop && f->loop_backing)
		sb_addf(fact, " nor its backing file (%s)", f->loop_backing);
	return 0;
}

static const rule_fn rule_fns[] = {
	r_exists, r_whole, r_root, r_system, r_mounted, r_in_use, r_ro, r_medium,
	r_virtual, r_loop, r_internal, r_confirm,
};
_Static_assert(sizeof(rule_fns) / sizeof(rule_fns[0]) ==
		       sizeof(prov_safety_rules) / sizeof(prov_safety_rules[0]) - 1,
	       "one check function per rule");

int prov_safety_check(const struct disk_facts *f, const char *confirm, unsigned allow,
		 const struct safety_rule **rule, struct strbuf *fact)
{
	for (size_t i = 0; prov_safety_rules[i].name; i++) {
		const struct safety_rule *r = &prov_safety_rules[i];
		if (r->waiver && (allow & r->waiver))
			continue;
		struct strbuf why = STRBUF_INIT;
		int ok = rule_fns[i](f, confirm, &why);
		if (!ok) {
			if (rule)
				*rule = r;
			sb_adds(fact, why.buf);
			sb_release(&why);
			return -EPERM;
		}
		sb_release(&why);
	}
	if (rule)
		*rule = NULL;
	return 0;
}

/* s equals t, blanks around either ignored. */
static int same_trimmed(const char *s, const char *t)
{
	if (!s || !t)
		return 0;
	while (isspace((unsigned char)*s))
		s++;
	while (isspace((unsigned char)*t))
		t++;
	size_t ns = strlen(s), nt = strlen(t);
	while (ns && isspace((unsigned char)s[ns - 1]))
		ns--;
	while (nt && isspace((unsigned char)t[nt - 1]))
		nt--;
	return ns && ns == nt && !memcmp(s, t, ns);
}

int prov_safety_confirm_matches(const struct disk_facts *f, const char *s)
{
	return same_trimmed(s, f->model) || same_trimmed(s, f->serial) ||
	       (f->is_loop && same_trimmed(s, f->loop_backing));
}

int prov_safety_parse_allow(const char *list, unsigned *out, struct strbuf *err)
{
	static const struct { const char *name; unsigned flag; } names[] = {
		{ "loop", SAFETY_ALLOW_LOOP },
		{ "virtual", SAFETY_ALLOW_VIRTUAL },
		{ "internal", SAFETY_ALLOW_INTERNAL },
	};
	unsigned flags = 0;
	const char *p = list;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		size_t k;
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (strlen(names[k].name) == n && !strncmp(p, names[k].name, n))
				break;
		if (k == sizeof(names) / sizeof(names[0])) {
			sb_addf(err, "cannot allow '%.*s': rules that may be waived are loop, "
				     "virtual and internal", (int)n, p);
			return -1;
		}
		flags |= names[k].flag;
		if (!end)
			break;
		p = end + 1;
	}
	*out = flags;
	return 0;
}

static void human_size(struct strbuf *sb, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		sb_addf(sb, "%llu B", (unsigned long long)bytes);
	else
		sb_addf(sb, "%.1f %s", v, units[u]);
}

void prov_safety_describe(const struct disk_facts *f, const char *path, const char *extra,
		     struct strbuf *out)
{
	struct strbuf size = STRBUF_INIT, fact = STRBUF_INIT;
	human_size(&size, f->size);
	sb_addf(out, "%-14s %10s  %-12s", path, size.buf,
		f->rotational == 1 ? "rotational" : f->rotational == 0 ? "solid state" : "");
	if (f->is_loop)
		sb_addf(out, "  loop over %s", f->loop_backing ? f->loop_backing : "?");
	else
		sb_addf(out, "  model %s, serial %s", f->model ? f->model : "-",
			f->serial ? f->serial : "-");
	if (extra)
		sb_addf(out, ", %s", extra);
	sb_addch(out, '\n');
	const struct safety_rule *rule = NULL;
	int ok = prov_safety_check(f, NULL, 0, &rule, &fact) == 0;
	if (f->rig_run)
		sb_addf(out, "%16sin use by %s: rig run is refused on it until that run ends\n", "",
			f->rig_run);
	const char *used[] = { f->root_via, f->system_mount, f->mounted, f->in_use };
	for (size_t k = 0; k < sizeof(used) / sizeof(used[0]); k++)
		if (used[k] && strcmp(used[k], fact.buf))
			sb_addf(out, "%16s%s\n", "", used[k]);
	if (ok) {
		sb_addf(out, "%16srig may erase it: a disk target with device: %s and confirm: ",
			"", path);
		if (f->model)
			sb_addf(out, "\"%s\"%s", f->model, f->serial ? " or " : "");
		if (f->serial)
			sb_addf(out, "\"%s\"", f->serial);
		if (!f->model && !f->serial)
			sb_adds(out, "(none possible: neither model nor serial is known)");
		sb_addch(out, '\n');
	} else {
		sb_addf(out, "%16srig refuses it: %s (rule %s", "", fact.buf, rule->name);
		if (rule->waiver)
			sb_addf(out, "; --allow %s waives it",
				rule->waiver == SAFETY_ALLOW_LOOP ? "loop"
				: rule->waiver == SAFETY_ALLOW_VIRTUAL ? "virtual" : "internal");
		sb_adds(out, ")\n");
	}
	sb_release(&size);
	sb_release(&fact);
}
