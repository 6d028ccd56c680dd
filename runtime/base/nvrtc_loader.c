#define _GNU_SOURCE /* dladdr */
#include "nvrtc_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "format.h"
#include "settings.h"


#ifndef ASYNCRT_NVRTC_PREFERRED
#define ASYNCRT_NVRTC_PREFERRED ""
#endif

/* 0: of the driver's major (or no driver), 1: an older major, 2: newer (its output would not load). */
static int tier(const asyncrt_lib_candidate *c, int driver_major)
{
    if (!driver_major || c->major <= 0 || c->major == driver_major) return 0;
    return c->major < driver_major ? 1 : 2;
}

/* A candidate whose patch is unknown (a toolkit's, from its builtins) is the
 * preferred one when major and minor agree. */
static bool is_preferred(const asyncrt_lib_candidate *c, const asyncrt_lib_version *p)
{
    return c->exists && p->major >= 0 && c->version.major == p->major && c->version.minor == p->minor &&
           (p->patch < 0 || c->version.patch < 0 || c->version.patch == p->patch);
}

/* Whether a ranks above b (ties keep b, the earlier in search order). */
static bool better(const asyncrt_lib_candidate *a, const asyncrt_lib_candidate *b, int driver_major,
                   const asyncrt_lib_version *preferred)
{
    int ta = tier(a, driver_major), tb = tier(b, driver_major);
    if (ta != tb) return ta < tb;
    if (a->exists != b->exists) return a->exists;
    bool pa = is_preferred(a, preferred), pb = is_preferred(b, preferred);
    if (pa != pb) return pa;
    return asyncrt__lib_version_compare(&a->version, &b->version) > 0;
}

int asyncrt__nvrtc_choose(const asyncrt_lib_candidate *c, size_t count, int driver_version, const char *preferred,
                         char *why, size_t why_size)
{
    asyncrt_lib_version want = {-1, -1, -1};
    if (preferred && *preferred) asyncrt__lib_version_parse(preferred, &want);
    int driver_major = driver_version / 1000, best = -1;
    for (size_t i = 0; i < count; i++) {
        bool usable = c[i].exists || strchr(c[i].path, '/') == NULL; /* a soname is tried; files must exist */
        if (usable && (best < 0 || better(&c[i], &c[best], driver_major, &want))) best = (int)i;
    }
    if (best < 0) {
        asyncrt__say(why, why_size, "%s",
                     count && !strcmp(c[0].step, "$ASYNCRT_NVRTC") ? "$ASYNCRT_NVRTC names no file" : "no NVRTC found");
        return -1;
    }
    const asyncrt_lib_candidate *b = &c[best];
    char version[32], driver[48] = "";
    asyncrt__lib_version_format(&b->version, version, sizeof version);
    if (driver_version)
        asyncrt__say(driver, sizeof driver, "the driver's (CUDA %d.%d)", driver_version / 1000,
                     driver_version % 1000 / 10);
    bool pref = want.major >= 0;
    if (!strcmp(b->step, "$ASYNCRT_NVRTC")) {
        asyncrt__say(why, why_size, "$ASYNCRT_NVRTC names it (nothing else is looked at)");
    } else if (!b->exists) {
        asyncrt__say(why, why_size, "no NVRTC file found: %s through the dynamic loader", b->path);
    } else if (tier(b, driver_major) == 1) {
        asyncrt__say(why, why_size,
                     "NVRTC %s (%s): no NVRTC of %s major version found; the newest of an older major (its CUBINs "
                     "load on newer drivers)", version, b->step, driver);
    } else if (tier(b, driver_major) == 2) {
        asyncrt__say(why, why_size,
                     "NVRTC %s (%s): only NVRTCs of a newer major version than %s found, whose output that driver "
                     "cannot load (arch auto says what to install)", version, b->step, driver);
    } else if (is_preferred(b, &want)) {
        asyncrt__say(why, why_size,
                     "NVRTC %s (%s): the version this build prefers (ASYNCRT_NVRTC_PREFERRED %s, from "
                     "cmake/nvrtc-wheel-version.txt)%s%s%s", version, b->step, preferred,
                     driver_version ? ", of " : "", driver, driver_version ? " major version" : "");
    } else {
        asyncrt__say(why, why_size, "NVRTC %s (%s): the newest found%s%s%s%s%s%s", version, b->step,
                     driver_version ? " of " : " (no driver to match)", driver, driver_version ? " major version" : "",
                     pref ? "; the version this build prefers, " : "", pref ? preferred : "",
                     pref ? ", is not among them" : "");
    }
    return best;
}

