/* Compiling one part of probe_features.cu. */
#include "kernels.h"

#define PROBE_SOURCE_NAME "asyncrt/probe_features.cu"

const char *probe_kernel_source(void) { return probe_kernel_find(PROBE_SOURCE_NAME); }

static asyncrt_compile_options options_for(const char **define, const char *arch)
{
    return (asyncrt_compile_options){.size = sizeof(asyncrt_compile_options),
                                     .arch = arch, .defines = define, .define_count = 1};
}

asyncrt_status probe_compile(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_program **out)
{
    asyncrt_compile_options opts = options_for(&define, arch);
    return asyncrt_program_compile(ctx, PROBE_SOURCE_NAME, probe_kernel_source(), &opts, out);
}

asyncrt_status probe_build_module(asyncrt_context *ctx, const char *define, const char *arch, asyncrt_module **out)
{
    asyncrt_compile_options opts = options_for(&define, arch);
    return asyncrt_module_build(ctx, PROBE_SOURCE_NAME, probe_kernel_source(), &opts, out);
}
