/* asyncrt-run end to end without a GPU: help, compile-only for every test
 * kernel, PTX/CUBIN emission, stdin, and the exit codes of failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "run_tool.h"
#include "test_support.h"

static void test_help(void **state)
{
    (void)state;
    assert_tool(0, "--help");
    assert_non_null(strstr(run_tool_output(), "Exit codes"));
    assert_non_null(strstr(run_tool_output(), "--tmap NAME=BUFFER:box="));
    assert_non_null(strstr(run_tool_output(), "--then"));
    assert_non_null(strstr(run_tool_output(), "tmapptr:NAME"));
    assert_non_null(strstr(run_tool_output(), "struct:T:V"));
    assert_non_null(strstr(run_tool_output(), "the same for asyncrt-run, asyncrt-probe, asyncrt-bench,\nasyncrt-cache and asyncrt-bundle)"));
    assert_tool(0, "--version");
    /* "asyncrt-run X (libasyncrt X, NVRTC 13.0)": NVRTC as major.minor, never 13000. */
    const char *v = strstr(run_tool_output(), "NVRTC ");
    assert_non_null(strstr(run_tool_output(), "(libasyncrt "));
    assert_non_null(v);
    int major = 0, minor = -1;
    char close = 0;
    assert_int_equal(sscanf(v, "NVRTC %d.%d%c", &major, &minor, &close), 3);
    assert_true(major >= 11 && major < 100 && minor >= 0 && minor < 10 && close == ')');
    /* A usage error says "see --help" once. */
    assert_tool(2, "--bogus");
    const char *first = strstr(run_tool_output(), "--help");
    assert_non_null(first);
    assert_null(strstr(first + 1, "--help"));
}

static void test_every_kernel_compiles_for_sm90(void **state)
{
    (void)state;
    static const char *kernels[] = {"saxpy.cu",  "pipeline.cu",   "tma_bulk_1d.cu", "tma_2d.cu", "ws_mbarrier.cu",
                                    "reduce.cu", "grid_sync.cu",  "tma_ptr.cu",     "struct_arg.cu"};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        assert_tool(0, "%s --compile-only --arch sm_90", kernel_path(kernels[i]));
        assert_non_null(strstr(run_tool_output(), "for sm_90 (CUBIN"));
    }
    assert_tool(0, "%s --compile-only --arch sm_90 --kernel 'scale<double>'", kernel_path("scale.cu"));
    /* Several kernels of one file, one per launch. */
    assert_tool(0, "%s --compile-only --arch sm_90 --kernel produce --then --kernel consume --pdl", kernel_path("pdl.cu"));
    assert_non_null(strstr(run_tool_output(), "compiled produce"));
    assert_non_null(strstr(run_tool_output(), "compiled consume"));
    assert_tool(0, "%s --compile-only --arch sm_90 --kernel 'scale_n<float, 4>'", kernel_path("template_params.cu"));
    /* The wait that --help suggests for --pdl compiles under this NVRTC. */
    assert_tool(0, "--help");
    const char *wait = strstr(run_tool_output(), "asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");");
    assert_non_null(wait);
    FILE *f = fopen(tmp_path("pdl_wait.cu"), "w");
    assert_non_null(f);
    fprintf(f, "extern \"C\" __global__ void k(int *a) { %.*s a[0] = 1; }\n", (int)strcspn(wait, "\n"), wait);
    fclose(f);
    assert_tool(0, "%s --compile-only --arch sm_90 --buf a=i32:1 --kernel k --arg buf:a --then --kernel k --pdl --arg buf:a",
                tmp_path("pdl_wait.cu"));
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
    /* The PTX is a second compile, for compute_90: -v says so, and it is cached (issue 24). */
    assert_non_null(strstr(run_tool_output(), "--emit-ptx: a second compile, for compute_90: "));
    assert_tool(0, "%s --compile-only --arch sm_90 --emit-ptx %s -v", kernel_path("saxpy.cu"), ptx);
    if (!strstr(run_tool_output(), "--emit-ptx: a second compile, for compute_90: disk cache hit"))
        fail_msg("the PTX compile was not a cache hit the second time:\n%s", run_tool_output());
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
    /* No driver: forced with a libcuda that does not exist; the hint says how to compile anyway. */
    assert_tool(4, "%s --buf x=f32:4 --arg buf:x", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "--compile-only --arch sm_XY"));
    assert_tool(4, "%s --json", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "\"status\":\"no-device\",\"exit_code\":4"));
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) fail_msg("cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Templates: the same hint with or without --kernel, with the real parameter
 * list; no raw "__nv_name_map" errors; an explicit instantiation is no kernel
 * named after its type. */
static void test_template_messages(void **state)
{
    (void)state;
    const char *k = kernel_path("template_params.cu");
    assert_tool(2, "%s --compile-only --arch sm_90", k);
    assert_non_null(strstr(run_tool_output(), "is a template <typename T, int N>"));
    assert_non_null(strstr(run_tool_output(), "--kernel 'scale_n<float, 4>'"));
    assert_null(strstr(run_tool_output(), "'float'"));
    assert_tool(2, "%s --compile-only --arch sm_90 --kernel scale_n", k);
    assert_non_null(strstr(run_tool_output(), "is a template <typename T, int N>"));
    assert_null(strstr(run_tool_output(), "__nv_name_map"));
    /* A real error in a template file: only that error, no __nv_name_map ones after it. */
    const char *bad = tmp_path("bad_template.cu");
    write_text(bad, "template <typename T>\n__global__ void scale(T *d, undefined_type n) { d[0] = 1; }\n");
    assert_tool(3, "%s --compile-only --arch sm_90 --kernel 'scale<float>'", bad);
    assert_non_null(strstr(run_tool_output(), "undefined_type"));
    assert_null(strstr(run_tool_output(), "__nv_name_map"));
    /* A name NVRTC cannot resolve: a usage error with NVRTC's reason and the file's kernels. */
    assert_tool(2, "%s --compile-only --arch sm_90 --kernel nosuch", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "identifier \"nosuch\" is undefined"));
    assert_non_null(strstr(run_tool_output(), "has: saxpy"));
    assert_null(strstr(run_tool_output(), "__nv_name_map"));
}

