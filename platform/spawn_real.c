/*
 * plat_spawner_real: runs each command; the only code in rig that starts a
 * process. fork + execvp rather than posix_spawn: the child must chdir and
 * set up /dev/null, and the portable posix_spawn has no chdir action
 * (addchdir_np differs by platform). Output is read through one pipe (two
 * when stdout and stderr are split: both are drained by the same poll loop,
 * so a command filling one pipe while we wait on the other cannot deadlock)
 * until EOF, then the child is reaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "platform/platform.h"
#include "platform/spawn_impl.h"

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

static void child(const char *const *argv, const char *cwd, int outfd, int errfd, int own_group)
{
	if (own_group)
		setpgid(0, 0);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0 && devnull != 0) {
		dup2(devnull, 0);
		close(devnull);
	}
	dup2(outfd, 1);
	dup2(errfd, 2);
	if (outfd > 2)
		close(outfd);
	if (errfd > 2 && errfd != outfd)
		close(errfd);
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

/* Where the bytes of one pipe go. */
struct stream {
	int fd;                /* -1 once closed */
	struct strbuf *own;    /* this stream alone (split), or NULL */
};

static void close_pipes(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* The child running argv, its output into the pipes' read ends (fds[0];
 * fds[2] for stderr when split): its pid, or a negative errno (err set). */
static pid_t start_child(const char *const *argv, const char *cwd, int split, int own_group,
			 int fds[4], struct strbuf *err)
{
	if (pipe(fds) < 0 || (split && pipe(fds + 2) < 0)) {
		int e = errno;
		close_pipes(fds, 4);
		plat_spawn_cannot_run(err, argv);
		sb_addf(err, "pipe: %s", strerror(e));
		return -e;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close_pipes(fds, 4);
		plat_spawn_cannot_run(err, argv);
		sb_addf(err, "fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		close(fds[0]);
		if (split)
			close(fds[2]);
		child(argv, cwd, fds[1], split ? fds[3] : fds[1], own_group);
	}
	if (own_group)
		setpgid(pid, pid); /* also here: kill(-pid) must work before the child runs */
	close(fds[1]);
	if (split)
		close(fds[3]);
	return pid;
}

/* Cancelled: SIGTERM to the child's group at once, SIGKILL after the
 * grace; 1 when even that has not closed the pipes after twice the grace. */
static int stop_group(pid_t pid, uint64_t *stop_at, int *killed, struct spawn_result *r)
{
	uint64_t now = plat_clock_ns();
	uint64_t grace = (uint64_t)SPAWN_CANCEL_GRACE_MS * 1000000u;
	if (!*stop_at) {
		*stop_at = now;
		r->cancelled = 1;
		kill(-pid, SIGTERM);
	} else if (!*killed && now - *stop_at >= grace) {
		kill(-pid, SIGKILL);
		*killed = 1;
	} else if (*killed && now - *stop_at >= 2 * grace) {
		return 1;
	}
	return 0;
}

/* waitpid's status into r: the exit status, or the signal that ended it. */
static void set_status(struct spawn_result *r, int status)
{
	if (WIFEXITED(status)) {
		r->exited = 1;
		r->status = WEXITSTATUS(status);
	} else {
		r->exited = 0;
		r->status = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
	}
}

static int real_run(const struct spawner *sp, const char *const *argv, const char *cwd,
		    const struct spawn_opts *opts, struct spawn_result *r, struct strbuf *err)
{
	int split = opts->split;
	volatile sig_atomic_t *cancel = opts->cancel;
	/* fds[0..1]: stdout (or both); fds[2..3]: stderr when split. */
	int fds[4] = { -1, -1, -1, -1 };
	uint64_t t0 = plat_clock_ns();
	pid_t pid = start_child(argv, cwd, split, cancel != NULL, fds, err);
	if (pid < 0)
		return (int)pid;
	struct strbuf out = STRBUF_INIT, sout = STRBUF_INIT, serr = STRBUF_INIT;
	struct stream st[2] = {
		{ fds[0], split ? &sout : NULL },
		{ split ? fds[2] : -1, split ? &serr : NULL },
	};
	int tr_out = 0, tr_own = 0;
	struct strbuf watch_text = STRBUF_INIT;
	uint64_t watched = t0;
	if (sp->watch)
		plat_spawn_argv_text(&watch_text, argv);
	uint64_t stop_at = 0; /* when cancelled: SIGTERM sent at this time (ns) */
	int killed = 0;
	char buf[65536];
	while (st[0].fd >= 0 || st[1].fd >= 0) {
		if (cancel && *cancel && stop_group(pid, &stop_at, &killed, r))
			break; /* something outside the group holds the pipe */
		struct pollfd pfd[2];
		nfds_t np = 0;
		int which[2];
		for (int i = 0; i < 2; i++) {
			if (st[i].fd < 0)
				continue;
			pfd[np].fd = st[i].fd;
			pfd[np].events = POLLIN;
			pfd[np].revents = 0;
			which[np++] = i;
		}
		if (sp->watch) {
			uint64_t now = plat_clock_ns();
			if (now - watched >= (uint64_t)SPAWN_WATCH_MS * 1000000u) {
				sp->watch(sp->watch_opaque, watch_text.buf, (double)(now - t0) / 1e9);
				watched = now;
			}
		}
		int pr = poll(pfd, np, cancel ? 100 : sp->watch ? SPAWN_WATCH_MS : -1);
		if (pr < 0 && errno == EINTR)
			continue; /* a signal for us (Ctrl-C): the child gets its own, or the cancel */
		if (pr <= 0)
			continue;
		for (nfds_t k = 0; k < np; k++) {
			if (!pfd[k].revents)
				continue;
			struct stream *s = &st[which[k]];
			ssize_t n = read(s->fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(s->fd);
				s->fd = -1;
				continue;
			}
			keep_output(&out, buf, (size_t)n, &tr_out);
			if (s->own)
				keep_output(s->own, buf, (size_t)n, &tr_own);
		}
	}
	sb_release(&watch_text);
	close_pipes(&st[0].fd, 1);
	close_pipes(&st[1].fd, 1);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->seconds = (double)(plat_clock_ns() - t0) / 1e9;
	set_status(r, status);
	r->truncated = tr_out || tr_own;
	r->output_len = out.len;
	r->output = sb_detach(&out);
	if (split) {
		r->stdout_len = sout.len;
		r->stdout_text = sb_detach(&sout);
		r->stderr_len = serr.len;
		r->stderr_text = sb_detach(&serr);
	}
	return 0;
}

static const struct spawn_ops real_ops = { .run = real_run };

struct spawner plat_spawner_real(spawn_log_fn log, void *opaque)
{
	return (struct spawner){ .ops = &real_ops, .log = log, .opaque = opaque };
}
