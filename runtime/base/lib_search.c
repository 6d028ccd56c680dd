/* Every NVRTC and nvJitLink a process could open, with versions, by stat and
 * readdir alone (lib_search.h). */
#define _GNU_SOURCE /* realpath */
#include "lib_search.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "self_file.h"
#include "settings.h"

#ifndef ASYNCRT_TOOLKIT_LIBDIR
#define ASYNCRT_TOOLKIT_LIBDIR "/usr/local/cuda/lib64"
#endif
#ifndef ASYNCRT_SETUP_PIP_DIR
#define ASYNCRT_SETUP_PIP_DIR ""
#endif
#ifndef ASYNCRT_BUILD_DIR /* the build tree's real path (runtime/CMakeLists.txt) */
#define ASYNCRT_BUILD_DIR ""
#endif


/* What each kind is called, per supported major (newest first). */
typedef struct lib_layout {
    int major;
    const char *wheel_dir;  /* under site-packages */
    const char *dist_info;  /* the wheel's dist-info prefix, with its '-' */
} lib_layout;

typedef struct lib_kind {
    const char *soname;     /* "libnvrtc.so." + major */
    lib_layout layouts[2];
} lib_kind;

static const lib_kind k_kinds[] = {
    [ASYNCRT_LIB_NVRTC] = {"libnvrtc.so.",
                           {{13, "nvidia/cu13/lib", "nvidia_cuda_nvrtc-"},
                            {12, "nvidia/cuda_nvrtc/lib", "nvidia_cuda_nvrtc_cu12-"}}},
    [ASYNCRT_LIB_NVJITLINK] = {"libnvJitLink.so.",
                               {{13, "nvidia/cu13/lib", "nvidia_nvjitlink-"},
                                {12, "nvidia/nvjitlink/lib", "nvidia_nvjitlink_cu12-"}}},
};
#define LAYOUTS 2

bool asyncrt__lib_version_parse(const char *text, asyncrt_lib_version *out)
{
    *out = (asyncrt_lib_version){-1, -1, -1};
    int used = 0;
    if (sscanf(text, "%d.%d%n", &out->major, &out->minor, &used) != 2 || out->major < 0 || out->minor < 0) {
        *out = (asyncrt_lib_version){-1, -1, -1};
        return false;
    }
    text += used;
    if (*text == '.' && sscanf(text + 1, "%d%n", &out->patch, &used) == 1 && out->patch >= 0) text += 1 + used;
    else out->patch = -1;
    return *text == '\0';
}

void asyncrt__lib_version_format(const asyncrt_lib_version *v, char *buf, size_t size)
{
    if (v->major < 0) asyncrt__say(buf, size, "unknown");
    else if (v->minor < 0) asyncrt__say(buf, size, "%d (minor unknown)", v->major);
    else if (v->patch < 0) asyncrt__say(buf, size, "%d.%d", v->major, v->minor);
    else asyncrt__say(buf, size, "%d.%d.%d", v->major, v->minor, v->patch);
}

int asyncrt__lib_version_compare(const asyncrt_lib_version *a, const asyncrt_lib_version *b)
{
    if (a->major != b->major) return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
    if (a->patch != b->patch) return a->patch < b->patch ? -1 : 1;
    return 0;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The newest "<prefix><version><suffix>" entry of dir whose version parses
 * and is of `major`; false if none. */
static bool newest_entry(const char *dir, const char *prefix, const char *suffix, int major, asyncrt_lib_version *out)
{
    DIR *d = opendir(dir);
    bool found = false;
    size_t plen = strlen(prefix), slen = strlen(suffix);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len <= plen + slen || strncmp(e->d_name, prefix, plen) != 0 || strcmp(e->d_name + len - slen, suffix) != 0)
            continue;
        char text[64];
        if (len - plen - slen >= sizeof text) continue;
        memcpy(text, e->d_name + plen, len - plen - slen);
        text[len - plen - slen] = '\0';
        asyncrt_lib_version v;
        if (!asyncrt__lib_version_parse(text, &v) || v.major != major) continue;
        if (!found || asyncrt__lib_version_compare(&v, out) > 0) *out = v;
        found = true;
    }
    if (d) closedir(d);
    return found;
}

/* The version of the file at `path` (the soname's major known), and what
 * told it. site: the site-packages folder when it is a wheel's, else NULL. */
