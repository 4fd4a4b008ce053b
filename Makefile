# kvlab - a terminal lab for KV-cache quantization.
#
# `make run` and `make test` do all the set-up on a fresh Debian machine:
# missing packages are installed with apt-get when run as root; otherwise the
# exact command is printed and make stops.

VERSION  := 0.1.0
BUILD    ?= build

# ------------------------------------------------------------------------
# Where `make install` puts things, under DESTDIR/PREFIX. kvlab looks for its
# data and plugin beside itself first (a build tree's, then ../share/kvlab
# and ../lib/kvlab), so an installed tree still works when moved; PREFIX is
# compiled into calc/paths.c alone, as the place to look after that, so a
# PREFIX given to make install rebuilds that one file. Give make and make
# install the same PREFIX, and make install builds nothing.
PREFIX    ?= /usr/local
BINDIR    := bin
DATADIR   := share/kvlab
PLUGINDIR := lib/kvlab
MANDIR    := share/man/man1
COMPDIR   := share/bash-completion/completions
# The run-time data, installed under DATADIR as laid out in the tree, and
# the stored results of GPU runs (assets/stored_results.sh writes them),
# installed as DATADIR/stored.
DATA      := scenarios lessons
STORED    := assets/stored

# ------------------------------------------------------------------------
# Flags. CPPFLAGS, CFLAGS, LDFLAGS, LDLIBS and NVCCFLAGS are the user's (e.g.
# `make CFLAGS=-O0`); what the build needs is added to them, never replaced.
CFLAGS    ?= -O2 -g
NVCCFLAGS ?= -O3
SAN       ?=
ALL_CPPFLAGS = -Icalc -Ikernels -I. -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
               -DKVLAB_VERSION='"$(VERSION)"' $(CPPFLAGS)
# The places under PREFIX, for calc/paths.c and its test only.
PATHS_CPPFLAGS = -DKVLAB_PREFIX='"$(PREFIX)"' -DKVLAB_DATADIR='"$(DATADIR)/scenarios"' \
                 -DKVLAB_PLUGINDIR='"$(PLUGINDIR)"' -DKVLAB_LESSONDIR='"$(DATADIR)/lessons"' \
                 -DKVLAB_STOREDDIR='"$(DATADIR)/stored"'
ALL_CFLAGS   = -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
               -Wformat=2 -MMD -MP $(SAN) $(CFLAGS)
ALL_LDFLAGS  = $(SAN) $(LDFLAGS)

# Debian packages providing each pkg-config module the build needs.
PKG_MODULES  := ncursesw libcjson check md4c
APT_PACKAGES := libncurses-dev libcjson-dev check pkg-config locales tmux groff-base \
                libmd4c-dev jq

# Recursive (=) so pkg-config runs only after `deps` has installed things.
CJSON_CFLAGS = $(shell pkg-config --cflags libcjson)
CURSES_LIBS  = $(shell pkg-config --libs ncursesw)
CJSON_LIBS   = $(shell pkg-config --libs libcjson)
# md4c reads the lessons (calc/lesson.c).
MD4C_CFLAGS  = $(shell pkg-config --cflags md4c)
MD4C_LIBS    = $(shell pkg-config --libs md4c)
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)

