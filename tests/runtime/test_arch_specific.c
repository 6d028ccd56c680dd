/* arch auto and arch-specific instructions: a kernel using wgmma/setmaxnreg
 * fails in ptxas for sm_90; auto (exact device known) retries with sm_90a,
 * an explicit sm_90 gets a hint. The decision is a pure function tested on
 * ptxas's real messages; the retry runs here on a context that pretends to
 * have an sm_90 device open (compiling needs NVRTC only, never the driver). */
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "context.h"
#include "test_support.h"

/* Captured from NVRTC 13.0 compiling k_wgmma for sm_90 and for sm_100. */
static const char *k_log_sm90 =
    "ptxas application ptx input, line 26; error   : Instruction 'setmaxnreg.inc' not supported on .target 'sm_90'\n"
    "ptxas application ptx input, line 30; error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'\n"
    "ptxas fatal   : Ptx assembly aborted due to errors\n";
static const char *k_log_sm100a =
    "ptxas application ptx input, line 29; error   : Instruction 'wgmma.fence' not supported on .target 'sm_100a'\n"
    "ptxas application ptx input, line 29; error   : Instruction 'wgmma.fence' cannot be compiled for architecture 'sm_100a'\n"
    "ptxas fatal   : Ptx assembly aborted due to errors\n";
static const char *k_log_feature_sm100 =
    "ptxas application ptx input, line 29; error   : Feature '.cta_group::1' not supported on .target 'sm_100'\n";
static const char *k_log_syntax = "k.cu(3): error: identifier \"x\" is undefined\n";

static const char *k_wgmma =
    "extern \"C\" __global__ void k(float *out) {\n"
    "    asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\\n\");\n"
    "    asm volatile(\"wgmma.fence.sync.aligned;\\n\");\n"
    "    out[0] = 1.0f;\n"
    "}\n";

