/* The lookup step (compile_job.h): the cache, asked once (cache.h: memory,
 * disk, remote), with the program's reader (program.h's accept: each entry
 * decoded once; a refused one the cache drops, then looks on), one compile
 * per key at a time. A claiming lookup that misses keeps the key claimed
 * until the compile that follows has stored its result (store.c), so a
 * duplicate request waits in its own lookup, then hits: one lookup, one
 * count, per request. A job holds at most one claim. */
#include "compile_job.h"
#include "nvtx.h"
#include "progress.h"

void asyncrt__job_lookup(asyncrt_compile_job *job, bool claim, asyncrt_program **out)
{
    asyncrt_context *ctx = job->ctx;
    if (job->state != ASYNCRT_COMPILE_KEYED) return;
    asyncrt__progress(job->opts->progress, job->opts->progress_user, ASYNCRT_PROGRESS_CACHE_LOOKUP, job->source_name,
                      job->arch_name, -1);
    asyncrt__range_push(ASYNCRT_RANGE_CACHE, "cache lookup %s", job->source_name);
    asyncrt_program *p = NULL;
    asyncrt__cache_lookup(ctx->cache, job->key, ASYNCRT_TIERS_ALL, claim ? &job->claim : NULL, asyncrt__program_accept,
                          &p);
    /* the tier that answered is known only now: a mark inside the range, and the range's end */
    asyncrt__range_mark(ASYNCRT_RANGE_CACHE, "cache %s: %s", job->source_name,
                        p ? asyncrt_program_origin_string(p->origin) : "miss");
    asyncrt__range_pop();
    if (!p) { /* a remote value refused after its hit went unclaimed: compiled unclaimed, as without a claim */
        job->state = job->claim.held ? ASYNCRT_COMPILE_CLAIMED : ASYNCRT_COMPILE_MISSED;
        return;
    }
    job->state = ASYNCRT_COMPILE_HIT; /* a hit lets the claim go */
    asyncrt__log(ctx, 2, "%s: %s hit for %s, no NVRTC call (%.2f ms)", job->source_name,
                 asyncrt_program_origin_string(p->origin), p->arch, asyncrt__now_ms() - job->start_ms);
    *out = p;
}

void asyncrt__job_release(asyncrt_compile_job *job)
{
    if (job->state != ASYNCRT_COMPILE_CLAIMED) return;
    asyncrt__cache_release(job->ctx->cache, &job->claim);
    job->state = ASYNCRT_COMPILE_MISSED;
}

asyncrt_status asyncrt__compile_lookup_status(asyncrt_compile_state state)
{
    return state == ASYNCRT_COMPILE_HIT           ? ASYNCRT_SUCCESS
           : state == ASYNCRT_COMPILE_UNCACHEABLE ? ASYNCRT_ERROR_UNSUPPORTED
                                                  : ASYNCRT_ERROR_NOT_FOUND;
}
