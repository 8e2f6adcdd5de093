/*
 * libyaml's memory for a fuzz harness: a bump arena guarded by ASan's
 * manual poisoning instead of ASan's allocator (fuzz/yaml_arena.c says why
 * and what is still caught). Linux only in effect: it works by defining
 * libyaml's own allocation functions, which the shared library calls
 * through its PLT; elsewhere libyaml keeps its own and this does nothing.
 */
#ifndef RIG_FUZZ_YAML_ARENA_H
#define RIG_FUZZ_YAML_ARENA_H

#include <stddef.h>

/* After an input: every block libyaml took must have been given back
 * (aborts with a message otherwise: a document or parser not deleted);
 * then the arena starts over. */
void yaml_arena_end_input(void);
/* Blocks served from the arena so far (0: libyaml's calls are not
 * interposed on this platform, or the harness parsed nothing). */
unsigned long long yaml_arena_served(void);

#endif
