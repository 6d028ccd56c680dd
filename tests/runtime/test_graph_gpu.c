/* CUDA graphs on a device (issue 36 part 2): a sequence (a PDL pair, then an
 * in-place kernel) captured once and replayed on fresh random data with the
 * output poisoned, checked against a CPU reference each time; a cold compile
 * inside a capture refused with ASYNCRT_ERROR_CAPTURE and the capture still
 * valid (it ends, instantiates and replays correctly); a lazily loaded kernel
 * refused; a cooperative launch from a priority stream and a built-in op
 * captured. Kernels: launch_kernels.cu. Skipped without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_support.h"

static asyncrt_context *g_ctx;
static asyncrt_module *g_module;
static char *g_source;

#define N (1 << 16)

static asyncrt_kernel *kernel(asyncrt_module *m, const char *name)
{
    asyncrt_kernel *k;
    assert_ok(g_ctx, asyncrt_module_get_kernel(m, name, &k));
    return k;
}

static void fill_random(float *host, asyncrt_deviceptr d, size_t n)
{
    for (size_t i = 0; i < n; i++) host[i] = test_random_float(-10.f, 10.f);
    assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, d, host, n * sizeof(float)));
}

static void poison(asyncrt_deviceptr d, size_t n)
{
    assert_ok(g_ctx, asyncrt_memory_fill(g_ctx, d, 0xFF, n * sizeof(float), NULL)); /* NaN */
    assert_ok(g_ctx, asyncrt_synchronize(g_ctx));
}

static void expect_close(const char *what, const float *got, const float *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-5f))
            fail_msg("%s: [%zu] = %g, expected %g", what, i, got[i], want[i]);
}

typedef struct pdl_sequence {
    asyncrt_deviceptr in, mid, out;
    int n;
    void *producer_args[3], *consumer_args[3], *add_args[2];
} pdl_sequence;

/* pdl_producer (mid = 3 in), pdl_consumer with PDL where the device has it
 * (out = mid + 1), add_one (out += 1): out = 3 in + 2. */
static asyncrt_status launch_sequence(pdl_sequence *q, asyncrt_stream stream)
{
    bool pdl = asyncrt_context_device(g_ctx)->cc_major >= 9;
    asyncrt_launch_config c = ASYNCRT_LAUNCH_CONFIG_INIT;
    c.grid[0] = (unsigned)(q->n + 255) / 256, c.block[0] = 256, c.stream = stream;
    asyncrt_status s = asyncrt_kernel_launch(kernel(g_module, "pdl_producer"), &c, q->producer_args, NULL, 3);
    c.programmatic_serialization = pdl;
    if (s == ASYNCRT_SUCCESS) s = asyncrt_kernel_launch(kernel(g_module, "pdl_consumer"), &c, q->consumer_args, NULL, 3);
    c.programmatic_serialization = false;
    if (s == ASYNCRT_SUCCESS) s = asyncrt_kernel_launch(kernel(g_module, "add_one"), &c, q->add_args, NULL, 2);
    return s;
}

static void sequence_init(pdl_sequence *q)
{
    q->n = N;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, N * sizeof(float), &q->in));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, N * sizeof(float), &q->mid));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, N * sizeof(float), &q->out));
    q->producer_args[0] = &q->in, q->producer_args[1] = &q->mid, q->producer_args[2] = &q->n;
    q->consumer_args[0] = &q->mid, q->consumer_args[1] = &q->out, q->consumer_args[2] = &q->n;
    q->add_args[0] = &q->out, q->add_args[1] = &q->n;
}

static void sequence_free(pdl_sequence *q)
{
    asyncrt_memory_free(g_ctx, q->in);
    asyncrt_memory_free(g_ctx, q->mid);
    asyncrt_memory_free(g_ctx, q->out);
}

/* Replays `graph` on fresh random input with out poisoned, checks 3 in + 2. */
static void replay_and_check(asyncrt_graph *graph, asyncrt_stream stream, pdl_sequence *q, const char *what)
{
    float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out), *want = malloc(N * sizeof *want);
    assert_non_null(in && out && want);
    fill_random(in, q->in, N);
    poison(q->mid, N);
    poison(q->out, N);
    assert_ok(g_ctx, asyncrt_graph_launch(graph, stream));
    assert_ok(g_ctx, asyncrt_stream_synchronize(g_ctx, stream));
    assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, out, q->out, N * sizeof(float)));
    for (size_t i = 0; i < N; i++) want[i] = 3.0f * in[i] + 2.0f;
    expect_close(what, out, want, N);
    free(in), free(out), free(want);
}

