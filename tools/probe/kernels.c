/* Compiling one part of probe_features.cu. */
#include "kernels.h"

#include "base_internal.h"    /* the embedded probe_features.cu */
#include "context_internal.h" /* asyncrt__fail */

#define PROBE_SOURCE_NAME "asyncrt/probe_features.cu"

const char *probe_kernel_source(void)
{
    return asyncrt__embedded_find(PROBE_SOURCE_NAME);
}

static asyncrt_status options_for(asyncrt_context *ctx, const char **define, const char *arch,
                                  asyncrt_compile_options *opts)
{
    if (!probe_kernel_source())
        return asyncrt__fail(ctx, ASYNCRT_ERROR_NOT_FOUND, "%s is not embedded in this libasyncrt", PROBE_SOURCE_NAME);
    *opts = (asyncrt_compile_options){.size = sizeof(asyncrt_compile_options),
                                      .arch = arch, .defines = define, .define_count = 1};
    return ASYNCRT_SUCCESS;
}

asyncrt_status probe_compile(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_program **out)
{
    asyncrt_compile_options opts;
    asyncrt_status s = options_for(ctx, &define, arch, &opts);
    if (s != ASYNCRT_SUCCESS) return s;
    return asyncrt_program_compile(ctx, PROBE_SOURCE_NAME, probe_kernel_source(), &opts, out);
}

asyncrt_status probe_build_module(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_module **out)
{
    asyncrt_compile_options opts;
    asyncrt_status s = options_for(ctx, &define, arch, &opts);
    if (s != ASYNCRT_SUCCESS) return s;
    return asyncrt_module_build(ctx, PROBE_SOURCE_NAME, probe_kernel_source(), &opts, out);
}
