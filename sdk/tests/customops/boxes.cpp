// A box kernel in the style of the IoU losses: for n pairs of boxes (x0, y0, x1, y1) in two
// [n, 4] tensors, the area of each pair's overlap, through TCM in blocks of 64 boxes, with
// std::max and std::min from <algorithm>, and a summary printed with printf. It builds for
// the host and for the emulated Q7 alike (check_device.py compares the two runs).
#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor box_overlap(const torch::Tensor &a, const torch::Tensor &b)
{
    const size_t block = 64;
    size_t n = static_cast<size_t>(a.size(0));
    torch::Tensor out = torch::empty({a.size(0)}, torch::kFloat);
    float *pa = static_cast<float *>(torch::neuron::tcm_malloc(block * 4 * sizeof(float)));
    float *pb = static_cast<float *>(torch::neuron::tcm_malloc(block * 4 * sizeof(float)));
    float *po = static_cast<float *>(torch::neuron::tcm_malloc(block * sizeof(float)));
    auto ta = a.tcm_accessor();
    auto tb = b.tcm_accessor();
    auto to = out.tcm_accessor();
    int overlapping = 0;
    float largest = 0.0f;
    for (size_t done = 0; done < n; done += block) {
        size_t k = std::min(block, n - done);
        ta.tensor_to_tcm<float>(pa, done * 4, k * 4);
        tb.tensor_to_tcm<float>(pb, done * 4, k * 4);
        for (size_t i = 0; i < k; i++) {
            const float *x = pa + 4 * i, *y = pb + 4 * i;
            float w = std::max(0.0f, std::min(x[2], y[2]) - std::max(x[0], y[0]));
            float h = std::max(0.0f, std::min(x[3], y[3]) - std::max(x[1], y[1]));
            po[i] = w * h;
            overlapping += po[i] > 0.0f;
            largest = std::max(largest, po[i]);
        }
        to.tcm_to_tensor<float>(po, done, k);
    }
    torch::neuron::tcm_free(pa);
    torch::neuron::tcm_free(pb);
    torch::neuron::tcm_free(po);
    printf("boxes %lld, overlapping %d, largest %.3f (%s)\n", static_cast<long long>(n), overlapping,
           static_cast<double>(largest), overlapping ? "some" : "none");
    return out;
}
