/* The target and path of a built-in op (op_driver.h), in one pass down:
 * the target (compile/target.c), this device's calibration (a side file of
 * the cache), then the dispatcher's pure choice (dispatch.c). */
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "op_driver.h"
#include "target.h"

/* This device's calibration file (a side file of the cache, cache.h), if
 * there is one and it holds up. */
static bool load_calibration(asyncrt_context *ctx, const asyncrt_device_info *dev, asyncrt_calibration *cal)
{
    char *path = asyncrt__calibration_path(asyncrt_context_cache_dir(ctx), dev->uuid);
    char *text = path ? asyncrt__cache_read_side(ctx->cache, strrchr(path, '/') + 1) : NULL;
    bool ok = false;
    if (text) {
        char why[160];
        ok = asyncrt__calibration_parse(text, strlen(text), dev->uuid, dev->driver_version, cal, why, sizeof why);
        if (!ok) asyncrt__log(ctx, 1, "ignoring calibration file %s: %s", path, why);
    }
    free(text);
    free(path);
    return ok;
}

asyncrt_status asyncrt__op_select(asyncrt_context *ctx, const char *op, asyncrt_dispatch_op ranking,
                                 asyncrt_op_path wanted, const char *arch_text, asyncrt__arch *arch, char *arch_why,
                                 size_t arch_why_size, asyncrt_op_path *out)
{
    if ((unsigned)wanted > ASYNCRT_PATH_PLAIN)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: path %d is not an asyncrt_op_path", op,
                            (int)wanted);
    const char *env = ctx->settings.path;
    const char *forced = wanted != ASYNCRT_PATH_AUTO ? "the description" : NULL;
    if (wanted == ASYNCRT_PATH_AUTO && env && *env) {
        int p = asyncrt__path_parse(env);
        if (p < 0)
            return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                                "ASYNCRT_PATH='%s' is not a %s path; use tma, ldgsts, plain or auto", env, op);
        wanted = (asyncrt_op_path)p;
        if (wanted != ASYNCRT_PATH_AUTO) forced = "ASYNCRT_PATH";
    }
    ASYNCRT_TRY(asyncrt__arch_resolve_why(ctx, arch_text, arch, arch_why, arch_why_size));
    char arch_name[32]; /* for messages */
    asyncrt__arch_format(arch, arch_name, sizeof arch_name);

    const asyncrt_device_info *dev = asyncrt_context_device(ctx); /* waits for an opening device */
    ASYNCRT_TRY(asyncrt__arch_loadable(ctx, arch)); /* with a device open, the op is loaded on it */
    int cc = dev ? dev->cc_major * 10 + dev->cc_minor : arch->number;
    int target = arch->number < cc ? arch->number : cc;
    if (wanted == ASYNCRT_PATH_AUTO) {
        asyncrt_calibration cal;
        bool calibrated = dev && load_calibration(ctx, dev, &cal);
        char why[256];
        wanted = asyncrt__dispatch_choose(ranking, cc, target, calibrated ? &cal : NULL, why, sizeof why);
        asyncrt__log(ctx, 1, "%s path for %s: %s", asyncrt_op_path_name(wanted), arch_name, why);
    } else {
        asyncrt__log(ctx, 1, "%s: %s path for %s: forced by %s", op, asyncrt_op_path_name(wanted), arch_name, forced);
    }
    const char *name = asyncrt_op_path_name(wanted);
    int need = asyncrt__dispatch_path_needs(wanted);
    if (arch->number < need)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED, "%s: the %s path needs sm_%d or newer, but the target is %s",
                            op, name, need, arch_name);
    if (dev && cc < need)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "%s: the %s path needs sm_%d or newer, but device %d (%s) is sm_%d", op, name, need,
                            dev->ordinal, dev->name, cc);
    *out = wanted;
    return ASYNCRT_SUCCESS;
}
