/* Injected failures of chosen driver and NVRTC calls: each gives the right
 * status and message, releases what it took, and leaves the context usable.
 * Driver calls are failed by pointing the context at a copy of the driver
 * table with one entry replaced; the library itself is not mocked. */
#include <string.h>

#include "context.h"
#include "test_support.h"

static const char *k_source = "extern \"C\" __global__ void fill(int *x) { x[threadIdx.x] = 7; }\n";

static CUresult fail_retain(CUcontext *c, CUdevice d) { (void)c, (void)d; return CUDA_ERROR_OUT_OF_MEMORY; }
static CUresult fail_load(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
    (void)m, (void)image, (void)n, (void)o, (void)v;
    return CUDA_ERROR_INVALID_IMAGE;
}
static CUresult fail_library_load(CUlibrary *l, const void *image, CUjit_option *o, void **v, unsigned n,
                                  CUlibraryOption *lo, void **lv, unsigned ln)
{
    (void)l, (void)image, (void)o, (void)v, (void)n, (void)lo, (void)lv, (void)ln;
    return CUDA_ERROR_INVALID_IMAGE;
}
static CUresult fail_launch(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
    (void)c, (void)f, (void)p, (void)e;
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
}
static CUresult fail_alloc(CUdeviceptr *p, size_t n) { (void)p, (void)n; return CUDA_ERROR_OUT_OF_MEMORY; }

/* A context whose driver is loaded, and a copy of its table to break. */
static asyncrt_context *loaded_context(asyncrt_driver *copy)
{
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    int count;
    assert_ok(ctx, asyncrt_device_count(ctx, &count));
    *copy = *ctx->drv;
    return ctx;
}

static void expect_message(asyncrt_context *ctx, const char *a, const char *b)
{
    const char *msg = asyncrt_context_last_error(ctx);
    if (!strstr(msg, a) || !strstr(msg, b)) fail_msg("message '%s' lacks '%s' or '%s'", msg, a, b);
}

/* Builds, launches and checks `fill`: the proof that a context still works. */
static void context_still_works(asyncrt_context *ctx)
{
    asyncrt_module *m;
    assert_ok(ctx, asyncrt_module_build(ctx, "fill.cu", k_source, &(asyncrt_compile_options)ASYNCRT_COMPILE_OPTIONS_INIT, &m));
    asyncrt_kernel *k;
    assert_ok(ctx, asyncrt_module_get_kernel(m, "fill", &k));
    asyncrt_deviceptr x;
    assert_ok(ctx, asyncrt_memory_alloc(ctx, 32 * sizeof(int), &x));
    assert_ok(ctx, asyncrt_memory_fill(ctx, x, 0xFF, 32 * sizeof(int), NULL));
    void *args[] = {&x};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {1}, .block = {32}};
    assert_ok(ctx, asyncrt_kernel_launch(k, &cfg, args, (size_t[]){sizeof x}, 1));
    int host[32];
    assert_ok(ctx, asyncrt_synchronize(ctx));
    assert_ok(ctx, asyncrt_memory_to_host(ctx, host, x, sizeof host));
    for (int i = 0; i < 32; i++) assert_int_equal(host[i], 7);
    assert_ok(ctx, asyncrt_memory_free(ctx, x));
    asyncrt_module_destroy(m);
}

static void context_creation_failure(void **state)
{
    (void)state;
    asyncrt_driver broken;
    asyncrt_context *ctx = loaded_context(&broken);
    const asyncrt_driver *real = ctx->drv;
    broken.cuDevicePrimaryCtxRetain = fail_retain;
    ctx->drv = &broken;
    assert_status(ctx, ASYNCRT_ERROR_DRIVER, asyncrt_context_open_device(ctx, 0));
    expect_message(ctx, "cuDevicePrimaryCtxRetain", "CUDA_ERROR_OUT_OF_MEMORY");
    assert_null(asyncrt_context_device(ctx));
    ctx->drv = real;
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0)); /* nothing half-open was left behind */
    context_still_works(ctx);
    asyncrt_context_destroy(ctx);
}

