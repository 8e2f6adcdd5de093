/*
 * Building a tree (mod_tree_build, tree.h): `tree`'s cells and a source
 * folder's tree (source.c). What is built is tree.c's description; how:
 *
 * The previous tree in <dir>/tree is removed and the removal committed
 * (sync) outside the timing, as are planning the tree and making the
 * payload pool; a sync(2) just before the clock starts leaves only this
 * step's writes to the timed sync. Timed: creating the root, every
 * directory (mkdirat; each opened once and files created relative to it
 * with openat), every file (O_CREAT|O_EXCL, one write when it is at most
 * 1 MiB, else 1 MiB writes, close), and a final sync of the volume
 * (mod_tree_sync_volume). Files are not fsynced one by one: archivers (tar -x)
 * and copiers do not, and the enumeration article's copier did not; one
 * final sync is the honest middle between timing the page cache and timing
 * a flush per file. Writes are buffered even under cache.direct (a note
 * says so): direct I/O on small files would measure something no copier
 * does. The per-file path allocates nothing: names go into one buffer.
 *
 * Threads (`threads`, noted as `threads`). Creating a file is mostly the
 * kernel's CPU time (the file system's inode and directory work, the copy
 * into the page cache: a 100,000-file enumeration tree took 4-6 s of
 * system time and 0.2 s of user time to build, perf showing ext4's inode
 * and journal work spread thin), and file systems lock per directory, so
 * files in different leaf directories can be created in parallel on as
 * many CPUs as are free. More threads than CPUs (the default 4) cover the
 * waits inside the file system (journal, allocation). The calling thread
 * first makes the inner directories (levels 1..depth-1, depth first: one
 * in 48 of the enumeration tree's directories); then it and threads-1
 * workers take the leaf directories in runs of consecutive ones (a unit:
 * about UNIT_FILES files; with depth 0 the units are runs of the root's
 * files) from one shared counter, and for each leaf make it and write its
 * files. Where a file goes, its name, size and bytes are functions of the
 * seed and the file's index alone (tree.c), never of which thread took it
 * or when: the tree is the same whatever the thread count and the
 * scheduling (tests/tree_test.c compares a listing with sizes and content
 * hashes built with 1 and with several threads). What may differ is what
 * the file system chooses, in the order it saw the creations: inode
 * numbers and block placement (they differ between file systems anyway).
 * Payload: one thread writes windows of the pool in place (plat_payload_block);
 * with more, each copies its windows into a buffer of its own
 * (plat_payload_copy: about 70 us per MiB, a few percent of writing it), since
 * plat_payload_block stamps the shared pool. Worker threads block signals, so
 * Ctrl-C reaches the calling thread; every thread checks the cancel flag
 * between files. The first error stops the others at their next file and
 * is the one reported.
 * Rejected: io_uring's openat/write/close (the kernel runs those file
 * operations in its own worker threads: the same parallelism, less
 * directly); a thread per leaf directory (108,679 of them); starting each
 * large file's writeback as soon as it is written (sync_file_range), to
 * shorten the final sync: on the shared test machine the timed sync's
 * median was 1.5 s with it and 1.6 s without, within its noise (0.2-3.7 s),
 * so it was not kept; writing files of 1 MiB or more with O_DIRECT (a
 * million-file tree: 48.2 s median of 4 builds against 52.3 s of 2, the
 * builds spreading 41-56 s): the build is bound by the kernel's CPU for
 * the small files, not by writeback (bench/README.md, "A million-file
 * tree: where the time goes").
 */
#include "modules/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "modules/module.h"
#include "modules/run_time.h"
#include "platform/fault.h"
#include "platform/payload.h"
#include "platform/platform.h"
#include "platform/progress.h"

#define UNIT_FILES 64 /* files per unit of work, about: leaves are taken in runs this big */

/* What all threads share. */
struct build {
	struct rig_ctx *ctx;
	const struct tree_state *t;
	struct payload pay;
	int rootfd;
	uint64_t units;           /* runs of leaves (or of the root's files with depth 0) */
	uint64_t per_unit;        /* leaves (or files) per unit */
	atomic_uint_fast64_t next; /* the next unit to take */
	atomic_uint_fast64_t files, bytes; /* written so far, all threads */
	atomic_int stop;          /* an error: the others stop at their next file */
	pthread_mutex_t mu;       /* guards rc and err */
	int rc;                   /* the first error (negative errno) or cancel (1) */
	struct strbuf err;        /* its message */
};

/* One thread's own. */
struct worker {
	struct build *b;
	unsigned char *buf;       /* TREE_BLOCK, for plat_payload_copy; NULL: plat_payload_block */
	int parentfd;             /* the open parent of the current leaves, or -1 */
	uint64_t parent;          /* its index in level depth-1 */
	char name[TREE_NAME_MAX];
	char path[TREE_PATH_MAX]; /* for messages only */
};

