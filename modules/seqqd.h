/*
 * seqread and seqwrite (modules/seqqd.c): the args struct their
 * parameter table binds, shared with the tests. The job they run is
 * randio.h's.
 */
#ifndef RIG_SEQQD_H
#define RIG_SEQQD_H

#include <stdint.h>

struct seqqd_args {
	uint64_t block;
	uint64_t qd;
	uint64_t threads;
	uint64_t span;
	uint64_t time_ns; /* per pass; 0: a pass is one sweep of the file */
	uint64_t passes;
	int data;         /* enum randio_data: random, zero */
	int fresh;        /* file: 0 keep, 1 fresh */
};

#endif
