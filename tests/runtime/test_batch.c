/* asyncrt_build_batch on the CPU (explicit arch): good, failing and
 * duplicate sources in one batch, each with its own status and message. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

typedef test_cache_fixture fixture;

/* A distinct kernel per seed, so nothing is shared by accident. */
static char *kernel(int seed)
{
    char *s = malloc(256);
    snprintf(s, 256, "extern \"C\" __global__ void k%d(float *x) { x[threadIdx.x] *= %d.0f; }\n", seed, seed);
    return s;
}

static void mixed_batch_reports_each_request(void **state)
{
    fixture *f = *state;
    asyncrt_compile_options sm90 = {.size = sizeof sm90, .arch = "sm_90"}, sm80 = {.size = sizeof sm80, .arch = "sm_80"};
    asyncrt_compile_options bad_arch = {.size = sizeof bad_arch, .arch = "sm_91"};
    char *good[4] = {kernel(1), kernel(2), kernel(3), kernel(4)};
    const char *broken = "extern \"C\" __global__ void b(float *x) {\n  x[0] = not_declared;\n}\n";
    asyncrt_build_request reqs[] = {
        {.source_name = "g1.cu", .source = good[0], .opts = &sm90},
        {.source_name = "broken.cu", .source = broken, .opts = &sm90},
        {.source_name = "g2.cu", .source = good[1], .opts = &sm80},
        {.source_name = "g1.cu", .source = good[0], .opts = &sm90},   /* duplicate of 0 */
        {.source_name = "null.cu", .source = NULL, .opts = &sm90},
        {.source_name = "g3.cu", .source = good[2], .opts = &bad_arch},
        {.source_name = "broken.cu", .source = broken, .opts = &sm90}, /* duplicate of 1 */
        {.source_name = "g4.cu", .source = good[3], .opts = NULL},      /* auto without a device */
        {.source_name = "g1.cu", .source = good[0], .opts = &sm90},   /* duplicate of 0 */
    };
    size_t n = sizeof reqs / sizeof reqs[0];
    asyncrt_status s = asyncrt_build_batch(f->ctx, reqs, n, 4, false);
    assert_int_equal(s, ASYNCRT_ERROR_COMPILE); /* request 1's, the first failure */
    const char *summary = asyncrt_context_last_error(f->ctx);
    assert_non_null(strstr(summary, "5 of 9 builds failed"));
    assert_non_null(strstr(summary, "request 1 (broken.cu)"));

    const asyncrt_status want[] = {ASYNCRT_SUCCESS, ASYNCRT_ERROR_COMPILE, ASYNCRT_SUCCESS, ASYNCRT_SUCCESS,
                                   ASYNCRT_ERROR_INVALID_ARGUMENT, ASYNCRT_ERROR_UNSUPPORTED_ARCH,
                                   ASYNCRT_ERROR_COMPILE, ASYNCRT_ERROR_NO_DEVICE, ASYNCRT_SUCCESS};
    for (size_t i = 0; i < n; i++) {
        if (reqs[i].status != want[i])
            fail_msg("request %zu: %s, expected %s (%s)", i, asyncrt_status_string(reqs[i].status),
                     asyncrt_status_string(want[i]), reqs[i].message ? reqs[i].message : "");
        assert_null(reqs[i].module);
        if (want[i] == ASYNCRT_SUCCESS) {
            assert_non_null(reqs[i].program);
            assert_null(reqs[i].message);
        } else {
            assert_null(reqs[i].program);
            assert_non_null(reqs[i].message);
        }
    }
    /* Each message is its own request's. */
    assert_non_null(strstr(reqs[1].message, "broken.cu(2)"));
    assert_non_null(strstr(reqs[1].message, "not_declared"));
    assert_string_equal(reqs[1].message, reqs[6].message);
    assert_non_null(strstr(reqs[4].message, "source is NULL"));
    assert_non_null(strstr(reqs[5].message, "sm_91"));
    assert_non_null(strstr(reqs[7].message, "needs an open device"));
    /* Duplicates: compiled once, each request its own copy of the same image. */
    assert_int_equal(asyncrt_program_origin_of(reqs[0].program), ASYNCRT_ORIGIN_COMPILED);
    assert_int_equal(asyncrt_program_origin_of(reqs[3].program), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_int_equal(asyncrt_program_origin_of(reqs[8].program), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_ptr_not_equal(reqs[0].program, reqs[3].program);
    size_t a, b;
    const void *ia = asyncrt_program_image(reqs[0].program, &a), *ib = asyncrt_program_image(reqs[8].program, &b);
    assert_int_equal(a, b);
    assert_memory_equal(ia, ib, a);
    assert_string_equal(asyncrt_program_arch(reqs[2].program), "sm_80");

    asyncrt_build_batch_release(reqs, n);
    for (size_t i = 0; i < n; i++) {
        assert_null(reqs[i].program);
        assert_null(reqs[i].message);
    }
    for (int i = 0; i < 4; i++) free(good[i]);
}

/* Same text under two option structs with equal contents: not a batch
 * duplicate, but one cache key, so NVRTC still runs once (single flight). */
static void equal_options_compile_once(void **state)
{
    fixture *f = *state;
    asyncrt_compile_options a = {.size = sizeof a, .arch = "sm_90"}, b = {.size = sizeof b, .arch = "sm_90"};
    char *src = kernel(42);
    asyncrt_build_request reqs[6];
    for (size_t i = 0; i < 6; i++)
        reqs[i] = (asyncrt_build_request){.source_name = "same.cu", .source = src, .opts = i % 2 ? &a : &b};
    assert_ok(f->ctx, asyncrt_build_batch(f->ctx, reqs, 6, 6, false));
    int compiled = 0;
    for (size_t i = 0; i < 6; i++)
        compiled += asyncrt_program_origin_of(reqs[i].program) == ASYNCRT_ORIGIN_COMPILED;
    assert_int_equal(compiled, 1);
    asyncrt_build_batch_release(reqs, 6);
    free(src);
}

static void many_distinct_programs_all_succeed(void **state)
{
    fixture *f = *state;
    enum { N = 12 };
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80"};
    char *src[N];
    asyncrt_build_request reqs[N];
    for (int i = 0; i < N; i++) {
        src[i] = kernel(100 + i);
        reqs[i] = (asyncrt_build_request){.source_name = "many.cu", .source = src[i], .opts = &o};
    }
    assert_ok(f->ctx, asyncrt_build_batch(f->ctx, reqs, N, 0, false));
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", 100 + i);
        size_t size;
        const char *ptx = asyncrt_program_image(reqs[i].program, &size);
        assert_non_null(strstr(ptx, name)); /* request i got kernel i, not a neighbour's */
        assert_int_equal(asyncrt_program_origin_of(reqs[i].program), ASYNCRT_ORIGIN_COMPILED);
    }
    asyncrt_build_batch_release(reqs, N);
    /* A second batch: every one a hit. */
    assert_ok(f->ctx, asyncrt_build_batch(f->ctx, reqs, N, 3, false));
    for (int i = 0; i < N; i++)
        assert_int_equal(asyncrt_program_origin_of(reqs[i].program), ASYNCRT_ORIGIN_MEMORY_CACHE);
    asyncrt_build_batch_release(reqs, N);
    for (int i = 0; i < N; i++) free(src[i]);
}

static void load_without_a_device_fails_each_request(void **state)
{
    fixture *f = *state;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    char *src = kernel(7);
    asyncrt_build_request reqs[2] = {{.source_name = "a.cu", .source = src, .opts = &o},
                                     {.source_name = "a.cu", .source = src, .opts = &o}};
    assert_status(f->ctx, ASYNCRT_ERROR_NO_DEVICE, asyncrt_build_batch(f->ctx, reqs, 2, 2, true));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(reqs[i].status, ASYNCRT_ERROR_NO_DEVICE);
        assert_non_null(reqs[i].program); /* compiled; only the load failed */
        assert_null(reqs[i].module);
        assert_non_null(strstr(reqs[i].message, "no device is open"));
    }
    asyncrt_build_batch_release(reqs, 2);
    free(src);
}

