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
#include "settings.h"

#ifndef ASYNCRT_TOOLKIT_LIBDIR
#define ASYNCRT_TOOLKIT_LIBDIR "/usr/local/cuda/lib64"
#endif

/* snprintf that may truncate paths in messages, on purpose. */
static void say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

/* Supported NVRTC majors, newest first. */
static const int k_majors[] = {13, 12};
#define MAJOR_COUNT (sizeof k_majors / sizeof k_majors[0])

static int major_of(const char *path)
{
    const char *so = strstr(path, "libnvrtc.so.");
    return so ? atoi(so + strlen("libnvrtc.so.")) : 0;
}

static void add(asyncrt_nvrtc_candidate *out, size_t capacity, size_t *n, const char *path,
                const char *step, bool file)
{
    if (*n >= capacity) return;
    asyncrt_nvrtc_candidate *c = &out[*n];
    memset(c, 0, sizeof *c);
    say(c->path, sizeof c->path, "%s", path);
    c->step = step;
    c->major = major_of(path);
    struct stat st;
    c->exists = file && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    *n += 1;
}

static void add_dir(asyncrt_nvrtc_candidate *out, size_t capacity, size_t *n, const char *dir,
                    const char *step)
{
    if (!dir || !*dir) return;
    for (size_t i = 0; i < MAJOR_COUNT; i++) {
        char path[4096];
        say(path, sizeof path, "%s/libnvrtc.so.%d", dir, k_majors[i]);
        add(out, capacity, n, path, step, true);
    }
}

size_t asyncrt__nvrtc_candidates(const asyncrt_nvrtc_search *s, asyncrt_nvrtc_candidate *out,
                                size_t capacity)
{
    size_t n = 0;
    if (s->override_path && *s->override_path) {
        add(out, capacity, &n, s->override_path, "$ASYNCRT_NVRTC", true);
        out[0].major = out[0].major ? out[0].major : -1; /* explicit: never ranked out */
        return n;
    }
    const char *roots[] = {s->cuda_path, s->cuda_home};
    const char *steps[] = {"$CUDA_PATH", "$CUDA_HOME"};
    for (size_t r = 0; r < 2; r++) {
        if (!roots[r] || !*roots[r]) continue;
        char dir[4096];
        say(dir, sizeof dir, "%s/lib64", roots[r]);
        add_dir(out, capacity, &n, dir, steps[r]);
        say(dir, sizeof dir, "%s/lib", roots[r]);
        add_dir(out, capacity, &n, dir, steps[r]);
    }
    add_dir(out, capacity, &n, s->build_libdir, "the toolkit found at build time");
    for (size_t i = 0; i < MAJOR_COUNT; i++) {
        char soname[32];
        say(soname, sizeof soname, "libnvrtc.so.%d", k_majors[i]);
        add(out, capacity, &n, soname, "the dynamic loader", false);
    }
    return n;
}

static bool usable(const asyncrt_nvrtc_candidate *c)
{
    return c->exists || strchr(c->path, '/') == NULL; /* a soname is tried, files must exist */
}

static bool loadable_by(const asyncrt_nvrtc_candidate *c, int driver_version)
{
    return c->major <= 0 || c->major * 1000 <= driver_version;
}

int asyncrt__nvrtc_choose(const asyncrt_nvrtc_candidate *c, size_t count, int driver_version,
                         char *why, size_t why_size)
{
    int first = -1;
    for (size_t i = 0; i < count && first < 0; i++)
        if (usable(&c[i])) first = (int)i;
    if (first < 0) {
        say(why, why_size, "no NVRTC found");
        return -1;
    }
    if (driver_version > 0) {
        for (size_t i = 0; i < count; i++) {
            if (!usable(&c[i]) || !loadable_by(&c[i], driver_version)) continue;
            if ((int)i == first)
                say(why, why_size, "first found, through %s; the driver (%d.%d) loads its output",
                         c[i].step, driver_version / 1000, driver_version % 1000 / 10);
            else
                say(why, why_size,
                         "through %s: preferred over %s (NVRTC %d is newer than the driver, %d.%d)",
                         c[i].step, c[first].path, c[first].major, driver_version / 1000,
                         driver_version % 1000 / 10);
            return (int)i;
        }
        say(why, why_size, "first found, through %s (no NVRTC older than the driver, %d.%d, found)",
                 c[first].step, driver_version / 1000, driver_version % 1000 / 10);
        return first;
    }
    say(why, why_size, "first found, through %s", c[first].step);
    return first;
}

/* ---- the process-wide choice and table ---------------------------------- */

static asyncrt_nvrtc_candidate g_candidates[ASYNCRT_NVRTC_MAX_CANDIDATES];
static size_t g_count;
static int g_chosen = -1;
static char g_why[512];
static pthread_once_t g_choose_once = PTHREAD_ONCE_INIT;

static void choose_once(void)
{
    const asyncrt_settings *env = asyncrt__settings_process();
    asyncrt_nvrtc_search s = {env ? env->nvrtc : NULL, env ? env->cuda_path : NULL,
                              env ? env->cuda_home : NULL, ASYNCRT_TOOLKIT_LIBDIR};
    g_count = asyncrt__nvrtc_candidates(&s, g_candidates, ASYNCRT_NVRTC_MAX_CANDIDATES);
    /* Ask the driver only when the choice depends on it: several majors. */
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
    g_chosen = asyncrt__nvrtc_choose(g_candidates, g_count, driver_version, g_why, sizeof g_why);
}

