/* The checks made before a launch (runtime/load/launch_preflight.c), on a CPU: the
 * context is given a driver table of fakes whose occupancy answers the test
 * chooses, so every refusal and its message can be exercised without a GPU.
 * test_launch_gpu.c runs the same paths on a real device. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "launch_preflight.h"
#include "test_support.h"

static int g_blocks_per_sm, g_clusters, g_cooperative_attr = 1, g_static_shared = 1024;
static CUresult g_clusters_result;
static int g_nonportable_set, g_occupancy_threads;
static size_t g_occupancy_smem;

static CUresult fake_occupancy(int *n, CUfunction f, int threads, size_t smem, unsigned flags)
{
    (void)f, (void)flags;
    g_occupancy_threads = threads;
    g_occupancy_smem = smem;
    *n = g_blocks_per_sm;
    return CUDA_SUCCESS;
}
static CUresult fake_clusters(int *n, CUfunction f, const CUlaunchConfig *c)
{
    (void)f;
    assert_int_equal(c->numAttrs, 1); /* the cluster shape is what is asked about */
    assert_int_equal(c->attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    *n = g_clusters;
    return g_clusters_result;
}
static CUresult fake_device_attribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    assert_int_equal(a, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
    *v = g_cooperative_attr;
    return CUDA_SUCCESS;
}
static CUresult fake_func_get(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    assert_int_equal(a, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    *v = g_static_shared;
    return CUDA_SUCCESS;
}
static CUresult fake_func_set(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f;
    if (a == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED && v == 1) g_nonportable_set++;
    return CUDA_SUCCESS;
}
static CUresult fake_error_name(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_INVALID_CLUSTER_SIZE ? "CUDA_ERROR_INVALID_CLUSTER_SIZE" : "CUDA_ERROR_X";
    return CUDA_SUCCESS;
}
static CUresult fake_error_string(CUresult r, const char **s)
{
    (void)r;
    *s = "fake";
    return CUDA_SUCCESS;
}

static asyncrt_driver g_fake = {
    .version = 13000,
    .cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags = fake_occupancy,
    .cuOccupancyMaxActiveClusters = fake_clusters,
    .cuDeviceGetAttribute = fake_device_attribute,
    .cuFuncGetAttribute = fake_func_get,
    .cuFuncSetAttribute = fake_func_set,
    .cuGetErrorName = fake_error_name,
    .cuGetErrorString = fake_error_string,
};

/* An H100-like device behind the fake table. */
static int setup(void **state)
{
    int r = test_setup_context(state);
    asyncrt_context *ctx = *state;
    ctx->drv = &g_fake;
    ctx->info.cc_major = 9;
    ctx->info.sm_count = 132;
    ctx->info.cluster_launch = true;
    ctx->info.max_threads_per_sm = 2048;
    ctx->info.shared_memory_per_sm = 233472;
    g_blocks_per_sm = 8, g_clusters = 16, g_cooperative_attr = 1, g_clusters_result = CUDA_SUCCESS;
    g_nonportable_set = 0;
    return r;
}
static int teardown(void **state)
{
    ((asyncrt_context *)*state)->drv = NULL;
    return test_teardown_context(state);
}

static asyncrt_status prepare(asyncrt_context *ctx, const asyncrt_launch_config *c, CUlaunchConfig *cfg,
                              CUlaunchAttribute *attrs)
{
    unsigned grid[3], block[3];
    for (int i = 0; i < 3; i++) {
        grid[i] = c->grid[i] ? c->grid[i] : 1;
        block[i] = c->block[i] ? c->block[i] : 1;
    }
    return asyncrt__launch_prepare(ctx, (CUfunction)0x1, "k", c, grid, block, cfg, attrs);
}

static void expect_message(asyncrt_context *ctx, const char *const *parts)
{
    const char *msg = asyncrt_context_last_error(ctx);
    for (; *parts; parts++)
        if (!strstr(msg, *parts)) fail_msg("message '%s' lacks '%s'", msg, *parts);
}

static void plain_launch_has_no_attributes(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    asyncrt_launch_config c = {.size = sizeof c,
                               .grid = {7, 3}, .block = {128}, .shared_bytes = 4096, .stream = (void *)0x5};
    assert_ok(ctx, prepare(ctx, &c, &cfg, attrs));
    assert_int_equal(cfg.numAttrs, 0);
    assert_null(cfg.attrs);
    assert_int_equal(cfg.gridDimX, 7);
    assert_int_equal(cfg.gridDimY, 3);
    assert_int_equal(cfg.gridDimZ, 1);
    assert_int_equal(cfg.blockDimX, 128);
    assert_int_equal(cfg.sharedMemBytes, 4096);
    assert_ptr_equal(cfg.hStream, (void *)0x5);
}

static void cooperative_grid_at_the_limit_passes_and_above_is_refused(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    g_blocks_per_sm = 3;
    asyncrt_launch_config c = {.size = sizeof c,
                               .grid = {132, 3}, .block = {32, 8}, .shared_bytes = 50000, .cooperative = true};
    assert_ok(ctx, prepare(ctx, &c, &cfg, attrs));
    assert_int_equal(g_occupancy_threads, 256); /* the block's x*y, not x */
    assert_int_equal(g_occupancy_smem, 50000);
    assert_int_equal(cfg.numAttrs, 1);
    assert_int_equal(attrs[0].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    assert_int_equal(attrs[0].value.cooperative, 1);

    c.grid[0] = 133; /* 399 blocks > 3 x 132 */
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"cooperative launch of 'k'", "grid 133x3x1 = 399 blocks",
                                         "at most 396", "3 blocks per SM of 256 threads",
                                         "50000 bytes of dynamic shared memory (+ 1024 static)",
                                         "x 132 SMs", NULL});

    g_blocks_per_sm = 0; /* a block that cannot be resident at all */
    c.grid[0] = 1, c.grid[1] = 1;
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"at most 0", NULL});
}

