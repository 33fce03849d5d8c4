# turninit - static musl PID 1 for disposable per-turn agent containers.
#
#   make                 build/turninit (static, stripped, musl; with its symbols:
#                        build/turninit.unstripped); CPPFLAGS, CFLAGS and
#                        LDFLAGS are appended, V=1 shows the commands, WERROR=1 makes
#                        warnings errors (make check sets it)
#   make TRUSTED_KEYS=k.pub   ... with the minisign public key(s) in k.pub compiled in
#   make ARCH=aarch64    build/aarch64/turninit, cross-built on x86_64 with Debian's
#                        aarch64-linux-gnu-gcc and a musl built from Debian's source
#                        (build/aarch64/musl/prefix); ARCH is x86_64 or aarch64, the host's
#                        by default. With the other one: also unit, fuzz-replay (under
#                        qemu-user), install, install-strip, uninstall, size, clean
#   make setup           install the Debian packages, apply podman host fixes (idempotent)
#   make unit            cmocka unit tests of policy/ (host build, ASan+UBSan; ARCH=aarch64:
#                        static, no sanitizer, under qemu-aarch64-static)
#   make image           local podman image localhost/turninit:latest (no registry)
#   make demo            setup, build, seal a demo image, run a real turn
#   make audit-demo      setup, build, an audit session on a copy-on-write view of a
#                        sample tree: the session's diff, the audit log (docs/audit.md)
#   make check           setup, the kernel's features (one line), build (the other
#                        architecture's dependencies beside it), the mutation list, the
#                        include rules, unit tests, then every suite of SUITES below,
#                        check-cross and the fuzz corpora replayed under ASan and UBSan,
#                        three at a time (docs/testing.md says what each suite runs)
#   make check-cross     the other architecture (on x86_64: aarch64): its build, unit tests
#                        and fuzz corpora under qemu-user; skipped, saying why, without its
#                        cross compiler, qemu-user-static or cmake (in check)
#   make help            this text, and the suites
#   make NAME            one suite (fuzz-replay for the fuzz corpora); ITEST_ONLY=REGEX
#                        runs only the tests whose name matches (docs/testing.md)
#   make layout          the include rules of init/'s folders, no circle of includes or
#                        calls, no long function without its reason (docs/HACKING.md),
#                        the exit codes against docs/exit-codes.md and the C files
#                        against .clang-format (tests/layout/format.py; in check)
#   make selftest        the suites' test runner (tests/integration/lib.sh) on itself:
#                        a test's time limit, directory and TAP line (in check)
#   make mcp-latest      the mcp suite's agent tests with the newest Claude Code, Codex
#                        CLI and Gemini CLI under Node.js 22 (not in check; reports)
#   make pi-latest       the pi suite with pi's newest release under Node.js 22 (not
#                        in check; reports)
#   make repro           a second clone of the tracked files building its own
#                        dependencies gives build/turninit's bytes (not in check: some
#                        3 minutes of compiling; packaging.sh's p-build-two-folders-own-deps)
#   make helpers         the static test helpers (build/helpers/) the suites use
#   make fuzz            libFuzzer on each parser, FUZZ_SECONDS each (not in check)
#   make bench           turninit against catatonit, tini, dumb-init and a bare bash,
#                        a perf sched profile of serve against a bare spawn, its
#                        proxy against a direct connection, its credential gateway
#                        against TLS from the command, a connection under seccomp-notify
#                        against a namespace: writes docs/benchmarks.md and its plots
#                        (not in check; ~25 min). BENCH_ONLY=gateway or notify: that
#                        section alone; BENCH_SCALE=N: a quick trial
#   make size            what each archive and object costs in build/turninit (its
#                        linker map): a figure, not a goal
#   make mutants         each mutation of tests/mutants/mutants.txt built and run against
#                        the suites that must catch it; fails if one survives
#                        (not in check; docs/testing.md). MUTANTS=REGEX: some of them;
#                        MUTANTS_JOBS=N: N at once (default 2, each in its own tree)
#   make update-docs     copy the probe table of the last sandbox run, and the table of
#                        both architectures of the last unit run, into docs/security.md
#   make install         install the binary, the image and seal scripts, the man page, the
#                        relink kit (LGPL-2.1) and the licences; PREFIX, DESTDIR, BINDIR,
#                        SBINDIR, LIBDIR, MANDIR, DOCDIR (docs/packaging.md); also
#                        install-strip and uninstall

