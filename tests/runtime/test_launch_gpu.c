/* Launch features on a device: a cooperative grid-sync kernel at exactly the
 * co-residency limit (and refused one block above it), programmatic dependent
 * launch, the cluster preflight, stream priorities, block-size overflow.
 * Kernels: launch_kernels.cu. Skipped without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static asyncrt_context *g_ctx;
static asyncrt_module *g_module;

static asyncrt_kernel *kernel(const char *name)
{
    asyncrt_kernel *k;
    assert_ok(g_ctx, asyncrt_module_get_kernel(g_module, name, &k));
    return k;
}

static asyncrt_deviceptr upload_random(float *host, size_t n)
{
    for (size_t i = 0; i < n; i++) host[i] = test_random_float(-10.f, 10.f);
    asyncrt_deviceptr d;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, n * sizeof(float), &d));
    assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, d, host, n * sizeof(float)));
    return d;
}

static asyncrt_deviceptr poisoned(size_t n)
{
    asyncrt_deviceptr d;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, n * sizeof(float), &d));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d, 0xFF, n * sizeof(float), NULL)); /* NaN */
    return d;
}

static void expect_close(const char *what, const float *got, const float *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-6f * fabsf(want[i]) + 1e-6f))
            fail_msg("%s: [%zu] = %g, expected %g", what, i, got[i], want[i]);
}

/* The limit the refusal names ("at most N can be resident"). */
static unsigned long long limit_in_message(void)
{
    const char *msg = asyncrt_context_last_error(g_ctx), *at = strstr(msg, "at most ");
    if (!at) fail_msg("no limit in '%s'", msg);
    return strtoull(at + 8, NULL, 10);
}

static void cooperative_grid_sync_at_the_limit(void **state)
{
    (void)state;
    const asyncrt_device_info *d = asyncrt_context_device(g_ctx);
    asyncrt_kernel *k = kernel("grid_sync_mix");
    int n = 1 << 20;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *want = malloc(n * sizeof *want);
    asyncrt_deviceptr d_in = upload_random(in, (size_t)n), d_tmp = poisoned((size_t)n), d_out = poisoned((size_t)n);
    void *args[] = {&d_in, &d_tmp, &d_out, &n};
    size_t sizes[] = {8, 8, 8, 4};
    /* 64 blocks of 256 threads per SM can never be resident at once */
    asyncrt_launch_config cfg = {.size = sizeof cfg,
                                 .grid = {(unsigned)d->sm_count * 64}, .block = {256},
                                 .shared_bytes = 1024, .cooperative = true};
    assert_status(g_ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, asyncrt_kernel_launch(k, &cfg, args, sizes, 4));
    printf("refused: %s\n", asyncrt_context_last_error(g_ctx));
    unsigned long long limit = limit_in_message();
    assert_true(limit >= (unsigned long long)d->sm_count && limit < cfg.grid[0]);
    /* exactly the limit: the driver accepts it and the barrier holds */
    cfg.grid[0] = (unsigned)limit;
    assert_ok(g_ctx, asyncrt_kernel_launch(k, &cfg, args, sizes, 4));
    assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, out, d_out, n * sizeof(float)));
    for (int i = 0; i < n; i++) want[i] = 2.0f * in[(i + 1) % n] + 2.0f * in[n - 1 - i];
    expect_close("grid_sync_mix", out, want, (size_t)n);
    /* one block more is refused before launching, not hung */
    cfg.grid[0] = (unsigned)limit + 1;
    assert_status(g_ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, asyncrt_kernel_launch(k, &cfg, args, sizes, 4));
    asyncrt_memory_free(g_ctx, d_in);
    asyncrt_memory_free(g_ctx, d_tmp);
    asyncrt_memory_free(g_ctx, d_out);
    free(in), free(out), free(want);
}