static void cooperative_needs_the_device_attribute(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    g_cooperative_attr = 0;
    asyncrt_launch_config c = {.size = sizeof c, .grid = {1}, .block = {32}, .cooperative = true};
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH", NULL});
}

static void cooperative_grid_product_cannot_overflow(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    g_blocks_per_sm = INT_MAX;
    /* 2^32-1 cubed wraps 64 bits to a small number if multiplied naively */
    asyncrt_launch_config c = {.size = sizeof c,
                               .grid = {UINT_MAX, UINT_MAX, UINT_MAX}, .block = {32}, .cooperative = true};
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, prepare(ctx, &c, &cfg, attrs));
    assert_true(asyncrt__product3(UINT_MAX, UINT_MAX, UINT_MAX) == ~0ull);
    assert_true(asyncrt__product3(1u << 22, 1u << 22, 1u << 22) == ~0ull);
    assert_true(asyncrt__product3(1024, 1024, 64) == 1024ull * 1024 * 64);
}

static void programmatic_serialization_needs_sm90(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    asyncrt_launch_config c = {.size = sizeof c, .grid = {4}, .block = {64}, .programmatic_serialization = true};
    assert_ok(ctx, prepare(ctx, &c, &cfg, attrs));
    assert_int_equal(cfg.numAttrs, 1);
    assert_int_equal(attrs[0].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    assert_int_equal(attrs[0].value.programmaticStreamSerializationAllowed, 1);
    ctx->info.cc_major = 8, ctx->info.cc_minor = 6;
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"programmatic dependent launch", "sm_90+", "8.6", NULL});
}

static void cluster_preflight(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    asyncrt_launch_config c = {.size = sizeof c,
                               .grid = {16, 2}, .block = {1024}, .cluster = {4}, .shared_bytes = 200000};
    assert_ok(ctx, prepare(ctx, &c, &cfg, attrs));
    assert_int_equal(cfg.numAttrs, 1);
    assert_int_equal(attrs[0].value.clusterDim.x, 4);
    assert_int_equal(attrs[0].value.clusterDim.y, 1); /* 0 in y, z means 1 */
    assert_int_equal(g_nonportable_set, 0);           /* 4 blocks are portable */

    g_clusters = 0; /* the shape cannot be resident */
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"cluster 4x1x1 = 4 blocks of 1024 threads",
                                         "200000 bytes of dynamic shared memory (+ 1024 static)",
                                         "cuOccupancyMaxActiveClusters = 0", NULL});

    c.cluster[0] = 16, c.grid[0] = 32; /* non-portable: the opt-in is set for the kernel */
    g_clusters = 2;
    assert_ok(ctx, prepare(ctx, &c, &cfg, attrs));
    assert_int_equal(g_nonportable_set, 1);

    g_clusters_result = CUDA_ERROR_INVALID_CLUSTER_SIZE; /* e.g. 32 blocks */
    c.cluster[0] = 32;
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"CUDA_ERROR_INVALID_CLUSTER_SIZE", "cluster 32x1x1", NULL});
}

