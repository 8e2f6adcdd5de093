# rig: build, test, install. GNU make.
#
#   make              build/rig (warnings are errors)
#   make check        build with AddressSanitizer + UndefinedBehaviorSanitizer
#                     into build/san and run every test suite (what CI runs;
#                     SUITES=walk,tree: only the suites whose names contain those)
#   make run          build and run configs/quick.yaml
#   make install      PREFIX=/usr/local: binary, configs, man page
#   make lint         the style checks alone (banned functions, no shell strings)
#   make portable     provision/*.c compiles as ISO C11 -pedantic with POSIX alone
#   make bench        (root) rig against fio, tar and du on loop devices; prints ratios
#   make tools        test tools: build/tools/fuse-hdd, the synthetic hard disk (Linux)
#
# Every library comes through pkg-config. Platform code is chosen here, not
# by #ifdef in shared code.

PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
CC       ?= cc
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

UNAME_S  := $(shell uname -s)
ifeq ($(UNAME_S),Darwin)
PLATFORM := macos
PLATFORM_DEFS := -D_DARWIN_C_SOURCE
# Homebrew's sqlite and openssl are keg-only: point pkg-config at them.
BREW := $(shell brew --prefix 2>/dev/null)
export PKG_CONFIG_PATH := $(BREW)/opt/sqlite/lib/pkgconfig:$(BREW)/opt/openssl@3/lib/pkgconfig:$(PKG_CONFIG_PATH)
else
PLATFORM := linux
PLATFORM_DEFS := -D_GNU_SOURCE
PLATFORM_PKGS := liburing
endif

PKGS     := yaml-0.1 sqlite3 libcrypto json-c cairo libplist-2.0 $(PLATFORM_PKGS)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
# libplist 2.3 gave plist_from_memory a fourth argument (the format found):
# chosen by the library's version, not by the operating system.
PLIST_DEFS := $(shell pkg-config --atleast-version=2.3.0 libplist-2.0 2>/dev/null && \
		echo -DRIG_LIBPLIST_FORMAT_ARG)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))
TEST_PKG_CFLAGS := $(shell pkg-config --cflags cunit)
TEST_PKG_LIBS   := $(shell pkg-config --libs cunit)

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Wformat=2 -Wno-format-nonliteral
BASE_CFLAGS := -std=c11 $(PLATFORM_DEFS) -DRIG_VERSION='"$(VERSION)"' \
            -DRIG_PLATFORM='"$(PLATFORM)"' -I. $(WARN) $(PKG_CFLAGS) $(PLIST_DEFS) -MMD -MP
OPT      ?= -O2 -g
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined

LIB_SRC  := $(wildcard rig/*.c rig/util/*.c rig/cmd/*.c rig/modules/*.c \
              provision/*.c reports/*.c platform/$(PLATFORM)*.c)
LIB_SRC  := $(filter-out rig/main.c,$(LIB_SRC))
TEST_SRC := $(wildcard tests/*.c)

# Two build trees from one source list: normal and sanitized.
define objs
$(patsubst %.c,$(1)/obj/%.o,$(2))
endef

# Test tools (Linux): the synthetic hard disk, a FUSE program (libfuse3),
# built apart from rig so rig itself never links FUSE. Without fuse3 the
# tests that need it say SKIPPED.
ifeq ($(PLATFORM),linux)
ifneq ($(shell pkg-config --exists fuse3 2>/dev/null && echo yes),)
TOOLS    := $(BUILD)/tools/fuse-hdd
endif
endif

LIB_OBJ      := $(call objs,$(BUILD),$(LIB_SRC))
MAIN_OBJ     := $(call objs,$(BUILD),rig/main.c)
SAN_LIB_OBJ  := $(call objs,$(BUILD)/san,$(LIB_SRC))
SAN_MAIN_OBJ := $(call objs,$(BUILD)/san,rig/main.c)
SAN_TEST_OBJ := $(call objs,$(BUILD)/san,$(TEST_SRC))

.PHONY: all check test lint portable run install uninstall clean deps bench tools

all: $(BUILD)/rig

tools: $(TOOLS)

$(BUILD)/rig: $(LIB_OBJ) $(MAIN_OBJ)
	$(CC) $(OPT) -o $@ $^ $(PKG_LIBS) -lpthread -lm

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) -c -o $@ $<

$(BUILD)/san/rig: $(SAN_LIB_OBJ) $(SAN_MAIN_OBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS) -lpthread -lm

$(BUILD)/tools/fuse-hdd: tests/tools/fuse-hdd.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(PLATFORM_DEFS) $(WARN) $(OPT) $(shell pkg-config --cflags fuse3) \
		-o $@ $< $(shell pkg-config --libs fuse3) -lpthread

$(BUILD)/san/rig-tests: $(SAN_LIB_OBJ) $(SAN_TEST_OBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS) $(TEST_PKG_LIBS) -lpthread -lm

$(BUILD)/san/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Wno-missing-prototypes -I$(BUILD)/san $(TEST_PKG_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

# The suite table: every `void register_NAME_tests(void)` in tests/*_test.c.
$(BUILD)/san/suites.inc: $(TEST_SRC)
	@mkdir -p $(dir $@)
	@grep -ho '^void register_[a-z0-9_]*_tests(void)' $(TEST_SRC) | \
		sed 's/^void \(.*\)(void)/SUITE(\1)/' | sort -u > $@.tmp && mv $@.tmp $@

$(BUILD)/san/obj/tests/main.o: $(BUILD)/san/suites.inc

$(BUILD)/san/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

# The tests run the sanitized rig binary too (end-to-end suites).
check test: lint portable $(BUILD)/san/rig $(BUILD)/san/rig-tests $(TOOLS)
	RIG_BIN=$(abspath $(BUILD)/san/rig) RIG_SRC=$(CURDIR) RIG_TEST_ONLY=$(SUITES) \
	RIG_FUSE_HDD=$(if $(TOOLS),$(abspath $(TOOLS))) \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	$(BUILD)/san/rig-tests

lint:
	@sh scripts/lint

# provision/ is portable C (the macOS backend is built and tested on Linux):
# ISO C11 with -pedantic and POSIX only, no _GNU_SOURCE or _DARWIN_C_SOURCE.
portable:
	@for f in provision/*.c; do \
		$(CC) -std=c11 -pedantic -D_XOPEN_SOURCE=700 -I. $(WARN) $(PKG_CFLAGS) \
			$(PLIST_DEFS) -fsyntax-only $$f || exit 1; \
	done; echo "portable: provision/*.c is ISO C11 -pedantic with POSIX alone"

# Benchmarks measure; they are not tests and are not run by `make check`.
bench: $(BUILD)/rig
	RIG=$(abspath $(BUILD)/rig) bash bench/io.sh
	RIG=$(abspath $(BUILD)/rig) bash bench/tree.sh
	RIG=$(abspath $(BUILD)/rig) bash bench/report.sh

run: $(BUILD)/rig
	$(BUILD)/rig run configs/quick.yaml

install: $(BUILD)/rig
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/rig/configs \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/rig $(DESTDIR)$(PREFIX)/bin/rig
	install -m 644 configs/*.yaml $(DESTDIR)$(PREFIX)/share/rig/configs/
	install -m 644 man/rig.1 $(DESTDIR)$(PREFIX)/share/man/man1/rig.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/rig $(DESTDIR)$(PREFIX)/share/man/man1/rig.1
	rm -rf $(DESTDIR)$(PREFIX)/share/rig

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
