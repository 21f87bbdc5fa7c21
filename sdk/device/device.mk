# The kernels' programs for the emulated Q7 (ntx op run --device, docs/customop-device.md),
# included by the Makefile: the device runtime (sdk/device) as an archive beside the
# device object, and the C and C++ headers a kernel is built with for the device:
# newlib's and libstdc++'s as Debian packages them for a 32-bit bare-metal target (their
# arm-none-eabi configuration; headers only, no library of theirs is linked), fetched
# with apt-get download and unpacked under target/ (nothing is installed on the system).

DEVICE_RT := $(XTENSA_OUT)/libneuron_customop_device.a
DEVICE_RT_SOURCES := sdk/device/start.S sdk/device/fpu.S sdk/device/mulhigh.S sdk/device/channel.c sdk/device/runtime.c sdk/device/memory.c sdk/device/support.c sdk/device/printf.c sdk/device/span.c sdk/device/protocol.h sdk/device/channel.h sdk/device/ubsan_abi.h \
  sdk/device/builtins.sh sdk/device/builtins/Cargo.toml sdk/device/builtins/Cargo.lock sdk/device/builtins/src/lib.rs
DEVICE_RT_DIR := target/device-rt
DEVICE_SYSROOT := target/device-sysroot
DEVICE_SYSROOT_STAMP := $(DEVICE_SYSROOT)/unpacked
DEVICE_DEBS := libnewlib-dev libstdc++-arm-none-eabi-dev
# The ISA options kernels and the device runtime are built with: the device object's, and
# those of the Q7's scalar options (docs/q7-isa.md, the one list with their evidence) that
# LLVM's Xtensa backend has: single-precision FP with its boolean registers, the 32-bit
# divider, MIN/MAX, SEXT, NSA, CLAMPS, the zero-overhead loops, which qemu's de233_fpu core
# executes, and MUL32_HIGH, whose MULSH and MULUH no qemu core executes: the device
# runtime completes them (mulhigh.S).
DEVICE_Q7_OPTIONS := +fp,+bool,+div32,+minmax,+sext,+nsa,+clamps,+loop,+mul32high
DEVICE_KERNEL_MATTR := $(XTENSA_MATTR),$(DEVICE_Q7_OPTIONS)
comma := ,
DEVICE_FEATURES = $(foreach f,$(subst $(comma), ,$(1)),-Xclang -target-feature -Xclang $(f))

$(DEVICE_SYSROOT_STAMP): sdk/device/device.mk
	rm -rf $(DEVICE_SYSROOT) && mkdir -p $(DEVICE_SYSROOT)/debs
	cd $(DEVICE_SYSROOT)/debs && { apt-get download $(DEVICE_DEBS) 2>/dev/null || \
	  { apt-get update -qq && apt-get download $(DEVICE_DEBS); }; }
	for d in $(DEVICE_SYSROOT)/debs/*.deb; do dpkg-deb -x $$d $(DEVICE_SYSROOT)/root || exit 1; done
	mv $(DEVICE_SYSROOT)/root/usr/include/newlib $(DEVICE_SYSROOT)/include
	mv $(DEVICE_SYSROOT)/include/c++/*/ $(DEVICE_SYSROOT)/cxx && rm -rf $(DEVICE_SYSROOT)/include/c++
	mv $(DEVICE_SYSROOT)/cxx $(DEVICE_SYSROOT)/include/c++
	rm -rf $(DEVICE_SYSROOT)/include/c++/arm-none-eabi/arm $(DEVICE_SYSROOT)/include/c++/arm-none-eabi/thumb \
	  $(DEVICE_SYSROOT)/root $(DEVICE_SYSROOT)/debs
	touch $@

$(DEVICE_RT): $(DEVICE_RT_SOURCES) $(CXX_HEADER) include/neuron_translate.h sdk/include/neuron_customop_host/runtime.h \
		xtensa/assemble.sh sdk/device/device.mk | bootstrap-xtensa
	@mkdir -p $(DEVICE_RT_DIR) $(dir $@)
	for f in channel runtime memory support printf span; do \
	  $(XTENSA_CLANG) --target=xtensa -O2 -g -std=c11 -Wall -Wextra -Werror -ffreestanding -fno-builtin \
	    -ffunction-sections -fdata-sections -fno-jump-tables $(call DEVICE_FEATURES,$(DEVICE_KERNEL_MATTR)) \
	    -Isdk/include -Iinclude -Isdk/device -S sdk/device/$$f.c -o $(DEVICE_RT_DIR)/$$f.s && \
	  sed -i '/^\s*\.cfi_/d' $(DEVICE_RT_DIR)/$$f.s && \
	  XTENSA_MATTR=$(DEVICE_KERNEL_MATTR) xtensa/assemble.sh $(DEVICE_RT_DIR)/$$f.s $(DEVICE_RT_DIR)/$$f.o || exit 1; \
	done
	$(LLVM_MC) -triple=xtensa -mattr=$(XTENSA_MATTR),+exception -filetype=obj sdk/device/start.S \
	  -o $(DEVICE_RT_DIR)/start.o
	$(LLVM_MC) -triple=xtensa -mattr=$(DEVICE_KERNEL_MATTR) -filetype=obj sdk/device/fpu.S -o $(DEVICE_RT_DIR)/fpu.o
	$(LLVM_MC) -triple=xtensa -mattr=$(XTENSA_MATTR),+exception -filetype=obj sdk/device/mulhigh.S -o $(DEVICE_RT_DIR)/mulhigh.o
	XTENSA_SPEC=$(abspath $(XTENSA_SPEC)) XTENSA_TARGET_DIR=$(abspath $(XTENSA_TARGET_DIR)) LLVM_NM=$(LLVM_NM) \
	  sdk/device/builtins.sh $(DEVICE_RT_DIR)/builtins.o $(DEVICE_RT_DIR)/start.o $(DEVICE_RT_DIR)/fpu.o $(DEVICE_RT_DIR)/mulhigh.o $(DEVICE_RT_DIR)/channel.o $(DEVICE_RT_DIR)/runtime.o \
	  $(DEVICE_RT_DIR)/memory.o $(DEVICE_RT_DIR)/support.o $(DEVICE_RT_DIR)/printf.o $(DEVICE_RT_DIR)/span.o
	rm -f $@ && $(LLVM_AR) rcs $@ $(DEVICE_RT_DIR)/start.o $(DEVICE_RT_DIR)/fpu.o $(DEVICE_RT_DIR)/mulhigh.o $(DEVICE_RT_DIR)/channel.o $(DEVICE_RT_DIR)/runtime.o $(DEVICE_RT_DIR)/memory.o $(DEVICE_RT_DIR)/support.o \
	  $(DEVICE_RT_DIR)/printf.o $(DEVICE_RT_DIR)/span.o $(DEVICE_RT_DIR)/builtins.o

# The qemu plugin that counts what a kernel's program executes (a host shared object).
COUNT_PLUGIN := $(XTENSA_OUT)/libnt_qemu_count.so
$(COUNT_PLUGIN): sdk/qemu/count_plugin.c sdk/qemu/count_profile.h sdk/qemu/tcm_watch.h sdk/device/device.mk
	@mkdir -p $(dir $@)
	$(HOST_CC) -O2 -std=c11 -Wall -Wextra -Werror -shared -fPIC -o $@ sdk/qemu/count_plugin.c

.PHONY: device-sdk
device-sdk: $(DEVICE_RT) $(DEVICE_SYSROOT_STAMP) $(COUNT_PLUGIN)
