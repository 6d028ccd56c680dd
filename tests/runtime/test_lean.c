/* Lean images (runtime/src/lean.h): the PTX pruning rules, and what a
 * <cuda/barrier> kernel compiles to with and without them. */
#include <stdlib.h>
#include <string.h>

#include "lean.h"
#include "test_support.h"

static void prune_keeps_what_is_used_or_visible(void **state)
{
    (void)state;
    char ptx[] =
        ".version 9.0\n"
        ".target sm_90\n"
        ".global .align 1 .u8 unused_a;\n"
        ".global .align 4 .u32 used_b = 3;\n"
        ".visible .global .align 4 .u32 visible_c;\n"
        ".extern .global .align 4 .u32 extern_d;\n"
        ".const .align 8 .u64 chain_e = generic(chain_f);\n"
        ".global .align 4 .u32 chain_f;\n"
        ".global .align 4 .b8 arr_g[16];\n"
        ".global .align 4 .b8 multi_h[2] = {1,\n"
        "2};\n"
        ".visible .entry k()\n"
        "{\n"
        "  ld.global.u32 %r1, [used_b];\n"
        "}\n";
    size_t removed = asyncrt__lean_prune_ptx(ptx);
    assert_int_equal(removed, 4); /* unused_a, chain_e, then chain_f, arr_g */
    assert_null(strstr(ptx, "unused_a"));
    assert_null(strstr(ptx, "chain_e"));
    assert_null(strstr(ptx, "chain_f"));
    assert_null(strstr(ptx, "arr_g"));
    assert_non_null(strstr(ptx, ".global .align 4 .u32 used_b = 3;\n"));
    assert_non_null(strstr(ptx, "visible_c"));
    assert_non_null(strstr(ptx, "extern_d"));
    assert_non_null(strstr(ptx, "multi_h")); /* a declaration over two lines is left alone */
    assert_non_null(strstr(ptx, "ld.global.u32 %r1, [used_b];\n}\n"));
    assert_int_equal(asyncrt__lean_prune_ptx(ptx), 0);
}

static void options_that_touch_ptxas_keep_nvrtc_cubin(void **state)
{
    (void)state;
    const char *none[] = {"-DX=1"};
    assert_true(asyncrt__lean_options_allow(NULL, 0));
    assert_true(asyncrt__lean_options_allow(none, 1));
    const char *debug[] = {"-DX=1", "-G"};
    assert_false(asyncrt__lean_options_allow(debug, 2));
    const char *regs[] = {"-maxrregcount=64"};
    assert_false(asyncrt__lean_options_allow(regs, 1));
    assert_false(asyncrt__lean_options_allow(&asyncrt__lean_off_option, 1));
}

static size_t compiled_size(asyncrt_context *ctx, const char *arch, bool lean_off, bool *ptx)
{
    asyncrt_compile_options o = {.arch = arch};
    if (lean_off) {
        o.options = &asyncrt__lean_off_option;
        o.option_count = 1;
    }
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "barrier.cu", asyncrt__lean_barrier_example, &o, &p));
    size_t size = 0;
    asyncrt_program_image(p, &size);
    *ptx = asyncrt_program_is_ptx(p);
    if (*ptx && asyncrt__lean_enabled()) { /* no unused module-scope globals left */
        const char *text = asyncrt_program_image(p, &size);
        assert_null(strstr(text, "integral_constant"));
    }
    asyncrt_program_destroy(p);
    return size;
}

static void barrier_kernel_is_lean(void **state)
{
    asyncrt_context *ctx = *state;
    bool ptx;
    setenv("ASYNCRT_LEAN", "0", 1); /* off: NVRTC's image, cached apart */
    size_t off = compiled_size(ctx, "sm_90", false, &ptx);
    setenv("ASYNCRT_LEAN", "1", 1);
    size_t lean = compiled_size(ctx, "sm_90", false, &ptx);
    assert_false(ptx);
    size_t fat = compiled_size(ctx, "sm_90", true, &ptx);
    assert_int_equal(off, fat);
    print_message("<cuda/barrier> kernel, sm_90 CUBIN: %zu bytes lean, %zu bytes as NVRTC made it\n", lean, fat);
    assert_true(lean < 16 * 1024);
    assert_true(fat > 8 * lean); /* the NVRTC image really is the fat one */
    size_t ptx_size = compiled_size(ctx, "compute_90", false, &ptx);
    assert_true(ptx);
    print_message("<cuda/barrier> kernel, compute_90 PTX: %zu bytes lean\n", ptx_size);
    assert_true(ptx_size < 16 * 1024);
    unsetenv("ASYNCRT_LEAN");
    assert_int_equal(compiled_size(ctx, "sm_90", false, &ptx), lean); /* lean is the default */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prune_keeps_what_is_used_or_visible),
        cmocka_unit_test(options_that_touch_ptxas_keep_nvrtc_cubin),
        cmocka_unit_test_setup_teardown(barrier_kernel_is_lean, test_setup_context, test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