VERSION      := 0.1.0
BUILD        := build
# ARCH: the architecture built for, x86_64 or aarch64; the host's (uname -m)
# unless given on make's command line. ARCH in the environment is not read:
# kernel and distribution builds export it, spelled their own way (arm64).
# The host's architecture builds as it always has (build/turninit, the
# dependencies in build/musl/prefix, Debian's musl-gcc of musl-tools);
# another is a cross build with the Debian cross compiler ARCH-linux-gnu-gcc
# into build/ARCH/ (build/aarch64/turninit, build/aarch64/musl/prefix with
# musl itself built from Debian's source package: .ci/musl-deps.sh).
HOST_ARCH    := $(shell uname -m)
# A folder with a blank in its name breaks musl's configure and the
# -ffile-prefix-map of every compile: said here, before anything is fetched.
ifneq ($(words $(CURDIR)),1)
$(error the build folder "$(CURDIR)" has a blank in its name: clone turninit into a folder without one)
endif
ifneq ($(origin ARCH),command line)
ARCH         := $(HOST_ARCH)
endif
ifneq ($(words $(ARCH))$(filter-out x86_64 aarch64,$(ARCH)),1)
$(error ARCH=$(ARCH): turninit builds for x86_64 and aarch64 only (make ARCH=x86_64 or make ARCH=aarch64))
endif
ifeq ($(ARCH),$(HOST_ARCH))
OUT          := $(BUILD)
CROSS_COMPILE :=
else
OUT          := $(BUILD)/$(ARCH)
CROSS_COMPILE := $(ARCH)-linux-gnu-
endif
STRIP        := $(CROSS_COMPILE)strip
MUSL_DIR     := $(OUT)/musl
# MUSL_PREFIX: the static musl builds of libseccomp, libcap, libsodium and
# jansson (lib/, include/, share/licenses/, versions.txt), as make deps
# (.ci/musl-deps.sh, which fetches Debian's source packages) makes them in
# build/musl/prefix (a cross build's: build/ARCH/musl/prefix, with musl and
# its bin/musl-gcc). Given on the command line or in the environment, it is
# used as it is and nothing is fetched or built for it.
ifeq ($(origin MUSL_PREFIX),undefined)
MUSL_PREFIX  := $(MUSL_DIR)/prefix
DEPS_STAMP   := $(MUSL_DIR)/.stamp
else
DEPS_STAMP   :=
endif
# A cross build makes, tests under qemu-user and installs; the suites, the
# images and the rest run the host's build.
CROSS_GOALS  := all deps unit fuzz-replay size install install-strip install-check-dirs uninstall clean help
ifneq ($(CROSS_COMPILE),)
ifneq ($(filter-out $(CROSS_GOALS) $(BUILD)/%,$(MAKECMDGOALS)),)
$(error make ARCH=$(ARCH) $(filter-out $(CROSS_GOALS) $(BUILD)/%,$(MAKECMDGOALS)): ARCH=$(ARCH) takes $(CROSS_GOALS); the rest run the host's build (make without ARCH))
endif
endif
# The compiler of the product: Debian's musl-gcc (musl-tools) on the host's
# architecture; for another, the wrapper musl's own make install wrote into
# the prefix, around ARCH-linux-gnu-gcc.
MUSL_CC      := $(if $(CROSS_COMPILE),$(MUSL_PREFIX)/bin/musl-gcc,musl-gcc)
# Install directories, as GNU names them (DESTDIR is prepended to each).
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
SBINDIR      ?= $(PREFIX)/sbin
LIBDIR       ?= $(PREFIX)/lib
MANDIR       ?= $(PREFIX)/share/man
DATADIR      ?= $(PREFIX)/share
DOCDIR       ?= $(PREFIX)/share/doc/turninit
INSTALL      ?= install
INSTALL_PROGRAM ?= $(INSTALL)
TRUSTED_KEYS ?=

# init/ in folders by role, each allowed to include only what its rule says
# (docs/HACKING.md; tests/layout/layout.py checks it in make check). Their
# sources are found by this list; their headers by their folder (INCLUDES).
INIT_DIRS  := init init/util init/trust init/sandbox init/proxy init/process init/serve init/client
POLICY_SRC := $(wildcard policy/*.c)
INIT_SRC   := $(foreach d,$(INIT_DIRS),$(wildcard $(d)/*.c))
SRC        := $(POLICY_SRC) $(INIT_SRC)
HDR        := $(wildcard policy/*.h $(addsuffix /*.h,$(INIT_DIRS)))

# One spelling per header, by its folder (docs/HACKING.md): init/'s as their
# path below init/ ("process/keeper.h"), policy/'s as "policy/NAME.h" from
# the top; build/gen holds the generated headers (trusted_keys.h, commit.h).
INCLUDES := -Iinit -I. -I$(BUILD)/gen

# Warnings are errors only when asked (WERROR=1; make check asks): a newer
# compiler's new warning must not break a packager's build.
WERROR ?= 0
WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wformat=2 $(if $(filter 1,$(WERROR)),-Werror)
# V=1 shows each command.
Q := $(if $(filter 1,$(V)),,@)
COMMON_CFLAGS := -std=gnu11 $(WARN) -fstack-protector-strong \
                 -DTURNINIT_VERSION='"$(VERSION)"' $(INCLUDES)

# The product: static musl, linked against the musl builds of the libraries.
# -flto saves about 4 KB over section garbage collection alone; the objects are
# fat (real code beside the LTO bytecode), so the relink kit of `make install`
# links with any gcc, LTO or not (docs/relink.md).
# -ffile-prefix-map: a __FILE__ or assert(3) of ours names no folder of the
# build machine (the dependencies are built so too: .ci/musl-deps.sh).
MUSL_CFLAGS  := $(COMMON_CFLAGS) -Os -ffunction-sections -fdata-sections \
                -flto -ffat-lto-objects -ffile-prefix-map=$(CURDIR)/= \
                -fno-asynchronous-unwind-tables -fno-unwind-tables \
                -isystem $(MUSL_PREFIX)/include
MUSL_LDFLAGS := -static -Wl,--gc-sections -Wl,-z,relro,-z,now -Wl,--build-id \
                -L$(MUSL_PREFIX)/lib
MUSL_LIBS    := -lseccomp -lcap -lsodium -ljansson -lmbedtls -lmbedx509 -lmbedcrypto

# The host build (glibc, Debian's -dev packages): unit tests with sanitizers.
HOST_CC      := gcc
HOST_CFLAGS  := $(COMMON_CFLAGS) -O1 -g -D_FORTIFY_SOURCE=2 \
                -fsanitize=address,undefined -fno-omit-frame-pointer
HOST_LIBS    := -lseccomp -lcap -lsodium -ljansson -lmbedtls -lmbedx509 -lmbedcrypto -lcmocka

# The valgrind build: the whole program, glibc, no sanitizer (valgrind runs it).
# TURNINIT_VALGRIND only tells libseccomp its API level (init/sandbox/filter.c).
VG_CFLAGS    := $(COMMON_CFLAGS) -O1 -g -DTURNINIT_VALGRIND

# The suites of make check, in this order; each writes build/test-results/NAME.
SUITES := integration sandbox network workload serve pid1 nonroot hostile packaging doclines fault valgrind audit pi mcp rootless gvisor arm64 docker
# rootless writes one result per suite it runs as its user; docker one for its
# own tests, one for containerd's ctr and one per suite it runs under dockerd.
RESULTS := $(filter-out rootless docker,$(SUITES)) rootless-integration rootless-sandbox \
           rootless-serve rootless-network rootless-keepid docker-engine docker-containerd docker-integration \
           docker-sandbox docker-serve docker-network docker-doclines

.PHONY: all help deps setup unit helpers image demo audit-demo check check-cross $(SUITES) mcp-latest pi-latest repro fuzz \
        fuzz-replay bench size mutants mutants-list layout selftest update-docs install install-check-dirs install-strip \
        uninstall clean FORCE
all: $(OUT)/turninit

# The comment at the top of this file, and the suites: the one list of them.
help:
	@sed -n '3,/^$$/{s/^# \{0,1\}//;p}' Makefile
	@echo "The suites of make check, in order (make NAME runs one; docs/testing.md):"
	@echo "  $(SUITES)"

# Dependencies: rebuilt only when the script that makes them changes. Two
# makes of one tree may both find them missing (make check builds the other
# architecture's beside the host's build): each builds under the lock
# MUSL_DIR.lock. once_under_lock LOCK,STAMP,CMD: CMD then touch STAMP under
# LOCK. A make that finds LOCK free builds, as make decided (make -B
# included); one that had to wait for another builds only if STAMP is still
# missing or older than one of the rule's prerequisites ($^) once it holds it.
once_under_lock = mkdir -p $(dir $(1)) && { flock -n -E 75 $(1) sh -c '$(3) && touch $(2)'; rc=$$?; \
                  [ $$rc -eq 75 ] || exit $$rc; flock $(1) sh -c '$(foreach f,$^,[ $(2) -nt $(f) ] &&) exit 0; \
                  $(3) && touch $(2)'; }
ifneq ($(DEPS_STAMP),)
$(DEPS_STAMP): .ci/musl-deps.sh .ci/deps.lock
	$(call once_under_lock,$(MUSL_DIR).lock,$@,sh .ci/musl-deps.sh $(MUSL_DIR)$(if $(CROSS_COMPILE), $(ARCH)))
endif
deps: $(DEPS_STAMP)

# Compiled-in trust roots: regenerated only when the key text changes. Each
# generated header is written to a file of its shell's own and renamed over
# the old one: make check runs makes of this tree side by side.
$(BUILD)/gen/trusted_keys.h: FORCE
	@mkdir -p $(@D)
	@t=$@.tmp.$$$$; sh .ci/embed-keys.sh "$(TRUSTED_KEYS)" > $$t || { rm -f $$t; exit 1; }; \
	 if cmp -s $$t $@; then rm -f $$t; else mv $$t $@; fi

# The commit --version names (Docker's init-path parser wants "- git.COMMIT"):
# regenerated only when HEAD changes; main.c and verify.c include it. COMMIT=
# names it for a build outside a git checkout (a release tarball).
COMMIT ?= $(shell git rev-parse --is-inside-work-tree >/dev/null 2>&1 && \
                   [ -z "$$(git rev-parse --show-prefix)" ] && \
                   git rev-parse --short=12 HEAD || echo unknown)
$(BUILD)/gen/commit.h: FORCE
	@mkdir -p $(@D)
	@t=$@.tmp.$$$$; printf '#define TURNINIT_COMMIT "%s"\n' "$(COMMIT)" > $$t; \
	 if cmp -s $$t $@; then rm -f $$t; else mv $$t $@; fi
$(OUT)/musl-obj/init/main.o $(OUT)/musl-obj/init/verify.o: $(BUILD)/gen/commit.h

# Each object depends on the headers it includes, as the compiler lists them
# (-MMD -MP: build/musl-obj/.../NAME.d, read back below); an object without
# its .d (built before there were any) is built again.
MUSL_OBJ := $(patsubst %.c,$(OUT)/musl-obj/%.o,$(SRC))
$(OUT)/musl-obj/%.d: ;
.PRECIOUS: $(OUT)/musl-obj/%.d
$(OUT)/musl-obj/%.o: %.c $(OUT)/musl-obj/%.d $(BUILD)/gen/trusted_keys.h $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC    $<$(if $(CROSS_COMPILE), ($(ARCH)))"
	$(Q)$(MUSL_CC) $(MUSL_CFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<
-include $(MUSL_OBJ:.o=.d)

# Linked with its symbols and a build id (build/turninit.unstripped: what make
# install installs, for a distribution's debug-symbol split); build/turninit,
# what the images and suites use, is that stripped, the build id kept. `file`
# must find it static and of ARCH (a cross build that fell back to the host's
# compiler would not be).
FILE_ARCH_x86_64  := x86-64
FILE_ARCH_aarch64 := ARM aarch64
$(OUT)/turninit.unstripped: $(MUSL_OBJ)
	@echo "  LD    $@"
	$(Q)$(MUSL_CC) $(MUSL_CFLAGS) $(CFLAGS) -o $@ $(MUSL_OBJ) $(MUSL_LDFLAGS) \
		-Wl,-Map=$(OUT)/turninit.map $(LDFLAGS) $(MUSL_LIBS)
	@file $@ | grep -q 'statically linked' || { echo "error: $@ is not static"; exit 1; }
	@file $@ | grep -q ', $(FILE_ARCH_$(ARCH)),' || { echo "error: $@ is not $(ARCH): $$(file -b $@)"; exit 1; }
$(OUT)/turninit: $(OUT)/turninit.unstripped
	$(Q)$(STRIP) --strip-all -o $@ $<
	@echo "built $@: $$(stat -c %s $@) bytes, static, stripped$(if $(CROSS_COMPILE), ($(ARCH)))"

# Unit tests: tests/unit/test_X.c against the policy sources; those of init/'s
# pure parts (INIT_UNIT_TESTS) against init/ too, all but main.c. Each source
# is compiled once (build/host/obj, its headers listed by -MMD -MP as for the
# product) and every test links the objects: compiling policy/ again for each
# of the twenty tests took most of make unit's three minutes.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/host/%,$(wildcard tests/unit/test_*.c))
INIT_UNIT_NAMES := test_spawn_steps test_filter_arch
INIT_UNIT_TESTS := $(addprefix $(BUILD)/host/,$(INIT_UNIT_NAMES))
INIT_LIB_SRC := $(filter-out init/main.c,$(INIT_SRC))
HUNIT_POLICY := $(patsubst %.c,$(BUILD)/host/obj/%.o,$(POLICY_SRC))
HUNIT_INIT   := $(patsubst %.c,$(BUILD)/host/obj/%.o,$(INIT_LIB_SRC))
$(BUILD)/host/obj/%.d: ;
.PRECIOUS: $(BUILD)/host/obj/%.d $(BUILD)/host/obj/%.o
$(BUILD)/host/obj/%.o: %.c $(BUILD)/host/obj/%.d $(BUILD)/gen/trusted_keys.h
	@mkdir -p $(@D)
	@echo "  CC    $@ (host, ASan+UBSan)"
	$(Q)$(HOST_CC) $(HOST_CFLAGS) -Itests/unit -MMD -MP -c -o $@ $<
-include $(patsubst tests/unit/%.c,$(BUILD)/host/obj/tests/unit/%.d,$(wildcard tests/unit/test_*.c)) \
         $(HUNIT_POLICY:.o=.d) $(HUNIT_INIT:.o=.d)
$(BUILD)/host/obj/init/verify.o: $(BUILD)/gen/commit.h
$(INIT_UNIT_TESTS): HUNIT_EXTRA = $(HUNIT_INIT)
$(INIT_UNIT_TESTS): $(HUNIT_INIT)
$(BUILD)/host/test_%: $(BUILD)/host/obj/tests/unit/test_%.o $(HUNIT_POLICY)
	@mkdir -p $(@D)
	@echo "  LD    $@ (host, ASan+UBSan)"
	$(Q)$(HOST_CC) $(HOST_CFLAGS) -o $@ $< $(HUNIT_POLICY) $(HUNIT_EXTRA) $(HOST_LIBS)
ifeq ($(CROSS_COMPILE),)
unit: $(UNIT_TESTS)
	@sh tests/run-unit.sh $(UNIT_TESTS)
else
# Another architecture's unit tests (make ARCH=aarch64 unit): static, against
# its musl prefix and a cmocka built for it from Debian's source package
# (build/aarch64/musl/cmocka), without sanitizers (gcc has none for musl),
# each source compiled once (build/aarch64/unit-obj), run under qemu-user
# (qemu-aarch64-static, named: no binfmt entry needed); the result is
# build/test-results/unit-aarch64. -D__WORDSIZE=64: cmocka.h guesses 32
# without glibc off x86_64 (.ci/musl-deps.sh).
QEMU         := qemu-$(ARCH)-static
CMOCKA_DIR   := $(MUSL_DIR)/cmocka
CMOCKA_STAMP := $(MUSL_DIR)/.cmocka-stamp
$(CMOCKA_STAMP): .ci/musl-deps.sh .ci/deps.lock $(DEPS_STAMP)
	$(call once_under_lock,$(MUSL_DIR).lock,$@,sh .ci/musl-deps.sh --cmocka $(MUSL_DIR) $(abspath $(MUSL_CC)))
XUNIT_CFLAGS := $(COMMON_CFLAGS) -O1 -g -D__WORDSIZE=64 -ffile-prefix-map=$(CURDIR)/= \
                -isystem $(MUSL_PREFIX)/include -isystem $(CMOCKA_DIR)/include -Itests/unit
XUNIT_TESTS  := $(patsubst tests/unit/%.c,$(OUT)/unit/%,$(wildcard tests/unit/test_*.c))
XUNIT_POLICY := $(patsubst %.c,$(OUT)/unit-obj/%.o,$(POLICY_SRC))
XUNIT_INIT   := $(patsubst %.c,$(OUT)/unit-obj/%.o,$(INIT_LIB_SRC))
$(OUT)/unit-obj/%.d: ;
.PRECIOUS: $(OUT)/unit-obj/%.d $(OUT)/unit-obj/%.o
$(OUT)/unit-obj/%.o: %.c $(OUT)/unit-obj/%.d $(BUILD)/gen/trusted_keys.h $(CMOCKA_STAMP)
	@mkdir -p $(@D)
	@echo "  CC    $@ ($(ARCH), unit)"
	$(Q)$(MUSL_CC) $(XUNIT_CFLAGS) -MMD -MP -c -o $@ $<
-include $(patsubst tests/unit/%.c,$(OUT)/unit-obj/tests/unit/%.d,$(wildcard tests/unit/test_*.c)) \
         $(XUNIT_POLICY:.o=.d) $(XUNIT_INIT:.o=.d)
$(OUT)/unit-obj/init/verify.o: $(BUILD)/gen/commit.h
$(addprefix $(OUT)/unit/,$(INIT_UNIT_NAMES)): XUNIT_EXTRA = $(XUNIT_INIT)
$(addprefix $(OUT)/unit/,$(INIT_UNIT_NAMES)): $(XUNIT_INIT)
$(OUT)/unit/test_%: $(OUT)/unit-obj/tests/unit/test_%.o $(XUNIT_POLICY)
	@mkdir -p $(@D)
	@echo "  LD    $@ ($(ARCH), static)"
	$(Q)$(MUSL_CC) -static -o $@ $< $(XUNIT_POLICY) $(XUNIT_EXTRA) -L$(CMOCKA_DIR)/lib -L$(MUSL_PREFIX)/lib \
		-lcmocka -lseccomp -lcap -lsodium -ljansson -lmbedtls -lmbedx509 -lmbedcrypto
unit: $(XUNIT_TESTS)
	@command -v $(QEMU) >/dev/null || { echo "unit: $(QEMU) not found (Debian's qemu-user-static; make setup installs it)"; exit 1; }
	@UNIT_RUN=$(QEMU) UNIT_RESULT=unit-$(ARCH) sh tests/run-unit.sh $(XUNIT_TESTS)
endif

# The whole program for valgrind (host build; tests/integration/valgrind.sh).
$(BUILD)/vg/turninit: $(SRC) $(HDR) $(BUILD)/gen/trusted_keys.h $(BUILD)/gen/commit.h
	@mkdir -p $(@D)
	@echo "  CC    $@ (host, for valgrind)"
	$(Q)$(HOST_CC) $(VG_CFLAGS) -o $@ $(SRC) -lseccomp -lcap -lsodium -ljansson -lmbedtls -lmbedx509 -lmbedcrypto

setup:
	@sh .ci/setup-host.sh

image: $(BUILD)/turninit
	@sh rootfs/build-image.sh $(BUILD)/turninit

demo: setup
	@$(MAKE) --no-print-directory all
	@sh oci/demo.sh

audit-demo: setup
	@$(MAKE) --no-print-directory all
	@sh oci/audit/demo.sh

# The static programs the suites put in their images or run beside turninit
# (build/helpers/NAME from tests/*/NAME.c): the escape probe, the listen
# socket's race and fd-passing peers, the hostile launcher, the raw-environment
# launcher, the memory hog of the fault suite, the signal sender of the nonroot
# suite, the kernel-feature probe every suite asks before it relies on a
# feature (kfeatures; make check prints its line first), the network suite's
# probe of what a command reaches around seccomp-notify isolation (netprobe);
# and valgrind's control.
HELPER_SRC := tests/probe/probe.c tests/serve/peerrace.c tests/serve/fdpass.c \
              tests/pid1/hostile-launcher.c tests/hostile/rawenv.c tests/fault/memhog.c \
              tests/nonroot/sig.c tests/kernel/kfeatures.c \
              tests/network/netprobe.c
HELPERS    := $(patsubst %.c,$(BUILD)/helpers/%,$(notdir $(HELPER_SRC)))
define helper_rule
$(BUILD)/helpers/$(basename $(notdir $(1))): $(1)
	@mkdir -p $$(@D)
	@echo "  CC    $$@ (static test helper)"
	@musl-gcc -static -O2 -std=gnu11 $(WARN) -o $$@ $$<
endef
$(foreach h,$(HELPER_SRC),$(eval $(call helper_rule,$(h))))
# valgrind's own control: a glibc program that leaks and reads uninitialised
# memory, unoptimised so that both stay in it.
$(BUILD)/helpers/faulty: tests/valgrind/faulty.c
	@mkdir -p $(@D)
	@echo "  CC    $@ (valgrind's control)"
	@$(HOST_CC) -O0 -g -o $@ $<
HELPERS += $(BUILD)/helpers/faulty
helpers: $(HELPERS)

# Each suite is tests/integration/NAME.sh (integration: run.sh), run against
# build/turninit; valgrind runs its own host build. rootless, as root, makes
# the user turninit-rootless and runs suites as it; docker starts its own
# containerd and dockerd and runs suites under them.
$(filter-out valgrind,$(SUITES)): $(BUILD)/turninit $(HELPERS)
	@bash tests/integration/$(if $(filter integration,$@),run,$@).sh

valgrind: $(BUILD)/vg/turninit $(HELPERS)
	@bash tests/integration/valgrind.sh

# Not part of make check: the mcp suite's agent tests with the newest Claude
# Code, Codex CLI and Gemini CLI from the npm registry, under Node.js 22 (the
# registry's binary package, pinned in tests/mcp/latest); prints each agent's
# version and result into build/test-results/mcp-latest.
mcp-latest: $(BUILD)/turninit $(HELPERS)
	@MCP_LATEST=1 bash tests/integration/mcp.sh

# Not part of make check: the packaging suite's p-build-two-folders-own-deps, a
# second clone of the tracked files, in a folder of another length, that builds
# its own dependencies from Debian's source packages and gives build/turninit's
# bytes. make check runs p-deps-name-no-build-path, which fails on the same
# fault (a build path in the dependencies' objects) without building them again.
repro: all $(HELPERS)
	@PACKAGING_REPRO=1 ITEST_ONLY='^p-build-two-folders-own-deps$$' bash tests/integration/packaging.sh

# Not part of make check: the pi suite with pi's newest release under Node.js
# 22 (the same pinned binary package); build/test-results/pi-latest.
pi-latest: $(BUILD)/turninit $(HELPERS)
	@PI_LATEST=1 bash tests/integration/pi.sh

# Replays the committed fuzz corpora under ASan and UBSan (gcc, no clang);
# for another architecture (make ARCH=aarch64 fuzz-replay), built static with
# its musl-gcc, no sanitizer, under qemu-user: build/test-results/fuzz-aarch64.
ifeq ($(CROSS_COMPILE),)
fuzz-replay: $(BUILD)/gen/trusted_keys.h
	@sh tests/fuzz/run.sh replay
else
fuzz-replay: $(BUILD)/gen/trusted_keys.h $(DEPS_STAMP)
	@command -v $(QEMU) >/dev/null || { echo "fuzz-replay: $(QEMU) not found (Debian's qemu-user-static; make setup installs it)"; exit 1; }
	@REPLAY_CC='$(MUSL_CC) -static -L$(MUSL_PREFIX)/lib' REPLAY_RUN=$(QEMU) REPLAY_RESULT=fuzz-$(ARCH) \
		FUZZ_OUT=$(OUT)/fuzz sh tests/fuzz/run.sh replay
endif

# Fuzzing itself (clang, libFuzzer): FUZZ_SECONDS per target. Not part of check.
FUZZ_SECONDS ?= 60
fuzz: $(BUILD)/gen/trusted_keys.h
	@sh tests/fuzz/run.sh fuzz $(FUZZ_SECONDS)

# Benchmarks (tests/bench/): interleaved rounds, medians and ratios, written to
# docs/benchmarks.md and docs/benchmarks/*.png. Not part of check.
bench: $(BUILD)/turninit
	@bash tests/bench/run.sh

# What each archive and object file costs in build/turninit, from the linker
# map of its link (build/turninit.map), and its stripped size.
size: $(OUT)/turninit
	@python3 tests/bench/size.py $(OUT)/turninit.map $(OUT)/turninit

# Mutation testing (tests/mutants/): every security step held by a test that
# fails without it. Two workers (MUTANTS_JOBS), each with its own scratch tree
# (build/mutants/tree, tree-1), never the same suite in both at once. Not part
# of check (its closing line gives its time and workers); check runs
# mutants-list, which only checks that every mutation still applies.
MUTANTS ?=
mutants: $(DEPS_STAMP)
	@python3 tests/mutants/run.py $(if $(MUTANTS),'$(MUTANTS)')
mutants-list:
	@python3 tests/mutants/run.py --check

# The include rules of init/'s folders, call circles and long functions
# (docs/HACKING.md), a self-test that each rule broken on purpose is caught,
# the exit codes of init/util/exit_codes.h against docs/exit-codes.md and
# --help, and every tracked C file as .clang-format lays it out
# (tests/layout/format.py --check; skipped without clang-format); writes
# build/test-results/layout.
layout:
	@python3 tests/layout/layout.py --check

# The test runner of the suites (begin, limit, end, results in
# tests/integration/lib.sh) on itself: no root, no container; writes
# build/test-results/selftest.
selftest:
	@bash tests/integration/selftest.sh

# The probe table of docs/security.md from the last `make sandbox` run, and its
# table of both architectures from the last `make unit` (build/seccomp-arches.md): the
# suites write below build/ and never a tracked file.
update-docs:
	@test -r $(BUILD)/stest/security.md || test -r $(BUILD)/seccomp-arches.md || \
		{ echo "run make sandbox (the probe table) or make unit (the table of both architectures) first"; exit 1; }
	if test -r $(BUILD)/stest/security.md; then cp $(BUILD)/stest/security.md docs/security.md; fi
	if test -r $(BUILD)/seccomp-arches.md; then python3 -c 'import re, sys; doc, t = open(sys.argv[1]).read(), open(sys.argv[2]).read(); \
		new, n = re.subn(r"<!-- arch-table: .*?<!-- arch-table end -->\n", lambda m: t, doc, flags=re.S); \
		sys.exit("arch-table markers missing in " + sys.argv[1]) if n != 1 else open(sys.argv[1], "w").write(new)' \
		docs/security.md $(BUILD)/seccomp-arches.md; fi

# Every suite runs even when one fails; the last line counts them all. The
# other architecture's dependencies (check-cross's first and longest part) are
# built from the start, beside the host's build, which leaves a core idle in
# its configure scripts; their output begins check-cross's log, and
# check-cross waits for them on their lock. They run in make check's process
# group with SIGINT as it comes (a background job of sh would ignore it), so
# a ^C at the terminal ends them too. After
# the builds and the quick checks, the suites, check-cross and fuzz-replay run
# CHECK_JOBS at a time (tests/check-steps.sh: a suite mostly waits on its
# containers, so three keep two cores busy), the longest first; NAME:AFTER
# starts NAME once AFTER has ended (packaging and arm64 use check-cross's
# aarch64 build; doclines runs docs/packaging.md's make ARCH=aarch64 in this
# tree, which must find it made). CHECK_JOBS=1 runs them one after the other.
CHECK_JOBS ?= 3
CHECK_ORDER := docker rootless check-cross network packaging:check-cross pid1 serve mcp pi integration hostile \
               fault audit nonroot valgrind fuzz-replay arm64:check-cross gvisor doclines:check-cross sandbox workload
ifneq ($(sort $(SUITES) check-cross fuzz-replay),$(sort $(foreach s,$(CHECK_ORDER),$(firstword $(subst :, ,$(s))))))
$(error CHECK_ORDER must name each of SUITES, check-cross and fuzz-replay)
endif
check: setup
	@rm -rf $(BUILD)/test-results && mkdir -p $(BUILD)/test-results/logs && date +%s > $(BUILD)/test-results/began
	@if $(CROSS_CAN); then \
		env --default-signal=INT,QUIT $(MAKE) --no-print-directory ARCH=$(CROSS_ARCH) \
			$(BUILD)/$(CROSS_ARCH)/musl/.cmocka-stamp >> $(BUILD)/test-results/logs/check-cross.log 2>&1 < /dev/null & \
	 fi; \
	 $(MAKE) --no-print-directory WERROR=1 $(BUILD)/helpers/kfeatures && \
	 $(BUILD)/helpers/kfeatures --line | tee $(BUILD)/test-results/kernel && \
	 $(MAKE) --no-print-directory -j$$(nproc) WERROR=1 all $(HELPERS) $(BUILD)/vg/turninit || exit 2; \
	 step() { n=$$1; shift; b=$$(date +%s); "$$@"; echo "$$n $$(($$(date +%s) - b))" >> $(BUILD)/test-results/steps; }; \
	 step mutants-list $(MAKE) --no-print-directory mutants-list; step layout $(MAKE) --no-print-directory layout; \
	 step selftest $(MAKE) --no-print-directory selftest; \
	 step unit $(MAKE) --no-print-directory -j$$(nproc) WERROR=1 unit; \
	 bash tests/check-steps.sh $(CHECK_JOBS) $(CHECK_ORDER); \
	 sh tests/summary.sh mutants-list layout selftest unit fuzz unit-$(CROSS_ARCH) fuzz-$(CROSS_ARCH) $(RESULTS)

# The other architecture in make check, after the unit tests, so that the
# suites find build/ARCH/turninit (on x86_64: aarch64): its dependencies
# (once, then reused), build/ARCH/turninit, its unit tests and its fuzz
# corpora under qemu-user, each make -j$(nproc); a build that fails leaves
# unit-ARCH without a result, one failure. Without its cross compiler,
# qemu-user or cmake, or off x86_64 (an arm64 host runs every suite on its
# own kernel), "skipped: ..." with the reason, and both results count one
# skip with that reason (build/test-results/NAME.skips).
CROSS_ARCH := $(filter-out $(HOST_ARCH),x86_64 aarch64)
CROSS_NEEDS := $(CROSS_ARCH)-linux-gnu-gcc qemu-$(CROSS_ARCH)-static cmake
# true in a recipe when check-cross builds: on x86_64, with CROSS_NEEDS
CROSS_CAN   := $(foreach t,$(CROSS_NEEDS),command -v $(t) >/dev/null &&) [ "$(HOST_ARCH)" = x86_64 ]
check-cross:
	@mkdir -p $(BUILD)/test-results; miss=; why=; \
	 for t in $(CROSS_NEEDS); do command -v $$t >/dev/null || miss="$$miss $$t"; done; \
	 [ -z "$$miss" ] || why="no$$miss for the $(CROSS_ARCH) build (make setup installs them)"; \
	 [ "$(HOST_ARCH)" = x86_64 ] || why="this machine is $(HOST_ARCH): its suites run on its own kernel, and the cross build is checked from x86_64"; \
	 if [ -n "$$why" ]; then \
		echo "skipped: $(CROSS_ARCH) unit tests and fuzz corpora under qemu-user: $$why"; \
		for r in unit-$(CROSS_ARCH) fuzz-$(CROSS_ARCH); do \
			echo "0 0 1" > $(BUILD)/test-results/$$r; echo "$$why" > $(BUILD)/test-results/$$r.skips; \
		done; exit 0; \
	 fi; \
	 rc=0; \
	 { $(MAKE) --no-print-directory -j$$(nproc) ARCH=$(CROSS_ARCH) WERROR=1 all && \
	   $(MAKE) --no-print-directory -j$$(nproc) ARCH=$(CROSS_ARCH) WERROR=1 unit; } || rc=1; \
	 $(MAKE) --no-print-directory ARCH=$(CROSS_ARCH) WERROR=1 fuzz-replay || rc=1; \
	 exit $$rc

# The man page, rendered from docs/turninit.1.md by go-md2man (Debian's
# go-md2man) and committed, so that a build needs no generator; make check's
# install suite checks that it matches its source. The first line becomes .TH.
man/turninit.1: docs/turninit.1.md
	@mkdir -p $(@D)
	sed '1s/^# turninit(1)$$/# turninit 1 "" "turninit $(VERSION)" "User Commands"/' $< | go-md2man > $@

# What `make install` puts where (docs/packaging.md): the binary in SBINDIR;
# the image and seal scripts in BINDIR as turninit-build-image and
# turninit-seal; the man page; the relink kit of LGPL-2.1 section 6 (object
# files, versions, how) in LIBDIR/turninit/relink; the Containerfiles in
# DATADIR/turninit; LICENSE and the licences of what is linked in under DOCDIR.
# The install directories are written into the installed build-image script
# (DATADIR) and name files in the man page's world: an absolute path of
# letters, digits and / . _ + - only, with no .. in it, else refused before
# anything is installed (a space would break every run of the script; $( ),
# ; or a quote would run code at each of them; .. would leave DESTDIR).
# DESTDIR, when given, likewise. The GNU names are the upper-case ones.
INSTALL_DIRS := PREFIX BINDIR SBINDIR LIBDIR MANDIR DATADIR DOCDIR $(if $(DESTDIR),DESTDIR)
install-check-dirs:
	@for v in $(foreach d,$(INSTALL_DIRS),'$(d)=$(subst ','\'',$($(d)))'); do \
		case $${v#*=} in \
		*/../*|*/..) ;; \
		/*) case $${v#*=} in *[!A-Za-z0-9/._+-]*) ;; *) continue ;; esac ;; \
		esac; \
		echo "install: $${v%%=*} must be an absolute path of letters, digits and / . _ + - only, without ..: $${v#*=}" >&2; exit 1; \
	done
# The documents the man page names, installed under DOCDIR beside LICENSE.
USER_DOCS := README.md $(addprefix docs/,manifest.md protocol.md mcp.md security.md audit.md \
               exit-codes.md design.md deployment.md packaging.md)
install: $(OUT)/turninit install-check-dirs
	$(INSTALL_PROGRAM) -D -m 0755 $(OUT)/turninit.unstripped $(DESTDIR)$(SBINDIR)/turninit
	@mkdir -p $(BUILD)/gen
	t=$(BUILD)/gen/turninit-build-image.$$$$; \
	 sed "s|^INSTALLED_DATADIR=.*|INSTALLED_DATADIR='$(DATADIR)/turninit'|" rootfs/build-image.sh > $$t && \
	 $(INSTALL) -D -m 0755 $$t $(DESTDIR)$(BINDIR)/turninit-build-image; rc=$$?; rm -f $$t; exit $$rc
	$(INSTALL) -D -m 0755 oci/seal.sh $(DESTDIR)$(BINDIR)/turninit-seal
	$(INSTALL) -D -m 0644 man/turninit.1 $(DESTDIR)$(MANDIR)/man1/turninit.1
	$(INSTALL) -D -m 0644 oci/Containerfile $(DESTDIR)$(DATADIR)/turninit/Containerfile
	$(INSTALL) -D -m 0644 oci/Containerfile.seal $(DESTDIR)$(DATADIR)/turninit/Containerfile.seal
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/turninit/relink
	$(INSTALL) -m 0644 $(MUSL_OBJ) $(MUSL_PREFIX)/versions.txt docs/relink.md $(DESTDIR)$(LIBDIR)/turninit/relink/
	$(INSTALL) -D -m 0644 LICENSE $(DESTDIR)$(DOCDIR)/LICENSE
	$(INSTALL) -m 0644 $(USER_DOCS) $(DESTDIR)$(DOCDIR)/
	for d in $(MUSL_PREFIX)/share/licenses/*/; do \
		$(INSTALL) -D -m 0644 $$d/copyright $(DESTDIR)$(DOCDIR)/third-party/$$(basename $$d)/copyright || exit 1; \
	done
install-strip:
	@$(MAKE) --no-print-directory install INSTALL_PROGRAM='$(INSTALL) -s$(if $(CROSS_COMPILE), --strip-program=$(STRIP))'
# Only what install put there, file by file; its own directories (under
# DOCDIR, DATADIR/turninit, LIBDIR/turninit) go when they are empty, the
# shared ones (BINDIR, MANDIR/man1, ...) stay.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/turninit $(DESTDIR)$(BINDIR)/turninit-build-image \
	      $(DESTDIR)$(BINDIR)/turninit-seal $(DESTDIR)$(MANDIR)/man1/turninit.1 \
	      $(DESTDIR)$(DATADIR)/turninit/Containerfile $(DESTDIR)$(DATADIR)/turninit/Containerfile.seal \
	      $(DESTDIR)$(DOCDIR)/LICENSE $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(USER_DOCS))) \
	      $(foreach d,$(notdir $(wildcard $(MUSL_PREFIX)/share/licenses/*)),$(DESTDIR)$(DOCDIR)/third-party/$(d)/copyright) \
	      $(addprefix $(DESTDIR)$(LIBDIR)/turninit/relink/,$(notdir $(MUSL_OBJ)) versions.txt relink.md)
	rmdir $(foreach d,$(notdir $(wildcard $(MUSL_PREFIX)/share/licenses/*)),$(DESTDIR)$(DOCDIR)/third-party/$(d)) \
	      $(DESTDIR)$(DOCDIR)/third-party $(DESTDIR)$(DOCDIR) \
	      $(DESTDIR)$(DATADIR)/turninit \
	      $(DESTDIR)$(LIBDIR)/turninit/relink $(DESTDIR)$(LIBDIR)/turninit 2>/dev/null || true

# A cross build's clean keeps its dependencies (build/ARCH/musl), as the
# host's keeps build/musl.
clean:
ifeq ($(CROSS_COMPILE),)
	rm -rf $(BUILD)/musl-obj $(BUILD)/host $(BUILD)/vg $(BUILD)/gen $(BUILD)/turninit \
	       $(BUILD)/turninit.unstripped $(BUILD)/helpers
else
	rm -rf $(addprefix $(OUT)/,musl-obj unit-obj unit fuzz turninit turninit.unstripped turninit.map)
endif

FORCE:
