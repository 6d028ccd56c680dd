/* ptx_assemble.h: the loader library, opened like NVRTC, and one assembly. */
#define _DEFAULT_SOURCE /* realpath */
#include "ptx_assemble.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compact_why.h"

/* nvPTXCompiler.h's C API (CUDA 11.1 on; the toolkit ships no header for
 * it, the wheel does): an opaque handle and an int result, 0 for success. */
typedef struct nvPTXCompiler *ptxc_handle;
typedef int ptxc_result;

#define ASYNCRT_PTXCOMPILER_FUNCTIONS(X)                                                                               \
    X(nvPTXCompilerGetVersion, ptxc_result, (unsigned *, unsigned *))                                                  \
    X(nvPTXCompilerCreate, ptxc_result, (ptxc_handle *, size_t, const char *))                                         \
    X(nvPTXCompilerDestroy, ptxc_result, (ptxc_handle *))                                                              \
    X(nvPTXCompilerCompile, ptxc_result, (ptxc_handle, int, const char *const *))                                      \
    X(nvPTXCompilerGetCompiledProgramSize, ptxc_result, (ptxc_handle, size_t *))                                       \
    X(nvPTXCompilerGetCompiledProgram, ptxc_result, (ptxc_handle, void *))                                             \
    X(nvPTXCompilerGetErrorLogSize, ptxc_result, (ptxc_handle, size_t *))                                              \
    X(nvPTXCompilerGetErrorLog, ptxc_result, (ptxc_handle, char *))                                                    \
    X(asyncrt_ptxcompiler_version, const char *, (void))

struct asyncrt_ptxcompiler {
    void *handle;
    char path[4096];
    char version[32];
    asyncrt_lib_version parsed;
#define ASYNCRT_PTXCOMPILER_FIELD(name, result, args) result(*name) args;
    ASYNCRT_PTXCOMPILER_FUNCTIONS(ASYNCRT_PTXCOMPILER_FIELD)
#undef ASYNCRT_PTXCOMPILER_FIELD
};

static const char k_hint[] = "bash tools/setup-ptxcompiler.sh builds it from NVIDIA's nvidia-nvptxcompiler wheel of "
                             "NVRTC's version; or set ASYNCRT_PTXCOMPILER to its path";

bool asyncrt__ptxcompiler_path(const char *override, const char *nvrtc_path, char *out, size_t out_size, char *why,
                               size_t why_size)
{
    if (out_size) out[0] = '\0';
    if (override && *override) {
        if (strlen(override) >= out_size)
            return asyncrt__why(why, why_size, "compact images off: ASYNCRT_PTXCOMPILER is longer than %zu bytes",
                                out_size - 1);
        memcpy(out, override, strlen(override) + 1);
        return true;
    }
    char real[4096];
    if (!nvrtc_path || !*nvrtc_path || !realpath(nvrtc_path, real))
        return asyncrt__why(why, why_size,
                            "compact images off: NVRTC's file is not known (found by the dynamic loader?), so "
                            "neither is the folder of its nvPTXCompiler; set ASYNCRT_PTXCOMPILER");
    char *slash = strrchr(real, '/');
    *slash = '\0';
    if (strlen(real) + 1 + strlen(ASYNCRT_PTXCOMPILER_FILE) >= out_size)
        return asyncrt__why(why, why_size, "compact images off: NVRTC's folder %s is too long a path", real);
    snprintf(out, out_size, "%s/%s", real, ASYNCRT_PTXCOMPILER_FILE);
    return true;
}