# ------------------------------------------------------------------------
# Sources and objects.
CALC_SRC  := $(wildcard calc/*.c)
KERN_SRC  := $(wildcard kernels/*.c kernels/cpu/*.c)
TUI_SRC   := $(wildcard tui/*.c tui/cli/*.c tui/lab/*.c)
TEST_SRC  := $(wildcard tests/test_*.c) tests/testutil.c
CALC_OBJ  := $(CALC_SRC:%.c=$(BUILD)/%.o)
KERN_OBJ  := $(KERN_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ   := $(TUI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BUILD)/tests/bench/bench_quant.o
CALC_LIB  := $(BUILD)/libkvcalc.a
KERN_LIB  := $(BUILD)/libkvkern.a
TEST_BIN  := $(BUILD)/tests/run_tests

# An NVIDIA driver on this machine (its kernel module, or libcuda.so.1 for
# the loader): what a plugin built here needs to run here.
GPU_DRIVER ?= $(if $(wildcard /proc/driver/nvidia/version),yes,$(shell ldconfig -p 2>/dev/null | \
              grep -q 'libcuda\.so\.1 ' && echo yes))

# The CUDA plugin, built when nvcc is found (kvlab runs without it).
NVCC      ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
# The GPU code it carries: machine code for sm_80, sm_89 and sm_90a, and the
# sm_89 PTX (which has the E4M3 MMA of FP8 path A) for newer GPUs to compile
# at load. Each is kept where this nvcc takes it (nvcc --dryrun checks an
# architecture without compiling), so that an older nvcc (sm_90a needs CUDA
# 12.0, sm_89 11.8) builds what it can; nvcc builds them at once
# (--threads 0: one per core).
CUDA_WANT    := arch=compute_80,code=sm_80 arch=compute_89,code=[sm_89,compute_89] \
                arch=compute_90a,code=sm_90a
nvcc_takes    = $(shell $(NVCC) --dryrun -gencode=$(1) -x cu -c /dev/null -o /dev/null >/dev/null 2>&1 && echo y)
CUDA_GENCODE := $(strip $(if $(NVCC),$(foreach g,$(CUDA_WANT),$(if $(call nvcc_takes,$(g)),-gencode=$(g)))))
ALL_NVCCFLAGS = -std=c++17 -Xcompiler -fPIC,-fvisibility=hidden $(CUDA_GENCODE) --threads 0 -Icalc -Ikernels \
                -Xptxas -warn-spills -MMD -MP $(NVCCFLAGS)
CU_SRC    := $(wildcard kernels/cuda/*.cu)
CU_OBJ    := $(CU_SRC:%.cu=$(BUILD)/%.o)
PLUGIN_C  := kernels/kv_cache.c calc/minifloat.c calc/error.c
PLUGIN_O  := $(PLUGIN_C:%.c=$(BUILD)/pic/%.o)
# Why there is no plugin to build, where there is none; nvcc's rules fail
# with it.
comma     := ,
space     := $(subst ,, )
PLUGIN_WHY = $(if $(NVCC),$(NVCC) takes none of the GPU architectures the plugin is for \
             ($(subst $(space),$(comma) ,$(patsubst arch=compute_%,sm_%,$(foreach g,$(CUDA_WANT),$(firstword $(subst $(comma), ,$(g))))))),no nvcc \
             on the PATH or in /usr/local/cuda)
NVCC_CHECK = @$(if $(CUDA_GENCODE),:,echo "kvlab: cannot build the CUDA plugin: $(PLUGIN_WHY)" >&2; exit 1)

# Every object depends on a stamp named after the flags that build it, and
# every program on one named after the flags that link it, so that new
# flags (CFLAGS, PREFIX, LDFLAGS, CC, ...) rebuild what they change and no
# more. Only the name is computed here: make -n and -q stay read-only.
flags_stamp = $(BUILD)/flags/$(1)/$(firstword $(shell printf '%s' '$(subst ','\'',$(2))' | cksum))
C_STAMP   := $(call flags_stamp,c,$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS))
LINK_STAMP := $(call flags_stamp,link,$(CC) $(ALL_LDFLAGS) $(LDLIBS))
CU_STAMP  := $(call flags_stamp,cu,$(NVCC) $(ALL_NVCCFLAGS))
PATHS_STAMP := $(call flags_stamp,paths,$(PATHS_CPPFLAGS))

# The program and plugin at the top of the tree are copies of the default
# build's, for `./kvlab`; every target of this file uses $(BUILD)'s own.
TOP       := $(if $(filter build,$(BUILD)),kvlab)
TOP_PLUGIN := $(if $(filter build,$(BUILD)),libkvlab_cuda.so)

.PHONY: all run test test-gpu asan bench install uninstall clean help deps plugin plugin-if-possible \
        plugin-not-here man

# ------------------------------------------------------------------------
# Targets for people.

# What every goal that runs kvlab needs: the program, its data, the copy at the top.
PROGRAM   = $(BUILD)/kvlab $(BUILD)/scenarios $(BUILD)/lessons $(BUILD)/stored $(TOP)
# The CUDA plugin is built by make and make run only where an NVIDIA driver
# could load it (GPU_DRIVER; make GPU_DRIVER=yes asks for it anyway): it
# takes most of a fresh build's time. make plugin builds it for another
# machine, and make test wherever nvcc is found, as its checks compile it.

# Build the program (and the CUDA plugin where nvcc and an NVIDIA driver are found, or one line on why not).
all: $(PROGRAM) $(if $(NVCC),$(if $(GPU_DRIVER),plugin-if-possible,plugin-not-here))

# Build the CUDA plugin (fails, saying why, where nvcc cannot build it).
plugin: $(if $(CUDA_GENCODE),$(BUILD)/libkvlab_cuda.so $(TOP_PLUGIN))
	$(NVCC_CHECK)

# Say in one line that the CUDA plugin is not built where no NVIDIA driver could load it.
plugin-not-here:
	@echo "kvlab: the CUDA plugin is not built: no NVIDIA driver on this machine to load it (make plugin builds it)"

# Build the CUDA plugin where nvcc can; where not, say why in one line and go on without it.
plugin-if-possible:
	@err=$$(mktemp) && { $(MAKE) --no-print-directory plugin 2>$$err && cat $$err >&2 || \
	    echo "kvlab: the CUDA plugin is not built: $$(grep -v '^make' $$err | grep -m1 -iE 'error|fatal|cannot' | \
	                  sed 's/^kvlab: cannot build the CUDA plugin: //' | grep . || echo "$(NVCC) failed")" \
	         "(make plugin shows why); kvlab runs without it"; rm -f $$err; }

# Open the interactive lab (with the GPU lab's plugin where nvcc and an NVIDIA driver are found).
run: all
	$(BUILD)/kvlab

# What the tests run: this build's program and plugin, the tree's data.
TEST_LOCALE := $(BUILD)/locale/de_DE.UTF-8
TEST_ENV = KVLAB_BIN=$(abspath $(BUILD)/kvlab) KVLAB_CUDA_PLUGIN=$(abspath $(BUILD)/libkvlab_cuda.so) \
           KVLAB_DATA=$(CURDIR)/scenarios KVLAB_LESSONS=$(CURDIR)/lessons KVLAB_TESTDATA=$(CURDIR)/tests/data \
           LOCPATH=$(abspath $(BUILD)/locale) KVLAB_NVCC=$(if $(CUDA_GENCODE),$(NVCC))

# What the tests run: the program and, wherever nvcc is, the plugin.
TESTED = $(PROGRAM) $(if $(NVCC),plugin-if-possible)

# Build and run every test suite (the GPU suite is skipped, saying why, without a GPU).
test: $(TESTED) $(TEST_BIN) $(TEST_LOCALE)
	$(TEST_ENV) $(TEST_BIN)

# Run the GPU suite: CUDA kernels against the CPU reference (fails, saying why, without a GPU).
test-gpu: $(TESTED) $(TEST_BIN)
	$(TEST_ENV) KVLAB_NEED_GPU=1 CK_RUN_SUITE=gpu $(TEST_BIN)

# Build with AddressSanitizer and UBSan in build-asan/ and run the tests there.
asan:
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	$(MAKE) BUILD=build-asan CFLAGS='-O1 -g -fno-omit-frame-pointer' \
	    SAN='-fsanitize=address,undefined -fno-sanitize-recover=undefined' test

$(TEST_LOCALE): | deps
	@mkdir -p $(dir $@)
	localedef -i de_DE -f UTF-8 $@

# Measure the codecs' and quantizers' throughput, the lab's frame times and
# the default CPU NIAH grid's time.
bench: $(BUILD)/bench_quant $(BUILD)/kvlab
	$(BUILD)/bench_quant
	tests/bench/bench_tui.sh $(abspath $(BUILD)/kvlab) $(CURDIR)/scenarios
	KVLAB_DATA=$(CURDIR)/scenarios tests/bench/niah_cpu.sh $(abspath $(BUILD)/kvlab)

# ------------------------------------------------------------------------
# Install and uninstall. Each file as source:place:mode, the place under
# DESTDIR/PREFIX; uninstall removes the same list, then the directories of
# kvlab's own (OWN_DIRS and those under them) that it leaves empty, never a
# shared one such as bin or share/man/man1.
DEST           = $(DESTDIR)$(PREFIX)
DATA_FILES     = $(shell find $(DATA) -type f ! -name '.*' | LC_ALL=C sort)
STORED_FILES   = $(shell find $(STORED) -type f -name '*.json' | LC_ALL=C sort)
OWN_DIRS       = $(DATADIR) $(PLUGINDIR)
INSTALL_PLUGIN = $(BUILD)/libkvlab_cuda.so:$(PLUGINDIR)/libkvlab_cuda.so:755
INSTALL_FILES  = $(BUILD)/kvlab:$(BINDIR)/kvlab:755 \
                 $(foreach f,$(DATA_FILES),$(f):$(DATADIR)/$(f):644) \
                 $(foreach f,$(STORED_FILES),$(f):$(DATADIR)/stored/$(notdir $(f)):644) \
                 assets/kvlab.1:$(MANDIR)/kvlab.1:644 \
                 assets/kvlab.bash:$(COMPDIR)/kvlab:644

# Install kvlab, its CUDA plugin (where built), data, man page and bash completion under PREFIX.
install: all
	@for t in $(INSTALL_FILES) $(INSTALL_PLUGIN); do \
	    set -- $$(echo "$$t" | tr : ' '); \
	    if [ "$$t" = "$(INSTALL_PLUGIN)" ] && [ ! -e "$$1" ]; then continue; fi; \
	    echo "install -D -m $$3 $$1 $(DEST)/$$2"; \
	    install -D -m "$$3" "$$1" "$(DEST)/$$2" || exit 1; \
	done

# Remove what `make install` put under PREFIX, and kvlab's own directories left empty.
uninstall:
	@for t in $(INSTALL_FILES) $(INSTALL_PLUGIN); do \
	    set -- $$(echo "$$t" | tr : ' '); \
	    if [ -e "$(DEST)/$$2" ]; then echo "rm $(DEST)/$$2"; rm -f "$(DEST)/$$2" || exit 1; fi; \
	done; \
	for d in $(OWN_DIRS); do \
	    if [ -d "$(DEST)/$$d" ]; then find "$(DEST)/$$d" -type d -empty -delete; fi; \
	done

# Write each command's options into the man page, assets/kvlab.1, from kvlab CMD --help.
man: $(BUILD)/kvlab
	assets/man_options.sh $(BUILD)/kvlab assets/kvlab.1 > assets/kvlab.1.tmp && mv assets/kvlab.1.tmp assets/kvlab.1

# Remove everything the build made (for any BUILD), the copies at the top and build-asan/.
clean:
	@case "$(CURDIR)/" in "$(patsubst %/,%,$(abspath $(BUILD)))/"*) \
	    echo "kvlab: BUILD=$(BUILD) holds the source tree; not removing it" >&2; exit 2;; esac
	rm -rf $(BUILD) build-asan kvlab libkvlab_cuda.so

# List the targets with their one-line descriptions.
help:
	@awk '/^# /{d=substr($$0,3)} /^[a-z][a-z-]*:/{if(d){split($$0,t,":");printf "  make %-9s %s\n",t[1],d};d=""}' $(MAKEFILE_LIST)

# A recipe that installs the Debian packages $(2) for $(1) where the shell
# commands $(3), which print what is missing, print anything: with apt-get
# as root; otherwise it prints the command and fails.
define apt_install
	@missing=$$($(3)); \
	if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        echo "kvlab: installing $(1) ($$missing)"; \
	        DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(2) || exit 1; \
	    else \
	        echo "kvlab: missing $(1):$$missing"; \
	        echo "install them with:"; \
	        echo "    sudo apt-get install $(2)"; \
	        exit 1; \
	    fi; \
	fi
endef

DEPS_MISSING = command -v pkg-config >/dev/null 2>&1 || printf ' pkg-config'; \
               for m in $(PKG_MODULES); do pkg-config --exists $$m 2>/dev/null || printf ' %s' $$m; done; \
               [ -f /usr/share/i18n/locales/de_DE ] || printf ' locales'; \
               command -v tmux >/dev/null 2>&1 || printf ' tmux'; \
               command -v groff >/dev/null 2>&1 || printf ' groff'; \
               command -v jq >/dev/null 2>&1 || printf ' jq'

# Install missing build dependencies (apt-get as root; otherwise print the command).
deps:
	$(call apt_install,build dependencies,$(APT_PACKAGES),$(DEPS_MISSING))

# ------------------------------------------------------------------------
# Files.

kvlab libkvlab_cuda.so: %: $(BUILD)/%
	cp $< $@.tmp && mv -f $@.tmp $@

# calc/paths.c and its test alone are compiled with the places under PREFIX.
$(BUILD)/calc/paths.o $(BUILD)/tests/test_paths.o: ALL_CPPFLAGS += $(PATHS_CPPFLAGS)
$(BUILD)/calc/paths.o $(BUILD)/tests/test_paths.o: $(PATHS_STAMP)

# A link to the tree's data beside the build's kvlab, which finds it there
# wherever BUILD is (relative, so that a tree moved whole still works).
$(BUILD)/scenarios $(BUILD)/lessons: $(BUILD)/%:
	@mkdir -p $(BUILD)
	ln -sfn $$(realpath --relative-to=$(BUILD) $*) $@
$(BUILD)/stored:
	@mkdir -p $(BUILD)
	ln -sfn $$(realpath --relative-to=$(BUILD) $(STORED)) $@

$(BUILD)/kvlab: $(TUI_OBJ) $(KERN_LIB) $(CALC_LIB) $(LINK_STAMP)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(LINK_STAMP),$^) $(CURSES_LIBS) $(CJSON_LIBS) $(MD4C_LIBS) \
	    -lm -lpthread -ldl $(LDLIBS)

$(BUILD)/libkvlab_cuda.so: $(CU_OBJ) $(PLUGIN_O) $(CU_STAMP)
	$(NVCC_CHECK)
	$(NVCC) -shared -o $@ $(filter-out $(CU_STAMP),$^) -cudart static -lrt -ldl -lpthread

$(BUILD)/%.o: %.cu $(CU_STAMP)
	$(NVCC_CHECK)
	@mkdir -p $(dir $@)
	$(NVCC) $(ALL_NVCCFLAGS) -c -o $@ $<

$(BUILD)/pic/%.o: %.c $(C_STAMP) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(CALC_LIB): $(CALC_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(KERN_LIB): $(KERN_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(TEST_BIN): $(TEST_OBJ) $(BUILD)/tui/lab/plotmath.o $(BUILD)/tui/table.o $(BUILD)/tui/text.o $(KERN_LIB) $(CALC_LIB) $(LINK_STAMP)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(LINK_STAMP),$^) $(CHECK_LIBS) $(CJSON_LIBS) $(MD4C_LIBS) \
	    -lm -lpthread -ldl $(LDLIBS)

$(BUILD)/bench_quant: $(BENCH_OBJ) $(CALC_LIB) $(LINK_STAMP)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(LINK_STAMP),$^) $(CJSON_LIBS) $(MD4C_LIBS) -lm $(LDLIBS)

$(BUILD)/tests/%.o: tests/%.c $(C_STAMP) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(CJSON_CFLAGS) $(CHECK_CFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c $(C_STAMP) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(CJSON_CFLAGS) $(MD4C_CFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# A stamp replaces the others of its kind in their directory, which is kept
# (a directory made anew by another user, as by sudo make install, would
# leave this one's next build unable to write there).
# (Named here, not by a pattern, so that make takes a missing one as out of
# date, not as an intermediate file it may skip.)
$(C_STAMP) $(LINK_STAMP) $(CU_STAMP) $(PATHS_STAMP):
	@mkdir -p $(@D) && rm -f $(@D)/* && touch $@

# The dependencies the compilers wrote (-MMD), for every object C or CUDA.
-include $(patsubst %.o,%.d,$(CALC_OBJ) $(KERN_OBJ) $(TUI_OBJ) $(TEST_OBJ) $(BENCH_OBJ) \
                            $(PLUGIN_O) $(CU_OBJ))

# ------------------------------------------------------------------------
# Fuzzing (tests/fuzz/, README "Fuzzing"): one libFuzzer harness per input
# parser, fuzz_NAME.c, with its seed corpus in tests/fuzz/corpus/NAME/.
# `make fuzz` builds them with clang (-fsanitize=fuzzer,address,undefined)
# and runs each for FUZZ_SECONDS of CPU time, one after another, saving what
# breaks a harness in tests/fuzz/crashes/NAME/. `make test` replays every corpus file
# and every saved crash through the same harnesses built with $(CC) into one
# replay program, so it needs no clang (and runs them under the sanitizers
# in `make asan`). clang and libFuzzer are installed for `make fuzz` only.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_APT     := clang libclang-rt-dev
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
# The code the harnesses test: calc/ and, for the lists, the command line's
# option parser with the escaping of its messages.
FUZZ_TUI     := tui/cli/cli.c tui/text.c
FUZZ_USES    := $(CALC_SRC) $(FUZZ_TUI)
FUZZ_DIR     := $(BUILD)/libfuzzer
FUZZ_SANS    := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -DFUZZ_LIBFUZZER -Itests/fuzz
FUZZ_OBJ     := $(FUZZ_USES:%.c=$(FUZZ_DIR)/%.o)
FUZZ_REPLAY  := $(BUILD)/tests/fuzz/replay
REPLAY_OBJ   := $(FUZZ_SRC:%.c=$(BUILD)/%.o) $(BUILD)/tests/fuzz/replay.o

.PHONY: fuzz fuzz-deps fuzz-replay
.SECONDARY: $(FUZZ_OBJ)
$(FUZZ_DIR)/calc/paths.o: ALL_CPPFLAGS += $(PATHS_CPPFLAGS)

# Build the fuzz harnesses with clang and run each for FUZZ_SECONDS CPU seconds (default 60).
fuzz: $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
	tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_NAMES)

# Replay the fuzz corpora and every saved crash through the harnesses.
fuzz-replay: $(FUZZ_REPLAY)
	$(TEST_ENV) $(FUZZ_REPLAY) tests/fuzz

test: fuzz-replay

$(FUZZ_REPLAY): $(REPLAY_OBJ) $(FUZZ_TUI:%.c=$(BUILD)/%.o) $(CALC_LIB) $(LINK_STAMP)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(LINK_STAMP),$^) $(CJSON_LIBS) $(MD4C_LIBS) -lm $(LDLIBS)

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) | fuzz-deps
	$(FUZZ_CC) $(ALL_CPPFLAGS) $(CJSON_CFLAGS) $(ALL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(FUZZ_SANS) \
	    -o $@ $< $(FUZZ_OBJ) $(CJSON_LIBS) $(MD4C_LIBS) -lm

# The code under test, instrumented for coverage (libFuzzer's main left out).
$(FUZZ_DIR)/%.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(ALL_CPPFLAGS) $(CJSON_CFLAGS) $(ALL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SANS) \
	    -c -o $@ $<

FUZZ_MISSING = $(FUZZ_CC) -fsanitize=fuzzer -o $(FUZZ_DIR)/probe $(FUZZ_DIR)/probe.c 2>/dev/null || \
               printf ' $(FUZZ_CC) with libFuzzer'

# Install clang with libFuzzer, for `make fuzz` only (apt-get as root; otherwise print the command).
fuzz-deps: | deps
	@mkdir -p $(FUZZ_DIR)
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return !d && n; }\n' \
	    > $(FUZZ_DIR)/probe.c
	$(call apt_install,what make fuzz needs,$(FUZZ_APT),$(FUZZ_MISSING))

-include $(REPLAY_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%.d)
