/* The compile's target for a context (target.h): auto (the open device's),
 * explicit, or, while the device still opens, the target remembered for it
 * (speculate.h), compiled meanwhile and judged once the device is open. */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "format.h"
#include "nvrtc_facts.h"
#include "program.h"
#include "speculate.h"

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

/* The target for `text` (NULL/"auto" or a name), or `given` as is, with the
 * rule that chose it in `why`; with `verdict`, also the load rule's verdict
 * and sentence for the open device (SUCCESS with "" when none is open, when
 * it is still opening on its own thread (`settled` false: its fields are
 * being written; the load-time check judges it then) or when NVRTC's facts
 * are unknown: the driver then speaks for itself). One pass: NVRTC's facts
 * (from the memo beside the cache when there is one: a cache hit then needs
 * no NVRTC), then arch.h's rules. */
static asyncrt_status choose(asyncrt_context *ctx, const char *text, const asyncrt__arch *given, bool settled,
                             asyncrt__arch *out, char *why_out, size_t why_size, asyncrt_status *verdict,
                             char *load_out, size_t load_size)
{
    bool device = settled && ctx->device_open;
    asyncrt_load_facts f = {0};
    if (device) {
        f = (asyncrt_load_facts){.cc_major = ctx->info.cc_major, .cc_minor = ctx->info.cc_minor,
                                 .driver_version = ctx->info.driver_version};
        older_nvrtc(f.driver_version, &f.older_nvrtc, &f.older_version);
    }
    asyncrt_nvrtc_facts facts = {0};
    char missing[2048], why[2048], load[4800] = "";
    asyncrt_status loaded = !given || (verdict && device)
                                ? asyncrt__nvrtc_facts_get(ctx, &facts, missing, sizeof missing)
                                : ASYNCRT_ERROR_NVRTC;
    f.nvrtc_version = facts.version, f.supported = facts.archs, f.count = facts.arch_count;
    if (facts.version <= f.driver_version) f.older_nvrtc = NULL, f.older_version = 0; /* the advice's case only */
    device = device && loaded == ASYNCRT_SUCCESS;
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (given) {
        *out = *given;
    } else if (loaded != ASYNCRT_SUCCESS) {
        return asyncrt__fail(ctx, loaded, "%s", missing);
    } else if (!text || strcmp(text, "auto") == 0) {
        if (!ctx->device_open)
            return asyncrt__fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                                "arch 'auto' needs an open device to read its compute capability; "
                                "name a target instead, e.g. sm_90 or compute_80");
        s = asyncrt__arch_select_auto(ctx->info.cc_major, ctx->info.cc_minor, ctx->info.driver_version,
                                     facts.version, facts.archs, facts.arch_count, out, why, sizeof why);
    } else if (!asyncrt__arch_parse(text, out)) {
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "arch '%s' is malformed: expected auto, sm_XY, sm_XYa, compute_XY or "
                            "compute_XYa (e.g. sm_90, sm_90a, compute_80)", text);
    } else {
        s = asyncrt__arch_check(out, facts.archs, facts.arch_count, why, sizeof why);
        /* With a device open, the reason also says whether its driver can load it. */
        if (s == ASYNCRT_SUCCESS && device) asyncrt__arch_check_load(out, &f, load, sizeof load);
        if (*load) asyncrt__say(why + strlen(why), sizeof why - strlen(why), "; %s", load);
    }
    if (verdict) *verdict = device ? asyncrt__arch_check_load(out, &f, load_out, load_size) : ASYNCRT_SUCCESS;
    if (verdict && !device && load_size) load_out[0] = '\0';
    if (given) return ASYNCRT_SUCCESS;
    if (s != ASYNCRT_SUCCESS) return asyncrt__fail(ctx, s, "%s", why);
    asyncrt__log(ctx, 1, "target %s", why);
    if (why_out) snprintf(why_out, why_size, "%s", why);
    return ASYNCRT_SUCCESS;
}

static bool same_arch(const asyncrt__arch *a, const asyncrt__arch *b)
{
    return a->number == b->number && a->suffix == b->suffix && a->ptx == b->ptx;
}

