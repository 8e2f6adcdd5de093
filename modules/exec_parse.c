/*
 * exec's pure parts (see exec_parse.h): placeholders, fio's JSON through
 * json-c, and name=number lines.
 *
 * fio's JSON is read with json-c (a real parser: fio's output nests, quotes
 * job names and option values, and grows fields between versions).
 * Rejected: scanning for "bw_bytes" by hand (a job named "bw_bytes", or an
 * option value containing it, would be read as a figure). The figures are
 * per job and per direction: read.bw_bytes (bytes/s), read.iops and
 * read.io_bytes, likewise write; they are summed over jobs, which is right
 * both for separate jobs running together and for group_reporting (one
 * aggregated entry). fio before 3.0 had no bw_bytes, only bw in KiB/s: it
 * is used (times 1024) with a flag the caller notes. trim is not reported
 * (the module table has no metric for it).
 */
#include "modules/exec_parse.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"

static const char *const placeholders[] = { "{dir}", "{device}", "{volume}" };

int mod_exec_expand(const struct argv_list *run, const char *dir, const char *device,
		const char *volume, char ***out, struct strbuf *err)
{
	const char *values[3] = { dir, device, volume };
	char **argv = xcalloc(run->n + 1, sizeof(char *));
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < run->n; i++) {
		sb_reset(&sb);
		for (const char *p = run->items[i]; *p;) {
			size_t k = 0, plen = 0;
			if (*p == '{') {
				for (k = 0; k < 3; k++) {
					plen = strlen(placeholders[k]);
					if (!strncmp(p, placeholders[k], plen))
						break;
				}
			}
			if (*p != '{' || k == 3) {
				sb_addch(&sb, *p++);
				continue;
			}
			if (!values[k]) {
				sb_addf(err, "argument %zu of the command, '%s', uses {device}, but "
					     "volume %s has no block device (a `dirs` target has none)",
					i + 1, run->items[i], volume ? volume : dir);
				sb_release(&sb);
				argv[i] = NULL;
				mod_exec_argv_free(argv);
				return -EINVAL;
			}
			sb_adds(&sb, values[k]);
			p += plen;
		}
		argv[i] = xstrdup(sb.buf);
	}
	sb_release(&sb);
	*out = argv;
	return 0;
}