static void capture_replay_and_results(void **state)
{
    (void)state;
    pdl_sequence q;
    sequence_init(&q);
    asyncrt_stream stream;
    assert_ok(g_ctx, asyncrt_stream_create(g_ctx, &stream));
    assert_ok(g_ctx, asyncrt_stream_capture_begin(g_ctx, stream));
    assert_ok(g_ctx, launch_sequence(&q, stream)); /* captured: nothing runs yet */
    asyncrt_graph *graph = NULL;
    assert_ok(g_ctx, asyncrt_stream_capture_end(g_ctx, stream, &graph));
    for (int i = 0; i < 5; i++) replay_and_check(graph, stream, &q, "graph replay");
    asyncrt_graph_destroy(graph);
    asyncrt_stream_destroy(g_ctx, stream);
    sequence_free(&q);
}

static void cold_compile_during_capture_is_refused_and_the_capture_survives(void **state)
{
    (void)state;
    pdl_sequence q;
    sequence_init(&q);
    asyncrt_stream stream;
    assert_ok(g_ctx, asyncrt_stream_create(g_ctx, &stream));
    char cold[256]; /* a source no cache has seen */
    snprintf(cold, sizeof cold, "// %ld %u\nextern \"C\" __global__ void cold(float *x) { x[0] = 1.f; }\n",
             (long)time(NULL), test_random_u32());
    assert_ok(g_ctx, asyncrt_stream_capture_begin(g_ctx, stream));
    assert_ok(g_ctx, launch_sequence(&q, stream));
    asyncrt_module *m = NULL;
    assert_status(g_ctx, ASYNCRT_ERROR_CAPTURE, asyncrt_module_build(g_ctx, "cold.cu", cold, NULL, &m));
    printf("refused: %s\n", asyncrt_context_last_error(g_ctx));
    assert_non_null(strstr(asyncrt_context_last_error(g_ctx), "cold.cu"));
    assert_null(m);
    bool capturing = false;
    assert_ok(g_ctx, asyncrt_stream_capturing(g_ctx, stream, &capturing));
    assert_true(capturing); /* not invalidated */
    asyncrt_graph *graph = NULL;
    assert_ok(g_ctx, asyncrt_stream_capture_end(g_ctx, stream, &graph));
    replay_and_check(graph, stream, &q, "replay of the capture a compile was refused in");
    asyncrt_graph_destroy(graph);
    /* after the capture the same build goes through */
    assert_ok(g_ctx, asyncrt_module_build(g_ctx, "cold.cu", cold, NULL, &m));
    asyncrt_module_destroy(m);
    asyncrt_stream_destroy(g_ctx, stream);
    sequence_free(&q);
}

/* One launch of `lazy` from `m` inside a capture: refused before the driver
 * would load it (the capture still valid), or, where the function was loaded
 * with its image (a CUBIN through cuLibraryLoadData), captured; returns
 * whether it was refused. Either way the capture ends valid. */
static bool launch_in_capture(asyncrt_module *m, asyncrt_stream stream, asyncrt_deviceptr x)
{
    asyncrt_kernel *k = kernel(m, "lazy");
    void *args[] = {&x};
    asyncrt_launch_config c = ASYNCRT_LAUNCH_CONFIG_INIT;
    c.grid[0] = c.block[0] = 1, c.stream = stream;
    assert_ok(g_ctx, asyncrt_stream_capture_begin(g_ctx, stream));
    asyncrt_status s = asyncrt_kernel_launch(k, &c, args, NULL, 1);
    asyncrt_graph *graph = NULL;
    assert_ok(g_ctx, asyncrt_stream_capture_end(g_ctx, stream, &graph)); /* still valid */
    asyncrt_graph_destroy(graph);
    if (s == ASYNCRT_SUCCESS) return false;
    assert_int_equal(s, ASYNCRT_ERROR_CAPTURE);
    assert_non_null(strstr(asyncrt_context_last_error(g_ctx), "launch of 'lazy' refused"));
    return true;
}

