// What a kernel may write with the public names in scope: `using namespace torch;` (and
// at, c10) leaves `neuron::tcm_malloc`, `Tensor`, `kFloat`, `zeros` and the operations
// unambiguous; the SDK's own names stay in nt_customop and nt_customop_span. Compiled
// only (sdk/tests/tests/sdk_author.rs).
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

using namespace torch;

Tensor uses_the_public_names(const Tensor &x)
{
    void *p = neuron::tcm_malloc(64);
    neuron::tcm_free(p);
    Tensor y = zeros(x.sizes(), kFloat);
    Tensor z = add(y, 1, 2);
    Scalar s = 2.5;
    IntArrayRef sizes = {size_t(2), size_t(3)};
    TensorOptions o = kInt;
    (void)sizes, (void)o;
    CoherencyEnforcer::Policy q = CoherencyEnforcer::INCOHERENT_QUIET;
    y.set_accessor_coherence_policy(q);
    return mul(z, s);
}

namespace neuron {
// A kernel's own namespace neuron does not collide with the SDK's.
inline int mine() { return 1; }
} // namespace neuron
