/* The assembler's side of compact images: NVRTC's options as nvPTXCompiler
 * takes them (ptx_mirror.h), where the loader library is (ptx_assemble.h),
 * and opening it only where its version is NVRTC's, on fake loaders
 * (fake_ptxcompiler.c); then, where tools/setup-ptxcompiler.sh built the real
 * one beside the NVRTC this process uses, NVRTC's PTX through it gives
 * NVRTC's CUBIN byte for byte, with each mirrored option. */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvrtc_direct.h"
#include "ptx_assemble.h"
#include "ptx_mirror.h"
#include "test_support.h"

/* The mirrored options, joined by ' ', or "refused: WHY". */
static char *mirror(const char *const *options, size_t n)
{
    char **out = NULL, why[256], *text = NULL;
    size_t count = 0;
    if (!asyncrt__ptx_mirror_options(options, n, &out, &count, why, sizeof why)) {
        assert_null(out);
        assert_int_equal(asprintf(&text, "refused: %s", why) > 0, 1);
        return text;
    }
    assert_null(out[count]);
    size_t size = 1;
    for (size_t i = 0; i < count; i++) size += strlen(out[i]) + 1;
    text = calloc(1, size);
    for (size_t i = 0; i < count; i++) strcat(strcat(text, i ? " " : ""), out[i]);
    asyncrt__ptx_options_free(out);
    return text;
}

