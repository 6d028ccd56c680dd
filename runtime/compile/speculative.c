/* A compile for "auto" while the device still opens (compile_job.h): the
 * target this cache last saw for the device is a guess, parsed once from the
 * hint's text; the flow compiles it (compile.c), then the guess is judged
 * against the device's own target. This file guesses and judges: it
 * compiles nothing. */
#include "cache.h"
#include "compile_job.h"
#include "speculate.h"
#include "target.h"

static bool same_arch(const asyncrt__arch *a, const asyncrt__arch *b)
{
    return a->number == b->number && a->suffix == b->suffix && a->ptx == b->ptx;
}

bool asyncrt__speculation_begin(asyncrt_context *ctx, asyncrt_speculation *sp, asyncrt_status *status)
{
    *sp = (asyncrt_speculation){0};
    if (!asyncrt__cache_enabled(ctx->cache) ||
        !asyncrt__speculation_guess(ctx, ctx->opening.ordinal, sp->text, sizeof sp->text)) {
        *status = asyncrt__wait_device(ctx); /* a failed open is the answer: "auto" has none */
        return false;
    }
    sp->start = asyncrt__now_ms();
    sp->known = asyncrt__arch_resolve(ctx, sp->text, &sp->guess) == ASYNCRT_SUCCESS; /* this NVRTC may not know it */
    return true;
}

bool asyncrt__speculation_end(asyncrt_context *ctx, asyncrt_speculation *sp, const char *source_name,
                              asyncrt_status compiled, asyncrt_program **p, asyncrt_status *status,
                              asyncrt__arch *real, char *why, size_t why_size)
{
    double done = asyncrt__now_ms();
    asyncrt_status w = asyncrt__wait_device(ctx);
    if (w == ASYNCRT_SUCCESS) w = asyncrt__arch_resolve_why(ctx, NULL, real, why, why_size);
    if (w != ASYNCRT_SUCCESS) { /* no device: "auto" has no answer, whatever was guessed */
        asyncrt_program_destroy(*p);
        *p = NULL;
        *status = w;
        return true;
    }
    if (!sp->known || !same_arch(&sp->guess, real)) {
        char name[32];
        asyncrt__arch_format(real, name, sizeof name);
        asyncrt__log(ctx, 1, "%s: speculative target %s was wrong, the device needs %s: compiling again",
                     source_name, sp->text, name);
        asyncrt_program_destroy(*p);
        *p = NULL;
        return false;
    }
    if (compiled == ASYNCRT_ERROR_COMPILE) { /* the guess was "auto": let the flow retry as auto does (sm_XYa) */
        asyncrt_program_destroy(*p);
        *p = NULL;
        return false;
    }
    asyncrt__log(ctx, 2, "%s: speculative target %s was right; %.1f ms of compile overlapped the "
                         "device's start-up, %.1f ms waited for it after",
                 source_name, sp->text, done - sp->start, asyncrt__now_ms() - done);
    asyncrt__target_note(*p, real, why); /* the device's reason, not the guess's */
    *status = compiled;
    return true;
}