static void cluster_rules(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    asyncrt_launch_config c = {.size = sizeof c, .grid = {10}, .block = {128}, .cluster = {4}};
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"grid 10x1x1 is not a multiple of cluster 4x1x1", NULL});
    ctx->info.cluster_launch = false;
    c.grid[0] = 8;
    assert_status(ctx, ASYNCRT_ERROR_UNSUPPORTED, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH", NULL});
}

/* Cooperative clusters: the limit is resident clusters x cluster size. */
static void cooperative_with_clusters_uses_the_cluster_limit(void **state)
{
    asyncrt_context *ctx = *state;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    g_clusters = 5;
    asyncrt_launch_config c = {.size = sizeof c,
                               .grid = {20}, .block = {256}, .cluster = {4}, .cooperative = true,
                               .programmatic_serialization = true};
    assert_ok(ctx, prepare(ctx, &c, &cfg, attrs));
    assert_int_equal(cfg.numAttrs, 3);
    c.grid[0] = 24;
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, prepare(ctx, &c, &cfg, attrs));
    expect_message(ctx, (const char *[]){"24 blocks", "at most 20", "5 clusters of 4 blocks", NULL});
}

/* ---- the whole launch path on fakes: module.c's checks, then the call ---- */

static CUlaunchConfig g_launched;
static CUlaunchAttribute g_launched_attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
static int g_launch_calls, g_priority_created = 99;

static CUresult fake_set_current(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static CUresult fake_load(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
    (void)image, (void)n, (void)o, (void)v;
    *m = (CUmodule)0x10;
    return CUDA_SUCCESS;
}
static CUresult fake_unload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
static CUresult fake_get_function(CUfunction *f, CUmodule m, const char *name)
{
    (void)m, (void)name;
    *f = (CUfunction)0x20;
    return CUDA_SUCCESS;
}
static CUresult fake_launch(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
    (void)f, (void)p, (void)e;
    g_launch_calls++;
    g_launched = *c;
    for (unsigned i = 0; i < c->numAttrs && i < ASYNCRT_LAUNCH_MAX_ATTRS; i++) g_launched_attrs[i] = c->attrs[i];
    return CUDA_SUCCESS;
}
static CUresult fake_priority_range(int *least, int *greatest)
{
    *least = 0, *greatest = -5;
    return CUDA_SUCCESS;
}
static CUresult fake_stream_with_priority(CUstream *s, unsigned flags, int priority)
{
    assert_int_equal(flags, CU_STREAM_NON_BLOCKING);
    g_priority_created = priority;
    *s = (CUstream)0x30;
    return CUDA_SUCCESS;
}

/* A context with an "open" H100 whose driver is all fakes. */
static int setup_device(void **state)
{
    int r = setup(state);
    asyncrt_context *ctx = *state;
    g_fake.cuCtxSetCurrent = fake_set_current;
    g_fake.cuModuleLoadDataEx = fake_load;
    g_fake.cuModuleUnload = fake_unload;
    g_fake.cuModuleGetFunction = fake_get_function;
    g_fake.cuLaunchKernelEx = fake_launch;
    g_fake.cuCtxGetStreamPriorityRange = fake_priority_range;
    g_fake.cuStreamCreateWithPriority = fake_stream_with_priority;
    ctx->device_open = true;
    ctx->info.max_threads_per_block = 1024;
    ctx->info.shared_memory_per_block_optin = 232448;
    g_launch_calls = 0;
    return r;
}
static int teardown_device(void **state)
{
    ((asyncrt_context *)*state)->device_open = false; /* nothing to release */
    return teardown(state);
}

static asyncrt_kernel *fake_kernel(asyncrt_context *ctx, asyncrt_module **m)
{
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "k.cu", "extern \"C\" __global__ void k(int *x) { *x = 1; }\n", &o, &p));
    assert_ok(ctx, asyncrt_module_load(ctx, p, m));
    asyncrt_program_destroy(p);
    asyncrt_kernel *k;
    assert_ok(ctx, asyncrt_module_get_kernel(*m, "k", &k));
    return k;
}

