# The custom-op SDK's runtime (sdk/runtime), included by the Makefile, which holds its rule:
# its library (the host model inside), its headers, which install into an include
# directory of their own, and the flags of what links with it.
SDK_LIB := $(HOST_OUT)/libneuron_customop_host.a
# The SDK's runtime and every op program have the device's data model: i386 code (4-byte
# long, size_t and pointers) with SSE arithmetic (no excess precision), `long double` the
# same as `double`, and 8-byte aligned `double` and `long long`, as the Q7's ABI has them
# (docs/customop-api.md, "Device parity"). Whatever compiles or links against the runtime
# takes these flags (the .pc file's Cflags and Libs, the CMake target's options).
SDK_RUST_TARGET := i686-unknown-linux-gnu
SDK_ABI_FLAGS := -m32 -msse2 -mfpmath=sse -mlong-double-64 -malign-double
SDK_NATIVE_LIBS := $(HOST_OUT)/customop-native-static-libs
SDK_HEADERS := $(sort $(shell find -L sdk/include -type f))
COMMON_SOURCES := $(wildcard sdk/common/src/*.rs) sdk/common/Cargo.toml
SDK_SOURCES := $(wildcard sdk/runtime/src/*.rs sdk/runtime/src/*/*.rs sdk/runtime/src/*/*/*.rs sdk/runtime/src/*.c) sdk/device/ubsan_abi.h sdk/runtime/Cargo.toml sdk/runtime/build.rs $(COMMON_SOURCES)

# rust-toolchain.toml lists the target, but rustup adds a listed target only when it installs
# the toolchain itself: a machine whose toolchain was there before gets it here.
.PHONY: sdk-rust-target
sdk-rust-target:
	@if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx $(SDK_RUST_TARGET); then \
	  echo "bootstrap: rustup target add $(SDK_RUST_TARGET)" >&2; rustup target add $(SDK_RUST_TARGET); fi
