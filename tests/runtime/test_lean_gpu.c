/* The lean <cuda/barrier> CUBIN runs and computes what NVRTC's own CUBIN
 * computes: both against a CPU reference, fresh random input, poisoned output. */
#include <math.h>
#include <stdlib.h>

#include "lean.h"
#include "test_support.h"

static asyncrt_context *g_ctx;

static void run_one(bool lean_off)
{
    asyncrt_context *ctx = g_ctx;
    asyncrt_compile_options o = {.arch = "auto"};
    setenv("ASYNCRT_LEAN", lean_off ? "0" : "1", 1);
    if (lean_off) {
        o.options = &asyncrt__lean_off_option;
        o.option_count = 1;
    }
    asyncrt_module *m;
    asyncrt_kernel *k;
    assert_ok(ctx, asyncrt_module_build(ctx, "barrier.cu", asyncrt__lean_barrier_example, &o, &m));
    assert_ok(ctx, asyncrt_module_get_kernel(m, "barrier_scale", &k));
    int n = 1000003; /* not a multiple of the block */
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (int i = 0; i < n; i++) x[i] = test_random_float(-100.0f, 100.0f);
    asyncrt_deviceptr dx, dy;
    assert_ok(ctx, asyncrt_memory_alloc(ctx, n * sizeof(float), &dx));
    assert_ok(ctx, asyncrt_memory_alloc(ctx, n * sizeof(float), &dy));
    assert_ok(ctx, asyncrt_memory_to_device(ctx, dx, x, n * sizeof(float)));
    assert_ok(ctx, asyncrt_memory_fill(ctx, dy, 0xff, n * sizeof(float), NULL));
    void *args[] = {&dx, &dy, &n};
    size_t sizes[] = {sizeof dx, sizeof dy, sizeof n};
    asyncrt_launch_config cfg = {.grid = {(unsigned)(n + 255) / 256}, .block = {256}};
    assert_ok(ctx, asyncrt_kernel_launch(k, &cfg, args, sizes, 3));
    assert_ok(ctx, asyncrt_synchronize(ctx));
    assert_ok(ctx, asyncrt_memory_to_host(ctx, y, dy, n * sizeof(float)));
    for (int i = 0; i < n; i++)
        if (!(y[i] == 2.0f * x[i] + 1.0f)) fail_msg("%s image: y[%d] = %g, want %g", lean_off ? "NVRTC" : "lean", i, y[i], 2.0f * x[i] + 1.0f);
    asyncrt_memory_free(ctx, dx);
    asyncrt_memory_free(ctx, dy);
    free(x);
    free(y);
    asyncrt_module_destroy(m);
}

static void lean_image_runs(void **state) { (void)state; run_one(false); }
static void nvrtc_image_runs(void **state) { (void)state; run_one(true); }

int main(void)
{
    if (!(g_ctx = test_open_device_or_skip("test_lean_gpu"))) return ASYNCRT_TEST_SKIP;
    test_seed_random("test_lean_gpu");
    const struct CMUnitTest tests[] = {cmocka_unit_test(lean_image_runs), cmocka_unit_test(nvrtc_image_runs)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_context_destroy(g_ctx);
    return rc;
}
