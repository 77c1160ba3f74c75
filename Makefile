# safepin - build, test, demo, bench.
#
#   make            build/libsafepin.so, build/simhip/libamdhip64.so.5,
#                   build/simcuda/libcuda.so.1, test programs
#   make test       install deps, build, run every suite (plain + ASan/UBSan/TSan)
#   make demo       a legacy program on simhip, without and with safepin
#   make bench      the benchmark table (build/bench.json)
#   make install    DESTDIR=... PREFIX=/usr/local (LIBDIR, SIMDIR, SIMCUDADIR, MANDIR: see below)
#   make deb        build/safepin_<version>_<arch>.deb (scripts/make-deb)
#   make wheel      build/safepin-<version>-py3-none-manylinux_2_<N>_<arch>.whl
#                   (scripts/make-wheel, with Debian's /usr/bin/python3)
#   make gpu-test   the hazards on a real NVIDIA GPU, bare and under safepin
#   make gpu-bench  the benchmark table on a real NVIDIA GPU (build/gpu-bench.json)
#                   (both skip, saying why, without an NVIDIA GPU and nvcc;
#                   make test never calls them: tests/gpu/README.md)
#
# SAN=asan|ubsan|tsan builds a sanitizer variant into build/<san>/.
# V=1 prints the full commands (by default one short line per file).

SAN ?=
ifeq ($(SAN),)
B := build
else
B := build/$(SAN)
endif

# The one place the version is written (launcher, library, report, package).
VERSION := $(shell cat VERSION)

CC  ?= gcc
CXX ?= g++
SANFLAGS_asan  := -fsanitize=address -fno-omit-frame-pointer
SANFLAGS_ubsan := -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SANFLAGS_tsan  := -fsanitize=thread
SANFLAGS := $(SANFLAGS_$(SAN))

HIPDEFS  := -D__HIP_PLATFORM_AMD__ -I/usr/include -DSAFEPIN_VERSION='"$(VERSION)"'
WARN     := -Wall -Wextra -Werror
# Headers a GPU machine lacks (scripts/pack-gpu-deps), searched after the
# system's: absent on build machines, where nothing changes.
GPU_DEPS := $(addprefix -idirafter ,$(wildcard .gpu-run/include))
CFLAGS   := -std=c11 -D_GNU_SOURCE $(HIPDEFS) $(WARN) -O2 -g -fPIC -pthread $(SANFLAGS) $(GPU_DEPS)
CXXFLAGS := -std=c++17 -D_GNU_SOURCE $(HIPDEFS) $(WARN) -O2 -g -fPIC -pthread $(SANFLAGS)
LDFLAGS  := -pthread $(SANFLAGS)

# Quiet build: "CC path" per file; V=1 prints the commands instead.
V ?= 0
say = $(if $(filter 1,$(V)),,@printf '  %-4s %s\n' '$(1)' '$(2)';)
MAKEFLAGS += --no-print-directory

# Each folder of libsafepin sees only the headers of the folders it may use
# (docs/architecture.md, "Dependencies point one way"): a wrong-way include fails to
# compile. Tests see them all.
INC_util      := -Iutil
INC_registry  := -Iregistry $(INC_util)
INC_diag      := -Idiag $(INC_registry)
INC_runtime   := -Iruntime $(INC_diag)
INC_streams   := -Istreams $(INC_runtime)
INC_reaper    := -Ireaper $(INC_streams)
INC_core      := -Icore $(INC_reaper)
INC_interpose := -Iinterpose $(INC_core)
INC_hip       := -Ihip $(INC_interpose)
INC_cuda      := -Icuda $(INC_interpose)
INC_simhip    := -Isimhip
INC_simcuda   := -Isimcuda -Isimhip
INC           := $(INC_interpose) -Ihip -Icuda -Isimhip
inc_for = $(INC_$(firstword $(subst /, ,$(1))))

