/*
 * Allocation that cannot fail: on out-of-memory the process prints a message
 * and aborts. rig has no sensible way to continue without memory, and
 * checking every small allocation would bury the logic (git's xmalloc).
 */
#ifndef RIG_XALLOC_H
#define RIG_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Grow *arr (holding *alloc elements) so that it can hold at least `need`. */
#define XGROW(arr, need, alloc)                                               \
	do {                                                                  \
		if ((size_t)(need) > (alloc)) {                               \
			size_t xg_new_ = (alloc) ? (alloc) * 2 : 8;           \
			while (xg_new_ < (size_t)(need))                      \
				xg_new_ *= 2;                                 \
			(arr) = xrealloc((arr), xg_new_ * sizeof(*(arr)));    \
			(alloc) = xg_new_;                                    \
		}                                                             \
	} while (0)

#endif
