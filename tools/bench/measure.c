/* Timing with CUDA events (device time, median of repeats) and, for launch
 * overhead, the host's monotonic clock. */
#include "measure.h"

#include <cuda.h> /* the types only: the bare launch goes through the context's libcuda */
#include <cudaTypedefs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_why.h"
#include "tool_format.h"

/* The baseline the library's launch is compared with: cuLaunchKernelEx called
 * directly, from the libcuda the context opened, at the ABI written here. */
typedef struct bare_driver {
    PFN_cuLaunchKernelEx_v11060 cuLaunchKernelEx;
    PFN_cuGetErrorName_v6000 cuGetErrorName;
    PFN_cuGetErrorString_v6000 cuGetErrorString;
} bare_driver;

static asyncrt_status bare_driver_get(asyncrt_context *ctx, bare_driver *d)
{
    asyncrt_status s = asyncrt_context_driver_proc(ctx, "cuLaunchKernelEx", 11060, (void **)&d->cuLaunchKernelEx);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_driver_proc(ctx, "cuGetErrorName", 6000, (void **)&d->cuGetErrorName);
    if (s == ASYNCRT_SUCCESS)
        s = asyncrt_context_driver_proc(ctx, "cuGetErrorString", 6000, (void **)&d->cuGetErrorString);
    return s;
}