bool asyncrt__nvrtc_identity_get(asyncrt_nvrtc_identity *out)
{
    pthread_once(&g_choose_once, choose_once);
    memset(out, 0, sizeof *out);
    if (g_chosen < 0 || !g_candidates[g_chosen].exists) return false;
    const asyncrt_nvrtc_candidate *c = &g_candidates[g_chosen];
    struct stat st;
    if (!realpath(c->path, out->path) || stat(out->path, &st) != 0) return false;
    out->size = (int64_t)st.st_size;
    out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    out->major = c->major;
    return true;
}

static asyncrt_nvrtc g_nvrtc;
static asyncrt_status g_status;
static char g_message[2048];
static pthread_once_t g_load_once = PTHREAD_ONCE_INIT;

/* "libnvrtc.so.13, libnvrtc.so.12 in DIR (step); ..." for the not-found message. */
static void describe_search(char *out, size_t size)
{
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < g_count && used < size; i++) {
        const char *p = g_candidates[i].path;
        int w = snprintf(out + used, size - used, "%s%s (%s)", i ? ", " : "", p, g_candidates[i].step);
        if (w < 0) break;
        used += (size_t)w;
    }
}

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
    say(path, sizeof path, "%s/libnvrtc-builtins.so.%d.%d", dir, major, minor);
    struct stat st;
    if (stat(path, &st) == 0) g_nvrtc.builtins = dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static bool open_candidate(const asyncrt_nvrtc_candidate *c, char *err, size_t err_size)
{
    say(g_nvrtc.path, sizeof g_nvrtc.path, "%s", c->path);
    g_nvrtc.handle = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
    if (!g_nvrtc.handle) {
        const char *why = dlerror();
        say(err, err_size, "cannot open %s (%s)", c->path, why ? why : "?");
        return false;
    }
#define ASYNCRT_NVRTC_RESOLVE(name)                                                            \
    *(void **)&g_nvrtc.name = dlsym(g_nvrtc.handle, #name);                                    \
    if (!g_nvrtc.name) {                                                                       \
        say(err, err_size, "%s is not a usable NVRTC: it lacks %s", c->path, #name);      \
        dlclose(g_nvrtc.handle);                                                               \
        g_nvrtc.handle = NULL;                                                                 \
        return false;                                                                          \
    }
    ASYNCRT_NVRTC_FUNCTIONS(ASYNCRT_NVRTC_RESOLVE)
#undef ASYNCRT_NVRTC_RESOLVE
    int major = 0, minor = 0;
    if (g_nvrtc.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
        say(err, err_size, "%s: nvrtcVersion failed", c->path);
        dlclose(g_nvrtc.handle);
        g_nvrtc.handle = NULL;
        return false;
    }
    g_nvrtc.version = major * 1000 + minor * 10;
    Dl_info info; /* where the file really is, for sonames the loader resolved */
    if (dladdr(*(void **)&g_nvrtc.nvrtcVersion, &info) && info.dli_fname)
        say(g_nvrtc.path, sizeof g_nvrtc.path, "%s", info.dli_fname);
    preload_builtins(major, minor);
    return true;
}

static void load_once(void)
{
    pthread_once(&g_choose_once, choose_once);
    g_status = ASYNCRT_ERROR_NO_NVRTC;
    char searched[1400];
    describe_search(searched, sizeof searched);
    if (g_chosen < 0) {
        say(g_message, sizeof g_message,
                 "no NVRTC: looked for %s; set ASYNCRT_NVRTC to libnvrtc.so's path or CUDA_PATH to "
                 "the CUDA toolkit (NVRTC is needed only to compile)", searched);
        return;
    }
    char err[1024] = "";
    const asyncrt_nvrtc_candidate *c = &g_candidates[g_chosen];
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
            say(g_message, sizeof g_message, "no usable NVRTC: %s", err);
        else
            say(g_message, sizeof g_message,
                     "no NVRTC: looked for %s; set ASYNCRT_NVRTC to libnvrtc.so's path or CUDA_PATH "
                     "to the CUDA toolkit (NVRTC is needed only to compile)", searched);
        memset(&g_nvrtc, 0, sizeof g_nvrtc);
        return;
    }
    if (!c->exists) { /* found by the dynamic loader */
        say(g_nvrtc.why, sizeof g_nvrtc.why, "through the dynamic loader (%s)", c->path);
    } else {
        say(g_nvrtc.why, sizeof g_nvrtc.why, "%s", g_why);
    }
    g_status = ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__nvrtc_load(const asyncrt_nvrtc **out, char *msg, size_t msg_size)
{
    pthread_once(&g_load_once, load_once);
    if (g_status != ASYNCRT_SUCCESS) {
        if (msg && msg_size) say(msg, msg_size, "%s", g_message);
        *out = NULL;
        return g_status;
    }
    *out = &g_nvrtc;
    return ASYNCRT_SUCCESS;
}
