# rig: build, test, install. GNU make.
#
#   make              build/rig (warnings are errors)
#   make check        the whole gate (what CI runs): build with AddressSanitizer
#                     + UndefinedBehaviorSanitizer into build/san, then lint,
#                     every suite, valgrind, packages, PostgreSQL and the fleet,
#                     several at a time (CHECK_JOBS); ends with the slowest and
#                     the totals (SUITES=walk,tree: only those suites)
#   make test         the inner loop: lint, the unit and end-to-end suites (no
#                     root needed, a few minutes)
#   make run          build and run configs/quick.yaml
#   make install      PREFIX=/usr/local: binary, configs, man page, bash and zsh
#                     completions (BASH_COMPLETION_DIR, ZSH_COMPLETION_DIR)
#   make lint         the style checks alone (banned functions, no shell strings;
#                     extern names, over nm of build/san's objects, built first;
#                     the man page through mandoc -T lint)
#   make portable     provision/ compiles as ISO C11 -pedantic with POSIX alone
#   make check-macos  the macOS build compiles for aarch64- and x86_64-macos with
#                     -Werror, from Linux with Zig's clang (part of make check;
#                     ./setup gets Zig; skipped on a Mac; block at the end)
#   make bench        (root) rig against fio, tar and du on loop devices; prints ratios;
#                     the measured share of two seed plans (bench/overhead.sh)
#   make bench-micro  the costs the sources' comments reason with (no root)
#   make tools        test tools: build/tools/fuse-hdd, the synthetic hard disk (Linux)
#   make dist         build/rig-VERSION.tar.gz, the tracked tree (git archive), and
#                     its sha256 for packaging/homebrew/rig.rb
#   make distcheck    unpacks that tarball, builds and installs it, runs the result
#   make deb          build/rig_VERSION-REV_ARCH.deb from build/rig (dpkg-deb)
#   make deb-test     (root) installs that .deb with apt-get in a fresh Debian
#                     chroot (debootstrap) and runs the quick plan there; part of
#                     make check; the chroot's base is cached in build/deb-chroot
#   make setup-test   (root) ./setup in that fresh chroot, then its probe finds nothing
#                     missing; SETUP_TEST_COMMAND='make check' runs the tests there
#
# Every library comes through pkg-config. Platform code is chosen here, not
# by #ifdef in shared code.

PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
CC       ?= cc
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# The macOS build's defines, also used by check-macos (compiled from Linux).
MACOS_DEFS := -D_DARWIN_C_SOURCE

UNAME_S  := $(shell uname -s)
ifeq ($(UNAME_S),Darwin)
PLATFORM := macos
PLATFORM_DEFS := $(MACOS_DEFS)
# Homebrew's sqlite, openssl and libpq are keg-only: point pkg-config at them.
BREW := $(shell brew --prefix 2>/dev/null)
export PKG_CONFIG_PATH := $(BREW)/opt/sqlite/lib/pkgconfig:$(BREW)/opt/openssl@3/lib/pkgconfig:$(BREW)/opt/libpq/lib/pkgconfig:$(PKG_CONFIG_PATH)
else
PLATFORM := linux
PLATFORM_DEFS := -D_GNU_SOURCE
PLATFORM_PKGS := liburing
endif

# The platform drivers built in (provision/driver.h): each NAME defines
# prov_driver_NAME. Both are portable C, so every build has both (`rig plan
# --platform macos` lists a macOS plan's commands on Linux).
DRIVERS  := linux macos
DRIVER_DEFS := -DRIG_DRIVERS='$(foreach d,$(DRIVERS),X($(d)))'

PKGS     := yaml-0.1 sqlite3 libcrypto json-c cairo libpng libplist-2.0 libpq $(PLATFORM_PKGS)
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
            -DRIG_PLATFORM='"$(PLATFORM)"' $(DRIVER_DEFS) -I. $(WARN) $(PKG_CFLAGS) $(PLIST_DEFS) -MMD -MP
OPT      ?= -O2 -g
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined

