/*
 * Fault injection, a testing facility: make an external command fail, a
 * module's read, write or fsync fail with a chosen errno, or a signal
 * arrive, at a chosen occurrence, so that every error path of provisioning
 * and measuring can be driven on purpose and checked (tests/fault_test.c).
 *
 * Rules come from the environment variable RIG_FAULT, read once by
 * plat_fault_init() when rig starts; several rules are separated by commas:
 *
 *   spawn:NAME:N[:exit=S]       the Nth command NAME is not run; it "exits"
 *                               with status S (default 1) and prints
 *                               "NAME: failure injected by RIG_FAULT (RULE)"
 *   io:OP:N:ERRNO               the Nth OP (write, read, fsync) of the
 *                               measurement modules fails with ERRNO
 *                               (ENOSPC, EIO, EDQUOT, EROFS, EFBIG) and is
 *                               not done
 *   signal:SIG:before-spawn:NAME:N   SIG (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 *   signal:SIG:after-spawn:NAME:N    SIGKILL, SIGUSR1, SIGUSR2) is sent to rig
 *   signal:SIG:io:OP:N               just before / after the Nth command NAME,
 *   signal:SIG:at:POINT:N            before the Nth OP, or at the Nth time the
 *                                    runner passes POINT: "started" (rig run:
 *                                    the run row is written; rig resume: the
 *                                    log is reopened; the target is not yet
 *                                    prepared) or "ended" (the run's end is
 *                                    recorded, the reports not yet written)
 *
 * NAME is a command's first words: "mkfs.ext4", "losetup --detach",
 * "diskutil partitionDisk" (argv[0] compared by its last path component).
 * N counts from 1, the process's whole life, per rule; "N+" is the Nth and
 * every later one, "*" every one. The rules are asked by plat_spawner_fault
 * (spawn.h), which rig puts in front of its real spawner; commands of a
 * dry run (`rig plan`) are neither counted nor faked.
 *
 * Harmless in normal runs: without RIG_FAULT no rule exists, the spawner
 * asks one function that returns at once, and each module I/O call pays one
 * load of plat_fault_io_armed. A run with rules warns and records them (the
 * store's run note fault_injection), so its numbers are never mistaken for
 * measurements of the machine.
 */
#ifndef RIG_FAULT_H
#define RIG_FAULT_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

struct strbuf;

enum fault_op { FAULT_WRITE, FAULT_READ, FAULT_FSYNC };

/* Non-zero when some rule concerns module I/O (so the hooks below cost a
 * load and a branch when there is none). */
extern volatile int plat_fault_io_armed;

/* Read RIG_FAULT (once; later calls return the first answer). 0 when it is
 * unset, empty or valid; -EINVAL with the reason in err. */
int plat_fault_init(struct strbuf *err);
/* Replace the rules by spec (NULL or "": none) and reset every count. For
 * tests; 0 or -EINVAL with the reason in err (the rules are then none). */
int plat_fault_set(const char *spec, struct strbuf *err);
/* The rules in force as given, or NULL when there are none. */
const char *plat_fault_spec(void);

/*
 * plat_spawner_fault asks before handing argv on. Sends the signals of
 * before-spawn rules. Returns 1 when the command must not run: *status is
 * its fake exit status and output has its fake output; else 0.
 */
int plat_fault_spawn_before(const char *const *argv, int *status, struct strbuf *output);
/* After the command (real or faked) was logged: the signals of after-spawn
 * rules. */
void plat_fault_spawn_after(const char *const *argv);

/* The runner at one of its named points ("started", "ended"): sends the
 * signals of the rules at it. */
void plat_fault_point(const char *point);

/* Module I/O: sends the signals of io rules for op, then returns 0, or the
 * positive errno the operation must fail with (it is then not done). */
int plat_fault_io(enum fault_op op);

/* The modules' I/O calls, with the fault hook in front. */
static inline ssize_t fault_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	int e;
	if (plat_fault_io_armed && (e = plat_fault_io(FAULT_WRITE))) {
		errno = e;
		return -1;
	}
	return pwrite(fd, buf, len, off);
}

static inline ssize_t fault_write(int fd, const void *buf, size_t len)
{
	int e;
	if (plat_fault_io_armed && (e = plat_fault_io(FAULT_WRITE))) {
		errno = e;
		return -1;
	}
	return write(fd, buf, len);
}

static inline ssize_t fault_pread(int fd, void *buf, size_t len, off_t off)
{
	int e;
	if (plat_fault_io_armed && (e = plat_fault_io(FAULT_READ))) {
		errno = e;
		return -1;
	}
	return pread(fd, buf, len, off);
}

static inline ssize_t fault_read(int fd, void *buf, size_t len)
{
	int e;
	if (plat_fault_io_armed && (e = plat_fault_io(FAULT_READ))) {
		errno = e;
		return -1;
	}
	return read(fd, buf, len);
}

/* For a completed asynchronous request (io_uring): its result, or -errno
 * when a rule says this one fails. */
static inline int fault_io_result(enum fault_op op, int res)
{
	int e;
	if (plat_fault_io_armed && (e = plat_fault_io(op)))
		return -e;
	return res;
}

/* plat_full_sync with the hook: 0 or a negative errno. */
int plat_fault_full_sync(int fd);

#endif
