/*
 * <torch/torch.h> of the neuron-translate custom-op SDK: the tensor library of Neuron
 * custom operators, for running and debugging their kernels on a workstation over the
 * host model (docs/customop-host.md). Not libtorch: it is installed in an include
 * directory of its own, reachable only through pkg-config neuron_customop_host or CMake's
 * neuron_translate::customop_host. C++14 and later.
 */
#ifndef NEURON_CUSTOMOP_HOST_TORCH_H
#define NEURON_CUSTOMOP_HOST_TORCH_H

#if !defined(__cplusplus) || __cplusplus < 201402L
#error "<torch/torch.h> needs C++14 or later"
#endif

#include <stdint.h>
#include <stdio.h>

#include <neuron_customop_host/accessors.hpp>
#include <neuron_customop_host/ops.hpp>

namespace torch {
using at::CoherencyEnforcer;
using at::Tensor;
using at::TensorAccessor;
using at::TensorReadStreamAccessor;
using at::TensorTcmAccessor;
using at::TensorWriteStreamAccessor;
using c10::IntArrayRef;
using c10::Scalar;
using c10::ScalarType;
using c10::TensorOptions;
using c10::kBFloat16;
using c10::kByte;
using c10::kChar;
using c10::kFloat;
using c10::kHalf;
using c10::kInt;
using c10::kLong;
using c10::kShort;

using at::abs;
using at::abs_out;
using at::add;
using at::add_out;
using at::bitwise_and;
using at::bitwise_and_out;
using at::bitwise_not;
using at::bitwise_not_out;
using at::bitwise_or;
using at::bitwise_or_out;
using at::ceil;
using at::ceil_out;
using at::clamp;
using at::clamp_out;
using at::cos;
using at::cos_out;
using at::div;
using at::div_out;
using at::empty;
using at::exp;
using at::exp_out;
using at::eye;
using at::floor;
using at::floor_out;
using at::full;
using at::log;
using at::log10;
using at::log10_out;
using at::log2;
using at::log2_out;
using at::log_out;
using at::mul;
using at::mul_out;
using at::ones;
using at::pow;
using at::pow_out;
using at::sin;
using at::sin_out;
using at::sub;
using at::sub_out;
using at::tan;
using at::tan_out;
using at::zeros;

namespace neuron {
/// nbytes of this core's 16 KiB TCM pool, or nullptr. Not inlined, so that the runtime
/// learns the call's place (a block never freed is reported with it).
#if defined(__GNUC__)
__attribute__((noinline)) inline void *tcm_malloc(size_t nbytes)
{
    return nt_customop_tcm_malloc_at(nbytes, __builtin_return_address(0));
}
#else
inline void *tcm_malloc(size_t nbytes) { return nt_customop_tcm_malloc(nbytes); }
#endif
/// Returns a block to the pool; nullptr does nothing.
inline void tcm_free(void *ptr) { nt_customop_tcm_free(ptr); }
} // namespace neuron
} // namespace torch

#endif /* NEURON_CUSTOMOP_HOST_TORCH_H */
