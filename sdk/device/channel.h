/*
 * channel.c's functions, for the device runtime's other files: a request to the runner
 * (its payload one of protocol.h's structs, then what follows it), its answer, the
 * system calls under them and the runtime's own copies.
 */
#ifndef NT_DEVICE_CHANNEL_H
#define NT_DEVICE_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

long nt_device_sys(long nr, long a, long b, long c, long d, long e, long f);
void nt_device_exit(int status);
void nt_device_copy(void *d, const void *s, size_t n);
/* A message started without (start) or after (begin) the stack's watch; written (put);
 * sent as request `code`, its answer's payload returned (ask). */
void nt_device_start(void);
void nt_device_begin(void);
void nt_device_put(const void *p, uint32_t n);
const unsigned char *nt_device_ask(uint32_t code);
/* begin, put and ask at once: request `code` with the payload at p. */
const unsigned char *nt_device_request(uint32_t code, const void *p, uint32_t n);
/* A request with a payload the caller made (printf's pieces, a check's place): a PRINT's
 * bytes printed, 0 for any other. */
uint32_t nt_device_send(uint32_t code, const unsigned char *payload, uint32_t bytes);
/* Called at the start of each request but the stack watch's own, if set (runtime.c). */
extern void (*nt_device_on_request)(void);

/* Request `code` with the struct q (protocol.h's) as its whole payload: its answer. */
#define NT_DEVICE_ASK(code, q) nt_device_request(code, &(q), sizeof(q))

#endif /* NT_DEVICE_CHANNEL_H */
