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
#include "nvrtc_loader.h" /* nvrtcProgram, and the NVRTC it found */

bool asyncrt__jitlink_find(char *path, size_t size)
{
    asyncrt_nvrtc_identity id;
    int major = asyncrt__nvrtc_identity_get(&id) && id.major > 0 ? id.major : 13;
    char *slash = id.path[0] ? strrchr(id.path, '/') : NULL;
    char candidate[PATH_MAX + 32];
    struct stat st;
    if (slash) {
        snprintf(candidate, sizeof candidate, "%.*s/libnvJitLink.so.%d", (int)(slash - id.path), id.path, major);
        if (realpath(candidate, path) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) return true;
    }
    snprintf(path, size, "libnvJitLink.so.%d", major);
    return false;
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
static char g_why[PATH_MAX + 128];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void open_jitlink(void)
{
    char path[PATH_MAX];
    asyncrt__jitlink_find(path, sizeof path);
    if (!(g_jit.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char *err = dlerror();
        snprintf(g_why, sizeof g_why, "no nvJitLink: cannot open %s (%s); it comes with the CUDA toolkit, beside NVRTC",
                 path, err ? err : "?");
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

bool asyncrt__jitlink_take_ltoir(const asyncrt_nvrtc *nv, void *nvrtc_program, const char *const *options,
                                 size_t option_count, unsigned char **image, size_t *size, int *result)
{
    bool wanted = false;
    for (size_t i = 0; i < option_count; i++)
        wanted |= !strcmp(options[i], "-dlto") || !strcmp(options[i], "--dlink-time-opt") ||
                  !strcmp(options[i], "-dlink-time-opt") || !strcmp(options[i], "-gen-lto");
    if (!wanted) return false;
    nvrtcResult (*get_size)(nvrtcProgram, size_t *) = (nvrtcResult(*)(nvrtcProgram, size_t *))dlsym(nv->handle, "nvrtcGetLTOIRSize");
    nvrtcResult (*get)(nvrtcProgram, char *) = (nvrtcResult(*)(nvrtcProgram, char *))dlsym(nv->handle, "nvrtcGetLTOIR");
    *image = NULL;
    *size = 0;
    *result = !get_size || !get ? NVRTC_ERROR_INVALID_INPUT : get_size(nvrtc_program, size);
    if (*result == NVRTC_SUCCESS && !*size) *result = NVRTC_ERROR_INVALID_INPUT; /* no LTO-IR came out */
    if (*result == NVRTC_SUCCESS && !(*image = malloc(*size))) *result = NVRTC_ERROR_OUT_OF_MEMORY;
    if (*result == NVRTC_SUCCESS) *result = get(nvrtc_program, (char *)*image);
    return true;
}