# The folders are layers (docs/architecture.md, "Layers"): rig/ (the
# commands and the runner) on reports/, provision/, plan/, modules/,
# store/, platform/ (the system layer: one OS's files, platform/linux*.c or
# platform/macos*.c, and what stands on them) and lib/.
PLATFORM_PORTABLE := $(filter-out platform/linux% platform/macos%,$(wildcard platform/*.c))
LIB_SRC  := $(wildcard rig/cmd/*.c rig/run/*.c reports/*.c provision/*.c provision/*/*.c \
              plan/*.c modules/*.c store/*.c lib/*.c) \
            $(PLATFORM_PORTABLE) $(wildcard platform/$(PLATFORM)*.c)
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

# Test tools (both platforms): the macOS backend's fake diskutil, hdiutil,
# mdutil, purge and tmutil, one program (tests/tools/fake-macos/main.c says
# what it fakes) with rig's strings and files helpers. $(BUILD)/tools/macos
# holds the links to it, those names and fake-macos: the tests' PATH entry,
# given them as RIG_FAKE_MACOS_DIR.
FAKE_MACOS_SRC := $(wildcard tests/tools/fake-macos/*.c) lib/strbuf.c lib/xalloc.c \
                  lib/files.c
FAKE_MACOS_HDR := $(wildcard tests/tools/fake-macos/*.h) lib/strbuf.h lib/xalloc.h \
                  lib/files.h
TOOLS    += $(BUILD)/tools/fake-macos

LIB_OBJ      := $(call objs,$(BUILD),$(LIB_SRC))
MAIN_OBJ     := $(call objs,$(BUILD),rig/main.c)
SAN_LIB_OBJ  := $(call objs,$(BUILD)/san,$(LIB_SRC))
SAN_MAIN_OBJ := $(call objs,$(BUILD)/san,rig/main.c)
SAN_TEST_OBJ := $(call objs,$(BUILD)/san,$(TEST_SRC))

.PHONY: all check test lint externs portable run install uninstall clean deps bench bench-micro tools

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

$(BUILD)/tools/fake-macos: $(FAKE_MACOS_SRC) $(FAKE_MACOS_HDR)
	@mkdir -p $(BUILD)/tools/macos
	$(CC) -std=c11 $(PLATFORM_DEFS) $(WARN) $(OPT) -I. -o $@ $(FAKE_MACOS_SRC)
	@for t in diskutil hdiutil mdutil purge tmutil fake-macos; do \
		ln -sf ../fake-macos $(BUILD)/tools/macos/$$t || exit 1; done

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

# ---- make check and make test ----------------------------------------------
# tests/tools/check (docs/testing.md) builds first (CHECK_BUILD, -j the CPUs),
# then runs the stages (make targets, with their tier) and every suite, each
# in a runner process of its own, CHECK_JOBS at a time: lint first, then
# the unit suites, end to end on folders and fakes, root suites, and the
# system stages; longest first within a tier (the last run's times in
# build/check/times.tsv). It ends with the 15 slowest and the totals.
# SUITES=walk,tree: only the suites whose names contain those words, no stages.
NPROC      := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
CHECK_JOBS ?= $(shell echo $$(( 2 * $(NPROC) )))
CHECK_TOOL := $(BUILD)/tools/check
CHECK_DIR  := $(BUILD)/check
# What the suites and `make test`'s stages need; make check's stages add theirs.
TEST_BUILD  := $(BUILD)/san/rig $(BUILD)/san/rig-tests $(TOOLS) $(SAN_MAIN_OBJ)
CHECK_BUILD := $(TEST_BUILD) $(BUILD)/rig
CHECK_STAGES := lint:lint lint:portable lint:check-macos lint:fuzz-syntax system:valgrind \
                system:pg-test
TEST_STAGES  := lint:lint

$(CHECK_TOOL): tests/tools/check.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(PLATFORM_DEFS) $(WARN) $(OPT) -o $@ $<

# The suites' environment: the sanitized rig, this tree, the synthetic disk.
CHECK_ENV := RIG_BIN=$(abspath $(BUILD)/san/rig) RIG_SRC=$(CURDIR) \
	RIG_FUSE_HDD=$(abspath $(filter %/fuse-hdd,$(TOOLS))) \
	RIG_FAKE_MACOS_DIR=$(abspath $(BUILD)/tools/macos) \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1

.PHONY: check-build test-build probe

# Every tool the tests call is there (./setup --probe names what is missing).
probe:
	@sh setup --probe

check: probe $(CHECK_TOOL)
	@$(CHECK_ENV) $(CHECK_TOOL) -j$(CHECK_JOBS) --dir $(CHECK_DIR) --make "$(MAKE)" --hints tests/check-times.tsv \
		--first check-build $(if $(SUITES),--only "$(SUITES)") \
		$(addprefix --stage ,$(CHECK_STAGES)) --suites $(BUILD)/san/rig-tests

# The inner loop: no root needed, lint, the unit and end-to-end suites.
test: probe $(CHECK_TOOL)
	@$(CHECK_ENV) $(CHECK_TOOL) -j$(CHECK_JOBS) --dir $(BUILD)/test --make "$(MAKE)" --hints tests/check-times.tsv \
		--first test-build --tiers lint,unit,e2e $(if $(SUITES),--only "$(SUITES)") \
		$(addprefix --stage ,$(TEST_STAGES)) --suites $(BUILD)/san/rig-tests
# ---- end of make check and make test ----------------------------------------

lint: externs
	@sh scripts/lint

# Every extern name carries its module's prefix (scripts/prefixes) and what
# one file alone uses is static: scripts/check-externs reads nm of the
# sanitized build's objects, the tests' among them (they count as users).
externs: $(SAN_LIB_OBJ) $(SAN_MAIN_OBJ) $(SAN_TEST_OBJ)
	@sh scripts/check-externs $^

# provision/ is portable C (the macOS backend is built and tested on Linux):
# ISO C11 with -pedantic and POSIX only, no _GNU_SOURCE or _DARWIN_C_SOURCE.
portable:
	@for f in provision/*.c provision/*/*.c; do \
		$(CC) -std=c11 -pedantic -D_XOPEN_SOURCE=700 $(DRIVER_DEFS) -I. $(WARN) $(PKG_CFLAGS) \
			$(PLIST_DEFS) -fsyntax-only $$f || exit 1; \
	done; echo "portable: provision/ is ISO C11 -pedantic with POSIX alone"

# Benchmarks measure; they are not tests and are not run by `make check`.
bench: $(BUILD)/rig $(BUILD)/bench/micro
	RIG=$(abspath $(BUILD)/rig) bash bench/io.sh
	RIG=$(abspath $(BUILD)/rig) bash bench/tree.sh
	RIG=$(abspath $(BUILD)/rig) bash bench/report.sh
	RIG=$(abspath $(BUILD)/rig) bash bench/overhead.sh
	$(BUILD)/bench/micro

# The costs the sources' comments reason with (payload, CSV numbers, the
# knot search), measured against rig's own objects; no root needed.
bench-micro: $(BUILD)/bench/micro
	$(BUILD)/bench/micro

$(BUILD)/bench/micro: bench/micro.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) -o $@ $^ $(PKG_LIBS) -lpthread -lm

run: $(BUILD)/rig
	$(BUILD)/rig run configs/quick.yaml

# The completions' folders: where bash-completion and zsh look under PREFIX
# (Debian's zsh: /usr/share/zsh/vendor-completions, which make deb gives).
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR  ?= $(PREFIX)/share/zsh/site-functions

install: $(BUILD)/rig
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/rig/configs \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(BASH_COMPLETION_DIR) \
		$(DESTDIR)$(ZSH_COMPLETION_DIR)
	install -m 755 $(BUILD)/rig $(DESTDIR)$(PREFIX)/bin/rig
	install -m 644 configs/*.yaml $(DESTDIR)$(PREFIX)/share/rig/configs/
	install -m 644 man/rig.1 $(DESTDIR)$(PREFIX)/share/man/man1/rig.1
	install -m 644 completions/rig.bash $(DESTDIR)$(BASH_COMPLETION_DIR)/rig
	install -m 644 completions/_rig $(DESTDIR)$(ZSH_COMPLETION_DIR)/_rig

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/rig $(DESTDIR)$(PREFIX)/share/man/man1/rig.1 \
		$(DESTDIR)$(BASH_COMPLETION_DIR)/rig $(DESTDIR)$(ZSH_COMPLETION_DIR)/_rig
	rm -rf $(DESTDIR)$(PREFIX)/share/rig

clean:
	rm -rf $(BUILD)

# Only the compilers' files, below an obj/ folder: build/ also holds deb-test's
# chroot (DEB_TEST_CACHE), whose /etc/rc2.d a make started while it is being
# unpacked would read as a makefile ("Is a directory. Stop.").
-include $(shell find $(BUILD) -path '*/deb-chroot' -prune -o -path '*/obj/*.d' -type f -print \
	2>/dev/null)

# ---- fuzzing and valgrind -------------------------------------------------
#   make fuzz [FUZZ_TIME=600]   build every fuzz/NAME_fuzz.c with clang's
#                               libFuzzer + ASan + UBSan and run each harness
#                               FUZZ_TIME seconds, one after another; fails
#                               on the first crash, hang, leak or sanitizer
#                               report (the input is kept in build/fuzz/).
#   make fuzz-NAME              build and run one harness.
#   make fuzz-cov-NAME          line coverage of what its corpus reaches.
#   make fuzz-arena-test        the plan harness's arena for libyaml's memory
#                               (fuzz/yaml_arena.c) catches what it must;
#                               part of `make check` on Linux.
#   make valgrind               the end-to-end suites against an unsanitized
#                               rig (-O1 -g) run under valgrind memcheck;
#                               part of `make check`.
#
# A harness is one file: fuzz/NAME_fuzz.c defining LLVMFuzzerTestOneInput.
# Its starting inputs are fuzz/corpus/NAME/ and tests/fixtures/fuzz/NAME/
# when they exist, plus the directories in FUZZ_CORPUS_NAME; a dictionary
# fuzz/NAME.dict is used when present. The growing corpus lives in
# build/fuzz/corpus/NAME/ (not committed).
ifeq ($(PLATFORM),macos)
# Apple's clang has no libFuzzer: Homebrew's llvm (./setup --fuzz).
FUZZ_CC      ?= $(BREW)/opt/llvm/bin/clang
else
FUZZ_CC      ?= clang
endif
FUZZ_TIME    ?= 60
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
                -fno-sanitize-recover=undefined
FUZZ_NAMES   := $(patsubst fuzz/%_fuzz.c,%,$(wildcard fuzz/*_fuzz.c))
FUZZ_BINS    := $(patsubst %,$(BUILD)/fuzz/%_fuzz,$(FUZZ_NAMES))
FUZZ_RUNS    := $(patsubst %,fuzz-%,$(FUZZ_NAMES))
FUZZ_LIB_OBJ := $(call objs,$(BUILD)/fuzz,$(LIB_SRC))
FUZZ_CORPUS_plan := configs
# For fuzz/plist_fuzz.c (the macOS backend's plist parsers): the recorded
# outputs of real Macs.
FUZZ_CORPUS_plist := $(wildcard tests/fixtures/macos)
# libFuzzer's options for every run: -timeout makes a slow input a failure
# (a hang), -rss_limit_mb an input that eats memory.
FUZZ_RUN_OPTS := -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
# ASan for the runs: freed memory stays poisoned for the last 16 MB freed
# (not 256) and a report shows 8 frames of where memory was allocated and
# freed (not 30). A parse allocates a few thousand small blocks (libyaml's
# nodes and strings), and the default bookkeeping made a fifth of its time.
FUZZ_ASAN_OPTIONS ?= quarantine_size_mb=16:malloc_context_size=8

.PHONY: fuzz fuzz-build fuzz-syntax fuzz-arena-test valgrind $(FUZZ_RUNS)

# Part of make check (CHECK_STAGES): the harnesses compile, the plan
# harness's arena catches what it must, and the end-to-end suites pass
# under valgrind.
ifeq ($(PLATFORM),linux)
CHECK_STAGES += lint:fuzz-arena-test
endif

# Files whose comparisons libFuzzer does not trace (-fsanitize=fuzzer
# instruments every comparison with a call that records its operands, so
# that mutations can match them): plan_bind.c's loops over sweep
# combinations and diag.c's per-character work compare indexes and lengths,
# never the input against a constant, and those calls were a fifth of the
# plan harness's time (bench/README.md). Their edges are still covered.
FUZZ_NO_TRACE_CMP := plan/plan_bind.c lib/diag.c

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link \
		$(if $(filter $<,$(FUZZ_NO_TRACE_CMP)),-fno-sanitize-coverage=trace-cmp) -c -o $@ $<

$(BUILD)/fuzz/%_fuzz: fuzz/%_fuzz.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_HELPERS_$*) \
		$(FUZZ_LIB_OBJ) $(PKG_LIBS) -lpthread -lm

# Sources a harness links besides its own file (fuzz/yaml_arena.c: libyaml's
# memory for the plan harness, outside ASan's allocator; the file says why;
# tests/dist_format.c: the units harness formats what it parsed, as the tests do).
FUZZ_HELPERS_plan := fuzz/yaml_arena.c
FUZZ_HELPERS_units := tests/dist_format.c
$(BUILD)/fuzz/units_fuzz $(BUILD)/fuzz/cov/units_fuzz: tests/dist_format.c tests/dist_format.h
$(BUILD)/fuzz/plan_fuzz $(BUILD)/fuzz/cov/plan_fuzz: fuzz/yaml_arena.c fuzz/yaml_arena.h

# The objects are prerequisites of a pattern rule only: keep them.
.SECONDARY: $(FUZZ_LIB_OBJ)

fuzz-build: $(FUZZ_BINS)

# make fuzz-arena-test (part of make check on Linux, where the arena takes
# libyaml's place): fuzz/yaml_arena.c under ASan, one misuse per run
# (fuzz/yaml_arena_test.c); each must be stopped with its report.
FUZZ_ARENA_TEST := $(BUILD)/fuzz/yaml_arena_test
$(FUZZ_ARENA_TEST): fuzz/yaml_arena_test.c fuzz/yaml_arena.c fuzz/yaml_arena.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -MMD -MP,$(BASE_CFLAGS)) -O1 -g -fsanitize=address -o $@ \
		fuzz/yaml_arena_test.c fuzz/yaml_arena.c $(PKG_LIBS)

ifeq ($(PLATFORM),linux)
CHECK_BUILD  += $(FUZZ_ARENA_TEST)
endif

fuzz-arena-test: $(FUZZ_ARENA_TEST)
	@set -e; t=$(FUZZ_ARENA_TEST); log=$(BUILD)/fuzz/arena-test.log; \
	$$t ok configs/enumeration-churn.yaml; $$t realloc; \
	for c in uaf:use-after-poison overflow:use-after-poison underflow:use-after-poison \
		 'double:double free' 'leak:were not freed'; do \
		m=$${c%%:*}; want=$${c#*:}; \
		if $$t $$m > $$log 2>&1; then echo "fuzz-arena-test: $$m was not caught"; exit 1; fi; \
		grep -q "$$want" $$log || { cat $$log; echo "fuzz-arena-test: $$m: no '$$want'"; exit 1; }; \
		echo "yaml_arena_test: $$m caught ($$want)"; \
	done

$(FUZZ_RUNS): fuzz-%: $(BUILD)/fuzz/%_fuzz
	@mkdir -p $(BUILD)/fuzz/corpus/$* $(BUILD)/fuzz/artifacts
	ASAN_OPTIONS=$(FUZZ_ASAN_OPTIONS) nice -n 19 $(BUILD)/fuzz/$*_fuzz $(FUZZ_RUN_OPTS) -max_total_time=$(FUZZ_TIME) \
		-artifact_prefix=$(BUILD)/fuzz/artifacts/$*- \
		$(if $(wildcard fuzz/$*.dict),-dict=fuzz/$*.dict) \
		$(BUILD)/fuzz/corpus/$* $(wildcard fuzz/corpus/$* tests/fixtures/fuzz/$*) $(FUZZ_CORPUS_$*)

# One harness after another (not in parallel): each gets the whole time.
fuzz: $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do $(MAKE) --no-print-directory fuzz-$$n; done

# make fuzz-cov-NAME: line coverage of the sources NAME's corpus reaches
# (build/fuzz/corpus/NAME and the starting inputs), with clang's source-based
# coverage; files the harness never enters are left out of the table.
LLVM_PROFDATA ?= llvm-profdata
LLVM_COV      ?= llvm-cov
FUZZ_COV_FLAGS := -O1 -g -fprofile-instr-generate -fcoverage-mapping

$(BUILD)/fuzz/cov/%_fuzz: fuzz/%_fuzz.c $(LIB_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -MMD -MP,$(BASE_CFLAGS)) $(FUZZ_COV_FLAGS) -fsanitize=fuzzer \
		-o $@ $< $(FUZZ_HELPERS_$*) $(LIB_SRC) $(PKG_LIBS) -lpthread -lm

fuzz-cov-%: $(BUILD)/fuzz/cov/%_fuzz
	@mkdir -p $(BUILD)/fuzz/corpus/$*
	LLVM_PROFILE_FILE=$(BUILD)/fuzz/cov/$*.profraw $< -runs=0 $(BUILD)/fuzz/corpus/$* \
		$(wildcard fuzz/corpus/$* tests/fixtures/fuzz/$*) $(FUZZ_CORPUS_$*) >/dev/null 2>&1
	$(LLVM_PROFDATA) merge -sparse -o $(BUILD)/fuzz/cov/$*.profdata $(BUILD)/fuzz/cov/$*.profraw
	@$(LLVM_COV) report $< -instr-profile=$(BUILD)/fuzz/cov/$*.profdata | \
		awk 'NR == 1 { print "file                              lines  missed  cover"; next } \
		     $$1 ~ /\.c$$/ && $$10 != "0.00%" { printf "%-32s %6d %7d %6s\n", $$1, $$8, $$9, $$10; \
		     l += $$8; m += $$9 } \
		     END { printf "%-32s %6d %7d %5.1f%%\n", "total (files reached)", l, m, 100 * (l - m) / l }'

# make check compiles the harnesses (not runs them) with the normal
# compiler, so a change of the parsers' interfaces cannot leave them broken;
# their crash inputs run as CUnit tests (tests/fuzz_test.c).
fuzz-syntax:
	$(CC) $(filter-out -MMD -MP,$(BASE_CFLAGS)) -fsyntax-only $(wildcard fuzz/*.c)

# Valgrind: rig built without sanitizers (-O1 -g) into build/vg, run by the
# end-to-end suites through tests/valgrind/rig (memcheck, definite leaks are
# errors), with the sanitized test runner limited to those suites
# ($RIG_TEST_ONLY: words of their names). Every rig process's log must say
# 0 errors.
VG_FLAGS    := -O1 -g
VG_LIB_OBJ  := $(call objs,$(BUILD)/vg,$(LIB_SRC))
VG_MAIN_OBJ := $(call objs,$(BUILD)/vg,rig/main.c)
# The end-to-end suites that reach the most of rig's code per second under
# valgrind (measured with gcov: docs/testing.md), less their slowest tests
# (VALGRIND_SKIP, '|' between names): each of those runs many short rig
# processes (1.3 s of valgrind's start each) through paths the kept tests
# already reach, or kills rig on purpose (memcheck is only partly judged
# there); the sanitizers still run them all. The ten-partition test: 72 s
# for 58 more lines, all in figure drawing.
VALGRIND_SUITES ?= rig run (dirs,command line,exec,meta,fill,seqio,rig report and rig compare,provisioning
VALGRIND_SKIP   ?= linux-ten-partitions|validate, plan, help, exit statuses|images rig did not make|ENOSPC fails the run|SIGINT/SIGTERM at any moment|a target refused when prepared|cache.remount and btrfs|a failing mkfs.xfs|SIGINT in the middle of a write
VALGRIND    := $(shell command -v valgrind 2>/dev/null)
ifneq ($(VALGRIND),)
CHECK_BUILD += $(BUILD)/vg/rig
endif

$(BUILD)/vg/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(VG_FLAGS) -c -o $@ $<

$(BUILD)/vg/rig: $(VG_LIB_OBJ) $(VG_MAIN_OBJ)
	$(CC) $(VG_FLAGS) -o $@ $^ $(PKG_LIBS) -lpthread -lm

ifeq ($(VALGRIND)$(PLATFORM),macos)
valgrind:
	@echo "valgrind: not available on macOS; skipped (the sanitized suites still run)"
else
valgrind: $(BUILD)/vg/rig $(BUILD)/san/rig-tests $(TOOLS)
	@test -n "$(VALGRIND)" || { echo "valgrind: not installed (run ./setup)"; exit 1; }
	rm -rf $(BUILD)/vg/logs && mkdir -p $(BUILD)/vg/logs && date +%s > $(BUILD)/vg/logs/started
	RIG_BIN=$(abspath tests/valgrind/rig) RIG_VG_BIN=$(abspath $(BUILD)/vg/rig) \
	RIG_VG_VALGRIND=$(VALGRIND) \
	RIG_VG_LOGS=$(abspath $(BUILD)/vg/logs) RIG_TEST_ONLY="$(VALGRIND_SUITES)" \
	RIG_TEST_SKIP="$(VALGRIND_SKIP)" \
	RIG_SRC=$(CURDIR) RIG_FUSE_HDD=$(abspath $(filter %/fuse-hdd,$(TOOLS))) \
	RIG_FAKE_MACOS_DIR=$(abspath $(BUILD)/tools/macos) \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	$(BUILD)/san/rig-tests
	sh tests/valgrind/check-logs $(BUILD)/vg/logs
endif
# ---- end of fuzzing and valgrind block ------------------------------------

# ---- macOS compile check --------------------------------------------------
#   make check-macos    compiles the macOS build's sources (platform/macos*.c
#                       in place of platform/linux*.c, MACOS_DEFS), rig/main.c,
#                       the tests and the fuzz harnesses for aarch64-macos and
#                       x86_64-macos, with WARN (-Werror); part of make check.
#                       Then scripts/check-externs reads the aarch64 objects
#                       (Mach-O, with llvm-nm): the macOS-only files' extern
#                       names carry their module's prefix too.
#
# From Linux, with Zig's clang (`zig cc`) and the macOS 13 libc headers Zig
# bundles (-target ...-macos.13.0: Zig 0.11's newest; its default is 11).
# It compiles only (-c): there are no macOS libraries to link. The
# libraries' headers come from the Linux dev packages, copied by
# scripts/macos-headers into $(BUILD)/macos/include, a folder of their own
# (the host's include path would put glibc in front of Apple's headers).
# ./setup unpacks Zig from the npm registry into .cache/zig (x86_64 Linux);
# a zig on PATH, or ZIG=..., serves as well. On a Mac the native build
# compiles these sources, and the check is skipped.
ZIG           ?= $(firstword $(wildcard $(CURDIR)/.cache/zig/zig) $(shell command -v zig 2>/dev/null))
MACOS_ARCHS   := aarch64 x86_64
MACOS_INC     := $(BUILD)/macos/include
MACOS_HEADERS := yaml.h sqlite3.h json-c cairo libpng16 plist openssl CUnit postgresql
MACOS_SRC     := $(filter-out platform/linux%,$(LIB_SRC)) $(wildcard platform/macos*.c) rig/main.c
MACOS_ALL_SRC := $(MACOS_SRC) $(TEST_SRC) $(wildcard fuzz/*_fuzz.c)
MACOS_OBJ     := $(foreach a,$(MACOS_ARCHS),$(call objs,$(BUILD)/macos/$(a),$(MACOS_ALL_SRC)))
# The folders pkg-config would name (-I.../cairo for <cairo.h>, and so on).
# zig cc builds -O0 with UBSan traps by default: they only slow this down.
MACOS_CFLAGS  := -std=c11 $(MACOS_DEFS) -DRIG_VERSION='"$(VERSION)"' -DRIG_PLATFORM='"macos"' \
                 $(DRIVER_DEFS) -I. -I$(MACOS_INC) -I$(MACOS_INC)/json-c -I$(MACOS_INC)/cairo \
                 -I$(MACOS_INC)/libpng16 -I$(MACOS_INC)/postgresql $(WARN) $(PLIST_DEFS) -MMD -MP -O0 -fno-sanitize=undefined
# Zig's caches stay in the build tree.
MACOS_ZIG_CC  := ZIG_GLOBAL_CACHE_DIR=$(abspath $(BUILD)/macos/zig-cache) \
                 ZIG_LOCAL_CACHE_DIR=$(abspath $(BUILD)/macos/zig-cache) $(ZIG) cc

# make check runs it right after lint and portable (the check rule above).
.PHONY: check-macos

# Copied again when the list may have changed; cp -p keeps the files' times,
# so the objects (which depend on them through -MMD) are not rebuilt for it.
$(MACOS_INC)/.copied: scripts/macos-headers Makefile
	CC=$(CC) sh scripts/macos-headers $(MACOS_INC) $(MACOS_HEADERS)
	@touch $@

# One rule per architecture: $(1) is aarch64 or x86_64. A short line per
# file (the flags are MACOS_CFLAGS; make V=1 prints the whole command).
define macos_rules
$(BUILD)/macos/$(1)/obj/%.o: %.c | $(MACOS_INC)/.copied
	@mkdir -p $$(dir $$@)
	@$(if $(V),:,echo "  zig cc -target $(1)-macos.13.0 $$<")
	$(if $(V),,@)$(MACOS_ZIG_CC) -target $(1)-macos.13.0 $(MACOS_CFLAGS) -c -o $$@ $$<

$(BUILD)/macos/$(1)/obj/tests/%.o: tests/%.c $(BUILD)/san/suites.inc | $(MACOS_INC)/.copied
	@mkdir -p $$(dir $$@)
	@$(if $(V),:,echo "  zig cc -target $(1)-macos.13.0 $$<")
	$(if $(V),,@)$(MACOS_ZIG_CC) -target $(1)-macos.13.0 $(MACOS_CFLAGS) -Wno-missing-prototypes \
		-I$(BUILD)/san -c -o $$@ $$<
endef
$(foreach a,$(MACOS_ARCHS),$(eval $(call macos_rules,$(a))))

ifeq ($(PLATFORM),macos)
check-macos:
	@echo "check-macos: skipped on macOS (a cross check from Linux; the native build compiles these sources)"
else ifneq ($(ZIG),)
check-macos: $(MACOS_OBJ)
	@echo "check-macos: $(words $(MACOS_ALL_SRC)) sources compile for aarch64-macos and x86_64-macos with -Werror"
	@sh scripts/check-externs $(call objs,$(BUILD)/macos/$(firstword $(MACOS_ARCHS)),$(MACOS_ALL_SRC))
else ifeq ($(shell uname -m),x86_64)
check-macos:
	@echo "check-macos: no zig: run ./setup (it unpacks Zig into .cache/zig)"; exit 1
else
check-macos:
	@echo "check-macos: skipped: ./setup has no Zig for $(shell uname -m) (give ZIG=path/to/zig)"
endif
# ---- end of macOS compile check block -------------------------------------

# ---- packages and the man page ---------------------------------------------
# The targets are described at the top of this file; docs/testing.md and
# the README's "Installing" say more.
#
# make dist archives the committed tree (HEAD, not the work tree) with git
# archive, which gives the same bytes for the same commit: the sha256 it
# prints stays valid for packaging/homebrew/rig.rb.
DIST      := $(BUILD)/rig-$(VERSION).tar.gz
# The package's version: VERSION and a Debian revision.
DEB_REVISION   ?= 1
DEB_VERSION    := $(VERSION)-$(DEB_REVISION)
DEB_MAINTAINER ?= rig maintainers <maintainers@users.noreply.a-seed-14fa9293.example>
DEB_ARCH  := $(shell dpkg --print-architecture 2>/dev/null)
DEB       := $(BUILD)/rig_$(DEB_VERSION)_$(DEB_ARCH).deb
MANDOC    := $(shell command -v mandoc 2>/dev/null)

.PHONY: dist distcheck deb deb-test deb-cleanup-test setup-test lint-pkg

dist:
	@mkdir -p $(BUILD)
	git archive --format=tar.gz --prefix=rig-$(VERSION)/ -o $(DIST) HEAD
	@echo "dist: $(DIST) (HEAD $$(git rev-parse --short HEAD); uncommitted changes are not in it)"
	@echo "dist: sha256 $$( (sha256sum $(DIST) 2>/dev/null || shasum -a 256 $(DIST)) | cut -d' ' -f1)" \
		"(packaging/homebrew/rig.rb's sha256, with url the tarball's address)"

# The tarball alone, as a user gets it: make, make install, the binary runs
# and validates a shipped plan. A full build: about a minute on 2 cores.
distcheck: dist
	rm -rf $(BUILD)/distcheck && mkdir -p $(BUILD)/distcheck
	tar -xzf $(DIST) -C $(BUILD)/distcheck
	$(MAKE) -C $(BUILD)/distcheck/rig-$(VERSION) --no-print-directory build/rig
	$(MAKE) -C $(BUILD)/distcheck/rig-$(VERSION) --no-print-directory install \
		DESTDIR=$(abspath $(BUILD))/distcheck/root PREFIX=/usr/local
	$(BUILD)/distcheck/root/usr/local/bin/rig --version
	$(BUILD)/distcheck/root/usr/local/bin/rig validate \
		$(BUILD)/distcheck/root/usr/local/share/rig/configs/quick.yaml
	rm -rf $(BUILD)/distcheck
	@echo "distcheck: $(DIST) builds, installs and runs"

# From the staged install of the normal build (not the sanitized one).
deb: $(BUILD)/rig
	rm -rf $(BUILD)/deb
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(BUILD))/deb/debian/rig PREFIX=/usr \
		ZSH_COMPLETION_DIR=/usr/share/zsh/vendor-completions
	sh packaging/deb/build-deb $(BUILD)/deb $(DEB_VERSION) "$(DEB_MAINTAINER)" $(BUILD)

# The .deb in a Debian chroot: root only (debootstrap, chroot), SKIPPED
# otherwise; part of make check on Linux. The chroot's base is cached in
# DEB_TEST_CACHE (=/var/cache/rig-deb-test keeps it across clean clones).
DEB_TEST_CACHE ?= $(BUILD)/deb-chroot
deb-test: deb
	bash tests/deb/chroot-test $(DEB) $(DEB_TEST_CACHE) $(VERSION)

# The chroot tests' cleanup (tests/deb/lib.sh) on a loop device over a file
# in the chroot, its file system mounted there too, after a failure and a
# TERM: nothing may be left (root only, SKIPPED otherwise; a few seconds).
deb-cleanup-test:
	bash tests/deb/cleanup-test $(BUILD)/deb-cleanup

ifeq ($(PLATFORM),linux)
CHECK_STAGES += system:deb-test root:deb-cleanup-test
endif

# The README's first command on a fresh minimal Debian: ./setup in the
# cached minbase chroot of deb-test, then ./setup --probe must find nothing
# missing (root only; about ten minutes, most of it apt; not in make check).
# SETUP_TEST_COMMAND runs after that in the chroot's copy of the tree:
# make setup-test SETUP_TEST_COMMAND='make check' tries the whole test command.
SETUP_TEST_COMMAND ?=
setup-test:
	bash tests/deb/setup-test . $(DEB_TEST_CACHE) "$(SETUP_TEST_COMMAND)"

# mandoc's warnings and errors fail; its style notes (input lines over 80
# characters) do not. On Linux groff's warnings too, through man-db's man
# (macOS's man has no --warnings). And the Homebrew formula depends on what
# ./setup installs on macOS, less the tests' cunit.
lint: lint-pkg
lint-pkg:
	@want=$$(sed -n 's/^brew_pkgs="\(.*\)"$$/\1/p' setup | tr ' ' '\n' | grep -v -x cunit | sort); \
	got=$$(sed -n 's/^ *depends_on "\([^"]*\)".*/\1/p' packaging/homebrew/rig.rb | sort); \
	if [ -z "$$want" ] || [ "$$want" != "$$got" ]; then \
		echo "lint-pkg: packaging/homebrew/rig.rb depends on" $$got; \
		echo "lint-pkg: ./setup's brew_pkgs less cunit are" $$want; exit 1; fi
	@test -n "$(MANDOC)" || { echo "lint-pkg: mandoc not installed (run ./setup)"; exit 1; }
	@$(MANDOC) -T lint -W warning man/rig.1
ifeq ($(PLATFORM),linux)
	@out=$$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l man/rig.1 2>&1 >/dev/null); \
		if [ -n "$$out" ]; then echo "$$out"; exit 1; fi