static void a_launch_in_a_capture_keeps_it_valid(void **state)
{
    (void)state;
    const char *mode = getenv("CUDA_MODULE_LOADING");
    if (mode && strcmp(mode, "LAZY")) skip(); /* eager: every kernel is loaded with its module */
    const asyncrt_device_info *d = asyncrt_context_device(g_ctx);
    char src[256], ptx_arch[16];
    snprintf(src, sizeof src, "// lazy %u\nextern \"C\" __global__ void lazy(float *x) { x[0] = 2.f; }\n",
             test_random_u32());
    snprintf(ptx_arch, sizeof ptx_arch, "compute_%d%d", d->cc_major, d->cc_minor);
    asyncrt_deviceptr x;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, 4, &x));
    asyncrt_stream stream;
    assert_ok(g_ctx, asyncrt_stream_create(g_ctx, &stream));
    /* PTX loads per context with cuModuleLoadDataEx, a CUBIN through cuLibraryLoadData: on the H100
     * (driver 580) fetching the kernel loads its function, so the launch is captured; a function not
     * loaded is refused (the fake driver's lazy functions: test_capture). Either way the capture holds. */
    for (int ptx = 0; ptx < 2; ptx++) {
        asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
        if (ptx) {
            asyncrt_program *probe = NULL; /* PTX from an NVRTC newer than the driver is refused at load */
            o.arch = ptx_arch;
            asyncrt_status ls = asyncrt_program_compile(g_ctx, "lazy.cu", src, &o, &probe);
            asyncrt_module *pm = NULL;
            if (ls == ASYNCRT_SUCCESS) ls = asyncrt_module_load(g_ctx, probe, &pm);
            asyncrt_program_destroy(probe);
            if (ls == ASYNCRT_ERROR_VERSION_MISMATCH) {
                print_message("PTX case skipped: %s\n", asyncrt_context_last_error(g_ctx));
                break;
            }
            assert_ok(g_ctx, ls);
            asyncrt_module_destroy(pm);
        }
        asyncrt_module *m = NULL;
        assert_ok(g_ctx, asyncrt_module_build(g_ctx, "lazy.cu", src, &o, &m));
        bool refused = launch_in_capture(m, stream, x);
        if (!refused) /* cuModuleGetFunction / cuKernelGetFunction loaded it: the capture took the launch */
            print_message("%s: the function was loaded when the kernel was fetched: captured\n", ptx ? "PTX" : "CUBIN");
        /* made resident, the same launch is captured and replayed */
        assert_ok(g_ctx, asyncrt_module_make_resident(m));
        assert_false(launch_in_capture(m, stream, x));
        asyncrt_kernel *k = kernel(m, "lazy");
        void *args[] = {&x};
        asyncrt_launch_config c = ASYNCRT_LAUNCH_CONFIG_INIT;
        c.grid[0] = c.block[0] = 1, c.stream = stream;
        asyncrt_graph *graph = NULL;
        float got = 0;
        assert_ok(g_ctx, asyncrt_memory_to_device(g_ctx, x, &got, 4));
        assert_ok(g_ctx, asyncrt_stream_capture_begin(g_ctx, stream));
        assert_ok(g_ctx, asyncrt_kernel_launch(k, &c, args, NULL, 1));
        assert_ok(g_ctx, asyncrt_stream_capture_end(g_ctx, stream, &graph));
        assert_ok(g_ctx, asyncrt_graph_launch(graph, stream));
        assert_ok(g_ctx, asyncrt_stream_synchronize(g_ctx, stream));
        assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, &got, x, 4));
        assert_true(got == 2.f);
        asyncrt_graph_destroy(graph);
        asyncrt_module_destroy(m);
    }
    asyncrt_stream_destroy(g_ctx, stream);
    asyncrt_memory_free(g_ctx, x);
}

/* A cooperative grid-sync kernel from a priority stream, and a built-in op's
 * launch, captured into one graph. */
