/*
 * Resuming a run (rig resume): where it starts again, decided from the
 * schedule (a pure function of the plan and the seed, rebuilt exactly) and
 * the cells' statuses in the store; and what the store recorded about the
 * run. The runner (run_continue) does the rest.
 *
 * The rule (docs/architecture.md, Decisions):
 *   - the run stopped at the first cell, in schedule order, that is not
 *     `done` (the unfinished cell); every cell before it is done, because a
 *     run stops at its first unfinished cell;
 *   - its provisioning block is the cells from the last fresh provisioning
 *     before it (a layout's first cell; with `reprovision: repeat` also a
 *     repetition's) up to the next one;
 *   - per-volume module state (the files `read` reads, the tree `enumerate`
 *     lists, churn's generations, fill's files) lives in the memory of the
 *     process that died. If a cell from the unfinished one on uses a state
 *     slot (its module's, or the one of the module it needs) on a volume
 *     where a finished cell of the block filled it, that state cannot be
 *     trusted again, and the block starts over on a fresh provisioning;
 *   - likewise when the unfinished cell was started (it may have left
 *     files behind: half a tree, meta's directory; unless its module never
 *     touches the volume: MOD_DISKLESS), when it is the block's first cell,
 *     or when the provisioning is not exactly what was recorded;
 *   - otherwise the resumed run keeps the provisioning and starts at the
 *     unfinished cell.
 * Cells run again keep their earlier samples in the store, marked
 * superseded (never counted).
 */
#ifndef RIG_RESUME_H
#define RIG_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "modules/module.h"
#include "plan/plan.h"
#include "plan/schedule.h"

struct strbuf;
struct store;
struct volume;

/* The per-volume state slot a module uses: its own, or that of the module
 * it needs (read uses write's). An index into mod_all. */
size_t run_resume_state_slot(const struct rig_module *m);

enum cell_state { CELL_NEW = 0, CELL_DONE, CELL_STARTED };

struct run_resume_point {
	size_t unfinished;   /* index of the first cell not done; n: every cell is done */
	size_t block;        /* index of the first cell of its provisioning block */
	size_t end;          /* index after the block's last cell */
	int started;         /* the unfinished cell has a row (it ran, at least partly) */
	int depends;         /* a later cell of the block needs state an earlier one left */
	size_t producer, consumer; /* the first such pair (indexes), when depends */
};

/* state[seq] for seq 1..s->n. */
void run_resume_point(const struct plan *p, const struct schedule *s, const enum cell_state *state,
		  struct run_resume_point *rp);
/* Whether the resumed run may keep the provisioning (before verifying it);
 * if not, why in *why. */
int run_resume_may_keep(const struct schedule *s, const struct run_resume_point *rp, struct strbuf *why);

/* Whether RUN/results.db is missing or empty of a run: the run was killed
 * before it recorded anything (nothing was provisioned or measured). */
int run_resume_never_recorded(const char *db_path);

/* What the store recorded about the run. Strings owned (run_resume_info_release). */
struct resume_info {
	char *id, *status, *plan_file, *plan_text, *plan_sha256, *rig_version, *options_json;
	uint64_t seed;
	int seed_drawn;
	size_t nresumes;
};
int run_resume_read_run(struct store *st, struct resume_info *ri, struct strbuf *err);
void run_resume_info_release(struct resume_info *ri);


/*
 * Check the store's cells against the schedule (the same step, module,
 * layout, repetition, phase and volume at every seq) and fill state[1..n].
 * -EINVAL with the difference in err when they do not match.
 */
int run_resume_read_cells(struct store *st, const struct plan *p, const struct schedule *s,
		      enum cell_state *state, struct strbuf *err);

/*
 * The volumes last recorded for layout li (volume names in position
 * order), with their store ids; 0 when none or not all were recorded.
 * The caller releases each volume and frees both arrays.
 */
size_t run_resume_read_volumes(struct store *st, const struct plan *p, size_t li,
			   struct volume **vols, int64_t **ids);

#endif
