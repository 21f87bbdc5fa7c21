// neuron_translate.hpp's refusals on the host model (abi-tests/tests/accessor.rs builds and
// runs it): a view whose bytes do not fit the address space is refused and touches
// nothing; two writable views that overlap are refused by for_each on the direct and on
// the bounce path alike, memory untouched; a read-only view may alias a writable one and
// gives the same result on both paths. Prints one line per check; exits 0 only if all hold.
#include <cstdio>
#include <cstring>
#include <vector>

#include <neuron_translate.hpp>

namespace extended_isa { namespace sdk { unsigned long long hbm_scratch; } }

namespace {

constexpr unsigned long long kEngineBase = 0x5002900000ull;
constexpr unsigned long long kHbmBase = 0x4000000000ull;
constexpr unsigned long long kHbmSize = 1ull << 30;
constexpr unsigned long long kCount = 1024;

int failures = 0;

void expect(bool ok, const char *what)
{
    std::printf("%s %s\n", ok ? "ok" : "FAIL", what);
    failures += ok ? 0 : 1;
}

/// kCount words at soc: k + 1 each.
void fill(unsigned long long soc)
{
    std::vector<uint32_t> v(kCount);
    for (unsigned k = 0; k < kCount; ++k)
        v[k] = k + 1;
    neuron_translate_host_write(soc, v.data(), v.size() * 4);
}

/// Whether the kCount words at soc are still k + 1.
bool untouched(unsigned long long soc)
{
    std::vector<uint32_t> v(kCount);
    neuron_translate_host_read(soc, v.data(), v.size() * 4);
    for (unsigned k = 0; k < kCount; ++k)
        if (v[k] != k + 1)
            return false;
    return true;
}

/// Whether the kCount words at soc are k + 2 (x = y + 1 applied once).
bool incremented(unsigned long long soc)
{
    std::vector<uint32_t> v(kCount);
    neuron_translate_host_read(soc, v.data(), v.size() * 4);
    for (unsigned k = 0; k < kCount; ++k)
        if (v[k] != k + 2)
            return false;
    return true;
}

void refused_views()
{
    neuron::Tensor<uint32_t> top(~0ull - 7, 4);  // 16 bytes from 2^64 - 8: past the top
    neuron::Tensor<uint64_t> huge(0, 1ull << 61); // 2^64 bytes
    neuron::Tensor<uint32_t> last(~0ull - 8, 2);  // ends one byte below 2^64: fits
    uint32_t buf[4] = {};
    bool none = !top.ok() && top.size() == 0 && !top.set(0, 1) && top.get(0) == 0 && !top.copy_out(0, 0, buf) &&
                !neuron::for_each(0, 0, [](unsigned long long, size_t, uint32_t *) {}, top);
    expect(none, "a view past the top of the address space is refused and touches nothing");
    expect(!huge.ok() && huge.size() == 0, "a view of 2^64 bytes is refused");
    neuron::Tensor<const uint32_t> ro(top);
    expect(!ro.ok() && !ro.copy_out(0, 0, buf), "a read-only view of a refused one is refused");
    neuron::Tensor<uint32_t> wraps(~0ull - 7, 2); // ends at 2^64: base + bytes wraps to 0
    expect(last.ok() && last.size() == 2 && !wraps.ok(), "a view may end below 2^64, not at it");
}

/// x = y + 1 with x and y the same kCount words at soc: both writable, or y read-only.
template <class Y> bool alias(unsigned long long soc)
{
    neuron::Tensor<uint32_t> x(soc, kCount);
    neuron::Tensor<Y> y(soc, kCount);
    return neuron::for_each(
        0, kCount, [](unsigned long long, size_t n, uint32_t *px, Y *py) {
            for (size_t k = 0; k < n; ++k)
                px[k] = py[k] + 1;
        },
        x, y);
}

void overlapping_views()
{
    // An aligned base takes the direct path; one byte off, every stretch bounces.
    const unsigned long long aligned = kHbmBase + (3ull << 24), misaligned = kHbmBase + (5ull << 24) + 1;
    for (unsigned long long soc : {aligned, misaligned}) {
        const char *path = soc == aligned ? "direct" : "bounce";
        fill(soc);
        bool refused = !alias<uint32_t>(soc) && untouched(soc);
        std::printf("%s path: ", path);
        expect(refused, "two writable views of the same words are refused, nothing written");
        fill(soc);
        bool right = alias<const uint32_t>(soc) && incremented(soc);
        std::printf("%s path: ", path);
        expect(right, "a read-only view aliasing a writable one gives x = y + 1");
    }
    // Overlapping by one element, and disjoint neighbours.
    const unsigned long long soc = kHbmBase + (7ull << 24);
    fill(soc);
    fill(soc + kCount * 4);
    neuron::Tensor<uint32_t> a(soc, kCount), b(soc + (kCount - 1) * 4, kCount), c(soc + kCount * 4, kCount);
    auto f = [](unsigned long long, size_t, uint32_t *, uint32_t *) {};
    expect(!neuron::for_each(0, kCount, f, a, b), "writable views sharing one element are refused");
    expect(neuron::for_each(0, kCount, f, a, c), "writable neighbours are not");
    expect(neuron::for_each(0, kCount - 1, f, a, b) && neuron::for_each(1, 0, f, a, b),
           "only the walked elements count: a's first kCount - 1 end where b's begin");
}

} // namespace

int main()
{
    if (neuron_translate_host_start(kEngineBase, kHbmBase, kHbmSize, kHbmBase + kHbmSize - (64ull << 20)) != 0) {
        std::printf("FAIL the host model: %s\n", neuron_translate_host_last_error());
        return 1;
    }
    extended_isa::sdk::hbm_scratch = kHbmBase + kHbmSize - (64ull << 20);
    _init_translate_ctx();
    refused_views();
    overlapping_views();
    neuron_translate_host_stop();
    std::printf("%s\n", failures == 0 ? "all rules hold" : "RULES BROKEN");
    return failures == 0 ? 0 : 1;
}
