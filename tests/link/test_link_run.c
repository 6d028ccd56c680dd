/* asyncrt-run with several sources and --link files (issue 27), without a
 * GPU: --compile-only and --emit-cubin on the linked image, the kernel found
 * in whichever source has it, link errors with the compile exit code, a
 * library for another arch, and --emit-lib's libraries. */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cubin_elf.h"
#include "link_jit.h"
#include "parity_file.h"
#include "run_tool.h"
#include "test_support.h"

static const char *src(const char *file)
{
    static char paths[4][4096];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/tests/link/kernels/%s", getenv("ASYNCRT_TEST_SOURCE_DIR"), file);
    return p;
}

/* The stage kernel's dynamic shared memory alignment in an emitted CUBIN. */
static uint64_t stage_alignment(const char *path)
{
    size_t size = 0;
    void *image = parity_read_file(path, &size);
    assert_non_null(image);
    asyncrt_cubin_kernel k[8];
    char why[256];
    int n = asyncrt__cubin_kernels(image, size, k, 8, why, sizeof why);
    uint64_t align = 0;
    for (int i = 0; i < n && i < 8; i++)
        if (!strcmp(k[i].name, "stage")) align = k[i].shared_align;
    free(image);
    return align;
}

static void two_sources(void **state)
{
    (void)state;
    /* the kernel is in the second source: found there, no --kernel needed */
    assert_tool(0, "'%s' '%s' --compile-only --arch sm_90 --emit-cubin '%s'", src("util.cu"), src("main.cu"),
                tmp_path("rdc.cubin"));
    assert_non_null(strstr(run_tool_output(), "compiled stage for sm_90 (CUBIN"));
    /* NVRTC and nvJitLink 13.1 keep the extern __shared__ __align__(128) without LTO; 13.0 does not, and says so. */
    bool kept = asyncrt__jitlink_keeps_extern_shared_align(asyncrt_nvrtc_version());
    assert_int_equal(strstr(run_tool_output(), "note: extern __shared__ smem") == NULL, kept);
    assert_int_equal(stage_alignment(tmp_path("rdc.cubin")), kept ? 128 : 16);
    assert_tool(0, "'%s' '%s' --lto --compile-only --arch sm_90 --emit-cubin '%s' -v", src("main.cu"), src("util.cu"),
                tmp_path("lto.cubin"));
    assert_non_null(strstr(run_tool_output(), "asyncrt-run: link of 2 sources and 0 files with LTO: "));
    assert_int_equal(stage_alignment(tmp_path("lto.cubin")), 128);
    assert_tool(0, "'%s' '%s' --lto --compile-only --arch sm_90 -v", src("main.cu"), src("util.cu"));
    assert_non_null(strstr(run_tool_output(), "with LTO: disk cache hit, no nvJitLink call"));
}

static void library_file(void **state)
{
    (void)state;
    /* util.cu's relocatable CUBIN as a library file, as nvcc -cubin -rdc=true would make it */
    asyncrt_context *ctx;
    assert_ok(NULL, asyncrt_context_create(&ctx));
    char *util = test_read_source_file("tests/link/kernels/util.cu");
    asyncrt_compile_options o = {.size = sizeof o,
                                 .arch = "sm_90", .options = (const char *[]){"-rdc=true"}, .option_count = 1};
    asyncrt_program *p = NULL;
    assert_ok(ctx, asyncrt_program_compile(ctx, "util.cu", util, &o, &p));
    size_t size;
    const void *image = asyncrt_program_image(p, &size);
    FILE *f = fopen(tmp_path("util.cubin"), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(image, 1, size, f), size);
    fclose(f);
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    free(util);
    assert_tool(0, "'%s' --link '%s' --compile-only --arch sm_90", src("main.cu"), tmp_path("util.cubin"));
    assert_tool(3, "'%s' --link '%s' --link '%s' --compile-only --arch sm_90", src("main.cu"), tmp_path("util.cubin"),
                tmp_path("util.cubin"));
    assert_non_null(strstr(run_tool_output(), "duplicate symbol '_Z5twicef'"));
    assert_tool(7, "'%s' --link /nonexistent/lib.a --compile-only --arch sm_90", src("main.cu"));
}

static void link_errors(void **state)
{
    (void)state;
    assert_tool(3, "'%s' --lto --compile-only --arch sm_90", src("main.cu"));
    assert_non_null(strstr(run_tool_output(), "_Z5twicef"));
    assert_tool(3, "'%s' '%s' '%s' --compile-only --arch sm_90", src("main.cu"), src("util.cu"), src("util_dup.cu"));
    assert_non_null(strstr(run_tool_output(), "duplicate symbol '_Z5twicef', defined in"));
    assert_tool(2, "'%s' '%s' --compile-only --arch sm_90 --emit-ptx x.ptx", src("main.cu"), src("util.cu"));
    assert_tool(0, "--help");
    assert_non_null(strstr(run_tool_output(), "--link FILE"));
    assert_non_null(strstr(run_tool_output(), "--lto"));
}

static const char *nvcc_path(void)
{
    struct stat st;
    return ASYNCRT_TEST_NVCC[0] && stat(ASYNCRT_TEST_NVCC, &st) == 0 ? ASYNCRT_TEST_NVCC : NULL;
}

