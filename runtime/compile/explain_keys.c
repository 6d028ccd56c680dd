/* asyncrt_cache_explain_keys (asyncrt/cache.h): two entries' key records
 * compared. Records live per source name (key_record.h), so the key
 * records of the whole directory are read to find the two keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_explain.h"
#include "compile_job.h"
#include "explain_report.h"
#include "key_record.h"

/* "<64 hex>" or "<64 hex>.mf" -> lowercase hex; false when malformed. */
static bool key_hex(const char *text, char out[65])
{
    size_t n = strlen(text);
    if (n != 64 && !(n == 67 && strcmp(text + 64, ".mf") == 0)) return false;
    for (size_t i = 0; i < 64; i++) {
        char ch = text[i];
        if (ch >= 'A' && ch <= 'F') ch = (char)(ch - 'A' + 'a');
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
        out[i] = ch;
    }
    out[64] = '\0';
    return true;
}

/* explain KEY_A KEY_B: the two live records compared (key_record.h's find). */
static asyncrt_status explain_keys(asyncrt_context *ctx, const char *key_a, const char *key_b,
                                   asyncrt_cache_explanation *full)
{
    char a[65], b[65];
    const char *bad = !key_a || !key_hex(key_a, a) ? key_a : !key_b || !key_hex(key_b, b) ? key_b : NULL;
    if (bad || !key_a || !key_b)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "key '%s' is not a cache key: 64 hex digits (a manifest's name, '.mf' allowed)",
                             bad ? bad : "(null)");
    asyncrt_key_record ra = {0}, rb = {0};
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (!asyncrt__key_records_find(ctx->cache, a, &ra) || !asyncrt__key_records_find(ctx->cache, b, &rb)) {
        const char *which = ra.lines.count ? b : a;
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_NOT_FOUND,
                          "no key record for %s in %s (stored before key records existed, or not in this cache)",
                          which, asyncrt__cache_dir(ctx->cache) ? asyncrt__cache_dir(ctx->cache) : "the cache");
    } else {
        asyncrt_key_diff d[32];
        memset(d, 0, sizeof d);
        size_t total = asyncrt__key_diff(&ra.lines, &rb.lines, d, 32), shown = total < 32 ? total : 32;
        memcpy(full->key, a, 65);
        memcpy(full->nearest, b, 65);
        full->verdict = total ? ASYNCRT_CACHE_VERDICT_MISS : ASYNCRT_CACHE_VERDICT_HIT;
        if (!total) asyncrt__say(full->cause, sizeof full->cause, "the two records hold the same inputs");
        char *name = asyncrt__key_value(&rb.lines, "source name"), *arch = asyncrt__key_value(&rb.lines, "arch");
        asyncrt__explain_report(full, "two entries", name, arch, NULL, d, shown, total);
        free(name);
        free(arch);
        asyncrt__key_diff_free(d, shown);
        if (!full->text || !full->json) s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory comparing keys");
    }
    asyncrt__key_record_free(&ra);
    asyncrt__key_record_free(&rb);
    return s;
}

asyncrt_status asyncrt_cache_explain_keys(asyncrt_context *ctx, const char *key_a, const char *key_b,
                                          asyncrt_cache_explanation *out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(ctx);
    asyncrt_cache_explanation full = {.size = sizeof full};
    asyncrt_status s = asyncrt__sized_give(ctx, ASYNCRT_SIZED_CACHE_EXPLANATION, out, &full, "cache explanation");
    if (s == ASYNCRT_SUCCESS) s = explain_keys(ctx, key_a, key_b, &full);
    if (s == ASYNCRT_SUCCESS) s = asyncrt__sized_give(ctx, ASYNCRT_SIZED_CACHE_EXPLANATION, out, &full, "cache explanation");
    if (s != ASYNCRT_SUCCESS) asyncrt_cache_explanation_free(&full);
    return asyncrt__leave(ctx, s);
}