void mod_exec_argv_free(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* --- fio --- */

/* A number member of obj; 0 when absent, -1 when present but not a number. */
static int get_number(struct json_object *obj, const char *key, double *v)
{
	struct json_object *m;
	if (!json_object_object_get_ex(obj, key, &m))
		return 0;
	if (!json_object_is_type(m, json_type_int) && !json_object_is_type(m, json_type_double))
		return -1;
	*v = json_object_get_double(m);
	return 1;
}

/* Add one direction ("read", "write") of one job. */
static int add_direction(struct json_object *job, const char *dir, const char *jobname,
			 double *bw, double *iops, double *io, int *from_kib, struct strbuf *err)
{
	struct json_object *d;
	if (!json_object_object_get_ex(job, dir, &d) || !json_object_is_type(d, json_type_object)) {
		sb_addf(err, "fio's JSON has no \"%s\" figures for job '%s'", dir, jobname);
		return -EINVAL;
	}
	double b = 0, i = 0, n = 0;
	int hb = get_number(d, "bw_bytes", &b);
	if (hb == 0) {
		hb = get_number(d, "bw", &b);
		if (hb == 1) {
			b *= 1024;
			*from_kib = 1;
		}
	}
	int hi = get_number(d, "iops", &i);
	int hn = get_number(d, "io_bytes", &n);
	if (hb != 1 || hi != 1 || hn < 0) {
		sb_addf(err, "fio's JSON has no numeric %s bandwidth and IOPS for job '%s'", dir,
			jobname);
		return -EINVAL;
	}
	*bw += b;
	*iops += i;
	*io += n;
	return 0;
}

/* Where the JSON starts: the first line that starts with '{'. */
static const char *json_start(const char *text)
{
	for (const char *p = text; p && *p;) {
		if (*p == '{')
			return p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int mod_exec_parse_fio_json(const char *text, struct fio_totals *t, struct strbuf *err)
{
	memset(t, 0, sizeof(*t));
	const char *start = json_start(text);
	if (!start) {
		sb_adds(err, "no JSON in the command's standard output (fio needs "
			     "--output-format=json)");
		return -EINVAL;
	}
	struct json_tokener *tok = json_tokener_new();
	if (!tok) {
		sb_adds(err, "cannot allocate a JSON parser");
		return -ENOMEM;
	}
	size_t len = strlen(start);
	int ilen = len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
	struct json_object *root = json_tokener_parse_ex(tok, start, ilen);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t at = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root) {
		sb_addf(err, "cannot parse fio's JSON output: %s",
			jerr == json_tokener_continue ? "it ends before the JSON does"
						      : json_tokener_error_desc(jerr));
		if (jerr != json_tokener_continue)
			sb_addf(err, " (at byte %zu of the JSON)", at);
		return -EINVAL;
	}
	int rc = 0;
	struct json_object *v, *jobs;
	if (json_object_object_get_ex(root, "fio version", &v) &&
	    json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		size_t n = strlen(s);
		if (n >= sizeof(t->version))
			n = sizeof(t->version) - 1;
		memcpy(t->version, s, n);
		t->version[n] = 0;
	}
	if (!json_object_object_get_ex(root, "jobs", &jobs) ||
	    !json_object_is_type(jobs, json_type_array) || !json_object_array_length(jobs)) {
		sb_adds(err, "fio's JSON output lists no jobs");
		rc = -EINVAL;
		goto out;
	}
	size_t n = json_object_array_length(jobs);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct json_object *job = json_object_array_get_idx(jobs, i);
		if (!json_object_is_type(job, json_type_object)) {
			sb_addf(err, "fio's JSON job %zu is not an object", i + 1);
			rc = -EINVAL;
			break;
		}
		const char *name = "?";
		if (json_object_object_get_ex(job, "jobname", &v) &&
		    json_object_is_type(v, json_type_string))
			name = json_object_get_string(v);
		double e = 0;
		if (get_number(job, "error", &e) == 1 && e != 0) {
			sb_addf(err, "fio reports error %.0f (%s) for job '%s'", e, strerror((int)e),
				name);
			rc = -EINVAL;
			break;
		}
		rc = add_direction(job, "read", name, &t->read_bw_bytes, &t->read_iops,
				   &t->read_io_bytes, &t->bw_from_kib, err);
		if (rc == 0)
			rc = add_direction(job, "write", name, &t->write_bw_bytes, &t->write_iops,
					   &t->write_io_bytes, &t->bw_from_kib, err);
	}
	t->jobs = n;
out:
	json_object_put(root);
	return rc;
}

/* --- name=number --- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* A finite decimal number filling [p, end). */
static int parse_number(const char *p, const char *end, double *out)
{
	const char *s = p;
	if (s < end && (*s == '+' || *s == '-'))
		s++;
	size_t digits = 0;
	while (s < end && *s >= '0' && *s <= '9')
		s++, digits++;
	if (s < end && *s == '.') {
		s++;
		while (s < end && *s >= '0' && *s <= '9')
			s++, digits++;
	}
	if (!digits)
		return 0;
	if (s < end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < end && (*s == '+' || *s == '-'))
			s++;
		size_t ed = 0;
		while (s < end && *s >= '0' && *s <= '9')
			s++, ed++;
		if (!ed)
			return 0;
	}
	if (s != end)
		return 0;
	char buf[128];
	size_t n = (size_t)(end - p);
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, p, n);
	buf[n] = 0;
	double v = strtod(buf, NULL);
	if (!isfinite(v))
		return 0;
	*out = v;
	return 1;
}

size_t mod_exec_parse_kv(const char *text, exec_kv_fn fn, void *opaque, size_t *bad,
		     struct strbuf *first_bad)
{
	size_t n = 0;
	*bad = 0;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		const char *next = nl ? nl + 1 : end;
		const char *b = line, *e = end;
		while (b < e && is_blank(*b))
			b++;
		while (e > b && is_blank(e[-1]))
			e--;
		const char *eq = memchr(b, '=', (size_t)(e - b));
		if (!eq || eq == b) {
			line = next;
			continue;
		}
		const char *ne = eq, *vb = eq + 1;
		while (ne > b && is_blank(ne[-1]))
			ne--;
		while (vb < e && is_blank(*vb))
			vb++;
		double v;
		int name_has_blank = 0;
		for (const char *p = b; p < ne; p++)
			name_has_blank |= is_blank(*p);
		if (ne == b || name_has_blank || !parse_number(vb, e, &v)) {
			line = next;
			continue;
		}
		int ok = (size_t)(ne - b) <= EXEC_NAME_MAX;
		for (const char *p = b; p < ne && ok; p++)
			ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
		if (!ok) {
			if (!(*bad)++ && first_bad)
				sb_add(first_bad, b, (size_t)(e - b));
			line = next;
			continue;
		}
		char name[EXEC_NAME_MAX + 1];
		memcpy(name, b, (size_t)(ne - b));
		name[ne - b] = 0;
		fn(opaque, name, v);
		n++;
		line = next;
	}
	return n;
}

const char *mod_exec_tail(const char *text, size_t len, size_t max_lines, size_t max_bytes)
{
	size_t from = len > max_bytes ? len - max_bytes : 0;
	size_t lines = 0;
	size_t i = len;
	if (i && text[i - 1] == '\n')
		i--; /* the final line break does not start a line */
	while (i > from) {
		if (text[i - 1] == '\n' && ++lines == max_lines)
			return text + i;
		i--;
	}
	if (from == 0)
		return text;
	/* Cut inside a line: start after the next break, if there is one. */
	const char *nl = memchr(text + from, '\n', len - from);
	return nl && nl + 1 < text + len ? nl + 1 : text + from;
}