/* --json stays valid UTF-8 when a path holds raw bytes. */
static void test_json_escapes_raw_bytes(void **state)
{
    (void)state;
    const char *odd = tmp_path("k\xff\xfe.cu");
    write_text(odd, "extern \"C\" __global__ void k(int *p) { p[0] = 1; }\n");
    assert_tool(0, "'%s' --compile-only --arch sm_90 --json", odd);
    const char *out = run_tool_output();
    assert_non_null(strstr(out, "k\\ufffd\\ufffd.cu\""));
    for (const unsigned char *p = (const unsigned char *)out; *p; p++)
        if (*p >= 0x80) fail_msg("raw byte 0x%02x in the JSON output:\n%s", *p, out);
}

static void test_warnings_shown(void **state)
{
    (void)state;
    const char *w = tmp_path("warn.cu");
    write_text(w, "__global__ void k(int *p) { int unused_variable = 3; p[0] = 1; }\n");
    assert_tool(0, "%s --compile-only --arch sm_90", w);
    assert_non_null(strstr(run_tool_output(), "warning"));
    assert_non_null(strstr(run_tool_output(), "unused_variable"));
}

/* ASYNCRT_LOG must be exactly 0, 1 or 2: "2junk" is no request, and the
 * library then prints nothing. */
static void test_log_variable(void **state)
{
    (void)state;
    assert_tool(0, "%s --compile-only --arch sm_90 --emit-ptx /dev/null", kernel_path("saxpy.cu"));
    setenv("ASYNCRT_LOG", "2", 1);
    assert_tool(0, "%s --compile-only --arch sm_90", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "asyncrt: "));
    static const char *junk[] = {"2junk", "-1", "", "22", " 2", "3"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        setenv("ASYNCRT_LOG", junk[i], 1);
        assert_tool(0, "%s --compile-only --arch sm_90", kernel_path("saxpy.cu"));
        if (strstr(run_tool_output(), "asyncrt: ")) fail_msg("ASYNCRT_LOG='%s' turned logging on", junk[i]);
    }
    unsetenv("ASYNCRT_LOG");
    /* -v says when the cache directory is skipped (the library's warning is -vv's). */
    const char *open_dir = tmp_path("open-cache");
    assert_int_equal(mkdir(open_dir, 0700), 0);
    assert_int_equal(chmod(open_dir, 0777), 0);
    const char *cache = getenv("ASYNCRT_CACHE_DIR");
    char *saved = cache ? strdup(cache) : NULL;
    setenv("ASYNCRT_CACHE_DIR", open_dir, 1);
    assert_tool(0, "%s --compile-only --arch sm_90 -v", kernel_path("saxpy.cu"));
    assert_non_null(strstr(run_tool_output(), "asyncrt-run: no disk cache: "));
    assert_non_null(strstr(run_tool_output(), "has mode 0777: writable by others"));
    assert_tool(0, "%s --compile-only --arch sm_90", kernel_path("saxpy.cu"));
    assert_null(strstr(run_tool_output(), "no disk cache"));
    assert_int_equal(chmod(open_dir, 0700), 0);
    assert_tool(0, "%s --compile-only --arch sm_90 -v", kernel_path("saxpy.cu"));
    assert_null(strstr(run_tool_output(), "no disk cache"));
    if (saved) setenv("ASYNCRT_CACHE_DIR", saved, 1);
    else unsetenv("ASYNCRT_CACHE_DIR");
    free(saved);
}

