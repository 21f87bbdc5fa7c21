// A custom op in the style of the Neuron GPSIMD kernels, run on the host model:
// out[i] = 3 * in[i] + 1 over two uint32 tensors in HBM of 72 MiB each, so each spans five
// 16 MiB regions and the three reusable windows are refilled as the kernel moves through
// them. Two versions:
//   - leaf: a tensor accessor that translates every element (neuron_translate);
//   - span: translates once per run of contiguous local memory (neuron_translate_span).
// The host model (neuron_translate_host_*) maps the register block, SoC memory and the NX
// windows, so the pointers neuron_translate returns read and write real memory.
//
// Build and run on a Linux host:
//   c++ -std=c++17 -O2 tensor_kernel.cpp $(pkg-config --cflags --libs neuron_translate)
//   ./a.out
#include <cstdint>
#include <cstdio>
#include <vector>
#include <neuron_translate.h>

// On the device start_exit.o defines this; the program gives it the model's value.
namespace extended_isa { namespace sdk { unsigned long long hbm_scratch; } }

namespace {

constexpr unsigned long long kEngineBase = 0x5002900000ull; // SBUF at 0x50_0000_0000
constexpr unsigned long long kHbmBase = 0x4000000000ull;
constexpr unsigned long long kHbmSize = 1ull << 30;
constexpr uint64_t kElems = 18u << 20; // 72 MiB of uint32_t per tensor

// A tensor in HBM, addressed by element; translates at the leaf.
template <typename T> class Tensor {
  public:
    Tensor(unsigned long long soc, uint64_t n) : soc_(soc), n_(n) {}
    T *at(uint64_t i) const
    {
        return static_cast<T *>(neuron_translate(neuron_translate_ctx(), soc_ + i * sizeof(T)));
    }
    unsigned long long soc(uint64_t i) const { return soc_ + i * sizeof(T); }
    uint64_t size() const { return n_; }

  private:
    unsigned long long soc_;
    uint64_t n_;
};

void leaf(const Tensor<uint32_t> &in, const Tensor<uint32_t> &out)
{
    for (uint64_t i = 0; i < in.size(); ++i) {
        // The input is read before the output is translated: a pointer is only valid
        // until the next translation (which may refill its window).
        uint32_t v = *in.at(i);
        *out.at(i) = 3 * v + 1;
    }
}

void spans(const Tensor<uint32_t> &in, const Tensor<uint32_t> &out)
{
    for (uint64_t i = 0; i < in.size();) {
        unsigned long long left = (in.size() - i) * sizeof(uint32_t), out_span = 0, in_span = 0;
        // Output first, then input: if the input's translation refills, the round robin's
        // victim is the window after the output's, so both pointers stay valid together.
        auto *dst = static_cast<uint32_t *>(
            neuron_translate_span(neuron_translate_ctx(), out.soc(i), left, &out_span));
        auto *src = static_cast<const uint32_t *>(
            neuron_translate_span(neuron_translate_ctx(), in.soc(i), left, &in_span));
        uint64_t n = (in_span < out_span ? in_span : out_span) / sizeof(uint32_t);
        for (uint64_t k = 0; k < n; ++k)
            dst[k] = 3 * src[k] + 1;
        i += n;
    }
}

bool check(const char *name, unsigned long long soc)
{
    std::vector<uint32_t> got(kElems);
    if (neuron_translate_host_read(soc, got.data(), got.size() * sizeof(uint32_t)) != 0)
        return false;
    for (uint64_t i = 0; i < kElems; ++i)
        if (got[i] != 3 * static_cast<uint32_t>(i * 2654435761u) + 1) {
            std::printf("%s: element %llu is %u\n", name, static_cast<unsigned long long>(i), got[i]);
            return false;
        }
    return true;
}

// Prints what the host model counted since `since`, and returns the counters now.
neuron_translate_host_counters_t report(const char *name, const neuron_translate_host_counters_t &since)
{
    neuron_translate_host_counters_t c;
    neuron_translate_host_counters(&c);
    auto d = [](unsigned long long now, unsigned long long then) { return now - then; };
    std::printf("%-4s %9llu translations, refills of windows 0/1/2: %llu/%llu/%llu, %llu register writes\n",
                name, d(c.translates, since.translates), d(c.refills[0], since.refills[0]),
                d(c.refills[1], since.refills[1]), d(c.refills[2], since.refills[2]),
                d(c.register_writes, since.register_writes));
    return c;
}

} // namespace

int main()
{
    extended_isa::sdk::hbm_scratch = kHbmBase + kHbmSize - (64u << 20);
    if (neuron_translate_host_start(kEngineBase, kHbmBase, kHbmSize, extended_isa::sdk::hbm_scratch) != 0) {
        std::printf("host model: %s\n", neuron_translate_host_last_error());
        return 1;
    }
    _init_translate_ctx();

    unsigned long long in_soc, out_leaf, out_span;
    const uint64_t bytes = kElems * sizeof(uint32_t);
    if (neuron_translate_host_alloc(bytes, 4096, &in_soc) || neuron_translate_host_alloc(bytes, 4096, &out_leaf) ||
        neuron_translate_host_alloc(bytes, 4096, &out_span))
        return 1;
    std::vector<uint32_t> data(kElems);
    for (uint64_t i = 0; i < kElems; ++i)
        data[i] = static_cast<uint32_t>(i * 2654435761u);
    neuron_translate_host_write(in_soc, data.data(), bytes);

    Tensor<uint32_t> in(in_soc, kElems);
    neuron_translate_host_counters_t start{};
    leaf(in, Tensor<uint32_t>(out_leaf, kElems));
    auto after_leaf = report("leaf", start);
    _init_translate_ctx(); // a fresh table, as at the next op launch
    spans(in, Tensor<uint32_t>(out_span, kElems));
    report("span", after_leaf);

    bool ok = check("leaf", out_leaf) && check("span", out_span);
    std::printf("%s\n", ok ? "out = 3 * in + 1: both versions right" : "WRONG");
    neuron_translate_host_stop();
    return ok ? 0 : 1;
}
