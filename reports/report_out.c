/* Crash-safe derived files; see report_out.h. */
#include "reports/report_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/xalloc.h"

int rep_rout_open(struct rout *o, const char *path, struct strbuf *err)
{
	/* Atomic: rig report's writers open files from two threads. */
	static atomic_uint counter;
	memset(o, 0, sizeof(*o));
	o->path = path;
	sb_init(&o->tmp);
	sb_init(&o->buf);
	for (int tries = 0; tries < 100; tries++) {
		sb_reset(&o->tmp);
		sb_addf(&o->tmp, "%s.tmp-%ld-%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
		int fd = open(o->tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		o->f = fdopen(fd, "w");
		if (o->f)
			return 0;
		close(fd);
		unlink(o->tmp.buf);
		break;
	}
	int e = errno ? errno : EIO;
	sb_addf(err, "cannot write %s: %s", path, strerror(e));
	sb_release(&o->tmp);
	sb_release(&o->buf);
	return -e;
}

static void write_buf(struct rout *o)
{
	if (o->buf.len && !o->err && fwrite(o->buf.buf, 1, o->buf.len, o->f) != o->buf.len)
		o->err = errno ? errno : EIO;
	sb_reset(&o->buf);
}

void rep_rout_flush_some(struct rout *o)
{
	if (o->buf.len >= (1u << 20))
		write_buf(o);
}

static void release(struct rout *o)
{
	sb_release(&o->tmp);
	sb_release(&o->buf);
	o->f = NULL;
}

int rep_rout_commit(struct rout *o, struct strbuf *err)
{
	write_buf(o);
	if (!o->err && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0))
		o->err = errno ? errno : EIO;
	if (fclose(o->f) != 0 && !o->err)
		o->err = errno ? errno : EIO;
	if (!o->err && rename(o->tmp.buf, o->path) != 0)
		o->err = errno ? errno : EIO;
	int e = o->err;
	if (e) {
		sb_addf(err, "cannot write %s: %s", o->path, strerror(e));
		unlink(o->tmp.buf);
	}
	release(o);
	return -e;
}

int rep_rout_write_file(const char *path, const void *data, size_t len, struct strbuf *err)
{
	struct rout o;
	int rc = rep_rout_open(&o, path, err);
	if (rc < 0)
		return rc;
	sb_add(&o.buf, data, len);
	return rep_rout_commit(&o, err);
}
