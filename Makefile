# neuron-translate: the front door.
#
#   make          device object, host library, header, ntx CLI; prints the ABI report
#   make test     every test (installs what it needs from Debian's packages first)
#   make xtensa   only the device object (dist/xtensa/)
#   make bench    instruction counts under qemu, criterion on the host
#   make install  header, host and device libraries, ntx, pkg-config and CMake package files
#                 (PREFIX, DESTDIR)
#
# Every tool path and flag lives here; scripts receive them through the environment.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all

# Host toolchain (rustup; pinned by rust-toolchain.toml).
CARGO ?= cargo

# Device toolchain: Debian's rustc-web ships LLVM with the Xtensa backend and core's
# sources. A rustup nightly with rust-src works too: XTENSA_RUSTC=$(rustup which rustc
# --toolchain nightly) XTENSA_CARGO=$(rustup which cargo --toolchain nightly) XTENSA_BOOTSTRAP=
XTENSA_RUSTC ?= /usr/bin/rustc
XTENSA_CARGO ?= /usr/bin/cargo
LLVM_SUFFIX ?= -22
LLVM_MC ?= llvm-mc$(LLVM_SUFFIX)
LLVM_OBJCOPY ?= llvm-objcopy$(LLVM_SUFFIX)
LLVM_OBJDUMP ?= llvm-objdump$(LLVM_SUFFIX)
LLVM_AR ?= llvm-ar$(LLVM_SUFFIX)
LLVM_NM ?= llvm-nm$(LLVM_SUFFIX)
XTENSA_CLANG ?= clang$(LLVM_SUFFIX)
XTENSA_LD ?= xtensa-lx106-elf-ld
XTENSA_AS ?= xtensa-lx106-elf-as
XTENSA_OBJCOPY ?= xtensa-lx106-elf-objcopy
XTENSA_NM ?= xtensa-lx106-elf-nm
QEMU_XTENSA ?= qemu-xtensa
# The qemu core model of every emulated run (the device object's tests and benchmarks, and
# ntx op run --device): the SDK runtime's, read from its source (the one place it is set).
QEMU_CPU := $(shell sed -n 's/^const QEMU_CPU: &str = "\(.*\)";/\1/p' sdk/runtime/src/run/device/mod.rs)

XTENSA_SPEC := xtensa/xtensa-ncore2gp-none-elf.json
# The ISA options come from the target specification, the one place they are listed.
XTENSA_MATTR := $(shell sed -n 's/.*"features": *"\([^"]*\)".*/\1/p' $(XTENSA_SPEC))

# Host C compilers for the consumer tests.
HOST_CC ?= gcc
HOST_CXX ?= g++
HOST_CLANG ?= clang$(LLVM_SUFFIX)
HOST_CLANGXX ?= clang++$(LLVM_SUFFIX)
ABIDIFF ?= abidiff
VALGRIND ?= valgrind
PKG_CONFIG ?= pkg-config
CMAKE ?= cmake
# libclang for bindgen (the header round trip test).
LIBCLANG_PATH ?= /usr/lib/llvm$(LLVM_SUFFIX)/lib

# command=Debian package, for xtensa/bootstrap.sh. Empty it to skip installing.
XTENSA_BOOTSTRAP ?= $(XTENSA_RUSTC)=rustc-web $(XTENSA_CARGO)=cargo-web \
	/usr/lib/rustlib/src/rust/library/core=rust-web-src $(LLVM_MC)=llvm-22 \
	$(XTENSA_CLANG)=clang-22 $(XTENSA_LD)=binutils-xtensa-lx106 $(XTENSA_AS)=binutils-xtensa-lx106 \
	$(QEMU_XTENSA)=qemu-user
HOST_BOOTSTRAP ?= $(HOST_CC)=gcc $(HOST_CXX)=g++ $(HOST_CLANG)=clang-22 \
	/usr/lib32/crt1.o=libc6-dev-i386 /usr/lib/gcc/x86_64-linux-gnu/12/32/libstdc++.a=g++-multilib \
	dpkg:libc6-dbg:i386=libc6-dbg:i386 \
	$(HOST_CLANGXX)=clang-22 $(ABIDIFF)=abigail-tools $(VALGRIND)=valgrind $(PKG_CONFIG)=pkgconf $(CMAKE)=cmake \
	$(LIBCLANG_PATH)/libclang$(LLVM_SUFFIX).so.1=libclang1$(LLVM_SUFFIX)

DIST := dist
XTENSA_OUT := $(DIST)/xtensa
HOST_OUT := $(DIST)/host
XTENSA_TARGET_DIR := target/xtensa
DEVICE_OBJ := $(XTENSA_OUT)/translation.o
HOST_LIB := $(HOST_OUT)/libneuron_translate.a
# The native libraries the host library needs (rustc's standard library's), as rustc
# prints them when it builds it: the .pc's Libs.private and the CMake target's link
# interface.
NATIVE_LIBS := $(HOST_OUT)/native-static-libs
include sdk/runtime/runtime.mk
export CARGO XTENSA_RUSTC XTENSA_CARGO XTENSA_MATTR LLVM_MC LLVM_OBJCOPY LLVM_OBJDUMP LLVM_AR \
	XTENSA_CLANG XTENSA_LD XTENSA_AS XTENSA_OBJCOPY XTENSA_NM QEMU_XTENSA QEMU_CPU XTENSA_TARGET_DIR XTENSA_OUT HOST_CC HOST_CXX \
	HOST_CLANG HOST_CLANGXX ABIDIFF VALGRIND PKG_CONFIG CMAKE LIBCLANG_PATH

