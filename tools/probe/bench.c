/* Quick copy bandwidth: each path copies one buffer (median of several timed
 * runs after warm-up), and its output is compared with the input once. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

#define BENCH_WARMUP 3
#define BENCH_RUNS 9
#define BENCH_MAX_BYTES (256u << 20)
#define BENCH_GRAIN (16u << 10) /* an LDGSTS tile; a multiple of the TMA chunk (8 KiB) */

typedef struct bench_job {
    asyncrt_context *ctx;
    asyncrt_kernel *kernel; /* NULL: cuMemcpyDtoD */
    asyncrt_launch_config cfg;
    asyncrt_deviceptr src, dst;
    uint64_t count; /* the kernel's third argument: uint4s, tiles or chunks */
    size_t bytes;
} bench_job;

static asyncrt_status job_run(bench_job *j)
{
    if (!j->kernel) return asyncrt_memory_copy(j->ctx, j->dst, j->src, j->bytes, NULL);
    void *args[] = {&j->src, &j->dst, &j->count};
    const size_t sizes[] = {sizeof j->src, sizeof j->dst, sizeof j->count};
    return asyncrt_kernel_launch(j->kernel, &j->cfg, args, sizes, 3);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of BENCH_RUNS timed runs, in GB/s of bytes read plus written. */
static asyncrt_status job_time(bench_job *j, asyncrt_timer *timer, double *gbs)
{
    double ms[BENCH_RUNS];
    asyncrt_status s = ASYNCRT_SUCCESS;
    for (int i = 0; i < BENCH_WARMUP && s == ASYNCRT_SUCCESS; i++) s = job_run(j);
    for (int i = 0; i < BENCH_RUNS && s == ASYNCRT_SUCCESS; i++) {
        float elapsed = 0;
        if ((s = asyncrt_timer_start(timer, NULL)) == ASYNCRT_SUCCESS && (s = job_run(j)) == ASYNCRT_SUCCESS &&
            (s = asyncrt_timer_stop(timer, NULL)) == ASYNCRT_SUCCESS)
            s = asyncrt_timer_elapsed_ms(timer, &elapsed);
        ms[i] = elapsed;
    }
    if (s != ASYNCRT_SUCCESS) return s;
    qsort(ms, BENCH_RUNS, sizeof ms[0], compare_double);
    *gbs = 2.0 * (double)j->bytes / (ms[BENCH_RUNS / 2] * 1e-3) / 1e9;
    return ASYNCRT_SUCCESS;
}

static void set_error(char *buf, size_t size, const char *what, asyncrt_context *ctx)
{
    const char *msg = asyncrt_context_last_error(ctx);
    snprintf(buf, size, "%s: %.*s", what, (int)strcspn(msg, "\n"), msg);
}

static const struct {
    const char *define, *kernel;
    unsigned block, blocks_per_sm, unit; /* unit: bytes per count */
} paths[PROBE_BENCH_PATH_COUNT] = {
    [PROBE_BENCH_PLAIN] = {"ASYNCRT_PROBE_BENCH_PLAIN", "probe_bench_plain", 256, 8, 16},
    [PROBE_BENCH_LDGSTS] = {"ASYNCRT_PROBE_BENCH_LDGSTS", "probe_bench_ldgsts", 256, 4, 16 << 10},
    [PROBE_BENCH_TMA] = {"ASYNCRT_PROBE_BENCH_TMA", "probe_bench_tma", 32, 6, 8 << 10},
};

static void bench_path(bench_job *base, asyncrt_timer *timer, const asyncrt_device_info *info,
                       probe_bench_path p, const unsigned char *expected, unsigned char *got,
                       probe_bench *out)
{
    probe_bench_result *r = &out->paths[p];
    asyncrt_module *module = NULL;
    bench_job j = *base;
    if (probe_build_module(j.ctx, paths[p].define, NULL, &module) != ASYNCRT_SUCCESS ||
        asyncrt_module_get_kernel(module, paths[p].kernel, &j.kernel) != ASYNCRT_SUCCESS) {
        set_error(r->error, sizeof r->error, "build", j.ctx);
    } else if (asyncrt_memory_fill(j.ctx, j.dst, 0xFF, j.bytes, NULL) != ASYNCRT_SUCCESS) {
        set_error(r->error, sizeof r->error, "poison", j.ctx);
    } else {
        j.cfg = (asyncrt_launch_config){.size = sizeof(asyncrt_launch_config),
                                        .grid = {(unsigned)info->sm_count * paths[p].blocks_per_sm, 1, 1},
                                        .block = {paths[p].block, 1, 1}};
        j.count = j.bytes / paths[p].unit;
        if (job_time(&j, timer, &r->gbs) != ASYNCRT_SUCCESS) {
            set_error(r->error, sizeof r->error, "run", j.ctx);
        } else if (asyncrt_memory_to_host(j.ctx, got, j.dst, j.bytes) != ASYNCRT_SUCCESS) {
            set_error(r->error, sizeof r->error, "download", j.ctx);
        } else if (memcmp(got, expected, j.bytes) != 0) {
            size_t i = 0;
            while (got[i] == expected[i]) i++;
            snprintf(r->error, sizeof r->error, "copy is wrong from byte %zu on: got 0x%02x, expected 0x%02x", i,
                     got[i], expected[i]);
        } else {
            r->ran = true;
            r->percent = out->d2d_gbs > 0 ? 100.0 * r->gbs / out->d2d_gbs : 0;
        }
    }
    asyncrt_module_destroy(module);
}

void probe_bench_device(asyncrt_context *ctx, const asyncrt_device_info *info, probe_bench *out)
{
    memset(out, 0, sizeof *out);
    size_t bytes = BENCH_MAX_BYTES;
    while (bytes > BENCH_GRAIN && bytes > info->total_memory_bytes / 8) bytes /= 2;
    out->bytes = bytes;
    out->runs = BENCH_RUNS;
    bench_job job = {.ctx = ctx, .bytes = bytes};
    asyncrt_timer *timer = NULL;
    unsigned char *host = malloc(bytes), *got = malloc(bytes);
    if (!host || !got) {
        snprintf(out->error, sizeof out->error, "out of host memory for %zu bytes", bytes);
        goto done;
    }
    /* Random input, so a copy that moves the wrong bytes cannot pass. */
    uint32_t x = (uint32_t)time(NULL) | 1u;
    for (size_t i = 0; i < bytes; i += 4) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        memcpy(host + i, &x, 4);
    }
    if (asyncrt_memory_alloc(ctx, bytes, &job.src) != ASYNCRT_SUCCESS ||
        asyncrt_memory_alloc(ctx, bytes, &job.dst) != ASYNCRT_SUCCESS ||
        asyncrt_memory_to_device(ctx, job.src, host, bytes) != ASYNCRT_SUCCESS ||
        asyncrt_timer_create(ctx, &timer) != ASYNCRT_SUCCESS) {
        set_error(out->error, sizeof out->error, "set-up", ctx);
        goto done;
    }
    if (job_time(&job, timer, &out->d2d_gbs) != ASYNCRT_SUCCESS) {
        set_error(out->error, sizeof out->error, "cuMemcpyDtoD ceiling", ctx);
        goto done;
    }
    out->ran = true;
    const bool has[PROBE_BENCH_PATH_COUNT] = {true, info->features.ldgsts, info->features.bulk_copy};
    for (int p = 0; p < PROBE_BENCH_PATH_COUNT; p++)
        if (has[p]) bench_path(&job, timer, info, (probe_bench_path)p, host, got, out);
done:
    asyncrt_timer_destroy(timer);
    asyncrt_memory_free(ctx, job.src);
    asyncrt_memory_free(ctx, job.dst);
    free(host);
    free(got);
}
