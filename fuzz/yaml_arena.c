/*
 * libyaml's memory for the plan harness (fuzz/plan_fuzz.c): a bump arena
 * guarded by ASan's manual poisoning, instead of ASan's allocator.
 *
 * Why: a parse makes about 1,300 allocations inside libyaml (a tag string
 * for every node, four scanner buffers for every plain scalar, the stacks
 * of every list and mapping) against about 200 in rig (heaptrack, one parse
 * of configs/enumeration-churn.yaml). Under ASan each costs a stack unwind,
 * a stack-depot entry, a fill, shadow poisoning and a trip through the
 * quarantine: in a profile of the harness ASan's allocator and its
 * bookkeeping were about a third of an execution, most of it for libyaml's
 * blocks, which are not the code under test. Here those blocks are carved
 * from one region: an allocation unpoisons its bytes, a free poisons them
 * again, and nothing is reused until the input is done.
 *
 * What is still caught, in libyaml's blocks: reads and writes past a block
 * or before it (every block is followed by at least 32 poisoned bytes and
 * preceded by its poisoned header), any use after free within an input
 * (ASan reports "use-after-poison"; a freed block is never handed out again
 * before the input ends, where ASan's quarantine only delays reuse),
 * double and invalid frees (the header says; abort), and leaks (every block
 * must be freed when the input ends: yaml_arena_end_input aborts
 * otherwise). New blocks are filled with 0xbe up to 4 KiB, as ASan fills
 * them, so reading uninitialised bytes behaves the same in every run. What
 * is lost: the stacks of where a block was allocated and freed in a report
 * (rerun the input with fuzz/plan_fuzz under ASan's defaults: the harness
 * takes the input's path). rig's own allocations are untouched: ASan's
 * allocator serves them as before.
 *
 * How it plugs in: libyaml allocates through yaml_malloc, yaml_realloc,
 * yaml_strdup and yaml_free, which the shared library calls through its PLT
 * (objdump -R libyaml-0.so.2 lists them as JUMP_SLOT relocations), so the
 * definitions below take their place. A block that is not from the arena
 * (the arena was full, or the platform does not interpose) goes to the C
 * library's functions, that is to ASan's.
 */
#include "yaml_arena.h"

#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_SIZE ((size_t)64 << 20) /* address space; a parse of a 64 KiB input uses a few MiB */
#define HDR 16                         /* header before each block: its size and state */
#define RED 32                         /* poisoned bytes after each block, at least */
#define FILL_MAX 4096                  /* filled like ASan's max_malloc_fill_size */
#define LIVE 0x6c697665u
#define FREED 0x66726565u

struct hdr {
	size_t size;
	size_t state;
};

/* libyaml's declarations (yaml_private.h, not installed). */
void *yaml_malloc(size_t size);
void *yaml_realloc(void *ptr, size_t size);
void yaml_free(void *ptr);
unsigned char *yaml_strdup(const unsigned char *str);

/* Not the code under test: no coverage instrumentation either (its
 * comparison tracing was 5% of the plan harness's time). */
#if defined(__clang__)
#define ARENA_FN __attribute__((no_sanitize("coverage")))
#define ARENA_RAW __attribute__((no_sanitize("address", "coverage")))
#else
#define ARENA_FN
#define ARENA_RAW __attribute__((no_sanitize("address")))
#endif

static unsigned char *base, *top, *end;
static size_t live;
static unsigned long long served;

ARENA_FN static int init(void)
{
	if (base)
		return 1;
	void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	base = top = p;
	end = base + ARENA_SIZE;
	ASAN_POISON_MEMORY_REGION(base, ARENA_SIZE);
	return 1;
}

ARENA_FN static int ours(const void *ptr)
{
	const unsigned char *p = ptr;
	return base && p >= base && p < end;
}

/* Headers stay poisoned: only these functions touch them, uninstrumented. */
ARENA_RAW static struct hdr *header(void *ptr)
{
	return (struct hdr *)((unsigned char *)ptr - HDR);
}

ARENA_RAW static size_t header_get(void *ptr, size_t *state)
{
	struct hdr *h = header(ptr);
	*state = h->state;
	return h->size;
}

ARENA_RAW static void header_set(void *ptr, size_t size,
							       size_t state)
{
	struct hdr *h = header(ptr);
	h->size = size;
	h->state = state;
}

ARENA_FN void *yaml_malloc(size_t size)
{
	if (!size)
		size = 1;
	size_t need = HDR + ((size + 15) & ~(size_t)15) + RED;
	if (!init() || size > ARENA_SIZE || need > (size_t)(end - top))
		return malloc(size);
	unsigned char *p = top + HDR;
	top += need;
	header_set(p, size, LIVE);
	ASAN_UNPOISON_MEMORY_REGION(p, size);
	memset(p, 0xbe, size < FILL_MAX ? size : FILL_MAX);
	live++;
	served++;
	return p;
}

ARENA_FN void yaml_free(void *ptr)
{
	if (!ptr)
		return;
	if (!ours(ptr)) {
		free(ptr);
		return;
	}
	size_t state, size = header_get(ptr, &state);
	if (state != LIVE) {
		fprintf(stderr, "yaml_arena: %s of libyaml block %p\n",
			state == FREED ? "double free" : "free of a pointer that is not a block", ptr);
		abort();
	}
	header_set(ptr, size, FREED);
	ASAN_POISON_MEMORY_REGION(ptr, (size + 15) & ~(size_t)15); /* whole granules, ours */
	live--;
}

ARENA_FN void *yaml_realloc(void *ptr, size_t size)
{
	if (!ptr)
		return yaml_malloc(size);
	if (!ours(ptr))
		return realloc(ptr, size ? size : 1);
	size_t state, old = header_get(ptr, &state);
	if (state != LIVE) {
		fprintf(stderr, "yaml_arena: realloc of freed libyaml block %p\n", ptr);
		abort();
	}
	void *n = yaml_malloc(size);
	if (n)
		memcpy(n, ptr, old < size ? old : size);
	yaml_free(ptr);
	return n;
}

ARENA_FN unsigned char *yaml_strdup(const unsigned char *str)
{
	if (!str)
		return NULL;
	size_t len = strlen((const char *)str) + 1;
	unsigned char *p = yaml_malloc(len);
	if (p)
		memcpy(p, str, len);
	return p;
}

ARENA_FN void yaml_arena_end_input(void)
{
	if (live) {
		fprintf(stderr, "yaml_arena: %zu libyaml blocks were not freed by the end of the "
				"input (a YAML document or parser not deleted)\n", live);
		abort();
	}
	top = base; /* everything below top is poisoned again: headers, red zones, freed blocks */
}

ARENA_FN unsigned long long yaml_arena_served(void)
{
	return served;
}
