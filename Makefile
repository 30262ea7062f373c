# Tally: make | make run | make test | make bench | make fuzz | make fmt
# `make run` and `make test` first install any missing Debian package (make deps).

CC       ?= cc
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow
CFLAGS   ?= -O2 -g
CPPFLAGS += -Isrc -MMD -MP
LIBS     := -lraft -luv -llz4 -lzstd -lsnappy -lz -lm
TOOLLIBS := -lrdkafka

DEB_PKGS := build-essential pkg-config libuv1-dev libraft-dev zlib1g-dev liblz4-dev libzstd-dev \
            libsnappy-dev librdkafka-dev kcat python3-pytest python3-confluent-kafka \
            python3-kafka clang

MODULES  := base proto record log meta config pstate replica net broker group txn admin
LIB_SRC  := $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c))
MAIN_SRC := src/main.c src/dispatch.c src/server_config.c
TOOL_SRC := $(wildcard tools/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)

B        := build
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/rel/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(B)/rel/%.o)
ASAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
A_LIB    := $(LIB_SRC:%.c=$(B)/asan/%.o)
A_MAIN   := $(MAIN_SRC:%.c=$(B)/asan/%.o)
A_UNIT   := $(UNIT_SRC:%.c=$(B)/asan/%.o)

.PHONY: all deps run test unit integration bench fuzz fuzz-smoke fmt fmt-check clean

all: $(B)/tallyd $(B)/tally

$(B)/rel/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(ASAN) $(CPPFLAGS) -c $< -o $@

$(B)/tallyd: $(MAIN_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(B)/asan/tallyd: $(A_MAIN) $(A_LIB)
	$(CC) $(ASAN) -o $@ $^ $(LIBS)

# `tally producers` encodes DescribeProducers with the broker's own protocol codec.
TOOL_LIB := $(B)/rel/src/base/err.o $(B)/rel/src/base/arena.o \
            $(patsubst %.c,$(B)/rel/%.o,$(wildcard src/proto/*.c))
$(B)/tally: $(TOOL_SRC:%.c=$(B)/rel/%.o) $(TOOL_LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(TOOLLIBS)

$(B)/asan/unit_tests: $(A_UNIT) $(A_LIB)
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

run: deps $(B)/tallyd
	$(B)/tallyd --set log.dirs=./data

unit: $(B)/asan/unit_tests
	$(B)/asan/unit_tests

test: deps
	@$(MAKE) --no-print-directory all $(B)/asan/tallyd $(B)/asan/unit_tests
	@bash tests/run.sh

# Benchmark helpers (bench/README.md); not part of `make test`.
BENCH_BIN := $(B)/bench/loadgen $(B)/bench/baseline_server $(B)/bench/sendfile_server \
             $(B)/bench/mock_cluster
$(B)/bench/loadgen: bench/loadgen.c src/record/record.c src/record/crc32c.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -Isrc -pthread -o $@ $^
$(B)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -pthread -o $@ $< -lrdkafka

bench: deps all $(BENCH_BIN)
	@bash bench/run.sh

# libFuzzer + ASan on the request decoder; FUZZ_SECONDS (default 600) bounds the run.
FUZZ_SECONDS ?= 600
FUZZ_CC := clang $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Isrc
$(B)/fuzz_request: fuzz/fuzz_request.c $(filter src/base/% src/proto/%,$(LIB_SRC))
	@mkdir -p $(B)
	$(FUZZ_CC) -o $@ $(filter %.c,$^) -luv
$(B)/fuzz_batch: fuzz/fuzz_batch.c $(filter src/base/% src/record/%,$(LIB_SRC))
	@mkdir -p $(B)
	$(FUZZ_CC) -o $@ $(filter %.c,$^) $(LIBS)
$(B)/fuzz_compressed: fuzz/fuzz_compressed.c $(filter src/base/% src/record/%,$(LIB_SRC))
	@mkdir -p $(B)
	$(FUZZ_CC) -o $@ $(filter %.c,$^) $(LIBS)

fuzz: deps $(B)/fuzz_request
	@mkdir -p $(B)/fuzz-corpus && cp fuzz/seeds/* $(B)/fuzz-corpus/ 2>/dev/null || true
	$(B)/fuzz_request -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 $(B)/fuzz-corpus

fuzz-smoke: $(B)/fuzz_request
	@mkdir -p $(B)/fuzz-corpus && cp fuzz/seeds/* $(B)/fuzz-corpus/ 2>/dev/null || true
	$(B)/fuzz_request -max_total_time=30 -rss_limit_mb=2048 $(B)/fuzz-corpus

FMT_FILES = $(shell git ls-files '*.c' '*.h')
fmt:
	clang-format -i $(FMT_FILES)
fmt-check:
	clang-format --dry-run --Werror $(FMT_FILES)

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
