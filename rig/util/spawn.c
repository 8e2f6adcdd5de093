/*
 * Spawning external commands; see spawn.h. fork + execvp rather than
 * posix_spawn: the child must chdir and set up /dev/null, and the portable
 * posix_spawn has no chdir action (addchdir_np differs by platform). Output
 * is read through one pipe with poll until EOF, then the child is reaped.
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../platform/platform.h"
#include "strbuf.h"
#include "xalloc.h"

static int needs_quotes(const char *s)
{
	if (!*s)
		return 1;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./=:,+%@", *s))
			return 1;
	return 0;
}

void spawn_argv_text(struct strbuf *sb, const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			sb_addch(sb, ' ');
		if (!needs_quotes(argv[i])) {
			sb_adds(sb, argv[i]);
			continue;
		}
		sb_addch(sb, '\'');
		for (const char *p = argv[i]; *p; p++) {
			if (*p == '\'')
				sb_adds(sb, "'\\''");
			else
				sb_addch(sb, *p);
		}
		sb_addch(sb, '\'');
	}
}

void spawn_result_release(struct spawn_result *r)
{
	free(r->output);
	memset(r, 0, sizeof(*r));
}

/* Keep the first and last halves of an over-long output. */
static void keep_output(struct strbuf *out, const char *buf, size_t n, int *truncated)
{
	size_t half = SPAWN_MAX_OUTPUT / 2;
	sb_add(out, buf, n);
	if (out->len > SPAWN_MAX_OUTPUT + half) {
		static const char cut[] = "\n[... output cut ...]\n";
		size_t tail = half - sizeof(cut);
		memmove(out->buf + half, cut, sizeof(cut) - 1);
		memmove(out->buf + half + sizeof(cut) - 1, out->buf + out->len - tail, tail);
		sb_setlen(out, half + sizeof(cut) - 1 + tail);
		*truncated = 1;
	}
}

static void child(const char *const *argv, const char *cwd, int outfd)
{
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0 && devnull != 0) {
		dup2(devnull, 0);
		close(devnull);
	}
	dup2(outfd, 1);
	dup2(outfd, 2);
	if (outfd > 2)
		close(outfd);
	/* The parent may ignore or catch these; the command gets defaults. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (cwd && chdir(cwd) < 0) {
		const char msg[] = "rig: cannot change to the command's directory\n";
		ssize_t w = write(2, msg, sizeof(msg) - 1);
		(void)w;
		_exit(126);
	}
	execvp(argv[0], (char *const *)argv);
	/* Report exec failure through the pipe; the parent sees status 127. */
	const char *e = strerror(errno);
	ssize_t w = write(2, "rig: cannot run ", 16);
	w = write(2, argv[0], strlen(argv[0]));
	w = write(2, ": ", 2);
	w = write(2, e, strlen(e));
	w = write(2, "\n", 1);
	(void)w;
	_exit(127);
}

int spawn_run(struct spawner *sp, const char *const *argv, const char *cwd,
	      struct spawn_result *r, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	memset(r, 0, sizeof(*r));
	spawn_argv_text(&text, argv);
	if (sp && sp->dry_run) {
		r->exited = 1;
		r->output = xstrdup("");
		if (sp->log)
			sp->log(sp->opaque, text.buf, NULL);
		sb_release(&text);
		return 0;
	}
	int fds[2];
	if (pipe(fds) < 0) {
		int e = errno;
		sb_addf(err, "cannot run %s: pipe: %s", text.buf, strerror(e));
		sb_release(&text);
		return -e;
	}
	uint64_t t0 = plat_clock_ns();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		sb_addf(err, "cannot run %s: fork: %s", text.buf, strerror(e));
		sb_release(&text);
		return -e;
	}
	if (pid == 0) {
		close(fds[0]);
		child(argv, cwd, fds[1]);
	}
	close(fds[1]);
	struct strbuf out = STRBUF_INIT;
	char buf[65536];
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int pr = poll(&pfd, 1, -1);
		if (pr < 0 && errno == EINTR)
			continue; /* a signal for us (Ctrl-C): the child gets its own */
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		keep_output(&out, buf, (size_t)n, &r->truncated);
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->seconds = (double)(plat_clock_ns() - t0) / 1e9;
	if (WIFEXITED(status)) {
		r->exited = 1;
		r->status = WEXITSTATUS(status);
	} else {
		r->exited = 0;
		r->status = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
	}
	r->output_len = out.len;
	r->output = sb_detach(&out);
	if (sp && sp->log)
		sp->log(sp->opaque, text.buf, r);
	sb_release(&text);
	return 0;
}

int spawn_check(struct spawner *sp, const char *const *argv, const char *cwd,
		struct spawn_result *r, struct strbuf *err)
{
	struct spawn_result local;
	struct spawn_result *res = r ? r : &local;
	int rc = spawn_run(sp, argv, cwd, res, err);
	if (rc < 0)
		return rc;
	if (!res->exited || res->status != 0) {
		struct strbuf text = STRBUF_INIT;
		spawn_argv_text(&text, argv);
		if (res->exited)
			sb_addf(err, "%s failed with exit status %d", text.buf, res->status);
		else
			sb_addf(err, "%s was killed by signal %d", text.buf, res->status);
		if (res->output_len)
			sb_addf(err, ":\n%s", res->output);
		sb_release(&text);
		rc = -EIO;
	}
	if (!r)
		spawn_result_release(&local);
	return rc;
}
