/* On a real device: the asynchronous open with a speculative "auto" compile,
 * and a batch that compiles and loads from several threads (and worker
 * processes); every kernel run on fresh random data against a CPU reference,
 * the output poisoned first. Skipped without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#define N (1 << 16)

/* out[i] = in[i] * factor + index: distinct per kernel. */
static char *kernel_source(int index)
{
    char *s = malloc(512);
    snprintf(s, 512,
             "#include <cooperative_groups.h>\n"
             "extern \"C\" __global__ void gpu_k%d(const float *in, float *out, int n) {\n"
             "    int i = cooperative_groups::this_grid().thread_rank();\n"
             "    if (i < n) out[i] = in[i] * %d.0f + %d.0f;\n"
             "}\n",
             index, index + 2, index);
    return s;
}

static void run_and_check(asyncrt_context *ctx, asyncrt_module *m, int index)
{
    char name[32];
    snprintf(name, sizeof name, "gpu_k%d", index);
    asyncrt_kernel *k;
    assert_ok(ctx, asyncrt_module_get_kernel(m, name, &k));
    float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++) in[i] = test_random_float(-100.0f, 100.0f);
    asyncrt_deviceptr d_in, d_out;
    assert_ok(ctx, asyncrt_memory_alloc(ctx, N * sizeof(float), &d_in));
    assert_ok(ctx, asyncrt_memory_alloc(ctx, N * sizeof(float), &d_out));
    assert_ok(ctx, asyncrt_memory_to_device(ctx, d_in, in, N * sizeof(float)));
    assert_ok(ctx, asyncrt_memory_fill(ctx, d_out, 0xff, N * sizeof(float), NULL)); /* NaN poison */
    int n = N;
    void *args[] = {&d_in, &d_out, &n};
    size_t sizes[] = {sizeof d_in, sizeof d_out, sizeof n};
    asyncrt_launch_config cfg = {.size = sizeof cfg, .grid = {N / 256}, .block = {256}};
    assert_ok(ctx, asyncrt_kernel_launch(k, &cfg, args, sizes, 3));
    assert_ok(ctx, asyncrt_synchronize(ctx));
    assert_ok(ctx, asyncrt_memory_to_host(ctx, out, d_out, N * sizeof(float)));
    for (int i = 0; i < N; i++) {
        /* The kernel's a * x + b is contracted to one FFMA: fmaf rounds alike. */
        float want = fmaf(in[i], (float)(index + 2), (float)index);
        if (out[i] != want) fail_msg("%s: out[%d] = %g, expected %g", name, i, (double)out[i], (double)want);
    }
    asyncrt_memory_free(ctx, d_in);
    asyncrt_memory_free(ctx, d_out);
    free(in);
    free(out);
}

static void async_open_with_a_remembered_target(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-gpu-spec");
    /* A first open remembers the device's target beside the cache. */
    asyncrt_context *first;
    assert_int_equal(asyncrt_context_create(&first), ASYNCRT_SUCCESS);
    assert_ok(first, asyncrt_context_set_cache_dir(first, dir));
    asyncrt_program *probe = NULL;
    assert_ok(first, asyncrt_program_compile(first, "p.cu", "", &(asyncrt_compile_options){.size = sizeof(asyncrt_compile_options),
                                                                                           .arch = "sm_80"}, &probe));
    asyncrt_program_destroy(probe); /* the cache directory now exists */
    assert_ok(first, asyncrt_context_open_device(first, 0));
    asyncrt_context_destroy(first);

    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    assert_ok(ctx, asyncrt_context_open_device_async(ctx, 0));
    char *src = kernel_source(0);
    asyncrt_module *m = NULL;
    assert_ok(ctx, asyncrt_module_build(ctx, "spec.cu", src, NULL, &m));
    assert_ok(ctx, asyncrt_context_wait_device(ctx));
    run_and_check(ctx, m, 0);
    asyncrt_module_destroy(m);
    asyncrt_context_destroy(ctx);
    free(src);
    test_remove_tree(dir);
    free(dir);
}

static void batch_builds_and_loads_on_the_device(void **state)
{
    (void)state;
    char *dir = test_make_temp_dir("asyncrt-gpu-batch");
    asyncrt_context *ctx = test_context_with_device();
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    enum { K = 6 };
    char *src[K];
    asyncrt_build_request reqs[K + 1];
    for (int i = 0; i < K; i++) {
        src[i] = kernel_source(i + 1);
        reqs[i] = (asyncrt_build_request){.source_name = "batch.cu", .source = src[i]};
    }
    reqs[K] = reqs[2]; /* a duplicate: its own module */
    assert_ok(ctx, asyncrt_build_batch(ctx, reqs, K + 1, 3, true));
    for (int i = 0; i <= K; i++) run_and_check(ctx, reqs[i].module, i < K ? i + 1 : 3);
    for (int i = 0; i <= K; i++) asyncrt_module_destroy(reqs[i].module);
    asyncrt_build_batch_release(reqs, K + 1);
    for (int i = 0; i < K; i++) free(src[i]);
    asyncrt_context_destroy(ctx);
    test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    asyncrt_context *probe = test_open_device_or_skip("test_threads_gpu");
    if (!probe) return ASYNCRT_TEST_SKIP;
    asyncrt_context_destroy(probe);
    test_seed_random("test_threads_gpu");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(async_open_with_a_remembered_target),
        cmocka_unit_test(batch_builds_and_loads_on_the_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
