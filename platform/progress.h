/*
 * The progress of a run, for the person (or the program) watching it. One
 * small interface that the runner, the provisioning and the modules call
 * without knowing where it goes:
 *
 *   human, on a terminal   one line rewritten in place (carriage return,
 *                          clear to end of line):
 *       [12/30] 0:42 elapsed, ETA 1:05 | rep 2 step 3 write on a | rate 512 MB/s | filler 1.2G of 4G, 850 MB/s
 *   human, not a terminal  plain lines: one per cell, sub-progress at most
 *                          every PROGRESS_PLAIN_EVERY_S seconds
 *   JSON (--json-progress) one JSON object per event and line
 *                          (docs/progress.md lists the events)
 *   off (-q)               nothing; every call is cheap
 *
 * Sub-progress (bytes of filler, files of a tree, the command running) may
 * be reported as often as a caller likes: it is drawn at most
 * PROGRESS_HZ times a second, so a module calls it from its inner loop
 * without counting. Every function accepts p == NULL (a module run by a
 * test without a runner).
 *
 * Before any other output to the same stream, plat_progress_end() clears the
 * line (on a terminal), so a warning never starts in the middle of a
 * half-drawn line. Rejected: a thread or timer redrawing the elapsed time
 * (signals in the middle of I/O being measured); the line moves when the
 * run does.
 */
#ifndef RIG_PROGRESS_H
#define RIG_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include "lib/strbuf.h"

/* Redraws per second at most, on a terminal and in JSON. */
#define PROGRESS_HZ 4
/* Seconds between sub-progress lines when not on a terminal. */
#define PROGRESS_PLAIN_EVERY_S 10

enum progress_mode { PROGRESS_OFF, PROGRESS_HUMAN, PROGRESS_JSON };

/* What a sub-progress counts: how done and total are printed. */
enum progress_unit { PROGRESS_BYTES, PROGRESS_FILES, PROGRESS_NS };

struct progress {
	FILE *out;
	enum progress_mode mode;
	int tty;
	int active;              /* a line is on screen, not yet ended */
	uint64_t t0;             /* when the run started (ns, plat_clock_ns) */
	uint64_t last_draw;      /* when the line or a sub-progress event was last written */
	uint64_t sub_t0;         /* when the current sub-progress started */
	uint32_t cell, total;    /* the cell running (1-based) of total; 0: none yet */
	double eta_s;            /* seconds left; negative: not known yet */
	struct strbuf head;      /* what runs: "rep 2 step 3 write on a", "provisioning layout X" */
	struct strbuf cell_name; /* the running cell's module and volume: "read on b" */
	struct strbuf last;      /* the last headline value, named after its cell:
	                          * "last: read on b 2,452 MB/s" */
	struct strbuf sub;       /* sub-progress: "filler 1.2G of 4G, 850 MB/s" */
	struct strbuf line;      /* scratch */
};

/* out NULL or mode PROGRESS_OFF: nothing is written. The clock starts. */
void plat_progress_init(struct progress *p, FILE *out, enum progress_mode mode);
void plat_progress_release(struct progress *p);

/* The runner, as a run starts: the plan's name, its cells, the run folder. */
void plat_progress_start(struct progress *p, const char *plan, uint32_t cells, const char *run_dir);
/* A cell starts: drawn at once. eta_s < 0: not known yet. The fields
 * name it for the line and for JSON (layout "" for dirs). */
struct plat_progress_cell {
	uint32_t seq, total, rep;
	const char *layout, *step, *module, *volume;
	double eta_s;
};
void plat_progress_cell(struct progress *p, const struct plat_progress_cell *c);
/* A headline value was measured (the line keeps the last one). */
void plat_progress_value(struct progress *p, const char *metric, double value, const char *unit);
/* Setup work between cells ("provisioning layout X"): drawn at once. */
void plat_progress_phase(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sub-progress, rate-limited: what ("filler", "tree"), done of total
 * (total 0: unknown) in unit; the rate is computed from the first call
 * of the same work (done == 0 starts it anew). */
void plat_progress_work(struct progress *p, const char *what, uint64_t done, uint64_t total,
		   enum progress_unit unit);
/* Sub-progress: a command is running for this long (spawn.h's watch). */
void plat_progress_command(struct progress *p, const char *argv_text, double seconds);

/* End the current line (on a terminal: cleared), so other output can
 * follow on the same stream. The next update draws it again. */
void plat_progress_end(struct progress *p);
/* A message that would otherwise be printed as "rig: LEVEL: TEXT": in
 * JSON mode it becomes an event (1 returned); otherwise the line is ended
 * and 0 returned (the caller prints it). */
int plat_progress_message(struct progress *p, const char *level, const char *text);
/* The run ended with status ("completed", "failed", "interrupted"). */
void plat_progress_finish(struct progress *p, const char *status);

/* "0.4s", "42s", "1:05", "2:03:04": for the line and for tests. */
void plat_progress_format_seconds(struct strbuf *sb, double s);

#endif
