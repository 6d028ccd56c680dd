/* asyncrt-run end to end without a GPU: help, compile-only for every test
 * kernel, PTX/CUBIN emission, stdin, and the exit codes of failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_tool.h"
#include "test_support.h"

static void test_help(void **state)
{
    (void)state;
    assert_tool(0, "--help");
    assert_non_null(strstr(run_tool_output(), "Exit codes"));
    assert_non_null(strstr(run_tool_output(), "--tmap NAME=BUFFER:box="));
    assert_tool(0, "--version");
}

static void test_every_kernel_compiles_for_sm90(void **state)
{
    (void)state;
    static const char *kernels[] = {"saxpy.cu", "pipeline.cu", "tma_bulk_1d.cu", "tma_2d.cu", "ws_mbarrier.cu"};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        assert_tool(0, "%s --compile-only --arch sm_90", kernel_path(kernels[i]));
        assert_non_null(strstr(run_tool_output(), "for sm_90 (CUBIN"));
    }
    assert_tool(0, "%s --compile-only --arch sm_90 --kernel 'scale<double>'", kernel_path("scale.cu"));
    /* The sm_80 kernels also build for sm_80 and as PTX. */
    assert_tool(0, "%s --compile-only --arch sm_80", kernel_path("pipeline.cu"));
    assert_tool(0, "%s --compile-only --arch compute_80", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "(PTX"));
}

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("%s was not written", path);
    static char data[1 << 20];
    *size = fread(data, 1, sizeof data - 1, f);
    data[*size] = '\0';
    fclose(f);
    return data;
}

static void test_emit(void **state)
{
    (void)state;
    const char *ptx = tmp_path("saxpy.ptx"), *cubin = tmp_path("saxpy.cubin");
    remove(ptx);
    remove(cubin);
    assert_tool(0, "%s --compile-only --arch sm_90 --emit-ptx %s --emit-cubin %s -v", kernel_path("saxpy.cu"), ptx, cubin);
    assert_non_null(strstr(run_tool_output(), "target sm_90"));
    size_t size;
    char *text = slurp(ptx, &size);
    assert_non_null(strstr(text, ".target sm_90"));
    assert_non_null(strstr(text, ".entry saxpy"));
    assert_int_equal(strlen(text), size); /* no NUL inside */
    text = slurp(cubin, &size);
    assert_true(size > 4 && memcmp(text, "\177ELF", 4) == 0);
    /* From a PTX target, the CUBIN is compiled again for the sm_ twin. */
    remove(cubin);
    assert_tool(0, "%s --compile-only --arch compute_90 --emit-cubin %s", kernel_path("saxpy.cu"), cubin);
    text = slurp(cubin, &size);
    assert_true(size > 4 && memcmp(text, "\177ELF", 4) == 0);
    assert_tool(7, "%s --compile-only --arch sm_90 --emit-ptx /nonexistent/dir/x.ptx", kernel_path("saxpy.cu"));
}

static void test_stdin_and_json(void **state)
{
    (void)state;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "- --compile-only --arch sm_90 --json < %s", kernel_path("saxpy.cu"));
    assert_tool(0, "%s", cmd);
    assert_non_null(strstr(run_tool_output(), "{\"status\":\"ok\",\"exit_code\":0"));
    assert_non_null(strstr(run_tool_output(), "\"kernel\":\"saxpy\""));
    assert_non_null(strstr(run_tool_output(), "\"arch\":\"sm_90\""));
}

static void test_failures_exit_codes(void **state)
{
    (void)state;
    const char *bad = tmp_path("bad.cu"), *two = tmp_path("two.cu");
    FILE *f = fopen(bad, "w");
    fputs("extern \"C\" __global__ void k(int *p) { p[0] = undefined_name; }\n", f);
    fclose(f);
    f = fopen(two, "w");
    fputs("extern \"C\" __global__ void first() {}\nextern \"C\" __global__ void second() {}\n", f);
    fclose(f);
    assert_tool(3, "%s --compile-only --arch sm_90", bad);
    assert_non_null(strstr(run_tool_output(), "undefined_name"));
    assert_tool(3, "%s --compile-only --arch sm_90 --json", bad);
    assert_non_null(strstr(run_tool_output(), "\"status\":\"compile\""));
    assert_tool(2, "%s --compile-only --arch sm_90", two);
    assert_non_null(strstr(run_tool_output(), "first, second"));
    assert_tool(0, "%s --compile-only --arch sm_90 --kernel second", two);
    assert_tool(2, "%s --compile-only --arch sm_90", kernel_path("scale.cu"));
    assert_non_null(strstr(run_tool_output(), "is a template"));
    assert_tool(2, "%s --grid 0", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "--grid '0'"));
    assert_tool(7, "/nonexistent/k.cu --compile-only --arch sm_90");
    assert_tool(7, "%s --buf x=npy:/nonexistent/x.npy", kernel_path("saxpy.cu"));
    /* No driver: forced with a libcuda that does not exist. */
    assert_tool(4, "%s --buf x=f32:4 --arg buf:x", kernel_path("saxpy.cu"));
}

int main(void)
{
    /* The no-driver case needs a libcuda that cannot load, on any machine. */
    setenv("ASYNCRT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),        cmocka_unit_test(test_every_kernel_compiles_for_sm90),
        cmocka_unit_test(test_emit),        cmocka_unit_test(test_stdin_and_json),
        cmocka_unit_test(test_failures_exit_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
