/* What a window move costs on this machine, below the host model: one mmap of a 16 MiB
 * shared view of a memfd over the window (what a refill does), the first store through
 * it afterwards (a page fault), and a trivial system call for scale. docs/host-model.md
 * quotes its figures.
 *
 *   cc -O2 bench/remap_cost.c -o remap_cost && ./remap_cost
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WINDOW (16ul << 20)
#define N 20000

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
    int fd = memfd_create("soc", 0);
    if (fd < 0 || ftruncate(fd, 4 * WINDOW) != 0) {
        perror("memfd");
        return 1;
    }
    char *w = mmap(0, WINDOW, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    double t = now_ns();
    for (int i = 0; i < N; i++)
        getppid();
    printf("a trivial system call (getppid):       %6.0f ns\n", (now_ns() - t) / N);
    t = now_ns();
    for (int i = 0; i < N; i++)
        mmap(w, WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (i % 4) * WINDOW);
    printf("mmap of a view over the window:        %6.0f ns\n", (now_ns() - t) / N);
    t = now_ns();
    for (int i = 0; i < N; i++) {
        mmap(w, WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (i % 4) * WINDOW);
        w[(i / 4 % 4) * 4096] = 1;
    }
    printf("the same and a store to a resident page: %4.0f ns\n", (now_ns() - t) / N);
    return 0;
}
