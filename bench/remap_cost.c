/* What a window move costs on this machine, below the host model, step by step: a trivial
 * system call for scale; one mmap of a shared view of a memfd over the window (what a
 * refill does), for a 4 KiB and a 16 MiB view; the same when the outgoing view had a page
 * touched (its page table then torn down); the first store afterwards (a page fault); that
 * fault when the page table survives (a page of the same 2 MiB block kept mapped beside
 * the window); and moving populated views in and out with mremap instead (both addresses
 * 2 MiB aligned, so the kernel may move whole page tables). docs/host-model.md quotes its
 * figures.
 *
 *   cc -O2 bench/remap_cost.c -o remap_cost && ./remap_cost
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WINDOW (16ul << 20)
#define PAGE 4096ul
#define N 20000
#define VIEW (PROT_READ | PROT_WRITE)

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Maps region i % 4 over w (len bytes). */
static void view(char *w, unsigned long len, int fd, int i)
{
    if (mmap(w, len, VIEW, MAP_SHARED | MAP_FIXED, fd, (i % 4) * WINDOW) == MAP_FAILED)
        perror("mmap");
}

/* N remaps of w, each followed by a store to one of four pages when touch is set; prints
 * the remap's and the store's cost per call. */
static void remaps(const char *what, char *w, int fd, int touch)
{
    double map = 0, store = 0;
    for (int i = 0; i < N; i++) {
        double t0 = now_ns();
        view(w, WINDOW, fd, i);
        double t1 = now_ns();
        if (touch)
            w[(i / 4 % 4) * PAGE] = 1;
        store += now_ns() - t1;
        map += t1 - t0;
    }
    printf("%-52s mmap %5.0f ns", what, map / N);
    if (touch)
        printf(", first store %5.0f ns", store / N);
    printf("\n");
}

static void mremap_swaps(char *w, int fd)
{
    char *park = w + 2 * WINDOW;
    for (int k = 0; k < 4; k++) {
        view(park + k * WINDOW, WINDOW, fd, k);
        for (int j = 0; j < 4; j++)
            park[k * WINDOW + j * PAGE] = 1;
    }
    munmap(w, WINDOW);
    int cur = -1;
    double out = 0, in = 0;
    for (int i = 0; i < N; i++) {
        int k = i % 4;
        double t0 = now_ns();
        if (cur >= 0)
            mremap(w, WINDOW, WINDOW, MREMAP_MAYMOVE | MREMAP_FIXED, park + cur * WINDOW);
        double t1 = now_ns();
        if (mremap(park + k * WINDOW, WINDOW, WINDOW, MREMAP_MAYMOVE | MREMAP_FIXED, w) ==
            MAP_FAILED)
            perror("mremap");
        out += t1 - t0;
        in += now_ns() - t1;
        cur = k;
        w[(i / 4 % 4) * PAGE] = 1;
    }
    printf("%-52s out %5.0f ns, in %5.0f ns (no fault)\n", "mremap of populated views, aligned",
           out / N, in / N);
}

int main(void)
{
    int fd = memfd_create("soc", 0);
    if (fd < 0 || ftruncate(fd, 4 * WINDOW) != 0) {
        perror("memfd");
        return 1;
    }
    char *raw = mmap(0, 12 * WINDOW, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *all = mmap(0, 4 * WINDOW, VIEW, MAP_SHARED, fd, 0);
    if (raw == MAP_FAILED || all == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (unsigned long i = 0; i < 4 * WINDOW; i += PAGE)
        all[i] = 1; /* every page of SoC memory exists: the faults below are minor */
    char *w = (char *)(((uintptr_t)raw + WINDOW - 1) & ~(WINDOW - 1));

    double t = now_ns();
    for (int i = 0; i < N; i++)
        getppid();
    printf("%-52s %5.0f ns\n", "a trivial system call (getppid)", (now_ns() - t) / N);
    t = now_ns();
    for (int i = 0; i < N; i++)
        view(w, PAGE, fd, i);
    printf("%-52s mmap %5.0f ns\n", "4 KiB view, nothing touched", (now_ns() - t) / N);
    remaps("16 MiB view, nothing touched", w, fd, 0);
    remaps("16 MiB view, a page touched per move", w, fd, 1);
    /* A page mapped for good in the window's first 2 MiB block keeps its page table. */
    char *keep = mmap(w + 4 * WINDOW, PAGE, VIEW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    keep[0] = 1;
    remaps("the same, the block's page table kept alive", w + 4 * WINDOW + PAGE, fd, 1);
    mremap_swaps(w, fd);
    return 0;
}
