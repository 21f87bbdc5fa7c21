// Every operation of <torch/torch.h> in both forms, one per `op` (named in ops_cases.h;
// sdk/tests/customops/check_ops.py runs each on every element type it takes and compares
// with NumPy). The `_out` form writes into get_dst_tensor(); the other returns a new
// tensor.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>
#include "ops_cases.h"

#define BOTH(name, ...) return out_form ? torch::name##_out(dst, __VA_ARGS__) : torch::name(__VA_ARGS__)

torch::Tensor elementwise(const torch::Tensor &a, const torch::Tensor &b, const torch::Scalar &s,
                          const torch::Scalar &t, int op, int out_form, int out_dtype)
{
    (void)out_dtype;
    torch::Tensor dst = out_form ? get_dst_tensor() : torch::Tensor();
    switch (op) {
    case ABS: BOTH(abs, a);
    case CEIL: BOTH(ceil, a);
    case FLOOR: BOTH(floor, a);
    case SIN: BOTH(sin, a);
    case COS: BOTH(cos, a);
    case TAN: BOTH(tan, a);
    case LOG: BOTH(log, a);
    case LOG2: BOTH(log2, a);
    case LOG10: BOTH(log10, a);
    case EXP: BOTH(exp, a);
    case BITWISE_NOT: BOTH(bitwise_not, a);
    case POW_TS: BOTH(pow, a, s);
    case POW_ST: BOTH(pow, s, a);
    case POW_TT: BOTH(pow, a, b);
    case CLAMP: BOTH(clamp, a, t, s); // min t, max s
    case ADD_TT: BOTH(add, a, b, t);
    case ADD_TS: BOTH(add, a, s, t);
    case SUB_TT: BOTH(sub, a, b, t);
    case SUB_TS: BOTH(sub, a, s, t);
    case MUL_TT: BOTH(mul, a, b);
    case MUL_TS: BOTH(mul, a, s);
    case DIV_TT: BOTH(div, a, b);
    case DIV_TS: BOTH(div, a, s);
    case AND_TT: BOTH(bitwise_and, a, b);
    case AND_TS: BOTH(bitwise_and, a, s);
    case AND_ST: BOTH(bitwise_and, s, a);
    case OR_TT: BOTH(bitwise_or, a, b);
    case OR_TS: BOTH(bitwise_or, a, s);
    case OR_ST: BOTH(bitwise_or, s, a);
    default: return torch::zeros({1}, torch::kFloat); // no such operation: a result the runner refuses
    }
}
