/*
 * What fuzz/yaml_arena.c promises, checked under ASan (make fuzz-arena-test,
 * part of make check): `yaml_arena_test MODE` misuses libyaml's memory one
 * way and must be stopped with the right report; `ok` parses real plans
 * through libyaml and must find every block served from the arena and
 * given back.
 *
 *   ok FILE   parse the YAML file FILE twice, an input each; exit 0
 *   uaf       read a freed block: ASan's use-after-poison
 *   overflow  read one byte past a block: ASan's use-after-poison
 *   underflow read one byte before a block: ASan's use-after-poison
 *   double    free a block twice: "double free", abort
 *   leak      end the input with a block live: "were not freed", abort
 *   realloc   grow a block: the bytes follow it, the old one is poisoned
 */
#include <sanitizer/asan_interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yaml_arena.h"

void *yaml_malloc(size_t size);
void *yaml_realloc(void *ptr, size_t size);
void yaml_free(void *ptr);

static int load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	static unsigned char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text), f);
	fclose(f);
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return 0;
	yaml_parser_set_input_string(&parser, text, n);
	int ok = yaml_parser_load(&parser, &doc);
	if (ok) {
		ok = yaml_document_get_root_node(&doc) != NULL;
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	return ok;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	volatile char sink;
	if (!strcmp(mode, "ok")) {
		for (int round = 0; round < 2; round++) {
			unsigned long long before = yaml_arena_served();
			if (argc < 3 || !load(argv[2])) {
				fprintf(stderr, "yaml_arena_test: cannot parse %s\n", argc > 2 ? argv[2] : "(none)");
				return 1;
			}
			if (yaml_arena_served() == before) {
				fprintf(stderr, "yaml_arena_test: libyaml did not allocate from the arena\n");
				return 1;
			}
			yaml_arena_end_input();
		}
		printf("yaml_arena_test: ok, %llu blocks served\n", yaml_arena_served());
		return 0;
	}
	char *p = yaml_malloc(24);
	if (!p || !__asan_address_is_poisoned(p - 1) || __asan_address_is_poisoned(p + 23) ||
	    !__asan_address_is_poisoned(p + 24)) {
		fprintf(stderr, "yaml_arena_test: a block is not exactly its bytes\n");
		return 1;
	}
	memset(p, 'x', 24);
	if (!strcmp(mode, "uaf")) {
		yaml_free(p);
		sink = p[3];
	} else if (!strcmp(mode, "overflow")) {
		sink = p[24];
	} else if (!strcmp(mode, "underflow")) {
		sink = p[-1];
	} else if (!strcmp(mode, "double")) {
		yaml_free(p);
		yaml_free(p);
	} else if (!strcmp(mode, "leak")) {
		yaml_arena_end_input();
	} else if (!strcmp(mode, "realloc")) {
		char *q = yaml_realloc(p, 5000);
		if (!q || memcmp(q, "xxxxxxxxxxxxxxxxxxxxxxxx", 24) != 0 ||
		    !__asan_address_is_poisoned(p) || __asan_address_is_poisoned(q + 4999)) {
			fprintf(stderr, "yaml_arena_test: realloc lost the bytes or left the old block open\n");
			return 1;
		}
		yaml_free(q);
		yaml_arena_end_input();
		printf("yaml_arena_test: realloc ok\n");
		return 0;
	} else {
		fprintf(stderr, "usage: yaml_arena_test ok FILE|uaf|overflow|underflow|double|leak|realloc\n");
		return 2;
	}
	(void)sink;
	fprintf(stderr, "yaml_arena_test: %s was not caught\n", mode);
	return 1;
}
