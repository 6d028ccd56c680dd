#define _GNU_SOURCE /* realpath in <stdlib.h> */
#include "lean.h"

#include "context.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const asyncrt__lean_barrier_example =
    "#include <cuda/barrier>\n"
    "extern \"C\" __global__ void barrier_scale(const float *x, float *y, int n) {\n"
    "  __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
    "  __shared__ float s[256];\n"
    "  if (threadIdx.x == 0) init(&bar, blockDim.x);\n"
    "  __syncthreads();\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) cuda::memcpy_async(&s[threadIdx.x], &x[i], sizeof(float), bar);\n"
    "  bar.arrive_and_wait();\n"
    "  if (i < n) y[i] = 2.0f * s[threadIdx.x] + 1.0f;\n"
    "}\n";
const char *const asyncrt__lean_off_option = "-Xptxas=-O3";

bool asyncrt__lean_enabled(void)
{
    const char *v = getenv("ASYNCRT_LEAN");
    return !(v && strcmp(v, "0") == 0); /* on unless ASYNCRT_LEAN=0 */
}

/* ---- pruning ------------------------------------------------------------- */

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '%';
}

/* The declared name of a module-scope `.global`/`.const` line that may be
 * dropped, or false. [line, end) excludes the newline. */
static bool prunable(const char *line, const char *end, const char **name, size_t *name_len)
{
    if (strncmp(line, ".global ", 8) != 0 && strncmp(line, ".const ", 7) != 0) return false;
    if (end == line || end[-1] != ';') return false; /* multi-line initializer: keep */
    /* The name ends before the first '[', '=' or ';'. */
    const char *stop = line;
    while (stop < end && *stop != '[' && *stop != '=' && *stop != ';') stop++;
    const char *e = stop;
    while (e > line && (e[-1] == ' ' || e[-1] == '\t')) e--;
    const char *b = e;
    while (b > line && ident_char(b[-1])) b--;
    if (b == e) return false;
    *name = b;
    *name_len = (size_t)(e - b);
    return true;
}

typedef struct decl {
    const char *name;
    size_t len;
    size_t line_start, line_end; /* byte offsets, line_end includes the newline */
    size_t uses;
    uint64_t hash;
} decl;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* One pass; returns how many declarations it removed. */
static size_t prune_once(char *ptx)
{
    size_t n = 0, cap = 0;
    decl *d = NULL;
    for (char *line = ptx; *line;) {
        char *nl = strchr(line, '\n');
        char *end = nl ? nl : line + strlen(line);
        const char *name;
        size_t len;
        if (prunable(line, end, &name, &len) && !memmem(line, (size_t)(end - line), ".visible", 8) &&
            !memmem(line, (size_t)(end - line), ".extern", 7) && !memmem(line, (size_t)(end - line), ".weak", 5)) {
            if (n == cap) {
                size_t grown_cap = cap ? 2 * cap : 256;
                decl *grown = realloc(d, grown_cap * sizeof *d);
                if (!grown) {
                    free(d);
                    return 0; /* keep everything: pruning is an optimisation */
                }
                d = grown;
                cap = grown_cap;
            }
            d[n++] = (decl){name, len, (size_t)(line - ptx), (size_t)(end - ptx) + (nl ? 1 : 0), 0,
                            hash_bytes(name, len)};
        }
        line = nl ? nl + 1 : end;
    }
    if (!n) {
        free(d);
        return 0;
    }
    /* An open-addressing table of the candidates, then count every identifier. */
    size_t slots = 1;
    while (slots < 4 * n) slots <<= 1;
    int32_t *table = malloc(slots * sizeof *table);
    if (!table) {
        free(d);
        return 0;
    }
    memset(table, 0xff, slots * sizeof *table);
    for (size_t i = 0; i < n; i++) {
        size_t s = d[i].hash & (slots - 1);
        while (table[s] >= 0) s = (s + 1) & (slots - 1);
        table[s] = (int32_t)i;
    }
    for (const char *p = ptx; *p;) {
        if (!ident_char(*p)) {
            p++;
            continue;
        }
        const char *b = p;
        while (*p && ident_char(*p)) p++;
        size_t len = (size_t)(p - b);
        uint64_t h = hash_bytes(b, len);
        for (size_t s = h & (slots - 1); table[s] >= 0; s = (s + 1) & (slots - 1)) {
            decl *c = &d[table[s]];
            if (c->hash == h && c->len == len && memcmp(c->name, b, len) == 0) {
                c->uses++;
                break;
            }
        }
    }
    free(table);
    /* Compact: copy every byte not in a dropped line (declarations are in order). */
    size_t removed = 0, read = 0, write = 0, total = strlen(ptx);
    for (size_t i = 0; i < n; i++) {
        if (d[i].uses > 1) continue; /* named somewhere besides its declaration */
        memmove(ptx + write, ptx + read, d[i].line_start - read);
        write += d[i].line_start - read;
        read = d[i].line_end;
        removed++;
    }
    memmove(ptx + write, ptx + read, total - read + 1);
    free(d);
    return removed;
}

