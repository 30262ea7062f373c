# Tally: make | make run | make test | make bench | make fuzz | make fmt
# `make run` and `make test` first install any missing Debian package (make deps).

# Asserts (CONVENTIONS.md: assert() only for what a bug in Tally alone can break — an offset of
# the log moving backwards, a state-machine transition that cannot happen — never for what a
# client, a file or the clock can cause, which get an error path and a test):
# - every build compiles them in: the test build (ASan objects, unit tests, fuzzers) and the
#   release tallyd alike. NDEBUG is never defined. Where SQLite drops its asserts from release
#   builds for speed, a broker that finds its own state broken has nothing right left to serve
#   from it: stopping (a restart recovers from the files, replication moves leadership) beats
#   acknowledging writes on a log whose offsets went backwards;
# - so an assert costs O(1), or O(a small bound) such as one producer's window of 5 batches or
#   one leader-epoch cache: nothing that walks a log, a table of producers or a directory;
# - each sits where its invariant would first be broken, with a comment saying why it holds.
CC       ?= cc
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow
CFLAGS   ?= -O2 -g
CPPFLAGS += -Isrc -MMD -MP
LIBS     := -lraft -luv -llz4 -lzstd -lsnappy -lz -lm -lmicrohttpd -lcjson -lssl -lcrypto -lpthread
TOOLLIBS := -lrdkafka -lssl -lcrypto

DEB_PKGS := build-essential pkg-config libuv1-dev libraft-dev zlib1g-dev liblz4-dev libzstd-dev \
            libsnappy-dev librdkafka-dev kcat python3-pytest python3-confluent-kafka \
            python3-kafka python3-pytest-xdist clang clang-format strace golang-go \
            golang-github-shopify-sarama-dev golang-github-xdg-go-scram-dev \
            iproute2 nftables libmicrohttpd-dev prometheus libssl-dev valgrind \
            libcjson-dev xxd chromium

MODULES  := base proto record log meta authz config sasl controller pstate replica net broker group txn admin \
            exporter
LIB_SRC  := $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c))
MAIN_SRC := src/main.c src/dispatch.c src/dispatch_sasl.c src/server_config.c src/lifecycle.c
TOOL_SRC := $(wildcard tools/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)

