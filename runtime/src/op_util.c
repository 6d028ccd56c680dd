/* Shared by the built-in ops: path selection and source generation. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "op_util.h"
#include "context.h"

static asyncrt_status parse_path(asyncrt_context *ctx, const char *op, const char *text, asyncrt_map_path *out)
{
    for (int p = ASYNCRT_PATH_AUTO; p <= ASYNCRT_PATH_PLAIN; p++)
        if (strcmp(text, asyncrt_map_path_name((asyncrt_map_path)p)) == 0) {
            *out = (asyncrt_map_path)p;
            return ASYNCRT_SUCCESS;
        }
    return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                        "ASYNCRT_PATH='%s' is not a %s path; use tma, ldgsts, plain or auto", text, op);
}

asyncrt_status asyncrt_op_select(asyncrt_context *ctx, const char *op, asyncrt_map_path wanted,
                                 const char *arch_text, asyncrt_arch *arch, char *arch_name,
                                 size_t arch_name_size, asyncrt_map_path *out)
{
    asyncrt_status s;
    if ((unsigned)wanted > ASYNCRT_PATH_PLAIN)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "%s: path %d is not an asyncrt_map_path", op,
                            (int)wanted);
    const char *env = getenv("ASYNCRT_PATH");
    if (wanted == ASYNCRT_PATH_AUTO && env && *env && (s = parse_path(ctx, op, env, &wanted))) return s;
    if ((s = asyncrt_arch_resolve(ctx, arch_text, arch))) return s;
    asyncrt_arch_format(arch, arch_name, arch_name_size);

    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    int cc = dev ? dev->cc_major * 10 + dev->cc_minor : arch->number;
    int target = arch->number < cc ? arch->number : cc;
    if (wanted == ASYNCRT_PATH_AUTO)
        wanted = target >= 90 ? ASYNCRT_PATH_TMA : target >= 80 ? ASYNCRT_PATH_LDGSTS : ASYNCRT_PATH_PLAIN;
    const char *name = asyncrt_map_path_name(wanted);
    int need = wanted == ASYNCRT_PATH_TMA ? 90 : wanted == ASYNCRT_PATH_LDGSTS ? 80 : 0;
    if (arch->number < need)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_UNSUPPORTED, "%s: the %s path needs sm_%d or newer, but the target is %s",
                            op, name, need, arch_name);
    if (dev && cc < need)
        return asyncrt_fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "%s: the %s path needs sm_%d or newer, but device %d (%s) is sm_%d", op, name, need,
                            dev->ordinal, dev->name, cc);
    *out = wanted;
    return ASYNCRT_SUCCESS;
}

void asyncrt_sb_printf(asyncrt_strbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = asyncrt_vformat(fmt, ap);
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

unsigned asyncrt_sb_lines(const asyncrt_strbuf *b)
{
    unsigned lines = 1;
    for (size_t i = 0; i < b->len; i++) lines += b->data[i] == '\n';
    return lines;
}
