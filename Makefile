# persistd — build, test, run and benchmark.
# Every target installs the Debian packages it needs first, so a fresh clone works with one command.

SWIFT        ?= swift
PREFIX       ?= /usr/local
DESTDIR      ?=
CONFIG       ?= debug
DEB_PACKAGES := libsqlite3-dev libsystemd-dev pkg-config sqlite3 systemd
RUN_DIR      := $(CURDIR)/.persistd
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test test-tsan run bench install clean

all: build

## deps: install the Debian packages that are missing (apt-get update only when something is).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIG)

## test: every test, then the concurrency tests again under the thread sanitizer.
test: deps
	$(SWIFT) build --build-tests
	PERSIST_BIN_DIR=$$($(SWIFT) build --show-bin-path) $(SWIFT) test --skip-build
	$(MAKE) test-tsan

test-tsan: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build/tsan --filter 'Concurrency'

run: build
	mkdir -p $(RUN_DIR)
	$$($(SWIFT) build -c $(CONFIG) --show-bin-path)/persistd \
	  --model Examples/Beers.model.json \
	  --store $(RUN_DIR)/store.sqlite \
	  --socket $(RUN_DIR)/persistd.sock

## bench: release build, then every workload of Benchmarks/ (BENCHMARKS.md); installs Redis
## (the baseline of workload 7) only when it is missing. Never part of `make test`.
BENCH_PACKAGES := redis-server redis-tools
BENCH_ARGS     ?=
bench: deps
	@missing=""; for p in $(BENCH_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	$(SWIFT) build -c release --product persistd
	$(SWIFT) build -c release --product persistctl
	$(SWIFT) build -c release --product persistd-bench
	$$($(SWIFT) build -c release --show-bin-path)/persistd-bench --json .build/bench.json $(BENCH_ARGS)

install: 
	$(SWIFT) build -c release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $$($(SWIFT) build -c release --show-bin-path)/persistd $(DESTDIR)$(PREFIX)/bin/persistd
	install -m 0755 $$($(SWIFT) build -c release --show-bin-path)/persistctl $(DESTDIR)$(PREFIX)/bin/persistctl

clean:
	$(SWIFT) package clean
	rm -rf $(RUN_DIR)
