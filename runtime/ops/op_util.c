/* Shared by the built-in ops: path selection and source generation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_util.h"
#include "cache.h"
#include "context.h"
#include "dispatch.h"
#include "target.h"

static asyncrt_status parse_path(asyncrt_context *ctx, const char *op, const char *text, asyncrt_map_path *out)
{
    for (int p = ASYNCRT_PATH_AUTO; p <= ASYNCRT_PATH_PLAIN; p++)
        if (strcmp(text, asyncrt_map_path_name((asyncrt_map_path)p)) == 0) {
            *out = (asyncrt_map_path)p;
            return ASYNCRT_SUCCESS;
        }
    return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                        "ASYNCRT_PATH='%s' is not a %s path; use tma, ldgsts, plain or auto", text, op);
}

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

asyncrt_status asyncrt__op_select(asyncrt_context *ctx, const char *op, asyncrt_map_path wanted,
                                 const char *arch_text, asyncrt_arch *arch, char *arch_name,
                                 size_t arch_name_size, asyncrt_map_path *out)
{
    asyncrt_dispatch_op dop = strcmp(op, "map") == 0 ? ASYNCRT_DISPATCH_MAP : ASYNCRT_DISPATCH_TRANSPOSE;
    return asyncrt__op_select_for(ctx, op, dop, wanted, arch_text, arch, arch_name, arch_name_size, out);
}

asyncrt_status asyncrt__op_select_for(asyncrt_context *ctx, const char *op, int dispatch_op, asyncrt_map_path wanted,
                                     const char *arch_text, asyncrt_arch *arch, char *arch_name,
                                     size_t arch_name_size, asyncrt_map_path *out)
{
    if ((unsigned)wanted > ASYNCRT_PATH_PLAIN)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: path %d is not an asyncrt_map_path", op,
                            (int)wanted);
    const char *env = getenv("ASYNCRT_PATH");
    const char *forced = wanted != ASYNCRT_PATH_AUTO ? "the description" : NULL;
    if (wanted == ASYNCRT_PATH_AUTO && env && *env) {
        ASYNCRT_TRY(parse_path(ctx, op, env, &wanted));
        if (wanted != ASYNCRT_PATH_AUTO) forced = "ASYNCRT_PATH";
    }
    ASYNCRT_TRY(asyncrt__arch_resolve(ctx, arch_text, arch));
    asyncrt__arch_format(arch, arch_name, arch_name_size);

    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    int cc = dev ? dev->cc_major * 10 + dev->cc_minor : arch->number;
    int target = arch->number < cc ? arch->number : cc;
    if (wanted == ASYNCRT_PATH_AUTO) {
        asyncrt_calibration cal;
        bool calibrated = dev && load_calibration(ctx, dev, &cal);
        char why[256];
        wanted = asyncrt__dispatch_choose((asyncrt_dispatch_op)dispatch_op, cc, target, calibrated ? &cal : NULL, why,
                                         sizeof why);
        asyncrt__log(ctx, 1, "%s path for %s: %s", asyncrt_map_path_name(wanted), arch_name, why);
    } else {
        asyncrt__log(ctx, 1, "%s: %s path for %s: forced by %s", op, asyncrt_map_path_name(wanted), arch_name, forced);
    }
    const char *name = asyncrt_map_path_name(wanted);
    int need = wanted == ASYNCRT_PATH_TMA ? 90 : wanted == ASYNCRT_PATH_LDGSTS ? 80 : 0;
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

int asyncrt__tune_next(const char **cursor, char key[16], char value[16], unsigned long *number, bool *is_number)
{
    const char *c = *cursor;
    if (!*c) return 0;
    int used = 0;
    if (sscanf(c, "%15[a-z0-9]=%15[a-z0-9]%n", key, value, &used) != 2) return -1;
    c += used;
    if (*c == ',' && c[1]) c++;
    else if (*c) return -1;
    char *end;
    *number = strtoul(value, &end, 10);
    *is_number = *end == 0 && end != value;
    *cursor = c;
    return 1;
}

void asyncrt__sb_printf(asyncrt_strbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = asyncrt__vformat(fmt, ap);
    va_end(ap);
    size_t n = s ? strlen(s) : 0;
    if (s && b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *grown = realloc(b->data, cap);
        if (grown) {
            b->data = grown;
            b->cap = cap;
        } else {
            free(s);
            s = NULL;
        }
    }
    if (!s) {
        b->failed = true;
        return;
    }
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
    free(s);
}

unsigned asyncrt__sb_lines(const asyncrt_strbuf *b)
{
    unsigned lines = 1;
    for (size_t i = 0; i < b->len; i++) lines += b->data[i] == '\n';
    return lines;
}
