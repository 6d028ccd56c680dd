/* The compile's target for a context (target.h). */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "nvrtc_facts.h"
#include "program.h"

/* The newest NVRTC the search found that is not newer than the driver, for
 * the advice of a refusal (arch.h's older_nvrtc); *path NULL when none. */
static void older_nvrtc(int driver_version, const char **path, int *version)
{
    asyncrt_nvrtc_choice found;
    asyncrt__nvrtc_choice_get(&found);
    *path = NULL;
    *version = 0;
    for (size_t i = 0; i < found.count; i++) {
        const asyncrt_lib_candidate *c = &found.candidates[i];
        int v = c->version.major * 1000 + c->version.minor * 10;
        if (c->exists && c->version.major > 0 && c->version.minor >= 0 && v <= driver_version && v > *version)
            *path = c->path, *version = v;
    }
}

/* The load rule's verdict and sentence for this context's open device
 * (SUCCESS with "" when none is open or NVRTC's facts are unknown: the
 * driver then speaks for itself). A device still opening on its own thread
 * is not read (its fields are being written): the load-time check and the
 * flow after asyncrt__wait_device judge it then. */
static asyncrt_status load_verdict(asyncrt_context *ctx, const asyncrt__arch *arch, char *why, size_t why_size)
{
    asyncrt_nvrtc_facts facts;
    why[0] = '\0';
    if (asyncrt__device_pending(ctx) || !ctx->device_open ||
        asyncrt__nvrtc_facts_get(ctx, &facts, NULL, 0) != ASYNCRT_SUCCESS)
        return ASYNCRT_SUCCESS;
    asyncrt_load_facts f = {.cc_major = ctx->info.cc_major, .cc_minor = ctx->info.cc_minor,
                            .driver_version = ctx->info.driver_version, .nvrtc_version = facts.version,
                            .supported = facts.archs, .count = facts.arch_count};
    if (facts.version > ctx->info.driver_version)
        older_nvrtc(ctx->info.driver_version, &f.older_nvrtc, &f.older_version);
    return asyncrt__arch_check_load(arch, &f, why, why_size);
}

asyncrt_status asyncrt__arch_loadable(asyncrt_context *ctx, const asyncrt__arch *arch)
{
    char why[4800];
    asyncrt_status s = load_verdict(ctx, arch, why, sizeof why);
    return s == ASYNCRT_SUCCESS ? s : asyncrt__fail(ctx, s, "%s", why);
}

asyncrt_status asyncrt__arch_resolve_why(asyncrt_context *ctx, const char *text, asyncrt__arch *out, char *why_out,
                                        size_t why_size)
{
    /* From the memo beside the cache when there is one: a cache hit then needs no NVRTC. */
    asyncrt_nvrtc_facts facts;
    char missing[2048];
    asyncrt_status loaded = asyncrt__nvrtc_facts_get(ctx, &facts, missing, sizeof missing);
    if (loaded != ASYNCRT_SUCCESS) return asyncrt__fail(ctx, loaded, "%s", missing);
    const int *supported = facts.archs;
    size_t count = facts.arch_count;
    char why[2048];
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
        /* With a device open, the reason also says whether its driver can load it. */
        char load[4800] = "";
        if (s == ASYNCRT_SUCCESS) load_verdict(ctx, out, load, sizeof load);
        if (*load) asyncrt__say(why + strlen(why), sizeof why - strlen(why), "; %s", load);
    }
    if (s != ASYNCRT_SUCCESS) return asyncrt__fail(ctx, s, "%s", why);
    asyncrt__log(ctx, 1, "target %s", why);
    if (why_out) snprintf(why_out, why_size, "%s", why);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__arch_resolve(asyncrt_context *ctx, const char *text, asyncrt__arch *out)
{
    return asyncrt__arch_resolve_why(ctx, text, out, NULL, 0);
}

void asyncrt__target_note(asyncrt_program *p, const asyncrt__arch *resolved, const char *why)
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
