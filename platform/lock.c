/*
 * Target locks; see lock.h for the contract and the folders.
 *
 * flock(2), not the lock file's existence: a file created with O_EXCL as
 * the lock stays behind after a crash, and telling a stale one from a live
 * one by its pid races with pid reuse and with a second starter. flock is
 * released by the kernel with the last descriptor of the open file, and
 * the descriptors are close-on-exec, so the commands a run starts (which
 * outlive a killed rig in their own process group) never keep it.
 * Rejected: fcntl record locks (a process loses them when it closes any
 * descriptor of the file, and they do not conflict within a process, so
 * two lock sets of one process, as in the tests, would not exclude each
 * other); removing the file at release (a starter that opened it just
 * before would then lock a file nobody else can find).
 *
 * The holder's record is written in place (then the file is cut to its
 * length) and ends with a line "end"; a reader that finds no complete
 * record, or one whose pid is gone (left by a killed holder), waits a
 * little and tries the lock again.
 */
#include "platform/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/sysinfo.h"
#include "lib/timeutil.h"
#include "lib/xalloc.h"
#include "platform/platform.h"

/* A lock file's name stays well below NAME_MAX (255) with ".lock". */
#define NAME_KEEP 180
#define SETTLE_STEP_MS 20

void plat_lock_file_name(const char *key, struct strbuf *sb)
{
	size_t start = sb->len;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)key; *c; c++) {
		h = (h ^ *c) * 0x100000001b3ull;
		int plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= '0' && *c <= '9') || *c == '_' || *c == ':' || *c == '-' ||
			    (*c == '.' && c != (const unsigned char *)key);
		if (plain)
			sb_addch(sb, (char)*c);
		else
			sb_addf(sb, "%%%02X", *c);
	}
	if (sb->len - start > NAME_KEEP) {
		sb_setlen(sb, start + NAME_KEEP - 17);
		sb_addf(sb, "-%016llx", (unsigned long long)h);
	}
	sb_adds(sb, ".lock");
}

/* --- the folder --- */

/* Make dir (mode) unless it exists; 0 when it is a folder this process
 * may create files in, else a negative errno. */
static int usable(const char *dir, mode_t mode)
{
	if (mkdir(dir, mode) == 0)
		(void)chmod(dir, mode); /* the umask must not hide locks from other users */
	else if (errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(dir, W_OK | X_OK) < 0 ? -errno : 0;
}

static void user_dir(struct strbuf *sb)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	if (x && x[0] == '/')
		sb_addf(sb, "%s/rig", x);
	else
		sb_addf(sb, "/tmp/rig-%lu", (unsigned long)geteuid());
}

