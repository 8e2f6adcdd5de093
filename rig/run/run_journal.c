/* The provisioning journal in the run's store; see run_journal.h. */
#include "rig/run/run_journal.h"

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/timeutil.h"
#include "store/store.h"

static int64_t journal_begin(void *opaque, const char *action, const char *object,
			     const char *argv, const char *identity, struct strbuf *err)
{
	struct store *s = *(struct store **)opaque;
	if (!s) {
		sb_adds(err, "no results store yet");
		return 0;
	}
	char now[40];
	timeutil_utc_iso(now, sizeof(now));
	struct store_journal j = { action, object, argv, identity, now };
	int64_t id = 0;
	return store_journal_begin(s, &j, &id, err) == 0 ? id : 0;
}

static void journal_end(void *opaque, int64_t id, int ok)
{
	struct store *s = *(struct store **)opaque;
	if (!s)
		return;
	char now[40];
	timeutil_utc_iso(now, sizeof(now));
	struct strbuf err = STRBUF_INIT;
	store_journal_end(s, id, ok, now, &err); /* the begun row stays: the safe side */
	sb_release(&err);
}

static int journal_last(void *opaque, const char *object, const char *actions, char **action,
			int *done)
{
	struct store *s = *(struct store **)opaque;
	char *state = NULL;
	struct strbuf err = STRBUF_INIT;
	int found = s ? store_journal_last(s, object, actions, action, &state, &err) : 0;
	sb_release(&err);
	if (found == 1)
		*done = !strcmp(state, "done") ? 1 : !strcmp(state, "failed") ? 0 : -1;
	free(state);
	return found == 1;
}

void run_journal_init(struct prov_journal *j, struct store **store)
{
	j->begin = journal_begin;
	j->end = journal_end;
	j->last = journal_last;
	j->opaque = store;
}
