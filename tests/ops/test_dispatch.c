/* The dispatcher without a GPU: the choice (a pure function of the op, the
 * device's arch, the target and an optional calibration), the calibration
 * file's strict parser (damaged, foreign and stale files are refused), and
 * the ops' AUTO path through it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache.h"
#include "context.h"
#include "dispatch.h"
#include "test_support.h"

#define T ASYNCRT_PATH_TMA
#define L ASYNCRT_PATH_LDGSTS
#define P ASYNCRT_PATH_PLAIN

static const char *const k_uuid = "GPU-12345678-9abc-def0-1234-56789abcdef0";

static asyncrt_calibration calibration(void)
{
    asyncrt_calibration c = {.driver_version = 13000, .cc = 90};
    snprintf(c.uuid, sizeof c.uuid, "%s", k_uuid);
    c.rank[ASYNCRT_DISPATCH_MAP] = (asyncrt_dispatch_rank){3, {T, L, P}, {99.5, 99.25, 98}};
    c.rank[ASYNCRT_DISPATCH_TRANSPOSE] = (asyncrt_dispatch_rank){3, {L, T, P}, {95.5, 94.8, 86.7}};
    c.rank[ASYNCRT_DISPATCH_TILE_MAP] = (asyncrt_dispatch_rank){1, {T}, {93}};
    c.rank[ASYNCRT_DISPATCH_STENCIL] = (asyncrt_dispatch_rank){2, {P, L}, {94.25, 94}};
    return c;
}

/* The path type's earlier name, from when the map was its only op, still
 * compiles and names the same paths (ops.h keeps it for source compatibility). */
static void the_earlier_path_names_still_work(void **state)
{
    (void)state;
    for (asyncrt_map_path p = ASYNCRT_PATH_AUTO; p <= ASYNCRT_PATH_PLAIN; p++) {
        asyncrt_op_path q = p;
        assert_string_equal(asyncrt_map_path_name(p), asyncrt_op_path_name(q));
    }
    assert_null(asyncrt_map_path_name((asyncrt_map_path)(ASYNCRT_PATH_PLAIN + 1)));
}

