/* The structs that grow (base/sized.h, docs/deployment.md, "ABI and versioning") and the
 * version calls. check_abi.sh runs whole programs built with smaller
 * structs; here each case of the rule, one at a time. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "asyncrt/asyncrt.h"
#include "sized.h"
#include "test_support.h"

static void the_version_calls_match_the_header_and_the_project(void **state)
{
    (void)state;
    assert_int_equal(asyncrt_version(), ASYNCRT_VERSION_NUMBER);
    assert_string_equal(asyncrt_version_string(), ASYNCRT_VERSION_STRING);
    assert_string_equal(ASYNCRT_VERSION_STRING, ASYNCRT_PROJECT_VERSION); /* CMake's project(VERSION) */
    assert_int_equal(ASYNCRT_VERSION_NUMBER, ASYNCRT_VERSION_MAJOR * 10000 + ASYNCRT_VERSION_MINOR * 100 +
                                                 ASYNCRT_VERSION_PATCH);
}

/* A caller built with a smaller struct: its bytes, then zeros; the size
 * becomes the library's. */
static void a_smaller_struct_is_read_up_to_its_size(void **state)
{
    (void)state;
    char why[ASYNCRT_SIZED_WHY];
    size_t first = asyncrt__sized_first(ASYNCRT_SIZED_COMPILE_OPTIONS);
    assert_int_equal(first, offsetof(asyncrt_compile_options, no_std_headers));
    asyncrt_compile_options caller = {.size = first, .arch = "sm_90", .no_std_headers = true,
                                      .toolkit_with_bundle = true}; /* set, but past its size */
    asyncrt_compile_options full;
    memset(&full, 0xff, sizeof full);
    assert_true(asyncrt__sized_in(ASYNCRT_SIZED_COMPILE_OPTIONS, &caller, &full, why));
    assert_int_equal(full.size, sizeof full);
    assert_string_equal(full.arch, "sm_90");
    assert_false(full.no_std_headers);
    assert_null(full.bundle);
    assert_false(full.toolkit_with_bundle);
    /* Its own size: every field. */
    caller.size = sizeof caller;
    assert_true(asyncrt__sized_in(ASYNCRT_SIZED_COMPILE_OPTIONS, &caller, &full, why));
    assert_true(full.no_std_headers && full.toolkit_with_bundle);
}

/* Below the first layout (0 included) or beyond any struct: refused, naming
 * the struct, the size and the rule. */
static void a_size_below_the_first_layout_is_refused(void **state)
{
    (void)state;
    char why[ASYNCRT_SIZED_WHY];
    asyncrt_compile_options full;
    const size_t bad[] = {0, 8, asyncrt__sized_first(ASYNCRT_SIZED_COMPILE_OPTIONS) - 1, (size_t)1 << 20};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char caller[sizeof(asyncrt_compile_options)] = {0};
        memcpy(caller, &bad[i], sizeof bad[i]);
        assert_false(asyncrt__sized_in(ASYNCRT_SIZED_COMPILE_OPTIONS, caller, &full, why));
        assert_non_null(strstr(why, "asyncrt_compile_options.size is"));
        assert_non_null(strstr(why, "ASYNCRT_COMPILE_OPTIONS_INIT"));
        assert_non_null(strstr(why, "ABI and versioning"));
    }
}

/* A caller built with a newer, larger struct: fine while it leaves what this
 * library does not know zero; refused, naming the byte, when it does not. */
static void a_larger_struct_is_read_when_the_unknown_tail_is_zero(void **state)
{
    (void)state;
    char why[ASYNCRT_SIZED_WHY];
    struct {
        asyncrt_launch_config known;
        unsigned char newer[16];
    } caller = {.known = {.size = sizeof caller, .grid = {7}}};
    asyncrt_launch_config full;
    assert_true(asyncrt__sized_in(ASYNCRT_SIZED_LAUNCH_CONFIG, &caller, &full, why));
    assert_int_equal(full.size, sizeof full);
    assert_int_equal(full.grid[0], 7);
    caller.newer[3] = 1;
    assert_false(asyncrt__sized_in(ASYNCRT_SIZED_LAUNCH_CONFIG, &caller, &full, why));
    char byte[32];
    snprintf(byte, sizeof byte, "byte %zu is set", sizeof caller.known + 3);
    assert_non_null(strstr(why, byte));
    assert_non_null(strstr(why, "newer asyncrt"));
}

/* Out: only the caller's bytes are written, its size stays; a larger caller's
 * unknown tail is zeroed. */
