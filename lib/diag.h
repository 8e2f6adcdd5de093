/*
 * Diagnostics for plan files: every problem in a file is collected (not just
 * the first), each with the file, a 1-based line and column from libyaml's
 * marks, and a message. Printed as
 *
 *   plan.yaml:12:5: error: unknown key 'qdepth' in step 'randread' (did you mean 'qd'?)
 *      12 |   - randread: { qdepth: 4 }
 *         |                 ^~~~~~
 */
#ifndef RIG_DIAG_H
#define RIG_DIAG_H

#include <stddef.h>
#include <stdio.h>

struct mark {
	int line; /* 1-based; 0 = unknown */
	int col;  /* 1-based */
	int len;  /* length of the offending text on that line, for the ~~~ */
};

enum diag_level { DIAG_ERROR, DIAG_WARNING };

struct diag_item {
	enum diag_level level;
	struct mark mark;
	char *msg;
};

struct diag {
	const char *file;   /* name to print; not owned */
	const char *text;   /* the file's text, for the source line; not owned, may be NULL */
	struct diag_item *items;
	size_t n, alloc;
	size_t nerrors;
	/* Open addressing over items (index + 1; 0 empty), for dropping an item
	 * equal to one already there without comparing it with all of them. */
	size_t *seen;
	size_t nseen;  /* slots, a power of two */
};

void diag_init(struct diag *d, const char *file, const char *text);
void diag_release(struct diag *d);
/* Add an item. One equal to an item already there (level, line, column and
 * message) is dropped: a mistake inside a YAML node that aliases use many
 * times is reported once, at the node. */
void diag_error(struct diag *d, struct mark m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(struct diag *d, struct mark m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Print all items in order of position, with the source line and caret. */
void diag_print(const struct diag *d, FILE *out);
/* "file:line:col: error: msg" for item i, without the source lines. */
void diag_format_item(const struct diag *d, size_t i, char *buf, size_t size);

/* The closest candidate by edit distance, or NULL when none is close
 * enough to be a plausible typo (distance <= max(1, len/3)). Letters
 * compare without case; failing that, a candidate that is a prefix of the
 * word or has it as a prefix (two characters or more: "qdepth" -> "qd")
 * is suggested. */
const char *diag_suggest(const char *word, const char *const *candidates, size_t n);

#endif