/* Its own version call against nvPTXCompilerGetVersion and NVRTC's. */
static bool check_version(asyncrt_ptxcompiler *c, const asyncrt_lib_version *nvrtc, char *why, size_t why_size)
{
    const char *text = c->asyncrt_ptxcompiler_version();
    asyncrt_lib_version mine, want = nvrtc ? *nvrtc : (asyncrt_lib_version){-1, -1, -1};
    unsigned major = 0, minor = 0;
    if (!text || strlen(text) >= sizeof c->version || !asyncrt__lib_version_parse(text, &mine) || mine.patch < 0)
        return asyncrt__why(why, why_size, "compact images off: %s gives no MAJOR.MINOR.PATCH version (\"%s\")",
                            c->path, text ? text : "(null)");
    snprintf(c->version, sizeof c->version, "%s", text);
    c->parsed = mine;
    if (c->nvPTXCompilerGetVersion(&major, &minor) != 0 || (int)major != mine.major || (int)minor != mine.minor)
        return asyncrt__why(why, why_size,
                            "compact images off: %s says it is %s but its nvPTXCompiler is %u.%u: rebuild it (%s)",
                            c->path, text, major, minor, k_hint);
    char theirs[64];
    asyncrt__lib_version_format(&want, theirs, sizeof theirs);
    if (want.major < 0 || want.minor < 0)
        return asyncrt__why(why, why_size,
                            "compact images off: NVRTC's version is not known (%s), and nvPTXCompiler %s must be "
                            "of exactly NVRTC's",
                            theirs, text);
    /* A toolkit's libnvrtc.so.13 names no patch level: its PTX does, and each
     * compile holds it to this one's (asyncrt__ptxcompiler_matches). */
    if (want.patch < 0 ? mine.major != want.major || mine.minor != want.minor
                       : asyncrt__lib_version_compare(&mine, &want) != 0)
        return asyncrt__why(why, why_size,
                            "compact images off: nvPTXCompiler %s (%s) is not NVRTC's version %s, and another release "
                            "assembles other code (%s)",
                            text, c->path, theirs, k_hint);
    return true;
}