/* An nvcc -rdc object for sm_80, bare and in an archive, linked for sm_90:
 * exit 3 naming the file (the member) and its arch, before nvJitLink (whose
 * INVALID_INPUT was exit 2); for sm_80 both link. */
static void wrong_arch_library(void **state)
{
    (void)state;
    const char *nvcc = nvcc_path();
    if (!nvcc) {
        print_message("no nvcc here: nvcc-built objects not tested\n");
        return;
    }
    char *cmd = NULL;
    const char *obj = tmp_path("util80.o"), *lib = tmp_path("libutil80.a");
    assert_true(asprintf(&cmd, "'%s' -arch=sm_80 -rdc=true -c '%s' -o '%s' && ar rcs '%s' '%s'", nvcc, src("util.cu"),
                         obj, lib, obj) > 0);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    assert_tool(3, "'%s' --link '%s' --compile-only --arch sm_90", src("main.cu"), lib);
    assert_non_null(strstr(run_tool_output(), "libutil80.a (library) is built for sm_80 (members: util80.o sm_80), "
                                              "this link for sm_90"));
    assert_tool(3, "'%s' --link '%s' --compile-only --arch sm_90", src("main.cu"), obj);
    assert_non_null(strstr(run_tool_output(), "util80.o (host object) is built for sm_80, this link for sm_90"));
    assert_tool(0, "'%s' --link '%s' --compile-only --arch sm_80", src("main.cu"), lib);
    assert_tool(0, "'%s' --link '%s' --compile-only --arch sm_80", src("main.cu"), obj);
}

/* --emit-lib: util.cu (no kernel) as a relocatable CUBIN, a .o and LTO-IR,
 * each linked into main.cu; the link's -v wording and --json reason. */
static void emit_lib(void **state)
{
    (void)state;
    assert_tool(0, "'%s' --emit-lib '%s' --arch sm_90", src("util.cu"), tmp_path("util.cubin"));
    assert_non_null(strstr(run_tool_output(), "library "));
    assert_non_null(strstr(run_tool_output(), "for sm_90 (relocatable CUBIN"));
    assert_tool(0, "'%s' --emit-lib '%s' --arch sm_90 --json", src("util.cu"), tmp_path("util.o"));
    assert_non_null(strstr(run_tool_output(), "\"image\":\"cubin\""));
    assert_non_null(strstr(run_tool_output(), "\"library\":"));
    assert_tool(0, "'%s' --emit-lib '%s' --arch sm_90", src("util.cu"), tmp_path("util.ltoir"));
    assert_non_null(strstr(run_tool_output(), "for sm_90 (LTO-IR"));
    /* the reason on a link the cache has (the first run stores it where it had not) and on one it cannot have */
    assert_tool(0, "'%s' --link '%s' --compile-only --arch sm_90", src("main.cu"), tmp_path("util.cubin"));
    for (int cached = 1; cached >= 0; cached--) {
        assert_tool(0, "'%s' --link '%s' --compile-only --arch sm_90 -v --json", src("main.cu"), tmp_path("util.cubin"));
        assert_non_null(strstr(run_tool_output(), "asyncrt-run: link of 1 source and 1 file: "));
        assert_non_null(strstr(run_tool_output(), cached ? "disk cache hit" : "cache miss, nvJitLink linked"));
        assert_non_null(strstr(run_tool_output(), "\"arch_reason\":\"sm_90: explicit target\""));
        setenv("ASYNCRT_CACHE", "0", 1);
    }
    unsetenv("ASYNCRT_CACHE");
    assert_tool(0, "'%s' --link '%s' --compile-only --arch sm_90", src("main.cu"), tmp_path("util.o"));
    assert_tool(0, "'%s' --link '%s' --lto --compile-only --arch sm_90 -v", src("main.cu"), tmp_path("util.ltoir"));
    assert_non_null(strstr(run_tool_output(), "asyncrt-run: link of 1 source and 1 file with LTO: "));
    /* the rules: a name that says the kind, sm_XY, one source, nothing of a run */
    assert_tool(2, "'%s' --emit-lib '%s' --arch sm_90", src("util.cu"), tmp_path("util.bin"));
    assert_non_null(strstr(run_tool_output(), "the name chooses the kind"));
    assert_tool(2, "'%s' --emit-lib '%s' --arch compute_90", src("util.cu"), tmp_path("util.cubin"));
    assert_non_null(strstr(run_tool_output(), "needs --arch sm_XY"));
    assert_tool(2, "'%s' '%s' --emit-lib '%s' --arch sm_90", src("util.cu"), src("main.cu"), tmp_path("u.cubin"));
    assert_tool(2, "'%s' --emit-lib '%s' --arch sm_90 --kernel k", src("util.cu"), tmp_path("u.cubin"));
    assert_tool(0, "--help");
    assert_non_null(strstr(run_tool_output(), "--emit-lib FILE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_sources),
        cmocka_unit_test(library_file),
        cmocka_unit_test(link_errors),
        cmocka_unit_test(wrong_arch_library),
        cmocka_unit_test(emit_lib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
