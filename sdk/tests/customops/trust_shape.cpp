// Shape functions of trust.cpp's kernels: each returns its input's shape.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor like(const torch::Tensor &input) { return torch::zeros(input.sizes(), torch::kFloat); }
torch::Tensor like_scaled(const torch::Tensor &x, double) { return torch::zeros(x.sizes(), torch::kFloat); }

NEURON_LIBRARY(trust, m)
{
    m.def("leaves_a_child", &like, "leaves_a_child");
    m.def("naps", &like, "naps");
    m.def("escapes", &like, "escapes");
    m.def("stops_itself", &like, "stops_itself");
    m.def("execs", &like, "execs");
    m.def("prints_forever", &like, "prints_forever");
    m.def("chatty_scale", &like_scaled, "chatty_scale");
    m.def("aborts", &like, "aborts");
    m.def("core_limit", &like, "core_limit");
    m.def("ends_badly", &like_scaled, "ends_badly");
}