static void a_struct_the_library_fills_is_written_up_to_its_size(void **state)
{
    (void)state;
    char why[ASYNCRT_SIZED_WHY];
    asyncrt_cache_stats full = {.size = sizeof full, .memory_hits = 1, .disk_hits = 2, .misses = 3, .stores = 4,
                                .evictions = 5, .rejected = 6};
    size_t first = asyncrt__sized_first(ASYNCRT_SIZED_CACHE_STATS);
    unsigned char caller[sizeof full + 16];
    memset(caller, 0xab, sizeof caller);
    memcpy(caller, &first, sizeof first);
    assert_true(asyncrt__sized_out(ASYNCRT_SIZED_CACHE_STATS, caller, &full, why));
    asyncrt_cache_stats seen;
    memcpy(&seen, caller, sizeof seen);
    assert_int_equal(seen.size, first);
    assert_int_equal(seen.memory_hits, 1);
    assert_int_equal(seen.stores, 4);
    for (size_t i = first; i < sizeof caller; i++) assert_int_equal(caller[i], 0xab); /* untouched */
    size_t larger = sizeof caller;
    memcpy(caller, &larger, sizeof larger);
    assert_true(asyncrt__sized_out(ASYNCRT_SIZED_CACHE_STATS, caller, &full, why));
    memcpy(&seen, caller, sizeof seen);
    assert_int_equal(seen.rejected, 6);
    for (size_t i = sizeof full; i < sizeof caller; i++) assert_int_equal(caller[i], 0);
}

/* The public calls apply the rule, with the message in the context. */
static void the_public_calls_refuse_a_size_they_cannot_use(void **state)
{
    (void)state;
    asyncrt_context *ctx;
    assert_int_equal(asyncrt_context_create(&ctx), ASYNCRT_SUCCESS);
    asyncrt_compile_options o = {.arch = "sm_90"}; /* no size: an old habit, or a forgotten init */
    asyncrt_program *p = (asyncrt_program *)1;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_program_compile(ctx, "k.cu", "", &o, &p));
    assert_null(p);
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "asyncrt_compile_options.size is 0"));

    asyncrt_cache_stats st = {.size = 0, .misses = 99};
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_cache_stats(ctx, &st));
    assert_int_equal(st.misses, 99); /* nothing written */
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "ASYNCRT_CACHE_STATS_INIT"));
    st = (asyncrt_cache_stats)ASYNCRT_CACHE_STATS_INIT;
    assert_ok(ctx, asyncrt_context_cache_stats(ctx, &st));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "ASYNCRT_CACHE_STATS_INIT")); /* an observer: left alone */

    asyncrt_remote_cache_stats rs = {.size = 1};
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_context_remote_cache_stats(ctx, &rs));

    static const asyncrt_map_arg x = {"x", ASYNCRT_F32};
    asyncrt_map_desc d = {.inputs = &x, .input_count = 1, .outputs = &x, .output_count = 1, .expression = ";"};
    asyncrt_map *map = (asyncrt_map *)1;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_map_create(ctx, &d, &map));
    assert_null(map);
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "asyncrt_map_desc.size is 0"));

    asyncrt_tile_desc t = {.kind = ASYNCRT_TILE_TRANSPOSE, .dtype = ASYNCRT_F32};
    asyncrt_tile_op *op = NULL;
    assert_status(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, asyncrt_tile_create(ctx, &t, &op));
    assert_non_null(strstr(asyncrt_context_last_error(ctx), "asyncrt_tile_desc.size is 0"));
    asyncrt_context_destroy(ctx);
}

static void tensormap_analyze_reads_its_options_and_report_by_size(void **state)
{
    (void)state;
    asyncrt_tensormap_desc d;
    const uint64_t shape[] = {64, 64};
    const uint32_t box[] = {16, 16};
    assert_int_equal(asyncrt_tensormap_describe_dense(&d, ASYNCRT_TENSORMAP_DTYPE_F32, 0x10000, 2, shape, box),
                     ASYNCRT_SUCCESS);
    asyncrt_tensormap_report r = ASYNCRT_TENSORMAP_REPORT_INIT;
    assert_int_equal(asyncrt_tensormap_analyze(&d, NULL, &r), ASYNCRT_SUCCESS);
    assert_int_equal(r.size, sizeof r);
    asyncrt_tensormap_check_options o = {.sm = 90}; /* no size */
    assert_int_equal(asyncrt_tensormap_analyze(&d, &o, &r), ASYNCRT_ERROR_INVALID_ARGUMENT);
    assert_string_equal(r.error.rule, "struct_size");
    assert_non_null(strstr(r.error.message, "asyncrt_tensormap_check_options.size is 0"));
    o.size = sizeof o;
    assert_int_equal(asyncrt_tensormap_analyze(&d, &o, &r), ASYNCRT_SUCCESS);
    assert_null(r.error.rule);
    r.size = 0;
    assert_int_equal(asyncrt_tensormap_analyze(&d, &o, &r), ASYNCRT_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_version_calls_match_the_header_and_the_project),
        cmocka_unit_test(a_smaller_struct_is_read_up_to_its_size),
        cmocka_unit_test(a_size_below_the_first_layout_is_refused),
        cmocka_unit_test(a_larger_struct_is_read_when_the_unknown_tail_is_zero),
        cmocka_unit_test(a_struct_the_library_fills_is_written_up_to_its_size),
        cmocka_unit_test(the_public_calls_refuse_a_size_they_cannot_use),
        cmocka_unit_test(tensormap_analyze_reads_its_options_and_report_by_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