static void programmatic_dependent_launch(void **state)
{
    (void)state;
    const asyncrt_device_info *d = asyncrt_context_device(g_ctx);
    int n = 1 << 18;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *want = malloc(n * sizeof *want);
    asyncrt_deviceptr d_in = upload_random(in, (size_t)n), d_mid = poisoned((size_t)n), d_out = poisoned((size_t)n);
    asyncrt_stream stream;
    assert_ok(g_ctx, asyncrt_stream_create(g_ctx, &stream));
    void *pargs[] = {&d_in, &d_mid, &n}, *cargs[] = {&d_mid, &d_out, &n};
    asyncrt_launch_config first = {.size = sizeof first,
                                   .grid = {(unsigned)(n + 255) / 256}, .block = {256}, .stream = stream};
    asyncrt_launch_config second = first;
    second.programmatic_serialization = true;
    assert_ok(g_ctx, asyncrt_kernel_launch(kernel("pdl_producer"), &first, pargs, NULL, 3));
    asyncrt_status s = asyncrt_kernel_launch(kernel("pdl_consumer"), &second, cargs, NULL, 3);
    if (d->cc_major < 9) {
        assert_int_equal(s, ASYNCRT_ERROR_UNSUPPORTED);
    } else {
        assert_ok(g_ctx, s);
        assert_ok(g_ctx, asyncrt_stream_synchronize(g_ctx, stream));
        assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, out, d_out, n * sizeof(float)));
        for (int i = 0; i < n; i++) want[i] = 3.0f * in[i] + 1.0f;
        expect_close("pdl_consumer", out, want, (size_t)n);
    }
    assert_ok(g_ctx, asyncrt_stream_destroy(g_ctx, stream));
    asyncrt_memory_free(g_ctx, d_in);
    asyncrt_memory_free(g_ctx, d_mid);
    asyncrt_memory_free(g_ctx, d_out);
    free(in), free(out), free(want);
}

/* The launch's message: the cleanup calls after it clear the last error. */
static char g_launch_error[2048];

/* Launches cluster_rank; on success checks each block's rank and cluster size. */
static asyncrt_status run_clusters(const asyncrt_launch_config *cfg)
{
    unsigned count = cfg->grid[0], per = cfg->cluster[0];
    unsigned *host = malloc(count * sizeof *host);
    asyncrt_deviceptr d_out;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, count * sizeof(unsigned), &d_out));
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d_out, 0xFF, count * sizeof(unsigned), NULL));
    void *args[] = {&d_out};
    asyncrt_status s = asyncrt_kernel_launch(kernel("cluster_rank"), cfg, args, NULL, 1);
    snprintf(g_launch_error, sizeof g_launch_error, "%s", asyncrt_context_last_error(g_ctx));
    if (s == ASYNCRT_SUCCESS) {
        assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
        assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, host, d_out, count * sizeof(unsigned)));
        for (unsigned i = 0; i < count; i++) assert_int_equal(host[i], i % per + 100 * per);
    }
    asyncrt_memory_free(g_ctx, d_out);
    free(host);
    return s;
}

static void cluster_preflight_refuses_what_cannot_be_resident(void **state)
{
    (void)state;
    const asyncrt_device_info *d = asyncrt_context_device(g_ctx);
    if (!d->features.clusters) skip();
    asyncrt_launch_config cfg = {.size = sizeof cfg,
                                 .grid = {64}, .block = {128}, .cluster = {4}, .shared_bytes = 1024};
    assert_ok(g_ctx, run_clusters(&cfg));
    /* 32 blocks per cluster: above every device's maximum (16 on the H100) */
    cfg.cluster[0] = 32;
    assert_status(g_ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, run_clusters(&cfg));
    printf("cluster of 32 refused: %s\n", g_launch_error);
    assert_non_null(strstr(g_launch_error, "cluster 32x1x1"));
    /* 16 blocks of 1024 threads each filling an SM's shared memory need a
     * GPC with 16 free SMs: either refused by name, or run and correct. */
    cfg.cluster[0] = 16, cfg.grid[0] = 32, cfg.block[0] = 1024;
    cfg.shared_bytes = (size_t)d->shared_memory_per_block_optin;
    asyncrt_status s = run_clusters(&cfg);
    printf("cluster 16 x 1024 threads x %zu bytes: %s %s\n", cfg.shared_bytes, asyncrt_status_string(s),
           s ? g_launch_error : "(ran, checked)");
    if (s != ASYNCRT_SUCCESS) {
        assert_int_equal(s, ASYNCRT_ERROR_RESOURCE_LIMIT);
        assert_non_null(strstr(g_launch_error, "cluster 16x1x1"));
    }
}

