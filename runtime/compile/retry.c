/* The sm_XYa retry (compile_job.h). `auto` builds sm_XY for the exact
 * device; a kernel using arch-specific instructions (wgmma, setmaxnreg)
 * fails there in ptxas and is retried once with sm_XYa. An explicit target
 * gets a hint instead. A retry that succeeded is found in the cache under
 * sm_XYa's key next time, so the failing compile is not repeated. */
#include <stdlib.h>
#include <string.h>

#include "compile_job.h"

bool asyncrt__retry_earlier(const asyncrt_compile_job *job, bool from_auto, asyncrt__arch *retry)
{
    const asyncrt__arch *first = &job->arch;
    *retry = *first;
    retry->suffix = 'a';
    return from_auto && !first->ptx && !first->suffix && first->number >= 90;
}

bool asyncrt__retry_plan(const asyncrt_compile_job *job, bool from_auto, asyncrt_retry *r, asyncrt_status *s)
{
    asyncrt_context *ctx = job->ctx;
    *r = (asyncrt_retry){.first = job->arch, .retry = job->arch};
    r->count = asyncrt__nvrtc_supported_archs(r->supported, 64); /* only now: a cache hit must not load NVRTC */
    if (!(r->first_error = strdup(asyncrt_context_last_error(ctx)))) {
        *s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
        return false;
    }
    if (asyncrt__arch_after_failure(&r->first, from_auto, r->supported, r->count, r->first_error, &r->retry,
                                    r->hint, sizeof r->hint)) {
        char name[32];
        asyncrt__arch_format(&r->retry, name, sizeof name);
        asyncrt__log(ctx, 1, "target %s: ptxas says %s lacks instructions %s uses; retrying with %s", name,
                     job->arch_name, job->source_name, name);
        return true;
    }
    if (*r->hint) *s = asyncrt__fail(ctx, *s, "%s\n%s", r->first_error, r->hint);
    free(r->first_error);
    r->first_error = NULL;
    return false;
}

asyncrt_status asyncrt__retry_finish(const asyncrt_compile_job *job, asyncrt_retry *r, asyncrt_status s)
{
    asyncrt_context *ctx = job->ctx;
    if (s == ASYNCRT_ERROR_COMPILE) {
        char name[32], first_name[32];
        asyncrt__arch_format(&r->retry, name, sizeof name);
        asyncrt__arch_format(&r->first, first_name, sizeof first_name);
        char *second = strdup(asyncrt_context_last_error(ctx));
        asyncrt__arch_after_failure(&r->retry, true, r->supported, r->count, second, &r->retry, r->hint,
                                    sizeof r->hint);
        s = asyncrt__fail(ctx, s, "%s\n(arch auto: %s was tried after ptxas said %s lacks "
                                  "instructions the kernel uses)%s%s", second ? second : "", name, first_name,
                          *r->hint ? "\n" : "", r->hint);
        free(second);
    }
    free(r->first_error);
    r->first_error = NULL;
    return s;
}
