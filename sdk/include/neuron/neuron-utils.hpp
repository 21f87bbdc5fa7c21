/*
 * <neuron/neuron-utils.hpp> of the neuron-translate custom-op SDK: the op's output and the
 * cores. C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_NEURON_UTILS_HPP
#define NEURON_CUSTOMOP_HOST_NEURON_UTILS_HPP

#include <torch/torch.h>

/// The op's output tensor itself: once a kernel calls it, what the kernel returns is
/// ignored. Under several cores it is the only way to give the output.
inline torch::Tensor get_dst_tensor() { return nt_customop::adopt(nt_customop_dst_tensor()); }
/// This core, in [0, get_cpu_count()).
inline uint32_t get_cpu_id() { return nt_customop_cpu_id(); }
/// As the device's library says it: 8 on one core as on eight (its parallel.o returns the
/// constant; a kernel that divides its work by it handles an eighth on one core), the
/// cores running on 2 to 7 (which only this SDK runs, with a warning).
inline uint32_t get_cpu_count()
{
    const uint32_t cores = nt_customop_cpu_count();
    return cores == 1 ? NT_CUSTOMOP_DEVICE_CPU_COUNT : cores;
}

#endif /* NEURON_CUSTOMOP_HOST_NEURON_UTILS_HPP */