static void stream_priorities(void **state)
{
    (void)state;
    int least = 1, greatest = 1;
    assert_ok(g_ctx, asyncrt_stream_priority_range(g_ctx, &least, &greatest));
    printf("stream priorities: least %d, greatest %d\n", least, greatest);
    assert_true(greatest <= least);
    asyncrt_stream urgent = NULL;
    assert_status(g_ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                  asyncrt_stream_create_with_priority(g_ctx, greatest - 1, &urgent));
    assert_null(urgent);
    assert_status(g_ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                  asyncrt_stream_create_with_priority(g_ctx, least + 1, &urgent));
    assert_ok(g_ctx, asyncrt_stream_create_with_priority(g_ctx, greatest, &urgent));
    assert_non_null(urgent);
    int n = 4096;
    float *host = malloc(n * sizeof *host), *back = malloc(n * sizeof *back);
    asyncrt_deviceptr x = upload_random(host, (size_t)n);
    void *args[] = {&x, &n};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {(unsigned)n / 256}, .block = {256}, .stream = urgent};
    assert_ok(g_ctx, asyncrt_kernel_launch(kernel("add_one"), &cfg, args, NULL, 2));
    assert_ok(g_ctx, asyncrt_stream_synchronize(g_ctx, urgent));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, back, x, n * sizeof(float)));
    for (int i = 0; i < n; i++) host[i] += 1.0f;
    expect_close("add_one on a priority stream", back, host, (size_t)n);
    assert_ok(g_ctx, asyncrt_stream_destroy(g_ctx, urgent));
    asyncrt_memory_free(g_ctx, x);
    free(host), free(back);
}

/* 2^22 cubed wraps a 64-bit product to 4 threads if multiplied naively. */
static void block_size_overflow_is_refused(void **state)
{
    (void)state;
    asyncrt_deviceptr x = 0;
    int n = 0;
    void *args[] = {&x, &n};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {1}, .block = {1u << 22, 1u << 22, 1u << 22}};
    assert_status(g_ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, asyncrt_kernel_launch(kernel("add_one"), &cfg, args, NULL, 2));
    assert_non_null(strstr(asyncrt_context_last_error(g_ctx), "more than 2^64"));
}

/* arch auto on an sm_90 device: a kernel with wgmma (sm_90a only) is
 * retried for sm_90a, loads and runs. Elsewhere: skipped. */
static void auto_arch_retries_arch_specific_kernels(void **state)
{
    (void)state;
    const asyncrt_device_info *d = asyncrt_context_device(g_ctx);
    if (d->cc_major != 9 || d->cc_minor != 0) skip();
    const char *src = "extern \"C\" __global__ void fenced(float *out) {\n"
                      "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
                      "    out[threadIdx.x] = 2.0f * threadIdx.x;\n"
                      "}\n";
    asyncrt_program *p = NULL;
    assert_ok(g_ctx, asyncrt_program_compile(g_ctx, "fenced.cu", src, NULL, &p));
    assert_string_equal(asyncrt_program_arch(p), "sm_90a");
    asyncrt_module *m;
    assert_ok(g_ctx, asyncrt_module_load(g_ctx, p, &m));
    asyncrt_program_destroy(p);
    asyncrt_kernel *k;
    assert_ok(g_ctx, asyncrt_module_get_kernel(m, "fenced", &k));
    asyncrt_deviceptr d_out = poisoned(128);
    void *args[] = {&d_out};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {1}, .block = {128}};
    assert_ok(g_ctx, asyncrt_kernel_launch(k, &cfg, args, NULL, 1));
    assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
    float out[128], want[128];
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, out, d_out, sizeof out));
    for (int i = 0; i < 128; i++) want[i] = 2.0f * (float)i;
    expect_close("fenced", out, want, 128);
    asyncrt_memory_free(g_ctx, d_out);
    asyncrt_module_destroy(m);
}

int main(void)
{
    g_ctx = test_open_device_or_skip("test_launch_gpu");
    if (!g_ctx) return ASYNCRT_TEST_SKIP;
    test_seed_random("test_launch_gpu");
    char *src = test_read_source_file("tests/runtime/launch_kernels.cu");
    if (!src || asyncrt_module_build(g_ctx, "launch_kernels.cu", src, NULL, &g_module) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "build failed: %s\n", asyncrt_context_last_error(g_ctx));
        return 1;
    }
    free(src);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cooperative_grid_sync_at_the_limit),
        cmocka_unit_test(programmatic_dependent_launch),
        cmocka_unit_test(cluster_preflight_refuses_what_cannot_be_resident),
        cmocka_unit_test(stream_priorities),
        cmocka_unit_test(block_size_overflow_is_refused),
        cmocka_unit_test(auto_arch_retries_arch_specific_kernels),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_module_destroy(g_module);
    asyncrt_context_destroy(g_ctx);
    return failed;
}
