/* asyncrt_cache_explain (asyncrt/cache.h): the key a compile would use, and
 * why it would miss. The job is keyed exactly as compile.c's flow keys it
 * (toolkit.c, key.c: the same code, the same record), then judged
 * (explain_judge.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_job.h"
#include "explain_report.h"
#include "target.h"

static asyncrt_status explain_body(asyncrt_context *ctx, const char *source_name, const char *source,
                                   const asyncrt_compile_options *opts, unsigned flags,
                                   asyncrt_cache_explanation *full)
{
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT;
    if (!source) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "source is NULL");
    if (flags & ~ASYNCRT_CACHE_EXPLAIN_REMOTE)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "explain flags 0x%x: only ASYNCRT_CACHE_EXPLAIN_REMOTE is known", flags);
    if (opts) ASYNCRT_TRY(asyncrt__sized_take(ctx, ASYNCRT_SIZED_COMPILE_OPTIONS, opts, &o, "compile options"));
    if (!source_name || !*source_name) source_name = "kernel.cu";
    if (!o.arch || strcmp(o.arch, "auto") == 0) ASYNCRT_TRY(asyncrt__wait_device(ctx)); /* as a compile's "auto" */
    asyncrt__arch arch;
    char why[2048];
    ASYNCRT_TRY(asyncrt__arch_resolve_why(ctx, o.arch, &arch, why, sizeof why));
    asyncrt_compile_job job;
    asyncrt__job_init(&job, ctx, source_name, source, &o, &arch);
    asyncrt_status s = asyncrt__job_headers(&job);
    if (s == ASYNCRT_SUCCESS) s = asyncrt__job_key(&job);
    if (s == ASYNCRT_SUCCESS) asyncrt__explain_judge(&job, flags, full);
    if (s == ASYNCRT_SUCCESS && (!full->text || !full->json))
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory explaining %s", source_name);
    asyncrt__job_free(&job);
    return s;
}

/* Hands *full to the caller's struct, or frees its strings. */
static asyncrt_status give(asyncrt_context *ctx, asyncrt_status s, asyncrt_cache_explanation *full,
                           asyncrt_cache_explanation *out)
{
    if (s == ASYNCRT_SUCCESS) s = asyncrt__sized_give(ctx, ASYNCRT_SIZED_CACHE_EXPLANATION, out, full, "cache explanation");
    if (s != ASYNCRT_SUCCESS) asyncrt_cache_explanation_free(full);
    return s;
}

asyncrt_status asyncrt_cache_explain(asyncrt_context *ctx, const char *source_name, const char *source,
                                     const asyncrt_compile_options *opts, unsigned flags,
                                     asyncrt_cache_explanation *out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(ctx);
    asyncrt_cache_explanation full = {.size = sizeof full};
    asyncrt_status s = asyncrt__sized_give(ctx, ASYNCRT_SIZED_CACHE_EXPLANATION, out, &full, "cache explanation");
    if (s == ASYNCRT_SUCCESS) s = give(ctx, explain_body(ctx, source_name, source, opts, flags, &full), &full, out);
    return asyncrt__leave(ctx, s);
}