/* Inputs that cannot fool the tool, before any GPU is needed. */
static void test_inputs_refused(void **state)
{
    (void)state;
    const char *saxpy = kernel_path("saxpy.cu");
    assert_tool(7, "%s --buf x=npy:/dev/zero", saxpy);
    assert_non_null(strstr(run_tool_output(), "not a regular file"));
    /* An f32 file holding NaN, 1e10 and 1.5 cannot fill an i32 buffer. */
    float values[3] = {1.5f, NAN, 1e10f};
    unsigned long long shape[1] = {3};
    write_npy_or_fail(tmp_path("nan.npy"), RUN_F32, shape, 1, values);
    assert_tool(2, "%s --buf x=i32:3:npy=%s", saxpy, tmp_path("nan.npy"));
    assert_non_null(strstr(run_tool_output(), "element 1: nan cannot be stored in i32"));
    values[1] = 0;
    write_npy_or_fail(tmp_path("big.npy"), RUN_F32, shape, 1, values);
    assert_tool(2, "%s --buf x=i32:3:npy=%s", saxpy, tmp_path("big.npy"));
    assert_non_null(strstr(run_tool_output(), "element 2: 10000000000 is out of range for i32"));
    /* --out over the --expect file under another spelling. */
    write_npy_or_fail(tmp_path("ref.npy"), RUN_F32, shape, 1, values);
    assert_tool(2, "%s --buf y=f32:3 --out y=%s/%s --expect y=%s", saxpy, tmp_path("."),
                strrchr(tmp_path("ref.npy"), '/') + 1, tmp_path("ref.npy"));
    assert_non_null(strstr(run_tool_output(), "are the same file"));
    /* The reference is untouched. */
    run_npy npy;
    void *storage;
    char err[512];
    if (!run_npy_read(tmp_path("ref.npy"), &npy, &storage, err, sizeof err)) fail_msg("%s", err);
    assert_memory_equal(npy.data, values, sizeof values);
    free(storage);
}

/* --compile-only checks what a run would check before the device: the exit
 * code of each case is the run's (tools/run/README.md, "--compile-only"). */
