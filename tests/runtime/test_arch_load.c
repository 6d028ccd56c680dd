/* The load rule for explicit targets through the library (arch.h's
 * asyncrt__arch_check_load, target.h's asyncrt__arch_loadable): a fake
 * driver of CUDA 13.0 (fake_device_libcuda) and a fake NVRTC of any version
 * (fake_nvrtc_versioned), as in test_arch_matrix. PTX from an NVRTC newer
 * than the driver is refused with VERSION_MISMATCH before NVRTC is asked
 * anything when the program is to be loaded (asyncrt_module_build,
 * asyncrt_build_batch with load, a built-in op with a device open), and
 * before the driver is when a program is loaded (asyncrt_module_load); a
 * compile alone, or without a device, still builds it (it may be for another
 * machine). An explicit target's reason says which. Each cell runs in a
 * child process (the driver and NVRTC are loaded once per process). */
#define _GNU_SOURCE /* setenv */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"
#include "test_support.h"

/* REASON: asyncrt__arch_resolve_why's sentence (asyncrt_program_arch_reason, asyncrt-run -v).
 * BATCH: asyncrt_build_batch with load, compiling in this process (ASYNCRT_COMPILE_WORKER=0);
 * BATCH_WORKERS: two misses, which would go to compile workers: none is started for them. */
/* FOR_LOAD: asyncrt_program_compile with for_load (asyncrt-run's compile); CHECK:
 * asyncrt_context_check_target, which compiles nothing. */
typedef enum call { BUILD, COMPILE, LOAD, MAP, NO_DEVICE, REASON, BATCH, BATCH_WORKERS, FOR_LOAD, CHECK } call;

typedef struct cell {
    const char *what;
    const char *nvrtc;     /* FAKE_NVRTC_VERSION */
    const char *cc;        /* FAKE_CC */
    const char *arch;      /* the explicit target */
    call call;
    asyncrt_status status; /* COMPILE: the fake NVRTC was reached (it fails every compile) */
    const char *words;     /* in the message (or, for a load that works, nothing) */
} cell;

