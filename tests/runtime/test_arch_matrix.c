/* The arch rule through the library, not only the pure function: a fake
 * driver (fake_device_libcuda, $FAKE_DRIVER_VERSION, $FAKE_CC) and a fake
 * NVRTC of any version (fake_nvrtc_versioned), opened by the real loaders,
 * for every NVRTC/driver pair: NVRTC of an older major, the same version, a
 * newer minor and a newer major than the driver, each with the device known
 * to NVRTC and unknown. Each cell runs in a child process (the driver and
 * NVRTC are loaded once per process) and checks three things: the target
 * `auto` resolves to and its sentence, the target NVRTC was then asked to
 * compile for, and, where no target can work, that the error came before
 * NVRTC was asked anything. */
#define _GNU_SOURCE /* setenv */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_internal.h"
#include "target.h"
#include "test_support.h"

typedef struct cell {
    const char *what;
    const char *nvrtc;     /* FAKE_NVRTC_VERSION */
    const char *archs;     /* FAKE_NVRTC_ARCHS: what that NVRTC knows */
    const char *cc;        /* FAKE_CC */
    asyncrt_status status; /* of resolving auto, and of the compile when not SUCCESS */
    const char *arch;      /* the target, and what NVRTC is asked for */
    const char *reason;    /* words of the sentence */
} cell;

#define ARCHS_12 "50,52,53,60,61,62,70,72,75,80,86,87,89,90,100,101,120" /* NVRTC 12.8's */
#define ARCHS_13 "75,80,86,87,88,89,90,100,103,110,120,121"              /* NVRTC 13.0's */

/* The driver is CUDA 13.0 (580) throughout: the machine of issue 32. */
static const cell k_cells[] = {
    {"older major, known", "12.8", ARCHS_12, "90", ASYNCRT_SUCCESS, "sm_90",
     "NVRTC 12.8 knows compute capability 9.0 and is of an older major version than the driver (CUDA 13.0), so a CUBIN"},
    {"older major, unknown", "12.8", ARCHS_12, "88", ASYNCRT_SUCCESS, "compute_87",
     "NVRTC 12.8 does not know compute capability 8.8"},
    {"same version, known", "13.0", ARCHS_13, "90", ASYNCRT_SUCCESS, "sm_90",
     "NVRTC 13.0 knows compute capability 9.0 and is of the driver's major version (CUDA 13.0), so a CUBIN"},
    {"same version, unknown", "13.0", ARCHS_13, "85", ASYNCRT_SUCCESS, "compute_80",
     "is not newer than the driver (CUDA 13.0), so PTX"},
    {"newer minor, known", "13.5", ARCHS_13, "90", ASYNCRT_SUCCESS, "sm_90",
     "NVRTC 13.5 knows compute capability 9.0 and is of the driver's major version (CUDA 13.0), so a CUBIN"},
    {"newer minor, unknown", "13.5", ARCHS_13, "85", ASYNCRT_ERROR_VERSION_MISMATCH, NULL,
     "NVRTC 13.5 does not know sm_85 (it knows 75 80 86 87 88 89 90 100 103 110 120 121) and is newer than the "
     "driver (CUDA 13.0), so neither a CUBIN nor PTX the driver can load can be built: install NVRTC 13.0 or older"},
    {"newer major, known", "14.0", ARCHS_13, "90", ASYNCRT_ERROR_VERSION_MISMATCH, NULL,
     "NVRTC 14.0 is of a newer major version than the driver (CUDA 13.0), which loads neither its CUBINs nor its "
     "PTX"},
    {"newer major, unknown", "14.0", ARCHS_13, "85", ASYNCRT_ERROR_VERSION_MISMATCH, NULL,
     "install an NVRTC 13.x (pip install 'nvidia-cuda-nvrtc==13.*'"},
};

/* In the child: 0 when the cell holds, else 1 with the reason on stderr. */
static int run_cell(const void *arg, const char *cache_dir)
{
    const cell *c = arg;
    setenv("FAKE_NVRTC_VERSION", c->nvrtc, 1);
    setenv("FAKE_NVRTC_ARCHS", c->archs, 1);
    setenv("FAKE_CC", c->cc, 1);
    setenv("FAKE_DRIVER_VERSION", "13000", 1);
    setenv("ASYNCRT_NVRTC", FAKE_NVRTC_PATH, 1);
    setenv("ASYNCRT_LIBCUDA", FAKE_LIBCUDA_PATH, 1);
    setenv("ASYNCRT_CACHE_DIR", cache_dir, 1); /* the facts memo of one version must not serve another */
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS || asyncrt_context_open_device(ctx, 0) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "%s: cannot open the fake device\n", c->what);
        return 1;
    }
    asyncrt__arch arch;
    char why[1024] = "", name[32] = "";
    asyncrt_status s = asyncrt__arch_resolve_why(ctx, "auto", &arch, why, sizeof why);
    const char *said = s == ASYNCRT_SUCCESS ? why : asyncrt_context_last_error(ctx);
    if (s == ASYNCRT_SUCCESS) asyncrt__arch_format(&arch, name, sizeof name);
    int failed = 0;
    if (s != c->status || !strstr(said, c->reason) || (c->arch && strcmp(name, c->arch) != 0)) {
        fprintf(stderr, "%s: auto gave %s %s '%s'; expected %s %s with '%s'\n", c->what, asyncrt_status_string(s),
                name, said, asyncrt_status_string(c->status), c->arch ? c->arch : "", c->reason);
        failed = 1;
    }
    /* The compile: the fake NVRTC records what it was asked for, and fails. */
    asyncrt_program *p = NULL;
    asyncrt_compile_options o = {.size = sizeof o, .arch = "auto"};
    s = asyncrt_program_compile(ctx, "k.cu", "extern \"C\" __global__ void k() {}", &o, &p);
    void *nvrtc = dlopen(FAKE_NVRTC_PATH, RTLD_NOW | RTLD_NOLOAD);
    int (*compiles)(void) = nvrtc ? (int (*)(void))dlsym(nvrtc, "fake_nvrtc_compiles") : NULL;
    const char *(*asked)(void) = nvrtc ? (const char *(*)(void))dlsym(nvrtc, "fake_nvrtc_last_arch") : NULL;
    int n = compiles ? compiles() : -1;
    if (c->status == ASYNCRT_SUCCESS && (s != ASYNCRT_ERROR_COMPILE || n != 1 || strcmp(asked(), c->arch) != 0)) {
        fprintf(stderr, "%s: the compile gave %s after %d NVRTC compiles for '%s' (%s); expected one, for %s\n",
                c->what, asyncrt_status_string(s), n, asked ? asked() : "?", asyncrt_context_last_error(ctx), c->arch);
        failed = 1;
    }
    if (c->status != ASYNCRT_SUCCESS && (s != c->status || n > 0)) {
        fprintf(stderr, "%s: the compile gave %s after %d NVRTC compiles; expected %s before any\n", c->what,
                asyncrt_status_string(s), n, asyncrt_status_string(c->status));
        failed = 1;
    }
    asyncrt_program_destroy(p);
    asyncrt_context_destroy(ctx);
    return failed;
}

static void every_nvrtc_and_driver_pair(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof k_cells / sizeof k_cells[0]; i++) {
        bool ok = test_in_child(run_cell, &k_cells[i], "arch-matrix");
        printf("%-24s NVRTC %s, cc %s: %s\n", k_cells[i].what, k_cells[i].nvrtc, k_cells[i].cc, ok ? "ok" : "FAILED");
        failures += !ok;
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_nvrtc_and_driver_pair)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
