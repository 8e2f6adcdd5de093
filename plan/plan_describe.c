/*
 * The plan's `description` against its steps ("160 test files" left in the
 * text of a plan that writes 16). A description is free text,
 * so rig cannot fill it in; what it can do is read the counts a description
 * states ("160 test files", "20 cycles", "3 passes", "ten" is not a count)
 * and warn when the plan has counts of that kind and none of them is the
 * number written. Only whole numbers written with digits (thousands
 * separated by commas, "1,000,000 files") directly before the counted
 * word or at most two words before it ("10 equal APFS containers") count;
 * a number with a unit or a percentage after it ("2 GB", "5%", "260 GB HFS+
 * partition") does not, nor one before a capitalised word.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/diag.h"
#include "lib/strbuf.h"
#include "lib/units.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "plan/plan.h"
#include "plan/plan_parse.h"

/* The kinds of count a description may state, by the words that name them. */
enum count_kind { CK_FILES, CK_CYCLES, CK_REPEATS, CK_PASSES, CK_LEVELS, CK_VOLUMES, CK_N };

static const struct {
	const char *word;
	enum count_kind kind;
} count_words[] = {
	{ "file", CK_FILES }, { "files", CK_FILES },
	{ "cycle", CK_CYCLES }, { "cycles", CK_CYCLES },
	{ "repetition", CK_REPEATS }, { "repetitions", CK_REPEATS },
	{ "pass", CK_PASSES }, { "passes", CK_PASSES },
	{ "level", CK_LEVELS }, { "levels", CK_LEVELS },
	{ "partition", CK_VOLUMES }, { "partitions", CK_VOLUMES },
	{ "container", CK_VOLUMES }, { "containers", CK_VOLUMES },
	{ "volume", CK_VOLUMES }, { "volumes", CK_VOLUMES },
};

/* What the plan has, per kind: the values (as numbers) and their names for messages. */
struct counts {
	uint64_t *v[CK_N];
	size_t n[CK_N], alloc[CK_N];
	const char *what[CK_N];
};

static void add(struct counts *c, enum count_kind k, uint64_t v)
{
	for (size_t i = 0; i < c->n[k]; i++)
		if (c->v[k][i] == v)
			return;
	XGROW(c->v[k], c->n[k] + 1, c->alloc[k]);
	c->v[k][c->n[k]++] = v;
}

/* A parameter's value when the plan wrote a plain whole number. */
static void add_param(struct counts *c, enum count_kind k, const struct plan_step *st,
		      const char *name)
{
	const struct rig_param *rp = mod_param(st->module, name);
	if (!rp)
		return;
	const struct pval *v = &st->params[rp - st->module->params];
	if (!v->given || v->is_seq || !v->text)
		return;
	char *end = NULL;
	unsigned long long n = strtoull(v->text, &end, 10);
	if (end != v->text && !*end)
		add(c, k, n);
}

static void collect(struct counts *c, const struct plan_step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct plan_step *st = &steps[i];
		if (st->kind == STEP_MODULE && st->module && st->params) {
			add_param(c, CK_FILES, st, "files");
			add_param(c, CK_PASSES, st, "passes");
		} else if (st->kind == STEP_CYCLE) {
			add(c, CK_CYCLES, st->times);
		} else if (st->kind == STEP_SWEEP) {
			add(c, CK_LEVELS, st->nvalues);
		}
		if (st->kind != STEP_MODULE)
			collect(c, st->steps, st->nsteps);
	}
}

/* The count word at p (a word of letters), or -1. */
static int count_word(const char *p, size_t len)
{
	for (size_t i = 0; i < sizeof(count_words) / sizeof(count_words[0]); i++)
		if (strlen(count_words[i].word) == len && !strncasecmp(p, count_words[i].word, len))
			return (int)count_words[i].kind;
	return -1;
}