static const cell k_cells[] = {
    {"newer minor, PTX, module", "13.1", "90", "compute_80", BUILD, ASYNCRT_ERROR_VERSION_MISMATCH,
     "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver (CUDA 13.0), which JIT-compiles only PTX "
     "from a compiler not newer than itself (NVRTC 13.1 writes PTX ISA 9.1; the driver reads up to 9.0): build "
     "sm_90 instead (a CUBIN for this device, compute capability 9.0; a CUBIN of any NVRTC 13.x loads on this "
     "driver), or use an NVRTC not newer than the driver, NVRTC 13.0 or older (pip install "
     "'nvidia-cuda-nvrtc==13.0.*', or the CUDA 13.0 toolkit), named by ASYNCRT_NVRTC"},
    {"newer minor, PTX, op", "13.1", "90", "compute_80", MAP, ASYNCRT_ERROR_VERSION_MISMATCH,
     "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver (CUDA 13.0)"},
    {"newer minor, PTX, load", "13.1", "90", "compute_80", LOAD, ASYNCRT_ERROR_VERSION_MISMATCH,
     "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver (CUDA 13.0)"},
    {"newer minor, PTX the device runs", "13.5", "89", "compute_86", BUILD, ASYNCRT_ERROR_VERSION_MISMATCH,
     "(NVRTC 13.5 writes PTX ISA 9.5; the driver reads up to 9.0): build sm_86 instead (a CUBIN that runs on "
     "this device, compute capability 8.9"},
    {"newer minor, PTX, compile only", "13.1", "90", "compute_80", COMPILE, ASYNCRT_ERROR_COMPILE,
     "fake NVRTC: asked for compute_80"},
    {"newer minor, PTX, no device", "13.1", "90", "compute_80", NO_DEVICE, ASYNCRT_ERROR_COMPILE,
     "fake NVRTC: asked for compute_80"},
    {"newer minor, CUBIN, module", "13.1", "90", "sm_90", BUILD, ASYNCRT_ERROR_COMPILE,
     "fake NVRTC: asked for sm_90"},
    {"same version, PTX, module", "13.0", "90", "compute_80", BUILD, ASYNCRT_ERROR_COMPILE,
     "fake NVRTC: asked for compute_80"},
    {"same version, PTX, load", "13.0", "90", "compute_80", LOAD, ASYNCRT_SUCCESS, NULL},
    {"older major, PTX, module", "12.8", "90", "compute_80", BUILD, ASYNCRT_ERROR_COMPILE,
     "fake NVRTC: asked for compute_80"},
    {"same version, PTX, reason", "13.0", "90", "compute_80", REASON, ASYNCRT_SUCCESS,
     "compute_80: explicit target; the driver (CUDA 13.0) JIT-compiles its PTX: NVRTC 13.0 is not newer than it"},
    {"newer minor, PTX, reason", "13.1", "90", "compute_80", REASON, ASYNCRT_SUCCESS,
     "compute_80: explicit target; compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver"},
    {"newer minor, PTX, batch", "13.1", "90", "compute_80", BATCH, ASYNCRT_ERROR_VERSION_MISMATCH,
     "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver (CUDA 13.0)"},
    {"same version, PTX, batch", "13.0", "90", "compute_80", BATCH, ASYNCRT_ERROR_COMPILE,
     "fake NVRTC: asked for compute_80"},
    {"newer minor, PTX, batch to workers", "13.1", "90", "compute_80", BATCH_WORKERS,
     ASYNCRT_ERROR_VERSION_MISMATCH, "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver"},
    {"newer minor, PTX, compile for_load", "13.1", "90", "compute_80", FOR_LOAD, ASYNCRT_ERROR_VERSION_MISMATCH,
     "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver (CUDA 13.0)"},
    {"same version, PTX, compile for_load", "13.0", "90", "compute_80", FOR_LOAD, ASYNCRT_ERROR_COMPILE,
     "fake NVRTC: asked for compute_80"},
    {"newer minor, PTX, check_target", "13.1", "90", "compute_80", CHECK, ASYNCRT_ERROR_VERSION_MISMATCH,
     "compute_80 cannot be loaded: NVRTC 13.1 is newer than the driver (CUDA 13.0)"},
    {"same version, PTX, check_target", "13.0", "90", "compute_80", CHECK, ASYNCRT_SUCCESS, NULL},
    {"malformed, check_target", "13.0", "90", "compute_8x", CHECK, ASYNCRT_ERROR_INVALID_ARGUMENT,
     "arch 'compute_8x' is malformed"},
    {"newer major, CUBIN, module", "14.0", "90", "sm_90", BUILD, ASYNCRT_ERROR_VERSION_MISMATCH,
     "sm_90 cannot be loaded: NVRTC 14.0 is of a newer major version than the driver (CUDA 13.0), which loads "
     "neither its CUBINs nor its PTX: use an NVRTC of the driver's major version, an NVRTC 13.x"},
};

static int fake_count(const char *path, const char *symbol)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    int (*count)(void) = lib ? (int (*)(void))dlsym(lib, symbol) : NULL;
    return count ? count() : 0;
}

static asyncrt_status load_ptx(asyncrt_context *ctx, const char *arch)
{
    static const char ptx[] = ".version 9.1\n.target sm_80\n.address_size 64\n";
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt_program_from_image(ctx, ptx, sizeof ptx - 1, arch, &p); /* the NUL is added */
    if (s != ASYNCRT_SUCCESS) return s;
    asyncrt_module *m = NULL;
    s = asyncrt_module_load(ctx, p, &m);
    asyncrt_module_destroy(m);
    asyncrt_program_destroy(p);
    return s;
}

static char g_reason[4096]; /* REASON's sentence */

