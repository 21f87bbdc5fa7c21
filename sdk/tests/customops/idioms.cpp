// Kernels written as ATen CPU kernels are: accessor elements as references (std::max,
// ++, +=, |=, <<=, float&, float*, printf of an element), size lists of mixed integer
// kinds and a std::vector of sizes, float division and a select of two float constants.
// check_kernels.py holds them to NumPy on the host; check_device.py to the host's bytes
// on the emulated Q7.
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
    auto in = x.accessor<float, 2>();                                   // read-only: const float&
    auto o = out.accessor<float, 2>();                                  // writable: float&
    for (int64_t r = 0; r < rows; r++) {
        float best = in[r][0];
        for (int64_t c = 0; c < cols; c++) {
            best = std::max(in[r][c], best);
            if (in[r][c] > 0.0f)
                o[r][1]++;
            else
                ++o[r][2];
            o[r][3] += in[r][c] / static_cast<float>(cols);
        }
        float &slot = o[r][0];
        slot = best;
        float *mean = &o[r][3];
        const float w = slot, h = *mean < 0.0f ? -*mean : *mean;
        o[r][4] = w > h ? 1.0f : 0.0f;
    }
    printf("row 0: max %f, %g positive\n", o[0][0], o[0][1]);
    return out;
}

// ((x << 1) | 1) ^ 2 of an int32 vector, through compound assignments and a reference.
torch::Tensor bits(const torch::Tensor &x)
{
    std::vector<int64_t> sizes = {x.size(0)};
    torch::Tensor out = torch::zeros(sizes, torch::kInt);
    auto in = x.accessor<int32_t, 1>();
    auto o = out.accessor<int32_t, 1>();
    for (int64_t i = 0; i < x.size(0); i++) {
        o[i] = in[i];
        o[i] <<= 1;
        o[i] |= 1;
        int32_t &r = o[i];
        r ^= 2;
    }
    printf("bits[0] = %d\n", o[0]);
    return out;
}
