/* The compile's target for a context (target.h). */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_facts.h"
#include "program.h"

asyncrt_status asyncrt__arch_resolve_why(asyncrt_context *ctx, const char *text, asyncrt_arch *out, char *why_out,
                                        size_t why_size)
{
    /* From the memo beside the cache when there is one: a cache hit then needs no NVRTC. */
    asyncrt_nvrtc_facts facts;
    char missing[2048];
    asyncrt_status loaded = asyncrt__nvrtc_facts_get(ctx, &facts, missing, sizeof missing);
    if (loaded != ASYNCRT_SUCCESS) return asyncrt__fail(ctx, loaded, "%s", missing);
    const int *supported = facts.archs;
    size_t count = facts.arch_count;
    char why[768];
    asyncrt_status s;
    if (!text || strcmp(text, "auto") == 0) {
        if (!ctx->device_open)
            return asyncrt__fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                                "arch 'auto' needs an open device to read its compute capability; "
                                "name a target instead, e.g. sm_90 or compute_80");
        s = asyncrt__arch_select_auto(ctx->info.cc_major, ctx->info.cc_minor,
                                     ctx->info.driver_version, facts.version, supported,
                                     count, out, why, sizeof why);
    } else if (!asyncrt__arch_parse(text, out)) {
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "arch '%s' is malformed: expected auto, sm_XY, sm_XYa, compute_XY or "
                            "compute_XYa (e.g. sm_90, sm_90a, compute_80)", text);
    } else {
        s = asyncrt__arch_check(out, supported, count, why, sizeof why);
    }
    if (s != ASYNCRT_SUCCESS) return asyncrt__fail(ctx, s, "%s", why);
    asyncrt__log(ctx, 1, "target %s", why);
    if (why_out) snprintf(why_out, why_size, "%s", why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__arch_resolve(asyncrt_context *ctx, const char *text, asyncrt_arch *out)
{
    return asyncrt__arch_resolve_why(ctx, text, out, NULL, 0);
}

void asyncrt__target_note(asyncrt_program *p, const asyncrt_arch *resolved, const char *why)
{
    if (!p) return;
    char name[32];
    asyncrt__arch_format(resolved, name, sizeof name);
    char *reason = strcmp(name, p->arch) == 0
                       ? strdup(why)
                       : asyncrt__format("%s; then %s: ptxas said %s lacks instructions the kernel uses", why,
                                         p->arch, name);
    free(p->arch_reason);
    p->arch_reason = reason; /* NULL when out of memory: the reason is then "" */
}
