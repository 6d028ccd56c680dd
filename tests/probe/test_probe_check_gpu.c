/* --check on a real device: every feature the device should have is built,
 * run on random data and verified. On an sm_90 device that must be every
 * feature but sm_100a. The bench's copies must be right too (their speed is
 * reported, never asserted). */
#include <stdbool.h>
#include <string.h>

#include "test_support.h"

#include "bench.h"
#include "check.h"

static asyncrt_context *ctx;

static void test_every_expected_feature_verifies(void **state)
{
    (void)state;
    const asyncrt_device_info *info = asyncrt_context_device(ctx);
    assert_non_null(info);
    bool expected[PROBE_FEATURE_COUNT];
    probe_features_expected(info->cc_major, info->cc_minor, info->cluster_launch, expected);
    if (info->cc_major == 9 && info->cc_minor == 0)
        for (int f = 0; f < PROBE_FEATURE_COUNT; f++)
            if (f != PROBE_SM100A && !expected[f])
                fail_msg("an sm_90 device should have %s (cluster launch: %d)", probe_feature_get(f)->key,
                         info->cluster_launch);
    probe_feature_result results[PROBE_FEATURE_COUNT];
    probe_check_device(ctx, info, true, results);
    int failures = 0;
    for (int f = 0; f < PROBE_FEATURE_COUNT; f++) {
        probe_status want = expected[f] ? PROBE_STATUS_VERIFIED : PROBE_STATUS_NO;
        print_message("%-18s %s %s\n", probe_feature_get(f)->key, probe_status_key(results[f].status),
                      results[f].reason);
        if (results[f].status != want) failures++;
    }
    assert_int_equal(failures, 0);
}

static void test_bench_copies_are_right(void **state)
{
    (void)state;
    const asyncrt_device_info *info = asyncrt_context_device(ctx);
    probe_bench b;
    probe_bench_device(ctx, info, &b);
    if (!b.ran) fail_msg("bench: %s", b.error);
    const bool has[PROBE_BENCH_PATH_COUNT] = {true, info->features.ldgsts, info->features.bulk_copy};
    for (int p = 0; p < PROBE_BENCH_PATH_COUNT; p++) {
        print_message("%-8s %s %.0f GB/s (%.0f%% of %.0f GB/s D2D)\n", probe_bench_path_key(p),
                      b.paths[p].ran ? "ok" : b.paths[p].error, b.paths[p].gbs, b.paths[p].percent, b.d2d_gbs);
        if (has[p] && !b.paths[p].ran) fail_msg("%s: %s", probe_bench_path_key(p), b.paths[p].error);
    }
}

int main(void)
{
    ctx = test_open_device_or_skip("test_probe_check_gpu");
    if (!ctx) return ASYNCRT_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_expected_feature_verifies),
        cmocka_unit_test(test_bench_copies_are_right),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_context_destroy(ctx);
    return failed;
}
