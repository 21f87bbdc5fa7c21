// A custom op in the style of the Neuron GPSIMD kernels, run on the host model:
// out[i] = a[i] + 3 * b[i] + 1 over three uint32 tensors in HBM of 72 MiB each, so each
// spans five 16 MiB regions and the three reusable windows are refilled as the kernel moves
// through them. Two versions, through neuron_translate.hpp:
//   - per element: one translate per element read or written (Tensor::get and set), as
//     the original's accessor does;
//   - accessor: neuron::for_each hands the kernel local pointers for each stretch that
//     lies in one window of all three tensors, and guarantees they stay valid for the call.
// The host model (neuron_translate_host_*) maps the register block, SoC memory and the NX
// windows, so the pointers neuron_translate returns read and write real memory.
//
// Build and run on a Linux host:
//   c++ -std=c++17 -O2 tensor_kernel.cpp $(pkg-config --cflags --libs neuron_translate)
//   ./a.out
#include <cstdint>
#include <cstdio>
#include <vector>
#include <neuron_translate.hpp>

// On the device start_exit.o defines this; the program gives it the model's value.
namespace extended_isa { namespace sdk { unsigned long long hbm_scratch; } }

namespace {

constexpr unsigned long long kEngineBase = 0x5002900000ull; // SBUF at 0x50_0000_0000
constexpr unsigned long long kHbmBase = 0x4000000000ull;
constexpr unsigned long long kHbmSize = 1ull << 30;
constexpr uint64_t kElems = 18u << 20; // 72 MiB of uint32_t per tensor

using In = neuron::Tensor<const uint32_t>;
using Out = neuron::Tensor<uint32_t>;

void per_element(const In &a, const In &b, const Out &out)
{
    for (uint64_t i = 0; i < out.size(); ++i)
        out.set(i, a.get(i) + 3 * b.get(i) + 1);
}

bool accessor(const In &a, const In &b, const Out &out)
{
    return neuron::for_each(
        0, out.size(),
        [](unsigned long long, size_t n, const uint32_t *x, const uint32_t *y, uint32_t *z) {
            // Plain local memory for the whole stretch: the compiler vectorises this loop.
            for (size_t k = 0; k < n; ++k)
                z[k] = x[k] + 3 * y[k] + 1;
        },
        a, b, out);
}

uint32_t a_of(uint64_t i) { return static_cast<uint32_t>(i * 2654435761u); }
uint32_t b_of(uint64_t i) { return static_cast<uint32_t>(i ^ 0x5bd1e995u); }

bool check(const char *name, unsigned long long soc)
{
    std::vector<uint32_t> got(kElems);
    if (neuron_translate_host_read(soc, got.data(), got.size() * sizeof(uint32_t)) != 0)
        return false;
    for (uint64_t i = 0; i < kElems; ++i)
        if (got[i] != a_of(i) + 3 * b_of(i) + 1) {
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
    std::printf("%-11s %9llu translations, refills of windows 0/1/2: %llu/%llu/%llu, %llu register writes\n",
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

    unsigned long long a_soc, b_soc, out_elem, out_acc;
    const uint64_t bytes = kElems * sizeof(uint32_t);
    for (unsigned long long *soc : {&a_soc, &b_soc, &out_elem, &out_acc})
        if (neuron_translate_host_alloc(bytes, 4096, soc) != 0)
            return 1;
    std::vector<uint32_t> data(kElems);
    for (uint64_t i = 0; i < kElems; ++i)
        data[i] = a_of(i);
    neuron_translate_host_write(a_soc, data.data(), bytes);
    for (uint64_t i = 0; i < kElems; ++i)
        data[i] = b_of(i);
    neuron_translate_host_write(b_soc, data.data(), bytes);

    In a(a_soc, kElems), b(b_soc, kElems);
    neuron_translate_host_counters_t start{};
    per_element(a, b, Out(out_elem, kElems));
    auto after = report("per element", start);
    _init_translate_ctx(); // a fresh table, as at the next op launch
    bool ran = accessor(a, b, Out(out_acc, kElems));
    report("accessor", after);

    bool ok = ran && check("per element", out_elem) && check("accessor", out_acc);
    std::printf("%s\n", ok ? "out = a + 3 * b + 1: both versions right" : "WRONG");
    neuron_translate_host_stop();
    return ok ? 0 : 1;
}