/* x*y*z of 2^22 each wraps a 64-bit product to 4: refused, nothing launched. */
static void block_product_overflow_is_refused_before_launching(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_module *m;
    asyncrt_kernel *k = fake_kernel(ctx, &m);
    void *x = NULL, *args[] = {&x};
    asyncrt_launch_config c = {.size = sizeof c, .grid = {1}, .block = {1u << 22, 1u << 22, 1u << 22}};
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, asyncrt_kernel_launch(k, &c, args, NULL, 1));
    expect_message(ctx, (const char *[]){"block 4194304x4194304x4194304 = more than 2^64 threads", NULL});
    c.block[0] = 1025, c.block[1] = c.block[2] = 0;
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, asyncrt_kernel_launch(k, &c, args, NULL, 1));
    expect_message(ctx, (const char *[]){"= 1025 threads, above the device's 1024", NULL});
    assert_int_equal(g_launch_calls, 0);
    asyncrt_module_destroy(m);
}

/* The attributes reach cuLaunchKernelEx; a refused cooperative grid does not. */
static void attributes_reach_the_driver(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_module *m;
    asyncrt_kernel *k = fake_kernel(ctx, &m);
    void *x = NULL, *args[] = {&x};
    asyncrt_launch_config c = {.size = sizeof c,
                               .grid = {8}, .block = {128}, .cluster = {2}, .cooperative = true,
                               .programmatic_serialization = true, .stream = (void *)0x77};
    assert_ok(ctx, asyncrt_kernel_launch(k, &c, args, NULL, 1));
    assert_int_equal(g_launch_calls, 1);
    assert_int_equal(g_launched.numAttrs, 3);
    assert_int_equal(g_launched_attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    assert_int_equal(g_launched_attrs[1].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    assert_int_equal(g_launched_attrs[2].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    assert_ptr_equal(g_launched.hStream, (void *)0x77);
    g_clusters = 1; /* 2 blocks resident, 8 asked for */
    assert_status(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, asyncrt_kernel_launch(k, &c, args, NULL, 1));
    assert_int_equal(g_launch_calls, 1);
    asyncrt_module_destroy(m);
}

static void stream_priority_is_checked_against_the_range(void **state)
{
    asyncrt_context *ctx = *state;
    int least = 1, greatest = 1;
    assert_ok(ctx, asyncrt_stream_priority_range(ctx, &least, &greatest));
    assert_int_equal(least, 0);
    assert_int_equal(greatest, -5);
    asyncrt_stream s = (void *)1;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_stream_create_with_priority(ctx, -6, &s));
    assert_null(s);
    expect_message(ctx, (const char *[]){"stream priority -6 is outside", "[-5 (most urgent), 0 (default)]", NULL});
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_stream_create_with_priority(ctx, 1, &s));
    assert_int_equal(g_priority_created, 99);
    assert_ok(ctx, asyncrt_stream_create_with_priority(ctx, -5, &s));
    assert_int_equal(g_priority_created, -5);
    assert_ptr_equal(s, (void *)0x30);
}

/* The GPU test's kernels compile here for both paths they take. */
static void gpu_kernels_compile(void **state)
{
    (void)state;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    char *src = test_read_source_file("tests/runtime/launch_kernels.cu");
    assert_non_null(src);
    const char *archs[] = {"sm_80", "sm_90"};
    for (int i = 0; i < 2; i++) {
        asyncrt_compile_options o = {.size = sizeof o, .arch = archs[i]};
        asyncrt_program *p = NULL;
        assert_ok(ctx, asyncrt_program_compile(ctx, "launch_kernels.cu", src, &o, &p));
        asyncrt_program_destroy(p);
    }
    free(src);
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(plain_launch_has_no_attributes, setup, teardown),
        cmocka_unit_test_setup_teardown(cooperative_grid_at_the_limit_passes_and_above_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(cooperative_needs_the_device_attribute, setup, teardown),
        cmocka_unit_test_setup_teardown(cooperative_grid_product_cannot_overflow, setup, teardown),
        cmocka_unit_test_setup_teardown(programmatic_serialization_needs_sm90, setup, teardown),
        cmocka_unit_test_setup_teardown(cluster_preflight, setup, teardown),
        cmocka_unit_test_setup_teardown(cluster_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(cooperative_with_clusters_uses_the_cluster_limit, setup, teardown),
        cmocka_unit_test(gpu_kernels_compile),
        cmocka_unit_test_setup_teardown(block_product_overflow_is_refused_before_launching, setup_device, teardown_device),
        cmocka_unit_test_setup_teardown(attributes_reach_the_driver, setup_device, teardown_device),
        cmocka_unit_test_setup_teardown(stream_priority_is_checked_against_the_range, setup_device, teardown_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
