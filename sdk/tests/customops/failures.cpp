// Kernels that fail in the ways a runner must report in its documented form: one that never
// returns (on every core, for the signal and timeout tests), one that calls exit(0), one that
// throws; their shape functions, in failures_shape.cpp, throw, crash or exit in turn.
#include <stdexcept>
#include <stdlib.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor spin(const torch::Tensor &input)
{
    (void)input;
    torch::Tensor out = get_dst_tensor();
    volatile unsigned long n = 0;
    for (;;)
        n = n + 1;
    return out;
}

torch::Tensor kernel_exits(const torch::Tensor &input)
{
    (void)input;
    exit(0);
}

torch::Tensor kernel_throws(const torch::Tensor &input)
{
    (void)input;
    throw std::runtime_error("the kernel gave up");
}

torch::Tensor passes(const torch::Tensor &input) { return input; }

// Writes 42 into its input's first element through a const_cast (the API passes inputs as
// const): a read-only array must not see it.
torch::Tensor scribbles(const torch::Tensor &input)
{
    torch::Tensor &writable = const_cast<torch::Tensor &>(input);
    writable.accessor<float, 1>()[0] = 42.0f;
    return torch::zeros(input.sizes(), torch::kFloat);
}
