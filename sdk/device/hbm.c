/*
 * The device calls on HBM a kernel may make beyond the guide (the library's custom_op.h;
 * docs/customop-api.md, "Device parity"), on the emulated Q7: neuron_hbm_allocate and
 * neuron_hbm_deallocate over the heap the host runtime models for the call, and
 * neuron_memcpy's check (the header moves the bytes). Each is a request to the runner
 * (protocol.h), made through runtime.c's message.
 */
#include <stddef.h>
#include <stdint.h>

#include "neuron_customop_host/runtime.h"
#include "protocol.h"

/* runtime.c: a request's message, and its answer. */
void nt_device_begin(void);
void nt_device_put32(uint32_t v);
void nt_device_put64(uint64_t v);
const unsigned char *nt_device_ask(uint32_t code);
void nt_device_copy(void *d, const void *s, size_t n);

/* The call's place: its return address. */
#define SITE ((uint32_t)(uintptr_t)__builtin_return_address(0))

int nt_customop_hbm_allocate(uint32_t bytes, uint64_t *out, uint32_t align)
{
    int32_t status;
    nt_device_begin();
    nt_device_put32(bytes);
    nt_device_put32(align);
    nt_device_put32(SITE);
    const unsigned char *answer = nt_device_ask(NT_DEVICE_HBM_ALLOCATE);
    nt_device_copy(&status, answer, 4);
    if (status == 0)
        nt_device_copy(out, answer + 4, 8);
    return status;
}

int nt_customop_hbm_deallocate(uint64_t addr)
{
    int32_t status;
    nt_device_begin();
    nt_device_put64(addr);
    nt_device_put32(SITE);
    nt_device_copy(&status, nt_device_ask(NT_DEVICE_HBM_FREE), 4);
    return status;
}

void nt_customop_hbm_copy(uint64_t addr, uint64_t bytes, const void *local, int write, const void *site)
{
    (void)local; /* where it is, is checked on the host run only */
    nt_device_begin();
    nt_device_put64(addr);
    nt_device_put64(bytes);
    nt_device_put32((uint32_t)write);
    nt_device_put32((uint32_t)(uintptr_t)site);
    nt_device_ask(NT_DEVICE_HBM_COPY);
}