static void decision_table(void **state)
{
    (void)state;
    static const int supported[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
    const struct {
        const char *tried;
        bool from_auto;
        const char *log;
        bool retry;
        const char *retry_arch; /* when retry */
        const char *hint;       /* substring, "" for none */
    } rows[] = {
        {"sm_90", true, k_log_sm90, true, "sm_90a", ""},
        {"sm_90", false, k_log_sm90, false, NULL, "compile for sm_90a"},
        {"sm_100", true, k_log_feature_sm100, true, "sm_100a", ""},
        {"sm_100", false, k_log_feature_sm100, false, NULL, "sm_100a"},
        {"sm_100a", true, k_log_sm100a, false, NULL, "even in its arch-specific form"},
        {"sm_90", true, k_log_syntax, false, NULL, ""},      /* not ptxas's: no retry */
        {"sm_90", true, k_log_sm100a, false, NULL, ""},      /* about another target */
        {"sm_89", true, "Instruction 'x' not supported on .target 'sm_89'", false, NULL, "newer GPU"},
        {"sm_91", true, "Instruction 'x' not supported on .target 'sm_91'", false, NULL, "newer GPU"},
        {"compute_90", true, k_log_sm90, false, NULL, ""},   /* PTX: ptxas never ran */
        {"sm_90", true, NULL, false, NULL, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        asyncrt__arch tried, retry = {0};
        assert_true(asyncrt__arch_parse(rows[i].tried, &tried));
        char hint[512], name[32];
        bool r = asyncrt__arch_after_failure(&tried, rows[i].from_auto, supported, 12, rows[i].log,
                                            &retry, hint, sizeof hint);
        if (r != rows[i].retry) fail_msg("row %zu (%s): retry %d, expected %d", i, rows[i].tried, r, rows[i].retry);
        if (r) {
            asyncrt__arch_format(&retry, name, sizeof name);
            assert_string_equal(name, rows[i].retry_arch);
            assert_string_equal(hint, "");
        } else if (!*rows[i].hint) {
            if (*hint) fail_msg("row %zu: unexpected hint '%s'", i, hint);
        } else if (!strstr(hint, rows[i].hint)) {
            fail_msg("row %zu: hint '%s' lacks '%s'", i, hint, rows[i].hint);
        }
    }
}

static void explicit_sm90_gets_a_hint_and_sm90a_compiles(void **state)
{
    asyncrt_context *ctx = *state;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    asyncrt_program *p = NULL;
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, asyncrt_program_compile(ctx, "wgmma.cu", k_wgmma, &o, &p));
    const char *msg = asyncrt_context_last_error(ctx);
    if (!strstr(msg, "not supported on .target 'sm_90'") || !strstr(msg, "compile for sm_90a"))
        fail_msg("message lacks ptxas's words or the hint: %s", msg);
    o.arch = "sm_90a";
    assert_ok(ctx, asyncrt_program_compile(ctx, "wgmma.cu", k_wgmma, &o, &p));
    assert_string_equal(asyncrt_program_arch(p), "sm_90a");
    assert_string_equal(asyncrt_program_arch_reason(p), "sm_90a: explicit target");
    asyncrt_program_destroy(p);
}

/* A context that believes an sm_90 device is open: arch auto resolves
 * without touching the driver. */
static void pretend_device(asyncrt_context *ctx, int major, int minor)
{
    ctx->device_open = true;
    ctx->info.cc_major = major;
    ctx->info.cc_minor = minor;
    ctx->info.driver_version = 13000;
}

/* The program says why it is sm_90a: auto's rule chose sm_90 (the device),
 * then ptxas refused it; asyncrt-run -v and --json print this reason. */
static void assert_retried_reason(const asyncrt_program *p)
{
    const char *why = asyncrt_program_arch_reason(p);
    if (strncmp(why, "sm_90: NVRTC", 12) || !strstr(why, "; then sm_90a: ptxas said sm_90 lacks instructions"))
        fail_msg("reason '%s' does not say auto chose sm_90 and the retry sm_90a", why);
}

static void auto_retries_with_sm90a_once_then_uses_the_cache(void **state)
{
    asyncrt_context *ctx = *state;
    pretend_device(ctx, 9, 0);
    char *dir = test_make_temp_dir("asyncrt-arch-specific");
    assert_ok(ctx, asyncrt_context_set_cache_dir(ctx, dir));
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "wgmma.cu", k_wgmma, NULL, &p));
    assert_string_equal(asyncrt_program_arch(p), "sm_90a");
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_COMPILED);
    assert_retried_reason(p);
    asyncrt_program_destroy(p);
    /* again: found under sm_90a's key, no failing sm_90 compile first */
    assert_ok(ctx, asyncrt_program_compile(ctx, "wgmma.cu", k_wgmma, NULL, &p));
    assert_string_equal(asyncrt_program_arch(p), "sm_90a");
    assert_int_equal(asyncrt_program_origin_of(p), ASYNCRT_ORIGIN_MEMORY_CACHE);
    assert_retried_reason(p);
    asyncrt_program_destroy(p);
    /* an ordinary kernel stays on the plain target */
    assert_ok(ctx, asyncrt_program_compile(ctx, "plain.cu", "extern \"C\" __global__ void k(int *x) { *x = 1; }\n",
                                           NULL, &p));
    assert_string_equal(asyncrt_program_arch(p), "sm_90");
    const char *why = asyncrt_program_arch_reason(p);
    if (strncmp(why, "sm_90: NVRTC", 12) || strstr(why, "then"))
        fail_msg("the plain kernel's reason is not auto's rule alone: '%s'", why);
    asyncrt_program_destroy(p);
    ctx->device_open = false;
    test_remove_tree(dir);
    free(dir);
}

/* On sm_100 wgmma is missing from sm_100a too: one retry, then the error
 * says both were tried and that the kernel is for another architecture. */
static void auto_retry_that_fails_says_so(void **state)
{
    asyncrt_context *ctx = *state;
    int supported[64];
    size_t count = asyncrt__nvrtc_supported_archs(supported, 64);
    bool has100 = false;
    for (size_t i = 0; i < count; i++) has100 |= supported[i] == 100;
    if (!has100) skip();
    pretend_device(ctx, 10, 0);
    asyncrt_program *p = NULL;
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, asyncrt_program_compile(ctx, "wgmma.cu", k_wgmma, NULL, &p));
    const char *msg = asyncrt_context_last_error(ctx);
    if (!strstr(msg, "sm_100a was tried after ptxas said sm_100 lacks") ||
        !strstr(msg, "another GPU architecture"))
        fail_msg("message: %s", msg);
    ctx->device_open = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decision_table),
        cmocka_unit_test_setup_teardown(explicit_sm90_gets_a_hint_and_sm90a_compiles, test_setup_context,
                                        test_teardown_context),
        cmocka_unit_test_setup_teardown(auto_retries_with_sm90a_once_then_uses_the_cache, test_setup_context,
                                        test_teardown_context),
        cmocka_unit_test_setup_teardown(auto_retry_that_fails_says_so, test_setup_context, test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
