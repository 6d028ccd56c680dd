/* NVRTC compilation behind the program cache: the flow, over the steps
 * compile_job.h lists (target, toolkit, key, lookup, NVRTC, dependencies,
 * store), with the sm_XYa retry and the speculative target around it. */
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "compile_job.h"
#include "cache.h"
#include "target.h"

void asyncrt__job_init(asyncrt_compile_job *job, asyncrt_context *ctx, const char *source_name,
                       const char *source, const asyncrt_compile_options *opts, const asyncrt__arch *arch)
{
    *job = (asyncrt_compile_job){.ctx = ctx, .source_name = source_name, .source = source, .opts = opts,
                                 .arch = *arch, .state = ASYNCRT_COMPILE_NEW};
    asyncrt__arch_format(arch, job->arch_name, sizeof job->arch_name);
}

void asyncrt__job_free(asyncrt_compile_job *job)
{
    asyncrt__job_release(job); /* an error before the store may leave the claim (and the lease) */
    asyncrt__list_free(&job->options);
    asyncrt__list_free(&job->record);
    free(job->std_offered);
    job->std_offered = NULL;
}

/* toolkit.c, key.c, lookup.c: HIT with *out, or a miss to compile, whose
 * cause a claiming lookup (the compile's own: not a retry's or a batch's
 * probe) logs (explain_judge.c). */
static asyncrt_status key_and_look_up(asyncrt_compile_job *job, bool claim, asyncrt_program **out)
{
    ASYNCRT_TRY(asyncrt__job_headers(job));
    ASYNCRT_TRY(asyncrt__job_key(job));
    asyncrt__job_lookup(job, claim, out);
    if (claim && (job->state == ASYNCRT_COMPILE_CLAIMED || job->state == ASYNCRT_COMPILE_MISSED))
        asyncrt__job_log_miss(job);
    if (job->state == ASYNCRT_COMPILE_HIT) asyncrt__job_record_hit(job, *out);
    return ASYNCRT_SUCCESS;
}

/* nvrtc_run.c, deps.c, store.c: a miss compiled, and cached if it can be. */
static asyncrt_status compile_and_store(asyncrt_compile_job *job, asyncrt_program **out)
{
    /* The fleet's single flight: another process may be compiling it (cache.h's lease). */
    asyncrt_program *p = NULL;
    if (job->state == ASYNCRT_COMPILE_CLAIMED &&
        asyncrt__cache_lease(job->ctx->cache, &job->claim, asyncrt__program_accept, &p)) {
        asyncrt__job_release(job);
        job->state = ASYNCRT_COMPILE_HIT;
        asyncrt__job_record_hit(job, p);
        *out = p;
        return ASYNCRT_SUCCESS;
    }
    asyncrt_status s = asyncrt__job_nvrtc(job, &p);
    asyncrt_dep_set deps = {0};
    char why[512];
    bool known = asyncrt__job_deps(job, s, &deps, why, sizeof why);
    asyncrt__job_store(job, s, p, known ? &deps : NULL, why);
    asyncrt__dep_set_free(&deps);
    *out = p;
    return s;
}

/* A miss for sm_XY may be an earlier run's sm_XYa retry, cached. */
static asyncrt_status look_up_earlier_retry(asyncrt_compile_job *job, const asyncrt__arch *retry,
                                            asyncrt_program **out)
{
    asyncrt_compile_job alt;
    asyncrt_compile_options untold = *job->opts; /* part of the job's own lookup: not told as another */
    untold.progress = NULL;
    asyncrt__job_init(&alt, job->ctx, job->source_name, job->source, &untold, retry);
    asyncrt_status s = key_and_look_up(&alt, false, out);
    asyncrt__job_free(&alt);
    if (*out) {
        asyncrt__job_release(job);
        asyncrt__log(job->ctx, 1, "target %s: cached from an earlier retry (the kernel needs it)", (*out)->arch);
    }
    return s;
}

/* One request for its resolved target: the cache, else NVRTC; from_auto
 * allows the sm_XYa retry (retry.c). */
static asyncrt_status compile_job(asyncrt_compile_job *job, bool from_auto, asyncrt_program **out)
{
    asyncrt__arch earlier;
    asyncrt_status s = key_and_look_up(job, true, out);
    if (s == ASYNCRT_SUCCESS && !*out && asyncrt__retry_earlier(job, from_auto, &earlier))
        s = look_up_earlier_retry(job, &earlier, out);
    if (s != ASYNCRT_SUCCESS || *out) return s;
    s = compile_and_store(job, out);
    asyncrt_retry retry;
    if (s != ASYNCRT_ERROR_COMPILE || !asyncrt__retry_plan(job, from_auto, &retry, &s)) return s;
    asyncrt__job_free(job);
    asyncrt__job_init(job, job->ctx, job->source_name, job->source, job->opts, &retry.retry);
    s = key_and_look_up(job, true, out);
    if (s == ASYNCRT_SUCCESS && !*out) s = compile_and_store(job, out);
    return asyncrt__retry_finish(job, &retry, s);
}