/* Parse a number with digits and thousands commas at p; its end in *end. */
static int read_number(const char *p, uint64_t *v, const char **end)
{
	uint64_t n = 0;
	const char *q = p;
	if (!isdigit((unsigned char)*q))
		return -1;
	while (isdigit((unsigned char)*q) ||
	       (*q == ',' && isdigit((unsigned char)q[1]) && isdigit((unsigned char)q[2]) &&
		isdigit((unsigned char)q[3]) && !isdigit((unsigned char)q[4]))) {
		if (*q != ',') {
			if (n > (UINT64_MAX - 9) / 10)
				return -1;
			n = n * 10 + (uint64_t)(*q - '0');
		}
		q++;
	}
	*v = n;
	*end = q;
	return 0;
}

/* A unit after a number ("ms", "gb"): what units.c reads as a size or a
 * duration, or would suggest one for ("1gb" -> "1GB"). Not a counted word. */
static int is_unit(const char *p, size_t len)
{
	if (len > 16)
		return 0;
	char text[24];
	snprintf(text, sizeof(text), "1%.*s", (int)len, p);
	uint64_t v;
	const char *why = NULL;
	struct strbuf hint = STRBUF_INIT;
	int unit = units_parse_size(text, &v, &why) == 0 ||
		   units_parse_duration(text, &v, &why) == 0 ||
		   units_suggest(&hint, text, UNITS_SIZE) || units_suggest(&hint, text, UNITS_DURATION);
	sb_release(&hint);
	return unit;
}

/* The kind of count the words after a number name, or -1: the first of at
 * most three words, separated by single spaces, that is a count word
 * (its end in *word_end). */
static int counted_kind(const char *q, const char **word_end)
{
	for (int w = 0; w < 3; w++) {
		if (*q != ' ' && !(w == 0 && *q == '\n'))
			return -1;
		while (*q == ' ' || *q == '\n')
			q++;
		const char *s = q;
		while (isalpha((unsigned char)*q) || *q == '+' || *q == '-')
			q++;
		if (q == s)
			return -1;
		/* "260 GB HFS+ partition", "5 ms": a unit first, not a count */
		if (w == 0 && (!islower((unsigned char)*s) || is_unit(s, (size_t)(q - s))))
			return -1;
		int k = count_word(s, (size_t)(q - s));
		if (k >= 0) {
			*word_end = q;
			return k;
		}
	}
	return -1;
}

static void list_values(struct strbuf *sb, const struct counts *c, enum count_kind k)
{
	for (size_t i = 0; i < c->n[k]; i++)
		sb_addf(sb, "%s%llu", i ? (i + 1 == c->n[k] ? " or " : ", ") : "",
			(unsigned long long)c->v[k][i]);
}

void plan_check_description(struct pctx *c, struct mark at)
{
	const struct plan *p = c->p;
	if (!p->description)
		return;
	struct counts have = { .what = { "files", "cycle times", "repeat", "passes",
					 "sweep values", "volumes per layout" } };
	collect(&have, p->steps, p->nsteps);
	if (p->repeat > 0)
		add(&have, CK_REPEATS, p->repeat);
	for (size_t i = 0; i < p->nlayouts; i++)
		add(&have, CK_VOLUMES, p->layouts[i].nparts);
	if (p->target.ndirs)
		add(&have, CK_VOLUMES, p->target.ndirs);
	const char *d = p->description;
	for (const char *q = d; *q;) {
		uint64_t v;
		const char *end;
		int starts = q == d || !isalnum((unsigned char)q[-1]);
		if (!starts || read_number(q, &v, &end) < 0 || isalpha((unsigned char)*end) ||
		    *end == '%' || *end == '.') {
			q++;
			continue;
		}
		const char *word_end = end;
		int k = counted_kind(end, &word_end);
		if (k >= 0 && have.n[k] > 0) {
			int found = 0;
			for (size_t i = 0; i < have.n[k]; i++)
				found |= have.v[k][i] == v;
			if (!found) {
				size_t len = (size_t)(word_end - q);
				struct strbuf sb = STRBUF_INIT;
				list_values(&sb, &have, (enum count_kind)k);
				diag_warning(c->d, at, "the description says '%.*s', but the plan has no "
					     "such count (%s: %s): update the description, or the plan",
					     (int)len, q, have.what[k], sb.buf);
				sb_release(&sb);
			}
		}
		q = end;
	}
	for (int k = 0; k < CK_N; k++)
		free(have.v[k]);
}