/* Keep the first error (or cancel); every thread stops at its next file. */
static int fail(struct build *b, int rc, const struct strbuf *msg)
{
	pthread_mutex_lock(&b->mu);
	if (b->rc == 0) {
		b->rc = rc;
		if (msg)
			sb_adds(&b->err, msg->buf);
	}
	pthread_mutex_unlock(&b->mu);
	atomic_store(&b->stop, 1);
	return rc;
}

static int stopped(struct build *b)
{
	if (*b->ctx->cancel) {
		fail(b, 1, NULL);
		return 1;
	}
	return atomic_load_explicit(&b->stop, memory_order_relaxed);
}

static int dir_error(struct worker *w, unsigned k, uint64_t j, const char *op, int e)
{
	const struct tree_state *t = w->b->t;
	struct strbuf m = STRBUF_INIT;
	mod_tree_dir_path(t, k, j, w->path);
	sb_addf(&m, "cannot %s directory %s/%s: %s", op, t->root, w->path, strerror(e));
	fail(w->b, -e, &m);
	sb_release(&m);
	return -e;
}

static int file_error(struct worker *w, uint64_t i, const char *op, int e)
{
	const struct tree_state *t = w->b->t;
	struct strbuf m = STRBUF_INIT;
	mod_tree_file_path(t, i, w->path, NULL);
	sb_addf(&m, "cannot %s %s/%s: %s", op, t->root, w->path, strerror(e));
	fail(w->b, -e, &m);
	sb_release(&m);
	return -e;
}