B        := build
# The web console's files (console/, docs/console.md), built into the binary as a generated
# C table (never committed).
ASSET_SRC := $(sort $(wildcard console/*.html console/*.js console/*.css))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/rel/%.o) $(B)/rel/gen/console_assets.o
MAIN_OBJ := $(MAIN_SRC:%.c=$(B)/rel/%.o)
ASAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# The test build (ASan tallyd, unit tests) compiles in the fault hooks of base/fault.h
# (TALLY_TEST_FAULT); the release tallyd has none (tests/integration/test_build_hooks.py).
TEST_HOOKS := -DTALLY_TEST_HOOKS
A_LIB    := $(LIB_SRC:%.c=$(B)/asan/%.o) $(B)/asan/gen/console_assets.o
A_MAIN   := $(MAIN_SRC:%.c=$(B)/asan/%.o)
A_UNIT   := $(UNIT_SRC:%.c=$(B)/asan/%.o)

.PHONY: all deps run test unit integration bench chaos fuzz fuzz-smoke fuzz-seeds fmt fmt-check clean \
        kafka-bin install

all: $(B)/tallyd $(B)/tally $(B)/enricher

$(B)/rel/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(ASAN) $(TEST_HOOKS) $(CPPFLAGS) -c $< -o $@

$(B)/gen/console_assets.c: $(ASSET_SRC) console/embed.sh
	@mkdir -p $(dir $@)
	sh console/embed.sh $(ASSET_SRC) > $@.tmp && mv $@.tmp $@

$(B)/rel/gen/console_assets.o: $(B)/gen/console_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(B)/asan/gen/console_assets.o: $(B)/gen/console_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(ASAN) $(CPPFLAGS) -c $< -o $@

$(B)/tallyd: $(MAIN_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(B)/asan/tallyd: $(A_MAIN) $(A_LIB)
	$(CC) $(ASAN) -o $@ $^ $(LIBS)

# `tally producers` encodes DescribeProducers with the broker's own protocol codec; `tally
# configs --help` prints the broker's own config table; `tally users scram set` salts the
# password with the broker's own SCRAM code (src/sasl/scram.c, OpenSSL's libcrypto).
TOOL_LIB := $(B)/rel/src/base/err.o $(B)/rel/src/base/arena.o $(B)/rel/src/base/jhash.o \
            $(B)/rel/src/config/table.o \
            $(B)/rel/src/config/check.o \
            $(B)/rel/src/sasl/sasl.o $(B)/rel/src/sasl/scram.o \
            $(patsubst %.c,$(B)/rel/%.o,$(wildcard src/proto/*.c))
$(B)/tally: $(TOOL_SRC:%.c=$(B)/rel/%.o) $(TOOL_LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(TOOLLIBS)

# Kafka's tool names (docs/kafka-cli.md): links to tally, which runs as the tool it is called by
# (tools/kafka_names.c). `make kafka-bin` makes them in build/kafka-bin/ for the tests; `make
# install` puts tally and tallyd in $(PREFIX)/bin and the links in a directory of their own,
# $(PREFIX)/lib/tally/kafka-bin/, which is on nobody's PATH unless added (a Kafka installation's
# own kafka-*.sh are not shadowed).
KAFKA_TOOLS := kafka-topics.sh kafka-configs.sh kafka-consumer-groups.sh kafka-transactions.sh \
               kafka-log-dirs.sh kafka-reassign-partitions.sh kafka-acls.sh
PREFIX   ?= /usr/local
DESTDIR  ?=
kafka-bin: $(B)/tally
	@mkdir -p $(B)/kafka-bin
	@for t in $(KAFKA_TOOLS); do ln -sfn ../tally $(B)/kafka-bin/$$t; done

install: $(B)/tallyd $(B)/tally
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/tally/kafka-bin
	install -m 755 $(B)/tally $(B)/tallyd $(DESTDIR)$(PREFIX)/bin/
	@for t in $(KAFKA_TOOLS); do \
	  ln -sfn ../../../bin/tally $(DESTDIR)$(PREFIX)/lib/tally/kafka-bin/$$t; done

# The exactly-once example (docs/exactly-once.md): librdkafka only.
$(B)/enricher: examples/enricher.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) -o $@ $< -lrdkafka

# The unit tests also cover the checker of `tally verify` (tools/verify_check.c) and the pure
# pieces of the cluster commands (tools/cluster_view.c) and of `tally partitions reassign`
# (tools/reassign_plan.c), and the client security settings of the CLI (tools/tally_security.c);
# none uses librdkafka.
$(B)/asan/unit_tests: $(A_UNIT) $(A_LIB) $(B)/asan/tools/verify_check.o $(B)/asan/tools/cluster_view.o \
                      $(B)/asan/tools/tally_security.o \
                      $(B)/asan/tools/reassign_plan.o
	$(CC) $(ASAN) -o $@ $^ $(LIBS)

# Installs the Debian packages the build and the tests need, only those missing.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# Builds everything the README's tour uses next (tally, enricher), not only the broker.
run: deps all
	$(B)/tallyd --set log.dirs=./data

unit: $(B)/asan/unit_tests
	$(B)/asan/unit_tests

test: deps
	@$(MAKE) --no-print-directory all $(B)/asan/tallyd $(B)/asan/unit_tests
	@bash tests/run.sh

# The chaos suite (tests/chaos/chaos.py, docs/verify.md): `tally verify` against brokers the
# scenarios start themselves, each >= 100,000 records and >= 20 faults, and the replicated
# cluster's process tests at length (rep-*); CHAOS=name... picks scenarios. Not part of
# `make test`, which runs only their short versions. Debian's Python, as tests/run.sh: the
# rep-* scenarios drive the cluster with its confluent-kafka.
CHAOS ?=
chaos: deps all $(B)/asan/tallyd
	@/usr/bin/python3 tests/chaos/chaos.py $(CHAOS)

# Benchmark helpers (bench/README.md); not part of `make test`.
BENCH_BIN := $(B)/bench/loadgen $(B)/bench/baseline_server $(B)/bench/sendfile_server \
             $(B)/bench/mock_cluster $(B)/bench/latency $(B)/bench/tls_server
$(B)/bench/loadgen: bench/loadgen.c src/record/record.c src/record/crc32c.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -Isrc -pthread -o $@ $^ -lssl -lcrypto
$(B)/bench/tls_server: bench/tls_server.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -pthread -o $@ $< -lssl -lcrypto
$(B)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -pthread -o $@ $< -lrdkafka

bench: deps all $(BENCH_BIN)
	@bash bench/run.sh

# libFuzzer + ASan + UBSan targets (each file's head comment says what it feeds):
# fuzz_request (request decoder), fuzz_batch (record batch validator), fuzz_dispatch (whole
# requests into an in-process broker), fuzz_compressed (compressed batches). `make fuzz` runs
# every target in FUZZ_TARGETS for FUZZ_SECONDS each (default 600), one after the other, from
# its seeds (fuzz/seeds for fuzz_request, else fuzz/seeds_<name> when present); a target whose
# source is absent is skipped. `make fuzz-smoke` does the same for 30 s each.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= fuzz_request fuzz_batch fuzz_dispatch fuzz_compressed fuzz_tls
FUZZ_CC := clang $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Isrc
$(B)/fuzz_request: fuzz/fuzz_request.c $(filter src/base/% src/proto/%,$(LIB_SRC))
	@mkdir -p $(B)
	$(FUZZ_CC) -o $@ $(filter %.c,$^) $(LIBS)
$(B)/fuzz_batch: fuzz/fuzz_batch.c $(filter src/base/% src/record/%,$(LIB_SRC))
	@mkdir -p $(B)
	$(FUZZ_CC) -o $@ $(filter %.c,$^) $(LIBS)
$(B)/fuzz_compressed: fuzz/fuzz_compressed.c $(filter src/base/% src/record/%,$(LIB_SRC))
	@mkdir -p $(B)
	$(FUZZ_CC) -o $@ $(filter %.c,$^) $(LIBS)
# fuzz_tls (the TLS input path, net/tls.c): in the CI smokes (tests/run.sh); as a campaign
#   `make fuzz FUZZ_TARGETS=fuzz_tls FUZZ_SECONDS=...`.
$(B)/fuzz_tls: fuzz/fuzz_tls.c src/net/tls.c
	@mkdir -p $(B)
	$(FUZZ_CC) -o $@ $(filter %.c,$^) $(LIBS)

# fuzz_dispatch links the whole broker, so its objects are built one by one (incrementally)
# with coverage instrumentation; only the target's own file is held to -Werror under clang.
F_FLAGS  := $(CSTD) -O1 -g -fsanitize=fuzzer-no-link,address,undefined \
            -fno-sanitize-recover=undefined -fno-omit-frame-pointer $(CPPFLAGS)
F_OBJ    := $(patsubst %.c,$(B)/fuzz/%.o,$(LIB_SRC) src/dispatch.c src/dispatch_sasl.c \
                                                  src/server_config.c) \
            $(B)/fuzz/gen/console_assets.o
$(B)/fuzz/gen/console_assets.o: $(B)/gen/console_assets.c
	@mkdir -p $(dir $@)
	clang $(F_FLAGS) -c $< -o $@
$(B)/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(F_FLAGS) -c $< -o $@
$(B)/fuzz/fuzz/fuzz_dispatch.o: fuzz/fuzz_dispatch.c
	@mkdir -p $(dir $@)
	clang $(F_FLAGS) $(WARN) -c $< -o $@
$(B)/fuzz_dispatch: $(B)/fuzz/fuzz/fuzz_dispatch.o $(F_OBJ)
	clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(LIBS)

# Regenerates the committed seed corpora (fuzz/seeds and fuzz/seeds_dispatch).
$(B)/make_seeds: fuzz/make_seeds.c $(filter src/base/% src/proto/%,$(LIB_SRC))
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) -O1 -g -Isrc -o $@ $(filter %.c,$^) $(LIBS)
fuzz-seeds: $(B)/make_seeds
	@mkdir -p fuzz/seeds fuzz/seeds_dispatch
	$(B)/make_seeds fuzz/seeds
	$(B)/make_seeds --dispatch fuzz/seeds_dispatch

# Runs each target of FUZZ_TARGETS for $(1) seconds; fails if any target failed.
define run_fuzz_targets
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  if [ ! -f fuzz/$$t.c ]; then echo "== $$t: skipped (no fuzz/$$t.c)"; continue; fi; \
	  $(MAKE) --no-print-directory $(B)/$$t || { failed="$$failed $$t"; continue; }; \
	  seeds=fuzz/seeds_$${t#fuzz_}; [ $$t = fuzz_request ] && seeds=fuzz/seeds; \
	  mkdir -p $(B)/$$t-corpus; [ -d $$seeds ] && cp $$seeds/* $(B)/$$t-corpus/ 2>/dev/null; \
	  echo "== $$t: $(1) s, log in $(B)/$$t-fuzz.log"; \
	  if $(B)/$$t -max_total_time=$(1) -rss_limit_mb=2048 $(B)/$$t-corpus >$(B)/$$t-fuzz.log 2>&1; \
	  then grep -E '^#[0-9]+' $(B)/$$t-fuzz.log | tail -n 1; \
	  else tail -n 40 $(B)/$$t-fuzz.log; failed="$$failed $$t"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz FAILED:$$failed"; exit 1; fi
endef

fuzz: deps
	$(call run_fuzz_targets,$(FUZZ_SECONDS))

fuzz-smoke:
	$(call run_fuzz_targets,30)

FMT_FILES = $(shell git ls-files '*.c' '*.h')
fmt:
	clang-format -i $(FMT_FILES)
fmt-check:
	clang-format --dry-run --Werror $(FMT_FILES)

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