size_t asyncrt__lean_prune_ptx(char *ptx)
{
    size_t total = 0;
    for (size_t r; (r = prune_once(ptx)) > 0;) total += r;
    return total;
}

bool asyncrt__lean_options_allow(const char *const *options, size_t count)
{
    static const char *const k_ptxas_affecting[] = {
        "-G", "--device-debug", "-lineinfo", "--generate-line-info", "-maxrregcount", "--maxrregcount",
        "-Xptxas", "--ptxas-options", "-dlto", "--dlink-time-opt", "-rdc", "--relocatable-device-code",
        "-dc", "--device-c", "-ewp", "--extensible-whole-program", "-lto", "--gen-opt-lto", "-ftz",
        "--ftz", "-prec-div", "--prec-div", "-prec-sqrt", "--prec-sqrt", "-fmad", "--fmad",
        "-use_fast_math", "--use_fast_math", "-dopt", "--dopt", "-Ofast-compile", "--Ofast-compile"};
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < sizeof k_ptxas_affecting / sizeof *k_ptxas_affecting; k++) {
            size_t n = strlen(k_ptxas_affecting[k]);
            if (strncmp(options[i], k_ptxas_affecting[k], n) == 0) return false;
        }
    return true;
}

/* ---- nvJitLink, opened once beside NVRTC ------------------------------- */

typedef struct jitlink {
    void *handle;
    int (*create)(void **, uint32_t, const char **);
    int (*destroy)(void **);
    int (*add_data)(void *, int, const void *, size_t, const char *);
    int (*complete)(void *);
    int (*cubin_size)(void *, size_t *);
    int (*cubin)(void *, void *);
    int (*log_size)(void *, size_t *);
    int (*log)(void *, char *);
} jitlink;

static jitlink g_jit;
static char g_jit_why[PATH_MAX + 128];
static char g_nvrtc_path[PATH_MAX];
static pthread_once_t g_jit_once = PTHREAD_ONCE_INIT;

