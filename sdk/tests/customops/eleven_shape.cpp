// Eleven ops in one library: one more than a library may have (the runner refuses it).
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor scale_like(int64_t rows, int64_t cols, torch::Tensor x, double factor)
{
    (void)x, (void)factor;
    return torch::empty({rows, cols}, torch::kFloat);
}

NEURON_LIBRARY(eleven_ops, m)
{
    m.def("scale", &scale_like, "scale");
    m.def("scale1", &scale_like, "scale");
    m.def("scale2", &scale_like, "scale");
    m.def("scale3", &scale_like, "scale");
    m.def("scale4", &scale_like, "scale");
    m.def("scale5", &scale_like, "scale");
    m.def("scale6", &scale_like, "scale");
    m.def("scale7", &scale_like, "scale");
    m.def("scale8", &scale_like, "scale");
    m.def("scale9", &scale_like, "scale");
    m.def("scale10", &scale_like, "scale");
}