static void test_compile_only_checks_the_command_line(void **state)
{
    (void)state;
    const char *saxpy = kernel_path("saxpy.cu");
    const char *args = "--arg f32:2 --arg buf:x --arg buf:y --arg i32:4";
    unsigned long long shape[1] = {4};
    float values[4] = {1, 2, 3, 4};
    write_npy_or_fail(tmp_path("four.npy"), RUN_F32, shape, 1, values);
    write_text(tmp_path("not.npy"), "this is not a .npy file\n");
    const char *ok = "--compile-only --arch sm_90 --buf x=f32:4 --buf y=f32:4";
    /* the whole command line, valid: compiles, runs nothing, writes nothing */
    assert_tool(0, "%s %s %s --expect y=%s --out x=%s --repeat 3", saxpy, ok, args, tmp_path("four.npy"),
                tmp_path("never.npy"));
    assert_int_equal(access(tmp_path("never.npy"), F_OK), -1);
    /* the three cases, and --expect's */
    assert_tool(7, "%s --compile-only --arch sm_90 --buf x=f32:1024:npy=/nonexistent.npy", saxpy);
    assert_non_null(strstr(run_tool_output(), "--buf x: /nonexistent.npy: No such file or directory"));
    assert_tool(7, "%s --compile-only --arch sm_90 --buf x=npy:%s", saxpy, tmp_path("not.npy"));
    assert_non_null(strstr(run_tool_output(), "no \\x93NUMPY magic"));
    assert_tool(2, "%s %s --arg buf:x --arg buf:y", saxpy, ok);
    assert_non_null(strstr(run_tool_output(), "kernel 'saxpy' declares 4 parameters in the source, but the command "
                                              "line gives 2 arguments"));
    assert_non_null(strstr(run_tool_output(), "--compile-only asks no driver for parameter sizes"));
    assert_tool(7, "%s %s %s --expect y=%s", saxpy, ok, args, tmp_path("not.npy"));
    assert_non_null(strstr(run_tool_output(), "--expect y: "));
    assert_tool(2, "%s %s %s --expect y=%s", saxpy, "--compile-only --arch sm_90 --buf x=f32:4 --buf y=f32:8", args,
                tmp_path("four.npy"));
    assert_non_null(strstr(run_tool_output(), "holds 4 elements but the buffer has 8"));
    /* counts per launch, offsets, --out directories, values that do not fit */
    assert_tool(2, "%s %s %s --then --kernel saxpy --arg f32:2", saxpy, ok, args);
    assert_non_null(strstr(run_tool_output(), "gives 1 argument: f32:2"));
    assert_tool(2, "%s %s --arg f32:2 --arg buf:x --arg buf:y+5 --arg i32:4", saxpy, ok);
    assert_non_null(strstr(run_tool_output(), "--arg buf:y+5: offset 20 bytes is past the end of buffer y"));
    assert_tool(7, "%s %s %s --out y=/nonexistent/dir/y.npy", saxpy, ok, args);
    assert_non_null(strstr(run_tool_output(), "--out /nonexistent/dir/y.npy: cannot write into /nonexistent/dir"));
    values[1] = NAN;
    write_npy_or_fail(tmp_path("nan4.npy"), RUN_F32, shape, 1, values);
    assert_tool(2, "%s --compile-only --arch sm_90 --buf x=i32:4:npy=%s --buf y=f32:4 %s", saxpy, tmp_path("nan4.npy"),
                args);
    assert_non_null(strstr(run_tool_output(), "element 1: nan cannot be stored in i32"));
    /* no --buf, --tmap or --arg: no launch described, it only compiles */
    assert_tool(0, "%s --compile-only --arch sm_90", saxpy);
    /* a buffer too large for this machine is no obstacle: no host copy is made */
    assert_tool(0, "%s --compile-only --arch sm_90 --buf x=f32:1099511627776 --buf y=f32:4 %s", saxpy, args);
}

/* arch auto and the NVRTC/driver versions, on a fake device (CUDA 13.0
 * driver) and a fake NVRTC of any version: NVRTC 13.5 gets a CUBIN to build
 * (the fake then fails, naming what it was asked for); NVRTC 14.0 gets the
 * version error, exit 3, before any compile. -v names the NVRTC and why.
 * Then an explicit compute_80, held to the driver only when it is loaded. */
