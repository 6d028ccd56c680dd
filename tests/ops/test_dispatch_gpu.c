/* Calibration on the GPU (small sizes): it measures every path the device
 * has for every op, writes a file the strict parser accepts for this device
 * and driver, the ops' AUTO path then follows it, and a foreign or damaged
 * file is ignored in favour of the built-in table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "context.h"
#include "dispatch.h"
#include "test_support.h"

static asyncrt_context *g_ctx;

static asyncrt_op_path auto_transpose_path(void)
{
    asyncrt_tile_desc d = {.size = sizeof d, .kind = ASYNCRT_TILE_TRANSPOSE, .dtype = ASYNCRT_F32};
    asyncrt_tile_op *op = NULL;
    assert_ok(g_ctx, asyncrt_tile_create(g_ctx, &d, &op));
    asyncrt_op_path p = asyncrt_tile_path_of(op);
    asyncrt_tile_destroy(op);
    return p;
}

/* The calibration file is a side file of the cache (cache.h): written and
 * read here through the cache's own helpers, as the library does. */
static void write_text(const char *path, const char *text)
{
    assert_true(asyncrt__cache_write_side(g_ctx->cache, strrchr(path, '/') + 1, text));
}

static char *read_text(const char *path)
{
    char *text = asyncrt__cache_read_side(g_ctx->cache, strrchr(path, '/') + 1);
    if (!text) fail_msg("cannot read %s", path);
    return text;
}

static void calibration_produces_a_valid_table(void **state)
{
    (void)state;
    const asyncrt_device_info *dev = asyncrt_context_device(g_ctx);
    int cc = dev->cc_major * 10 + dev->cc_minor, paths = 1 + dev->features.ldgsts + dev->features.tma;
    asyncrt_calibrate_sizes sizes = {.map_elements = 1 << 20, .tile_rows = 1000, .tile_cols = 1024, .warmup = 1,
                                     .repeats = 3};
    asyncrt_calibration cal;
    assert_ok(g_ctx, asyncrt__calibrate(g_ctx, &sizes, &cal));
    assert_string_equal(cal.uuid, dev->uuid);
    assert_int_equal(cal.driver_version, dev->driver_version);
    assert_int_equal(cal.cc, cc);
    for (int op = 0; op < ASYNCRT_DISPATCH_OP_COUNT; op++) {
        const asyncrt_dispatch_rank *r = &cal.rank[op];
        assert_int_equal(r->count, paths);
        for (int i = 0; i < r->count; i++) {
            if (!(r->pct[i] >= 0.01 && r->pct[i] <= 200) || (i && r->pct[i] > r->pct[i - 1]))
                fail_msg("%s: rank %d (%s) is %.2f%%", asyncrt__dispatch_op_name(op), i,
                         asyncrt_op_path_name(r->path[i]), r->pct[i]);
            for (int j = 0; j < i; j++) assert_int_not_equal(r->path[i], r->path[j]);
        }
    }

    char *path = NULL;
    assert_ok(g_ctx, asyncrt__calibration_save(g_ctx, &cal, &path));
    char *text = read_text(path);
    asyncrt_calibration back;
    char why[160];
    if (!asyncrt__calibration_parse(text, strlen(text), dev->uuid, dev->driver_version, &back, why, sizeof why))
        fail_msg("%s: %s\n%s", path, why, text);

    /* AUTO follows the file: the first calibrated transpose path. */
    assert_int_equal(auto_transpose_path(), cal.rank[ASYNCRT_DISPATCH_TRANSPOSE].path[0]);
    /* Ranked the other way round, it still does (not the table by chance). */
    asyncrt_calibration flipped = cal;
    asyncrt_dispatch_rank *t = &flipped.rank[ASYNCRT_DISPATCH_TRANSPOSE];
    asyncrt_op_path last = t->path[t->count - 1];
    t->path[t->count - 1] = t->path[0];
    t->path[0] = last;
    for (int i = 0; i < t->count; i++) t->pct[i] = 90.0 - i;
    char *flipped_path = NULL;
    assert_ok(g_ctx, asyncrt__calibration_save(g_ctx, &flipped, &flipped_path));
    assert_int_equal(auto_transpose_path(), last);

    /* Foreign or damaged: ignored, the built-in table decides. */
    char table_why[256];
    asyncrt_op_path table = asyncrt__dispatch_choose(ASYNCRT_DISPATCH_TRANSPOSE, cc, cc, NULL, table_why,
                                                     sizeof table_why);
    asyncrt_calibration foreign = flipped;
    foreign.driver_version += 10;
    char *foreign_text = asyncrt__calibration_format(&foreign);
    write_text(path, foreign_text);
    if (table != last) assert_int_equal(auto_transpose_path(), table);
    write_text(path, "asyncrt-calibration 1\nuuid ");
    assert_int_equal(auto_transpose_path(), table);
    char *good_text = asyncrt__calibration_format(&flipped);
    FILE *plain = fopen(path, "wb"); /* good text, but not sealed by the cache: refused */
    assert_non_null(plain);
    fputs(good_text, plain);
    fclose(plain);
    if (table != last) assert_int_equal(auto_transpose_path(), table);
    free(good_text);
    remove(path);
    assert_int_equal(auto_transpose_path(), table);
    free(foreign_text);
    free(flipped_path);
    free(text);
    free(path);
}

int main(void)
{
    g_ctx = test_open_device_or_skip("test_dispatch_gpu");
    if (!g_ctx) return ASYNCRT_TEST_SKIP;
    unsetenv("ASYNCRT_PATH");
    unsetenv("ASYNCRT_TILE_TUNE");
    /* A cache directory of its own: the calibration files it writes and
     * removes must not meet another process's (gpu-check.sh sanitize runs
     * the tools in parallel on one cache directory). */
    char *dir = test_make_temp_dir("asyncrt-dispatch-gpu");
    if (asyncrt_context_set_cache_dir(g_ctx, dir) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "cannot use %s: %s\n", dir, asyncrt_context_last_error(g_ctx));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calibration_produces_a_valid_table),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    asyncrt_context_destroy(g_ctx);
    test_remove_tree(dir);
    free(dir);
    return failed;
}
