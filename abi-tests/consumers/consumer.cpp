// A C++ custom op against neuron_translate.h (C++11 and later): the functions are
// declared with C++ linkage, so these calls reference the mangled names of the original.
#include "consumer_checks.h"

// Stand-ins for what start_exit.o defines.
unsigned char data_scratch_map[4096];
namespace extended_isa {
namespace sdk {
unsigned long long hbm_scratch;
}
}

int main()
{
    static_assert(sizeof(_translation_ctx_t) == 168, "layout");
    return consumer_checks();
}