static int pick_dir(struct lock_set *s, struct strbuf *err)
{
	const char *env = getenv("RIG_LOCK_DIR");
	if (env && *env) {
		int rc = usable(env, 0755);
		if (rc < 0) {
			sb_addf(err, "cannot use the lock folder %s (RIG_LOCK_DIR): %s", env,
				strerror(-rc));
			return rc;
		}
		s->dir = xstrdup(env);
		return 0;
	}
	if (usable(plat_runtime_dir(), 0755) == 0) {
		s->dir = xstrdup(plat_runtime_dir());
		return 0;
	}
	/* Not root, or a read-only /run: the user's own folder, which nobody
	 * else may have made (a folder in /tmp could be anyone's). */
	struct strbuf u = STRBUF_INIT;
	user_dir(&u);
	int rc = usable(u.buf, 0700);
	struct stat st;
	if (rc == 0 && (lstat(u.buf, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
			(st.st_mode & 022))) {
		sb_addf(err, "cannot use the lock folder %s: it is not a folder of user %lu alone "
			     "(%s cannot be created here); set RIG_LOCK_DIR to a folder of your own",
			u.buf, (unsigned long)geteuid(), plat_runtime_dir());
		sb_release(&u);
		return -EPERM;
	}
	if (rc < 0) {
		sb_addf(err, "cannot use the lock folder %s (%s cannot be created here): %s", u.buf,
			plat_runtime_dir(), strerror(-rc));
		sb_release(&u);
		return rc;
	}
	s->dir = sb_detach(&u);
	s->user_dir = 1;
	return 0;
}

/* --- the holder's record --- */

struct holder {
	struct strbuf run, command, host, started;
	long pid;
	int complete;
};

static void holder_init(struct holder *h)
{
	memset(h, 0, sizeof(*h));
	sb_init(&h->run);
	sb_init(&h->command);
	sb_init(&h->host);
	sb_init(&h->started);
}

static void holder_release(struct holder *h)
{
	sb_release(&h->run);
	sb_release(&h->command);
	sb_release(&h->host);
	sb_release(&h->started);
}

static void record_line(struct strbuf *t, const char *key, const char *value)
{
	sb_addf(t, "%s: ", key);
	for (const char *c = value ? value : ""; *c; c++)
		sb_addch(t, *c == '\n' ? ' ' : *c);
	sb_addch(t, '\n');
}

/* ftruncate, whose failure only leaves text after the record's "end". */
static void cut(int fd, off_t len)
{
	int rc = ftruncate(fd, len);
	(void)rc;
}

static void write_record(const struct lock_set *s, const struct lock_held *l)
{
	struct strbuf t = STRBUF_INIT, host = STRBUF_INIT;
	sysinfo_host(&host);
	sb_adds(&t, "rig target lock\n");
	record_line(&t, "target", l->what);
	record_line(&t, "run", s->run);
	record_line(&t, "command", s->command);
	sb_addf(&t, "pid: %ld\n", (long)getpid());
	record_line(&t, "host", host.buf);
	record_line(&t, "started", s->started);
	sb_adds(&t, "end\n");
	/* A reader between the write and the cut sees a complete record
	 * (it stops at "end"); the cut drops a longer earlier one's tail,
	 * and when it fails that tail is only ignored. */
	if (pwrite(l->fd, t.buf, t.len, 0) == (ssize_t)t.len)
		cut(l->fd, (off_t)t.len);
	sb_release(&t);
	sb_release(&host);
}

static void read_record(int fd, struct holder *h)
{
	char buf[8192];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *line = buf, *next; line && *line && !h->complete; line = next) {
		next = strchr(line, '\n');
		if (!next)
			break; /* a line being written */
		*next++ = '\0';
		char *colon = strstr(line, ": ");
		if (!strcmp(line, "end"))
			h->complete = 1;
		if (!colon)
			continue;
		*colon = '\0';
		const char *v = colon + 2;
		if (!strcmp(line, "run"))
			sb_adds(&h->run, v);
		else if (!strcmp(line, "command"))
			sb_adds(&h->command, v);
		else if (!strcmp(line, "host"))
			sb_adds(&h->host, v);
		else if (!strcmp(line, "started"))
			sb_adds(&h->started, v);
		else if (!strcmp(line, "pid"))
			h->pid = strtol(v, NULL, 10);
	}
}

/* Whether the record's process still lives (on another host: assumed). */
static int holder_alive(const struct holder *h)
{
	struct strbuf host = STRBUF_INIT;
	sysinfo_host(&host);
	int here = !strcmp(host.buf, h->host.buf);
	sb_release(&host);
	if (h->pid <= 0)
		return 0;
	return !here || kill((pid_t)h->pid, 0) == 0 || errno == EPERM;
}

/* "14:10:16 UTC" today, "2026-12-01 14:10:16 UTC" another day. */
static void say_time(const char *iso, struct strbuf *sb)
{
	char today[40];
	timeutil_utc_iso(today, sizeof(today));
	if (strlen(iso) < 19) {
		sb_adds(sb, *iso ? iso : "at an unknown time");
		return;
	}
	if (strncmp(iso, today, 10))
		sb_addf(sb, "%.10s ", iso);
	sb_addf(sb, "%.8s UTC", iso + 11);
}

/* The run folder as the reader would type it: relative below its cwd. */
static void say_folder(const char *run, struct strbuf *sb)
{
	char cwd[4096];
	size_t n = getcwd(cwd, sizeof(cwd)) ? strlen(cwd) : 0;
	if (n > 1 && !strncmp(run, cwd, n) && run[n] == '/' && run[n + 1])
		sb_adds(sb, run + n + 1);
	else
		sb_adds(sb, run);
}

static void say_holder(const struct holder *h, const char *path, struct strbuf *who)
{
	const char *cmd = h->command.len ? h->command.buf : "rig run";
	if (!h->pid) {
		sb_addf(who, "another process (its lock file %s does not say which)", path);
		return;
	}
	if (h->run.len) {
		sb_addf(who, "%s ", cmd);
		say_folder(h->run.buf, who);
	} else {
		sb_addf(who, "a %s that is starting", cmd);
	}
	sb_addf(who, " (pid %ld on %s, started ", h->pid, h->host.len ? h->host.buf : "?");
	say_time(h->started.buf, who);
	sb_addch(who, ')');
}

