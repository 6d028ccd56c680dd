/* A stand-in NVRTC of any version ($FAKE_NVRTC_VERSION, e.g. "13.5"; default
 * 13.0) that knows the archs in $FAKE_NVRTC_ARCHS ("75,80,90"; default NVRTC
 * 13.0's), so that the arch rule runs through the real loader and compile
 * path against every NVRTC/driver pair (test_arch_matrix). It compiles
 * nothing: nvrtcCompileProgram records the target it was asked for
 * (fake_nvrtc_compiles, fake_nvrtc_last_arch, looked up with dlsym by the
 * test) and fails with a log naming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int result;
enum { OK = 0, INVALID_INPUT = 3, COMPILATION = 6 };

static int g_compiles;
static char g_arch[64];

int fake_nvrtc_compiles(void);
const char *fake_nvrtc_last_arch(void);
int fake_nvrtc_compiles(void) { return g_compiles; }
const char *fake_nvrtc_last_arch(void) { return g_arch; }

static const char *archs_text(void)
{
    const char *a = getenv("FAKE_NVRTC_ARCHS");
    return a && *a ? a : "75,80,86,87,88,89,90,100,103,110,120,121";
}

result nvrtcVersion(int *major, int *minor);
result nvrtcVersion(int *major, int *minor)
{
    const char *v = getenv("FAKE_NVRTC_VERSION");
    *major = 13;
    *minor = 0;
    if (v && sscanf(v, "%d.%d", major, minor) != 2) return INVALID_INPUT;
    return OK;
}

const char *nvrtcGetErrorString(result r);
const char *nvrtcGetErrorString(result r) { return r == COMPILATION ? "NVRTC_ERROR_COMPILATION" : "FAKE_NVRTC_ERROR"; }

result nvrtcGetNumSupportedArchs(int *n);
result nvrtcGetNumSupportedArchs(int *n)
{
    *n = 1;
    for (const char *p = archs_text(); *p; p++) *n += *p == ',';
    return OK;
}

result nvrtcGetSupportedArchs(int *out);
result nvrtcGetSupportedArchs(int *out)
{
    const char *p = archs_text();
    for (int i = 0; *p; i++) {
        out[i] = atoi(p);
        p += strcspn(p, ",");
        p += *p == ',';
    }
    return OK;
}

/* A program is a heap cell: its address is its handle. */
result nvrtcCreateProgram(void **prog, const char *src, const char *name, int n, const char *const *headers,
                          const char *const *names);
result nvrtcCreateProgram(void **prog, const char *src, const char *name, int n, const char *const *headers,
                          const char *const *names)
{
    (void)src, (void)name, (void)n, (void)headers, (void)names;
    *prog = calloc(1, 1);
    return *prog ? OK : INVALID_INPUT;
}

result nvrtcDestroyProgram(void **prog);
result nvrtcDestroyProgram(void **prog)
{
    free(*prog);
    *prog = NULL;
    return OK;
}

result nvrtcAddNameExpression(void *prog, const char *name);
result nvrtcAddNameExpression(void *prog, const char *name) { (void)prog, (void)name; return OK; }

result nvrtcCompileProgram(void *prog, int n, const char *const *options);
result nvrtcCompileProgram(void *prog, int n, const char *const *options)
{
    (void)prog;
    g_compiles++;
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(options[i], '=');
        if (eq && (strncmp(options[i], "-arch=", 6) == 0 || strncmp(options[i], "--gpu-architecture=", 19) == 0))
            snprintf(g_arch, sizeof g_arch, "%s", eq + 1);
    }
    return COMPILATION;
}

result nvrtcGetProgramLogSize(void *prog, size_t *size);
result nvrtcGetProgramLogSize(void *prog, size_t *size)
{
    (void)prog;
    *size = strlen("fake NVRTC: asked for ") + strlen(g_arch) + 1;
    return OK;
}

result nvrtcGetProgramLog(void *prog, char *log);
result nvrtcGetProgramLog(void *prog, char *log)
{
    (void)prog;
    sprintf(log, "fake NVRTC: asked for %s", g_arch);
    return OK;
}

/* Nothing is ever compiled, so there is nothing to get. */
result nvrtcGetPTXSize(void *prog, size_t *size);
result nvrtcGetPTXSize(void *prog, size_t *size) { (void)prog, (void)size; return INVALID_INPUT; }
result nvrtcGetPTX(void *prog, char *out);
result nvrtcGetPTX(void *prog, char *out) { (void)prog, (void)out; return INVALID_INPUT; }
result nvrtcGetCUBINSize(void *prog, size_t *size);
result nvrtcGetCUBINSize(void *prog, size_t *size) { (void)prog, (void)size; return INVALID_INPUT; }
result nvrtcGetCUBIN(void *prog, char *out);
result nvrtcGetCUBIN(void *prog, char *out) { (void)prog, (void)out; return INVALID_INPUT; }
result nvrtcGetLoweredName(void *prog, const char *expr, const char **lowered);
result nvrtcGetLoweredName(void *prog, const char *expr, const char **lowered)
{
    (void)prog;
    *lowered = expr;
    return OK;
}
