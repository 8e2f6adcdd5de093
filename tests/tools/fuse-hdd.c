/*
 * fuse-hdd: a synthetic rotating disk for tests. Real hard disks are not
 * available on the machines rig is tested on, so this FUSE program exposes
 * one file, MOUNTPOINT/disk, whose throughput depends on the offset the way
 * a hard disk's does: linear from an outer rate at offset 0 to an inner
 * rate at the end (zoned recording, outer tracks faster), one request at a
 * time, plus an optional fixed cost for every request that does not start
 * within a MiB of where the previous one ended (a seek). `losetup` over the file gives a
 * block device with a known profile, which rig must recover.
 *
 *   fuse-hdd --backing=FILE --size=SIZE [--outer=MB/s] [--inner=MB/s]
 *            [--seek-ms=MS] [--wear=MS] MOUNTPOINT [-f] [-o opts]
 *
 * --wear=MS makes a disk that slows as it is rewritten: every MiB written
 * adds MS milliseconds to every later request. It stands for what churn
 * does to a fragmenting file system on a real disk (more, and longer,
 * seeks for the same work), moved into the device so that a test knows
 * the rate at which a volume ages.
 *
 * SIZE takes K, M, G suffixes (powers of two); rates are MB/s (10^6 bytes
 * per second). The data lives in FILE (made sparse, SIZE bytes); reads and
 * writes go there first and then wait until the modelled completion time.
 *
 * The model is a virtual clock, not a sleep per request: the device is busy
 * until `busy_until`; a request starts at max(now, busy_until) and takes
 * bytes / rate(offset of its middle) (+ the seek cost), and its reply waits
 * until that moment. Requests that arrive while the device is busy queue
 * behind it (the FUSE loop is multi-threaded, so the kernel can have
 * several in flight, as the loop driver's direct I/O does), and a late
 * wake-up does not accumulate: the next request is timed from the clock,
 * not from when the previous sleep ended. A request arriving less than
 * 10 ms after the device fell idle starts where the previous one ended:
 * such gaps are the host's (the FUSE round trip, the loop worker, thread
 * wake-ups: 0.3 to 2 ms each here, measured), and a real disk's cache and
 * read-ahead hide gaps shorter than a rotation too. Rejected:
 * nanosleep(bytes/rate) per request (measured 6% low on 1 MiB transfers,
 * 14% on 128 KiB), and charging the host's gaps (5% low).
 *
 * Files opened are direct_io (no page cache in FUSE), so every byte the
 * loop device moves is timed here. Large requests (1 MiB) keep the per-
 * request overhead of FUSE small against the modelled time.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct hdd {
	const char *backing;
	uint64_t size;
	double outer, inner; /* bytes per second */
	uint64_t seek_ns;
	double wear_ns_per_byte; /* --wear: added to the seek cost per byte written */
	double worn_ns;          /* the seek cost added so far */
	int fd;
	pthread_mutex_t mu;
	uint64_t busy_until; /* CLOCK_MONOTONIC ns */
	uint64_t last_end;
};

/* Gaps between requests shorter than this are the host's, not idle time. */
#define GRACE_NS 10000000u
/* Requests starting this close to where the last one ended need no seek. */
#define SEEK_FREE (1u << 20)

static struct hdd hdd = { .outer = 100e6, .inner = 50e6, .fd = -1,
			  .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double rate_at(double offset)
{
	return hdd.outer + (hdd.inner - hdd.outer) * offset / (double)hdd.size;
}

/* Account for one request on the virtual clock; wait until it is done. */
static void model_wait(uint64_t off, size_t len, int write)
{
	pthread_mutex_lock(&hdd.mu);
	uint64_t now = now_ns();
	/* A request that follows the previous one closely starts where it
	 * ended: the host's own latency (FUSE round trip, thread wake-up) is
	 * not the disk's, and would bias every streaming rate low. */
	uint64_t start = now < hdd.busy_until + GRACE_NS ? hdd.busy_until : now;
	double cost = (double)len / rate_at((double)off + (double)len / 2) * 1e9;
	/* Within a MiB of where the last request ended is no seek: the pieces
	 * of one large transfer arrive in parallel and slightly out of order. */
	uint64_t dist = off > hdd.last_end ? off - hdd.last_end : hdd.last_end - off;
	if (hdd.seek_ns && dist > SEEK_FREE)
		cost += (double)hdd.seek_ns;
	cost += hdd.worn_ns;
	if (write)
		hdd.worn_ns += hdd.wear_ns_per_byte * (double)len;
	hdd.busy_until = start + (uint64_t)cost;
	hdd.last_end = off + len;
	uint64_t until = hdd.busy_until;
	pthread_mutex_unlock(&hdd.mu);
	struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int hdd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (!strcmp(path, "/disk")) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)hdd.size;
		st->st_blocks = (blkcnt_t)(hdd.size / 512);
		return 0;
	}
	return -ENOENT;
}

static int hdd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "disk", NULL, 0, 0);
	return 0;
}

