/*
 * The device program's channel to the runner, below every other file of the device
 * runtime: a request's message written (put), sent and its answer read (ask) over fd
 * NT_DEVICE_FD_RPC (protocol.h), the system calls under it, and the runtime's own copies.
 * runtime.c watches the kernel's stack at each request through nt_device_on_request, so
 * that nothing here calls up into the files that use it.
 */
#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "protocol.h"

long nt_device_syscall(long nr, const long args[6]);

enum { SYS_READ = 12, SYS_WRITE = 13, SYS_EXIT_GROUP = 119 };

#define MSG_BYTES 65536u

static unsigned char msg[MSG_BYTES] __attribute__((aligned(8)));
static uint32_t msg_len;

/* Called at the start of each request but its own (runtime.c's stack watch), if set. */
void (*nt_device_on_request)(void);

long nt_device_sys(long nr, long a, long b, long c, long d, long e, long f)
{
    const long args[6] = {a, b, c, d, e, f};
    return nt_device_syscall(nr, args);
}

void nt_device_exit(int status)
{
    for (;;)
        nt_device_sys(SYS_EXIT_GROUP, status, 0, 0, 0, 0, 0);
}

/* The runtime's own copies (memcpy is counted as the kernel's: the copies call it). */
void nt_device_copy(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    while (n--)
        *dp++ = *sp++;
}

/* A new message, with no watch of the stack (the watch's own request). */
void nt_device_start(void) { msg_len = 0; }

/* A new message, after the stack's watch has looked at the kernel's stack. */
void nt_device_begin(void)
{
    if (nt_device_on_request)
        nt_device_on_request();
    msg_len = 0;
}

/* The message being written. */
void nt_device_put(const void *p, uint32_t n)
{
    if (msg_len + n > MSG_BYTES)
        nt_device_exit(NT_DEVICE_EXIT_REQUEST_TOO_LONG);
    nt_device_copy(msg + msg_len, p, n);
    msg_len += n;
}

static void nt_device_io(int read, unsigned char *p, uint32_t n)
{
    while (n) {
        long got = nt_device_sys(read ? SYS_READ : SYS_WRITE, NT_DEVICE_FD_RPC, (long)p, (long)n, 0, 0, 0);
        if (got <= 0)
            nt_device_exit(read ? 0 : NT_DEVICE_EXIT_RUNNER_GONE); /* the runner stopped this core */
        p += got;
        n -= (uint32_t)got;
    }
}

/* Sends the request `code` with the message written so far; the reply, in msg. */
const unsigned char *nt_device_ask(uint32_t code)
{
    uint32_t head[2] = {code, msg_len};
    nt_device_io(0, (unsigned char *)head, 8);
    nt_device_io(0, msg, msg_len);
    nt_device_io(1, (unsigned char *)&msg_len, 4);
    if (msg_len > MSG_BYTES)
        nt_device_exit(NT_DEVICE_EXIT_ANSWER_TOO_LONG);
    nt_device_io(1, msg, msg_len);
    return msg;
}

/* Sends request `code` with the payload at p (its struct in protocol.h, and what follows
 * it), after the stack's watch; the answer's payload. */
const unsigned char *nt_device_request(uint32_t code, const void *p, uint32_t n)
{
    nt_device_begin();
    nt_device_put(p, n);
    return nt_device_ask(code);
}

/* A request with the payload the caller made (printf.c, support.c): a PRINT's answer. */
uint32_t nt_device_send(uint32_t code, const unsigned char *payload, uint32_t bytes)
{
    struct nt_device_printed printed = {0};
    const unsigned char *answer = nt_device_request(code, payload, bytes);
    if (code == NT_DEVICE_PRINT)
        nt_device_copy(&printed, answer, sizeof printed);
    return printed.bytes;
}
