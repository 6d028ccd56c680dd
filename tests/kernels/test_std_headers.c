/* The built-in standard headers (kernels_src/std/) through NVRTC, no GPU:
 * each header alone, a kernel written as for nvcc using all of them, a user
 * specialisation of std::numeric_limits, coexistence with libcu++ in both
 * include orders, the caller's own header of the same name winning,
 * no_std_headers, NDEBUG, and -default-device (on by default, and off). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_internal.h" /* the embedded std headers */
#include "test_support.h"

static asyncrt_status compile(asyncrt_context *ctx, const char *source, const asyncrt_compile_options *o,
                              asyncrt_program **out)
{
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt_program_compile(ctx, "std_test.cu", source, o, &p);
    if (out) *out = p;
    else asyncrt_program_destroy(p);
    return s;
}

static void expect_compile_error(asyncrt_context *ctx, const char *source, const asyncrt_compile_options *o,
                                 const char *words)
{
    assert_status(ctx, ASYNCRT_ERROR_COMPILE, compile(ctx, source, o, NULL));
    if (!strstr(asyncrt_context_last_error(ctx), words))
        fail_msg("error lacks '%s': %s", words, asyncrt_context_last_error(ctx));
}

static void each_header_compiles_alone(void **state)
{
    asyncrt_context *ctx = *state;
    assert_true(asyncrt__std_header_file_count >= 25);
    const char *archs[] = {"sm_80", "sm_90"};
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        for (int a = 0; a < 2; a++) {
            char source[256];
            snprintf(source, sizeof source, "#include <%s>\n#include <%s>\n__global__ void k() {}\n",
                     asyncrt__std_header_files[i].name, asyncrt__std_header_files[i].name); /* twice: guards */
            asyncrt_compile_options o = {.size = sizeof o, .arch = archs[a]};
            asyncrt_program *p;
            if (compile(ctx, source, &o, &p) != ASYNCRT_SUCCESS)
                fail_msg("<%s> for %s: %s", asyncrt__std_header_files[i].name, archs[a], asyncrt_context_last_error(ctx));
            if (strstr(asyncrt_program_log(p), "warning"))
                fail_msg("<%s> for %s warns: %s", asyncrt__std_header_files[i].name, archs[a], asyncrt_program_log(p));
            asyncrt_program_destroy(p);
        }
}

/* Every name docs/library.md lists is a built-in header. */
static void the_documented_set_is_there(void **state)
{
    (void)state;
    const char *names[] = {"cmath", "math.h", "cstdint", "stdint.h", "climits", "limits.h", "cfloat", "float.h",
                           "limits", "type_traits", "utility", "tuple", "iterator", "algorithm", "cstdio",
                           "stdio.h", "cassert", "assert.h", "cstddef", "stddef.h", "cstdlib", "stdlib.h",
                           "cstring", "string.h", "initializer_list", "new"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!asyncrt__std_header_find(names[i])) fail_msg("no built-in <%s>", names[i]);
}

static void nvcc_style_kernel_compiles(void **state)
{
    asyncrt_context *ctx = *state;
    char *src = test_read_source_file("tests/kernels/std_headers.cu");
    assert_non_null(src);
    const char *archs[] = {"sm_80", "sm_90", "compute_80"};
    for (int a = 0; a < 3; a++) {
        asyncrt_compile_options o = {.size = sizeof o, .arch = archs[a]};
        asyncrt_program *p;
        if (compile(ctx, src, &o, &p) != ASYNCRT_SUCCESS)
            fail_msg("std_headers.cu for %s: %s", archs[a], asyncrt_context_last_error(ctx));
        if (strstr(asyncrt_program_log(p), "warning")) fail_msg("warnings: %s", asyncrt_program_log(p));
        asyncrt_program_destroy(p);
    }
    free(src);
}

/* libcu++ and the built-ins in one file, both orders. libcu++'s <cuda/std/cmath>
 * after ours redefines INFINITY and NAN (a warning, documented); nothing else. */
static void coexists_with_libcudacxx(void **state)
{
    asyncrt_context *ctx = *state;
    char *src = test_read_source_file("tests/kernels/std_coexist.cu");
    assert_non_null(src);
    const char *first[] = {"STD_FIRST"};
    for (int order = 0; order < 2; order++) {
        asyncrt_compile_options o = {.size = sizeof o,
                                     .arch = "sm_90", .defines = first, .define_count = (size_t)order};
        asyncrt_program *p;
        if (compile(ctx, src, &o, &p) != ASYNCRT_SUCCESS)
            fail_msg("order %d: %s", order, asyncrt_context_last_error(ctx));
        const char *log = asyncrt_program_log(p);
        if (order == 0 && strstr(log, "warning")) fail_msg("libcu++ first warns: %s", log);
        for (const char *w = log; (w = strstr(w, "warning #")); w++)
            if (strncmp(w, "warning #47-D: incompatible redefinition of macro \"INFINITY\"", 60) &&
                strncmp(w, "warning #47-D: incompatible redefinition of macro \"NAN\"", 55))
                fail_msg("unexpected warning: %.200s", w);
        asyncrt_program_destroy(p);
    }
    free(src);
}

