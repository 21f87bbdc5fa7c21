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

// The device runtime's calls on HBM a kernel may make beyond the guide, as the library's
// custom_op.h declares them (docs/customop-api.md, "Device parity"): HBM from the heap a
// kernel's tensors come from, and copies between local memory and HBM, checked against
// the tensors and blocks live (the device's DMA is not).

/// nbytes of HBM aligned to alignment (64 when 0): 0 and its SoC address in *ptr, or -1.
inline int neuron_hbm_allocate(size_t nbytes, uint64_t *ptr, size_t alignment = 0)
{
    return nt_customop_hbm_allocate(nbytes, ptr, alignment);
}
/// Gives back a block neuron_hbm_allocate gave: 0, or -1.
inline int neuron_hbm_deallocate(uint64_t ptr) { return nt_customop_hbm_deallocate(ptr); }
/// n bytes from HBM src to local dst.
NT_CUSTOMOP_PLACED inline int neuron_memcpy(void *dst, uint64_t src, size_t n)
{
    nt_customop_hbm_copy(src, n, dst, false, NT_CUSTOMOP_CALLER);
    nt_customop::hbm_move(src, n, dst, false);
    return 0;
}
/// n bytes from local src to HBM dst.
NT_CUSTOMOP_PLACED inline int neuron_memcpy(uint64_t dst, void *src, size_t n)
{
    nt_customop_hbm_copy(dst, n, src, true, NT_CUSTOMOP_CALLER);
    nt_customop::hbm_move(dst, n, src, true);
    return 0;
}

#endif /* NEURON_CUSTOMOP_HOST_NEURON_UTILS_HPP */