static void cooperative_priority_and_an_op_in_a_graph(void **state)
{
    (void)state;
    int least, greatest;
    assert_ok(g_ctx, asyncrt_stream_priority_range(g_ctx, &least, &greatest));
    asyncrt_stream stream;
    assert_ok(g_ctx, asyncrt_stream_create_with_priority(g_ctx, greatest, &stream));
    const asyncrt_map_arg x = {"x", ASYNCRT_F32}, y = {"y", ASYNCRT_F32};
    asyncrt_map_desc d = ASYNCRT_MAP_DESC_INIT;
    d.inputs = &x, d.input_count = 1, d.outputs = &y, d.output_count = 1, d.expression = "y = 2.0f * x - 1.0f;";
    asyncrt_map *map = NULL;
    assert_ok(g_ctx, asyncrt_map_create(g_ctx, &d, &map)); /* made resident when created */
    int n = N;
    float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out), *want = malloc(N * sizeof *want);
    asyncrt_deviceptr d_in, d_tmp, d_out, d_mapped;
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, N * sizeof(float), &d_in));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, N * sizeof(float), &d_tmp));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, N * sizeof(float), &d_out));
    assert_ok(g_ctx, asyncrt_memory_alloc(g_ctx, N * sizeof(float), &d_mapped));
    void *args[] = {&d_in, &d_tmp, &d_out, &n};
    asyncrt_launch_config c = ASYNCRT_LAUNCH_CONFIG_INIT;
    c.grid[0] = (unsigned)asyncrt_context_device(g_ctx)->sm_count, c.block[0] = 256, c.stream = stream;
    c.cooperative = true;
    assert_ok(g_ctx, asyncrt_stream_capture_begin(g_ctx, stream));
    assert_ok(g_ctx, asyncrt_kernel_launch(kernel(g_module, "grid_sync_mix"), &c, args, NULL, 4));
    assert_ok(g_ctx, asyncrt_map_launch(map, N, &d_out, &d_mapped, NULL, stream));
    asyncrt_graph *graph = NULL;
    assert_ok(g_ctx, asyncrt_stream_capture_end(g_ctx, stream, &graph));
    for (int round = 0; round < 3; round++) {
        fill_random(in, d_in, N);
        poison(d_out, N);
        poison(d_mapped, N);
        assert_ok(g_ctx, asyncrt_graph_launch(graph, stream));
        assert_ok(g_ctx, asyncrt_stream_synchronize(g_ctx, stream));
        assert_ok(g_ctx, asyncrt_memory_to_host(g_ctx, out, d_mapped, N * sizeof(float)));
        for (int i = 0; i < n; i++) want[i] = 2.0f * (2.0f * in[(i + 1) % n] + 2.0f * in[n - 1 - i]) - 1.0f;
        expect_close("cooperative + map graph", out, want, N);
    }
    asyncrt_graph_destroy(graph);
    asyncrt_map_destroy(map);
    asyncrt_memory_free(g_ctx, d_in), asyncrt_memory_free(g_ctx, d_tmp);
    asyncrt_memory_free(g_ctx, d_out), asyncrt_memory_free(g_ctx, d_mapped);
    asyncrt_stream_destroy(g_ctx, stream);
    free(in), free(out), free(want);
}

int main(void)
{
    g_ctx = test_open_device_or_skip("test_graph_gpu");
    if (!g_ctx) return ASYNCRT_TEST_SKIP;
    test_seed_random("test_graph_gpu");
    g_source = test_read_source_file("tests/runtime/launch_kernels.cu");
    if (!g_source || asyncrt_module_build(g_ctx, "launch_kernels.cu", g_source, NULL, &g_module) != ASYNCRT_SUCCESS ||
        asyncrt_module_make_resident(g_module) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "build failed: %s\n", asyncrt_context_last_error(g_ctx));
        return 1;
    }
    free(g_source);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capture_replay_and_results),
        cmocka_unit_test(cold_compile_during_capture_is_refused_and_the_capture_survives),
        cmocka_unit_test(a_launch_in_a_capture_keeps_it_valid),
        cmocka_unit_test(cooperative_priority_and_an_op_in_a_graph),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_module_destroy(g_module);
    asyncrt_context_destroy(g_ctx);
    return failed;
}
