/*
 * The results store: one SQLite database per run folder (results.db), WAL
 * mode, schema documented in docs/results-store.md with a version number
 * (PRAGMA user_version). Every sample is committed as it is measured, so an
 * interrupted run loses nothing it measured. Reports read only the store.
 *
 * All functions return 0 or a negative errno-style code (-EIO for SQLite
 * errors) with the reason in err (may be NULL).
 */
#ifndef RIG_STORE_H
#define RIG_STORE_H

#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION 5

struct strbuf;
struct store;
struct sqlite3;

struct store_run {
	const char *id;            /* run folder name */
	const char *plan_name;
	const char *plan_file;
	const char *plan_text;
	const char *plan_sha256;   /* hex */
	uint64_t seed;
	int seed_drawn;            /* 1: drawn at run time, not from the plan */
	const char *rig_version;
	const char *host;
	const char *os;            /* "Linux 6.1.0 x86_64" */
	const char *started_utc;   /* ISO 8601 */
	const char *platform;      /* linux / macos */
	const char *argv;          /* the command line, for provenance */
	const char *options_json;  /* how the plan was parsed and run (resume); may be NULL */
};

struct store_volume {
	int64_t id;                /* set by store_add_volume */
	const char *layout;        /* "" for dirs */
	uint32_t layout_index;
	const char *name;
	const char *fs;
	uint32_t position;         /* 1-based */
	int has_offsets;
	uint64_t offset_start, offset_end;
	const char *device;        /* may be NULL */
	const char *dir;           /* mount point / directory */
	const char *facts_json;    /* device facts as a JSON object, may be NULL */
};

struct store_cell {
	uint32_t seq;
	uint32_t phase;
	const char *layout;
	uint32_t rep;
	const char *step;          /* path */
	const char *module;
	int64_t volume_id;
	uint32_t cycle;            /* 0 = none */
	const char *sweep_var;     /* NULL = none */
	const char *sweep_value;
};

/* Create a new store; fails (NULL) if path exists. A failed create leaves
 * no file behind. */
struct store *store_create(const char *path, struct strbuf *err);
/* Open an existing store of this schema version, read-only (reports) or
 * read-write (to append, e.g. a resumed run). An older store is migrated
 * to this version in the file when opened read-write, and seen as this
 * version through temporary views and empty tables when read-only (the
 * file is not changed). NULL
 * with the reason in err if the file is missing, not a rig store, or of
 * another schema version. */
struct store *store_open(const char *path, int readonly, struct strbuf *err);
void store_close(struct store *s);

int store_begin_run(struct store *s, const struct store_run *r, struct strbuf *err);
/* status: "running", "completed", "failed", "interrupted" */
int store_end_run(struct store *s, const char *ended_utc, const char *status,
		  const char *error, struct strbuf *err);
int store_add_volume(struct store *s, struct store_volume *v, struct strbuf *err);
/* Insert the cell as started; status "running". */
int store_cell_start(struct store *s, const struct store_cell *c,
		     const char *start_utc, struct strbuf *err);
/*
 * Start a cell again that has a row already (a resumed run): in one
 * transaction its samples, file samples and notes so far are marked
 * superseded (kept, never counted) and the row describes the new attempt
 * (status "running", attempts + 1). *superseded: samples marked.
 */
int store_cell_restart(struct store *s, const struct store_cell *c, const char *start_utc,
		       uint64_t *superseded, struct strbuf *err);
/* status: "done", "failed", "interrupted"; error may be NULL */
int store_cell_end(struct store *s, uint32_t seq, const char *end_utc,
		   const char *status, const char *error, struct strbuf *err);
/* A NaN value is stored as NULL (SQLite has no NaN); unit and cache NULL = "". */
int store_add_sample(struct store *s, uint32_t seq, const char *metric,
		     double value, const char *unit, const char *cache,
		     struct strbuf *err);
int store_add_file_sample(struct store *s, uint32_t seq, const char *file,
			  uint64_t bytes, double seconds, struct strbuf *err);
