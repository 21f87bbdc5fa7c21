// `make bench`'s custom-op figures: relu over 64 Mi floats (an 8192 x 8192 tensor, 256 MiB,
// sixteen 16 MiB regions) through the TCM accessor, the stream accessors and the standard
// accessor, each kernel call timed inside the kernel (on its core's process: its page
// tables start empty), against plain C++ loops over host memory: element by element, and
// the TCM kernel's own blocks through a 4 KiB buffer; and the runner's start-up cost apart
// (a call of an empty kernel on a 1 x 1 tensor). Three rounds; min / median / max. The
// host buffers are kept out of the runner's forks (MADV_DONTFORK), so that the plain
// loops never pay for copy-on-write.
#include <algorithm>
#include <chrono>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include <sys/mman.h>

#include <neuron/neuron-utils.hpp>
#include <neuron_customop_host/runner.hpp>
#include <torch/torch.h>
#include "torchneuron/register.h"

static const int64_t kSide = 8192;

static double now_ns()
{
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The kernel's own time reaches the bench through a file (it runs in a core's process).
static void record(double ns)
{
    if (FILE *f = fopen(getenv("RELU_BENCH_TIMES"), "a")) {
        fprintf(f, "%.0f\n", ns);
        fclose(f);
    }
}

static void relu_blocks(const torch::Tensor &in, torch::Tensor &out)
{
    const size_t block = 1024, n = in.numel();
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(block * sizeof(float)));
    auto src = in.tcm_accessor();
    auto dst = out.tcm_accessor();
    for (size_t i = 0; i < n; i += block) {
        size_t m = std::min(block, n - i);
        src.tensor_to_tcm<float>(buf, i, m);
        for (size_t k = 0; k < m; k++)
            buf[k] = buf[k] > 0.0f ? buf[k] : 0.0f;
        dst.tcm_to_tensor<float>(buf, i, m);
    }
    torch::neuron::tcm_free(buf);
}

torch::Tensor relu_tcm(const torch::Tensor &in)
{
    double t0 = now_ns();
    torch::Tensor out = get_dst_tensor();
    relu_blocks(in, out);
    record(now_ns() - t0);
    return out;
}

// The same, timed on a second pass over the same tensors: the core's page tables for
// their windows' views are filled (the model keeps the views it streamed through).
torch::Tensor relu_tcm_warm(const torch::Tensor &in)
{
    torch::Tensor out = get_dst_tensor();
    relu_blocks(in, out);
    double t0 = now_ns();
    relu_blocks(in, out);
    record(now_ns() - t0);
    return out;
}

torch::Tensor relu_stream(const torch::Tensor &in)
{
    double t0 = now_ns();
    torch::Tensor out = get_dst_tensor();
    {
        auto r = in.read_stream_accessor<float>();
        auto w = out.write_stream_accessor<float>();
        for (int64_t i = 0; i < in.numel(); i++) {
            float v = r.read();
            w.write(v > 0.0f ? v : 0.0f);
        }
    }
    record(now_ns() - t0);
    return out;
}

torch::Tensor relu_accessor(const torch::Tensor &in)
{
    double t0 = now_ns();
    torch::Tensor out = get_dst_tensor();
    {
        auto a = in.accessor<float, 2>();
        auto o = out.accessor<float, 2>();
        for (int64_t r = 0; r < kSide; r++)
            for (int64_t c = 0; c < kSide; c++) {
                float v = a[r][c];
                o[r][c] = v > 0.0f ? v : 0.0f;
            }
    }
    record(now_ns() - t0);
    return out;
}

torch::Tensor nothing(const torch::Tensor &in) { return torch::zeros(in.sizes(), torch::kFloat); }

torch::Tensor like(const torch::Tensor &in) { return torch::empty(in.sizes(), torch::kFloat); }

NEURON_LIBRARY(relu_bench, m)
{
    m.def("relu_tcm", &like, "relu_tcm");
    m.def("relu_tcm_warm", &like, "relu_tcm_warm");
    m.def("relu_stream", &like, "relu_stream");
    m.def("relu_accessor", &like, "relu_accessor");
    m.def("nothing", &like, "nothing");
}

static double last_recorded(const char *path)
{
    double v = 0, x = 0;
    FILE *f = fopen(path, "r");
    while (f && fscanf(f, "%lf", &x) == 1)
        v = x;
    if (f)
        fclose(f);
    return v;
}

