/*
 * The provisioning journal of a run (provision.h, struct prov_journal),
 * kept in the run's store (store.h, table journal).
 */
#ifndef RIG_RUN_JOURNAL_H
#define RIG_RUN_JOURNAL_H

#include "provision/provision.h"

struct store;

/* j writes to and reads from *store, whatever it points at when asked
 * (the runner opens the store after it sets up the provisioning context);
 * nothing is recorded while *store is NULL. */
void run_journal_init(struct prov_journal *j, struct store **store);

#endif