static void read_version(asyncrt_lib_kind kind, const lib_layout *layout, const char *path, const char *site,
                         asyncrt_lib_candidate *c)
{
    if (site && newest_entry(site, layout->dist_info, ".dist-info", c->major, &c->version)) {
        c->version_from = "its wheel's dist-info";
        return;
    }
    char real[PATH_MAX];
    const char *base = realpath(path, real) ? strrchr(real, '/') : NULL;
    size_t solen = strlen(k_kinds[kind].soname);
    asyncrt_lib_version v;
    if (base && strncmp(base + 1, k_kinds[kind].soname, solen) == 0 &&
        asyncrt__lib_version_parse(base + 1 + solen, &v) && v.major == c->major) {
        c->version = v;
        c->version_from = "its file name";
        return;
    }
    /* The builtins beside it: NVRTC's own, or (outside a wheel) its toolkit's release. */
    if (site && kind != ASYNCRT_LIB_NVRTC) return;
    char dir[PATH_MAX];
    asyncrt__say(dir, sizeof dir, "%s", base ? real : path);
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = '\0';
    if (newest_entry(dir, "libnvrtc-builtins.so.", "", c->major, &c->version))
        c->version_from = "the libnvrtc-builtins beside it";
}

typedef struct collector {
    asyncrt_lib_kind kind;
    asyncrt_lib_candidate *out;
    size_t capacity, count;
    char *searched;
    size_t searched_size, searched_used;
} collector;

static void note_place(collector *c, const char *fmt, ...) ASYNCRT_PRINTF(2, 3);
static void note_place(collector *c, const char *fmt, ...)
{
    if (!c->searched || c->searched_used + 1 >= c->searched_size) return;
    char *at = c->searched + c->searched_used;
    size_t room = c->searched_size - c->searched_used;
    int w = c->searched_used ? snprintf(at, room, "; ") : 0;
    if (w < 0 || (size_t)w >= room) return;
    va_list ap;
    va_start(ap, fmt);
    int v = vsnprintf(at + w, room - (size_t)w, fmt, ap);
    va_end(ap);
    if (v >= 0) c->searched_used += (size_t)w + (size_t)v;
    if (c->searched_used >= c->searched_size) c->searched_used = c->searched_size - 1;
}

static void add(collector *c, const char *path, const char *step, const lib_layout *layout, const char *site,
                bool file)
{
    if (c->count >= c->capacity) return;
    /* One file reached twice ($CUDA_PATH is the build's toolkit, lib/ a link to lib64/) is listed once. */
    char real[PATH_MAX], other[PATH_MAX];
    bool resolved = file && realpath(path, real);
    for (size_t i = 0; resolved && i < c->count; i++)
        if (c->out[i].exists && realpath(c->out[i].path, other) && strcmp(real, other) == 0) return;
    asyncrt_lib_candidate *cand = &c->out[c->count];
    memset(cand, 0, sizeof *cand);
    asyncrt__say(cand->path, sizeof cand->path, "%s", path);
    cand->step = step;
    cand->major = layout->major;
    cand->exists = file && is_file(path);
    cand->version = (asyncrt_lib_version){layout->major > 0 ? layout->major : -1, -1, -1};
    cand->version_from = "";
    if (file && !cand->exists) return; /* only files that are there */
    if (file) read_version(c->kind, layout, path, site, cand);
    c->count++;
}

