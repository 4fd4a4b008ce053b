# kvlab - a terminal lab for KV-cache quantization.
#
# `make run` and `make test` do all the set-up on a fresh Debian machine:
# missing packages are installed with apt-get when run as root; otherwise the
# exact command is printed and make stops.

VERSION  := 0.1.0
PREFIX   ?= /usr/local
BUILD    ?= build

CC       ?= cc
CSTD     := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
OPT      ?= -O2 -g
SAN      ?=
CFLAGS   += $(CSTD) $(WARN) $(OPT) $(SAN) -MMD -MP -Icalc -Ikernels -I. \
            -DKVLAB_VERSION='"$(VERSION)"' -DKVLAB_DATADIR='"$(PREFIX)/share/kvlab/scenarios"'
LDFLAGS  += $(SAN)

# Debian packages providing each pkg-config module the build needs.
PKG_MODULES  := ncursesw libcjson check
APT_PACKAGES := libncurses-dev libcjson-dev check pkg-config locales tmux

# Recursive (=) so pkg-config runs only after `deps` has installed things.
CJSON_CFLAGS = $(shell pkg-config --cflags libcjson)
CURSES_LIBS  = $(shell pkg-config --libs ncursesw)
CJSON_LIBS   = $(shell pkg-config --libs libcjson)
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)