/* A worker that cannot do its job costs time, never a result: the batch
 * compiles those requests in this process. */
static void broken_worker_falls_back_to_this_process(void **state)
{
    fixture *f = *state;
    setenv("ASYNCRT_COMPILE_WORKER", "/bin/false", 1);
    asyncrt_context_destroy(f->ctx); /* a context reads the variable when it is created */
    assert_int_equal(asyncrt_context_create(&f->ctx), ASYNCRT_SUCCESS);
    assert_ok(f->ctx, asyncrt_context_set_cache_dir(f->ctx, f->dir));
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    char *src[3] = {kernel(201), kernel(202), kernel(203)};
    asyncrt_build_request reqs[3];
    for (int i = 0; i < 3; i++) reqs[i] = (asyncrt_build_request){.source_name = "w.cu", .source = src[i], .opts = &o};
    asyncrt_status s = asyncrt_build_batch(f->ctx, reqs, 3, 3, false);
    unsetenv("ASYNCRT_COMPILE_WORKER");
    assert_ok(f->ctx, s);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(asyncrt_program_origin_of(reqs[i].program), ASYNCRT_ORIGIN_COMPILED);
        size_t size;
        char name[16];
        snprintf(name, sizeof name, "k%d", 201 + i);
        const void *image = asyncrt_program_image(reqs[i].program, &size);
        assert_non_null(memmem(image, size, name, strlen(name)));
        free(src[i]);
    }
    asyncrt_build_batch_release(reqs, 3);
}

static void empty_and_null_batches(void **state)
{
    fixture *f = *state;
    assert_ok(f->ctx, asyncrt_build_batch(f->ctx, NULL, 0, 0, false));
    assert_status(f->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_build_batch(f->ctx, NULL, 3, 0, false));
    asyncrt_build_batch_release(NULL, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(mixed_batch_reports_each_request, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(equal_options_compile_once, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(many_distinct_programs_all_succeed, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(load_without_a_device_fails_each_request, test_setup_cache_context, test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(broken_worker_falls_back_to_this_process, test_setup_cache_context,
                                        test_teardown_cache_context),
        cmocka_unit_test_setup_teardown(empty_and_null_batches, test_setup_cache_context, test_teardown_cache_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
