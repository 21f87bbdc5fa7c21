// Shape functions and registration for failures.cpp: the kernels' own, and three that
// fail before any kernel runs (a C++ exception, a segmentation fault, exit(0)).
#include <signal.h>
#include <stdexcept>
#include <stdlib.h>
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(const torch::Tensor &input) { return torch::zeros(input.sizes(), torch::kFloat); }

torch::Tensor shape_throws(const torch::Tensor &input)
{
    (void)input;
    throw std::invalid_argument("no shape for this input");
}

torch::Tensor shape_crashes(const torch::Tensor &input)
{
    raise(SIGSEGV);
    return torch::zeros(input.sizes(), torch::kFloat);
}

torch::Tensor shape_exits(const torch::Tensor &input)
{
    (void)input;
    exit(0);
}

NEURON_LIBRARY(failures, m)
{
    m.def("passes", &same_shape, "passes");
    m.def("scribbles", &same_shape, "scribbles");
    m.def("spin", &same_shape, "spin");
    m.def("kernel_exits", &same_shape, "kernel_exits");
    m.def("kernel_throws", &same_shape, "kernel_throws");
    m.def("shape_throws", &shape_throws, "passes");
    m.def("shape_crashes", &shape_crashes, "passes");
    m.def("shape_exits", &shape_exits, "passes");
}
