# moontorch -- top-level build. `make help` lists the targets.
# Layers build bottom-up: tensor/ (engine, C only) -> lua_bindings/ -> repl/.

CC      ?= cc
# make HIP=1: the same program with the GPU backend bound to HIP (AMD GPUs)
# instead of CUDA, in build-hip/, and every kernel family compiled offline
# by hipcc (see "HIP" below and docs/cuda.md)
HIP     ?=
ifeq ($(HIP),1)
BUILD   ?= build-hip
endif
BUILD   ?= build
PREFIX  ?= /usr/local
OPT     ?= -O2
SAN     ?=
LUA_PC  := $(shell pkg-config --exists lua5.4 && echo lua5.4 || echo lua-5.4)
LUA_CFLAGS := $(shell pkg-config --cflags $(LUA_PC) 2>/dev/null)
LUA_LIBS   := $(shell pkg-config --libs $(LUA_PC) 2>/dev/null)
# Cairo draws torch.plot's pictures (lua_bindings/l_plot.c); fontconfig is
# named to free its caches at exit
CAIRO_CFLAGS := $(shell pkg-config --cflags cairo fontconfig 2>/dev/null)
CAIRO_LIBS   := $(shell pkg-config --libs cairo fontconfig 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  := -std=gnu11 $(OPT) -g -march=x86-64-v3 -fPIC -fopenmp $(WARN) $(SAN) -DMT_PREFIX='"$(PREFIX)"'
# Each layer compiles with only the headers it may use (docs/architecture.md;
# scripts/check_layers.lua checks includes and symbols): the engine sees
# itself, graph/ the engine, jit/ both; only the packages' C, the bindings
# and the REPL see Lua.
INC_tensor := -Itensor
INC_graph  := -Itensor -Igraph
INC_jit    := -Itensor -Igraph -Ijit
INC_pkg    := -Itensor -Igraph -Ilua_bindings $(LUA_CFLAGS)
INC_bind   := -Itensor -Igraph -Ijit -Ilua_bindings $(LUA_CFLAGS)
INC_repl   := -Itensor -Igraph -Ijit -Ilua_bindings -Irepl $(LUA_CFLAGS)
$(BUILD)/tensor/%.o $(BUILD)/gen/%_cu.o $(BUILD)/tests/c/%.o: INC = $(INC_tensor)
$(BUILD)/graph/%.o: INC = $(INC_graph)
$(BUILD)/jit/%.o: INC = $(INC_jit)
$(BUILD)/nn/%.o $(BUILD)/domains/%.o: INC = $(INC_pkg)
$(BUILD)/lua_bindings/%.o $(BUILD)/gen/%_lua.o $(BUILD)/gen/cmodules.o: INC = $(INC_bind)
$(BUILD)/repl/%.o: INC = $(INC_repl)
# kernels: functions and loops start on 64-byte lines, so a hot loop's
# speed does not depend on where unrelated code put it (max_pool's backward
# scatter ran 25% slower when its loop straddled a line)
KFLAGS  := -O3 -fno-math-errno -Wno-type-limits -falign-functions=64 -falign-loops=64
LDLIBS  := $(CAIRO_LIBS) -ldnnl -lsleef -lpng -ljpeg -lwebp -ldeflate -lsndfile -lmpg123 -lsoxr -lmujoco -lfftw3f -lfftw3 -lz -lgomp -lm -ldl -lpthread
LDFLAGS := $(SAN) -fopenmp

ENGINE_SRC := $(sort $(wildcard tensor/*.c tensor/cpu/*.c tensor/io/*.c tensor/cuda/*.c))
# the C parts of the Lua packages (nn/, domains/*/): file formats and the
# bindings only they need; each opens as a Lua module luaopen_torch_* that
# build/gen/cmodules.c lists for lua_bindings/packages.c
PKG_SRC    := $(sort $(wildcard nn/*.c nn/*/*.c domains/*/*.c domains/*/*/*.c))
# CUDA kernel sources (tensor/cuda/*.cu), embedded as C strings for NVRTC
CU_SRC     := $(sort $(wildcard tensor/cuda/*.cu))
GRAPH_SRC  := $(sort $(wildcard graph/*.c))
JIT_SRC    := $(sort $(wildcard jit/*.c))
BIND_SRC   := $(sort $(wildcard lua_bindings/*.c))
REPL_SRC   := $(sort $(wildcard repl/*.c))
CTEST_SRC  := $(sort $(wildcard tests/c/test_*.c))

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:tensor/cuda/%.cu=$(BUILD)/gen/%_cu.o)
GRAPH_OBJ  := $(GRAPH_SRC:%.c=$(BUILD)/%.o)
JIT_OBJ    := $(JIT_SRC:%.c=$(BUILD)/%.o)
BIND_OBJ   := $(BIND_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/autograd_lua.o $(BUILD)/gen/jit_lua.o \
              $(BUILD)/gen/help_lua.o $(BUILD)/gen/api_docs.o \
              $(PKG_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/cmodules.o
REPL_OBJ   := $(REPL_SRC:%.c=$(BUILD)/%.o)

HEADERS := $(wildcard tensor/*.h tensor/*.def tensor/cpu/*.h tensor/cuda/*.h tensor/io/*.h graph/*.h jit/*.h lua_bindings/*.h repl/*.h \
                     nn/*.h nn/*/*.h domains/*/*.h domains/*/*/*.h)

.PHONY: all test check asan fuzz bench install clean help ctest luatest

all: $(BUILD)/moontorch $(BUILD)/torch.so $(BUILD)/test_engine

# HIP: tensor/cuda/gpu_port.h gives the CUDA names of the host sources HIP's
# libraries (libamdhip64, hiprtc, hipBLAS: dlopen'ed at run time, as CUDA's
# are), so nothing of HIP is linked. The build also proves, with the
# installed hipcc and hiprtc (no GPU needed): gpu_port.h agrees with HIP's
# headers (tests/hip/port_check.cc), and every kernel family compiles for
# AMD GPUs (scripts/hip_kernels.sh, one stamp per tensor/cuda/*.cu family
# from the members in its .samples file: hipcc for HIP_ARCHS, and hiprtc
# through gpu_port.h for HIP_RTC_ARCHS; ROCm 5.2's hiprtc knows no gfx94x).
ifeq ($(HIP),1)
HIPCC         ?= hipcc
HIP_ARCHS     ?= gfx90a gfx940
HIP_RTC_ARCHS ?= gfx90a
CFLAGS        += -DMT_HIP
HIP_FAMILIES := $(filter-out common,$(CU_SRC:tensor/cuda/%.cu=%))
HIP_CHECKS   := $(BUILD)/hip/gpu_port.ok $(HIP_FAMILIES:%=$(BUILD)/hip/%.ok)

all: $(HIP_CHECKS)

$(BUILD)/hip/gpu_port.ok: tests/hip/port_check.cc $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -fsyntax-only -Wall -Wextra -Werror -Wno-deprecated-declarations -DMT_HIP -Itensor/cuda $<
	@touch $@

$(BUILD)/hip/hiprtc_check: tests/hip/hiprtc_check.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC_tensor) -Itensor/cuda -o $@ $< -ldl

$(BUILD)/hip/%.ok: tensor/cuda/%.cu tensor/cuda/common.cu $(wildcard tensor/cuda/*.samples) scripts/hip_kernels.sh \
                   $(BUILD)/hip/hiprtc_check
	HIPCC="$(HIPCC)" HIP_ARCHS="$(HIP_ARCHS)" HIPRTC_CHECK=$(BUILD)/hip/hiprtc_check HIP_RTC_ARCHS="$(HIP_RTC_ARCHS)" \
	  scripts/hip_kernels.sh $* $(BUILD)/hip
	@touch $@
endif

help:
	@echo "make            build $(BUILD)/moontorch, $(BUILD)/torch.so (Lua C module) and the C tests"
	@echo "make test       build, check the layers (make check), then run the C engine tests and the Lua suite (ends 'N passed, N failed')"
	@echo "make check      the layering check: no include or symbol pointing up a layer, prefixes, file and function sizes"
	@echo "make asan       the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
	@echo "make HIP=1      the program with its GPU backend on HIP (AMD GPUs) in build-hip/, and every kernel family"
	@echo "                compiled offline by hipcc for HIP_ARCHS (default gfx90a gfx940); needs Debian's hipcc"
	@echo "make fuzz       libFuzzer targets (clang, ASan+UBSan) in build-fuzz/ for the safetensors, idx, PNG (and its inflate), JPEG, WebP and sound-file parsers,"
	@echo "                each run FUZZ_TIME seconds (default 60) from the seeds in tests/fuzz/corpus_*/"
	@echo "make bench      benchmarks: ours vs PyTorch on this machine, 'name ours peer ratio' rows"
	@echo "make install    install moontorch, torch.so and the Lua packages (PREFIX/share/lua/5.4/torch/...) under PREFIX (default /usr/local)"
	@echo "make clean      remove build outputs"

# kernels get -O3 and no errno so loops vectorize
$(BUILD)/tensor/cpu/%.o: tensor/cpu/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $(KFLAGS) -c $< -o $@

# the fused color jitter must round every product and sum on its own, as
# the op-by-op path it stands for does: no multiply-add contraction
$(BUILD)/tensor/cpu/color_kernels.o: KFLAGS += -ffp-contract=off

# Lua parts of the torch module, compiled in as C strings
$(BUILD)/gen/%_lua.c: lua_bindings/%.lua scripts/embed.lua
	@mkdir -p $(dir $@)
	lua5.4 scripts/embed.lua mtl_$*_lua $< $@

# the API reference (docs/api/*.md), compiled in: help() prints its entries
# (lua_bindings/help.lua); each page follows a line "<!-- file: PATH -->"
API_DOCS := $(sort $(wildcard docs/api/*.md))
$(BUILD)/gen/api_docs.c: $(API_DOCS) scripts/embed.lua
	@mkdir -p $(dir $@)
	for f in $(API_DOCS); do printf '<!-- file: %s -->\n' $$f; cat $$f; done > $(BUILD)/gen/api_docs.md
	lua5.4 scripts/embed.lua mtl_api_docs $(BUILD)/gen/api_docs.md $@

$(BUILD)/gen/%_cu.c: tensor/cuda/%.cu scripts/embed.lua
	@mkdir -p $(dir $@)
	lua5.4 scripts/embed.lua mt_cuda_$*_cu $< $@

# the packages' C modules (luaopen_torch_* of PKG_SRC), for packages.c
$(BUILD)/gen/cmodules.c: $(PKG_SRC) scripts/cmodules.sh
	@mkdir -p $(dir $@)
	scripts/cmodules.sh $(PKG_SRC) > $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CFLAGS) $(INC) -c $< -o $@

$(BUILD)/domains/experiment/plot/l_canvas.o: CFLAGS += $(CAIRO_CFLAGS)
# torch.vision.utils' label text (domains/vision/l_text.c) is Cairo's too
$(BUILD)/domains/vision/l_text.o: CFLAGS += $(CAIRO_CFLAGS)
# torch.rl's classic-control envs evaluate Gymnasium's float64 equations
# operation by operation, as NumPy does: no multiply-add contraction
# (and no straight-line vectorization: it turns a few scalar stores and the
# vector load after them into a store-forwarding stall)
$(BUILD)/domains/rl/envs/%.o: CFLAGS += -O3 -fno-math-errno -ffp-contract=off -fno-tree-slp-vectorize

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -c $< -o $@

$(BUILD)/libmoontorch.a: $(ENGINE_OBJ) $(GRAPH_OBJ) $(JIT_OBJ) $(BIND_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/torch.so: $(ENGINE_OBJ) $(GRAPH_OBJ) $(JIT_OBJ) $(BIND_OBJ)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/moontorch: $(REPL_OBJ) $(BUILD)/libmoontorch.a
	$(CC) $(LDFLAGS) -rdynamic -o $@ $(REPL_OBJ) $(BUILD)/libmoontorch.a $(LUA_LIBS) -ledit $(LDLIBS)

$(BUILD)/test_engine: $(CTEST_SRC:%.c=$(BUILD)/%.o) $(ENGINE_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test: check
	$(BUILD)/moontorch tests/run.lua --engine $(BUILD)/test_engine

# the layering check (docs/architecture.md): includes and symbols point down
# only, every export has its layer's prefix, files and functions stay short
check: all
	lua5.4 scripts/check_layers.lua $(BUILD)

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DMT_SANITIZE" all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp MOONTORCH_ASAN=1 build-asan/moontorch tests/run.lua --engine build-asan/test_engine

# Fuzzing: the parsers need only themselves and the error message (status.c),
# so the fuzzers link those few files (no OpenMP, oneDNN or Lua).
FUZZ_CC   ?= clang
FUZZ_TIME ?= 60
FUZZ_CFLAGS := -std=gnu11 -g -O1 -march=x86-64-v3 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
               -Wall -Wextra -Werror -Wno-unused-parameter -Itensor -DMTD_JPEG_PART_PIXELS=64 -DMTD_FUZZ_NO_CRC
FUZZ_LIB := tensor/io/json.c tensor/io/safetensors.c domains/vision/idx.c domains/vision/png_decode.c \
            domains/vision/png_fast.c domains/vision/png_inflate.c domains/vision/png_rows.c \
            domains/vision/jpeg.c domains/vision/webp.c domains/audio/sound.c domains/audio/sound_mpeg.c tensor/status.c

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_image.h $(FUZZ_LIB) $(HEADERS)
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIB) -lpng -ljpeg -lwebp -ldeflate -lsndfile -lmpg123 -lz -lm

fuzz: build-fuzz/fuzz_safetensors build-fuzz/fuzz_idx build-fuzz/fuzz_png build-fuzz/fuzz_inflate build-fuzz/fuzz_jpeg \
      build-fuzz/fuzz_webp build-fuzz/fuzz_audio
	@for t in safetensors idx png inflate jpeg webp audio; do \
	  mkdir -p build-fuzz/corpus_$$t build-fuzz/crashes_$$t; \
	  echo "fuzz_$$t: $(FUZZ_TIME) s (new inputs in build-fuzz/corpus_$$t, crashes in build-fuzz/crashes_$$t)"; \
	  build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=build-fuzz/crashes_$$t/ build-fuzz/corpus_$$t tests/fuzz/corpus_$$t || exit 1; \
	done

bench: all
	bench/run

# the Lua packages go to PREFIX/share/lua/5.4/torch/... in Lua's standard
# layout, file by file as the package map (lua_bindings/packages.c) places them
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/lua/5.4
	install -m 755 $(BUILD)/moontorch $(DESTDIR)$(PREFIX)/bin/moontorch
	install -m 755 $(BUILD)/torch.so $(DESTDIR)$(PREFIX)/lib/lua/5.4/torch.so
	$(BUILD)/moontorch scripts/install_lua.lua "$(DESTDIR)$(PREFIX)/share/lua/5.4"

clean:
	rm -rf build build-asan build-fuzz build-hip