static asyncrt_status call_library(asyncrt_context *ctx, const cell *c)
{
    static const char source[] = "extern \"C\" __global__ void k() {}";
    asyncrt_compile_options o = {.size = sizeof o, .arch = c->arch};
    asyncrt_program *p = NULL;
    asyncrt_module *m = NULL;
    asyncrt_status s;
    if (c->call == BUILD) {
        s = asyncrt_module_build(ctx, "k.cu", source, &o, &m);
    } else if (c->call == MAP) {
        static const asyncrt_map_arg x = {"x", ASYNCRT_F32}, y = {"y", ASYNCRT_F32};
        asyncrt_map_desc d = {.size = sizeof d,
                              .inputs = &x, .input_count = 1, .outputs = &y, .output_count = 1,
                              .expression = "y = 2 * x;", .path = ASYNCRT_PATH_PLAIN, .arch = c->arch};
        asyncrt_map *map = NULL;
        s = asyncrt_map_create(ctx, &d, &map);
        asyncrt_map_destroy(map);
    } else if (c->call == LOAD) {
        s = load_ptx(ctx, c->arch);
    } else if (c->call == BATCH) {
        asyncrt_build_request r = {.source_name = "k.cu", .source = source, .opts = &o};
        s = asyncrt_build_batch(ctx, &r, 1, 1, true);
        if (r.status != s || r.program || r.module || !r.message) /* the words then do not match */
            snprintf(g_reason, sizeof g_reason, "a failed request with status %s, %s program, %s module, %s message",
                     asyncrt_status_string(r.status), r.program ? "a" : "no", r.module ? "a" : "no",
                     r.message ? "a" : "no");
        else
            snprintf(g_reason, sizeof g_reason, "%s", r.message);
        asyncrt_build_batch_release(&r, 1);
    } else if (c->call == BATCH_WORKERS) {
        asyncrt_build_request r[2] = {{.source_name = "a.cu", .source = source, .opts = &o},
                                      {.source_name = "b.cu", .source = "extern \"C\" __global__ void b() {}",
                                       .opts = &o}};
        test_capture_begin(); /* ASYNCRT_LOG=2 says when misses go to workers */
        s = asyncrt_build_batch(ctx, r, 2, 2, true);
        char *log = test_capture_end();
        bool spawned = log && strstr(log, "go to worker processes"); /* the words then do not match */
        snprintf(g_reason, sizeof g_reason, "%s", spawned ? "workers were started"
                                                  : r[1].status == s && r[1].message ? r[1].message : "");
        free(log);
        asyncrt_build_batch_release(r, 2);
    } else if (c->call == FOR_LOAD) {
        o.for_load = true;
        s = asyncrt_program_compile(ctx, "k.cu", source, &o, &p);
    } else if (c->call == CHECK) {
        s = asyncrt_context_check_target(ctx, c->arch);
    } else if (c->call == REASON) {
        asyncrt__arch arch;
        s = asyncrt__arch_resolve_why(ctx, c->arch, &arch, g_reason, sizeof g_reason);
    } else {
        s = asyncrt_program_compile(ctx, "k.cu", source, &o, &p);
    }
    asyncrt_module_destroy(m);
    asyncrt_program_destroy(p);
    return s;
}

/* In the child: 0 when the cell holds, else 1 with the reason on stderr. */
static int run_cell(const void *arg, const char *cache_dir)
{
    const cell *c = arg;
    setenv("FAKE_NVRTC_VERSION", c->nvrtc, 1);
    setenv("FAKE_CC", c->cc, 1);
    setenv("FAKE_DRIVER_VERSION", "13000", 1);
    setenv("ASYNCRT_NVRTC", FAKE_NVRTC_PATH, 1);
    setenv("ASYNCRT_LIBCUDA", FAKE_LIBCUDA_PATH, 1);
    setenv("ASYNCRT_CACHE_DIR", cache_dir, 1);
    if (c->call == BATCH_WORKERS) setenv("ASYNCRT_LOG", "2", 1);
    else setenv("ASYNCRT_COMPILE_WORKER", "0", 1); /* else ctest's, the one built here */
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS ||
        (c->call != NO_DEVICE && asyncrt_context_open_device(ctx, 0) != ASYNCRT_SUCCESS)) {
        fprintf(stderr, "%s: cannot open the fake device\n", c->what);
        return 1;
    }
    if (c->call == LOAD) asyncrt_nvrtc_version(); /* NVRTC's facts, as the compile before a load has them */
    asyncrt_status s = call_library(ctx, c);
    bool own = (c->call == REASON && s == ASYNCRT_SUCCESS) || c->call == BATCH || c->call == BATCH_WORKERS;
    const char *msg = own ? g_reason : asyncrt_context_last_error(ctx);
    int compiles = fake_count(FAKE_NVRTC_PATH, "fake_nvrtc_compiles");
    int loads = fake_count(FAKE_LIBCUDA_PATH, "fake_module_loads");
    int failed = 0;
    if (s != c->status || (c->words && !strstr(msg, c->words))) {
        fprintf(stderr, "%s: %s '%s'; expected %s with '%s'\n", c->what, asyncrt_status_string(s), msg,
                asyncrt_status_string(c->status), c->words ? c->words : "");
        failed = 1;
    }
    /* Refused before NVRTC (a compile to load) or before the driver (a load). */
    int want_compiles = c->status == ASYNCRT_ERROR_COMPILE ? 1 : 0;
    int want_loads = c->call == LOAD && c->status == ASYNCRT_SUCCESS ? 1 : 0;
    if (compiles != want_compiles || loads != want_loads) {
        fprintf(stderr, "%s: NVRTC compiled %d times and the driver loaded %d modules; expected %d and %d\n",
                c->what, compiles, loads, want_compiles, want_loads);
        failed = 1;
    }
    asyncrt_context_destroy(ctx);
    return failed;
}

