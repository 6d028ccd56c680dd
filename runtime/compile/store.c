/* The store step (compile_job.h): a fresh program into the cache under what
 * it read (one store: memory, disk, remote, the key's claim and lease then
 * let go; lookup.c took them), the precompiled header's record settled and
 * the trace removed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile_job.h"
#include "key_record.h"
#include "key_record_remote.h"

/* Removes the trace's directory. */
static void remove_trace(asyncrt_compile_job *job)
{
    if (!job->trace_dir[0]) return;
    char *trace = asyncrt__format("%s/trace.json", job->trace_dir);
    if (trace) unlink(trace); /* a failed compile may still have written it */
    free(trace);
    rmdir(job->trace_dir);
    job->trace_dir[0] = '\0';
}

void asyncrt__job_store(asyncrt_compile_job *job, asyncrt_status compiled, asyncrt_program *p,
                        const asyncrt_dep_set *deps, const char *why)
{
    asyncrt_context *ctx = job->ctx;
    char note[512];
    bool stored = false;
    if (asyncrt__job_traced(job, compiled)) {
        if (compiled == ASYNCRT_SUCCESS && deps) {
            memcpy(p->key, deps->result_key, sizeof p->key);
            size_t size = 0;
            unsigned char *payload = asyncrt__program_payload(p, &size);
            if (payload) {
                asyncrt__cache_store(ctx->cache, job->key, ASYNCRT_TIERS_ALL, deps, payload, size,
                                     job->state == ASYNCRT_COMPILE_CLAIMED ? &job->claim : NULL);
                if (job->state == ASYNCRT_COMPILE_CLAIMED) job->state = ASYNCRT_COMPILE_MISSED;
                /* what a later miss of this source name is compared with (asyncrt_cache_explain) */
                asyncrt__key_records_save(ctx->cache, job->source_name, job->key, &job->record);
                asyncrt__key_record_push(ctx->cache, job->source_name, job->key, &job->record); /* the fleet's */
                stored = true;
            } else {
                asyncrt__log(ctx, 1, "not caching %s: out of memory", job->source_name);
            }
            free(payload);
        } else if (compiled == ASYNCRT_SUCCESS) {
            asyncrt__log(ctx, 1, "not caching %s: %s", job->source_name, why);
        }
        asyncrt__pch_end(&job->pch, deps, note, sizeof note);
        if (*note) asyncrt__log(ctx, 1, "%s: %s", job->source_name, note);
    }
    if (job->pch.dir) { /* no trace: what a PCH made holds is unknown */
        asyncrt__pch_end(&job->pch, NULL, note, sizeof note);
        asyncrt__log(ctx, 1, "%s: %s", job->source_name, note);
    }
    remove_trace(job);
    asyncrt__job_release(job); /* what the store did not let go */
    job->state = compiled != ASYNCRT_SUCCESS ? ASYNCRT_COMPILE_FAILED
                 : stored                   ? ASYNCRT_COMPILE_STORED
                                            : ASYNCRT_COMPILE_COMPILED;
}

void asyncrt__job_record_hit(asyncrt_compile_job *job, const asyncrt_program *p)
{
    if (p && p->origin == ASYNCRT_ORIGIN_REMOTE_CACHE) /* installed here: the next explain finds it local */
        asyncrt__key_records_save(job->ctx->cache, job->source_name, job->key, &job->record);
}