/* As the library words a failed driver call: "CALL failed: NAME (text): what". */
static asyncrt_status bare_fail(const bare_driver *d, CUresult r, const char *call, const char *what)
{
    const char *name = NULL, *text = NULL;
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
    if (name)
        return bench_fail(ASYNCRT_ERROR_LAUNCH, "%s failed: %s (%s): %s", call, name, text ? text : "no description",
                          what);
    return bench_fail(ASYNCRT_ERROR_LAUNCH, "%s failed: CUresult %d: %s", call, (int)r, what);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *samples, int n)
{
    qsort(samples, (size_t)n, sizeof *samples, compare_double);
    return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

asyncrt_status bench_timed(asyncrt_context *ctx, const bench_settings *s, bench_run_fn run, void *arg, double *ms)
{
    asyncrt_timer *t = NULL;
    double *samples = calloc((size_t)s->repeats, sizeof *samples);
    asyncrt_status st = samples ? asyncrt_timer_create(ctx, &t) : ASYNCRT_ERROR_OUT_OF_MEMORY;
    for (int i = 0; st == ASYNCRT_SUCCESS && i < s->warmup; i++) st = run(arg);
    if (st == ASYNCRT_SUCCESS) st = asyncrt_synchronize(ctx);
    for (int i = 0; st == ASYNCRT_SUCCESS && i < s->repeats; i++) {
        float elapsed = 0;
        if ((st = asyncrt_timer_start(t, NULL)) || (st = run(arg)) || (st = asyncrt_timer_stop(t, NULL)) ||
            (st = asyncrt_timer_elapsed_ms(t, &elapsed)))
            break;
        samples[i] = elapsed;
    }
    if (st == ASYNCRT_SUCCESS) *ms = median(samples, s->repeats);
    asyncrt_timer_destroy(t);
    free(samples);
    return st;
}

typedef struct copy_arg {
    asyncrt_context *ctx;
    asyncrt_deviceptr dst, src;
    size_t bytes;
} copy_arg;

static asyncrt_status run_copy(void *arg)
{
    copy_arg *a = arg;
    return asyncrt_memory_copy(a->ctx, a->dst, a->src, a->bytes, NULL);
}

asyncrt_status bench_copy(asyncrt_context *ctx, const bench_settings *s, asyncrt_deviceptr dst,
                          asyncrt_deviceptr src, size_t bytes, double *ms)
{
    copy_arg a = {ctx, dst, src, bytes};
    return bench_timed(ctx, s, run_copy, &a, ms);
}

typedef struct map_arg {
    asyncrt_map *map;
    size_t n;
    const asyncrt_deviceptr *inputs, *outputs;
    const void *const *scalars;
} map_arg;

static asyncrt_status run_map(void *arg)
{
    map_arg *a = arg;
    return asyncrt_map_launch(a->map, a->n, a->inputs, a->outputs, a->scalars, NULL);
}

asyncrt_status bench_map(asyncrt_context *ctx, const bench_settings *s, asyncrt_map *map, size_t n,
                         const asyncrt_deviceptr *inputs, const asyncrt_deviceptr *outputs,
                         const void *const *scalars, double *ms)
{
    map_arg a = {map, n, inputs, outputs, scalars};
    return bench_timed(ctx, s, run_map, &a, ms);
}

/* ---- JIT and launch costs ------------------------------------------------ */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const asyncrt_map_arg k_x = {"x", ASYNCRT_F32}, k_y = {"y", ASYNCRT_F32};
static const asyncrt_map_arg k_ab[] = {{"a", ASYNCRT_F32}, {"b", ASYNCRT_F32}};

static asyncrt_status timed_create(asyncrt_context *ctx, double *ms, asyncrt_map **out)
{
    asyncrt_map_desc d = {.size = sizeof d,
                          .inputs = &k_x, .input_count = 1, .outputs = &k_y, .output_count = 1,
                          .scalars = k_ab, .scalar_count = 2, .expression = "y = a * x + b;"};
    double start = now_ms();
    asyncrt_status s = asyncrt_map_create(ctx, &d, out);
    *ms = now_ms() - start;
    return s;
}

/* A fresh context on device `ordinal` with the disk cache in `dir`. */
static asyncrt_status open_with_cache(int ordinal, const char *dir, asyncrt_context **out)
{
    asyncrt_status s = asyncrt_context_create(out);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_set_cache_dir(*out, dir);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_context_open_device(*out, ordinal);
    return s;
}

/* A CCCL kernel's hit checks every header NVRTC read (~385 for <cuda/barrier>):
 * source -> loaded module, cold, then from the disk cache in fresh contexts. */
static const char k_barrier_source[] =
    "#include <cuda/barrier>\n"
    "extern \"C\" __global__ void barrier_kernel(float *x) {\n"
    "    __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
    "    if (threadIdx.x == 0) init(&bar, blockDim.x);\n"
    "    __syncthreads();\n"
    "    x[threadIdx.x] *= 2.0f;\n"
    "    bar.arrive_and_wait();\n"
    "}\n";
#define BARRIER_HITS BENCH_BARRIER_HITS

static asyncrt_status timed_build(int ordinal, const char *dir, double *ms)
{
    asyncrt_context *ctx = NULL;
    asyncrt_module *module = NULL;
    asyncrt_status s = open_with_cache(ordinal, dir, &ctx);
    double start = now_ms();
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_build(ctx, "barrier.cu", k_barrier_source, NULL, &module);
    *ms = now_ms() - start;
    asyncrt_module_destroy(module);
    asyncrt_context_destroy(ctx);
    return s;
}

static asyncrt_status bench_barrier_hit(int ordinal, const char *dir, bench_jit *out)
{
    double hits[BARRIER_HITS];
    asyncrt_status s = timed_build(ordinal, dir, &out->barrier_cold_ms);
    for (int i = 0; s == ASYNCRT_SUCCESS && i < BARRIER_HITS; i++) s = timed_build(ordinal, dir, &hits[i]);
    if (s == ASYNCRT_SUCCESS) out->barrier_disk_ms = median(hits, BARRIER_HITS);
    return s;
}

/* Launch costs are host time per enqueue, in batches small enough never to
 * fill the driver's launch queue (a full queue blocks the host on the GPU and
 * would time the kernels instead), synchronised between batches, the three
 * kinds interleaved; the median over batches. */
#define LAUNCH_BATCH 64
#define LAUNCH_BATCHES 101

asyncrt_status bench_jit_costs(asyncrt_context *ctx, int ordinal, bench_jit *out)
{
    memset(out, 0, sizeof *out);
    bench_why_clear();
    char dir[] = "/tmp/asyncrt-bench-XXXXXX";
    if (!mkdtemp(dir)) return bench_fail(ASYNCRT_ERROR_IO, "cannot make a temporary cache directory");
    asyncrt_context *cold = NULL, *warm = NULL;
    asyncrt_map *m1 = NULL, *m2 = NULL, *m3 = NULL;
    asyncrt_module *module = NULL;
    asyncrt_kernel *kernel = NULL;
    asyncrt_status s = open_with_cache(ordinal, dir, &cold);
    if (s == ASYNCRT_SUCCESS) s = timed_create(cold, &out->cold_ms, &m1);
    if (s == ASYNCRT_SUCCESS) s = open_with_cache(ordinal, dir, &warm);
    if (s == ASYNCRT_SUCCESS) s = timed_create(warm, &out->disk_ms, &m2);
    if (s == ASYNCRT_SUCCESS) s = timed_create(warm, &out->memory_ms, &m3);
    if (s != ASYNCRT_SUCCESS)
        bench_fail(s, "JIT timing: %s", asyncrt_context_last_error(warm ? warm : cold));
    else if ((s = bench_barrier_hit(ordinal, dir, out)) != ASYNCRT_SUCCESS)
        bench_fail(s, "JIT timing of the <cuda/barrier> kernel failed (%s)", asyncrt_status_string(s));

    /* Launch overhead: host time to enqueue an empty kernel. */
    if (s == ASYNCRT_SUCCESS)
        s = asyncrt_module_build(ctx, "empty.cu", "extern \"C\" __global__ void empty(int) {}", NULL, &module);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_get_kernel(module, "empty", &kernel);
    bare_driver drv = {0};
    if (s == ASYNCRT_SUCCESS) s = bare_driver_get(ctx, &drv);
    int value = 0;
    void *args[] = {&value};
    size_t sizes[] = {sizeof value};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {1, 1, 1}, .block = {32, 1, 1}};
    CUlaunchConfig bare = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1,
                           .blockDimZ = 1};
    asyncrt_deviceptr buf = 0;
    if (s == ASYNCRT_SUCCESS) s = asyncrt_memory_alloc(ctx, 256, &buf);
    float a = 1, b = 0;
    const void *scalars[] = {&a, &b};
    double bare_us[LAUNCH_BATCHES], ours_us[LAUNCH_BATCHES], map_us[LAUNCH_BATCHES];
    for (int batch = -1; s == ASYNCRT_SUCCESS && batch < LAUNCH_BATCHES; batch++) { /* -1 warms up */
        double t0 = now_ms();
        for (int i = 0; s == ASYNCRT_SUCCESS && i < LAUNCH_BATCH; i++) {
            CUresult r = drv.cuLaunchKernelEx(&bare, (CUfunction)asyncrt_kernel_function(kernel), args, NULL);
            if (r != CUDA_SUCCESS) s = bare_fail(&drv, r, "cuLaunchKernelEx", "empty kernel");
        }
        double t1 = now_ms();
        if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
        double t2 = now_ms();
        for (int i = 0; s == ASYNCRT_SUCCESS && i < LAUNCH_BATCH; i++) s = asyncrt_kernel_launch(kernel, &cfg, args, sizes, 1);
        double t3 = now_ms();
        if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
        double t4 = now_ms();
        for (int i = 0; s == ASYNCRT_SUCCESS && i < LAUNCH_BATCH; i++)
            if ((s = asyncrt_map_launch(m1, 1, &buf, &buf, scalars, NULL)))
                bench_fail(s, "map launch: %s", asyncrt_context_last_error(cold));
        double t5 = now_ms();
        if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
        if (batch < 0) continue;
        bare_us[batch] = (t1 - t0) * 1e3 / LAUNCH_BATCH;
        ours_us[batch] = (t3 - t2) * 1e3 / LAUNCH_BATCH;
        map_us[batch] = (t5 - t4) * 1e3 / LAUNCH_BATCH;
    }
    if (s == ASYNCRT_SUCCESS) {
        out->bare_launch_us = median(bare_us, LAUNCH_BATCHES);
        out->launch_us = median(ours_us, LAUNCH_BATCHES);
        out->map_launch_us = median(map_us, LAUNCH_BATCHES);
    }
    asyncrt_memory_free(ctx, buf);
    asyncrt_module_destroy(module);
    asyncrt_map_destroy(m1);
    asyncrt_map_destroy(m2);
    asyncrt_map_destroy(m3);
    asyncrt_context_destroy(cold);
    asyncrt_context_destroy(warm);
    /* The cache entries the cold run wrote. */
    char *cmd = tool_format("rm -rf '%s'", dir);
    const char *log = NULL; /* said at ASYNCRT_LOG=1, as the library says its own */
    asyncrt_context_setting(ctx, "ASYNCRT_LOG", &log);
    if (cmd && system(cmd) != 0 && log && atoi(log) >= 1) fprintf(stderr, "asyncrt: could not remove %s\n", dir);
    free(cmd);
    return s;
}
