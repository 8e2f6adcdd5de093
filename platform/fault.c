/*
 * Fault injection; see fault.h for the rules' grammar. The rules are parsed
 * once into a small fixed table; each keeps its own count of the events it
 * matches (atomic: the random I/O engine's worker threads count writes at
 * the same time). Rejected: a fault layer in the platform files (the
 * platform code would need it twice, and it would also catch rig's own
 * store and report I/O, which the rules are not about).
 */
#include "platform/fault.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "platform/platform.h"

#define MAX_RULES 16
#define MAX_WORDS 6

enum kind { K_SPAWN, K_IO, K_SIG_BEFORE, K_SIG_AFTER, K_SIG_IO, K_SIG_AT };

struct rule {
	enum kind kind;
	char *words[MAX_WORDS]; /* the command's first words (spawn and signal at spawn) */
	size_t nwords;
	enum fault_op op;
	const char *point;      /* signal at a point of the runner: one of points[] */
	unsigned long n;        /* the occurrence, from 1 */
	int from;               /* also every later one */
	int status;             /* spawn: fake exit status */
	int err;                /* io: the errno */
	int sig;
	char *text;             /* the rule as given */
	atomic_ulong count;
};

static struct rule rules[MAX_RULES];
static size_t nrules;
static char *spec_text;
volatile int plat_fault_io_armed;
static int init_done, init_rc;

static const struct { const char *name; int value; } errnos[] = {
	{ "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EDQUOT", EDQUOT },
	{ "EROFS", EROFS }, { "EFBIG", EFBIG },
};

static const struct { const char *name; int value; } signals[] = {
	{ "SIGINT", SIGINT }, { "SIGTERM", SIGTERM }, { "SIGHUP", SIGHUP },
	{ "SIGQUIT", SIGQUIT }, { "SIGKILL", SIGKILL }, { "SIGUSR1", SIGUSR1 },
	{ "SIGUSR2", SIGUSR2 },
};

static const char *const ops[] = { "write", "read", "fsync" };

/* The runner's named points (fault.h: signal:SIG:at:POINT:N). */
static const char *const points[] = { "started", "ended" };

static void clear_rules(void)
{
	for (size_t i = 0; i < nrules; i++) {
		for (size_t w = 0; w < rules[i].nwords; w++)
			free(rules[i].words[w]);
		free(rules[i].text);
	}
	memset(rules, 0, sizeof(rules));
	nrules = 0;
	free(spec_text);
	spec_text = NULL;
	plat_fault_io_armed = 0;
}

/* Split s at sep into at most max fields (the last one keeps the rest). */
static size_t split(char *s, char sep, char **out, size_t max)
{
	size_t n = 0;
	while (n + 1 < max) {
		out[n++] = s;
		char *c = strchr(s, sep);
		if (!c)
			return n;
		*c = '\0';
		s = c + 1;
	}
	out[n++] = s;
	return n;
}

static int parse_count(const char *s, struct rule *r)
{
	if (!strcmp(s, "*")) {
		r->n = 1;
		r->from = 1;
		return 0;
	}
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (end == s || v == 0 || *s == '-' || *s == '+')
		return -1;
	if (*end == '+') {
		r->from = 1;
		end++;
	}
	if (*end)
		return -1;
	r->n = v;
	return 0;
}

static int parse_name(const char *s, struct rule *r)
{
	char *copy = xstrdup(s);
	for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) {
		if (r->nwords == MAX_WORDS) {
			free(copy);
			return -1;
		}
		r->words[r->nwords++] = xstrdup(w);
	}
	free(copy);
	return r->nwords ? 0 : -1;
}

static int parse_op(const char *s, struct rule *r)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(s, ops[i])) {
			r->op = (enum fault_op)i;
			return 0;
		}
	return -1;
}