#define MIRRORS(want, ...)                                                                                             \
    do {                                                                                                               \
        const char *o_[] = {__VA_ARGS__};                                                                              \
        char *got_ = mirror(o_, sizeof o_ / sizeof *o_);                                                               \
        if (strstr(got_, want) != got_ || strlen(got_) != strlen(want))                                                \
            fail_msg("%s: mirrored as \"%s\", expected \"%s\"", #__VA_ARGS__, got_, want);                             \
        free(got_);                                                                                                    \
    } while (0)
#define REFUSES(phrase, ...)                                                                                           \
    do {                                                                                                               \
        const char *o_[] = {__VA_ARGS__};                                                                              \
        char *got_ = mirror(o_, sizeof o_ / sizeof *o_);                                                               \
        if (strncmp(got_, "refused: ", 9) != 0 || !strstr(got_, phrase))                                               \
            fail_msg("%s: \"%s\", expected a refusal saying \"%s\"", #__VA_ARGS__, got_, phrase);                      \
        free(got_);                                                                                                    \
    } while (0)

static void options_mirror_as_measured(void **state)
{
    (void)state;
    /* asyncrt's own options, precompiled headers and trace included: the target alone. */
    MIRRORS("--gpu-name=sm_90", "-arch=sm_90", "-std=c++17", "-default-device", "-I/usr/local/cuda/include",
            "-I/usr/local/cuda/include/cccl", "-DN=4", "-UX", "-pch", "--pch-dir=/tmp/p", "--pch-messages=false",
            "-diag-suppress=630", "-fdevice-time-trace=/tmp/t/trace");
    MIRRORS("--gpu-name=sm_90a", "--gpu-architecture", "sm_90a");
    MIRRORS("--gpu-name=sm_100f", "-arch", "sm_100f");
    MIRRORS("--gpu-name=sm_90 --generate-line-info", "-arch=sm_90", "-lineinfo");
    MIRRORS("--gpu-name=sm_90 --device-debug --dont-merge-basicblocks --return-at-end", "-arch=sm_90", "-G");
    MIRRORS("--gpu-name=sm_90 --device-debug --dont-merge-basicblocks --return-at-end --generate-line-info",
            "-arch=sm_90", "-lineinfo", "--device-debug");
    MIRRORS("--gpu-name=sm_90 --generate-line-info", "-arch=sm_90", "-G", "-dopt=on");
    MIRRORS("--gpu-name=sm_90", "-arch=sm_90", "-dopt", "on");
    MIRRORS("--gpu-name=sm_90 --maxrregcount=32", "-arch=sm_90", "-maxrregcount", "32");
    MIRRORS("--gpu-name=sm_90 -O1 --allow-expensive-optimizations=true", "-arch=sm_90", "-Xptxas", "-O1",
            "--ptxas-options=--allow-expensive-optimizations=true");
    MIRRORS("--gpu-name=sm_90 --fmad=false", "-arch=sm_90", "--fmad=false", "-fmad=false");
    MIRRORS("--gpu-name=sm_90", "-arch=sm_90", "--fmad=true", "--use_fast_math", "-ftz=true", "-prec-div=false",
            "-prec-sqrt=false", "-ewp", "--extra-device-vectorization", "-Xnvvm", "-opt=3");
    MIRRORS("--gpu-name=sm_90 -Ofc=max", "-arch=sm_90", "-Ofc", "max");
    MIRRORS("--gpu-name=sm_90 --split-compile=2", "-arch=sm_90", "--split-compile=2");
    MIRRORS("--gpu-name=sm_90 --device-stack-protector=true", "-arch=sm_90", "-dsp=true");
    MIRRORS("--gpu-name=sm_90", "-arch=sm_90", "--device-stack-protector=false", "-rdc=false");
}

static void options_without_a_checked_mirror_are_refused_by_name(void **state)
{
    (void)state;
    REFUSES("no -arch=sm_XY", "-std=c++17");
    REFUSES("virtual arch", "-arch=compute_90");
    REFUSES("two targets", "-arch=sm_90", "-arch=sm_80");
    REFUSES("not an sm_XY target", "-arch=sm_9x0");
    REFUSES("relocatable code", "-arch=sm_90", "-rdc=true");
    REFUSES("LTO-IR", "-arch=sm_90", "-dlto");
    REFUSES("option --frobnicate has no nvPTXCompiler mirror", "-arch=sm_90", "--frobnicate");
    REFUSES("needs a value", "-arch=sm_90", "-maxrregcount");
    REFUSES("takes no value", "-arch=sm_90", "-lineinfo=true");
    REFUSES("not a register count", "-arch=sm_90", "--maxrregcount=lots");
    REFUSES("fmad is true or false", "-arch=sm_90", "--fmad=maybe");
    REFUSES("-Ofc is 0, min, mid or max", "-arch=sm_90", "-Ofc=fast");
    REFUSES("only -dopt=on", "-arch=sm_90", "-dopt=off");
    REFUSES("an empty ptxas option", "-arch=sm_90", "-Xptxas=");
    REFUSES("not an option", "-arch=sm_90", "file.cu");
}

static void the_loader_is_looked_for_beside_nvrtc(void **state)
{
    (void)state;
    char path[4096], why[512];
    assert_true(asyncrt__ptxcompiler_path("/x/mine.so", "/anything", path, sizeof path, why, sizeof why));
    assert_string_equal(path, "/x/mine.so");
    char *dir = test_make_temp_dir("ptxc-path"), *nvrtc = NULL, *want = NULL;
    assert_true(asprintf(&nvrtc, "%s/libnvrtc.so.13", dir) > 0);
    assert_true(asprintf(&want, "%s/%s", dir, ASYNCRT_PTXCOMPILER_FILE) > 0);
    FILE *f = fopen(nvrtc, "w");
    assert_non_null(f);
    fclose(f);
    assert_true(asyncrt__ptxcompiler_path("", nvrtc, path, sizeof path, why, sizeof why));
    char real[4096];
    assert_non_null(realpath(dir, real));
    assert_true(strstr(path, real) == path && strstr(path, ASYNCRT_PTXCOMPILER_FILE));
    assert_false(asyncrt__ptxcompiler_path(NULL, "libnvrtc.so.13", path, sizeof path, why, sizeof why));
    assert_non_null(strstr(why, "compact images off: NVRTC's file is not known"));
    unlink(nvrtc);
    rmdir(dir);
    free(dir);
    free(nvrtc);
    free(want);
}

static const char *fake(const char *variable)
{
    const char *path = getenv(variable);
    if (!path) fail_msg("%s is not set (ctest sets it)", variable);
    return path;
}

static void open_fails(const char *path, const asyncrt_lib_version *v, const char *phrase)
{
    asyncrt_ptxcompiler *c = (asyncrt_ptxcompiler *)1;
    char why[1024] = "";
    if (asyncrt__ptxcompiler_open(path, v, &c, why, sizeof why)) fail_msg("%s opened", path);
    assert_null(c);
    if (!strstr(why, phrase) || strncmp(why, "compact images off: ", 20) != 0)
        fail_msg("%s: \"%s\" does not say \"%s\"", path, why, phrase);
}

static void a_loader_opens_only_at_nvrtc_exact_version(void **state)
{
    (void)state;
    asyncrt_lib_version v131 = {13, 1, 115}, v130 = {13, 0, 88}, v13_1 = {13, 1, -1};
    open_fails("/nonexistent/libasyncrt_ptxcompiler.so", &v131, "no nvPTXCompiler at /nonexistent");
    open_fails("/tmp", &v131, "is not a regular file");
    char *text = NULL;
    assert_true(asprintf(&text, "%s/CMakeLists.txt", getenv("ASYNCRT_TEST_SOURCE_DIR")) > 0);
    open_fails(text, &v131, "cannot open");
    free(text);
    open_fails(fake("ASYNCRT_TEST_FAKE_PTXC_BARE"), &v131, "lacks asyncrt_ptxcompiler_version");
    open_fails(fake("ASYNCRT_TEST_FAKE_PTXC_LIAR"), &v131, "says it is 13.1.115 but its nvPTXCompiler is 13.0");
    open_fails(fake("ASYNCRT_TEST_FAKE_PTXC"), &v130, "is not NVRTC's version 13.0.88");
    asyncrt_lib_version v13_0 = {13, 0, -1}, v13 = {13, -1, -1};
    open_fails(fake("ASYNCRT_TEST_FAKE_PTXC"), &v13_0, "is not NVRTC's version 13.0");
    open_fails(fake("ASYNCRT_TEST_FAKE_PTXC"), &v13, "NVRTC's version is not known (13");
    open_fails(fake("ASYNCRT_TEST_FAKE_PTXC"), NULL, "NVRTC's version is not known");
    asyncrt_ptxcompiler *c = NULL;
    char why[512];
    /* A toolkit's NVRTC names no patch level: major and minor, then each PTX's own header. */
    assert_true(asyncrt__ptxcompiler_open(fake("ASYNCRT_TEST_FAKE_PTXC"), &v13_1, &c, why, sizeof why));
    assert_false(asyncrt__ptxcompiler_matches(c, &v13_1));
    assert_true(asyncrt__ptxcompiler_matches(c, &v131));
    asyncrt__ptxcompiler_close(c);
    c = NULL;
    assert_true(asyncrt__ptxcompiler_open(fake("ASYNCRT_TEST_FAKE_PTXC"), &v131, &c, why, sizeof why));
    assert_string_equal(asyncrt__ptxcompiler_version(c), "13.1.115");
    assert_string_equal(asyncrt__ptxcompiler_file(c), fake("ASYNCRT_TEST_FAKE_PTXC"));
    asyncrt_lib_version v114 = {13, 1, 114};
    assert_true(asyncrt__ptxcompiler_matches(c, &v131));
    assert_false(asyncrt__ptxcompiler_matches(c, &v114));
    assert_false(asyncrt__ptxcompiler_matches(c, &v13_1));
    asyncrt__ptxcompiler_close(c);
    asyncrt__ptxcompiler_close(NULL);
}

static void assembly_passes_the_options_and_reports_failures(void **state)
{
    (void)state;
    asyncrt_lib_version v131 = {13, 1, 115};
    asyncrt_ptxcompiler *c = NULL;
    char why[512];
    assert_true(asyncrt__ptxcompiler_open(fake("ASYNCRT_TEST_FAKE_PTXC"), &v131, &c, why, sizeof why));
    const char *options[] = {"--gpu-name=sm_90", "--fmad=false"};
    static const char ptx[] = ".version 9.1\n"; /* with its NUL, as NVRTC's image has it */
    void *cubin = NULL;
    size_t size = 0;
    assert_true(asyncrt__ptx_assemble(c, ptx, sizeof ptx, options, 2, &cubin, &size, why, sizeof why));
    static const char want[] = "FAKE|--gpu-name=sm_90|--fmad=false|.version 9.1\n";
    assert_int_equal(size, sizeof want - 1);
    assert_memory_equal(cubin, want, size);
    free(cubin);
    assert_false(asyncrt__ptx_assemble(c, "fail", 4, options, 2, &cubin, &size, why, sizeof why));
    assert_null(cubin);
    assert_non_null(strstr(why, "nvPTXCompilerCompile failed (nvPTXCompileResult 3): ptxas fatal   : fake failure"));
    /* A handle that will not go: the CUBIN is not trusted either. */
    assert_false(asyncrt__ptx_assemble(c, "stuck", 5, options, 2, &cubin, &size, why, sizeof why));
    assert_null(cubin);
    assert_int_equal(size, 0);
    assert_non_null(strstr(why, "nvPTXCompilerDestroy failed"));
    asyncrt__ptxcompiler_close(c);
}

static void nvrtc_version_is_read_from_its_ptx(void **state)
{
    (void)state;
    asyncrt_lib_version v;
    const char *ptx = "//\n// Generated by NVIDIA NVVM Compiler\n//\n// Compiler Build ID: CL-36424714\n"
                      "// Cuda compilation tools, release 13.0, V13.0.88\n// Based on NVVM 7.0.1\n//\n\n.version 9.0\n";
    assert_true(asyncrt__ptx_made_by(ptx, strlen(ptx), &v));
    assert_int_equal(v.major, 13);
    assert_int_equal(v.minor, 0);
    assert_int_equal(v.patch, 88);
    const char *none = ".version 9.0\n.target sm_90\n";
    assert_false(asyncrt__ptx_made_by(none, strlen(none), &v));
    const char *bad = "// Cuda compilation tools, release 13.0, V13.x\n";
    assert_false(asyncrt__ptx_made_by(bad, strlen(bad), &v));
    const char *cut = "// Cuda compilation tools, release 13.0, V13.0.88"; /* no end of line */
    assert_false(asyncrt__ptx_made_by(cut, strlen(cut), &v));
}

/* ---- the real loader, where the set-up built it for this NVRTC --------------- */

static const char *k_source = "#include <cuda/std/limits>\n"
                              "__device__ float scale(float a, float b, float c) { return a * b + c; }\n"
                              "extern \"C\" __global__ void k(float *x, int n, float s) {\n"
                              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "    if (i < n) x[i] = scale(x[i], s, 1.0f) / x[i + 1] + sqrtf(x[i + 2]) +\n"
                              "                      cuda::std::numeric_limits<int>::max();\n"
                              "}\n";

/* The real loader for NVRTC's version, or NULL (and why printed). */
static asyncrt_ptxcompiler *real_loader(const asyncrt_nvrtc **nv)
{
    char why[1024];
    if (asyncrt__nvrtc_load(nv, why, sizeof why) != ASYNCRT_SUCCESS) {
        print_message("no NVRTC: %s\n", why);
        return NULL;
    }
    nvrtc_options o;
    nvrtc_default_options("sm_90", &o);
    nvrtc_out out = {0};
    if (!nvrtc_compile(*nv, "k.cu", k_source, o.items, o.count, "", &out)) fail_msg("%s", out.error);
    asyncrt_ptxcompiler *c = nvrtc_ptxcompiler(*nv, out.ptx, out.ptx_size);
    nvrtc_out_free(&out);
    return c;
}

static void the_real_loader_gives_nvrtc_cubin_with_each_mirrored_option(void **state)
{
    (void)state;
    const asyncrt_nvrtc *nv = NULL;
    asyncrt_ptxcompiler *c = real_loader(&nv);
    if (!c) skip();
    /* The options of the table in ptx_mirror.h, one set at a time. */
    static const char *const sets[][4] = {
        {NULL},
        {"-lineinfo", NULL},
        {"-G", NULL},
        {"-G", "-dopt=on", NULL},
        {"-G", "-lineinfo", NULL},
        {"--maxrregcount=16", NULL},
        {"-Xptxas", "-O1", NULL},
        {"--fmad=false", NULL},
        {"-Ofc=max", NULL},
        {"--split-compile=2", NULL},
        {"--device-stack-protector=true", NULL},
        {"--use_fast_math", NULL},
    };
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        nvrtc_options o;
        nvrtc_default_options("sm_90", &o);
        for (size_t i = 0; sets[s][i]; i++) o.items[o.count++] = sets[s][i];
        nvrtc_out out = {0};
        if (!nvrtc_compile(nv, "k.cu", k_source, o.items, o.count, "", &out)) fail_msg("%s", out.error);
        char **mirrored = NULL, why[512];
        size_t count = 0, size = 0;
        void *cubin = NULL;
        assert_true(asyncrt__ptx_mirror_options(o.items, o.count, &mirrored, &count, why, sizeof why));
        if (!asyncrt__ptx_assemble(c, out.ptx, out.ptx_size, (const char *const *)mirrored, count, &cubin, &size, why,
                                   sizeof why))
            fail_msg("set %zu: %s", s, why);
        if (size != out.cubin_size || memcmp(cubin, out.cubin, size) != 0)
            fail_msg("set %zu (%s ...): nvPTXCompiler's CUBIN is not NVRTC's", s, sets[s][0] ? sets[s][0] : "none");
        free(cubin);
        asyncrt__ptx_options_free(mirrored);
        nvrtc_out_free(&out);
    }
    asyncrt__ptxcompiler_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_mirror_as_measured),
        cmocka_unit_test(options_without_a_checked_mirror_are_refused_by_name),
        cmocka_unit_test(the_loader_is_looked_for_beside_nvrtc),
        cmocka_unit_test(a_loader_opens_only_at_nvrtc_exact_version),
        cmocka_unit_test(assembly_passes_the_options_and_reports_failures),
        cmocka_unit_test(nvrtc_version_is_read_from_its_ptx),
        cmocka_unit_test(the_real_loader_gives_nvrtc_cubin_with_each_mirrored_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
