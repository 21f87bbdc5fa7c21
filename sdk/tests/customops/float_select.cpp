// A select of two float constants, which LLVM 22's Xtensa backend cannot compile as clang
// leaves it (ntx splits it in the IR: check_device.py holds the device to the host's bytes),
// and the ATen idioms that need no soft-float routine.
#include <stdint.h>
#include <algorithm>
#include <torch/torch.h>

// 1 where a row's element is above the row's first, else 0; then each row's maximum.
torch::Tensor above_first(const torch::Tensor &x)
{
    torch::Tensor out = torch::zeros({x.size(0), x.size(1) + 1}, torch::kFloat);
    auto in = x.accessor<float, 2>();
    auto o = out.accessor<float, 2>();
    for (int32_t r = 0; r < x.size(0); r++) {
        float best = in[r][0];
        for (int32_t c = 0; c < x.size(1); c++) {
            o[r][c] = in[r][c] > in[r][0] ? 1.0f : 0.0f;
            best = std::max<float>(in[r][c], best);
        }
        auto last = o[r][x.size(1)];
        last = best;
    }
    return out;
}