static void choice_follows_the_rules(void **state)
{
    (void)state;
    asyncrt_calibration cal = calibration();
    static const struct {
        asyncrt_dispatch_op op;
        int device_cc, target;
        bool calibrated;
        asyncrt_op_path expect;
        const char *why;
    } cases[] = {
        /* the built-in table: the H100's winners */
        {ASYNCRT_DISPATCH_MAP, 90, 90, false, T, "built-in table, measured on an H100 for sm_90"},
        {ASYNCRT_DISPATCH_TRANSPOSE, 90, 90, false, L, "ldgsts 94.1%"},
        {ASYNCRT_DISPATCH_STENCIL, 90, 90, false, L, "built-in table"},
        /* a compute_80 build on the H100: its ranking without TMA */
        {ASYNCRT_DISPATCH_TRANSPOSE, 90, 80, false, L, "sm_90"},
        {ASYNCRT_DISPATCH_TILE_MAP, 90, 80, false, L, "sm_90"},
        {ASYNCRT_DISPATCH_STENCIL, 90, 80, false, L, "sm_90"},
        {ASYNCRT_DISPATCH_MAP, 90, 80, false, L, "sm_90"},
        {ASYNCRT_DISPATCH_MAP, 90, 75, false, P, "sm_90"},
        /* the sm_80 family rows (the compute_80 build, measured on the H100) */
        {ASYNCRT_DISPATCH_TRANSPOSE, 80, 80, false, L, "compute_80 build"},
        {ASYNCRT_DISPATCH_STENCIL, 86, 86, false, P, "sm_86"},
        {ASYNCRT_DISPATCH_MAP, 89, 89, false, L, "sm_89"},
        /* families never measured: the newest path the target has */
        {ASYNCRT_DISPATCH_TRANSPOSE, 75, 75, false, P, "nothing measured for sm_75"},
        {ASYNCRT_DISPATCH_TRANSPOSE, 87, 87, false, L, "nothing measured for sm_87"},
        {ASYNCRT_DISPATCH_TRANSPOSE, 100, 100, false, T, "nothing measured for sm_100"},
        {ASYNCRT_DISPATCH_TRANSPOSE, 100, 80, false, L, "the target (sm_80)"},
        /* a calibration beats the table, within what the target runs */
        {ASYNCRT_DISPATCH_TRANSPOSE, 90, 90, true, L, "calibrated on this device (ldgsts 95.5%"},
        {ASYNCRT_DISPATCH_STENCIL, 90, 90, true, P, "calibrated"},
        {ASYNCRT_DISPATCH_MAP, 90, 90, true, T, "calibrated"},
        {ASYNCRT_DISPATCH_MAP, 90, 80, true, L, "calibrated"},
        /* nothing calibrated that the target runs: the table decides */
        {ASYNCRT_DISPATCH_TILE_MAP, 90, 80, true, L, "built-in table"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[256] = "";
        asyncrt_op_path got = asyncrt__dispatch_choose(cases[i].op, cases[i].device_cc, cases[i].target,
                                                       cases[i].calibrated ? &cal : NULL, why, sizeof why);
        if (got != cases[i].expect || !strstr(why, cases[i].why))
            fail_msg("case %zu (%s, sm_%d device, target %d%s): %s, expected %s; why: '%s', expected '%s'", i,
                     asyncrt__dispatch_op_name(cases[i].op), cases[i].device_cc, cases[i].target,
                     cases[i].calibrated ? ", calibrated" : "", asyncrt_op_path_name(got),
                     asyncrt_op_path_name(cases[i].expect), why, cases[i].why);
    }
    /* The chosen path never needs more than the target. */
    for (int op = 0; op < ASYNCRT_DISPATCH_OP_COUNT; op++)
        for (int cc = 50; cc <= 120; cc++)
            for (int target = 50; target <= cc; target += 5) {
                char why[256];
                asyncrt_op_path p = asyncrt__dispatch_choose((asyncrt_dispatch_op)op, cc, target,
                                                             cc == 90 ? &cal : NULL, why, sizeof why);
                if (asyncrt__dispatch_path_needs(p) > target)
                    fail_msg("%s on sm_%d for target %d: %s", asyncrt__dispatch_op_name(op), cc, target,
                             asyncrt_op_path_name(p));
            }
}

static void calibration_round_trips(void **state)
{
    (void)state;
    asyncrt_calibration cal = calibration(), back;
    char *text = asyncrt__calibration_format(&cal), why[160] = "";
    assert_non_null(text);
    if (!asyncrt__calibration_parse(text, strlen(text), k_uuid, 13000, &back, why, sizeof why))
        fail_msg("%s\n%s", why, text);
    assert_string_equal(back.uuid, k_uuid);
    assert_int_equal(back.driver_version, 13000);
    assert_int_equal(back.cc, 90);
    for (int op = 0; op < ASYNCRT_DISPATCH_OP_COUNT; op++) {
        assert_int_equal(back.rank[op].count, cal.rank[op].count);
        for (int i = 0; i < cal.rank[op].count; i++) {
            assert_int_equal(back.rank[op].path[i], cal.rank[op].path[i]);
            assert_true(back.rank[op].pct[i] > cal.rank[op].pct[i] - 0.006 &&
                        back.rank[op].pct[i] < cal.rank[op].pct[i] + 0.006);
        }
    }
    free(text);
}

/* Replaces the first `from` of `text` with `to` (malloc'd). */
static char *edited(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

static void damaged_and_foreign_files_are_refused(void **state)
{
    (void)state;
    asyncrt_calibration cal = calibration(), back;
    char *good = asyncrt__calibration_format(&cal);
    assert_non_null(good);
    static const struct {
        const char *from, *to, *why;
    } edits[] = {
        {"asyncrt-calibration 1", "asyncrt-calibration 2", "line 1"},
        {"GPU-12345678", "GPU-87654321", "another device"},
        {"uuid GPU-", "uuid MIG-", "line 2"},
        {"driver 13000", "driver 12080", "another driver (12080, this one is 13000)"},
        {"driver 13000", "driver 13000x", "line 3"},
        {"cc 90", "cc ninety", "line 4"},
        {"tma 99.50", "tma 99.5", "percentage"},
        {"tma 99.50", "tma -9.50", "percentage"},
        {"tma 99.50", "tma 999.50", "percentage"},
        {"tma 99.50", "wgmma 99.50", "'wgmma' is not a path"},
        {"ldgsts 99.25", "tma 99.25", "path tma twice"},
        {"plain 98.00", "plain 99.90", "not ranked fastest first"},
        {"map tma", "transpose tma", "expected the 'map' ranking"},
        {"tilemap tma 93.00", "tilemap", "expected the 'tilemap' ranking"},
        {"plain 86.70", "plain 86.70 tma 10.00", "more than three paths"},
        {"stencil", "\nstencil", "none empty"},
        {"cc 90\n", "cc 90\r\n", "none empty"},
        {"end\n", "", "ends early"},
        {"end\n", "end\nmore\n", "after 'end'"},
        {"end\n", "end", "ending in a newline"},
    };
    char why[160];
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *text = edited(good, edits[i].from, edits[i].to);
        bool ok = asyncrt__calibration_parse(text, strlen(text), k_uuid, 13000, &back, why, sizeof why);
        if (ok || !strstr(why, edits[i].why))
            fail_msg("edit %zu ('%s' -> '%s') %s: '%s', expected '%s'", i, edits[i].from, edits[i].to,
                     ok ? "was accepted" : "was refused for another reason", why, edits[i].why);
        free(text);
    }
    /* Cut anywhere, it is refused. */
    for (size_t n = 0; n < strlen(good); n++)
        if (asyncrt__calibration_parse(good, n, k_uuid, 13000, &back, why, sizeof why))
            fail_msg("the first %zu bytes were accepted", n);
    /* A NUL inside, and too large. */
    char big[5000];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = '\n';
    assert_false(asyncrt__calibration_parse(big, sizeof big, k_uuid, 13000, &back, why, sizeof why));
    char *nul = strdup(good);
    nul[30] = 0;
    assert_false(asyncrt__calibration_parse(nul, strlen(good), k_uuid, 13000, &back, why, sizeof why));
    free(nul);
    free(good);
    char *path = asyncrt__calibration_path("/tmp/c", k_uuid);
    assert_string_equal(path, "/tmp/c/calibration-GPU-12345678-9abc-def0-1234-56789abcdef0.txt");
    free(path);
    assert_null(asyncrt__calibration_path(NULL, k_uuid));
}

/* The calibration file is a side file of the cache: never written into a
 * directory the cache refuses (here one others can write), and written
 * through the cache's helpers (no temporary left, nothing else) where it may. */
static void calibration_is_saved_only_where_the_cache_may_write(void **state)
{
    asyncrt_context *ctx = *state;
    char *root = test_make_temp_dir("asyncrt-calibration");
    char *open_dir = asyncrt__format("%s/open", root), *own = asyncrt__format("%s/own", root);
    assert_int_equal(mkdir(open_dir, 0700), 0);
    assert_int_equal(chmod(open_dir, 0777), 0);
    asyncrt_calibration cal = calibration();
    char *path = NULL;
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, open_dir));
    assert_status(ctx, ASYNCRT_ERROR_IO, asyncrt__calibration_save(ctx, &cal, &path));
    assert_null(path);
    char *listing = asyncrt__format("test -z \"$(ls -A %s)\"", open_dir);
    assert_int_equal(system(listing), 0);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, own));
    assert_ok(ctx, asyncrt__calibration_save(ctx, &cal, &path));
    char *text = asyncrt__cache_read_side(ctx->cache, strrchr(path, '/') + 1);
    asyncrt_calibration back;
    char why[160];
    assert_non_null(text);
    assert_true(asyncrt__calibration_parse(text, strlen(text), k_uuid, 13000, &back, why, sizeof why));
    free(listing);
    listing = asyncrt__format("test \"$(ls -A %s)\" = calibration-%s.txt", own, k_uuid);
    assert_int_equal(system(listing), 0);
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, NULL));
    test_remove_tree(root);
    free(text), free(path), free(listing), free(open_dir), free(own), free(root);
}