/* The same with where the file's data sits on the whole disk: at[0] and
 * at[1], the lowest and highest byte offset it occupies (NULL: unknown,
 * stored as NULL). */
int store_add_file_sample_at(struct store *s, uint32_t seq, const char *file, uint64_t bytes,
			     double seconds, const uint64_t *at, struct strbuf *err);
/* seq 0: a note about the whole run rather than one cell. */
int store_add_note(struct store *s, uint32_t seq, const char *key,
		   const char *value, struct strbuf *err);
/* An external command: argv joined for display, exit status, output. */
int store_add_command(struct store *s, const char *start_utc, const char *argv_text,
		      int status, double seconds, const char *output, struct strbuf *err);
/* A run-level event: warnings at start, provisioning steps, errors. */
int store_add_event(struct store *s, const char *utc, const char *level,
		    const char *msg, struct strbuf *err);

struct store_resume {
	int64_t id;                /* set by store_resume_begin */
	const char *started_utc;
	const char *argv;
	const char *rig_version;
	uint32_t first_unfinished; /* seq of the first cell not done */
	uint32_t from_seq;         /* seq of the first cell this resume runs */
	int reprovisioned;         /* 1: the layout was provisioned afresh */
	const char *why;           /* why it starts where it does */
};
/* A resume starts: the run is `running` again, a resumes row is added. */
int store_resume_begin(struct store *s, struct store_resume *r, struct strbuf *err);
int store_resume_end(struct store *s, int64_t id, const char *ended_utc, const char *status,
		     struct strbuf *err);

/*
 * The provisioning journal (docs/results-store.md, table journal): an
 * action on object ("attach" the image, "format" a partition, ...) is
 * recorded as begun before it runs, then ended (ok: done, else failed).
 */
struct store_journal {
	const char *action;
	const char *object;
	const char *argv;      /* the command as one shell-quoted line; NULL: rig's own act */
	const char *identity;  /* what the target was seen to be right before; may be NULL */
	const char *started_utc;
};
int store_journal_begin(struct store *s, const struct store_journal *j, int64_t *id,
			struct strbuf *err);
int store_journal_end(struct store *s, int64_t id, int ok, const char *ended_utc,
		      struct strbuf *err);
/* The newest row about object whose action matches the GLOB pattern
 * actions ("*-image"): 1 with its action and state (caller frees both), 0
 * when there is none, or -EIO with the reason in err. */
int store_journal_last(struct store *s, const char *object, const char *actions,
		       char **action, char **state, struct strbuf *err);

/*
 * The time accounting (docs/results-store.md, table time_spent): the
 * seconds of each category (modules/run_time.h names) spent in one scope,
 * written in one transaction. layout_index -1: the run around the layouts
 * (layout ignored); seq 0: outside a cell (between a layout's cells);
 * resume_id 0: the run itself, else the resumes row.
 */
struct store_time {
	int64_t resume_id;
	long layout_index;
	const char *layout;
	uint32_t seq;
	const char *const *categories;
	const double *seconds;
	size_t n;
};
int store_add_times(struct store *s, const struct store_time *t, struct strbuf *err);

/* The estimate of `rig plan` a run started with, per layout (table
 * estimates). */
struct store_estimate {
	long layout_index;
	const char *layout;        /* "" for dirs */
	double seconds;
	double written_bytes, files;
	size_t not_estimated;      /* cells of modules without an estimate */
	double assumed_rate;       /* bytes/s */
	double provision_s;        /* seconds assumed per volume provisioned */
};
int store_add_estimate(struct store *s, const struct store_estimate *e, struct strbuf *err);

/* A reader's own read-only connection to a store (reports open their own):
 * an older store gets the same temporary views and tables store_open gives
 * it, so the connection sees the current version. 0 or -EIO. */
int store_reader_setup(struct sqlite3 *db);

/* Read access for reports: the raw sqlite3 handle (reports run SQL). */
struct sqlite3 *store_db(struct store *s);

#endif
