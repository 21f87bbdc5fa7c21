/*
 * printf for kernels built with the device's data model (the SDK's ABI flags, Makefile
 * SDK_ABI_FLAGS): there `long double` is `double`, as on the Q7, but the workstation's C
 * library reads a `long double` argument as x87's 12 bytes. The device's printf ignores
 * the `L` length modifier (sdk/device/printf.c); so does this one, which hands the format
 * without it to the C library. Only printf: it is the one formatting function the device's
 * runtime has, so a kernel calling another is refused before it runs here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int printf(const char *format, ...)
{
    char small[256];
    size_t len = strlen(format);
    char *copy = len < sizeof small ? small : malloc(len + 1);
    int n;
    va_list args;
    if (!copy)
        return -1;
    /* Copies the format without each directive's L, through its conversion ("%%" too). */
    size_t k = 0;
    for (size_t i = 0; i < len; ++i) {
        copy[k++] = format[i];
        if (format[i] != '%')
            continue;
        while (++i < len) {
            char d = format[i];
            if (d == 'L')
                continue;
            copy[k++] = d;
            if (!strchr("-+ #0123456789.*'$Ihlqjzt", d))
                break;
        }
    }
    copy[k] = '\0';
    va_start(args, format);
    n = vprintf(copy, args);
    va_end(args);
    if (copy != small)
        free(copy);
    return n;
}
