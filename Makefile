# persistd — build, test, run and benchmark.
# Every target installs the Debian packages it needs first, so a fresh clone works with one command.

SWIFT        ?= swift
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       ?= $(PREFIX)/bin
SYSCONFDIR   ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
DATADIR      ?= $(PREFIX)/share
DOCDIR       ?= $(DATADIR)/doc/persistd
# systemd looks for units, sysusers.d and tmpfiles.d under /usr/lib and /usr/local/lib alike.
UNITDIR      ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR  ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR  ?= $(PREFIX)/lib/tmpfiles.d
CONFIG       ?= debug
DEB_PACKAGES := binutils libjemalloc-dev libsqlite3-dev libsystemd-dev mount pkg-config procps sqlite3 systemd util-linux
RUN_DIR      := $(CURDIR)/.persistd
# Release builds (bench, install, CONFIG=release) link the Swift runtime and Foundation into the
# executables: about 6 MiB less idle memory for persistd (docs/daemon.md, "Memory"). They link
# with the toolchain's lld, which packs the relative relocations (glibc 2.36 reads them) and
# places the functions of Build/hot-functions.txt first, and export no symbols (SwiftPM asks for
# -export-dynamic): about 6 MiB less again.
RELEASE_FLAGS := --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
                 -Xlinker --symbol-ordering-file=$(CURDIR)/Build/hot-functions.txt -Xlinker --no-warn-symbol-ordering \
                 -Xlinker --no-export-dynamic
RELEASE_BUILD := $(SWIFT) build -c release $(RELEASE_FLAGS)
STATIC_FLAG  := $(if $(filter release,$(CONFIG)),$(RELEASE_FLAGS))
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test test-static test-tsan test-fuzz-corpus fuzz stress run bench bench-instructions hot-functions install install-bin install-systemd clean

all: build

## deps: install the Debian packages that are missing (apt-get update only when something is).
# install_missing(packages): apt-get install the ones not installed (apt-get update only then).
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PACKAGES))

build: deps
	$(SWIFT) build -c $(CONFIG) $(STATIC_FLAG)

# Swift Testing runs at most this many test cases at once (its default: twice the processors).
# Our tests are synchronous and many wait on a daemon's socket; admitted beyond the cooperative
# pool's threads (one per processor), a test waits for a thread with its time limit already
# running, and a loaded machine turns that wait into time-limit failures.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= $(shell nproc)

## test: every test, then the concurrency tests again under the thread sanitizer.
## The corpus compile test builds a package of its own (minutes of two cores): it runs alone,
## after the rest, so the daemon tests' time limits are not eaten by its compiler.
test: deps
	$(SWIFT) build --build-tests
	PERSIST_BIN_DIR=$$($(SWIFT) build --show-bin-path) $(SWIFT) test --skip-build --skip CorpusCompileTests
	PERSIST_BIN_DIR=$$($(SWIFT) build --show-bin-path) $(SWIFT) test --skip-build --filter CorpusCompileTests
	$(MAKE) test-static
	$(MAKE) test-fuzz-corpus
	$(MAKE) test-tsan

## test-static: persistd as installed (release, Swift runtime linked statically) runs a real session:
## StaticLinkTests against that binary. Needs the test build of `make test`. Then the recorder of
## `make hot-functions` runs once against it, into .build/, so that it keeps working.
test-static: deps
	$(call install_missing,valgrind)
	$(RELEASE_BUILD) --product persistd
	$(RELEASE_BUILD) --product persistctl
	PERSIST_BIN_DIR=$$($(RELEASE_BUILD) --show-bin-path) PERSIST_EXPECT_STATIC=1 \
	  $(SWIFT) test --skip-build --filter StaticLinkTests
	timeout 600 Build/record-hot-functions.sh $$($(RELEASE_BUILD) --show-bin-path) .build/hot-functions-check.txt
	@count=$$(grep -vc '^#' .build/hot-functions-check.txt); test "$$count" -gt 2000 || \
	  { echo "Build/record-hot-functions.sh recorded only $$count functions of persistd"; exit 1; }

## test-fuzz-corpus: each fuzz target, built normally, replays its seed corpus (Fuzz/Corpus/<target>/).
test-fuzz-corpus:
	for t in $(FUZZ_TARGETS); do $(SWIFT) build --product $$t >/dev/null || exit 1; done
	for t in $(FUZZ_TARGETS); do $$($(SWIFT) build --show-bin-path)/$$t Fuzz/Corpus/$$t || exit 1; done

