/*
 * Diagnostics for plan files (see diag.h): collected, then printed sorted by
 * position with the source line and a caret, as compilers do.
 *
 * Columns are in characters, as libyaml counts them, so the caret line is
 * built by walking the source line one UTF-8 character at a time and copying
 * tabs, which keeps the caret under the right character whatever the tab
 * width of the terminal.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/diag.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

void diag_init(struct diag *d, const char *file, const char *text)
{
	memset(d, 0, sizeof(*d));
	d->file = file;
	d->text = text;
}

void diag_release(struct diag *d)
{
	if (!d->items && !d->seen) {
		d->n = d->alloc = d->nerrors = d->nseen = 0;
		return;
	}
	for (size_t i = 0; i < d->n; i++)
		free(d->items[i].msg);
	free(d->items);
	free(d->seen);
	d->items = NULL;
	d->seen = NULL;
	d->n = d->alloc = d->nerrors = d->nseen = 0;
}

/* FNV-1a of what makes two items equal. */
static size_t item_hash(enum diag_level level, struct mark m, const char *msg)
{
	uint64_t h = 14695981039346656037ull;
	int head[3] = { (int)level, m.line, m.col };
	const unsigned char *b = (const unsigned char *)head;
	for (size_t i = 0; i < sizeof(head); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)h;
}

/* The slot of an item equal to (level, m, msg), or the empty slot where it
 * would go. */
static size_t *find_slot(const struct diag *d, size_t h, enum diag_level level, struct mark m,
			 const char *msg)
{
	for (size_t i = h & (d->nseen - 1);; i = (i + 1) & (d->nseen - 1)) {
		size_t *slot = &d->seen[i];
		if (!*slot)
			return slot;
		const struct diag_item *it = &d->items[*slot - 1];
		if (it->level == level && it->mark.line == m.line && it->mark.col == m.col &&
		    !strcmp(it->msg, msg))
			return slot;
	}
}

static void grow_seen(struct diag *d)
{
	free(d->seen);
	d->nseen = d->nseen ? 2 * d->nseen : 64;
	d->seen = xcalloc(d->nseen, sizeof(*d->seen));
	for (size_t i = 0; i < d->n; i++) {
		const struct diag_item *it = &d->items[i];
		*find_slot(d, item_hash(it->level, it->mark, it->msg), it->level, it->mark,
			   it->msg) = i + 1;
	}
}

