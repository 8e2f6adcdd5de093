/*
 * The shared store's pure parts, tested without a server
 * (tests/store_pg_test.c): the connection string's credential rule, run
 * references, and COPY's text format both ways.
 *
 * The password rule: a connection string is typed on a command line or
 * written in a playbook, where ps, shell history and logs show it to
 * others. libpq reads a password from PGPASSWORD, a service file or
 * ~/.pgpass (PGPASSFILE) by itself; rig refuses one given anywhere else.
 * PQconninfoParse reads the string alone (no environment, no defaults), so
 * the check sees exactly what was typed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "reports/csv.h"
#include "store/store_pg.h"

int rep_pg_check_conninfo(const char *conninfo, struct strbuf *err)
{
	if (!conninfo || !*conninfo) {
		sb_adds(err, "no database given: a postgresql://HOST/DATABASE URL");
		return -EINVAL;
	}
	char *msg = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &msg);
	if (!opts) {
		const char *m = msg ? msg : "out of memory";
		size_t n = strlen(m);
		while (n && m[n - 1] == '\n')
			n--;
		/* libpq quotes a malformed URL whole: it may hold a password. */
		const char *whole = strstr(m, conninfo);
		size_t cut = whole && whole < m + n ? (size_t)(whole - m) : n;
		sb_addf(err, "not a database connection string (a postgresql://HOST/DATABASE URL,"
			" or libpq's key=value pairs): %.*s%s", (int)cut, m, cut < n ? "the URL" : "");
		if (cut < n && cut + strlen(conninfo) < n)
			sb_addf(err, "%.*s", (int)(n - cut - strlen(conninfo)), m + cut + strlen(conninfo));
		PQfreemem(msg);
		return -EINVAL;
	}
	int rc = 0;
	for (const PQconninfoOption *o = opts; o->keyword; o++)
		if (!strcmp(o->keyword, "password") && o->val && *o->val) {
			sb_adds(err, "the connection string holds a password, which others can read on"
				" a command line or in a playbook: give it in ~/.pgpass or in"
				" PGPASSWORD instead");
			rc = -EINVAL;
		}
	PQconninfoFree(opts);
	return rc;
}

int rep_pg_parse_ref(const char *ref, char **host, char **id, struct strbuf *err)
{
	*host = *id = NULL;
	const char *slash = strchr(ref, '/');
	if (!*ref || (slash && (slash == ref || !slash[1] || strchr(slash + 1, '/')))) {
		sb_addf(err, "'%s' names no run in the database: give RUN or HOST/RUN (the run's"
			" folder name, and the host it was pushed from)", ref);
		return -EINVAL;
	}
	if (slash) {
		*host = xstrndup(ref, (size_t)(slash - ref));
		*id = xstrdup(slash + 1);
	} else {
		*id = xstrdup(ref);
	}
	return 0;
}

void rep_pg_copy_text(struct strbuf *sb, const char *s, size_t len)
{
	if (!s) {
		sb_add(sb, "\\N", 2);
		return;
	}
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		char esc = 0;
		switch (s[i]) {
		case '\\': esc = '\\'; break;
		case '\t': esc = 't'; break;
		case '\n': esc = 'n'; break;
		case '\r': esc = 'r'; break;
		default: continue;
		}
		sb_add(sb, s + run, i - run);
		sb_addch(sb, '\\');
		sb_addch(sb, esc);
		run = i + 1;
	}
	sb_add(sb, s + run, len - run);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long rep_pg_copy_field(char *s, size_t len)
{
	if (len == 2 && s[0] == '\\' && s[1] == 'N')
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\' || i + 1 == len) {
			s[o++] = s[i];
			continue;
		}
		char c = s[++i];
		switch (c) {
		case 'b': s[o++] = '\b'; break;
		case 'f': s[o++] = '\f'; break;
		case 'n': s[o++] = '\n'; break;
		case 'r': s[o++] = '\r'; break;
		case 't': s[o++] = '\t'; break;
		case 'v': s[o++] = '\v'; break;
		case 'x':
			if (i + 1 < len && hexval(s[i + 1]) >= 0) {
				int v = hexval(s[++i]);
				if (i + 1 < len && hexval(s[i + 1]) >= 0)
					v = v * 16 + hexval(s[++i]);
				s[o++] = (char)v;
			} else {
				s[o++] = c;
			}
			break;
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0';
				for (int k = 0; k < 2 && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '7'; k++)
					v = v * 8 + (s[++i] - '0');
				s[o++] = (char)v;
			} else {
				s[o++] = c;
			}
		}
	}
	s[o] = '\0';
	return (long)o;
}

void rep_pg_copy_double(struct strbuf *sb, double v)
{
	if (isnan(v))
		sb_adds(sb, "NaN");
	else if (isinf(v))
		sb_adds(sb, v > 0 ? "Infinity" : "-Infinity");
	else
		rep_csv_add_double(sb, v); /* the shortest exact, without printf's cost */
}