test-tsan: deps
	$(SWIFT) test --sanitize=thread -Xswiftc -DPERSIST_PTHREAD_LOCKS --scratch-path .build/tsan --filter 'Concurrency'

## fuzz: each fuzz target (Fuzz/, docs/RELIABILITY.md) under libFuzzer and AddressSanitizer for
## FUZZ_SECONDS seconds, from its seed corpus. New inputs go to .build/fuzz-corpus/<target>, crashes
## to .build/fuzz-artifacts/<target>/ (replay one with the normal build: .build/debug/<target> FILE).
FUZZ_TARGETS := FuzzWireRequest FuzzPredicateParser FuzzXcodeModel FuzzPredicateDifferential
FUZZ_SECONDS ?= 60
FUZZ_ARGS    ?=
# SwiftPM passes each --sanitize as a -sanitize= flag of its own and the compiler keeps only the
# last one: the combined flag, given again, keeps the coverage instrumentation libFuzzer needs.
# The build log goes to .build/fuzz-build.log, shown only on failure: SwiftPM also builds the
# codegen plugin's tool, which cannot link with libFuzzer's `main` and is not needed here, so it
# reports that link error and goes on. libxml2 writes a message to stderr for every malformed
# XML input: FuzzXcodeModel's stderr is closed (libFuzzer's own output stays; replay a crash
# file with the normal build to see its message). Leak detection is off: Foundation leaks a
# CFError for every property list it fails to parse (the legacy model reader's input). The
# differential target's memory grows by some hundred MB over minutes (AddressSanitizer's
# quarantine, SQLite's cache): the RSS limit is 4 GB rather than 2.
FUZZ_BUILD   := $(SWIFT) build --scratch-path .build/fuzz --sanitize=fuzzer --sanitize=address \
                -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
fuzz: deps
	@mkdir -p .build; for t in $(FUZZ_TARGETS); do echo "building $$t (libFuzzer, AddressSanitizer)"; \
	  $(FUZZ_BUILD) --product $$t > .build/fuzz-build.log 2>&1 || { cat .build/fuzz-build.log; exit 1; }; done
	bin=$$($(FUZZ_BUILD) --show-bin-path); failed=""; for t in $(FUZZ_TARGETS); do \
	  mkdir -p .build/fuzz-corpus/$$t .build/fuzz-artifacts/$$t && \
	  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 $$bin/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -detect_leaks=0 -print_final_stats=1 \
	    -artifact_prefix=.build/fuzz-artifacts/$$t/ $$(test $$t != FuzzXcodeModel || echo -close_fd_mask=2) $(FUZZ_ARGS) \
	    .build/fuzz-corpus/$$t Fuzz/Corpus/$$t || failed="$$failed $$t"; \
	done; test -z "$$failed" || { echo "crashed:$$failed (inputs in .build/fuzz-artifacts/)"; exit 1; }

## stress: the long variants of the crash and fault tests (docs/RELIABILITY.md): 120 kill -9 rounds, saves of up to
## 10,000 objects; 40 kill -9 rounds during a migration; 1,000 saves per phase of the WAL test; 300 simulated power
## cuts per synchronous mode; 8 contexts x 5,000 saves under the thread sanitizer.
stress: deps
	$(SWIFT) build --build-tests
	PERSIST_CRASH_ROUNDS=120 PERSIST_CRASH_MAX_SAVE=10000 PERSIST_MIGRATION_CRASH_ROUNDS=40 PERSIST_WAL_SAVES=1000 \
	  PERSIST_POWER_CUTS=300 PERSIST_BIN_DIR=$$($(SWIFT) build --show-bin-path) \
	  $(SWIFT) test --skip-build --filter 'CrashRecoveryTests|Abuse|MigrationCrashTests|WALBoundTests|FaultInjectionPowerLossTests'
	PERSIST_TSAN_SAVES=5000 $(SWIFT) test --sanitize=thread -Xswiftc -DPERSIST_PTHREAD_LOCKS --scratch-path .build/tsan --filter 'ContextConcurrencyStressTests'

run: build
	mkdir -p $(RUN_DIR)
	$$($(SWIFT) build -c $(CONFIG) $(STATIC_FLAG) --show-bin-path)/persistd \
	  --model Examples/Beers.model.json \
	  --store $(RUN_DIR)/store.sqlite \
	  --socket $(RUN_DIR)/persistd.sock

