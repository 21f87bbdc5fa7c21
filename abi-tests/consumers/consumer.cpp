// A C++ custom op against neuron_translate.h (C++11 and later): the functions are
// declared with C++ linkage, so these calls reference the mangled names of the original.
#include "consumer_checks.h"
#include "host_nx.h"

// The stand-in for what start_exit.o defines and the library needs.
namespace extended_isa {
namespace sdk {
unsigned long long hbm_scratch;
}
}

int main()
{
    static_assert(sizeof(_translation_ctx_t) == 168, "layout");
    const unsigned long long engine_base = 0x4001000000ull;
    volatile uint32_t *regs = host_nx_map(engine_base);
    if (!regs)
        return 100;
    int rc = consumer_checks(engine_base);
    host_nx_unmap(regs);
    return rc;
}
