/* The lookup step (compile_job.h): the cache, one compile per key at a time.
 * A claiming lookup that misses keeps the key claimed until the compile that
 * follows has stored its result (store.c), so a duplicate request waits in
 * its own lookup, then hits: one lookup, one count, per request. A job holds
 * at most one claim. */
#include "cache.h"
#include "compile_job.h"

void asyncrt__job_lookup(asyncrt_compile_job *job, bool claim, asyncrt_program **out)
{
    asyncrt_context *ctx = job->ctx;
    if (job->state != ASYNCRT_COMPILE_KEYED) return;
    if (claim) {
        asyncrt__claims_enter(asyncrt__cache_claims(ctx->cache), job->key);
        job->state = ASYNCRT_COMPILE_CLAIMED;
    }
    asyncrt_program *p = asyncrt__cache_find(ctx->cache, job->key);
    if (!p) p = asyncrt__cache_remote_find(ctx->cache, job->key); /* verified, installed locally */
    if (!p) {
        if (!claim) job->state = ASYNCRT_COMPILE_MISSED;
        return;
    }
    asyncrt__job_release(job);
    job->state = ASYNCRT_COMPILE_HIT;
    asyncrt__log(ctx, 2, "%s: %s hit for %s, no NVRTC call (%.2f ms)", job->source_name,
                 asyncrt_program_origin_string(p->origin), p->arch, asyncrt__now_ms() - job->start_ms);
    *out = p;
}

void asyncrt__job_release(asyncrt_compile_job *job)
{
    if (job->state != ASYNCRT_COMPILE_CLAIMED) return;
    asyncrt__claims_leave(asyncrt__cache_claims(job->ctx->cache), job->key);
    job->state = ASYNCRT_COMPILE_MISSED;
}

asyncrt_status asyncrt__compile_lookup_status(asyncrt_compile_state state)
{
    return state == ASYNCRT_COMPILE_HIT           ? ASYNCRT_SUCCESS
           : state == ASYNCRT_COMPILE_UNCACHEABLE ? ASYNCRT_ERROR_UNSUPPORTED
                                                  : ASYNCRT_ERROR_NOT_FOUND;
}
