/*
 * A growable string that is never NULL (git's strbuf). `buf` always points
 * at a NUL-terminated string, even for a fresh buffer, so it can be printed
 * without checks. Used for paths, argument text, CSV, SQL and messages.
 */
#ifndef RIG_STRBUF_H
#define RIG_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc; /* 0 while buf points at the shared empty string */
};

extern char strbuf_empty[];
#define STRBUF_INIT { strbuf_empty, 0, 0 }

void sb_init(struct strbuf *sb);
void sb_release(struct strbuf *sb);          /* frees, leaves sb as STRBUF_INIT */
void sb_reset(struct strbuf *sb);            /* length 0, keeps memory */
char *sb_detach(struct strbuf *sb);          /* caller frees; sb becomes empty */
void sb_grow(struct strbuf *sb, size_t extra);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void sb_setlen(struct strbuf *sb, size_t len); /* len <= sb->len */
/* A 64-bit integer in decimal, without printf (it is slow per field in reports). */
void sb_add_int(struct strbuf *sb, long long v);
/* Append s quoted for CSV (RFC 4180): quoted only when it needs to be. */
void sb_add_csv(struct strbuf *sb, const char *s);
/* Append s escaped for HTML/XML text and attribute values. */
void sb_add_html(struct strbuf *sb, const char *s);
/* Append s as a JSON string literal, with the quotes. */
void sb_add_json(struct strbuf *sb, const char *s);

/* Append n bytes / one character. Inline: the report writers call them
 * for every field and character, and the call and the growth check showed
 * in profiles of `rig report` (bench/README.md). */
static inline void sb_add(struct strbuf *sb, const void *data, size_t n)
{
	if (sb->len + n + 1 > sb->alloc)
		sb_grow(sb, n);
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static inline void sb_addch(struct strbuf *sb, char c)
{
	if (sb->len + 2 > sb->alloc)
		sb_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

#endif
