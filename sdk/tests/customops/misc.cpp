// Kernels for the rest of the API: int and float parameters (the schema's int and float, as
// the device's build declares them), stream accessors, a TCM
// negate of any float tensor, printf, and every factory.
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// rows x cols elements scaled by factor (in double arithmetic), through the input's accessor.
torch::Tensor scale(int rows, int cols, const torch::Tensor &x, float factor)
{
    torch::Tensor out = torch::empty({rows, cols}, torch::kFloat);
    auto in = x.accessor<float, 2>();
    auto o = out.accessor<float, 2>();
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            o[r][c] = static_cast<float>(static_cast<double>(in[r][c]) * factor);
    return out;
}

torch::Tensor stream_add(const torch::Tensor &a, const torch::Tensor &b)
{
    torch::Tensor out = torch::empty(a.sizes(), torch::kInt);
    auto ra = a.read_stream_accessor<int32_t>();
    auto rb = b.read_stream_accessor<int32_t>();
    auto w = out.write_stream_accessor<int32_t>();
    for (int64_t k = 0; k < a.numel(); k++)
        w.write(ra.read() + rb.read());
    ra.close();
    rb.close();
    return out; // w writes back at scope exit
}

torch::Tensor tcm_negate(const torch::Tensor &x)
{
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(4096));
    auto src = x.tcm_accessor();
    auto dst = out.tcm_accessor();
    for (int64_t first = 0; first < x.numel(); first += 1024) {
        size_t n = x.numel() - first < 1024 ? x.numel() - first : 1024;
        src.tensor_to_tcm<float>(buf, first, n);
        for (size_t k = 0; k < n; k++)
            buf[k] = -buf[k];
        dst.tcm_to_tensor<float>(buf, first, n);
    }
    torch::neuron::tcm_free(buf);
    return out;
}

torch::Tensor hello(const torch::Tensor &x)
{
    printf("hello from core %u of %u, %lld elements\n", get_cpu_id(), get_cpu_count(),
           static_cast<long long>(x.numel()));
    torch::Tensor out = get_dst_tensor();
    auto src = x.tcm_accessor();
    auto dst = out.tcm_accessor();
    float buf[16];
    size_t n = x.numel() / get_cpu_count();
    for (size_t k = get_cpu_id() * n; k < (get_cpu_id() + 1) * n; k++) {
        src.tensor_to_tcm<float>(buf, k, 1);
        dst.tcm_to_tensor<float>(buf, k, 1);
    }
    return out;
}

// Row r of the 5 x 4 result is factory r: zeros, ones, full(7), eye, fill_(3).
torch::Tensor factories(const torch::Tensor &unused)
{
    (void)unused;
    torch::Tensor parts[5] = {torch::zeros({4}, torch::kLong), torch::ones({4}, torch::kLong),
                              torch::full({4}, 7, torch::kLong), torch::eye(4, 4, torch::kLong),
                              torch::empty({4}, torch::kLong)};
    parts[4].fill_(3);
    torch::Tensor out = torch::empty({5, 4}, torch::kLong);
    auto o = out.accessor<int64_t, 2>();
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 4; c++) {
            torch::Tensor p = parts[r];
            const int64_t v = r == 3 ? p.accessor<int64_t, 2>()[1][c] : p.accessor<int64_t, 1>()[c];
            o[r][c] = v;
        }
    return out;
}

// Moves windows under an open accessor: five elements 16 MiB apart lie in five windows'
// worth of HBM, so writing them refills the three reusable windows in turn and row 0's
// window is gone by row 3; reading row 0 again through the same accessor still gives
// what was written there.
torch::Tensor window_move(const torch::Tensor &unused)
{
    (void)unused;
    torch::Tensor big = torch::empty({5, 1 << 22}, torch::kFloat);
    auto a = big.accessor<float, 2>();
    for (int r = 0; r < 5; r++)
        a[r][0] = static_cast<float>(r + 1);
    torch::Tensor out = torch::empty({1, 5}, torch::kFloat);
    auto o = out.accessor<float, 2>();
    for (int r = 0; r < 5; r++) {
        const float v = a[r][0];
        o[0][r] = v;
    }
    return out;
}
