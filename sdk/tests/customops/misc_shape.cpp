// Shape functions and registration for misc.cpp (the guide's style: kernel names differ).
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor scale_shape(int64_t rows, int64_t cols, torch::Tensor x, double factor)
{
    (void)x, (void)factor;
    return torch::empty({rows, cols}, torch::kFloat);
}
torch::Tensor like_int(torch::Tensor a, torch::Tensor b)
{
    (void)a;
    return torch::empty(b.sizes(), torch::kInt);
}
torch::Tensor like_float(const torch::Tensor &x) { return torch::empty(x.sizes(), torch::kFloat); }
torch::Tensor five_by_four(const torch::Tensor &) { return torch::empty({5, 4}, torch::kLong); }
torch::Tensor one_by_five(const torch::Tensor &) { return torch::empty({1, 5}, torch::kFloat); }

NEURON_LIBRARY(misc_ops, m)
{
    m.def("scale", &scale_shape, "scale");
    m.def("stream_add", &like_int, "stream_add");
    m.def("negate", &like_float, "tcm_negate");
    m.def("hello", &like_float, "hello");
    m.def("factories", &five_by_four, "factories");
    m.def("window_move", &one_by_five, "window_move");
}