CALC_SRC  := $(wildcard calc/*.c)
KERN_SRC  := $(wildcard kernels/*.c kernels/cpu/*.c)
TUI_SRC   := $(wildcard tui/*.c)
TEST_SRC  := $(wildcard tests/test_*.c) tests/testutil.c
CALC_OBJ  := $(CALC_SRC:%.c=$(BUILD)/%.o)
KERN_OBJ  := $(KERN_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ   := $(TUI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
CALC_LIB  := $(BUILD)/libkvcalc.a
KERN_LIB  := $(BUILD)/libkvkern.a
TEST_BIN  := $(BUILD)/tests/run_tests

.PHONY: all run test asan bench clean help deps install test-gpu

# The CUDA plugin, built when nvcc is found (kvlab runs without it).
NVCC      ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
# Machine code for sm_80, sm_89 and sm_90a, and the sm_89 PTX (which has the
# E4M3 MMA of FP8 path A) for newer GPUs to compile at load; nvcc builds
# the three at once (--threads 0: one per core).
CUDA_ARCH := -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_89,code=[sm_89,compute_89] \
             -gencode=arch=compute_90a,code=sm_90a --threads 0
PLUGIN    := $(if $(NVCC),libkvlab_cuda.so)
PLUGIN_C  := kernels/kv_cache.c calc/minifloat.c calc/error.c
PLUGIN_O  := $(PLUGIN_C:%.c=$(BUILD)/pic/%.o)

# Build the program at ./kvlab (and libkvlab_cuda.so when nvcc is present).
all: kvlab $(PLUGIN)

# Open the interactive lab.
run: kvlab
	./kvlab

# A locale whose decimal point is a comma, for the locale-independence tests.
TEST_LOCALE := $(BUILD)/locale/de_DE.UTF-8
TEST_ENV = KVLAB_DATA=$(CURDIR)/scenarios KVLAB_TESTDATA=$(CURDIR)/tests/data \
           LOCPATH=$(CURDIR)/$(BUILD)/locale KVLAB_CUDA_PLUGIN=$(CURDIR)/libkvlab_cuda.so

# Build and run every test suite (unit, loader, command line).
test: kvlab $(PLUGIN) $(TEST_BIN) $(TEST_LOCALE)
	$(TEST_ENV) KVLAB_BIN=$(CURDIR)/kvlab $(TEST_BIN)

# Run the GPU suite: CUDA kernels against the CPU reference (skipped, saying why, without a GPU).
test-gpu: kvlab $(PLUGIN) $(TEST_BIN)
	$(TEST_ENV) KVLAB_BIN=$(CURDIR)/kvlab CK_RUN_SUITE=gpu $(TEST_BIN)

# Build with AddressSanitizer and UBSan in build-asan/ and run the tests there.
asan:
	$(MAKE) BUILD=build-asan OPT='-O1 -g -fno-omit-frame-pointer' \
	    SAN='-fsanitize=address,undefined -fno-sanitize-recover=undefined' \
	    test-asan

test-asan: $(BUILD)/kvlab $(TEST_BIN) $(TEST_LOCALE)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	$(TEST_ENV) KVLAB_BIN=$(CURDIR)/$(BUILD)/kvlab $(TEST_BIN)

$(TEST_LOCALE): | deps
	@mkdir -p $(dir $@)
	localedef -i de_DE -f UTF-8 $@

# Measure the codecs' and quantizers' throughput and the lab's frame times.
bench: $(BUILD)/bench_quant kvlab
	$(BUILD)/bench_quant
	tests/bench/bench_tui.sh $(CURDIR)/kvlab $(CURDIR)/scenarios

$(BUILD)/bench_quant: $(BUILD)/tests/bench/bench_quant.o $(CALC_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(CJSON_LIBS) -lm

# Install the program and its data under PREFIX (default /usr/local).
install: kvlab
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/kvlab
	install -m 755 kvlab $(DESTDIR)$(PREFIX)/bin/kvlab
	cp -R scenarios $(DESTDIR)$(PREFIX)/share/kvlab/

# Remove everything the build made.
clean:
	rm -rf build build-asan kvlab

# List the targets with their one-line descriptions.
help:
	@awk '/^# /{d=substr($$0,3)} /^[a-z][a-z-]*:/{if(d){split($$0,t,":");printf "  make %-8s %s\n",t[1],d};d=""}' $(MAKEFILE_LIST)

# Install missing build dependencies (apt-get as root; otherwise print the command).
deps:
	@missing=""; \
	command -v pkg-config >/dev/null 2>&1 || missing="pkg-config"; \
	for m in $(PKG_MODULES); do \
	    pkg-config --exists $$m 2>/dev/null || missing="$$missing $$m"; \
	done; \
	[ -f /usr/share/i18n/locales/de_DE ] || missing="$$missing locales"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        echo "kvlab: installing build dependencies ($$missing)"; \
	        DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PACKAGES) || exit 1; \
	    else \
	        echo "kvlab: missing build dependencies:$$missing"; \
	        echo "install them with:"; \
	        echo "    sudo apt-get install $(APT_PACKAGES)"; \
	        exit 1; \
	    fi; \
	fi

kvlab: $(BUILD)/kvlab
	@if [ "$(BUILD)" = build ]; then cp $< $@.tmp && mv -f $@.tmp $@; fi

$(BUILD)/kvlab: $(TUI_OBJ) $(KERN_LIB) $(CALC_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(CURSES_LIBS) $(CJSON_LIBS) -lm -lpthread -ldl

libkvlab_cuda.so: $(BUILD)/libkvlab_cuda.so
	cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/libkvlab_cuda.so: kernels/cuda/kv_attn.cu kernels/kv_cuda.h kernels/kv_attn.h $(PLUGIN_O)
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 -Xcompiler -fPIC,-fvisibility=hidden -shared $(CUDA_ARCH) \
	    -Icalc -Ikernels -Xptxas -warn-spills -o $@ kernels/cuda/kv_attn.cu $(PLUGIN_O) \
	    -cudart static -lrt -ldl -lpthread

$(BUILD)/pic/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(CALC_LIB): $(CALC_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(KERN_LIB): $(KERN_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(TEST_BIN): $(TEST_OBJ) $(BUILD)/tui/plotmath.o $(KERN_LIB) $(CALC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(CJSON_LIBS) -lm -lpthread -ldl

$(BUILD)/tests/%.o: tests/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CJSON_CFLAGS) -c -o $@ $<

-include $(CALC_OBJ:.o=.d) $(KERN_OBJ:.o=.d) $(TUI_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# ------------------------------------------------------------------------
# Fuzzing (tests/fuzz/, README "Fuzzing"): one libFuzzer harness per input
# parser, fuzz_NAME.c, with its seed corpus in tests/fuzz/corpus/NAME/.
# `make fuzz` builds them with clang (-fsanitize=fuzzer,address,undefined)
# and runs each for FUZZ_SECONDS, one after another, saving what breaks a
# harness in tests/fuzz/crashes/NAME/. `make test` replays every corpus file
# and every saved crash through the same harnesses built with $(CC) into one
# replay program, so it needs no clang (and runs them under the sanitizers
# in `make asan`). clang and libFuzzer are installed for `make fuzz` only.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_APT     := clang libclang-rt-dev
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_USES    := $(CALC_SRC) tui/cli.c
FUZZ_DIR     := $(BUILD)/libfuzzer
FUZZ_SANS    := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -DFUZZ_LIBFUZZER -Itests/fuzz
FUZZ_OBJ     := $(FUZZ_USES:%.c=$(FUZZ_DIR)/%.o)
FUZZ_REPLAY  := $(BUILD)/tests/fuzz/replay
REPLAY_OBJ   := $(FUZZ_SRC:%.c=$(BUILD)/%.o) $(BUILD)/tests/fuzz/replay.o

.PHONY: fuzz fuzz-deps fuzz-replay
.SECONDARY: $(FUZZ_OBJ)

# Build the fuzz harnesses with clang and run each for FUZZ_SECONDS (default 60).
fuzz: $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
	tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_NAMES)

# Replay the fuzz corpora and every saved crash through the harnesses.
fuzz-replay: $(FUZZ_REPLAY)
	$(TEST_ENV) $(FUZZ_REPLAY) tests/fuzz

test test-asan: fuzz-replay

$(FUZZ_REPLAY): $(REPLAY_OBJ) $(BUILD)/tui/cli.o $(CALC_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(CJSON_LIBS) -lm

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) | fuzz-deps
	$(FUZZ_CC) $(CFLAGS) $(CJSON_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(FUZZ_SANS) \
	    -o $@ $< $(FUZZ_OBJ) $(CJSON_LIBS) -lm

# The code under test, instrumented for coverage (libFuzzer's main left out).
$(FUZZ_DIR)/%.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CFLAGS) $(CJSON_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SANS) \
	    -c -o $@ $<

# Install clang with libFuzzer, for `make fuzz` only (apt-get as root; otherwise print the command).
fuzz-deps: | deps
	@mkdir -p $(FUZZ_DIR)
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return !d && n; }\n' \
	    > $(FUZZ_DIR)/probe.c
	@if ! $(FUZZ_CC) -fsanitize=fuzzer -o $(FUZZ_DIR)/probe $(FUZZ_DIR)/probe.c 2>/dev/null; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        echo "kvlab: installing clang and libFuzzer for make fuzz ($(FUZZ_APT))"; \
	        DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(FUZZ_APT) || exit 1; \
	    else \
	        echo "kvlab: make fuzz needs clang with libFuzzer ($(FUZZ_CC) -fsanitize=fuzzer failed);"; \
	        echo "install them with:"; \
	        echo "    sudo apt-get install $(FUZZ_APT)"; \
	        exit 1; \
	    fi; \
	fi

-include $(REPLAY_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%.d)
