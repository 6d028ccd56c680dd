/* The compile-time capability matrix. */
#include "arch_matrix.h"

#include <stdio.h>
#include <string.h>

#include "kernels.h"

static void add_arch(probe_arch_matrix *m, const char *fmt, int number)
{
    if (m->arch_count < PROBE_MAX_ARCHS)
        snprintf(m->archs[m->arch_count++], sizeof m->archs[0], fmt, number);
}

/* The tool's own failure, kept here rather than in the library's context. */
static char g_why[256];

static asyncrt_status probe_arch_matrix_refuse(const char *why)
{
    snprintf(g_why, sizeof g_why, "%s", why);
    return ASYNCRT_ERROR_NVRTC;
}

const char *probe_arch_matrix_why(const asyncrt_context *ctx)
{
    return g_why[0] ? g_why : asyncrt_context_last_error(ctx);
}

asyncrt_status probe_arch_matrix_build(asyncrt_context *ctx, probe_arch_matrix *m)
{
    memset(m, 0, sizeof *m);
    int numbers[PROBE_MAX_ARCHS];
    size_t n = 0;
    if (asyncrt_nvrtc_supported_archs(numbers, PROBE_MAX_ARCHS, &n) != ASYNCRT_SUCCESS || n == 0 ||
        n > PROBE_MAX_ARCHS)
        return probe_arch_matrix_refuse("nvrtcGetSupportedArchs gave no archs");
    for (size_t i = 0; i < n; i++) {
        add_arch(m, "sm_%d", numbers[i]);
        if (numbers[i] == 90 || numbers[i] == 100) add_arch(m, "sm_%da", numbers[i]);
    }
    for (int f = 0; f < PROBE_FEATURE_COUNT; f++)
        for (size_t a = 0; a < m->arch_count; a++) {
            asyncrt_program *program = NULL;
            asyncrt_status s = probe_compile(ctx, probe_feature_get(f)->define, m->archs[a], &program);
            asyncrt_program_destroy(program);
            m->compiles[f][a] = s == ASYNCRT_SUCCESS;
            /* A kernel the arch rejects is an answer; NVRTC breaking is not. */
            if (s != ASYNCRT_SUCCESS && s != ASYNCRT_ERROR_COMPILE && s != ASYNCRT_ERROR_UNSUPPORTED_ARCH) return s;
        }
    return ASYNCRT_SUCCESS;
}