/* The ops' AUTO path goes through the dispatcher (no device: the target's
 * family), and ASYNCRT_PATH still forces. */
static void ops_take_the_dispatchers_path(void **state)
{
    asyncrt_context *ctx = *state;
    static const float w[9] = {0, 1, 0, 1, -4, 1, 0, 1, 0};
    static const struct {
        asyncrt_tile_kind kind;
        const char *arch, *env;
        asyncrt_op_path expect;
    } cases[] = {
        {ASYNCRT_TILE_TRANSPOSE, "sm_90", NULL, L},   {ASYNCRT_TILE_TRANSPOSE, "sm_80", NULL, L},
        {ASYNCRT_TILE_STENCIL, "sm_80", NULL, P},     {ASYNCRT_TILE_MAP, "sm_86", NULL, L},
        {ASYNCRT_TILE_TRANSPOSE, "sm_75", NULL, P},   {ASYNCRT_TILE_TRANSPOSE, "sm_80", "ldgsts", L},
        {ASYNCRT_TILE_STENCIL, "sm_90", "plain", P},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].env) test_context_setenv(ctx, "ASYNCRT_PATH", cases[i].env);
        else test_context_setenv(ctx, "ASYNCRT_PATH", NULL);
        asyncrt_tile_desc d = {.size = sizeof d, .kind = cases[i].kind, .dtype = ASYNCRT_F32, .arch = cases[i].arch};
        if (d.kind == ASYNCRT_TILE_STENCIL) d.radius = 1, d.weights = w;
        if (d.kind == ASYNCRT_TILE_MAP) d.expression = "out = v;";
        asyncrt_tile_op *op = NULL;
        assert_ok(ctx, asyncrt_tile_create(ctx, &d, &op));
        if (asyncrt_tile_path_of(op) != cases[i].expect)
            fail_msg("case %zu: %s, expected %s", i, asyncrt_op_path_name(asyncrt_tile_path_of(op)),
                     asyncrt_op_path_name(cases[i].expect));
        asyncrt_tile_destroy(op);
    }
    test_context_setenv(ctx, "ASYNCRT_PATH", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_earlier_path_names_still_work),
        cmocka_unit_test(choice_follows_the_rules),
        cmocka_unit_test(calibration_round_trips),
        cmocka_unit_test(damaged_and_foreign_files_are_refused),
        cmocka_unit_test(calibration_is_saved_only_where_the_cache_may_write),
        cmocka_unit_test(ops_take_the_dispatchers_path),
    };
    return cmocka_run_group_tests(tests, test_setup_context, test_teardown_context);
}
