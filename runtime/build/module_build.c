/* Source to a loaded module (asyncrt_module_build): the compile layer's
 * program for the open device, then the load layer's module. This layer is
 * the one place that does both: compile never loads, load never compiles. */
#include "compile.h"
#include "capture.h"
#include "context.h"
#include "program.h"
#include "progress.h"

static asyncrt_status module_build(asyncrt_context *ctx, const char *source_name, const char *source,
                                   const asyncrt_compile_options *opts, asyncrt_module **out)
{
    *out = NULL;
    /* a capture would refuse the load anyway: refuse before the compile */
    ASYNCRT_TRY(asyncrt__capture_refuse(ctx, "building module", source_name));
    double start = asyncrt__now_ms();
    asyncrt_program *program = NULL;
    asyncrt_status s = asyncrt__program_compile_to_load(ctx, source_name, source, opts, &program);
    if (s == ASYNCRT_SUCCESS) asyncrt__progress_options(opts, ASYNCRT_PROGRESS_LOAD, source_name, program->arch);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_module_load(ctx, program, out);
    if (s == ASYNCRT_SUCCESS)
        asyncrt__log(ctx, 2, "%s: source to loaded module in %.2f ms (%s)",
                     source_name ? source_name : "kernel.cu", asyncrt__now_ms() - start,
                     program->origin == ASYNCRT_ORIGIN_COMPILED ? "compiled" : "from cache");
    asyncrt_program_destroy(program);
    return s;
}

asyncrt_status asyncrt_module_build(asyncrt_context *ctx, const char *source_name, const char *source,
                                    const asyncrt_compile_options *opts, asyncrt_module **out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, module_build(ctx, source_name, source, opts, out));
}