static void open_jitlink(void)
{
    char dir[PATH_MAX];
    int major = 0;
    const char *so = strstr(g_nvrtc_path, "libnvrtc.so.");
    if (so) major = atoi(so + strlen("libnvrtc.so."));
    if (!realpath(g_nvrtc_path, dir)) snprintf(dir, sizeof dir, "%s", g_nvrtc_path);
    char *slash = strrchr(dir, '/');
    char path[PATH_MAX + 32];
    if (slash) {
        *slash = 0;
        snprintf(path, sizeof path, "%s/libnvJitLink.so.%d", dir, major ? major : 13);
    } else {
        snprintf(path, sizeof path, "libnvJitLink.so.%d", major ? major : 13);
    }
    g_jit.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!g_jit.handle) {
        snprintf(g_jit_why, sizeof g_jit_why, "no nvJitLink beside NVRTC (%s)", path);
        return;
    }
    *(void **)&g_jit.create = dlsym(g_jit.handle, "nvJitLinkCreate");
    *(void **)&g_jit.destroy = dlsym(g_jit.handle, "nvJitLinkDestroy");
    *(void **)&g_jit.add_data = dlsym(g_jit.handle, "nvJitLinkAddData");
    *(void **)&g_jit.complete = dlsym(g_jit.handle, "nvJitLinkComplete");
    *(void **)&g_jit.cubin_size = dlsym(g_jit.handle, "nvJitLinkGetLinkedCubinSize");
    *(void **)&g_jit.cubin = dlsym(g_jit.handle, "nvJitLinkGetLinkedCubin");
    *(void **)&g_jit.log_size = dlsym(g_jit.handle, "nvJitLinkGetErrorLogSize");
    *(void **)&g_jit.log = dlsym(g_jit.handle, "nvJitLinkGetErrorLog");
    if (!g_jit.create || !g_jit.destroy || !g_jit.add_data || !g_jit.complete || !g_jit.cubin_size ||
        !g_jit.cubin || !g_jit.log_size || !g_jit.log) {
        snprintf(g_jit_why, sizeof g_jit_why, "%s lacks an nvJitLink entry point", path);
        dlclose(g_jit.handle);
        memset(&g_jit, 0, sizeof g_jit);
    }
}

void *asyncrt__lean_assemble(const char *nvrtc_path, const char *ptx, const char *arch, size_t *size,
                            char *why, size_t why_size)
{
    *size = 0;
    if (!g_nvrtc_path[0]) snprintf(g_nvrtc_path, sizeof g_nvrtc_path, "%s", nvrtc_path);
    pthread_once(&g_jit_once, open_jitlink);
    if (!g_jit.handle) {
        snprintf(why, why_size, "%s", g_jit_why);
        return NULL;
    }
    char arch_option[48];
    snprintf(arch_option, sizeof arch_option, "-arch=%s", arch);
    const char *options[] = {arch_option};
    void *h = NULL, *cubin = NULL;
    enum { INPUT_PTX = 2 }; /* NVJITLINK_INPUT_PTX */
    int r = g_jit.create(&h, 1, options);
    if (r == 0) r = g_jit.add_data(h, INPUT_PTX, ptx, strlen(ptx) + 1, "lean.ptx");
    if (r == 0) r = g_jit.complete(h);
    if (r == 0) r = g_jit.cubin_size(h, size);
    if (r == 0 && (cubin = malloc(*size))) r = g_jit.cubin(h, cubin);
    if (r != 0 || !cubin) {
        size_t log_size = 0;
        char log[256] = "";
        if (h && g_jit.log_size(h, &log_size) == 0 && log_size > 0 && log_size <= sizeof log) g_jit.log(h, log);
        snprintf(why, why_size, "nvJitLink failed (%d)%s%s", r, log[0] ? ": " : "", log);
        free(cubin);
        cubin = NULL;
        *size = 0;
    }
    if (h) g_jit.destroy(&h);
    return cubin;
}

void asyncrt__lean_apply(asyncrt_context *ctx, const asyncrt_nvrtc *nv, void *nvrtc_program,
                        const char *arch, unsigned char **image, size_t *image_size)
{
    nvrtcProgram prog = nvrtc_program;
    size_t ptx_size = 0;
    char *ptx = NULL;
    if (nv->nvrtcGetPTXSize(prog, &ptx_size) != NVRTC_SUCCESS || !(ptx = malloc(ptx_size + 1))) return;
    ptx[ptx_size] = 0;
    if (nv->nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS || asyncrt__lean_prune_ptx(ptx) == 0) {
        free(ptx);
        return;
    }
    char why[384];
    size_t lean_size = 0;
    void *lean = asyncrt__lean_assemble(nv->path, ptx, arch, &lean_size, why, sizeof why);
    free(ptx);
    if (!lean) {
        asyncrt__log(ctx, 1, "keeping NVRTC's %zu-byte CUBIN: %s", *image_size, why);
        return;
    }
    asyncrt__log(ctx, 2, "lean CUBIN: %zu bytes instead of NVRTC's %zu (unused globals dropped)", lean_size,
                *image_size);
    free(*image);
    *image = lean;
    *image_size = lean_size;
}