static void module_load_failure(void **state)
{
    (void)state;
    asyncrt_driver broken;
    asyncrt_context *ctx = loaded_context(&broken);
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0));
    const asyncrt_driver *real = ctx->drv;
    /* A CUBIN goes to cuLibraryLoadData where the driver has it (load/library.c), else cuModuleLoadDataEx. */
    broken.cuModuleLoadDataEx = fail_load;
    broken.cuLibraryLoadData = NULL;
    ctx->drv = &broken;
    asyncrt_module *m = (asyncrt_module *)1;
    assert_status(ctx, ASYNCRT_ERROR_MODULE_LOAD, asyncrt_module_build(ctx, "fill.cu", k_source, NULL, &m));
    assert_null(m);
    expect_message(ctx, "cuModuleLoadDataEx", "CUDA_ERROR_INVALID_IMAGE");
    if (real->cuLibraryLoadData) {
        broken.cuModuleLoadDataEx = real->cuModuleLoadDataEx;
        broken.cuLibraryLoadData = fail_library_load;
        m = (asyncrt_module *)1;
        assert_status(ctx, ASYNCRT_ERROR_MODULE_LOAD, asyncrt_module_build(ctx, "fill.cu", k_source, NULL, &m));
        assert_null(m);
        expect_message(ctx, "cuLibraryLoadData", "CUDA_ERROR_INVALID_IMAGE");
    }
    ctx->drv = real;
    context_still_works(ctx);
    asyncrt_context_destroy(ctx);
}

static void launch_failure(void **state)
{
    (void)state;
    asyncrt_driver broken;
    asyncrt_context *ctx = loaded_context(&broken);
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0));
    asyncrt_module *m;
    assert_ok(ctx, asyncrt_module_build(ctx, "fill.cu", k_source, NULL, &m));
    asyncrt_kernel *k;
    assert_ok(ctx, asyncrt_module_get_kernel(m, "fill", &k));
    const asyncrt_driver *real = ctx->drv;
    broken.cuLaunchKernelEx = fail_launch;
    ctx->drv = &broken;
    asyncrt_deviceptr x = 0;
    void *args[] = {&x};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {3, 2}, .block = {32}};
    assert_status(ctx, ASYNCRT_ERROR_LAUNCH, asyncrt_kernel_launch(k, &cfg, args, NULL, 1));
    expect_message(ctx, "cuLaunchKernelEx", "grid 3x2x1");
    ctx->drv = real;
    asyncrt_module_destroy(m);
    context_still_works(ctx);
    asyncrt_context_destroy(ctx);
}

static void allocation_failure(void **state)
{
    (void)state;
    asyncrt_driver broken;
    asyncrt_context *ctx = loaded_context(&broken);
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0));
    const asyncrt_driver *real = ctx->drv;
    broken.cuMemAlloc = fail_alloc;
    ctx->drv = &broken;
    asyncrt_deviceptr p = 1;
    assert_status(ctx, ASYNCRT_ERROR_DRIVER, asyncrt_memory_alloc(ctx, 4096, &p));
    assert_int_equal(p, 0);
    expect_message(ctx, "cuMemAlloc", "4096 bytes");
    ctx->drv = real;
    context_still_works(ctx);
    asyncrt_context_destroy(ctx);
}

static void nvrtc_failure(void **state)
{
    (void)state;
    asyncrt_driver unused;
    asyncrt_context *ctx = loaded_context(&unused);
    assert_ok(ctx, asyncrt_context_open_device(ctx, 0));
    asyncrt_context_set_cache_dir(ctx, NULL); /* a cached program would skip NVRTC */
    ctx->fault = "nvrtcCompileProgram";
    asyncrt_module *m = (asyncrt_module *)1;
    const char *fresh = "extern \"C\" __global__ void fill(int *x) { x[threadIdx.x] = 7; } // fault\n";
    assert_status(ctx, ASYNCRT_ERROR_NVRTC, asyncrt_module_build(ctx, "fill.cu", fresh, NULL, &m));
    assert_null(m);
    expect_message(ctx, "fill.cu", "NVRTC_ERROR_INTERNAL_ERROR");
    ctx->fault = NULL;
    context_still_works(ctx);
    asyncrt_context_destroy(ctx);
}

int main(void)
{
    asyncrt_context *probe = test_open_device_or_skip("test_driver_faults_gpu");
    if (!probe) return ASYNCRT_TEST_SKIP;
    asyncrt_context_destroy(probe);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(context_creation_failure),
        cmocka_unit_test(module_load_failure),
        cmocka_unit_test(launch_failure),
        cmocka_unit_test(allocation_failure),
        cmocka_unit_test(nvrtc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