/* --- taking, probing, releasing --- */

void plat_lock_set_init(struct lock_set *s, const char *command)
{
	memset(s, 0, sizeof(*s));
	s->command = command;
}

/* Is key locked in dir? 1 with the holder in who, else 0. */
static int probe_in(const char *dir, const char *key, struct strbuf *who)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/", dir);
	plat_lock_file_name(key, &path);
	int held = 0;
	int fd = open(path.buf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
			flock(fd, LOCK_UN);
		} else if (errno == EWOULDBLOCK) {
			struct holder h;
			holder_init(&h);
			read_record(fd, &h);
			say_holder(&h, path.buf, who);
			holder_release(&h);
			held = 1;
		}
		close(fd);
	}
	sb_release(&path);
	return held;
}

int plat_lock_probe(const char *key, struct strbuf *who)
{
	const char *env = getenv("RIG_LOCK_DIR");
	if (env && *env)
		return probe_in(env, key, who);
	if (probe_in(plat_runtime_dir(), key, who))
		return 1;
	struct strbuf u = STRBUF_INIT;
	user_dir(&u);
	int held = probe_in(u.buf, key, who);
	sb_release(&u);
	return held;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* flock fd, giving a holder that has not said who it is time to do so.
 * 0, or -EBUSY with the holder in who, or another negative errno. */
static int lock_fd(int fd, const char *path, struct strbuf *who)
{
	for (unsigned waited = 0;; waited += SETTLE_STEP_MS) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		struct holder h;
		holder_init(&h);
		read_record(fd, &h);
		int known = h.complete && h.run.len && holder_alive(&h);
		if (known || waited >= LOCK_SETTLE_MS) {
			say_holder(&h, path, who);
			holder_release(&h);
			return -EBUSY;
		}
		holder_release(&h);
		sleep_ms(SETTLE_STEP_MS);
	}
}

/* Open (or create) key's lock file in s->dir: its descriptor, or a
 * negative errno with the reason in err. */
static int open_file(const struct lock_set *s, const char *key, struct strbuf *path,
		     struct strbuf *err)
{
	sb_addf(path, "%s/", s->dir);
	plat_lock_file_name(key, path);
	int fd = open(path->buf, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		int e = errno;
		sb_addf(err, "cannot open the lock file %s: %s", path->buf, strerror(e));
		return -e;
	}
	/* Readable whatever the umask: `rig devices` of any user names the holder. */
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0777) != 0644)
		(void)fchmod(fd, 0644);
	return fd;
}

int plat_lock_take(struct lock_set *s, const char *key, const char *what, struct strbuf *err)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].key, key))
			return 0;
	int rc = s->dir ? 0 : pick_dir(s, err);
	if (rc < 0)
		return rc;
	if (!s->started) {
		char now[40];
		timeutil_utc_iso(now, sizeof(now));
		s->started = xstrdup(now);
	}
	struct strbuf who = STRBUF_INIT, path = STRBUF_INIT;
	int fd = -1;
	if (s->user_dir && probe_in(plat_runtime_dir(), key, &who))
		rc = -EBUSY;
	else if ((rc = fd = open_file(s, key, &path, err)) >= 0)
		rc = lock_fd(fd, path.buf, &who);
	if (rc == 0) {
		s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
		struct lock_held *l = &s->v[s->n++];
		l->key = xstrdup(key);
		l->what = xstrdup(what);
		l->path = sb_detach(&path);
		l->fd = fd;
		write_record(s, l);
	} else {
		if (rc == -EBUSY)
			sb_addf(err, "%s is in use by %s; wait for it or stop it", what, who.buf);
		else if (fd >= 0)
			sb_addf(err, "cannot lock %s: %s", path.buf, strerror(-rc));
		if (fd >= 0)
			close(fd);
	}
	sb_release(&who);
	sb_release(&path);
	return rc;
}

void plat_lock_set_run(struct lock_set *s, const char *run_dir)
{
	free(s->run);
	s->run = xstrdup(run_dir);
	for (size_t i = 0; i < s->n; i++)
		write_record(s, &s->v[i]);
}

void plat_lock_set_release(struct lock_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		/* Emptied while still held: a record left in the file would name
		 * a run that has ended. */
		cut(s->v[i].fd, 0);
		close(s->v[i].fd);
		free(s->v[i].key);
		free(s->v[i].what);
		free(s->v[i].path);
	}
	free(s->v);
	free(s->run);
	free(s->started);
	free(s->dir);
	plat_lock_set_init(s, s->command);
}