endif
	@echo "lint-pkg: man/rig.1 has no mandoc or groff warnings; the formula's depends_on are ./setup's"
# ---- end of packages and the man page block --------------------------------

# ---- the fleet test ----------------------------------------------------------
#   make fleet-test   (root) fleet/install.yml and fleet/run.yml through
#                     ansible-playbook over ssh, against three sshds on
#                     127.0.0.2-4 of this machine, each with a loop-device disk
#                     of its own; SKIPPED when not root. Part of make check on
#                     Linux (docs/fleet.md, docs/testing.md).
#   make pg-test      the shared PostgreSQL store (rig push, --db) against a
#                     server of its own (initdb in a temporary folder, as
#                     nobody when root; a Unix socket only), with runs made
#                     here; SKIPPED without the server's programs. Part of
#                     make check; make fleet-test runs it on the fleet's runs.
.PHONY: fleet-test pg-test
fleet-test: $(BUILD)/rig $(BUILD)/san/rig-tests
	RIG_TESTS=$(abspath $(BUILD)/san/rig-tests) bash tests/fleet/fleet-test $(BUILD)/rig

pg-test: $(BUILD)/rig $(BUILD)/san/rig-tests
	RIG_TESTS=$(abspath $(BUILD)/san/rig-tests) bash tests/pg/pg-test $(BUILD)/rig

ifeq ($(PLATFORM),linux)
CHECK_STAGES += system:fleet-test
endif
# ---- end of the fleet test block -----------------------------------------------

# What make check and make test build before their jobs (defined last: the
# blocks above add to CHECK_BUILD).
check-build: $(CHECK_BUILD)
test-build: $(TEST_BUILD)