/* A site-packages folder: the wheels' files in it. */
static void add_site(collector *c, const char *site, const char *step)
{
    for (size_t i = 0; i < LAYOUTS; i++) {
        const lib_layout *l = &k_kinds[c->kind].layouts[i];
        char path[PATH_MAX];
        asyncrt__say(path, sizeof path, "%s/%s/%s%d", site, l->wheel_dir, k_kinds[c->kind].soname, l->major);
        add(c, path, step, l, site, true);
    }
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* <libdir>/python3*\/{site,dist}-packages, in name order. */
static void add_python_libdir(collector *c, const char *libdir, const char *step)
{
    if (!libdir || !*libdir) return;
    DIR *d = opendir(libdir);
    char *names[32];
    size_t n = 0;
    for (struct dirent *e; d && n < 32 && (e = readdir(d));)
        if (strncmp(e->d_name, "python3", 7) == 0 && (names[n] = strdup(e->d_name))) n++;
    if (d) closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    for (size_t i = 0; i < n; i++) {
        static const char *const subdirs[] = {"site-packages", "dist-packages"};
        for (size_t s = 0; s < 2; s++) {
            char site[PATH_MAX];
            asyncrt__say(site, sizeof site, "%s/%s/%s", libdir, names[i], subdirs[s]);
            add_site(c, site, step);
        }
        free(names[i]);
    }
}

static void add_dir(collector *c, const char *dir, const char *step)
{
    for (size_t i = 0; i < LAYOUTS; i++) {
        const lib_layout *l = &k_kinds[c->kind].layouts[i];
        char path[PATH_MAX];
        asyncrt__say(path, sizeof path, "%s/%s%d", dir, k_kinds[c->kind].soname, l->major);
        add(c, path, step, l, NULL, true);
    }
}

size_t asyncrt__lib_candidates(asyncrt_lib_kind kind, const asyncrt_lib_search *s, asyncrt_lib_candidate *out,
                               size_t capacity, char *searched, size_t searched_size)
{
    collector c = {kind, out, capacity, 0, searched, searched_size, 0};
    if (searched && searched_size) searched[0] = '\0';
    const lib_kind *k = &k_kinds[kind];
    if (kind == ASYNCRT_LIB_NVRTC && s->override_path && *s->override_path) {
        if (capacity == 0) return 0;
        lib_layout named = {0, NULL, ""};
        const char *so = strstr(s->override_path, k->soname);
        named.major = so ? atoi(so + strlen(k->soname)) : 0;
        add(&c, s->override_path, "$ASYNCRT_NVRTC", &named, NULL, true);
        if (c.count == 0) { /* named but missing: still the only candidate, so the message names it */
            memset(&out[0], 0, sizeof out[0]);
            asyncrt__say(out[0].path, sizeof out[0].path, "%s", s->override_path);
            out[0].step = "$ASYNCRT_NVRTC";
            out[0].version = (asyncrt_lib_version){-1, -1, -1};
            out[0].version_from = "";
            c.count = 1;
        }
        note_place(&c, "%s ($ASYNCRT_NVRTC)", s->override_path);
        return c.count;
    }
    char libdir[PATH_MAX];
    if (s->virtual_env && *s->virtual_env) {
        asyncrt__say(libdir, sizeof libdir, "%s/lib", s->virtual_env);
        add_python_libdir(&c, libdir, "a wheel in $VIRTUAL_ENV");
        note_place(&c, "wheels in %s/lib/python3*/site-packages ($VIRTUAL_ENV)", s->virtual_env);
    }
    const char *user = s->python_user_base && *s->python_user_base ? s->python_user_base : NULL;
    if (user || (s->home && *s->home)) {
        if (user) asyncrt__say(libdir, sizeof libdir, "%s/lib", user);
        else asyncrt__say(libdir, sizeof libdir, "%s/.local/lib", s->home);
        add_python_libdir(&c, libdir, "a wheel in the user's site-packages");
        note_place(&c, "wheels in %s/python3*/site-packages (the user's)", libdir);
    }
    static const char *const k_system[] = {"/usr/local/lib", "/usr/lib", "/usr/lib64", "/usr/local/lib64", NULL};
    const char *const *system = s->system_libdirs ? s->system_libdirs : k_system;
    for (size_t i = 0; system[i]; i++) add_python_libdir(&c, system[i], "a wheel in the system's site-packages");
    note_place(&c, "wheels in the system's site-packages and dist-packages");
    if (s->setup_dir && *s->setup_dir) {
        add_site(&c, s->setup_dir, "the set-up's folder");
        note_place(&c, "%s (the set-up's folder)", s->setup_dir);
    }
    const char *roots[] = {s->cuda_path, s->cuda_home};
    const char *steps[] = {"$CUDA_PATH", "$CUDA_HOME"};
    for (size_t r = 0; r < 2; r++) {
        if (!roots[r] || !*roots[r]) continue;
        char dir[PATH_MAX];
        asyncrt__say(dir, sizeof dir, "%s/lib64", roots[r]);
        add_dir(&c, dir, steps[r]);
        asyncrt__say(dir, sizeof dir, "%s/lib", roots[r]);
        add_dir(&c, dir, steps[r]);
        note_place(&c, "%s/lib64 and /lib (%s)", roots[r], steps[r]);
    }
    if (s->build_libdir && *s->build_libdir) {
        add_dir(&c, s->build_libdir, "the toolkit found at build time");
        note_place(&c, "%s (the toolkit found at build time)", s->build_libdir);
    }
    for (size_t i = 0; i < LAYOUTS; i++) {
        char soname[32];
        asyncrt__say(soname, sizeof soname, "%s%d", k->soname, k->layouts[i].major);
        add(&c, soname, "the dynamic loader", &k->layouts[i], NULL, false);
    }
    note_place(&c, "%s%d and %s%d through the dynamic loader", k->soname, k->layouts[0].major, k->soname,
               k->layouts[1].major);
    return c.count;
}

const char *asyncrt__lib_setup_dir(const char *self, const char *build_dir, const char *setup_dir)
{
    return asyncrt__path_is_inside(self, build_dir) && setup_dir ? setup_dir : "";
}

asyncrt_lib_search asyncrt__lib_search_of(const asyncrt_settings *env)
{
    char self[PATH_MAX];
    bool in_program = false;
    bool known = asyncrt__self_file(self, sizeof self, &in_program);
    return (asyncrt_lib_search){
        .override_path = env ? env->nvrtc : NULL,
        .virtual_env = env ? env->virtual_env : NULL,
        .python_user_base = env ? env->python_user_base : NULL,
        .home = env ? env->home : NULL,
        .setup_dir = asyncrt__lib_setup_dir(known ? self : NULL, ASYNCRT_BUILD_DIR, ASYNCRT_SETUP_PIP_DIR),
        .cuda_path = env ? env->cuda_path : NULL,
        .cuda_home = env ? env->cuda_home : NULL,
        .build_libdir = ASYNCRT_TOOLKIT_LIBDIR,
    };
}
