/*
 * The progress line of long work. On a terminal one line is rewritten in
 * place (carriage return, clear to end of line); otherwise each update is a
 * plain line, so logs and CI output stay readable.
 */
#ifndef RIG_PROGRESS_H
#define RIG_PROGRESS_H

#include <stdio.h>

struct progress {
	FILE *out;
	int tty;
	int active; /* a line is on screen, not yet ended */
};

/* out may be NULL: no output at all (--quiet). */
void progress_init(struct progress *p, FILE *out);
void progress_update(struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* End the current line (on a terminal), so other output can follow. */
void progress_end(struct progress *p);

#endif