## bench: release build, then every workload of Benchmarks/ (BENCHMARKS.md); installs Redis
## (the baseline of workload 7) only when it is missing. Never part of `make test`.
BENCH_PACKAGES := redis-server redis-tools
BENCH_ARGS     ?=
bench: deps
	$(call install_missing,$(BENCH_PACKAGES))
	$(RELEASE_BUILD) --product persistd
	$(RELEASE_BUILD) --product persistctl
	$(RELEASE_BUILD) --product persistd-bench
	$$($(RELEASE_BUILD) --show-bin-path)/persistd-bench --json .build/bench.json $(BENCH_ARGS)

## bench-instructions: instructions per object, lookup or save of workloads 1 to 6, 9 and 10, ours against
## raw SQLite, counted by callgrind in the steady state (Benchmarks/instructions.py): figures that
## do not move with the machine's load, for comparing two versions of the code. Installs valgrind
## when it is missing. Never part of `make test`.
bench-instructions: deps
	$(call install_missing,valgrind python3)
	$(RELEASE_BUILD) --product persistd-bench
	python3 Benchmarks/instructions.py $$($(RELEASE_BUILD) --show-bin-path)/persistd-bench --json .build/bench-instructions.json

## hot-functions: records the functions persistd runs in a typical life under callgrind and writes
## Build/hot-functions.txt, the order of the release link (docs/daemon.md, "Memory"). Run it again
## when the code a daemon runs changed much; a stale list only loses some of the gain.
hot-functions: deps
	$(call install_missing,valgrind)
	$(RELEASE_BUILD) --product persistd
	$(RELEASE_BUILD) --product persistctl
	Build/record-hot-functions.sh $$($(RELEASE_BUILD) --show-bin-path) Build/hot-functions.txt
	@# SwiftPM does not know the list is an input of the link: remove the release executables so
	@# that the next release build links them again with the new list.
	bin=$$($(RELEASE_BUILD) --show-bin-path); rm -f $$bin/persistd $$bin/persistctl $$bin/persistd-bench

## install: binaries, systemd units, sysusers.d/tmpfiles.d snippets, example config and docs.
## `make install PREFIX=/usr DESTDIR=/tmp/pkg` lays out a Debian package tree. Then, on the host:
## systemd-sysusers; systemd-tmpfiles --create persistd.conf; systemctl daemon-reload;
## systemctl enable --now persistd.socket (see docs/systemd.md).
install: install-bin install-systemd

install-bin:
	$(RELEASE_BUILD) --product persistd
	$(RELEASE_BUILD) --product persistctl
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $$($(RELEASE_BUILD) --show-bin-path)/persistd $(DESTDIR)$(BINDIR)/persistd
	install -m 0755 $$($(RELEASE_BUILD) --show-bin-path)/persistctl $(DESTDIR)$(BINDIR)/persistctl

## install-systemd: everything but the binaries (the systemd tests use it with the debug build).
UNITS := persistd.socket persistd.service persistd@.socket persistd@.service
install-systemd:
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
	  $(DESTDIR)$(SYSCONFDIR)/persistd $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DATADIR)/persistd
	for unit in $(UNITS); do \
	  sed -e 's|@bindir@|$(BINDIR)|g' -e 's|@sysconfdir@|$(SYSCONFDIR)|g' -e 's|@docdir@|$(DOCDIR)|g' \
	    systemd/$$unit.in > $(DESTDIR)$(UNITDIR)/$$unit && chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done
	install -m 0644 systemd/persistd.sysusers $(DESTDIR)$(SYSUSERSDIR)/persistd.conf
	install -m 0644 systemd/persistd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/persistd.conf
	install -m 0644 Examples/Beers.model.json $(DESTDIR)$(DATADIR)/persistd/Beers.model.json
	sed -e 's|/usr/local/share|$(DATADIR)|g' systemd/persistd.conf.example > $(DESTDIR)$(DOCDIR)/examples/persistd.conf
	# The live config is the administrator's: installed only when there is none.
	[ -e $(DESTDIR)$(SYSCONFDIR)/persistd/persistd.conf ] || \
	  install -m 0644 $(DESTDIR)$(DOCDIR)/examples/persistd.conf $(DESTDIR)$(SYSCONFDIR)/persistd/persistd.conf
	install -m 0644 docs/systemd.md docs/daemon.md $(DESTDIR)$(DOCDIR)/

clean:
	$(SWIFT) package clean
	rm -rf $(RUN_DIR)