bool asyncrt__target_next(asyncrt_context *ctx, asyncrt__target *t, const char *source_name, asyncrt_program **out,
                          asyncrt_status *status)
{
    if (t->step == ASYNCRT_TARGET_CHOSEN) { /* its compile is done */
        if (*status == ASYNCRT_SUCCESS && !t->given) asyncrt__target_note(*out, &t->arch, t->why);
        return false;
    }
    bool is_auto = !t->given && (!t->text || strcmp(t->text, "auto") == 0);
    asyncrt__arch named, real = {0};
    for (;;) {
        bool guessed = t->step == ASYNCRT_TARGET_GUESSED;
        /* "auto" while the device opens on another thread: the target this
         * cache last saw for the device is a guess, compiled meanwhile. */
        bool guess = t->step == ASYNCRT_TARGET_NEW && !t->lookup_only && is_auto && asyncrt__device_pending(ctx) &&
                     asyncrt__cache_enabled(ctx->cache) &&
                     asyncrt__speculation_guess(ctx, ctx->opening.ordinal, t->guess, sizeof t->guess);
        /* "auto" needs the device; so does judging a guess; and PTX to be
         * loaded is held to the driver of the device it is for. */
        bool wait = guessed || (!guess && is_auto) ||
                    (!guess && t->to_load && !is_auto && asyncrt__arch_parse(t->text, &named) && named.ptx);
        double done = asyncrt__now_ms();
        asyncrt_status w = wait ? asyncrt__wait_device(ctx) : ASYNCRT_SUCCESS;
        bool settled = !asyncrt__device_pending(ctx);
        asyncrt_status verdict = ASYNCRT_SUCCESS;
        if (w == ASYNCRT_SUCCESS)
            w = choose(ctx, guess ? t->guess : guessed ? NULL : t->text, t->given, settled, &real, t->why,
                       sizeof t->why, t->to_load && !guess ? &verdict : NULL, t->load, sizeof t->load);
        if (guess) { /* this NVRTC may not know the guess: then it is judged wrong at once */
            t->start = done;
            t->known = w == ASYNCRT_SUCCESS;
            t->step = ASYNCRT_TARGET_GUESSED;
            t->arch = real;
            t->from_auto = false;
            if (t->known) return true;
            continue;
        }
        if (w != ASYNCRT_SUCCESS) { /* no device: "auto" has no answer, whatever was guessed */
            asyncrt_program_destroy(*out);
            *out = NULL;
            *status = w;
            return false;
        }
        if (guessed && t->known && same_arch(&t->arch, &real) && *status != ASYNCRT_ERROR_COMPILE) {
            asyncrt__log(ctx, 2, "%s: speculative target %s was right; %.1f ms of compile overlapped the "
                                 "device's start-up, %.1f ms waited for it after",
                         source_name, t->guess, done - t->start, asyncrt__now_ms() - done);
            asyncrt__target_note(*out, &real, t->why); /* the device's reason, not the guess's */
            return false;
        }
        if (guessed) { /* wrong, or the guess was "auto" and failed: the flow retries as auto does (sm_XYa) */
            char name[32];
            asyncrt__arch_format(&real, name, sizeof name);
            if (!t->known || !same_arch(&t->arch, &real))
                asyncrt__log(ctx, 1, "%s: speculative target %s was wrong, the device needs %s: compiling again",
                             source_name, t->guess, name);
            asyncrt_program_destroy(*out);
            *out = NULL;
        }
        if (verdict != ASYNCRT_SUCCESS) { /* before any compile */
            *status = asyncrt__fail(ctx, verdict, "%s", t->load);
            return false;
        }
        t->arch = real;
        t->from_auto = is_auto;
        t->step = ASYNCRT_TARGET_CHOSEN;
        *status = ASYNCRT_SUCCESS;
        return true;
    }
}

asyncrt_status asyncrt__arch_loadable(asyncrt_context *ctx, const asyncrt__arch *arch)
{
    char why[4800];
    asyncrt__arch same;
    asyncrt_status v = ASYNCRT_SUCCESS;
    choose(ctx, NULL, arch, !asyncrt__device_pending(ctx), &same, NULL, 0, &v, why, sizeof why);
    return v == ASYNCRT_SUCCESS ? v : asyncrt__fail(ctx, v, "%s", why);
}

asyncrt_status asyncrt__arch_resolve_why(asyncrt_context *ctx, const char *text, asyncrt__arch *out, char *why_out,
                                        size_t why_size)
{
    return choose(ctx, text, NULL, !asyncrt__device_pending(ctx), out, why_out, why_size, NULL, NULL, 0);
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