# ---- libsafepin ---------------------------------------------------------
# The faces (runtimes): each a folder with its exports (<face>/exports.map).
FACE_DIRS := hip cuda
LIB_DIRS  := util registry diag runtime streams reaper core $(FACE_DIRS) interpose
SHIM_SRC  := interpose/shims.c hip/hip_shims.c cuda/cuda_shims.c
CORE_SRC  := $(filter-out $(SHIM_SRC),$(wildcard $(addsuffix /*.c,$(LIB_DIRS))))
CORE_OBJ  := $(patsubst %.c,$(B)/obj/%.o,$(CORE_SRC))
SHIM_OBJ  := $(patsubst %.c,$(B)/obj/%.o,$(SHIM_SRC))
# Every thread-local of the library is static TLS, reached without
# __tls_get_addr: a preloaded library's TLS is in the static block anyway,
# and a __tls_get_addr call can make a sanitizer runtime map memory of its
# own on the program's thread, in the program's address space (G12).
$(CORE_OBJ) $(SHIM_OBJ): CFLAGS += -ftls-model=initial-exec
LIB       := $(B)/libsafepin.so
CORE_A    := $(B)/libsafepin_core.a
# The faces' tables (interpose/face.h): test binaries that link CORE_A name
# them, as nothing in the archive refers to a face; tests/common/no_shims.c
# answers their shim look-ups there.
FACE_OBJ  := $(B)/obj/hip/hip_face.o $(B)/obj/cuda/cuda_face.o
NO_SHIMS  := tests/common/no_shims.c
# The core alone: what names no runtime (tests/unit-core links only these).
CORE_ONLY_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard $(addsuffix /*.c,util registry diag runtime streams reaper core)))

# ---- simhip ---------------------------------------------------------------
SIM_SRC   := $(wildcard simhip/*.c)
SIM_OBJ   := $(patsubst %.c,$(B)/obj/%.o,$(SIM_SRC))
SIM_LIB   := $(B)/simhip/libamdhip64.so.5
SIM_MAP   := simhip/libamdhip64.map
# The same objects under ROCm 6 and 7 sonames, with clr's version nodes
# (tests/soname: interposition depends on neither).
SIM_LIB6  := $(B)/simhip/libamdhip64.so.6
SIM_LIB7  := $(B)/simhip/libamdhip64.so.7

# ---- simcuda: the CUDA driver face, simhip's objects + a cu* layer ----------
SC_SRC    := $(wildcard simcuda/*.c)
SC_OBJ    := $(patsubst %.c,$(B)/obj/%.o,$(SC_SRC))
SC_LIB    := $(B)/simcuda/libcuda.so.1
SC_MAP    := simcuda/libcuda.map
SC_VLIB   := $(B)/simcuda/versioned/libcuda.so.1

# ---- test programs ------------------------------------------------------
LEGACY_SRC := $(wildcard tests/legacy/*.c)
LEGACY_BIN := $(patsubst tests/legacy/%.c,$(B)/tests/legacy/%,$(LEGACY_SRC))
SANITY_SRC := $(wildcard tests/sanity/*.c)
SANITY_BIN := $(patsubst tests/sanity/%.c,$(B)/tests/sanity/%,$(SANITY_SRC))
DIAG_SRC   := $(wildcard tests/diag/*.c)
DIAG_BIN   := $(patsubst tests/diag/%.c,$(B)/tests/diag/%,$(DIAG_SRC))
SUPP_BIN   := $(B)/tests/diag/supp/supp_hip $(B)/tests/diag/supp/supp_cuda
RELOAD_LIBS := $(B)/tests/diag/plugin/libreload_a.so $(B)/tests/diag/plugin/libreload_b.so
REACH_SRC  := $(wildcard tests/reach/*.c)
REACH_BIN  := $(patsubst tests/reach/%.c,$(B)/tests/reach/%,$(REACH_SRC))
DLVSYM_NEXT := $(B)/tests/reach/libdlvsym_next.so $(B)/tests/reach/libdlvsym_next_dl.so
CTOR_PLUGIN := $(B)/tests/reach/libctor_plugin.so
ALLOC_SRC  := $(wildcard tests/allocators/*.c)
ALLOC_BIN  := $(patsubst tests/allocators/%.c,$(B)/tests/allocators/%,$(ALLOC_SRC))
BADIN_BIN  := $(B)/tests/badinput/badinput
STACK_BIN  := $(B)/tests/stack/stack_hooks_hip $(B)/tests/stack/stack_hooks_cuda
UNIT_SRC   := $(wildcard tests/unit/*.cc)
UNIT_BIN   := $(B)/tests/unit_tests
SIMT_SRC   := $(wildcard tests/simhip/*.cc)
SIMT_BIN   := $(B)/tests/simhip_tests
SONAME_SRC := $(wildcard tests/soname/*.c)
SONAME_BIN := $(foreach v,6 7,$(patsubst tests/soname/%.c,$(B)/tests/soname/%.so$(v),$(SONAME_SRC)))
MODEL_BIN  := $(B)/tests/model/model $(B)/tests/model/model_cuda $(B)/tests/model/revive_rerelease \
              $(B)/tests/fault/fault_prog
UCORE_SRC  := $(wildcard tests/unit-core/*.cc)
UCORE_BIN  := $(B)/tests/unit_core_tests
UCUDA_SRC  := $(wildcard tests/unit-cuda/*.cc)
UCUDA_BIN  := $(B)/tests/unit_cuda_tests
SCT_SRC    := $(wildcard tests/simcuda/*.cc)
SCT_BIN    := $(B)/tests/simcuda_tests
LCUDA_SRC  := $(wildcard tests/legacy-cuda/*.c)
LCUDA_BIN  := $(patsubst tests/legacy-cuda/%.c,$(B)/tests/legacy-cuda/%,$(LCUDA_SRC))
RCUDA_BIN  := $(B)/tests/reach-cuda/cudart_lookup $(B)/tests/reach-cuda/dlopen_handle \
              $(B)/tests/reach-cuda/direct_link $(B)/tests/reach-cuda/dlclose_held $(B)/tests/reach-cuda/hip_and_cuda \
              $(B)/tests/reach-cuda/dlvsym_lookup
BENCH_SRC  := $(wildcard bench/*.c)
BENCH_BIN  := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC)) $(B)/bench/libfloor.so \
              $(patsubst bench/cuda/%.c,$(B)/bench/cuda/%,$(wildcard bench/cuda/*.c))

# Programs "built against Debian's ROCm": linked with the real libamdhip64.
REAL_HIP  := -L/usr/lib/x86_64-linux-gnu -lamdhip64 -ldl

.PHONY: all deps test demo bench install deb wheel clean san-builds san-all
all: $(LIB) $(SIM_LIB) $(SIM_LIB6) $(SIM_LIB7) $(SONAME_BIN) $(SC_LIB) $(SC_VLIB) $(SCT_BIN) $(LCUDA_BIN) $(RCUDA_BIN) $(UCUDA_BIN) $(LEGACY_BIN) $(SANITY_BIN) $(DIAG_BIN) $(SUPP_BIN) $(RELOAD_LIBS) $(REACH_BIN) $(DLVSYM_NEXT) $(CTOR_PLUGIN) $(ALLOC_BIN) $(BADIN_BIN) $(STACK_BIN) $(UNIT_BIN) $(UCORE_BIN) $(SIMT_BIN) $(BENCH_BIN) $(MODEL_BIN)

deps:
	@scripts/install-deps

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $(call inc_for,$<) -MMD -MP -c $< -o $@

$(SHIM_OBJ): $(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $(INC_interpose) -fvisibility=hidden -MMD -MP -c $< -o $@

# The shipped default suppressions, compiled in (diag/suppress.c): each line
# of diag/default.supp becomes a C string literal.
SUPP_INC := $(B)/gen/default_supp.inc
$(SUPP_INC): diag/default.supp
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/.*/"&\\n"/' $< >$@
$(B)/obj/diag/suppress.o: $(SUPP_INC)
$(B)/obj/diag/suppress.o: CFLAGS += -I$(B)/gen

# The objects that print the version.
$(B)/obj/interpose/init.o $(B)/obj/diag/report.o: VERSION

$(CORE_A): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

# The export map: libc's names (interpose/libsafepin.map) and each face's.
LIB_MAP := $(B)/gen/libsafepin.map
FACE_MAPS := $(addsuffix /exports.map,$(FACE_DIRS))
$(LIB_MAP): interpose/libsafepin.map $(FACE_MAPS)
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)sed $(foreach m,$(FACE_MAPS),-e '/^ *global:$$/r $(m)') interpose/libsafepin.map >$@

$(LIB): $(SHIM_OBJ) $(CORE_OBJ) $(LIB_MAP)
	$(call say,LD,$@)$(CC) -shared -o $@ $(SHIM_OBJ) $(CORE_OBJ) -Wl,--version-script=$(LIB_MAP) \
	  -Wl,-z,nodelete -Wl,-z,now $(LDFLAGS) -ldl

$(SIM_LIB): $(SIM_OBJ) $(SIM_MAP)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -o $@ $(SIM_OBJ) -Wl,-soname,libamdhip64.so.5 -Wl,-Bsymbolic-functions \
	  -Wl,--version-script=$(SIM_MAP) $(LDFLAGS) -ldl -lrt
	@ln -sf libamdhip64.so.5 $(B)/simhip/libamdhip64.so

$(B)/simhip/libamdhip64.so.%: $(SIM_OBJ) simhip/libamdhip64-%.map
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -o $@ $(SIM_OBJ) -Wl,-soname,libamdhip64.so.$* -Wl,-Bsymbolic-functions \
	  -Wl,--version-script=simhip/libamdhip64-$*.map $(LDFLAGS) -ldl -lrt

# The driver exports only cu* (and the simcuda.h extension); simhip's code
# inside it is local, so its calls stay inside.
$(SC_LIB): $(SC_OBJ) $(SIM_OBJ) $(SC_MAP)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -o $@ $(SC_OBJ) $(SIM_OBJ) -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions \
	  -Wl,--version-script=$(SC_MAP) $(LDFLAGS) -ldl -lrt
	@ln -sf libcuda.so.1 $(B)/simcuda/libcuda.so

# The same driver with its exports in a version node (SIMCUDA_1): one whose
# functions a versioned look-up (dlvsym) finds, where the plain one's
# unversioned names give nothing (tests/reach-cuda).
$(SC_VLIB): $(SC_OBJ) $(SIM_OBJ) $(SC_MAP)
	@mkdir -p $(dir $@)
	@sed 's/^{/SIMCUDA_1 {/' $(SC_MAP) >$(dir $@)libcuda.map
	$(call say,LD,$@)$(CC) -shared -o $@ $(SC_OBJ) $(SIM_OBJ) -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions \
	  -Wl,--version-script=$(dir $@)libcuda.map $(LDFLAGS) -ldl -lrt

# CUDA driver-API programs, linked with -lcuda as such programs are (run
# with LD_LIBRARY_PATH=$(B)/simcuda).
$(B)/tests/legacy-cuda/%: tests/legacy-cuda/%.c tests/legacy-cuda/legacy_cuda.h tests/legacy-cuda/two_devices.h tests/common/check.h tests/common/late_work.h simcuda/simcuda.h simcuda/cuda_min.h $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda -Itests/common -Itests/legacy-cuda $< -o $@ $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -ldl

# A program written against NVIDIA's cuda.h (the tests' stand-in here: CI has
# no toolkit), and the C body simcuda gives its PTX kernel (SIMCUDA_KERNELS).
LCUDA_KERNELS := $(B)/tests/legacy-cuda/kernels/libsample_kernels.so
$(B)/tests/legacy-cuda/ptx_sample: tests/legacy-cuda/ptx_sample.c tests/legacy-cuda/include/cuda.h simcuda/cuda_min.h $(SC_LIB) $(LCUDA_KERNELS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Itests/legacy-cuda/include -Isimcuda $< -o $@ $(LDFLAGS) -L$(B)/simcuda -lcuda

$(LCUDA_KERNELS): tests/legacy-cuda/kernels/vector_add.c simcuda/simcuda.h
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared -Isimcuda $< -o $@ $(LDFLAGS) -ldl

# The stand-in for NVIDIA's shared runtime (two majors, each with its version
# node, as NVIDIA's), a library linked with the older, and the programs.
LCUDA_RT := $(B)/tests/legacy-cuda/rt/libcudart.so.13
LCUDA_RT12 := $(B)/tests/legacy-cuda/rt/libcudart.so.12
LCUDA_USER12 := $(B)/tests/legacy-cuda/rt/libuser12.so
$(B)/tests/legacy-cuda/rt/libcudart.so.%: tests/legacy-cuda/rt/minirt.c tests/legacy-cuda/rt/minirt.h simcuda/simcuda.h simcuda/cuda_min.h
	@mkdir -p $(dir $@)
	@printf 'libcudart.so.%s { global: *; };\n' $* >$@.map
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared -Isimcuda -DMINIRT_MAJOR=$* $< -o $@ -Wl,-soname,libcudart.so.$* \
	  -Wl,--version-script=$@.map $(LDFLAGS) -ldl

$(LCUDA_USER12): tests/legacy-cuda/rt/user12.c $(LCUDA_RT12)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared -Isimcuda -Itests/legacy-cuda/rt $< -o $@ \
	  -L$(dir $@) -l:libcudart.so.12 -Wl,-rpath,'$$ORIGIN'

$(B)/tests/legacy-cuda/two_runtimes: tests/legacy-cuda/two_runtimes.c tests/legacy-cuda/legacy_cuda.h tests/common/check.h $(LCUDA_RT) $(LCUDA_USER12) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda -Itests/common -Itests/legacy-cuda -Itests/legacy-cuda/rt $< -o $@ \
	  $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -L$(dir $(LCUDA_RT)) -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN/rt' -ldl

$(B)/tests/legacy-cuda/unreg_in_callback_rt: tests/legacy-cuda/unreg_in_callback_rt.c tests/legacy-cuda/legacy_cuda.h tests/common/check.h $(LCUDA_RT) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda -Itests/common -Itests/legacy-cuda -Itests/legacy-cuda/rt $< -o $@ \
	  $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -L$(dir $(LCUDA_RT)) -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN/rt' -ldl

# A program that loads the runtime RTLD_LOCAL, closes it and loads it again
# (the other major in between), and one whose own library defines
# cudaHostUnregister with no runtime loaded.
LCUDA_NOTRT := $(B)/tests/legacy-cuda/rt/libnotrt.so
$(LCUDA_NOTRT): tests/legacy-cuda/rt/notrt.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared $< -o $@ $(LDFLAGS)

$(B)/tests/legacy-cuda/runtime_reload: tests/legacy-cuda/runtime_reload.c tests/legacy-cuda/legacy_cuda.h tests/common/check.h $(LCUDA_RT) $(LCUDA_RT12) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda -Itests/common -Itests/legacy-cuda $< -o $@ \
	  $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/rt' -ldl

$(B)/tests/legacy-cuda/foreign_unregister $(B)/tests/legacy-cuda/fork_unregister: $(B)/tests/legacy-cuda/%: tests/legacy-cuda/%.c tests/legacy-cuda/legacy_cuda.h tests/common/check.h $(LCUDA_NOTRT) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda -Itests/common -Itests/legacy-cuda $< -o $@ \
	  $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -L$(dir $(LCUDA_NOTRT)) -l:libnotrt.so -Wl,-rpath,'$$ORIGIN/rt' -ldl

# A program linked with a library that calls its own cudaHostUnregister.
LCUDA_SELF := $(B)/tests/legacy-cuda/rt/libselfcall.so
$(LCUDA_SELF): tests/legacy-cuda/rt/selfcall.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared $< -o $@ $(LDFLAGS)

$(B)/tests/legacy-cuda/self_call: tests/legacy-cuda/self_call.c tests/legacy-cuda/legacy_cuda.h tests/common/check.h $(LCUDA_SELF) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda -Itests/common -Itests/legacy-cuda $< -o $@ \
	  $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -L$(dir $(LCUDA_SELF)) -l:libselfcall.so -Wl,-rpath,'$$ORIGIN/rt' -ldl

# A program linked with a wrapper of cudaHostUnregister ahead of the runtime.
LCUDA_WRAP := $(B)/tests/legacy-cuda/rt/libwrap.so
$(LCUDA_WRAP): tests/legacy-cuda/rt/wrap.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared $< -o $@ $(LDFLAGS) -ldl

$(B)/tests/legacy-cuda/wrapper_forward: tests/legacy-cuda/wrapper_forward.c tests/legacy-cuda/legacy_cuda.h tests/common/check.h $(LCUDA_WRAP) $(LCUDA_RT) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda -Itests/common -Itests/legacy-cuda -Itests/legacy-cuda/rt $< -o $@ \
	  $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -L$(dir $(LCUDA_RT)) -l:libwrap.so -l:libcudart.so.13 \
	  -Wl,-rpath,'$$ORIGIN/rt' -ldl

# Reach tests: the driver dlopened (no -lcuda), except the direct caller.
$(B)/tests/reach-cuda/direct_link: tests/reach-cuda/direct_link.c tests/reach-cuda/reach_cuda.h $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda $< -o $@ $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -ldl

# Linked with the RTLD_NEXT library of tests/reach (dlvsym_common.h).
$(B)/tests/reach-cuda/dlvsym_lookup: tests/reach-cuda/dlvsym_lookup.c tests/reach-cuda/reach_cuda.h \
                                     tests/reach/dlvsym_common.h $(DLVSYM_NEXT) $(LCUDA_RT)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda $< -o $@ $(LDFLAGS) -Wl,--no-as-needed -L$(B)/tests/reach \
	  -ldlvsym_next -Wl,-rpath,'$$ORIGIN/../reach' -ldl

$(B)/tests/reach-cuda/%: tests/reach-cuda/%.c tests/reach-cuda/reach_cuda.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda $< -o $@ $(LDFLAGS) -ldl

# The CUDA face's logic on simcuda, without LD_PRELOAD.
$(UCUDA_BIN): $(UCUDA_SRC) $(wildcard tests/unit-cuda/*.h) $(NO_SHIMS) $(CORE_A) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) $(CXXFLAGS) $(INC_cuda) -Isimcuda $(UCUDA_SRC) $(NO_SHIMS) -o $@ $(FACE_OBJ) $(CORE_A) -lgtest -lgtest_main \
	  -L$(B)/simcuda -l:libcuda.so.1 -Wl,-rpath,$(abspath $(B)/simcuda) $(LDFLAGS) -ldl

$(SCT_BIN): $(SCT_SRC) tests/simcuda/sc_common.h simcuda/unmodelled.inc $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) $(CXXFLAGS) -Isimcuda $(SCT_SRC) -o $@ -lgtest -lgtest_main \
	  -L$(B)/simcuda -l:libcuda.so.1 -Wl,-rpath,$(abspath $(B)/simcuda) $(LDFLAGS) -ldl

# The stack each hook uses (tests/stack): one program, for HIP and for the
# CUDA driver API.
$(B)/tests/stack/stack_hooks_hip: tests/stack/stack_hooks.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) $(REAL_HIP)

$(B)/tests/stack/stack_hooks_cuda: tests/stack/stack_hooks.c simcuda/simcuda.h simcuda/cuda_min.h $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -DSTACK_CUDA -Isimcuda $< -o $@ $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -ldl

$(B)/tests/legacy/%: tests/legacy/%.c tests/legacy/legacy.h tests/legacy/legacy_fork.h tests/legacy/two_devices.h tests/common/hip_check.h tests/common/check.h tests/common/late_work.h simhip/simhip.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimhip -Itests/common -Itests/legacy $< -o $@ $(LDFLAGS) $(REAL_HIP)

# Linked against simhip's libamdhip64.so.6 / .so.7 (DT_NEEDED and versioned
# references hipHostRegister@hip_4.2 ... of that soname), as a program built
# against ROCm 6 or 7 is.
$(B)/tests/soname/%.so6: tests/soname/%.c tests/legacy/legacy.h tests/common/hip_check.h simhip/simhip.h $(SIM_LIB6)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimhip -Itests/common -Itests/legacy $< -o $@ $(LDFLAGS) -L$(B)/simhip -l:libamdhip64.so.6 -ldl

$(B)/tests/soname/%.so7: tests/soname/%.c tests/legacy/legacy.h tests/common/hip_check.h simhip/simhip.h $(SIM_LIB7)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimhip -Itests/common -Itests/legacy $< -o $@ $(LDFLAGS) -L$(B)/simhip -l:libamdhip64.so.7 -ldl

$(B)/tests/sanity/%: tests/sanity/%.c simhip/simhip.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimhip $< -o $@ $(LDFLAGS) $(REAL_HIP)

$(B)/tests/diag/%: tests/diag/%.c simhip/simhip.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimhip $< -o $@ $(LDFLAGS) $(REAL_HIP)

# A library loaded where an unloaded one was (tests/diag/run.sh): one
# source, a function name of its own in each.
$(B)/tests/diag/plugin/libreload_%.so: tests/diag/plugin/reload.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared -DWHO=$* $< -o $@ $(LDFLAGS) $(REAL_HIP)

# Suppressions (tests/diag/suppressions.sh): programs whose registrations a
# library of their own makes and keeps, HIP on simhip and CUDA on simcuda.
$(B)/tests/diag/supp/libsuppholder_hip.so: tests/diag/supp/holder_hip.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared $< -o $@ $(LDFLAGS) $(REAL_HIP)

$(B)/tests/diag/supp/libsuppholder_cuda.so: tests/diag/supp/holder_cuda.c simcuda/simcuda.h $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared -Isimcuda $< -o $@ $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1

# A stand-in for PyTorch's libtorch_cuda.so, under that name (the shipped
# default suppressions name it).
$(B)/tests/diag/supp/torch/libtorch_cuda.so: tests/diag/supp/torch_cuda_standin.c $(B)/tests/diag/supp/libsuppholder_hip.so
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CFLAGS) -shared $< -o $@ $(LDFLAGS) -L$(B)/tests/diag/supp -lsuppholder_hip -Wl,-rpath,'$$ORIGIN/..'

$(B)/tests/diag/supp/supp_hip: tests/diag/supp/supp_hip.c $(B)/tests/diag/supp/libsuppholder_hip.so $(B)/tests/diag/supp/torch/libtorch_cuda.so
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) -L$(dir $@) -L$(dir $@)torch -lsuppholder_hip -ltorch_cuda \
	  -Wl,-rpath,'$$ORIGIN' -Wl,-rpath,'$$ORIGIN/torch' $(REAL_HIP)

$(B)/tests/diag/supp/supp_cuda: tests/diag/supp/supp_cuda.c $(B)/tests/diag/supp/libsuppholder_cuda.so $(SC_LIB)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda $< -o $@ $(LDFLAGS) -L$(dir $@) -lsuppholder_cuda -Wl,-rpath,'$$ORIGIN' \
	  -L$(B)/simcuda -l:libcuda.so.1

$(B)/tests/model/%: tests/model/%.c tests/model/owed.h simhip/simhip.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimhip $< -o $@ $(LDFLAGS) $(REAL_HIP)

# The CUDA face's model: a driver-API program, linked with -lcuda (simcuda).
$(B)/tests/model/model_cuda: tests/model/model_cuda.c tests/model/owed.h simcuda/cuda_min.h $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimcuda $< -o $@ $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1

$(B)/tests/fault/%: tests/fault/%.c simhip/simhip.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -Isimhip $< -o $@ $(LDFLAGS) $(REAL_HIP)

$(B)/tests/badinput/%: tests/badinput/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) $(REAL_HIP)

$(B)/tests/allocators/%: tests/allocators/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) -ldl

# A library with one HIP name and no runtime, which no_runtime links.
$(B)/tests/allocators/libstub_hip.so: tests/allocators/lib/stub_hip.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -shared $< -o $@ -Wl,-soname,libstub_hip.so $(LDFLAGS)
$(B)/tests/allocators/no_runtime: tests/allocators/no_runtime.c $(B)/tests/allocators/libstub_hip.so
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) -L$(B)/tests/allocators -lstub_hip -Wl,-rpath,'$$ORIGIN'
# A three-function mock of HIP, which mock_runtime links.
$(B)/tests/allocators/libmock_hip.so: tests/allocators/lib/mock_hip.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -shared $< -o $@ -Wl,-soname,libmock_hip.so $(LDFLAGS)
$(B)/tests/allocators/mock_runtime: tests/allocators/mock_runtime.c $(B)/tests/allocators/libmock_hip.so
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) -L$(B)/tests/allocators -lmock_hip -Wl,-rpath,'$$ORIGIN'

# Not linked with the runtime: they dlopen it, as Python ctypes does.
$(B)/tests/reach/%: tests/reach/%.c tests/reach/reach_hip.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) -ldl

# loader_locks: plugins' constructors call back into it (exported).
$(B)/tests/reach/loader_locks: LDFLAGS += -rdynamic -lpthread
$(B)/tests/reach/libctor_plugin.so: tests/reach/lib/ctor_plugin.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -shared $< -o $@ $(LDFLAGS)

# The library whose dlvsym(RTLD_NEXT) the dlvsym reach programs call:
# linked (libdlvsym_next.so), and a copy they dlopen (libdlvsym_next_dl.so).
$(DLVSYM_NEXT): $(B)/tests/reach/%.so: tests/reach/lib/dlvsym_next.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -shared $< -o $@ -Wl,-soname,$*.so $(LDFLAGS) -ldl

$(B)/tests/reach/dlvsym_reach: tests/reach/dlvsym_reach.c tests/reach/dlvsym_common.h tests/reach/reach_hip.h $(DLVSYM_NEXT)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS) -Wl,--no-as-needed -L$(B)/tests/reach -ldlvsym_next \
	  -Wl,-rpath,'$$ORIGIN' -ldl

$(UNIT_BIN): $(UNIT_SRC) $(NO_SHIMS) $(CORE_A) $(SIM_LIB)
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) $(CXXFLAGS) $(INC) $(UNIT_SRC) $(NO_SHIMS) -o $@ $(FACE_OBJ) $(CORE_A) -lgtest -lgtest_main \
	  -L$(B)/simhip -l:libamdhip64.so.5 -Wl,-rpath,$(abspath $(B)/simhip) $(LDFLAGS) -ldl

# The core and the process layer (interpose/ without its exports), with no
# face of the library's: a toy runtime drives them, and is their one face
# (toy_face.cc), exporting its "real" function for dlsym to find.
UCORE_PROC := $(filter $(B)/obj/interpose/%,$(CORE_OBJ))
UCORE_RT   := $(B)/tests/libtoy_rt.so
$(UCORE_RT): tests/unit-core/toy_rt.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -shared $< -o $@ $(LDFLAGS)
$(UCORE_BIN): $(UCORE_SRC) $(CORE_ONLY_OBJ) $(UCORE_PROC) $(UCORE_RT)
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) $(CXXFLAGS) $(INC_core) -Iinterpose -DTOY_RT_PATH='"$(abspath $(UCORE_RT))"' \
	  $(UCORE_SRC) -o $@ $(CORE_ONLY_OBJ) $(UCORE_PROC) \
	  -lgtest -lgtest_main $(LDFLAGS) -ldl -Wl,--export-dynamic-symbol=toyHostRegister

# The soak (make soak): safepin's logic called directly, to read its tables.
SOAK_BIN := $(B)/tests/soak/soak
$(SOAK_BIN): tests/soak/soak.c $(NO_SHIMS) $(CORE_A) $(SIM_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) $(INC) -Isimhip $< $(NO_SHIMS) -o $@ $(FACE_OBJ) $(CORE_A) \
	  -L$(B)/simhip -l:libamdhip64.so.5 -Wl,-rpath,$(abspath $(B)/simhip) $(LDFLAGS) -ldl

$(SIMT_BIN): $(SIMT_SRC) simhip/unmodelled.inc $(SIM_LIB)
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)$(CXX) $(CXXFLAGS) $(INC) $(SIMT_SRC) -o $@ -lgtest -lgtest_main \
	  -L$(B)/simhip -l:libamdhip64.so.5 -Wl,-rpath,$(abspath $(B)/simhip) $(LDFLAGS) -ldl

$(B)/bench/%: bench/%.c bench/bench.h tests/common/bench_common.h tests/common/hip_check.h tests/common/check.h simhip/simhip.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -O2 -Isimhip -Itests/common $< -o $@ $(LDFLAGS) $(REAL_HIP) -lm

# CUDA rows: driver-API programs on simcuda.
$(B)/bench/cuda/%: bench/cuda/%.c bench/cuda/cu_bench.h tests/common/bench_common.h $(SC_LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -O2 -Isimcuda -Itests/common $< -o $@ $(LDFLAGS) -L$(B)/simcuda -l:libcuda.so.1 -ldl -pthread

$(B)/bench/libfloor.so: bench/floor/floor.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -shared $< -o $@ -ldl

# What the sanitizer suites run: the library, simhip, unit tests, legacy
# programs, simcuda's tests.
san-all: $(LIB) $(SIM_LIB) $(UNIT_BIN) $(UCORE_BIN) $(LEGACY_BIN) $(SCT_BIN) $(SC_LIB) $(UCUDA_BIN)

san-builds: deps
	$(MAKE) -j2 SAN=asan san-all
	$(MAKE) -j2 SAN=ubsan san-all
	$(MAKE) -j2 SAN=tsan san-all

test: deps
	$(MAKE) -j2 all build/fuzz/options_fuzz
	$(MAKE) san-builds
	@scripts/run-tests

demo: deps
	$(MAKE) -j2 all
	@scripts/demo

bench: deps
	$(MAKE) -j2 all
	@scripts/bench

# Installed layout. The launcher finds the library and the simulated devices
# relative to itself (LIBDIR, SIMDIR and SIMCUDADIR under PREFIX), so DESTDIR
# trees and package roots work where they are unpacked.
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
SIMDIR ?= $(PREFIX)/lib/safepin/simhip
SIMCUDADIR ?= $(PREFIX)/lib/safepin/simcuda
MANDIR ?= $(PREFIX)/share/man
# The documentation, README.md and docs/ (scripts/install-docs), and a copy
# of the default suppressions' text (the library has them compiled in), for
# reading and as a start for a suppressions file.
DOCDIR ?= $(PREFIX)/share/doc/safepin
under_prefix = $(patsubst $(PREFIX)/%,%,$(1))
SUBST = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBDIR@|$(call under_prefix,$(LIBDIR))|g' \
	  -e 's|@SIMDIR@|$(call under_prefix,$(SIMDIR))|g' -e 's|@SIMCUDADIR@|$(call under_prefix,$(SIMCUDADIR))|g'
install: $(LIB) $(SIM_LIB) $(SC_LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR) $(DESTDIR)$(SIMDIR) $(DESTDIR)$(SIMCUDADIR) \
	  $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(LIB) $(DESTDIR)$(LIBDIR)/libsafepin.so
	install -m 0644 $(SIM_LIB) $(DESTDIR)$(SIMDIR)/libamdhip64.so.5
	install -m 0644 $(SC_LIB) $(DESTDIR)$(SIMCUDADIR)/libcuda.so.1
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 diag/default.supp $(DESTDIR)$(DOCDIR)/default.supp
	scripts/install-docs $(DESTDIR)$(DOCDIR)
	$(SUBST) scripts/safepin >$(DESTDIR)$(PREFIX)/bin/safepin
	chmod 0755 $(DESTDIR)$(PREFIX)/bin/safepin
	install -m 0755 scripts/safepin-smoke $(DESTDIR)$(PREFIX)/bin/safepin-smoke
	$(SUBST) scripts/safepin.1 >$(DESTDIR)$(MANDIR)/man1/safepin.1
	$(SUBST) scripts/safepin-smoke.1 >$(DESTDIR)$(MANDIR)/man1/safepin-smoke.1
	chmod 0644 $(DESTDIR)$(MANDIR)/man1/safepin.1 $(DESTDIR)$(MANDIR)/man1/safepin-smoke.1

# The Debian package, built with dpkg-deb from a tree staged by `make install`,
# then checked by lintian (which must report no error).
deb: deps
	$(MAKE) -j2 $(LIB) $(SIM_LIB) $(SC_LIB)
	@deb=$$(scripts/make-deb build) && echo "lintian $$deb:" && lintian --fail-on error "$$deb" \
	  && echo "make deb: $$deb"

# The Python wheel, from a tree staged by `make install`: Debian's own
# python3 and its standard library only (the python3 first on PATH may be
# another one).
PYTHON3 ?= /usr/bin/python3
wheel: deps
	$(MAKE) -j2 $(LIB) $(SIM_LIB) $(SC_LIB)
	@whl=$$($(PYTHON3) scripts/make-wheel build) && echo "make wheel: $$whl"

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# ---- fuzzing ------------------------------------------------------------
# make fuzz SECONDS=N      random model seeds for N seconds (tests/model/run.sh),
#                          HIP (model.c, simhip) and CUDA (model_cuda.c, simcuda)
# make fuzz-options SECONDS=N  the libFuzzer target for SAFEPIN_OPTIONS
SECONDS ?= 60
FUZZ_OPT_BIN := build/fuzz/options_fuzz

$(FUZZ_OPT_BIN): tests/fuzz/options_fuzz.c diag/options.c diag/options.h diag/options.inc
	@mkdir -p $(dir $@)
	$(call say,CC,$@)clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined $(INC_diag) \
	  tests/fuzz/options_fuzz.c diag/options.c -o $@

# make soak CYCLES=N   N register/unregister/free cycles (default 1000000),
# 8 threads, 4 streams: RSS, descriptors, table sizes and counters.
CYCLES ?= 1000000
.PHONY: soak
soak: deps
	$(MAKE) -j2 $(SOAK_BIN)
	SAFEPIN_OPTIONS=log=error:backtrace=0 nice $(SOAK_BIN) $(CYCLES)

.PHONY: fuzz fuzz-options gpu-test gpu-bench gpu-build
fuzz: deps
	$(MAKE) -j2 all
	@scripts/fuzz $(SECONDS)

fuzz-options: deps $(FUZZ_OPT_BIN)
	@mkdir -p build/fuzz/corpus
	$(FUZZ_OPT_BIN) -max_total_time=$(SECONDS) -print_final_stats=1 build/fuzz/corpus tests/fuzz/corpus

# ---- the real GPU (tests/gpu) ------------------------------------------------
# make gpu-test / gpu-bench: on a machine with an NVIDIA GPU and nvcc (an H200
# proves them). Elsewhere they say why they skip and succeed; nothing else
# depends on nvcc.
NVCC      ?= $(or $(shell command -v nvcc 2>/dev/null),/usr/local/cuda/bin/nvcc)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
BIN2C     := $(CUDA_HOME)/bin/bin2c
GB        := build/gpu
GT        := tests/gpu
NVFLAGS   := -O2 -g -gencode arch=compute_90,code=[sm_90,compute_90]
GPU_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -I$(CUDA_HOME)/include
GPU_LEGACY_SKIP := two_dev_launches unreg_free_reuse main_pthread_exit
GPU_LEGACY := $(filter-out $(addprefix $(GB)/legacy/,$(GPU_LEGACY_SKIP)),\
                $(patsubst tests/legacy/%.c,$(GB)/legacy/%,$(LEGACY_SRC)))
GPU_BINS  := $(GB)/hazards-static $(GB)/hazards-shared $(GB)/hazards-driver $(GB)/gpubench \
             $(GB)/alloc_heavy $(GPU_LEGACY)

$(GB)/%.o: $(GT)/%.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)$(NVCC) $(NVFLAGS) -c $< -o $@

$(GB)/simhip_gpu.o: $(GT)/hipnv/simhip_gpu.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)$(NVCC) $(NVFLAGS) -c $< -o $@

$(GB)/gpu_rt_%.o: $(GT)/gpu_rt.cu $(GT)/gpu_api.h
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)$(NVCC) $(NVFLAGS) -DGPU_API_NAME='"cudart-$*"' -c $< -o $@

$(GB)/%.c.o: $(GT)/%.c $(GT)/gpu_api.h $(GT)/real_driver.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(GPU_CFLAGS) -c $< -o $@

# The driver-API build loads kernels.cu's code from an embedded fatbin.
$(GB)/kernels_fatbin.h: $(GT)/kernels.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)$(NVCC) $(NVFLAGS) -fatbin $< -o $(GB)/kernels.fatbin
	$(BIN2C) -c -n gt_fatbin $(GB)/kernels.fatbin >$@

$(GB)/hazards-static: $(GB)/hazards.c.o $(GB)/gpu_rt_static.o $(GB)/kernels.o
	$(call say,NVCC,$@)$(NVCC) -o $@ $^ -lpthread

$(GB)/hazards-shared: $(GB)/hazards.c.o $(GB)/gpu_rt_shared.o $(GB)/kernels.o
	$(call say,NVCC,$@)$(NVCC) -cudart shared -o $@ $^ -lpthread

$(GB)/hazards-driver: $(GT)/hazards.c $(GT)/gpu_drv.c $(GT)/gpu_api.h $(GT)/real_driver.h $(GB)/kernels_fatbin.h
	$(call say,CC,$@)$(CC) $(GPU_CFLAGS) -I$(GB) $(GT)/hazards.c $(GT)/gpu_drv.c -o $@ \
	  -L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread

$(GB)/gpubench: $(GB)/gpubench.c.o $(GB)/gpu_rt_static.o $(GB)/kernels.o
	$(call say,NVCC,$@)$(NVCC) -o $@ $^ -lpthread

# make bench's allocation-heavy whole program, its registered variant on
# NVIDIA's runtime API (cudaHostRegister; nvcc's static cudart, as gpubench).
$(GB)/alloc_heavy: bench/alloc_heavy.c tests/common/bench_common.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(GPU_CFLAGS) -DALLOC_HEAVY_CUDA -Itests/common -c $< -o $@.o
	$(call say,NVCC,$@)$(NVCC) -o $@ $@.o -lpthread

# The legacy programs' HIP sources, unchanged, through hipnv/'s mapping.
$(GB)/legacy/%: tests/legacy/%.c tests/legacy/legacy.h tests/legacy/two_devices.h tests/common/hip_check.h tests/common/check.h $(GT)/hipnv/hip/hip_runtime_api.h \
                $(GT)/hipnv/simhip.h $(GB)/simhip_gpu.o $(GB)/kernels.o
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(GPU_CFLAGS) -I$(GT)/hipnv -Itests/legacy -Itests/common -c $< -o $@.o
	$(call say,NVCC,$@)$(NVCC) -o $@ $@.o $(GB)/simhip_gpu.o $(GB)/kernels.o -lpthread

# The same with NVIDIA's shared runtime, where safepin reaches cudaHostUnregister
# itself (cuda/cudart.c); the static runtime's call is out of a preload's reach.
GPU_LEGACY_SHARED := $(GB)/legacy-shared/unreg_in_callback
$(GB)/legacy-shared/%: $(GB)/legacy/%
	@mkdir -p $(dir $@)
	$(call say,NVCC,$@)$(NVCC) -cudart shared -o $@ $<.o $(GB)/simhip_gpu.o $(GB)/kernels.o -lpthread

gpu-build: $(LIB) $(B)/bench/libfloor.so $(GPU_BINS) $(GPU_LEGACY_SHARED)

gpu-test:
	@$(GT)/have-gpu gpu-test || exit 0; \
	  $(MAKE) -j8 gpu-build && python3 $(GT)/run.py

gpu-bench:
	@$(GT)/have-gpu gpu-bench || exit 0; \
	  $(MAKE) -j8 gpu-build && python3 $(GT)/bench.py
