#define _GNU_SOURCE /* realpath */
#include "link_jit.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "nvrtc_loader.h" /* the NVRTC it found */
#include "settings.h"

/* Lower is better: 0 NVRTC's own version; 1 a newer one of its major (it
 * links older LTO-IR); 2 an unknown version beside NVRTC (its release), 3 of
 * its major; 4 an older one of its major (it links all but NVRTC's LTO-IR:
 * the link says so first); 5 its major's soname; 6 anything else. */
static int jitlink_rank(const asyncrt_lib_candidate *c, const asyncrt_lib_version *nvrtc)
{
    bool same_major = c->major == nvrtc->major || nvrtc->major <= 0;
    if (!same_major) return 6;
    if (!c->exists) return 5;
    if (c->version.minor < 0 || nvrtc->minor < 0) return 3;
    return c->version.minor == nvrtc->minor ? 0 : c->version.minor > nvrtc->minor ? 1 : 4;
}

static bool in_dir(const char *path, const char *dir)
{
    char real[PATH_MAX];
    const char *slash = realpath(path, real) ? strrchr(real, '/') : NULL;
    return dir && *dir && slash && strlen(dir) == (size_t)(slash - real) && strncmp(real, dir, strlen(dir)) == 0;
}

int asyncrt__jitlink_choose(const asyncrt_lib_candidate *c, size_t count, const asyncrt_lib_version *nvrtc,
                            const char *nvrtc_dir, char *why, size_t why_size)
{
    int best = -1, best_rank = 99;
    bool best_beside = false;
    for (size_t i = 0; i < count; i++) {
        int rank = jitlink_rank(&c[i], nvrtc);
        bool beside = c[i].exists && in_dir(c[i].path, nvrtc_dir);
        if (rank == 3 && beside) rank = 2;
        /* Among equals: beside NVRTC, then the nearest version, then the first found. */
        int nearer = rank == best_rank && (rank == 1 || rank == 4)
                         ? asyncrt__lib_version_compare(&c[i].version, &c[best].version) * (rank == 1 ? -1 : 1)
                         : 0;
        bool wins = rank < best_rank || (rank == best_rank && beside && !best_beside) ||
                    (rank == best_rank && beside == best_beside && nearer > 0);
        if (wins) best = (int)i, best_rank = rank, best_beside = beside;
    }
    char v[32], n[32];
    asyncrt__lib_version_format(nvrtc, n, sizeof n);
    if (best < 0) {
        snprintf(why, why_size, "no nvJitLink found");
        return -1;
    }
    asyncrt__lib_version_format(&c[best].version, v, sizeof v);
    char reason[256];
    switch (best_rank) {
    case 0: snprintf(reason, sizeof reason, "NVRTC's version (%s)", n); break;
    case 1: snprintf(reason, sizeof reason, "the nearest newer than NVRTC (%s) of its major version (it links older "
                     "LTO-IR)", n); break;
    case 2: snprintf(reason, sizeof reason, "beside NVRTC, so of its release"); break;
    case 3: snprintf(reason, sizeof reason, "of NVRTC's major version (NVRTC %s)", n); break;
    case 4: snprintf(reason, sizeof reason, "older than NVRTC (%s), the nearest found: it cannot link NVRTC's LTO-IR",
                     n); break;
    case 5: snprintf(reason, sizeof reason, "through the dynamic loader (NVRTC %s)", n); break;
    default: snprintf(reason, sizeof reason, "not of NVRTC's major version (NVRTC %s), the only kind found", n); break;
    }
    snprintf(why, why_size, "nvJitLink %s (%s): %s", v, c[best].step, reason);
    return best;
}

/* The process's choice: the nvJitLink by NVRTC's (nvrtc_loader.h). */
static asyncrt_lib_candidate g_found[ASYNCRT_LIB_MAX_CANDIDATES];
static int g_chosen = -1;
static char g_choice_why[512];
static pthread_once_t g_choose_once = PTHREAD_ONCE_INIT;