/* ---- the process-wide choice and table ---------------------------------- */

static asyncrt_lib_candidate g_candidates[ASYNCRT_LIB_MAX_CANDIDATES];
static size_t g_count;
static int g_chosen = -1;
static char g_why[768];
static char g_searched[1400];
static pthread_once_t g_choose_once = PTHREAD_ONCE_INIT;

static void choose_once(void)
{
    asyncrt_lib_search s = asyncrt__lib_search_of(asyncrt__settings_process());
    g_count = asyncrt__lib_candidates(ASYNCRT_LIB_NVRTC, &s, g_candidates, ASYNCRT_LIB_MAX_CANDIDATES, g_searched,
                                      sizeof g_searched);
    /* Ask the driver only when the choice depends on it: files of several majors. */
    int majors_seen = 0, last_major = 0, driver_version = 0;
    for (size_t i = 0; i < g_count; i++) {
        if (!g_candidates[i].exists || g_candidates[i].major == last_major) continue;
        last_major = g_candidates[i].major;
        majors_seen++;
    }
    if (majors_seen > 1) {
        const asyncrt_driver *drv;
        if (asyncrt__driver_load(&drv, NULL, 0) == ASYNCRT_SUCCESS) driver_version = drv->version;
    }
    g_chosen = asyncrt__nvrtc_choose(g_candidates, g_count, driver_version, ASYNCRT_NVRTC_PREFERRED, g_why,
                                    sizeof g_why);
}

void asyncrt__nvrtc_choice_get(asyncrt_nvrtc_choice *out)
{
    pthread_once(&g_choose_once, choose_once);
    *out = (asyncrt_nvrtc_choice){g_candidates, g_count, g_chosen, g_why, g_searched};
}

bool asyncrt__nvrtc_identity_get(asyncrt_nvrtc_identity *out)
{
    pthread_once(&g_choose_once, choose_once);
    memset(out, 0, sizeof *out);
    if (g_chosen < 0 || !g_candidates[g_chosen].exists) return false;
    const asyncrt_lib_candidate *c = &g_candidates[g_chosen];
    struct stat st;
    if (!realpath(c->path, out->path) || stat(out->path, &st) != 0) return false;
    out->size = (int64_t)st.st_size;
    out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    out->major = c->major;
    out->version = c->version;
    return true;
}

static asyncrt_nvrtc g_nvrtc;
static asyncrt_status g_status;
static char g_message[2048];
static pthread_once_t g_load_once = PTHREAD_ONCE_INIT;

/* NVRTC dlopen()s libnvrtc-builtins.so.X.Y by soname when it compiles, which
 * fails where its directory is not in the loader's path. A library already
 * loaded under that soname satisfies the lookup, so open the one beside the
 * chosen NVRTC first (kept open for the process, like NVRTC). */