static void line(const char *what, std::vector<double> v, double per, const char *unit)
{
    std::sort(v.begin(), v.end());
    printf("%-48s %10.3f %10.3f %10.3f %s\n", what, v[0] / per, v[v.size() / 2] / per, v.back() / per, unit);
}

/// n floats of host memory the forks leave alone.
static float *host_floats(size_t n)
{
    void *p = mmap(nullptr, n * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || madvise(p, n * sizeof(float), MADV_DONTFORK) != 0)
        abort();
    return static_cast<float *>(p);
}

int main()
{
    NT_CUSTOMOP_BIND(relu_tcm);
    NT_CUSTOMOP_BIND(relu_tcm_warm);
    NT_CUSTOMOP_BIND(relu_stream);
    NT_CUSTOMOP_BIND(relu_accessor);
    NT_CUSTOMOP_BIND(nothing);
    const char *times = getenv("RELU_BENCH_TIMES");
    if (!times)
        return fprintf(stderr, "set RELU_BENCH_TIMES to a file\n"), 1;
    const size_t n = kSide * kSide;
    float *data = host_floats(n), *out = host_floats(n);
    for (size_t i = 0; i < n; i++)
        out[i] = data[i] = static_cast<float>(static_cast<int64_t>(i % 2001) - 1000);
    torch::Tensor x = torch::empty({kSide, kSide}, torch::kFloat);
    nt_customop::copy_from(x, data, n);
    torch::Tensor tiny = torch::zeros({1, 1}, torch::kFloat);
    std::vector<double> plain, blocked, tcm, warm, stream, standard, start, ratio, ratio_blocked, ratio_warm;
    for (int round = 0; round < 3; round++) {
        double t0 = now_ns();
        for (size_t i = 0; i < n; i++)
            out[i] = data[i] > 0.0f ? data[i] : 0.0f;
        plain.push_back(now_ns() - t0);
        t0 = now_ns();
        float buf[1024];
        for (size_t i = 0; i < n; i += 1024) {
            std::copy(data + i, data + i + 1024, buf);
            for (size_t k = 0; k < 1024; k++)
                buf[k] = buf[k] > 0.0f ? buf[k] : 0.0f;
            std::copy(buf, buf + 1024, out + i);
        }
        blocked.push_back(now_ns() - t0);
        if (nt_customop::run("relu_tcm", {x}).status != 0)
            return 1;
        tcm.push_back(last_recorded(times));
        ratio.push_back(tcm.back() / plain.back());
        ratio_blocked.push_back(tcm.back() / blocked.back());
        if (nt_customop::run("relu_tcm_warm", {x}).status != 0)
            return 1;
        warm.push_back(last_recorded(times));
        ratio_warm.push_back(warm.back() / plain.back());
        if (nt_customop::run("relu_stream", {x}).status != 0)
            return 1;
        stream.push_back(last_recorded(times));
        if (round == 0) { // the slowest: one round
            if (nt_customop::run("relu_accessor", {x}).status != 0)
                return 1;
            standard.push_back(last_recorded(times));
        }
        t0 = now_ns();
        if (nt_customop::run("nothing", {tiny}).status != 0)
            return 1;
        start.push_back(now_ns() - t0);
    }
    printf("relu over 8192 x 8192 floats (256 MiB, 16 regions of 16 MiB), 3 rounds\n");
    printf("%-48s %10s %10s %10s\n", "", "min", "median", "max");
    line("plain loop, element by element (host memory)", plain, 1e6, "ms");
    line("plain loop, 4 KiB blocks through a buffer", blocked, 1e6, "ms");
    line("kernel through the TCM accessor", tcm, 1e6, "ms");
    line("TCM kernel / element loop (same round)", ratio, 1, "x");
    line("TCM kernel / block loop (same round)", ratio_blocked, 1, "x");
    line("TCM kernel, second pass (page tables filled)", warm, 1e6, "ms");
    line("second pass / element loop (same round)", ratio_warm, 1, "x");
    line("kernel through stream accessors", stream, static_cast<double>(n), "ns/element");
    line("kernel through the standard accessor (1 round)", standard, static_cast<double>(n), "ns/element");
    line("runner start-up (empty kernel, 1 x 1 tensor)", start, 1e6, "ms");
    return 0;
}