/* One rule (a writable copy); 0 or -1 with the reason in err. */
static int parse_rule(char *s, struct rule *r, struct strbuf *err)
{
	char *f[6];
	size_t n = split(s, ':', f, 6);
	if (!strcmp(f[0], "spawn")) {
		r->kind = K_SPAWN;
		r->status = 1;
		if (n < 3 || n > 4) {
			sb_adds(err, "spawn takes NAME:N[:exit=S]");
			return -1;
		}
		if (parse_name(f[1], r) < 0) {
			sb_addf(err, "'%s' is not a command name", f[1]);
			return -1;
		}
		if (parse_count(f[2], r) < 0) {
			sb_addf(err, "'%s' is not an occurrence (1, 2, ..., N+ or *)", f[2]);
			return -1;
		}
		if (n == 4) {
			char *end;
			long v = strncmp(f[3], "exit=", 5) ? -1 : strtol(f[3] + 5, &end, 10);
			if (v < 0 || v > 255 || !f[3][5] || *end) {
				sb_addf(err, "'%s' is not exit=S with S in 0..255", f[3]);
				return -1;
			}
			r->status = (int)v;
		}
		return 0;
	}
	if (!strcmp(f[0], "io")) {
		r->kind = K_IO;
		if (n != 4) {
			sb_adds(err, "io takes OP:N:ERRNO");
			return -1;
		}
		if (parse_op(f[1], r) < 0) {
			sb_addf(err, "'%s' is not write, read or fsync", f[1]);
			return -1;
		}
		if (parse_count(f[2], r) < 0) {
			sb_addf(err, "'%s' is not an occurrence (1, 2, ..., N+ or *)", f[2]);
			return -1;
		}
		for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
			if (!strcmp(f[3], errnos[i].name))
				r->err = errnos[i].value;
		if (!r->err) {
			sb_addf(err, "'%s' is not ENOSPC, EIO, EDQUOT, EROFS or EFBIG", f[3]);
			return -1;
		}
		return 0;
	}
	if (!strcmp(f[0], "signal")) {
		if (n != 5) {
			sb_adds(err, "signal takes SIG:before-spawn:NAME:N, SIG:after-spawn:NAME:N, "
				     "SIG:io:OP:N or SIG:at:POINT:N");
			return -1;
		}
		for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
			if (!strcmp(f[1], signals[i].name))
				r->sig = signals[i].value;
		if (!r->sig) {
			sb_addf(err, "'%s' is not SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL, SIGUSR1 "
				     "or SIGUSR2", f[1]);
			return -1;
		}
		if (!strcmp(f[2], "before-spawn") || !strcmp(f[2], "after-spawn")) {
			r->kind = f[2][0] == 'b' ? K_SIG_BEFORE : K_SIG_AFTER;
			if (parse_name(f[3], r) < 0) {
				sb_addf(err, "'%s' is not a command name", f[3]);
				return -1;
			}
		} else if (!strcmp(f[2], "io")) {
			r->kind = K_SIG_IO;
			if (parse_op(f[3], r) < 0) {
				sb_addf(err, "'%s' is not write, read or fsync", f[3]);
				return -1;
			}
		} else if (!strcmp(f[2], "at")) {
			r->kind = K_SIG_AT;
			for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
				if (!strcmp(f[3], points[i]))
					r->point = points[i];
			if (!r->point) {
				sb_addf(err, "'%s' is not started or ended", f[3]);
				return -1;
			}
		} else {
			sb_addf(err, "'%s' is not before-spawn, after-spawn, io or at", f[2]);
			return -1;
		}
		if (parse_count(f[4], r) < 0) {
			sb_addf(err, "'%s' is not an occurrence (1, 2, ..., N+ or *)", f[4]);
			return -1;
		}
		return 0;
	}
	sb_addf(err, "'%s' is not spawn, io or signal", f[0]);
	return -1;
}

int plat_fault_set(const char *spec, struct strbuf *err)
{
	clear_rules();
	if (!spec || !*spec)
		return 0;
	char *copy = xstrdup(spec);
	char *parts[MAX_RULES + 1];
	size_t n = split(copy, ',', parts, MAX_RULES + 1);
	int rc = 0;
	if (n > MAX_RULES) {
		sb_addf(err, "RIG_FAULT: more than %d rules", MAX_RULES);
		rc = -EINVAL;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct rule *r = &rules[nrules++];
		r->text = xstrdup(parts[i]);
		struct strbuf why = STRBUF_INIT;
		if (parse_rule(parts[i], r, &why) < 0) {
			sb_addf(err, "RIG_FAULT: rule '%s': %s", r->text, why.buf);
			rc = -EINVAL;
		}
		sb_release(&why);
		atomic_init(&r->count, 0);
		if (r->kind == K_IO || r->kind == K_SIG_IO)
			plat_fault_io_armed = 1;
	}
	free(copy);
	if (rc < 0)
		clear_rules();
	else
		spec_text = xstrdup(spec);
	return rc;
}

int plat_fault_init(struct strbuf *err)
{
	if (init_done)
		return init_rc;
	init_done = 1;
	init_rc = plat_fault_set(getenv("RIG_FAULT"), err);
	return init_rc;
}

const char *plat_fault_spec(void)
{
	return spec_text;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int matches_argv(const struct rule *r, const char *const *argv)
{
	for (size_t w = 0; w < r->nwords; w++) {
		if (!argv[w])
			return 0;
		if (strcmp(w ? argv[w] : base(argv[w]), r->words[w]))
			return 0;
	}
	return 1;
}

/* Count one matching event; whether this one is the rule's. */
static int fires(struct rule *r)
{
	unsigned long k = atomic_fetch_add(&r->count, 1) + 1;
	return r->from ? k >= r->n : k == r->n;
}

static void send(int sig)
{
	kill(getpid(), sig);
}

int plat_fault_spawn_before(const char *const *argv, int *status, struct strbuf *output)
{
	int faked = 0;
	for (size_t i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];
		if ((r->kind != K_SPAWN && r->kind != K_SIG_BEFORE) || !matches_argv(r, argv))
			continue;
		if (!fires(r))
			continue;
		if (r->kind == K_SIG_BEFORE) {
			send(r->sig);
		} else if (!faked) {
			faked = 1;
			*status = r->status;
			sb_addf(output, "%s: failure injected by RIG_FAULT (%s)\n", base(argv[0]),
				r->text);
		}
	}
	return faked;
}

void plat_fault_spawn_after(const char *const *argv)
{
	for (size_t i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];
		if (r->kind == K_SIG_AFTER && matches_argv(r, argv) && fires(r))
			send(r->sig);
	}
}

int plat_fault_io(enum fault_op op)
{
	int e = 0;
	for (size_t i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];
		if ((r->kind != K_IO && r->kind != K_SIG_IO) || r->op != op || !fires(r))
			continue;
		if (r->kind == K_SIG_IO)
			send(r->sig);
		else if (!e)
			e = r->err;
	}
	return e;
}

void plat_fault_point(const char *point)
{
	for (size_t i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];
		if (r->kind == K_SIG_AT && !strcmp(r->point, point) && fires(r))
			send(r->sig);
	}
}

int plat_fault_full_sync(int fd)
{
	int e;
	if (plat_fault_io_armed && (e = plat_fault_io(FAULT_FSYNC)))
		return -e;
	return plat_full_sync(fd);
}