# Absolute paths of the products, for the tests (which run from their crate's folder).
export NT_DEVICE_OBJ := $(abspath $(DEVICE_OBJ))
export NT_DEVICE_LIB := $(abspath $(XTENSA_OUT)/libneuron_translate.a)
export NT_HOST_LIB := $(abspath $(HOST_LIB))
export NT_NATIVE_LIBS := $(abspath $(NATIVE_LIBS))
export NT_SDK_LIB := $(abspath $(SDK_LIB))
export NT_SDK_NATIVE_LIBS := $(abspath $(SDK_NATIVE_LIBS))
export NT_MANIFEST := $(abspath abi-tests/reference/translation.toml)
NTX := target/release/ntx
export NT_NTX := $(abspath $(NTX))

SOURCES := $(wildcard src/*.rs src/*/*.rs build.rs) Cargo.toml Cargo.lock
NTX_SOURCES := $(wildcard tools/ntx/src/*.rs tools/ntx/src/*/*.rs) tools/ntx/Cargo.toml $(COMMON_SOURCES)
# The header's generator and its cbindgen settings (tools/header).
HEADER_SOURCES := $(wildcard tools/header/src/*.rs) tools/header/Cargo.toml tools/header/cbindgen.toml \
	tools/header/cbindgen-host.toml tools/header/cbindgen-runtime.toml

# The version, from Cargo.toml (the one place it is written).
VERSION := $(shell sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
# The device's name, from its target specification's: the device archive's directory.
DEVICE := $(patsubst %-none-elf,%,$(basename $(notdir $(XTENSA_SPEC))))

.PHONY: all test bench bench-check qemu-test xtensa host ntx abi-report abi-check header header-check bootstrap bootstrap-host bootstrap-xtensa clean

all: xtensa host sdk device-sdk dist-header ntx abi-report

# The ABI of the device object against the original's, as the seed records it.
abi-report: $(NTX) $(DEVICE_OBJ)
	@$(NTX) abi-diff --reference abi-tests/reference/translation.toml --candidate $(DEVICE_OBJ) || true
# The same, failing on a break or on an addition not accepted in the suppression file.
abi-check: $(NTX) $(DEVICE_OBJ)
	$(NTX) abi-diff --reference abi-tests/reference/translation.toml --candidate $(DEVICE_OBJ) \
	  --fail-on addition --suppressions abi-tests/reference/suppressions.toml

ntx: $(NTX)
include sdk/device/device.mk
$(NTX): $(SOURCES) $(NTX_SOURCES)
	$(CARGO) build --locked --release -p ntx --bin ntx

bootstrap: bootstrap-host bootstrap-xtensa sdk-rust-target
bootstrap-xtensa:
	@xtensa/bootstrap.sh $(XTENSA_BOOTSTRAP)
bootstrap-host:
	@xtensa/bootstrap.sh $(HOST_BOOTSTRAP)

xtensa: $(DEVICE_OBJ)
$(DEVICE_OBJ): $(SOURCES) $(XTENSA_SPEC) xtensa/build.sh xtensa/assemble.sh xtensa/trap.s xtensa/lookup.s xtensa/xtensa_info.s | bootstrap-xtensa
	xtensa/build.sh
	@echo "built $(DEVICE_OBJ), $(XTENSA_OUT)/libneuron_translate.a, $(XTENSA_OUT)/translation.lst"

host: $(HOST_LIB)
$(HOST_LIB): $(SOURCES)
	@mkdir -p $(HOST_OUT)
	$(CARGO) rustc --locked --release -p neuron-translate --features sim --lib \
	  -- --print native-static-libs 2> $(HOST_OUT)/rustc.log || { cat $(HOST_OUT)/rustc.log >&2; exit 1; }
	@grep -v '^note: native-static-libs: ' $(HOST_OUT)/rustc.log >&2 || true
	sed -n 's/^note: native-static-libs: //p' $(HOST_OUT)/rustc.log > $(NATIVE_LIBS)
	@test -s $(NATIVE_LIBS) || { echo "rustc printed no native-static-libs" >&2; exit 1; }
	cp target/release/libneuron_translate.a $(HOST_LIB)

sdk: $(SDK_LIB)
$(SDK_LIB): $(SOURCES) $(SDK_SOURCES) | sdk-rust-target
	@mkdir -p $(HOST_OUT)
	$(CARGO) rustc --locked --release -p neuron-customop-host --lib --target $(SDK_RUST_TARGET) \
	  -- --print native-static-libs 2> $(HOST_OUT)/sdk-rustc.log || { cat $(HOST_OUT)/sdk-rustc.log >&2; exit 1; }
	sed -n 's/^note: native-static-libs: //p' $(HOST_OUT)/sdk-rustc.log > $(SDK_NATIVE_LIBS)
	@test -s $(SDK_NATIVE_LIBS) || { echo "rustc printed no native-static-libs" >&2; exit 1; }
	cp target/$(SDK_RUST_TARGET)/release/libneuron_customop_host.a $(SDK_LIB)

# The C headers: their generator (tools/header, nt-header) writes them from the sources
# (the library's, and the SDK runtime's sdk/include/neuron_customop_host/runtime.h);
# `make header` writes the committed copies, `make header-check` fails when one is stale.
.PHONY: header dist-header
header:
	$(CARGO) run --locked -q -p nt-header
header-check:
	$(CARGO) run --locked -q -p nt-header -- --check
DIST_HEADER := $(DIST)/include/neuron_translate.h
# The C++ accessor, written once (not generated), beside it.
CXX_HEADER := include/neuron_translate.hpp
DIST_CXX_HEADER := $(DIST)/include/neuron_translate.hpp
dist-header: $(DIST_HEADER) $(DIST_CXX_HEADER)
# The generator as cargo runs it; `make test` uses the one its test build made
# (tools/header/tests), instead of compiling it again with other features.
NT_HEADER ?= $(CARGO) run --locked -q -p nt-header --
$(DIST_HEADER): $(SOURCES) $(HEADER_SOURCES)
	$(NT_HEADER) --out $@
$(DIST_CXX_HEADER): $(CXX_HEADER)
	@mkdir -p $(dir $@)
	cp $< $@

# The device object under qemu-xtensa (also part of the workspace tests `make test` runs).
qemu-test: bootstrap all
	$(CARGO) test --locked -p abi-tests --test qemu -- --include-ignored

# Instruction counts of every path under qemu (bench/README.md), then host criterion runs.
# The host floors first (bench/remap_cost.c: what a window move costs on this machine),
# which the criterion summary sets the model's figures beside.
bench: bootstrap all
	$(CARGO) run --locked --release -q -p nt-bench --bin nt-bench
	@mkdir -p target/bench
	$(HOST_CC) -O2 -o target/bench/remap_cost bench/remap_cost.c
	target/bench/remap_cost | tee target/bench/remap_cost.txt
	$(HOST_CXX) $(SDK_ABI_FLAGS) -std=c++14 -O3 -Isdk/include -I$(DIST)/include bench/customop/relu_bench.cpp $(SDK_LIB) \
	  $$(cat $(SDK_NATIVE_LIBS)) -o target/bench/relu_bench
	rm -f target/bench/relu_bench.times
	RELU_BENCH_TIMES=target/bench/relu_bench.times target/bench/relu_bench | tee target/bench/customop.txt
	$(MAKE) --no-print-directory python-bench
	$(MAKE) --no-print-directory device-bench
	$(CARGO) bench --locked -q -p nt-bench --bench host
# The counts against bench/budget.toml (make test runs its test build's nt-bench: qemu counts).
NT_BENCH ?= $(CARGO) run --locked --release -q -p nt-bench --bin nt-bench --
bench-check: bootstrap all
	$(NT_BENCH) --check

# Fuzzing (fuzz/, cargo-fuzz on the machine's nightly toolchain).
FUZZ_TOOLCHAIN ?= nightly
CARGO_FUZZ_VERSION ?= 0.13.2
FUZZ_TARGETS := translate_diff abi_parse table_decode npy
# fuzz-smoke runs the targets side by side, FUZZ_JOBS at once, each for a fixed number of
# executions from a fixed seed (libFuzzer's -runs and -seed), so that every run does the same
# work, however fast the machine: about 20 s of one core each on a slow 2-core machine
# (the executions a second of each target differ a hundredfold).
FUZZ_SMOKE_RUNS ?= translate_diff=100000 abi_parse=12000 table_decode=16000 npy=20000
FUZZ_SMOKE_SEED ?= 1
FUZZ_JOBS ?= 3
FUZZ_SECONDS ?= 600
.PHONY: fuzz fuzz-smoke fuzz-corpus fuzz-tools
# A debug build of the tool: it only drives cargo and the fuzzers. On a fresh 2-core machine
# the debug build took 37 s alone; the optimized one 122 s beside the ASan tests' build.
fuzz-tools:
	@command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install --locked --quiet --debug cargo-fuzz --version $(CARGO_FUZZ_VERSION)
# Regenerates the committed seed corpora from the fixtures and the standard vectors.
fuzz-corpus: bootstrap all
	$(CARGO) run --locked -q -p abi-tests --bin nt-corpus -- fuzz/corpus
# Each target from the committed corpus for a bounded time (fuzz/smoke.sh); any finding fails.
FUZZ_ENV = FUZZ_TOOLCHAIN=$(FUZZ_TOOLCHAIN) FUZZ_SMOKE_RUNS="$(FUZZ_SMOKE_RUNS)" FUZZ_SMOKE_SEED=$(FUZZ_SMOKE_SEED) FUZZ_JOBS=$(FUZZ_JOBS)
.PHONY: fuzz-build
fuzz-build: fuzz-tools
	@$(FUZZ_ENV) fuzz/smoke.sh build
fuzz-smoke: fuzz-build all
	@$(FUZZ_ENV) fuzz/smoke.sh run $(FUZZ_TARGETS)
fuzz: fuzz-tools all
	@for t in $(FUZZ_TARGETS); do \
	  (cd fuzz && $(CARGO) +$(FUZZ_TOOLCHAIN) fuzz run -O $$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1) || exit 1; \
	done

# The library-level host tests (abi-tests/library/tests): the library's own logic, with no
# tool but the C compiler; run under AddressSanitizer, and by the mutation testing.
LIBRARY_TESTS := --test safe_api --test differential --test ffi_contract --test guard_pages \
	--test properties --test span --test host_tables --test init_global

# The library-level host tests under AddressSanitizer (nightly). handle_segv/handle_sigill
# off: the trap and store-order tests expect those signals to reach their forked children.
ASAN_TESTS := $(LIBRARY_TESTS)
.PHONY: asan-test
asan-test:
	ASAN_OPTIONS=handle_segv=0:handle_sigill=0:detect_leaks=1 RUSTFLAGS="-Zsanitizer=address" \
	  $(CARGO) +$(FUZZ_TOOLCHAIN) test --locked --no-fail-fast --target x86_64-unknown-linux-gnu \
	  --target-dir target/asan -p library-tests \
	  $(ASAN_TESTS) -- --skip ntx_

# Mutation testing of the library's logic (.cargo/mutants.toml says what and how; the
# mutants no test can kill are listed there with the reason). Not part of `make test`.
# cargo-mutants 27.1 runs its baseline against the mutated package only, where the tests are
# not: the same tests run here first instead, and the tool skips its own baseline.
MUTANTS_VERSION ?= 27.1.0
MUTANTS_JOBS ?= 2
MUTANTS_TESTS := $(LIBRARY_TESTS)
# Then the SDK runtime's checks (.cargo/mutants-sdk.toml), against its unit tests.
.PHONY: mutants mutants-library mutants-sdk mutants-tool
mutants: mutants-library mutants-sdk
mutants-tool:
	@command -v cargo-mutants >/dev/null 2>&1 || $(CARGO) install --locked --quiet cargo-mutants --version $(MUTANTS_VERSION)
# cargo-mutants exits 3 when mutants only timed out (a mutant that makes a loop endless is
# caught by its timeout): MUTANTS_VERDICT passes that and fails only on a missed mutant
# (its missed.txt, printed) or any other failure, with the summary line.
MUTANTS_VERDICT = out=$(1)/mutants.out; \
	if [ -s $$out/missed.txt ]; then echo "mutants: missed, each a check no test holds:"; cat $$out/missed.txt; exit 2; fi; \
	if [ $$status -ne 0 ] && [ $$status -ne 3 ]; then echo "mutants: cargo-mutants failed ($$status)"; exit $$status; fi; \
	echo "mutants: none missed ($$(wc -l < $$out/caught.txt) caught, $$(wc -l < $$out/timeout.txt) by the timeout, $$(wc -l < $$out/unviable.txt) unviable)"
mutants-library: mutants-tool
	$(CARGO) test --locked -q -p library-tests --all-features $(MUTANTS_TESTS)
	status=0; $(CARGO) mutants --jobs $(MUTANTS_JOBS) --test-package library-tests --baseline skip \
	  --timeout 120 --build-timeout 600 -- $(MUTANTS_TESTS) || status=$$?; \
	  $(call MUTANTS_VERDICT,target)
mutants-sdk: mutants-tool
	status=0; $(CARGO) mutants --config .cargo/mutants-sdk.toml --jobs $(MUTANTS_JOBS) \
	  --package neuron-customop-host --timeout 120 --build-timeout 600 -- --lib || status=$$?; \
	  $(call MUTANTS_VERDICT,target/mutants-sdk)

# Installation (GNU conventions): DESTDIR stages, PREFIX and the *DIR variables place.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/neuron_translate
DEVICE_LIBDIR := $(LIBDIR)/$(DEVICE)
INSTALL ?= install
# The files written from templates at install: template:place. The templates name the
# final places (not DESTDIR's), the version and the host library's native libraries.
TEMPLATES := install/neuron_translate.pc.in:$(PKGCONFIGDIR)/neuron_translate.pc \
	install/neuron_translate-device.pc.in:$(PKGCONFIGDIR)/neuron_translate-$(DEVICE).pc \
	install/neuron_translateConfig.cmake.in:$(CMAKEDIR)/neuron_translateConfig.cmake \
	install/neuron_translateConfigVersion.cmake.in:$(CMAKEDIR)/neuron_translateConfigVersion.cmake \
	install/neuron_customop_host.pc.in:$(PKGCONFIGDIR)/neuron_customop_host.pc \
	install/neuron_customop_device.pc.in:$(PKGCONFIGDIR)/neuron_customop_device.pc
# The SDK's headers' own include directory, and the device's C and C++ headers'.
SDK_INCLUDEDIR := $(INCLUDEDIR)/neuron_customop_host
DEVICE_INCLUDEDIR := $(INCLUDEDIR)/neuron_customop_device
SDK_INSTALLED_HEADERS := $(patsubst sdk/include/%,$(SDK_INCLUDEDIR)/%,$(SDK_HEADERS))
# Every installed file, as DESTDIR-relative paths (make uninstall removes exactly these).
INSTALLED := $(INCLUDEDIR)/neuron_translate.h $(INCLUDEDIR)/neuron_translate.hpp $(LIBDIR)/libneuron_translate.a \
	$(DEVICE_LIBDIR)/translation.o $(DEVICE_LIBDIR)/libneuron_translate.a $(BINDIR)/ntx \
	$(DEVICE_LIBDIR)/libneuron_customop_device.a $(DEVICE_LIBDIR)/libnt_qemu_count.so \
	$(LIBDIR)/libneuron_customop_host.a $(SDK_INSTALLED_HEADERS) \
	$(foreach t,$(TEMPLATES),$(lastword $(subst :, ,$(t))))
.PHONY: install uninstall
install: $(DIST_HEADER) $(DIST_CXX_HEADER) $(HOST_LIB) $(SDK_LIB) $(DEVICE_OBJ) $(NTX) $(DEVICE_RT) $(COUNT_PLUGIN) \
		$(DEVICE_SYSROOT_STAMP)
	@echo "install: into $(DESTDIR)$(PREFIX)"
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DEVICE_LIBDIR) \
	  $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR)
	$(INSTALL) -m 644 $(DIST_HEADER) $(DIST_CXX_HEADER) $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 644 $(HOST_LIB) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(DEVICE_OBJ) $(XTENSA_OUT)/libneuron_translate.a $(DEVICE_RT) $(DESTDIR)$(DEVICE_LIBDIR)/
	$(INSTALL) -m 755 $(COUNT_PLUGIN) $(DESTDIR)$(DEVICE_LIBDIR)/
	rm -rf $(DESTDIR)$(DEVICE_INCLUDEDIR) && mkdir -p $(DESTDIR)$(DEVICE_INCLUDEDIR) && \
	  cp -R $(DEVICE_SYSROOT)/include/. $(DESTDIR)$(DEVICE_INCLUDEDIR)/
	$(INSTALL) -m 755 $(NTX) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 644 $(SDK_LIB) $(DESTDIR)$(LIBDIR)/
	@for h in $(SDK_HEADERS); do \
	  $(INSTALL) -D -m 644 $$h $(DESTDIR)$(SDK_INCLUDEDIR)/$${h#sdk/include/} || exit 1; \
	done
	@native="$$(cat $(NATIVE_LIBS))"; sdk_native="$$(cat $(SDK_NATIVE_LIBS))"; \
	for t in $(TEMPLATES); do \
	  out=$(DESTDIR)$${t#*:}; \
	  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	      -e 's|@DEVICE_LIBDIR@|$(DEVICE_LIBDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	      -e 's|@VERSION_MAJOR@|$(word 1,$(subst ., ,$(VERSION)))|g' \
	      -e 's|@VERSION_MINOR@|$(word 2,$(subst ., ,$(VERSION)))|g' -e 's|@DEVICE@|$(DEVICE)|g' \
	      -e "s|@NATIVE_STATIC_LIBS@|$$native|g" -e "s|@NATIVE_LIBS@|$$(echo $$native | tr ' ' ';')|g" \
	      -e "s|@SDK_INCLUDEDIR@|$(SDK_INCLUDEDIR)|g" -e "s|@SDK_ABI_FLAGS@|$(SDK_ABI_FLAGS)|g" \
	      -e "s|@SDK_ABI_OPTIONS@|$$(echo $(SDK_ABI_FLAGS) | tr ' ' ';')|g" -e "s|@SDK_NATIVE_STATIC_LIBS@|$$sdk_native|g" \
	      -e "s|@DEVICE_INCLUDEDIR@|$(DEVICE_INCLUDEDIR)|g" -e "s|@DEVICE_KERNEL_MATTR@|$(DEVICE_KERNEL_MATTR)|g" \
	      -e "s|@XTENSA_CLANG@|$(XTENSA_CLANG)|g" -e "s|@HOST_CLANGXX@|$(HOST_CLANGXX)|g" -e "s|@LLVM_MC@|$(LLVM_MC)|g" -e "s|@LLVM_OBJCOPY@|$(LLVM_OBJCOPY)|g" \
	      -e "s|@XTENSA_LD@|$(XTENSA_LD)|g" -e "s|@QEMU_XTENSA@|$(QEMU_XTENSA)|g" \
	      -e "s|@SDK_NATIVE_LIBS@|$$(echo $$sdk_native | tr ' ' ';')|g" \
	      $${t%%:*} > $$out || exit 1; \
	  chmod 644 $$out; \
	  echo "wrote $$out"; \
	done
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rm -rf $(DESTDIR)$(DEVICE_INCLUDEDIR)
	-rmdir $(DESTDIR)$(DEVICE_LIBDIR) $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(patsubst %/,%,$(dir $(CMAKEDIR))) 2>/dev/null ; find $(DESTDIR)$(SDK_INCLUDEDIR) -depth -type d -empty -delete 2>/dev/null || true

# A Python virtual environment at $(1), made afresh only where this build made it (its
# mark, VENV_MARK): a folder a user named (TORCH_VENV=<an environment of theirs>) is used as
# it is and the requirements go into it; nothing of it is removed.
VENV_MARK := .made-by-neuron-translate
define fresh_venv
	if [ -e $(1) ] && [ ! -e $(1)/$(VENV_MARK) ]; then \
	  test -x $(1)/bin/python || { echo "$(1): not a virtual environment this build made, and no bin/python: left as it is" >&2; exit 1; }; \
	  echo "$(1): an environment this build did not make: the requirements go into it, nothing is removed"; \
	else rm -rf $(1) && $(PYTHON) -m venv $(1) && touch $(1)/$(VENV_MARK); fi
endef

# Translation validation of the device object (prove/, docs/prove.md): every path of the
# machine code of each exported function against the contract, through Ghidra's SLEIGH
# semantics (pypcode) and z3, then the mutants that must be refuted. The packages are pinned
# in prove/requirements.txt and installed into a virtual environment under target/, once:
# the stamp, written after a complete install, names the interpreter's version, so a new
# interpreter or new requirements rebuild it and nothing else does. prove/prove.sh caches
# the result by the hash of the object, the validator and the settings below.
PYTHON ?= python3
PROVE_VENV := target/prove-venv
PROVE_PY := $(PROVE_VENV)/bin/python
PYTHON_VERSION := $(shell $(PYTHON) -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)
PROVE_STAMP := $(PROVE_VENV)/installed-python-$(PYTHON_VERSION)
# A stamp whose environment no longer runs (deleted, or its interpreter gone) does not count.
ifneq ($(wildcard $(PROVE_STAMP)),)
ifneq ($(shell $(PROVE_PY) -c 'import z3, pypcode, elftools' 2>/dev/null && echo ok),ok)
$(shell rm -f $(PROVE_STAMP))
endif
endif
PROVE_SOURCES := $(sort $(wildcard prove/*.py)) prove/link.ld prove/requirements.txt prove/prove.sh
# Processes for the proof's units (each unit in a fresh process) and for the mutants.
PROVE_JOBS ?= 2
# The proof's seeds: z3's random seed (smt and sat) and Python's hash seed. Fixed, so that
# every run explores and solves the same; a caller may pick others (part of the cache key).
PROVE_SEED ?= 0
PYTHONHASHSEED ?= 0
export PROVE_PY PROVE_JOBS PROVE_SEED PYTHONHASHSEED
$(PROVE_STAMP): prove/requirements.txt
	@echo "prove: installing pypcode, z3-solver and pyelftools into $(PROVE_VENV)"
	@$(call fresh_venv,$(PROVE_VENV))
	$(PROVE_VENV)/bin/pip install -q --disable-pip-version-check -r prove/requirements.txt
	touch $@
# The environment alone (make test installs it beside the builds).
.PHONY: prove-env
prove-env: $(PROVE_STAMP)
.PHONY: prove
prove: $(PROVE_STAMP) $(DEVICE_OBJ) | bootstrap-xtensa
	@prove/prove.sh $(DEVICE_OBJ) $(PROVE_SOURCES)

# The validator's Python held to the Rust code's standard: formatted and linted by ruff
# (pinned in prove/requirements.txt, configured in prove/ruff.toml).
.PHONY: prove-lint
prove-lint: $(PROVE_STAMP)
	$(PROVE_VENV)/bin/ruff format --check --config prove/ruff.toml prove $(SDK_CHECKS)
	$(PROVE_VENV)/bin/ruff check --config prove/ruff.toml prove $(SDK_CHECKS)
	$(PROVE_PY) prove/lengths.py prove/*.py $(SDK_CHECKS)

# The Python package at its own minimum version (sdk/python/pyproject.toml's settings):
# ruff's rules for that version, and mypy.
.PHONY: python-lint
python-lint: $(PROVE_STAMP) sdk-env
	$(PROVE_VENV)/bin/ruff check --config sdk/python/pyproject.toml sdk/python/src
	cd sdk/python && $(abspath $(SDK_VENV))/bin/mypy --cache-dir=$(abspath target/mypy-cache)

# The custom-op SDK's checks (sdk/tests/customops/*.py) compare with NumPy, pinned in
# sdk/requirements.txt and installed into target/sdk-venv once (a stamp, as the
# validator's environment).
SDK_CHECKS := $(sort $(wildcard sdk/tests/customops/*.py sdk/tests/parity/*.py sdk/python/src/neuron_customop_host/*.py sdk/python/tests/*.py \
  sdk/python/torch_tests/*.py bench/customop/*.py))
SDK_VENV := target/sdk-venv
SDK_STAMP := $(SDK_VENV)/installed-python-$(PYTHON_VERSION)
ifneq ($(wildcard $(SDK_STAMP)),)
ifneq ($(shell $(SDK_VENV)/bin/python -c 'import numpy' 2>/dev/null && echo ok),ok)
$(shell rm -f $(SDK_STAMP))
endif
endif
export NT_SDK_PYTHON := $(abspath $(SDK_VENV)/bin/python)
.PHONY: sdk-env samples-check
sdk-env: $(SDK_STAMP)
# The public aws-neuron-samples relu kernels from a checkout (SAMPLES=<path>), unmodified,
# run by an installed ntx op run (opt-in; docs/customop-host.md says what it showed).
SAMPLES_PREFIX := target/samples-prefix
samples-check: $(SDK_STAMP)
	@test -d "$(SAMPLES)/torch-neuronx" || { echo "samples-check: set SAMPLES to an aws-neuron-samples checkout" >&2; exit 1; }
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(SAMPLES_PREFIX))
	$(SDK_VENV)/bin/python sdk/tests/customops/samples_check.py $(abspath $(SAMPLES_PREFIX))/bin/ntx \
	  "$(abspath $(SAMPLES))" target/samples-work
$(SDK_STAMP): sdk/requirements.txt
	@$(call fresh_venv,$(SDK_VENV))
	$(SDK_VENV)/bin/pip install --quiet --disable-pip-version-check -r sdk/requirements.txt
	touch $@

# The Python front end's rows (bench/customop/python_bench.py): an installed tree and the
# package in the SDK checks' environment, relu through TCM against NumPy.
BENCH_PREFIX := target/bench/prefix
.PHONY: python-bench python-package device-bench
# The relu kernels on the emulated Q7 (bench/customop/device_bench.py): instructions per
# element and the emulation's time beside the host model's.
device-bench: $(SDK_STAMP)
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(BENCH_PREFIX)) > /dev/null
	$(SDK_VENV)/bin/python bench/customop/device_bench.py $(abspath $(BENCH_PREFIX))/bin/ntx \
	  sdk/tests/customops target/bench/device-work | tee target/bench/device.txt
python-bench: python-package
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(BENCH_PREFIX)) > /dev/null
	$(SDK_VENV)/bin/python bench/customop/python_bench.py $(abspath $(BENCH_PREFIX))/bin/ntx \
	  sdk/tests/customops target/bench/python-build | tee target/bench/python.txt
# The package installed into the SDK checks' environment, from a copy (a build writes into
# the folder it builds), without what an earlier `pip install ./sdk/python` left in the
# checkout (setuptools would take its stale build/ over the sources).
python-package: $(SDK_STAMP)
	rm -rf target/python-package && mkdir -p target && cp -r sdk/python target/python-package
	rm -rf target/python-package/build target/python-package/src/*.egg-info
	$(SDK_VENV)/bin/pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
	  --force-reinstall ./target/python-package

# Opt-in, not in make test: PyTorch (CPU; PyPI's Linux wheel brings the CUDA libraries, a
# few GB) in an environment of its own under target/, once, then the package's tests and
# its torch tests (torch.ops, autograd, the MLP whose losses must be bit-identical).
TORCH_VENV := target/torch-venv
TORCH_STAMP := $(TORCH_VENV)/installed-python-$(PYTHON_VERSION)
TORCH_PREFIX := target/torch-prefix
.PHONY: torch-check
$(TORCH_STAMP): sdk/python/torch-requirements.txt sdk/requirements.txt
	@$(call fresh_venv,$(TORCH_VENV))
	$(TORCH_VENV)/bin/pip install --quiet --disable-pip-version-check -r sdk/requirements.txt \
	  -r sdk/python/torch-requirements.txt
	touch $@
torch-check: $(TORCH_STAMP)
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(TORCH_PREFIX)) > /dev/null
	rm -rf target/torch-package && cp -r sdk/python target/torch-package
	rm -rf target/torch-package/build target/torch-package/src/*.egg-info
	$(TORCH_VENV)/bin/pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
	  --force-reinstall ./target/torch-package
	NEURON_CUSTOMOP_HOST_NTX=$(abspath $(TORCH_PREFIX))/bin/ntx NT_ROOT=$(CURDIR) PYTHONDONTWRITEBYTECODE=1 \
	  $(TORCH_VENV)/bin/python -m pytest -q -p no:cacheprovider target/torch-package/torch_tests \
	  target/torch-package/tests

# The public samples' libraries through torch.library.opcheck (SAMPLES=<checkout>), opt-in.
.PHONY: samples-torch-check
samples-torch-check: $(TORCH_STAMP)
	@test -d "$(SAMPLES)/torch-neuronx" || { echo "samples-torch-check: set SAMPLES to an aws-neuron-samples checkout" >&2; exit 1; }
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(TORCH_PREFIX)) > /dev/null
	rm -rf target/torch-package && cp -r sdk/python target/torch-package
	rm -rf target/torch-package/build target/torch-package/src/*.egg-info
	$(TORCH_VENV)/bin/pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
	  --force-reinstall ./target/torch-package
	NEURON_CUSTOMOP_HOST_NTX=$(abspath $(TORCH_PREFIX))/bin/ntx PYTHONDONTWRITEBYTECODE=1 \
	  $(TORCH_VENV)/bin/python sdk/python/torch_tests/samples_opcheck.py "$(abspath $(SAMPLES))" target/samples-torch
	NEURON_CUSTOMOP_HOST_NTX=$(abspath $(TORCH_PREFIX))/bin/ntx PYTHONDONTWRITEBYTECODE=1 \
	  $(TORCH_VENV)/bin/python sdk/python/torch_tests/samples_drivers.py "$(abspath $(SAMPLES))" target/samples-drivers

# The PyTorch path's speed (bench/customop/torch_bench.py), opt-in as torch-check is.
.PHONY: torch-bench
torch-bench: $(TORCH_STAMP)
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(TORCH_PREFIX)) > /dev/null
	rm -rf target/torch-package && cp -r sdk/python target/torch-package
	rm -rf target/torch-package/build target/torch-package/src/*.egg-info
	$(TORCH_VENV)/bin/pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
	  --force-reinstall ./target/torch-package
	@mkdir -p target/bench
	PYTHONDONTWRITEBYTECODE=1 $(TORCH_VENV)/bin/python bench/customop/torch_bench.py \
	  $(abspath $(TORCH_PREFIX))/bin/ntx sdk/tests/customops target/bench/torch-build | tee target/bench/torch.txt

.PHONY: clippy
clippy:
	$(CARGO) clippy --locked --workspace --all-targets --all-features -- -D warnings

.PHONY: fmt-check
fmt-check:
	$(CARGO) fmt --all --check
	cd fuzz && $(CARGO) fmt --check

# The tests that need this Makefile's tools are #[ignore]d for a plain `cargo test` (which
# then says so); here they all run, side by side where independent (one step's serial
# stretches leave the other core to another): the linted test build beside the device's
# build and the two Python environments (mostly waiting on the network: a job slot each);
# the proof (its work does not depend on the load) beside the host builds and the object's
# checks; last the workspace's tests, which then only run (none of them is timed).
# Opt-in, for make test's time on 2 cores: the nightly fuzz build (264 s of a core; the
# targets' checks run over the committed corpus in abi-tests/tests/fuzz_corpus.rs; `make
# fuzz-smoke`) and the library tests under AddressSanitizer (`make asan-test`, 74 s).
# The test build is also the workspace's lint: clippy's driver (what `cargo clippy` runs)
# compiles the workspace's own crates (rustc-workspace-wrapper) and lints every target as
# `make clippy` does, warnings as errors; the dependencies are compiled once, not checked
# then compiled (clippy alone took 146 s of the cores on a fresh clone).
LINTED := --config 'build.rustc-workspace-wrapper="clippy-driver"' --config 'build.rustflags=["-Dwarnings"]'
WORKSPACE_TESTS := --locked --workspace --all-features $(LINTED)
.PHONY: test-build workspace-tests
test-build:
	$(CARGO) test $(WORKSPACE_TESTS) --all-targets --no-run
# The workspace's tests in two halves side by side (cargo runs one test binary at a time):
# the long ones (SLOW_TESTS), which mostly wait on compilers, qemu and pip, and every other
# test target with the doc tests. Both select the whole workspace with test-build's flags,
# so that nothing is built again. Balanced by a fresh clone's times (2026-12-07, 2 cores).
SLOW_TESTS := sdk_runner sdk_python accessor
TEST_FILES := $(basename $(notdir $(wildcard abi-tests/tests/*.rs abi-tests/library/tests/*.rs sdk/tests/tests/*.rs tools/*/tests/*.rs)))
.PHONY: workspace-tests-slow workspace-tests-rest
workspace-tests:
	$(MAKE) --no-print-directory -j2 workspace-tests-slow workspace-tests-rest
workspace-tests-slow:
	$(CARGO) test $(WORKSPACE_TESTS) $(addprefix --test ,$(SLOW_TESTS)) -- --include-ignored
workspace-tests-rest:
	$(CARGO) test $(WORKSPACE_TESTS) --lib --bins \
	  $(addprefix --test ,$(filter-out $(SLOW_TESTS),$(TEST_FILES))) -- --include-ignored
	$(CARGO) test $(WORKSPACE_TESTS) --doc
# Some of the test files (abi-tests/tests, sdk/tests/tests) with the Makefile's tools, after a `make`: for example
# make test-files TESTS="--test install --test host_model".
TESTS ?=
.PHONY: test-files
test-files:
	$(CARGO) test --locked -p abi-tests -p nt-sdk-tests $(TESTS) -- --include-ignored
# make test's parts as one graph, each a make of its own: the proof once the device object
# and its environment are there, beside the linted test build; the host builds and checks
# after that build (its nt-header); the tests' slow half when they end, beside the proof;
# the other half (prove_cost and prove_replay read the proof's results) after both.
.PHONY: test-proof test-host-checks test-late test-late-slow test-late-rest
test-proof: xtensa prove-env sdk-env
	$(MAKE) --no-print-directory prove-lint
	$(MAKE) --no-print-directory python-lint
	$(MAKE) --no-print-directory prove
test-host-checks: test-build xtensa
	$(MAKE) --no-print-directory -j2 all abi-check bench-check
test-late: test-late-slow test-late-rest
test-late-slow: test-host-checks sdk-env
	$(MAKE) --no-print-directory workspace-tests-slow
test-late-rest: test-host-checks test-proof
	$(MAKE) --no-print-directory workspace-tests-rest
# Each step says how long it took (and the total at the end), for CI's log.
STEP = t=$$(date +%s); $(MAKE) --no-print-directory
STEP_DONE = && echo "make test: step $(1) took $$(( $$(date +%s) - t )) s"
TEST_T0 := target/make-test-started
# No incremental compilation: a fresh clone gains nothing from its caches and pays for
# writing them (the test build took 192 s of the cores instead of 225, 2026-12-07).
test: export CARGO_INCREMENTAL := 0
test: export NT_HEADER := $(CURDIR)/target/debug/nt-header
test: export NT_BENCH := $(CURDIR)/target/debug/nt-bench
test:
	@mkdir -p target && date +%s > $(TEST_T0)
	@$(STEP) bootstrap fmt-check $(call STEP_DONE,0 (packages, formatting))
	@$(STEP) -j4 test-late $(call STEP_DONE,1 (the linted test build; the proof; the host builds and checks; the workspace tests))
	@echo "make test: passed in $$(( $$(date +%s) - $$(cat $(TEST_T0)) )) s"

# Opt-in: the warnings the device's compile turns off (tools/ntx/src/parity.rs) against
# clang 10's own front end (libclang 10.0.1 from PyPI, x86_64 only; it needs libtinfo5).
CLANG10_VENV := target/clang10-venv
.PHONY: clang10-check
clang10-check:
	@dpkg -s libtinfo5 >/dev/null 2>&1 || apt-get install -y -q libtinfo5 >/dev/null 2>&1 || \
	  { apt-get update -qq && apt-get install -y -q libtinfo5 >/dev/null; }
	@test -x $(CLANG10_VENV)/bin/python || python3 -m venv $(CLANG10_VENV)
	$(CLANG10_VENV)/bin/pip install --quiet libclang==10.0.1.0
	$(CLANG10_VENV)/bin/python sdk/tests/parity/check_clang10.py $(HOST_CLANGXX)

# Rewrites abi-tests/golden/ from ntx's output now (after an intended change to an output;
# review the diff before committing it).
.PHONY: golden
golden: all
	NT_BLESS=1 $(CARGO) test --locked -p abi-tests --test ntx_golden -- --include-ignored

clean:
	rm -rf $(DIST) target