/* A caller's own "utility" (on an -I path) and "cmath" (in memory) are
 * what NVRTC sees, not the built-ins. */
static void the_callers_own_header_wins(void **state)
{
    asyncrt_context *ctx = *state;
    char *dir = test_make_temp_dir("asyncrt-std-own");
    char path[4096];
    snprintf(path, sizeof path, "%s/utility", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#define MY_OWN_UTILITY 1\n", f);
    fclose(f);
    const char *dirs[] = {dir};
    asyncrt_header own_cmath = {"cmath", "#define MY_OWN_CMATH 1\n"};
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = "sm_90", .include_dirs = dirs, .include_dir_count = 1,
                                 .headers = &own_cmath, .header_count = 1};
    const char *src = "#include <utility>\n#include <cmath>\n#include <tuple>\n"
                      "#if !MY_OWN_UTILITY || !MY_OWN_CMATH\n#error the built-in header won\n#endif\n"
                      "__global__ void k(int *o) { *o = std::get<0>(std::make_tuple(1)); }\n";
    /* <tuple> is still the built-in one, and it includes <utility>: the
     * caller's, which lacks what the built-in <tuple> needs */
    expect_compile_error(ctx, src, &o, "tuple(");
    const char *plain = "#include <utility>\n#include <cmath>\n"
                        "#if !MY_OWN_UTILITY || !MY_OWN_CMATH\n#error the built-in header won\n#endif\n"
                        "__global__ void k() {}\n";
    assert_ok(ctx, compile(ctx, plain, &o, NULL));
    test_remove_tree(dir);
    free(dir);
}

/* no_std_headers: NVRTC's own behaviour, and a different cache key (the
 * compile with the headers must not answer for the one without). */
static void no_std_headers_turns_them_off(void **state)
{
    asyncrt_context *ctx = *state;
    const char *src = "#include <cstdint>\n__global__ void k(std::uint32_t *o) { *o = UINT32_MAX; }\n";
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    assert_ok(ctx, compile(ctx, src, &o, NULL));
    o.no_std_headers = true;
    expect_compile_error(ctx, src, &o, "cannot open source file \"cstdint\"");
}

/* <cassert> honours NDEBUG as the C header does. */
static void ndebug_turns_assert_off(void **state)
{
    asyncrt_context *ctx = *state;
    const char *with = "#include <cassert>\n__global__ void k(int *o) { assert(*o == 3); }\n";
    const char *without = "#define NDEBUG\n#include <cassert>\n__global__ void k(int *o) { assert(*o == 3); }\n";
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_90"};
    asyncrt_program *p;
    size_t size;
    assert_ok(ctx, compile(ctx, with, &o, &p));
    assert_non_null(strstr(asyncrt_program_image(p, &size), "__assertfail"));
    asyncrt_program_destroy(p);
    assert_ok(ctx, compile(ctx, without, &o, &p));
    assert_null(strstr(asyncrt_program_image(p, &size), "__assertfail"));
    asyncrt_program_destroy(p);
}

/* Host-style code (unannotated helpers, a constructor, a virtual destructor,
 * new/delete) compiles by default; no_default_device gives NVRTC's refusal. */
static void default_device_is_on_unless_turned_off(void **state)
{
    asyncrt_context *ctx = *state;
    char *src = test_read_source_file("tests/kernels/host_style.cu");
    assert_non_null(src);
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    assert_ok(ctx, compile(ctx, src, &o, NULL));
    o.no_default_device = true;
    expect_compile_error(ctx, src, &o, "not allowed in JIT mode");
    free(src);
}

/* <cub/cub.cuh> does not compile under NVRTC (its device-wide algorithms are
 * explicitly __host__); the block- and warp-level headers do. */
static void cub_block_headers_compile(void **state)
{
    asyncrt_context *ctx = *state;
    const char *src =
        "#include <cub/block/block_reduce.cuh>\n#include <cub/warp/warp_reduce.cuh>\n#include <cstdint>\n"
        "extern \"C\" __global__ void block_sum(const std::int32_t *in, std::int32_t *out) {\n"
        "    typedef cub::BlockReduce<std::int32_t, 128> reduce;\n"
        "    __shared__ typename reduce::TempStorage temp;\n"
        "    std::int32_t total = reduce(temp).Sum(in[threadIdx.x]);\n"
        "    if (threadIdx.x == 0) *out = total;\n"
        "}\n";
    asyncrt_compile_options o = {.size = sizeof o, .arch = "sm_90"};
    assert_ok(ctx, compile(ctx, src, &o, NULL));
    expect_compile_error(ctx, "#include <cub/cub.cuh>\n", &o, "explicitly marked as a __host__ function");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(each_header_compiles_alone, test_setup_context, test_teardown_context),
        cmocka_unit_test(the_documented_set_is_there),
        cmocka_unit_test_setup_teardown(nvcc_style_kernel_compiles, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(coexists_with_libcudacxx, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(the_callers_own_header_wins, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(no_std_headers_turns_them_off, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(ndebug_turns_assert_off, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(default_device_is_on_unless_turned_off, test_setup_context, test_teardown_context),
        cmocka_unit_test_setup_teardown(cub_block_headers_compile, test_setup_context, test_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
