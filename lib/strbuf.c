/* The never-NULL growable string; see strbuf.h. */
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char strbuf_empty[1];

void sb_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
}

void sb_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	sb_init(sb);
}

void sb_reset(struct strbuf *sb)
{
	sb_setlen(sb, 0);
}

char *sb_detach(struct strbuf *sb)
{
	char *p = sb->alloc ? sb->buf : xstrdup("");
	sb_init(sb);
	return p;
}

void sb_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n *= 2;
	if (sb->alloc) {
		sb->buf = xrealloc(sb->buf, n);
	} else {
		sb->buf = xmalloc(n);
		sb->buf[0] = '\0';
	}
	sb->alloc = n;
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	sb_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

void sb_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return; /* the shared empty string stays empty */
	if (len > sb->len)
		len = sb->len;
	sb->len = len;
	sb->buf[len] = '\0';
}

void sb_add_int(struct strbuf *sb, long long v)
{
	char buf[24];
	int n = sizeof(buf);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do {
		buf[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[--n] = '-';
	sb_add(sb, buf + n, sizeof(buf) - (size_t)n);
}

void sb_add_csv(struct strbuf *sb, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		sb_adds(sb, s);
		return;
	}
	sb_addch(sb, '"');
	for (; *s; s++) {
		if (*s == '"')
			sb_addch(sb, '"');
		sb_addch(sb, *s);
	}
	sb_addch(sb, '"');
}

void sb_add_html(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': sb_adds(sb, "&amp;"); break;
		case '<': sb_adds(sb, "&lt;"); break;
		case '>': sb_adds(sb, "&gt;"); break;
		case '"': sb_adds(sb, "&quot;"); break;
		case '\'': sb_adds(sb, "&#39;"); break;
		default: sb_addch(sb, *s);
		}
	}
}

void sb_add_json(struct strbuf *sb, const char *s)
{
	sb_addch(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': sb_adds(sb, "\\\""); break;
		case '\\': sb_adds(sb, "\\\\"); break;
		case '\n': sb_adds(sb, "\\n"); break;
		case '\r': sb_adds(sb, "\\r"); break;
		case '\t': sb_adds(sb, "\\t"); break;
		default:
			if (*p < 0x20)
				sb_addf(sb, "\\u%04x", *p);
			else
				sb_addch(sb, (char)*p);
		}
	}
	sb_addch(sb, '"');
}