static void choose_jitlink(void)
{
    asyncrt_lib_search s = asyncrt__lib_search_of(asyncrt__settings_process());
    s.override_path = NULL; /* $ASYNCRT_NVRTC names NVRTC only */
    size_t n = asyncrt__lib_candidates(ASYNCRT_LIB_NVJITLINK, &s, g_found, ASYNCRT_LIB_MAX_CANDIDATES, NULL, 0);
    asyncrt_nvrtc_identity id;
    char dir[PATH_MAX] = "";
    asyncrt_lib_version nvrtc = {-1, -1, -1};
    if (asyncrt__nvrtc_identity_get(&id)) {
        nvrtc = id.version.major > 0 ? id.version : (asyncrt_lib_version){id.major, -1, -1};
        snprintf(dir, sizeof dir, "%s", id.path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
    }
    g_chosen = asyncrt__jitlink_choose(g_found, n, &nvrtc, dir, g_choice_why, sizeof g_choice_why);
}

bool asyncrt__jitlink_find(char *path, size_t size)
{
    pthread_once(&g_choose_once, choose_jitlink);
    const asyncrt_lib_candidate *c = g_chosen >= 0 ? &g_found[g_chosen] : NULL;
    char real[PATH_MAX];
    if (c && c->exists && realpath(c->path, real)) {
        snprintf(path, size, "%s", real);
        return true;
    }
    snprintf(path, size, "%s", c ? c->path : "libnvJitLink.so.13");
    return false;
}

asyncrt_status asyncrt__jitlink_check_lto(int nvrtc_version, const char *inputs, char *msg, size_t msg_size)
{
    pthread_once(&g_choose_once, choose_jitlink);
    const asyncrt_lib_candidate *c = g_chosen >= 0 ? &g_found[g_chosen] : NULL;
    int major = nvrtc_version / 1000, minor = nvrtc_version % 1000 / 10;
    if (!c || c->version.minor < 0 || !nvrtc_version) return ASYNCRT_SUCCESS; /* unknown: nvJitLink itself will say */
    if (c->version.major == major && c->version.minor >= minor) return ASYNCRT_SUCCESS;
    char v[32];
    asyncrt__lib_version_format(&c->version, v, sizeof v);
    snprintf(msg, msg_size,
             "LTO-IR (%s) needs an nvJitLink of NVRTC's major version and at least its version, NVRTC %d.%d (nvJitLink "
             "refuses LTO-IR newer than itself), and the nvJitLink found is %s (%s, %s): install nvJitLink %d.%d "
             "beside NVRTC (pip install 'nvidia-nvjitlink%s==%d.%d.*', or bash tools/setup.sh in asyncrt's checkout)",
             inputs, major, minor, v, c->path, c->step, major, minor, major == 12 ? "-cu12" : "", major, minor);
    return ASYNCRT_ERROR_VERSION_MISMATCH;
}

const asyncrt_lib_candidate *asyncrt__jitlink_chosen(const char **why)
{
    pthread_once(&g_choose_once, choose_jitlink);
    if (why) *why = g_choice_why;
    return g_chosen >= 0 ? &g_found[g_chosen] : NULL;
}

bool asyncrt__jitlink_keeps_extern_shared_align(int nvrtc_version)
{
    const asyncrt_lib_candidate *c = asyncrt__jitlink_chosen(NULL);
    asyncrt_lib_version v131 = {13, 1, -1};
    return nvrtc_version >= 13010 && c && c->version.minor >= 0 &&
           asyncrt__lib_version_compare(&c->version, &v131) >= 0;
}

/* The entry points used; all exist since CUDA 12.0. */
typedef struct jitlink {
    void *handle;
    int (*create)(void **, uint32_t, const char **);
    int (*destroy)(void **);
    int (*add_data)(void *, int, const void *, size_t, const char *);
    int (*complete)(void *);
    int (*cubin_size)(void *, size_t *);
    int (*cubin)(void *, void *);
    int (*error_log_size)(void *, size_t *);
    int (*error_log)(void *, char *);
    int (*info_log_size)(void *, size_t *);
    int (*info_log)(void *, char *);
} jitlink;

static jitlink g_jit;
static char g_why[PATH_MAX + 512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void open_jitlink(void)
{
    char path[PATH_MAX];
    asyncrt__jitlink_find(path, sizeof path);
    if (!(g_jit.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char *err = dlerror();
        snprintf(g_why, sizeof g_why,
                 "no nvJitLink: cannot open %s (%s); it comes with the CUDA toolkit, beside NVRTC, or as NVIDIA's "
                 "wheel (pip install nvidia-nvjitlink)", path, err ? err : "?");
        return;
    }
    static const char *const names[] = {"nvJitLinkCreate", "nvJitLinkDestroy", "nvJitLinkAddData",
                                        "nvJitLinkComplete", "nvJitLinkGetLinkedCubinSize", "nvJitLinkGetLinkedCubin",
                                        "nvJitLinkGetErrorLogSize", "nvJitLinkGetErrorLog",
                                        "nvJitLinkGetInfoLogSize", "nvJitLinkGetInfoLog"};
    void **slots[] = {(void **)&g_jit.create,     (void **)&g_jit.destroy,        (void **)&g_jit.add_data,
                      (void **)&g_jit.complete,   (void **)&g_jit.cubin_size,     (void **)&g_jit.cubin,
                      (void **)&g_jit.error_log_size, (void **)&g_jit.error_log, (void **)&g_jit.info_log_size,
                      (void **)&g_jit.info_log};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*slots[i] = dlsym(g_jit.handle, names[i]))) {
            snprintf(g_why, sizeof g_why, "%s is not a usable nvJitLink: it lacks %s", path, names[i]);
            dlclose(g_jit.handle);
            memset(&g_jit, 0, sizeof g_jit);
            return;
        }
}

/* One of nvJitLink's logs, malloc'd ("" when empty). */
static char *read_log(void *h, int (*size_of)(void *, size_t *), int (*get)(void *, char *))
{
    size_t size = 0;
    char *log = NULL;
    if (h && size_of(h, &size) == 0 && (log = calloc(1, size + 1)) && size && get(h, log) != 0) log[0] = '\0';
    return log ? log : calloc(1, 1);
}

/* nvJitLinkResult's names, in its order. */
static const char *const k_results[] = {
    "NVJITLINK_SUCCESS", "UNRECOGNIZED_OPTION", "MISSING_ARCH", "INVALID_INPUT", "PTX_COMPILE", "NVVM_COMPILE",
    "INTERNAL", "THREADPOOL", "UNRECOGNIZED_INPUT", "FINALIZE", "NULL_INPUT", "INCOMPATIBLE_OPTIONS",
    "INCORRECT_INPUT_TYPE", "ARCH_MISMATCH", "OUTDATED_LIBRARY", "MISSING_FATBIN", "UNRECOGNIZED_ARCH",
    "UNSUPPORTED_ARCH", "LTO_NOT_ENABLED"};

static const char *result_name(int r)
{
    return r > 0 && (size_t)r < sizeof k_results / sizeof k_results[0] ? k_results[r] : "an unknown error";
}

/* Options and inputs the caller gave wrong, the arch, or a link that failed. */
static asyncrt_status result_status(int r)
{
    switch (r) {
    case 1: case 2: case 3: case 8: case 10: case 11: case 12: case 18: return ASYNCRT_ERROR_INVALID_ARGUMENT;
    case 13: case 16: case 17: return ASYNCRT_ERROR_UNSUPPORTED_ARCH;
    default: return ASYNCRT_ERROR_COMPILE;
    }
}

asyncrt_status asyncrt__jitlink_run(const char *const *options, size_t option_count, const asyncrt_link_item *items,
                                   size_t count, unsigned char **image, size_t *image_size, char **log)
{
    *image = NULL;
    *image_size = 0;
    *log = NULL;
    pthread_once(&g_once, open_jitlink);
    if (!g_jit.handle) {
        *log = strdup(g_why);
        return ASYNCRT_ERROR_NO_NVRTC;
    }
    void *h = NULL;
    int r = g_jit.create(&h, (uint32_t)option_count, (const char **)options);
    const char *failed = r ? "nvJitLinkCreate" : NULL;
    for (size_t i = 0; !r && i < count; i++)
        if ((r = g_jit.add_data(h, items[i].kind, items[i].data, items[i].size, items[i].name))) failed = items[i].name;
    if (!r && (r = g_jit.complete(h))) failed = "nvJitLinkComplete";
    if (!r && !(r = g_jit.cubin_size(h, image_size)) && !(*image = malloc(*image_size ? *image_size : 1))) {
        *log = strdup("out of memory");
        g_jit.destroy(&h);
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    if (!r && (r = g_jit.cubin(h, *image))) failed = "nvJitLinkGetLinkedCubin";
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (r) {
        char *errors = read_log(h, g_jit.error_log_size, g_jit.error_log);
        *log = asyncrt__format("nvJitLink failed (%s at %s)%s%s", result_name(r), failed,
                               errors && *errors ? ":\n" : "", errors ? errors : "");
        free(errors);
        free(*image);
        *image = NULL;
        *image_size = 0;
        s = result_status(r);
    } else {
        *log = read_log(h, g_jit.info_log_size, g_jit.info_log);
    }
    if (h) g_jit.destroy(&h);
    if (!*log) {
        free(*image);
        *image = NULL;
        return ASYNCRT_ERROR_OUT_OF_MEMORY;
    }
    return s;
}