static void add(struct diag *d, enum diag_level level, struct mark m,
		const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void add(struct diag *d, enum diag_level level, struct mark m,
		const char *fmt, va_list ap)
{
	/* Formatted on the stack, and copied to the heap only when it is not a
	 * duplicate: a plan's aliases and sweeps repeat the same message at
	 * the same place thousands of times. */
	char small[512];
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	struct strbuf sb = STRBUF_INIT;
	const char *msg = small;
	if (n < 0)
		small[0] = '\0';
	else if ((size_t)n >= sizeof(small))
		sb_vaddf(&sb, fmt, ap), msg = sb.buf;
	if (2 * (d->n + 1) > d->nseen)
		grow_seen(d);
	size_t *slot = find_slot(d, item_hash(level, m, msg), level, m, msg);
	if (*slot) {
		sb_release(&sb);
		return;
	}
	*slot = d->n + 1;
	XGROW(d->items, d->n + 1, d->alloc);
	d->items[d->n].level = level;
	d->items[d->n].mark = m;
	d->items[d->n].msg = msg == small ? xstrdup(small) : sb_detach(&sb);
	d->n++;
	if (level == DIAG_ERROR)
		d->nerrors++;
}

void diag_error(struct diag *d, struct mark m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add(d, DIAG_ERROR, m, fmt, ap);
	va_end(ap);
}

void diag_warning(struct diag *d, struct mark m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add(d, DIAG_WARNING, m, fmt, ap);
	va_end(ap);
}

static void format_head(const struct diag *d, const struct diag_item *it, struct strbuf *sb)
{
	const char *level = it->level == DIAG_ERROR ? "error" : "warning";
	const char *file = d->file ? d->file : "<plan>";
	if (it->mark.line > 0)
		sb_addf(sb, "%s:%d:%d: %s: %s", file, it->mark.line,
			it->mark.col > 0 ? it->mark.col : 1, level, it->msg);
	else
		sb_addf(sb, "%s: %s: %s", file, level, it->msg);
}

void diag_format_item(const struct diag *d, size_t i, char *buf, size_t size)
{
	if (!size)
		return;
	buf[0] = '\0';
	if (i >= d->n)
		return;
	struct strbuf sb = STRBUF_INIT;
	format_head(d, &d->items[i], &sb);
	size_t n = sb.len < size - 1 ? sb.len : size - 1;
	memcpy(buf, sb.buf, n);
	buf[n] = '\0';
	sb_release(&sb);
}

/* Where diag_print is in the text: items are printed in line order, so
 * the text is walked once for all of them, not from its start for each. */
struct cursor {
	const char *p; /* the start of line `line` */
	int line;
};

/* The 1-based line of the text, without its newline; NULL past the end.
 * line must not be below the cursor's. */
static const char *source_line(struct cursor *cur, int line, size_t *len)
{
	while (cur->line < line) {
		const char *nl = strchr(cur->p, '\n');
		if (!nl)
			return NULL;
		cur->p = nl + 1;
		cur->line++;
	}
	const char *p = cur->p;
	size_t n = strcspn(p, "\r\n");
	if (!*p && line > 1)
		return NULL;
	*len = n;
	return p;
}

static size_t utf8_char_len(const char *p, size_t left)
{
	unsigned char c = (unsigned char)*p;
	size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
	return n > left ? left : n;
}

/* The item's source line and a caret under its span, appended to sb. */
static void add_source(struct cursor *cur, const struct diag_item *it, struct strbuf *sb)
{
	size_t len;
	const char *line = cur->p ? source_line(cur, it->mark.line, &len) : NULL;
	if (!line)
		return;
	sb_addf(sb, "%5d | ", it->mark.line);
	sb_add(sb, line, len);
	sb_adds(sb, "\n      | ");
	/* The caret line: at most a byte per byte of the line, then the span;
	 * room made once, written in place (these loops run per character). */
	size_t tildes = it->mark.len > 1 ? (size_t)it->mark.len - 1 : 0;
	sb_grow(sb, len + tildes + 2);
	char *o = sb->buf + sb->len;
	size_t off = 0;
	for (int c = 1; c < it->mark.col && off < len; c++) {
		*o++ = line[off] == '\t' ? '\t' : ' ';
		off += utf8_char_len(line + off, len - off);
	}
	*o++ = '^';
	memset(o, '~', tildes);
	o += tildes;
	*o++ = '\n';
	*o = '\0';
	sb->len = (size_t)(o - sb->buf);
}

static int cmp_items(const void *a, const void *b)
{
	const struct diag_item *x = *(const struct diag_item *const *)a;
	const struct diag_item *y = *(const struct diag_item *const *)b;
	if (x->mark.line != y->mark.line)
		return x->mark.line < y->mark.line ? -1 : 1;
	if (x->mark.col != y->mark.col)
		return x->mark.col < y->mark.col ? -1 : 1;
	return x < y ? -1 : x > y; /* stable: order of reporting */
}

void diag_print(const struct diag *d, FILE *out)
{
	if (!d->n)
		return;
	const struct diag_item **order = xcalloc(d->n, sizeof(*order));
	for (size_t i = 0; i < d->n; i++)
		order[i] = &d->items[i];
	qsort(order, d->n, sizeof(*order), cmp_items);
	struct strbuf sb = STRBUF_INIT; /* one for all, reset */
	struct cursor cur = { d->text, 1 };
	for (size_t i = 0; i < d->n; i++) {
		sb_reset(&sb);
		format_head(d, order[i], &sb);
		sb_addch(&sb, '\n');
		if (order[i]->mark.line > 0)
			add_source(&cur, order[i], &sb);
		fwrite(sb.buf, 1, sb.len, out);
	}
	sb_release(&sb);
	free(order);
}

static int same_char(char a, char b)
{
	return tolower((unsigned char)a) == tolower((unsigned char)b);
}

/*
 * Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of two neighbours ("tilte" -> "title" is 1), without case, or
 * any number above limit once it is certain to exceed it. The distance is
 * at least the difference of the lengths, and a row's smallest entry never
 * falls in later rows, so long garbage (a fuzzer's words) costs nothing
 * against the short names it is compared with. Three rows suffice.
 */
static size_t edit_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b);
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	size_t rows[3][65], *heap = NULL, *r2, *r1, *r0;
	if (lb + 1 <= 65) {
		r2 = rows[0], r1 = rows[1], r0 = rows[2];
	} else {
		heap = xcalloc(3 * (lb + 1), sizeof(size_t));
		r2 = heap, r1 = heap + lb + 1, r0 = heap + 2 * (lb + 1);
	}
	for (size_t j = 0; j <= lb; j++)
		r1[j] = j;
	size_t r = limit + 1;
	for (size_t i = 1; i <= la; i++) {
		size_t lowest = r0[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = r1[j - 1] + !same_char(a[i - 1], b[j - 1]);
			if (r1[j] + 1 < best)
				best = r1[j] + 1;
			if (r0[j - 1] + 1 < best)
				best = r0[j - 1] + 1;
			if (i > 1 && j > 1 && same_char(a[i - 1], b[j - 2]) &&
			    same_char(a[i - 2], b[j - 1]) && r2[j - 2] + 1 < best)
				best = r2[j - 2] + 1;
			r0[j] = best;
			if (best < lowest)
				lowest = best;
		}
		if (lowest > limit)
			goto out;
		size_t *t = r2;
		r2 = r1, r1 = r0, r0 = t;
	}
	r = r1[lb];
out:
	free(heap);
	return r;
}

/* One is a prefix of the other, sharing at least two characters. */
static int prefix_of(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t n = la < lb ? la : lb;
	return n >= 2 && !strncasecmp(a, b, n);
}

const char *diag_suggest(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word);
	size_t limit = len / 3 > 1 ? len / 3 : 1;
	const char *best = NULL;
	size_t best_dist = limit + 1;
	for (size_t i = 0; i < n; i++) {
		if (!candidates[i])
			continue;
		size_t dist = edit_distance(word, candidates[i], limit);
		if (dist < best_dist) {
			best = candidates[i];
			best_dist = dist;
		}
	}
	for (size_t i = 0; !best && i < n; i++)
		if (candidates[i] && prefix_of(word, candidates[i]))
			best = candidates[i];
	return best;
}