static void explicit_targets_to_load(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof k_cells / sizeof k_cells[0]; i++) {
        bool ok = test_in_child(run_cell, &k_cells[i], "arch-load");
        printf("%-34s NVRTC %s, %s: %s\n", k_cells[i].what, k_cells[i].nvrtc, k_cells[i].arch, ok ? "ok" : "FAILED");
        failures += !ok;
    }
    assert_int_equal(failures, 0);
}

/* dir/name, made with its parents; a copy of `from` when given, else empty. */
static void place(const char *dir, const char *name, const char *from)
{
    char path[4096], cmd[8400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (from) snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, path);
    else snprintf(cmd, sizeof cmd, ": > '%s'", path);
    assert_int_equal(system(cmd), 0);
}

/* The search (lib_search.h) finds NVRTC 13.1 in a virtual environment's
 * wheel, chosen as the newest, and 13.0 under $CUDA_PATH (known from its
 * builtins): the refusal names that one, ready to paste. */
static int older_nvrtc_cell(const void *arg, const char *root)
{
    (void)arg;
    char venv[4096], wheel[4200], cuda[4096], home[4096], expect[4400];
    snprintf(venv, sizeof venv, "%s/venv", root);
    snprintf(wheel, sizeof wheel, "%s/lib/python3.11/site-packages", venv);
    snprintf(cuda, sizeof cuda, "%s/cuda", root);
    snprintf(home, sizeof home, "%s/home", root);
    char lib[4300], lib64[4200];
    snprintf(lib, sizeof lib, "%s/nvidia/cu13/lib", wheel);
    snprintf(lib64, sizeof lib64, "%s/lib64", cuda);
    place(lib, "libnvrtc.so.13", FAKE_NVRTC_PATH);
    snprintf(lib, sizeof lib, "%s/nvidia_cuda_nvrtc-13.1.115.dist-info", wheel);
    place(lib, "METADATA", NULL);
    place(lib64, "libnvrtc.so.13", FAKE_NVRTC_PATH);
    place(lib64, "libnvrtc-builtins.so.13.0", NULL);
    place(home, ".keep", NULL);
    unsetenv("ASYNCRT_NVRTC");
    unsetenv("CUDA_HOME");
    unsetenv("PYTHONUSERBASE");
    setenv("VIRTUAL_ENV", venv, 1);
    setenv("CUDA_PATH", cuda, 1);
    setenv("HOME", home, 1);
    setenv("FAKE_NVRTC_VERSION", "13.1", 1);
    setenv("FAKE_CC", "90", 1);
    setenv("FAKE_DRIVER_VERSION", "13000", 1);
    setenv("ASYNCRT_LIBCUDA", FAKE_LIBCUDA_PATH, 1);
    setenv("ASYNCRT_CACHE_DIR", root, 1);
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS || asyncrt_context_open_device(ctx, 0) != ASYNCRT_SUCCESS)
        return 1;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "compute_80"};
    asyncrt_module *m = NULL;
    asyncrt_status s = asyncrt_module_build(ctx, "k.cu", "extern \"C\" __global__ void k() {}", &o, &m);
    snprintf(expect, sizeof expect, "use an NVRTC not newer than the driver, ASYNCRT_NVRTC=%s/libnvrtc.so.13 (NVRTC "
             "13.0, found here)", lib64);
    const char *msg = asyncrt_context_last_error(ctx);
    int failed = s != ASYNCRT_ERROR_VERSION_MISMATCH || !strstr(msg, expect) || !strstr(msg, "NVRTC 13.1 is newer");
    if (failed) fprintf(stderr, "%s '%s'; expected '%s'\n", asyncrt_status_string(s), msg, expect);
    asyncrt_context_destroy(ctx);
    return failed;
}

static void the_advice_names_an_older_nvrtc_found(void **state)
{
    (void)state;
    assert_true(test_in_child(older_nvrtc_cell, NULL, "arch-load-older"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(explicit_targets_to_load),
                                       cmocka_unit_test(the_advice_names_an_older_nvrtc_found)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
