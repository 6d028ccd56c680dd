#include "load_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h" /* the driver table: the bare cuModuleLoadDataEx is what is timed */
#include "lean.h"

#define LOADS 31

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

/* One load + unload of `image`, the load timed. */
static asyncrt_status load_once(asyncrt_context *ctx, const void *image, double *ms)
{
    CUmodule module;
    double start = now_ms();
    CUresult r = ctx->drv->cuModuleLoadDataEx(&module, image, 0, NULL, NULL);
    *ms = now_ms() - start;
    if (r != CUDA_SUCCESS) return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_MODULE_LOAD, r, "cuModuleLoadDataEx", "%s", "");
    ctx->drv->cuModuleUnload(module);
    return ASYNCRT_SUCCESS;
}

int load_bench_run(asyncrt_context *ctx, bool csv)
{
    asyncrt_program *lean = NULL, *fat = NULL;
    asyncrt_compile_options lean_opts = {.arch = "auto"};
    asyncrt_compile_options fat_opts = {.arch = "auto", .options = &asyncrt__lean_off_option, .option_count = 1};
    /* Lean images are opt-in (ASYNCRT_LEAN=1): on for the one, off for the other. */
    const char *was = getenv("ASYNCRT_LEAN");
    char *saved = was ? strdup(was) : NULL;
    setenv("ASYNCRT_LEAN", "1", 1);
    asyncrt_status s = asyncrt_program_compile(ctx, "barrier.cu", asyncrt__lean_barrier_example, &lean_opts, &lean);
    setenv("ASYNCRT_LEAN", "0", 1);
    if (!s) s = asyncrt_program_compile(ctx, "barrier.cu", asyncrt__lean_barrier_example, &fat_opts, &fat);
    if (saved) setenv("ASYNCRT_LEAN", saved, 1);
    else unsetenv("ASYNCRT_LEAN");
    free(saved);
    double lean_ms[LOADS], fat_ms[LOADS], first_lean = 0, first_fat = 0;
    if (!s) s = asyncrt__require_device(ctx);
    for (int i = -1; !s && i < LOADS; i++) { /* interleaved; -1 is the first load of each */
        double a, b;
        if (!(s = load_once(ctx, asyncrt_program_image(lean, &(size_t){0}), &a)))
            s = load_once(ctx, asyncrt_program_image(fat, &(size_t){0}), &b);
        if (i < 0) {
            first_lean = a;
            first_fat = b;
        } else {
            lean_ms[i] = a;
            fat_ms[i] = b;
        }
    }
    int rc = 0;
    if (s) {
        fprintf(stderr, "asyncrt-bench: module load: %s\n", asyncrt_context_last_error(ctx));
        rc = 1;
    } else {
        qsort(lean_ms, LOADS, sizeof(double), by_value);
        qsort(fat_ms, LOADS, sizeof(double), by_value);
        size_t lean_size, fat_size;
        asyncrt_program_image(lean, &lean_size);
        asyncrt_program_image(fat, &fat_size);
        if (csv)
            printf("load,barrier_lean_bytes,%zu\nload,barrier_lean_ms,%.4f\nload,barrier_nvrtc_bytes,%zu\n"
                   "load,barrier_nvrtc_ms,%.4f\n",
                   lean_size, lean_ms[LOADS / 2], fat_size, fat_ms[LOADS / 2]);
        else
            printf("\ncuModuleLoadData, <cuda/barrier> kernel (%s): lean CUBIN %zu bytes %.3f ms, NVRTC's "
                   "CUBIN %zu bytes %.3f ms (median of %d; first load %.3f / %.3f ms)\n",
                   asyncrt_program_arch(lean), lean_size, lean_ms[LOADS / 2], fat_size, fat_ms[LOADS / 2], LOADS,
                   first_lean, first_fat);
    }
    asyncrt_program_destroy(lean);
    asyncrt_program_destroy(fat);
    return rc;
}
