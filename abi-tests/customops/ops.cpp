// Every operation of <torch/torch.h> in both forms, one per `op` (abi-tests/customops/
// check_ops.py runs each on every element type it takes and compares with NumPy). The
// `_out` form writes into get_dst_tensor(); the other returns a new tensor.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

#define BOTH(name, ...) return out_form ? torch::name##_out(dst, __VA_ARGS__) : torch::name(__VA_ARGS__)

torch::Tensor elementwise(const torch::Tensor &a, const torch::Tensor &b, torch::Scalar s, torch::Scalar t,
                          int64_t op, int64_t out_form, int64_t out_dtype)
{
    (void)out_dtype;
    torch::Tensor dst = out_form ? get_dst_tensor() : torch::Tensor();
    switch (op) {
    case 0: BOTH(abs, a);
    case 1: BOTH(ceil, a);
    case 2: BOTH(floor, a);
    case 3: BOTH(sin, a);
    case 4: BOTH(cos, a);
    case 5: BOTH(tan, a);
    case 6: BOTH(log, a);
    case 7: BOTH(log2, a);
    case 8: BOTH(log10, a);
    case 9: BOTH(exp, a);
    case 10: BOTH(bitwise_not, a);
    case 11: BOTH(pow, a, s);
    case 12: BOTH(pow, s, a);
    case 13: BOTH(pow, a, b);
    case 14: BOTH(clamp, a, t, s); // min t, max s
    case 15: BOTH(add, a, b, t);
    case 16: BOTH(add, a, s, t);
    case 17: BOTH(sub, a, b, t);
    case 18: BOTH(sub, a, s, t);
    case 19: BOTH(mul, a, b);
    case 20: BOTH(mul, a, s);
    case 21: BOTH(div, a, b);
    case 22: BOTH(div, a, s);
    case 23: BOTH(bitwise_and, a, b);
    case 24: BOTH(bitwise_and, a, s);
    case 25: BOTH(bitwise_and, s, a);
    case 26: BOTH(bitwise_or, a, b);
    case 27: BOTH(bitwise_or, a, s);
    default: BOTH(bitwise_or, s, a);
    }
}