static void preload_builtins(int major, int minor)
{
    char dir[4096];
    if (!realpath(g_nvrtc.path, dir)) return;
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = 0;
    char path[4200];
    asyncrt__say(path, sizeof path, "%s/libnvrtc-builtins.so.%d.%d", dir, major, minor);
    struct stat st;
    if (stat(path, &st) == 0) g_nvrtc.builtins = dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static bool open_candidate(const asyncrt_lib_candidate *c, char *err, size_t err_size)
{
    asyncrt__say(g_nvrtc.path, sizeof g_nvrtc.path, "%s", c->path);
    g_nvrtc.handle = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
    if (!g_nvrtc.handle) {
        const char *why = dlerror();
        asyncrt__say(err, err_size, "cannot open %s (%s)", c->path, why ? why : "?");
        return false;
    }
#define ASYNCRT_NVRTC_RESOLVE(name)                                                            \
    *(void **)&g_nvrtc.name = dlsym(g_nvrtc.handle, #name);                                    \
    if (!g_nvrtc.name) {                                                                       \
        asyncrt__say(err, err_size, "%s is not a usable NVRTC: it lacks %s", c->path, #name);      \
        dlclose(g_nvrtc.handle);                                                               \
        g_nvrtc.handle = NULL;                                                                 \
        return false;                                                                          \
    }
    ASYNCRT_NVRTC_FUNCTIONS(ASYNCRT_NVRTC_RESOLVE)
#undef ASYNCRT_NVRTC_RESOLVE
    int major = 0, minor = 0;
    if (g_nvrtc.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
        asyncrt__say(err, err_size, "%s: nvrtcVersion failed", c->path);
        dlclose(g_nvrtc.handle);
        g_nvrtc.handle = NULL;
        return false;
    }
    g_nvrtc.version = major * 1000 + minor * 10;
    Dl_info info; /* where the file really is, for sonames the loader resolved */
    if (dladdr(*(void **)&g_nvrtc.nvrtcVersion, &info) && info.dli_fname)
        asyncrt__say(g_nvrtc.path, sizeof g_nvrtc.path, "%s", info.dli_fname);
    preload_builtins(major, minor);
    return true;
}

static const char k_install_hint[] =
    "install NVIDIA's wheel (pip install nvidia-cuda-nvrtc, or bash tools/setup.sh in asyncrt's checkout), or set "
    "ASYNCRT_NVRTC to libnvrtc.so's path or CUDA_PATH to a CUDA toolkit (NVRTC is needed only to compile)";

static void load_once(void)
{
    pthread_once(&g_choose_once, choose_once);
    g_status = ASYNCRT_ERROR_NO_NVRTC;
    const char *searched = g_searched;
    if (g_chosen < 0) {
        asyncrt__say(g_message, sizeof g_message, "no NVRTC: looked for %s; %s", searched, k_install_hint);
        return;
    }
    char err[1024] = "";
    const asyncrt_lib_candidate *c = &g_candidates[g_chosen];
    bool ok = open_candidate(c, err, sizeof err);
    /* A soname the loader cannot find: try the other supported majors. */
    for (size_t i = (size_t)g_chosen + 1; !ok && !c->exists && i < g_count; i++) {
        char next_err[512];
        if (open_candidate(&g_candidates[i], next_err, sizeof next_err)) {
            ok = true;
            c = &g_candidates[i];
        }
    }
    if (!ok) {
        if (c->exists)
            asyncrt__say(g_message, sizeof g_message, "no usable NVRTC: %s", err);
        else
            asyncrt__say(g_message, sizeof g_message, "no NVRTC: looked for %s; %s", searched, k_install_hint);
        memset(&g_nvrtc, 0, sizeof g_nvrtc);
        return;
    }
    if (!c->exists) { /* found by the dynamic loader */
        asyncrt__say(g_nvrtc.why, sizeof g_nvrtc.why, "through the dynamic loader (%s)", c->path);
    } else {
        asyncrt__say(g_nvrtc.why, sizeof g_nvrtc.why, "%s", g_why);
    }
    g_status = ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__nvrtc_load(const asyncrt_nvrtc **out, char *msg, size_t msg_size)
{
    pthread_once(&g_load_once, load_once);
    if (g_status != ASYNCRT_SUCCESS) {
        if (msg && msg_size) asyncrt__say(msg, msg_size, "%s", g_message);
        *out = NULL;
        return g_status;
    }
    *out = &g_nvrtc;
    return ASYNCRT_SUCCESS;
}
