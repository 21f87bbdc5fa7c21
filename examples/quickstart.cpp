// Quick start (C++11): the same, by the original's C++ names.
// Build on the host:  c++ -std=c++17 quickstart.cpp $(pkg-config --cflags --libs neuron_translate)
#include <cstdio>
#include <sys/mman.h>
#include <neuron_translate.h>

// On the device start_exit.o defines this; a host program defines it itself.
namespace extended_isa { namespace sdk { unsigned long long hbm_scratch = 0x4100000000ull; } }

// On the host, the NX register block must be mapped before _init_translate_ctx (see
// quickstart.c); on the device it is always there.
static bool map_nx_registers(unsigned long long engine_base)
{
    void *want = reinterpret_cast<void *>(NEURON_TRANSLATE_NX_REG_BASE);
    void *page = mmap(want, NEURON_TRANSLATE_NX_REG_BLOCK_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (page != want)
        return false;
    volatile uint32_t *regs = static_cast<volatile uint32_t *>(page);
    regs[(NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO - NEURON_TRANSLATE_NX_REG_BASE) / 4] =
        static_cast<uint32_t>(engine_base);
    regs[(NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI - NEURON_TRANSLATE_NX_REG_BASE) / 4] =
        static_cast<uint32_t>(engine_base >> 32);
    return true;
}

int main()
{
    if (!map_nx_registers(0x4002900000ull))
        return 1;
    _init_translate_ctx();
    std::printf("neuron_translate %s, SBUF at 0x%llx\n", NEURON_TRANSLATE_VERSION_STRING,
                static_cast<unsigned long long>(_sbuf_window));

    unsigned long long hbm = 0x4200123456ull, first, last;
    void *local = neuron_translate(neuron_translate_ctx(), hbm); // _Z16neuron_translatePvy
    std::printf("0x%llx -> local %p\n", hbm, local);
    if (neuron_translate_mapping_lookup(neuron_translate_ctx(), hbm, &first, &last) == 0)
        std::printf("window: 0x%llx..0x%llx\n", first, last);
    return 0;
}