/* Leaf `leaf`'s files [first, end) in dfd. 0, or non-zero when stopped. */
static int build_files(struct worker *w, int dfd, uint64_t first, uint64_t end)
{
	struct build *b = w->b;
	const struct tree_state *t = b->t;
	for (uint64_t i = first; i < end; i++) {
		if (stopped(b))
			return 1;
		mod_tree_name(t, 0, i, w->name);
		int fd = openat(dfd, w->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return file_error(w, i, "create", errno);
		uint64_t size = mod_tree_file_size(t, i, 0);
		int rc = mod_tree_write_payload(b->ctx, &b->pay, w->buf, fd, mod_tree_file_stream(i, 0),
					    size);
		if (rc < 0) {
			close(fd);
			return file_error(w, i, "write", -rc);
		}
		if (close(fd) < 0 && rc == 0)
			return file_error(w, i, "close", errno);
		if (rc)
			return fail(b, rc, NULL);
		atomic_fetch_add_explicit(&b->files, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&b->bytes, size, memory_order_relaxed);
	}
	return 0;
}

/* The descriptor of directory p of level depth-1 (the leaves' parents;
 * the root when depth is 1), kept open for the leaves that follow. */
static int parent_fd(struct worker *w, uint64_t p)
{
	const struct tree_state *t = w->b->t;
	if (t->depth == 1)
		return w->b->rootfd;
	if (w->parentfd >= 0 && w->parent == p)
		return w->parentfd;
	if (w->parentfd >= 0)
		close(w->parentfd);
	w->parentfd = -1;
	mod_tree_dir_path(t, t->depth - 1, p, w->path);
	int fd = openat(w->b->rootfd, w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return dir_error(w, t->depth - 1, p, "open", errno);
	w->parentfd = fd;
	w->parent = p;
	return fd;
}

/* Leaf directory `leaf`: make it, open it, write its files. */
static int build_leaf(struct worker *w, uint64_t leaf)
{
	const struct tree_state *t = w->b->t;
	unsigned k = t->depth;
	int pfd = parent_fd(w, leaf * t->level[k - 1] / t->level[k]);
	if (pfd < 0)
		return pfd;
	mod_tree_name(t, k, leaf, w->name);
	if (mkdirat(pfd, w->name, 0755) < 0)
		return dir_error(w, k, leaf, "create", errno);
	int dfd = openat(pfd, w->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return dir_error(w, k, leaf, "open", errno);
	int rc = build_files(w, dfd, mod_tree_leaf_first(t, leaf), mod_tree_leaf_first(t, leaf + 1));
	close(dfd);
	return rc;
}

/* Take units until none is left or the build stops. The calling thread
 * (progress) reports how far all threads got. */
static void work(struct worker *w, int reports)
{
	struct build *b = w->b;
	const struct tree_state *t = b->t;
	uint64_t n = t->depth ? t->level[t->depth] : t->files;
	for (;;) {
		uint64_t u = atomic_fetch_add(&b->next, 1);
		if (u >= b->units || stopped(b))
			break;
		uint64_t first = u * b->per_unit, end = first + b->per_unit;
		if (end > n)
			end = n;
		int rc = 0;
		if (t->depth == 0)
			rc = build_files(w, b->rootfd, first, end);
		for (uint64_t leaf = first; t->depth && leaf < end && rc == 0; leaf++)
			rc = build_leaf(w, leaf);
		if (rc)
			break;
		if (reports)
			plat_progress_work(b->ctx->progress, TREE_PROGRESS, atomic_load(&b->files), t->files,
				      PROGRESS_FILES);
	}
	if (w->parentfd >= 0)
		close(w->parentfd);
	w->parentfd = -1;
}

static void *worker_main(void *arg)
{
	work(arg, 0);
	return NULL;
}

/* The inner directories below directory q of level k (levels k+1 up to
 * depth-1), depth first. Depth is at most 64, so recursion is bounded. */
static int build_inner(struct worker *w, unsigned k, uint64_t q, int fd)
{
	const struct tree_state *t = w->b->t;
	if (k + 1 >= t->depth)
		return 0;
	uint64_t n0 = t->level[k], n1 = t->level[k + 1];
	uint64_t first = (q * n1 + n0 - 1) / n0, end = ((q + 1) * n1 + n0 - 1) / n0;
	for (uint64_t j = first; j < end; j++) {
		if (stopped(w->b))
			return 1;
		mod_tree_name(t, k + 1, j, w->name);
		if (mkdirat(fd, w->name, 0755) < 0)
			return dir_error(w, k + 1, j, "create", errno);
		int dfd = openat(fd, w->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return dir_error(w, k + 1, j, "open", errno);
		int rc = build_inner(w, k + 1, j, dfd);
		close(dfd);
		if (rc)
			return rc;
	}
	return 0;
}

/* The inner directories, then the leaves and files on `threads` threads
 * (the calling one among them). 0, 1 when cancelled, or a negative errno
 * with the reason in b->err. */
static int build_all(struct build *b, unsigned threads)
{
	struct worker *w = xcalloc(threads, sizeof(*w));
	for (unsigned i = 0; i < threads; i++) {
		w[i].b = b;
		w[i].parentfd = -1;
		if (threads > 1 && !(w[i].buf = plat_alloc_io(TREE_BLOCK, 4096))) {
			for (unsigned j = 0; j < i; j++)
				free(w[j].buf);
			free(w);
			sb_adds(&b->err, "cannot allocate the threads' buffers");
			return -ENOMEM;
		}
	}
	build_inner(&w[0], 0, 0, b->rootfd);

	pthread_t *tid = xcalloc(threads, sizeof(*tid));
	unsigned started = 1;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; started < threads && !atomic_load(&b->stop); started++) {
		int e = pthread_create(&tid[started], NULL, worker_main, &w[started]);
		if (e) {
			struct strbuf m = STRBUF_INIT;
			sb_addf(&m, "cannot start tree thread %u of %u: %s", started + 1, threads,
				strerror(e));
			fail(b, -e, &m);
			sb_release(&m);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	work(&w[0], 1);
	for (unsigned i = 1; i < started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	for (unsigned i = 0; i < threads; i++)
		free(w[i].buf);
	free(w);
	return b->rc;
}

/* Remove what an earlier tree left at root and commit the removal, outside
 * the timing. Anything at root is ours: the folder is named for the module. */
int mod_tree_remove(const char *root, struct strbuf *err)
{
	struct stat st;
	if (lstat(root, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		int e = errno;
		sb_addf(err, "cannot examine %s: %s", root, strerror(e));
		return -e;
	}
	char *paths[] = { (char *)root, NULL };
	FTS *f = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR | FTS_NOSTAT, NULL);
	if (!f) {
		int e = errno;
		sb_addf(err, "cannot walk %s to remove the previous tree: %s", root, strerror(e));
		return -e;
	}
	int rc = 0;
	FTSENT *e;
	errno = 0;
	while (rc == 0 && (e = fts_read(f))) {
		switch (e->fts_info) {
		case FTS_D:
			break;
		case FTS_DP:
			if (rmdir(e->fts_accpath) < 0) {
				rc = -errno;
				sb_addf(err, "cannot remove directory %s: %s", e->fts_path, strerror(-rc));
			}
			break;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			rc = -(e->fts_errno ? e->fts_errno : EIO);
			sb_addf(err, "cannot walk %s to remove it: %s", e->fts_path, strerror(-rc));
			break;
		default:
			if (unlink(e->fts_accpath) < 0) {
				rc = -errno;
				sb_addf(err, "cannot remove %s: %s", e->fts_path, strerror(-rc));
			}
			break;
		}
		errno = 0;
	}
	if (rc == 0 && errno) {
		rc = -errno;
		sb_addf(err, "cannot walk %s to remove the previous tree: %s", root, strerror(-rc));
	}
	fts_close(f);
	sync(); /* the removal's commit and discards are not the next tree's cost */
	return rc;
}

static void note_shape(struct rig_ctx *ctx, const struct tree_state *t, unsigned threads)
{
	struct strbuf v = STRBUF_INIT;
	if (t->depth == 0) {
		sb_addf(&v, "%llu files in the root", (unsigned long long)t->files);
	} else {
		sb_adds(&v, "directories per level ");
		for (unsigned k = 1; k <= t->depth; k++)
			sb_addf(&v, "%s%llu", k > 1 ? ", " : "", (unsigned long long)t->level[k]);
		uint64_t leaves = t->level[t->depth];
		sb_addf(&v, "; %llu files in %llu leaf directories (%.1f each)",
			(unsigned long long)t->files, (unsigned long long)leaves,
			(double)t->files / (double)leaves);
	}
	cell_note(ctx, "shape", v.buf);
	sb_reset(&v);
	sb_addf(&v, "%u (leaf directories made and filled in parallel; the tree is the same "
		    "for any number)", threads);
	cell_note(ctx, "threads", v.buf);
	sb_release(&v);
}

/* Units of work: runs of per_unit leaves (or root files), about
 * UNIT_FILES files each, at least one leaf. */
static void plan_units(struct build *b)
{
	const struct tree_state *t = b->t;
	uint64_t n = t->depth ? t->level[t->depth] : t->files;
	uint64_t per = UNIT_FILES;
	if (t->depth && t->files) {
		per = n * UNIT_FILES / t->files; /* leaves holding about UNIT_FILES files */
		if (per == 0)
			per = 1;
	}
	b->per_unit = per;
	b->units = (n + per - 1) / per;
}

int mod_tree_build(struct rig_ctx *ctx, const struct tree_args *args, const char *root,
	       struct tree_state **out, struct tree_built *res)
{
	*out = NULL;
	memset(res, 0, sizeof(*res));
	int rc = mod_tree_remove(root, ctx->err); /* untimed */
	if (rc < 0)
		return rc;
	const char *why = NULL;
	struct tree_state *t = mod_tree_state_new(args, ctx->seed, root, &why);
	if (!t) {
		sb_addf(ctx->err, "cannot plan the tree: %s", why);
		return -EINVAL;
	}
	unsigned threads = args->threads ? (unsigned)args->threads : 1;
	struct build *b = xcalloc(1, sizeof(*b));
	b->ctx = ctx;
	b->t = t;
	b->rootfd = -1;
	sb_init(&b->err);
	pthread_mutex_init(&b->mu, NULL);
	plan_units(b);
	rc = plat_payload_init(&b->pay, t->payload_seed, TREE_BLOCK);
	if (rc < 0) {
		sb_addf(ctx->err, "cannot allocate the payload pool: %s", strerror(-rc));
		goto out;
	}
	note_shape(ctx, t, threads);
	if (ctx->direct)
		cell_note(ctx, "direct", "not used by tree: files are written buffered, as archivers and "
				    "copiers do, and one sync of the volume inside the timing makes "
				    "them durable");

	sync(); /* earlier steps' dirty data is not this step's to flush */
	uint64_t t0 = mod_run_time_mark(ctx->time, RT_MEASURED);
	plat_progress_work(ctx->progress, TREE_PROGRESS, 0, t->files, PROGRESS_FILES);
	if (mkdir(t->root, 0755) < 0) {
		rc = -errno;
		sb_addf(ctx->err, "cannot create directory %s: %s", t->root, strerror(-rc));
	} else if ((b->rootfd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = -errno;
		sb_addf(ctx->err, "cannot open directory %s: %s", t->root, strerror(-rc));
	} else {
		rc = build_all(b, threads);
		if (rc < 0)
			sb_adds(ctx->err, b->err.buf);
		if (rc == 0)
			mod_tree_sync_volume(b->rootfd);
	}
	res->ns = mod_run_time_mark(ctx->time, RT_SETUP) - t0;
	if (b->rootfd >= 0)
		close(b->rootfd);
	plat_payload_release(&b->pay);

	res->files = atomic_load(&b->files);
	res->bytes = atomic_load(&b->bytes);
	if (rc == 0 && (res->bytes != t->bytes || res->files != t->files)) { /* a bug */
		sb_addf(ctx->err, "tree in %s: wrote %llu files, %llu bytes; planned %llu, %llu",
			t->root, (unsigned long long)res->files, (unsigned long long)res->bytes,
			(unsigned long long)t->files, (unsigned long long)t->bytes);
		rc = -EIO;
	}
out:
	pthread_mutex_destroy(&b->mu);
	sb_release(&b->err);
	free(b);
	if (rc == 0)
		*out = t;
	else
		mod_tree_state_free(t);
	return rc;
}
