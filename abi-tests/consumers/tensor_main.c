/* Runs both loops over a tensor spanning five windows and checks they read the same
 * elements; the host test and the qemu test run this same file. */
#include "tensor_loop.h"

#ifdef NT_QEMU
#include "support.h"
#define main test_main
#endif

unsigned long long extended_isa_sdk_hbm_scratch;

static unsigned char buf[TENSOR_WINDOWS * TENSOR_WINDOW] __attribute__((aligned(4096)));
static uint32_t regs[2 * NEURON_TRANSLATE_RECORDS];
static _translation_ctx_t t;

int main(void)
{
    uint32_t i, want = 0, *elems = (uint32_t *)(void *)buf;
    if ((uintptr_t)buf >> 31 >> 1)
        return 10; /* the buffer must have a 32-bit address */
    for (i = 0; i < TENSOR_ELEMS; ++i) {
        elems[i] = i * 2654435761u;
        want += elems[i];
    }
    tensor_table(&t, buf, regs);
    if (tensor_sum_per_element(&t, TENSOR_SOC, TENSOR_ELEMS) != want)
        return 11;
    if (tensor_sum_spans(&t, TENSOR_SOC, TENSOR_ELEMS) != want)
        return 12;
    /* A tensor starting mid-window, ending mid-window. */
    want = 0;
    for (i = 100; i < TENSOR_ELEMS - 77; ++i)
        want += elems[i];
    if (tensor_sum_spans(&t, TENSOR_SOC + 400, TENSOR_ELEMS - 177) != want)
        return 13;
    if (tensor_sum_per_element(&t, TENSOR_SOC + 400, TENSOR_ELEMS - 177) != want)
        return 14;
    if (t.next_alloc != 0 || regs[0] != 0)
        return 15; /* every element was inside a window: no refill */
    return 0;
}