/* What the flow is for: a program, a cache lookup only (build/batch.c asks which
 * requests miss before farming them out to worker processes), or a program
 * to be loaded on the open device (refused before compiling when its driver
 * cannot load it: target.h's asyncrt__arch_loadable). */
typedef enum flow_mode { FLOW_COMPILE, FLOW_LOOKUP, FLOW_TO_LOAD } flow_mode;

/* One request of the flow, as the caller gave it. */
typedef struct flow_request {
    const char *source_name, *source;
    const asyncrt_compile_options *opts; /* the caller's, read by its size */
    uint8_t *key_out;
    asyncrt__arch *arch_out;
} flow_request;

/* One compile (or lookup) for the target the flow resolved, from its job's
 * start to its end. */
static asyncrt_status compile_target(asyncrt_context *ctx, const flow_request *r, const asyncrt__target *t,
                                     asyncrt_program **out)
{
    if (r->arch_out) *r->arch_out = t->arch;
    asyncrt_compile_job job;
    asyncrt__job_init(&job, ctx, r->source_name, r->source, r->opts, &t->arch);
    asyncrt_status s;
    if (t->lookup_only) {
        s = key_and_look_up(&job, false, out);
        if (r->key_out) memcpy(r->key_out, job.key, 32);
        if (s == ASYNCRT_SUCCESS) s = asyncrt__compile_lookup_status(job.state);
    } else {
        s = compile_job(&job, t->from_auto, out);
    }
    asyncrt__job_free(&job);
    return s;
}

/* The whole flow: the options read, then target.c's steps, each compiled
 * for. A given arch is used as is; otherwise opts->arch is resolved, once. */
static asyncrt_status compile_flow(asyncrt_context *ctx, const char *source_name, const char *source,
                                   const asyncrt_compile_options *opts, const asyncrt__arch *given,
                                   flow_mode mode, uint8_t *key_out, asyncrt__arch *arch_out,
                                   asyncrt_program **out)
{
    asyncrt_compile_options o = ASYNCRT_COMPILE_OPTIONS_INIT; /* NULL opts: the defaults */
    *out = NULL;
    asyncrt_status s = asyncrt__enter_with(ctx, ASYNCRT_SIZED_COMPILE_OPTIONS, opts, &o, "compile options");
    if (!source) s = asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "source is NULL");
    flow_request r = {source_name && *source_name ? source_name : "kernel.cu", source, &o, key_out, arch_out};
    asyncrt__target t = {.text = o.arch, .given = given, .lookup_only = mode == FLOW_LOOKUP,
                         .to_load = mode == FLOW_TO_LOAD || (mode == FLOW_COMPILE && o.for_load)};
    if (s == ASYNCRT_SUCCESS)
        while (asyncrt__target_next(ctx, &t, r.source_name, out, &s)) s = compile_target(ctx, &r, &t, out);
    return asyncrt__leave(ctx, s);
}

asyncrt_status asyncrt_program_compile(asyncrt_context *ctx, const char *source_name,
                                       const char *source, const asyncrt_compile_options *opts,
                                       asyncrt_program **out)
{
    return compile_flow(ctx, source_name, source, opts, NULL, FLOW_COMPILE, NULL, NULL, out);
}

asyncrt_status asyncrt__program_compile_to_load(asyncrt_context *ctx, const char *source_name, const char *source,
                                               const asyncrt_compile_options *opts, asyncrt_program **out)
{
    return compile_flow(ctx, source_name, source, opts, NULL, FLOW_TO_LOAD, NULL, NULL, out);
}

static asyncrt_status target_loadable(asyncrt_context *ctx, const char *arch_text)
{
    asyncrt__arch arch;
    if (!arch_text || strcmp(arch_text, "auto") == 0) return ASYNCRT_SUCCESS;
    if (!asyncrt__arch_parse(arch_text, &arch))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "arch '%s' is malformed", arch_text);
    ASYNCRT_TRY(asyncrt__wait_device(ctx));
    return asyncrt__arch_loadable(ctx, &arch);
}

asyncrt_status asyncrt__target_loadable(asyncrt_context *ctx, const char *arch_text)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, target_loadable(ctx, arch_text));
}

asyncrt_status asyncrt_context_check_target(asyncrt_context *ctx, const char *arch)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    return asyncrt__target_loadable(ctx, arch);
}

asyncrt_status asyncrt__program_compile_arch(asyncrt_context *ctx, const char *source_name, const char *source,
                                            const asyncrt_compile_options *opts, const asyncrt__arch *arch,
                                            asyncrt_program **out)
{
    return compile_flow(ctx, source_name, source, opts, arch, FLOW_COMPILE, NULL, NULL, out);
}

asyncrt_status asyncrt__program_lookup(asyncrt_context *ctx, const char *source_name, const char *source,
                                      const asyncrt_compile_options *opts, asyncrt_program **out,
                                      uint8_t key[32], asyncrt__arch *arch)
{
    return compile_flow(ctx, source_name, source, opts, NULL, FLOW_LOOKUP, key, arch, out);
}
