/* A compile for "auto" while the device still opens (compile_job.h): the
 * target this cache last saw for the device is a guess, parsed once from the
 * hint's text, compiled for, then checked against the device's own target. */
#include "cache.h"
#include "compile.h"
#include "compile_job.h"
#include "speculate.h"
#include "target.h"

static bool same_arch(const asyncrt_arch *a, const asyncrt_arch *b)
{
    return a->number == b->number && a->suffix == b->suffix && a->ptx == b->ptx;
}

bool asyncrt__speculative_compile(asyncrt_context *ctx, const char *source_name, const char *source,
                                  const asyncrt_compile_options *opts, asyncrt_program **out,
                                  asyncrt_status *status, asyncrt_arch *real, bool *resolved, char *why,
                                  size_t why_size)
{
    char text[32];
    *resolved = false;
    if (!asyncrt__cache_enabled(ctx->cache) || !asyncrt__speculation_guess(ctx, ctx->opening.ordinal, text, sizeof text)) {
        *status = asyncrt__wait_device(ctx); /* a failed open is the answer: "auto" has none */
        return *status != ASYNCRT_SUCCESS;
    }
    double start = asyncrt__now_ms();
    asyncrt_arch guess;
    asyncrt_program *p = NULL;
    asyncrt_status s = asyncrt__arch_resolve(ctx, text, &guess); /* this NVRTC may not know it */
    bool known = s == ASYNCRT_SUCCESS;
    if (known) s = asyncrt__program_compile_arch(ctx, source_name, source, opts, &guess, &p);
    double compiled = asyncrt__now_ms();
    asyncrt_status w = asyncrt__wait_device(ctx);
    if (w == ASYNCRT_SUCCESS) w = asyncrt__arch_resolve_why(ctx, NULL, real, why, why_size);
    if (w != ASYNCRT_SUCCESS) { /* no device: "auto" has no answer, whatever was guessed */
        asyncrt_program_destroy(p);
        *status = w;
        return true;
    }
    *resolved = true;
    if (!known || !same_arch(&guess, real)) {
        char name[32];
        asyncrt__arch_format(real, name, sizeof name);
        asyncrt__log(ctx, 1, "%s: speculative target %s was wrong, the device needs %s: compiling again",
                     source_name, text, name);
        asyncrt_program_destroy(p);
        return false;
    }
    if (s == ASYNCRT_ERROR_COMPILE) { /* the guess was "auto": let the flow retry as auto does (sm_XYa) */
        asyncrt_program_destroy(p);
        return false;
    }
    asyncrt__log(ctx, 2, "%s: speculative target %s was right; %.1f ms of compile overlapped the "
                         "device's start-up, %.1f ms waited for it after",
                 source_name, text, compiled - start, asyncrt__now_ms() - compiled);
    asyncrt__target_note(p, real, why); /* the device's reason, not the guess's */
    *out = p;
    *status = s;
    return true;
}
