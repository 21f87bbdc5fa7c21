// The kernel's memory: the device calls on HBM beyond the guide (the library's
// custom_op.h), a kernel that stages its input through TCM and a block of its own HBM with
// neuron_memcpy, and one that counts the blocks neuron_hbm_allocate gives before it says
// -1; and the C heap given back and taken again. check_device.py runs each on the host and
// on the emulated Q7, and the misuses (`which`).
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// 2 * x for a 1-dimensional float x of at most 1024 elements, through a block of HBM.
// which: 0 as said; 1 a copy one element past x's end; 2 the block freed twice.
torch::Tensor doubled_through_hbm(const torch::Tensor &x, int which)
{
    size_t n = static_cast<size_t>(x.numel()), bytes = n * sizeof(float);
    torch::Tensor out = torch::empty({x.size(0)}, torch::kFloat);
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(bytes + sizeof(float)));
    uint64_t block = 0;
    if (!buf || neuron_hbm_allocate(bytes, &block) != 0)
        return out;
    neuron_memcpy(buf, x.q7_data_ptr().hbm_addr, which == 1 ? bytes + sizeof(float) : bytes);
    for (size_t i = 0; i < n; ++i)
        buf[i] *= 2.0f;
    neuron_memcpy(block, buf, bytes);
    for (size_t i = 0; i < n; ++i)
        buf[i] = 0.0f;
    neuron_memcpy(buf, block, bytes);
    neuron_memcpy(out.q7_data_ptr().hbm_addr, buf, bytes);
    neuron_hbm_deallocate(block);
    if (which == 2)
        neuron_hbm_deallocate(block);
    torch::neuron::tcm_free(buf);
    return out;
}

// out[0]: how many 64-byte blocks neuron_hbm_allocate gave before it said -1 (out is a
// tensor of the kernel's, from the same heap); out[1]: whether one more was given once
// one was given back.
torch::Tensor hbm_blocks(const torch::Tensor &x)
{
    torch::Tensor out = torch::zeros({2}, torch::kFloat);
    uint64_t blocks[40];
    int given = 0;
    while (given < 40 && neuron_hbm_allocate(64, &blocks[given]) == 0)
        ++given;
    float counts[2] = {static_cast<float>(given), 0.0f};
    if (given > 0 && neuron_hbm_deallocate(blocks[--given]) == 0)
        counts[1] = neuron_hbm_allocate(64, &blocks[given]) == 0 ? 1.0f : 0.0f;
    (void)x;
    auto o = out.accessor<float, 1>();
    o[0] = counts[0];
    o[1] = counts[1];
    return out;
}

// Where each buffer is kept while it is used: a store the compiler must make, so that it
// calls malloc and free (a buffer that does not escape, it may leave out).
static float *volatile kept;

// out: how many of ten 6 KiB buffers from malloc (each given back before the next, in the
// device's 10 KiB C heap) were given, and the sum of x through the last.
torch::Tensor heap_reused(const torch::Tensor &x)
{
    torch::Tensor out = torch::zeros({2}, torch::kFloat);
    auto a = x.accessor<float, 1>();
    float rounds = 0.0f, total = 0.0f;
    for (int r = 0; r < 10; ++r) {
        float *buf = static_cast<float *>(malloc(6 << 10));
        if (!buf)
            break;
        kept = buf;
        total = 0.0f;
        for (int64_t i = 0; i < x.size(0); ++i) {
            buf[i] = a[i];
            total += buf[i];
        }
        rounds += 1.0f;
        free(buf);
    }
    auto o = out.accessor<float, 1>();
    o[0] = rounds;
    o[1] = total;
    return out;
}
