/* Compile and disk-hit times of one kernel from a header bundle against from
 * the toolkit (docs/bundles.md), interleaved:
 *   bench_bundle KERNEL.cu BUNDLE [ROUNDS] [ARCH]
 * Each compile is NVRTC in a fresh context with no cache and no PCH; each
 * disk hit a fresh context reading a warmed cache folder (the bundle loaded
 * before the clock starts: a program loads it once; its load is timed
 * apart). Prints the median
 * and the minimum of each in ms. Not a test: run it where timings count. */
#define _DEFAULT_SOURCE /* setenv, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asyncrt/asyncrt.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One compile (cache_dir NULL: none) in a fresh context; its time, or -1. */
static double once(const char *name, const char *source, const char *bundle_path, const char *arch,
                   const char *cache_dir, asyncrt_program_origin expect)
{
    setenv("ASYNCRT_TOOLKIT", bundle_path ? "none" : "auto", 1);
    asyncrt_context *ctx = NULL;
    asyncrt_bundle *b = NULL;
    asyncrt_program *p = NULL;
    double ms = -1;
    if (asyncrt_context_create(&ctx) == ASYNCRT_SUCCESS && asyncrt_context_set_cache_dir(ctx, cache_dir) == 0 &&
        (!bundle_path || asyncrt_bundle_load_file(ctx, bundle_path, &b) == ASYNCRT_SUCCESS)) {
        asyncrt_compile_options o = {.size = sizeof o, .arch = arch, .bundle = b};
        double start = now_ms();
        if (asyncrt_program_compile(ctx, name, source, &o, &p) == ASYNCRT_SUCCESS &&
            asyncrt_program_origin_of(p) == expect)
            ms = now_ms() - start;
    }
    if (ms < 0) fprintf(stderr, "bench_bundle: %s\n", ctx ? asyncrt_context_last_error(ctx) : "no context");
    asyncrt_program_destroy(p);
    asyncrt_bundle_destroy(b);
    asyncrt_context_destroy(ctx);
    return ms;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_bundle KERNEL.cu BUNDLE [ROUNDS] [ARCH]\n");
        return 2;
    }
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    const char *arch = argc > 4 ? argv[4] : "sm_90";
    FILE *f = fopen(argv[1], "rb");
    static char source[1 << 20];
    size_t n = f ? fread(source, 1, sizeof source - 1, f) : 0;
    if (f) fclose(f);
    if (!n || rounds < 1 || rounds > 100) return 2;
    source[n] = '\0';
    setenv("ASYNCRT_PCH", "0", 1);
    char dir[] = "/tmp/bench-bundle-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    double t[5][100]; /* compile toolkit, compile bundle, hit toolkit, hit bundle, bundle load */
    once(argv[1], source, NULL, arch, dir, ASYNCRT_ORIGIN_COMPILED); /* warm the cache: one entry each */
    once(argv[1], source, argv[2], arch, dir, ASYNCRT_ORIGIN_COMPILED);
    for (int r = 0; r < rounds; r++) {
        bool flip = r & 1; /* alternate which goes first */
        t[flip][r] = once(argv[1], source, flip ? argv[2] : NULL, arch, NULL, ASYNCRT_ORIGIN_COMPILED);
        t[!flip][r] = once(argv[1], source, flip ? NULL : argv[2], arch, NULL, ASYNCRT_ORIGIN_COMPILED);
        asyncrt_context *ctx = NULL;
        asyncrt_bundle *b = NULL;
        asyncrt_context_create(&ctx);
        double start = now_ms();
        t[4][r] = asyncrt_bundle_load_file(ctx, argv[2], &b) == ASYNCRT_SUCCESS ? now_ms() - start : -1;
        asyncrt_bundle_destroy(b);
        asyncrt_context_destroy(ctx);
        for (int k = 0; k < 10; k++) { /* hits are short: ten of each per round */
            double x = once(argv[1], source, NULL, arch, dir, ASYNCRT_ORIGIN_DISK_CACHE);
            double y = once(argv[1], source, argv[2], arch, dir, ASYNCRT_ORIGIN_DISK_CACHE);
            if (!k || x < t[2][r]) t[2][r] = x; /* the round's best */
            if (!k || y < t[3][r]) t[3][r] = y;
        }
    }
    const char *what[] = {"compile, toolkit", "compile, bundle ", "disk hit, toolkit", "disk hit, bundle ",
                          "bundle load (once per process)"};
    for (int w = 0; w < 5; w++) {
        for (int r = 0; r < rounds; r++)
            if (t[w][r] < 0) return 1;
        qsort(t[w], (size_t)rounds, sizeof(double), by_value);
        printf("%s: median %.2f ms, min %.2f ms (%d rounds)\n", what[w], t[w][rounds / 2], t[w][0], rounds);
    }
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