bool asyncrt__ptxcompiler_open(const char *path, const asyncrt_lib_version *nvrtc, asyncrt_ptxcompiler **out, char *why,
                               size_t why_size)
{
    *out = NULL;
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return asyncrt__why(why, why_size, "compact images off: no nvPTXCompiler at %s (%s)", path ? path : "(none)",
                            k_hint);
    if (!S_ISREG(st.st_mode)) return asyncrt__why(why, why_size, "compact images off: %s is not a regular file", path);
    asyncrt_ptxcompiler *c = calloc(1, sizeof *c);
    if (!c) return asyncrt__why(why, why_size, "compact images off: out of memory");
    snprintf(c->path, sizeof c->path, "%s", path);
    if (!(c->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char *e = dlerror();
        asyncrt__why(why, why_size, "compact images off: cannot open %s (%s)", path, e ? e : "?");
        free(c);
        return false;
    }
#define ASYNCRT_PTXCOMPILER_RESOLVE(name, result, args)                                                                \
    if (!(*(void **)&c->name = dlsym(c->handle, #name))) {                                                             \
        asyncrt__why(why, why_size, "compact images off: %s lacks %s: not a loader library that %s", path, #name,      \
                     "tools/setup-ptxcompiler.sh built");                                                              \
        asyncrt__ptxcompiler_close(c);                                                                                 \
        return false;                                                                                                  \
    }
    ASYNCRT_PTXCOMPILER_FUNCTIONS(ASYNCRT_PTXCOMPILER_RESOLVE)
#undef ASYNCRT_PTXCOMPILER_RESOLVE
    if (!check_version(c, nvrtc, why, why_size)) {
        asyncrt__ptxcompiler_close(c);
        return false;
    }
    *out = c;
    return true;
}

void asyncrt__ptxcompiler_close(asyncrt_ptxcompiler *c)
{
    if (!c) return;
    if (c->handle) dlclose(c->handle);
    free(c);
}

const char *asyncrt__ptxcompiler_version(const asyncrt_ptxcompiler *c) { return c->version; }
const char *asyncrt__ptxcompiler_file(const asyncrt_ptxcompiler *c) { return c->path; }

bool asyncrt__ptxcompiler_matches(const asyncrt_ptxcompiler *c, const asyncrt_lib_version *v)
{
    return v->patch >= 0 && asyncrt__lib_version_compare(&c->parsed, v) == 0;
}

bool asyncrt__ptx_made_by(const char *ptx, size_t size, asyncrt_lib_version *out)
{
    static const char mark[] = "// Cuda compilation tools, release ";
    size_t n = size < 1024 ? size : 1024; /* NVRTC's header is its first ~200 bytes */
    for (size_t i = 0; i + sizeof mark < n; i++) {
        if ((i && ptx[i - 1] != '\n') || memcmp(ptx + i, mark, sizeof mark - 1) != 0) continue;
        const char *v = memchr(ptx + i, 'V', n - i);
        const char *end = memchr(ptx + i, '\n', n - i);
        if (!v || !end || v > end || end - v > 24) return false;
        char text[32];
        snprintf(text, sizeof text, "%.*s", (int)(end - v - 1), v + 1);
        return asyncrt__lib_version_parse(text, out) && out->patch >= 0;
    }
    return false;
}

/* nvPTXCompiler's error log, its first line or so, into why. */
static void say_log(const asyncrt_ptxcompiler *c, ptxc_handle h, ptxc_result r, const char *call, char *why,
                    size_t why_size)
{
    size_t size = 0;
    char *log = NULL;
    if (c->nvPTXCompilerGetErrorLogSize(h, &size) == 0 && size && size < ((size_t)1 << 24) &&
        (log = calloc(1, size + 1)) && c->nvPTXCompilerGetErrorLog(h, log) != 0)
        log[0] = '\0';
    asyncrt__why(why, why_size, "%s failed (nvPTXCompileResult %d)%s%.300s", call, r, log && *log ? ": " : "",
                 log ? log : "");
    free(log);
}

bool asyncrt__ptx_assemble(const asyncrt_ptxcompiler *c, const char *ptx, size_t size, const char *const *options,
                           size_t count, void **cubin, size_t *cubin_size, char *why, size_t why_size)
{
    *cubin = NULL;
    *cubin_size = 0;
    if (count > 1024) return asyncrt__why(why, why_size, "%zu options for nvPTXCompiler", count);
    while (size && !ptx[size - 1]) size--;
    ptxc_handle h = NULL;
    ptxc_result r = c->nvPTXCompilerCreate(&h, size, ptx);
    if (r != 0) return asyncrt__why(why, why_size, "nvPTXCompilerCreate failed (nvPTXCompileResult %d)", r);
    bool ok = false;
    size_t n = 0;
    if ((r = c->nvPTXCompilerCompile(h, (int)count, options)) != 0) {
        say_log(c, h, r, "nvPTXCompilerCompile", why, why_size);
    } else if ((r = c->nvPTXCompilerGetCompiledProgramSize(h, &n)) != 0 || n == 0) {
        asyncrt__why(why, why_size, "nvPTXCompilerGetCompiledProgramSize failed (nvPTXCompileResult %d, %zu bytes)", r,
                     n);
    } else if (!(*cubin = malloc(n))) {
        asyncrt__why(why, why_size, "out of memory for a %zu-byte CUBIN", n);
    } else if ((r = c->nvPTXCompilerGetCompiledProgram(h, *cubin)) != 0) {
        asyncrt__why(why, why_size, "nvPTXCompilerGetCompiledProgram failed (nvPTXCompileResult %d)", r);
    } else {
        *cubin_size = n;
        ok = true;
    }
    /* A handle that does not go is a leak in the user's library, and a CUBIN from it is not trusted either. */
    if ((r = c->nvPTXCompilerDestroy(&h)) != 0 && ok)
        ok = asyncrt__why(why, why_size, "nvPTXCompilerDestroy failed (nvPTXCompileResult %d)", r);
    if (!ok) {
        free(*cubin);
        *cubin = NULL;
        *cubin_size = 0;
    }
    return ok;
}
