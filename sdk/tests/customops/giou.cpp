// The generalized IoU loss of box pairs (x1, y1, x2, y2 each), on every core, each its own
// rows: a block of both boxes' rows copied to TCM, the loss (1 - GIoU) of each pair
// computed there and copied back to the output.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

static float lesser(float x, float y) { return x < y ? x : y; }
static float greater(float x, float y) { return x > y ? x : y; }

static float giou_loss(const float *a, const float *b)
{
    float iw = greater(lesser(a[2], b[2]) - greater(a[0], b[0]), 0.0f);
    float ih = greater(lesser(a[3], b[3]) - greater(a[1], b[1]), 0.0f);
    float inter = iw * ih;
    float area_a = (a[2] - a[0]) * (a[3] - a[1]);
    float area_b = (b[2] - b[0]) * (b[3] - b[1]);
    float uni = area_a + area_b - inter;
    float hull = (greater(a[2], b[2]) - lesser(a[0], b[0])) * (greater(a[3], b[3]) - lesser(a[1], b[1]));
    float iou = uni > 0.0f ? inter / uni : 0.0f;
    float giou = hull > 0.0f ? iou - (hull - uni) / hull : iou;
    return 1.0f - giou;
}

static void giou_rows(const torch::Tensor &a, const torch::Tensor &b, torch::Tensor &out, size_t first,
                      size_t count)
{
    const size_t block = 256;
    float *ta = static_cast<float *>(torch::neuron::tcm_malloc(block * 4 * sizeof(float)));
    float *tb = static_cast<float *>(torch::neuron::tcm_malloc(block * 4 * sizeof(float)));
    float *to = static_cast<float *>(torch::neuron::tcm_malloc(block * sizeof(float)));
    if (ta != nullptr && tb != nullptr && to != nullptr) {
        auto sa = a.tcm_accessor();
        auto sb = b.tcm_accessor();
        auto so = out.tcm_accessor();
        for (size_t done = 0; done < count; done += block) {
            size_t n = count - done < block ? count - done : block;
            sa.tensor_to_tcm<float>(ta, (first + done) * 4, n * 4);
            sb.tensor_to_tcm<float>(tb, (first + done) * 4, n * 4);
            for (size_t k = 0; k < n; k++)
                to[k] = giou_loss(ta + 4 * k, tb + 4 * k);
            so.tcm_to_tensor<float>(to, first + done, n);
        }
    }
    torch::neuron::tcm_free(to);
    torch::neuron::tcm_free(tb);
    torch::neuron::tcm_free(ta);
}

torch::Tensor giou_multicore(const torch::Tensor &a, const torch::Tensor &b)
{
    torch::Tensor out = get_dst_tensor();
    size_t n = a.size(0), cores = get_cpu_count(), id = get_cpu_id();
    size_t share = n / cores;
    size_t first = share * id;
    size_t count = id == cores - 1 ? n - first : share;
    giou_rows(a, b, out, first, count);
    return out;
}