static int hdd_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/disk"))
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static int hdd_read(const char *path, char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	if (off < 0 || (uint64_t)off >= hdd.size)
		return 0;
	if ((uint64_t)off + size > hdd.size)
		size = (size_t)(hdd.size - (uint64_t)off);
	size_t done = 0;
	while (done < size) {
		ssize_t n = pread(hdd.fd, buf + done, size - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			memset(buf + done, 0, size - done); /* sparse end of the backing file */
			break;
		}
		done += (size_t)n;
	}
	model_wait((uint64_t)off, size, 0);
	return (int)size;
}

static int hdd_write(const char *path, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	if (off < 0 || (uint64_t)off >= hdd.size)
		return -ENOSPC;
	if ((uint64_t)off + size > hdd.size)
		size = (size_t)(hdd.size - (uint64_t)off);
	size_t done = 0;
	while (done < size) {
		ssize_t n = pwrite(hdd.fd, buf + done, size - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	model_wait((uint64_t)off, size, 1);
	return (int)size;
}

static int hdd_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/disk"))
		return -ENOENT;
	return (uint64_t)size == hdd.size ? 0 : -EPERM;
}

/* The data is in the backing file, which is not synced: a test disk need
 * not survive a crash of its host, and syncing would add host time. */
static int hdd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return 0;
}

static void *hdd_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->max_write = 1u << 20;
	conn->max_readahead = 0;
	conn->want |= conn->capable & FUSE_CAP_ASYNC_DIO;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	return NULL;
}

static const struct fuse_operations hdd_ops = {
	.getattr = hdd_getattr,
	.readdir = hdd_readdir,
	.open = hdd_open,
	.read = hdd_read,
	.write = hdd_write,
	.truncate = hdd_truncate,
	.fsync = hdd_fsync,
	.init = hdd_init,
};

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	unsigned shift = 0;
	if (*end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	else if (*end)
		return -1;
	if (shift && end[1])
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_rate(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v > 0))
		return -1;
	*out = v * 1e6;
	return 0;
}

enum { KEY_BACKING, KEY_SIZE, KEY_OUTER, KEY_INNER, KEY_SEEK, KEY_WEAR, KEY_HELP };

static const struct fuse_opt hdd_opts[] = {
	FUSE_OPT_KEY("--backing=", KEY_BACKING),
	FUSE_OPT_KEY("--size=", KEY_SIZE),
	FUSE_OPT_KEY("--outer=", KEY_OUTER),
	FUSE_OPT_KEY("--inner=", KEY_INNER),
	FUSE_OPT_KEY("--seek-ms=", KEY_SEEK),
	FUSE_OPT_KEY("--wear=", KEY_WEAR),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)data;
	(void)outargs;
	const char *v = strchr(arg, '=');
	v = v ? v + 1 : "";
	double ms;
	char *end;
	switch (key) {
	case KEY_BACKING: hdd.backing = v; return 0;
	case KEY_SIZE:
		if (parse_size(v, &hdd.size) < 0 || hdd.size < 1u << 20) {
			fprintf(stderr, "fuse-hdd: --size needs at least 1M, not '%s'\n", v);
			exit(2);
		}
		return 0;
	case KEY_OUTER:
	case KEY_INNER:
		if (parse_rate(v, key == KEY_OUTER ? &hdd.outer : &hdd.inner) < 0) {
			fprintf(stderr, "fuse-hdd: a rate is a positive number of MB/s, not '%s'\n", v);
			exit(2);
		}
		return 0;
	case KEY_SEEK:
		ms = strtod(v, &end);
		if (end == v || *end || ms < 0) {
			fprintf(stderr, "fuse-hdd: --seek-ms takes milliseconds, not '%s'\n", v);
			exit(2);
		}
		hdd.seek_ns = (uint64_t)(ms * 1e6);
		return 0;
	case KEY_WEAR:
		ms = strtod(v, &end);
		if (end == v || *end || ms < 0) {
			fprintf(stderr, "fuse-hdd: --wear takes milliseconds per MiB written, not '%s'\n", v);
			exit(2);
		}
		hdd.wear_ns_per_byte = ms * 1e6 / (1 << 20);
		return 0;
	case KEY_HELP:
		fprintf(stderr, "usage: fuse-hdd --backing=FILE --size=SIZE [--outer=MB/s] "
				"[--inner=MB/s] [--seek-ms=MS] [--wear=MS] MOUNTPOINT [-f] [-o opts]\n");
		exit(0);
	default:
		return 1; /* FUSE's own options and the mount point */
	}
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	if (fuse_opt_parse(&args, NULL, hdd_opts, opt_proc) < 0)
		return 2;
	if (!hdd.backing || !hdd.size) {
		fprintf(stderr, "fuse-hdd: --backing=FILE and --size=SIZE are required\n");
		return 2;
	}
	hdd.fd = open(hdd.backing, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (hdd.fd < 0 || ftruncate(hdd.fd, (off_t)hdd.size) < 0) {
		fprintf(stderr, "fuse-hdd: cannot use %s: %s\n", hdd.backing, strerror(errno));
		return 1;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* wake-ups on time; threads inherit it */
	int rc = fuse_main(args.argc, args.argv, &hdd_ops, NULL);
	fuse_opt_free_args(&args);
	close(hdd.fd);
	return rc;
}