static void test_arch_auto_follows_the_versions(void **state)
{
    (void)state;
    const char *saxpy = kernel_path("saxpy.cu");
    const char *args = "--kernel saxpy --grid 1 --block 32 --buf x=f32:32 --buf y=f32:32 --arg f32:2 --arg buf:x "
                       "--arg buf:y --arg i32:32";
    setenv("ASYNCRT_LIBCUDA", FAKE_LIBCUDA_PATH, 1);
    setenv("ASYNCRT_NVRTC", FAKE_NVRTC_PATH, 1);
    setenv("ASYNCRT_CACHE", "0", 1);
    setenv("FAKE_NVRTC_VERSION", "13.5", 1);
    assert_tool(3, "%s --arch auto -v %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "fake NVRTC: asked for sm_90"));
    assert_non_null(strstr(run_tool_output(), "$ASYNCRT_NVRTC names it"));
    setenv("FAKE_NVRTC_VERSION", "14.0", 1);
    assert_tool(3, "%s --arch auto %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "NVRTC 14.0 is of a newer major version than the driver (CUDA 13.0)"));
    assert_null(strstr(run_tool_output(), "fake NVRTC: asked for"));
    /* explicit compute_80: a run (which loads it) with an NVRTC newer than the driver is refused before any
     * compile; --compile-only still builds the PTX (it may be for another machine); an NVRTC not newer than
     * the driver is asked for it */
    setenv("FAKE_NVRTC_VERSION", "13.1", 1);
    assert_tool(3, "%s --arch compute_80 %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver"));
    assert_null(strstr(run_tool_output(), "fake NVRTC: asked for"));
    assert_tool(3, "%s --compile-only --arch compute_80", saxpy);
    assert_non_null(strstr(run_tool_output(), "fake NVRTC: asked for compute_80"));
    setenv("FAKE_NVRTC_VERSION", "13.0", 1);
    assert_tool(3, "%s --arch compute_80 %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "fake NVRTC: asked for compute_80"));
    unsetenv("FAKE_NVRTC_VERSION");
    unsetenv("ASYNCRT_CACHE");
    unsetenv("ASYNCRT_NVRTC");
    setenv("ASYNCRT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
}

/* A source that does not compile says so (exit 3, NVRTC's log) before any
 * verdict on its kernels; one that compiles keeps the verdict (exit 2). */
static void test_compile_error_before_kernel_verdict(void **state)
{
    (void)state;
    const char *garbage = tmp_path("garbage.cu"), *helper = tmp_path("helper.cu"), *two = tmp_path("two.cu");
    FILE *f = fopen(garbage, "w");
    assert_non_null(f);
    fputs("this is not C++ {\n", f);
    fclose(f);
    assert_non_null(f = fopen(helper, "w"));
    fputs("__device__ float twice(float x) { return 2 * x; }\n", f);
    fclose(f);
    assert_non_null(f = fopen(two, "w"));
    fputs("__global__ void a(int *p) { *p = undeclared; }\n__global__ void b(int *p) { *p = 2; }\n", f);
    fclose(f);
    assert_tool(3, "'%s' --compile-only --arch sm_90", garbage);
    assert_non_null(strstr(run_tool_output(), "error: expected a declaration"));
    assert_null(strstr(run_tool_output(), "__global__"));
    assert_tool(3, "'%s' --compile-only --arch sm_90", two); /* two kernels, one broken: the error first */
    assert_non_null(strstr(run_tool_output(), "\"undeclared\" is undefined"));
    assert_tool(2, "'%s' --compile-only --arch sm_90", helper);
    assert_non_null(strstr(run_tool_output(), "no __global__ function found in"));
    /* no --arch and no driver: it cannot be compiled here, the verdict stands */
    assert_tool(2, "'%s'", garbage);
    assert_non_null(strstr(run_tool_output(), "no __global__ function found in"));
}

/* The temporary folder of run_tool.c goes when its process exits, also
 * after a failure (a child that fails and exits). */
static void test_temp_dir_removed(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        const char *path = tmp_path("left.txt");
        FILE *f = fopen(path, "w");
        if (f) fputs("x", f), fclose(f);
        if (write(fds[1], path, strlen(path) + 1) < 0) _exit(9);
        exit(1); /* as a failed test's process does: atexit handlers run */
    }
    close(fds[1]);
    char path[4096] = "";
    ssize_t n = read(fds[0], path, sizeof path - 1);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(n > 0 && strstr(path, "/asyncrt-run-test-"));
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
    *strrchr(path, '/') = '\0';
    assert_int_not_equal(stat(path, &st), 0); /* the folder too */
    assert_int_equal(stat(tmp_path(""), &st), 0); /* this process's own is still there */
}

/* --device and --devices all on the fake driver with two devices: an
 * ordinal out of range is NO_DEVICE naming it and the count; --devices all
 * walks the devices (the fake loads but allocates nothing, so device 0's run
 * ends in a CUDA error after its compile and load); the two flags exclude
 * each other; no driver is NO_DEVICE. */
static void test_device_flags(void **state)
{
    (void)state;
    const char *saxpy = kernel_path("saxpy.cu");
    const char *args = "--kernel saxpy --grid 1 --block 32 --buf x=f32:32 --buf y=f32:32 --arg f32:2 --arg buf:x "
                       "--arg buf:y --arg i32:32";
    assert_tool(4, "%s --devices all %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "--devices all: "));
    setenv("ASYNCRT_LIBCUDA", FAKE_LIBCUDA_PATH, 1);
    setenv("FAKE_DEVICES", "2", 1);
    assert_tool(4, "%s --device 2 %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "--device 2: this machine has 2 CUDA devices"));
    assert_tool(4, "%s --device 7 --json %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "\"status\":\"no-device\""));
    assert_tool(5, "%s --devices all -v %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "device 0 of 2"));
    assert_non_null(strstr(run_tool_output(), "device 0: "));
    assert_tool(2, "%s --devices all --device 1 %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "--devices all and --device N"));
    assert_tool(2, "%s --devices 1 %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "--devices '1': only 'all' is known"));
    assert_tool(2, "%s --devices all --compile-only --arch sm_90", saxpy);
    /* With the fake's host-memory runs (a launch that does nothing): every device is run and
     * reported, device 1's compile a memory hit; a check that fails on device 0 says so and ends there. */
    setenv("FAKE_RUNS", "1", 1);
    assert_tool(0, "%s --devices all %s", saxpy, args);
    assert_non_null(strstr(run_tool_output(), "device 1 of 2"));
    assert_tool(0, "%s --devices all --json %s", saxpy, args);
    const char *json = run_tool_output();
    assert_true(json[0] == '[');
    const char *second = strstr(json, "}\n,{"); /* each object ends its line */
    assert_non_null(second);
    assert_non_null(strstr(second, "\"origin\":\"memory-cache\""));
    float ones[32];
    for (int i = 0; i < 32; i++) ones[i] = 1;
    unsigned long long shape[1] = {32};
    write_npy_or_fail(tmp_path("ones.npy"), RUN_F32, shape, 1, ones);
    assert_tool(6, "%s --devices all %s --expect y=%s", saxpy, args, tmp_path("ones.npy"));
    assert_non_null(strstr(run_tool_output(), "device 0: --expect"));
    assert_null(strstr(run_tool_output(), "device 1 of 2"));
    unsetenv("FAKE_RUNS");
    unsetenv("FAKE_DEVICES");
    setenv("ASYNCRT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
}

int main(void)
{
    /* The no-driver case needs a libcuda that cannot load, on any machine. */
    setenv("ASYNCRT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),        cmocka_unit_test(test_every_kernel_compiles_for_sm90),
        cmocka_unit_test(test_emit),        cmocka_unit_test(test_stdin_and_json),
        cmocka_unit_test(test_failures_exit_codes),
        cmocka_unit_test(test_template_messages), cmocka_unit_test(test_warnings_shown),
        cmocka_unit_test(test_log_variable),      cmocka_unit_test(test_inputs_refused),
        cmocka_unit_test(test_json_escapes_raw_bytes),
        cmocka_unit_test(test_compile_only_checks_the_command_line),
        cmocka_unit_test(test_arch_auto_follows_the_versions),
        cmocka_unit_test(test_compile_error_before_kernel_verdict),
        cmocka_unit_test(test_temp_dir_removed),
        cmocka_unit_test(test_device_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
