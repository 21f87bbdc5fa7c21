// Kernels written as the device's accessor allows: each element a proxy read into a value
// (`float v = in[i]`, `(float)in[i]` in a printf, `std::max<float>(...)`) and written by
// `=` (also through a copy of the proxy: `auto e = o[i]; e = v;`), size lists of mixed
// integer kinds and a std::vector of sizes, float division and a select of two float
// constants. check_kernels.py holds them to NumPy on the host; check_device.py to the
// host's bytes on the emulated Q7. check_parity.py holds what the proxy refuses.
#include <stdint.h>
#include <stdio.h>
#include <algorithm>
#include <vector>
#include <torch/torch.h>

// Per row of x (rows x cols float32): its maximum, how many elements are positive, how
// many are not, their mean, and 1 where the maximum is above the mean's magnitude.
torch::Tensor row_stats(const torch::Tensor &x)
{
    const int64_t rows = x.size(0), cols = x.size(1);
    size_t five = 5;
    torch::Tensor out = torch::zeros({x.size(0), five}, torch::kFloat); // int64_t and size_t
    auto in = x.accessor<float, 2>();                                   // read-only elements
    auto o = out.accessor<float, 2>();                                  // writable elements
    for (int64_t r = 0; r < rows; r++) {
        float best = in[r][0];
        for (int64_t c = 0; c < cols; c++) {
            best = std::max<float>(in[r][c], best);
            const float v = in[r][c];
            if (v > 0.0f)
                o[r][1] = o[r][1] + 1.0f;
            else
                o[r][2] = o[r][2] + 1.0f;
            o[r][3] = o[r][3] + v / static_cast<float>(cols);
        }
        auto slot = o[r][0]; // a copy of the proxy writes the same element
        slot = best;
        const float mean = o[r][3];
        const float w = slot, h = mean < 0.0f ? -mean : mean;
        o[r][4] = w > h ? 1.0f : 0.0f;
    }
    printf("row 0: max %f, %g positive\n", (float)o[0][0], static_cast<double>(o[0][1]));
    return out;
}

// ((x << 1) | 1) ^ 2 of an int32 vector, each step read into a value and written back.
torch::Tensor bits(const torch::Tensor &x)
{
    std::vector<int64_t> sizes = {x.size(0)};
    torch::Tensor out = torch::zeros(sizes, torch::kInt);
    auto in = x.accessor<int32_t, 1>();
    auto o = out.accessor<int32_t, 1>();
    for (int64_t i = 0; i < x.size(0); i++) {
        o[i] = in[i];
        o[i] = o[i] << 1;
        int32_t v = o[i];
        v |= 1;
        o[i] = v ^ static_cast<int32_t>(2 * x.strides()[0] * x.stride(-1)); // v ^ 2: strides of 1
    }
    printf("bits[0] = %d\n", (int32_t)o[0]);
    return out;
}
