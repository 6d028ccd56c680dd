/* A stand-in for the loader library tools/setup-ptxcompiler.sh builds, for
 * test_ptx_assemble on machines without NVIDIA's archive. Built three ways:
 *   fake_ptxcompiler        "13.1.115", nvPTXCompilerGetVersion 13.1
 *   fake_ptxcompiler_liar   "13.1.115", nvPTXCompilerGetVersion 13.0
 *   fake_ptxcompiler_bare   no asyncrt_ptxcompiler_version (a plain build of the archive)
 *   fake_ptxcompiler_b      fake_ptxcompiler in another file (test_compact_flow's other assembler)
 * ($ASYNCRT_TEST_FAKE_PTXC_VERSION, when set, is the version both calls give.)
 * Its "CUBIN" is "FAKE|" + the options, each followed by '|', + the PTX; PTX
 * holding "fail" fails to compile (with a log), "stuck" fails to destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_MINOR
#define FAKE_MINOR 1
#endif

typedef struct fake {
    char *ptx, *out;
    size_t out_size;
    int compiled;
} fake;

#define EXPORT __attribute__((visibility("default")))

/* test_compact_flow's fakes are of the NVRTC in use: $ASYNCRT_TEST_FAKE_PTXC_VERSION. */
static const char *version(void)
{
    const char *v = getenv("ASYNCRT_TEST_FAKE_PTXC_VERSION");
    return v && *v ? v : "13.1.115";
}

#ifndef FAKE_BARE
/* Called once by each open: $ASYNCRT_TEST_FAKE_PTXC_TRACE counts opens. */
EXPORT const char *asyncrt_ptxcompiler_version(void)
{
    const char *trace = getenv("ASYNCRT_TEST_FAKE_PTXC_TRACE");
    FILE *f = trace && *trace ? fopen(trace, "a") : NULL;
    if (f) {
        fputs("opened\n", f);
        fclose(f);
    }
    return version();
}
#endif

/* Another file of the same behaviour (fake_ptxcompiler_b): another hash. */
#ifdef FAKE_FLAVOR
EXPORT const int fake_flavor = FAKE_FLAVOR;
#endif

EXPORT int nvPTXCompilerGetVersion(unsigned *major, unsigned *minor)
{
    *major = 13;
    *minor = FAKE_MINOR;
    if (getenv("ASYNCRT_TEST_FAKE_PTXC_VERSION")) sscanf(version(), "%u.%u", major, minor);
    return 0;
}

EXPORT int nvPTXCompilerCreate(fake **h, size_t size, const char *ptx)
{
    fake *f = calloc(1, sizeof *f);
    if (!f || !(f->ptx = malloc(size + 1))) {
        free(f);
        return 5;
    }
    memcpy(f->ptx, ptx, size);
    f->ptx[size] = '\0';
    *h = f;
    return 0;
}

EXPORT int nvPTXCompilerDestroy(fake **h)
{
    fake *f = *h;
    int stuck = strstr(f->ptx, "stuck") != NULL;
    free(f->ptx);
    free(f->out);
    free(f);
    *h = NULL;
    return stuck ? 4 : 0;
}

EXPORT int nvPTXCompilerCompile(fake *f, int count, const char *const *options)
{
    if (strstr(f->ptx, "fail")) return 3;
    size_t size = 6 + strlen(f->ptx);
    for (int i = 0; i < count; i++) size += strlen(options[i]) + 1;
    if (!(f->out = malloc(size))) return 5;
    strcpy(f->out, "FAKE|");
    for (int i = 0; i < count; i++) strcat(strcat(f->out, options[i]), "|");
    strcat(f->out, f->ptx);
    f->out_size = strlen(f->out);
    f->compiled = 1;
    return 0;
}

EXPORT int nvPTXCompilerGetCompiledProgramSize(fake *f, size_t *size)
{
    if (!f->compiled) return 6;
    *size = f->out_size;
    return 0;
}

EXPORT int nvPTXCompilerGetCompiledProgram(fake *f, void *out)
{
    if (!f->compiled) return 6;
    memcpy(out, f->out, f->out_size);
    return 0;
}

static const char k_log[] = "ptxas fatal   : fake failure on line 1";

EXPORT int nvPTXCompilerGetErrorLogSize(fake *f, size_t *size)
{
    (void)f;
    *size = sizeof k_log;
    return 0;
}

EXPORT int nvPTXCompilerGetErrorLog(fake *f, char *log)
{
    (void)f;
    memcpy(log, k_log, sizeof k_log);
    return 0;
}
