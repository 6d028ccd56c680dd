/* Reading and checking bundles; their headers for a compile. */
#include "bundle.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_codec.h"
#include "cache_trust.h"
#include "diag.h"

struct asyncrt_bundle {
    uint8_t digest[32];
    char hex[65];
    char *note;
    char **texts;
    size_t text_count;
    char **names;
    const char **contents; /* contents[i]: the text names[i] stands for */
    size_t *text_of;       /* its index in texts */
    size_t *sorted;        /* indexes of names in strcmp order, for asyncrt__bundle_has */
    size_t count;
};

unsigned char *asyncrt__bundle_encode(const char *note, const char *const *texts, size_t text_count,
                                     const char *const *names, const size_t *text_of, size_t name_count,
                                     size_t *size)
{
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put_str(&w, note);
    asyncrt__put_u64(&w, text_count);
    for (size_t i = 0; i < text_count; i++) asyncrt__put_str(&w, texts[i]);
    asyncrt__put_u64(&w, name_count);
    for (size_t i = 0; i < name_count; i++) {
        asyncrt__put_str(&w, names[i]);
        asyncrt__put_u64(&w, text_of[i]);
    }
    static const uint8_t no_key[32];
    return asyncrt__seal_end(&w, ASYNCRT_BUNDLE_MAGIC, ASYNCRT_BUNDLE_FORMAT, no_key, NULL, size);
}

void asyncrt_bundle_destroy(asyncrt_bundle *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->text_count; i++) free(b->texts[i]);
    for (size_t i = 0; i < b->count; i++) free(b->names[i]);
    free(b->texts);
    free(b->names);
    free(b->contents);
    free(b->text_of);
    free(b->sorted);
    free(b->note);
    free(b);
}

static _Thread_local const asyncrt_bundle *g_sorting; /* qsort has no context argument */

static int by_name(const void *a, const void *b)
{
    return strcmp(g_sorting->names[*(const size_t *)a], g_sorting->names[*(const size_t *)b]);
}

/* Decodes a checked payload; why says what is wrong. */
static asyncrt_bundle *decode(const unsigned char *payload, size_t size, char *why, size_t why_size)
{
    asyncrt_reader r = {payload, size, false};
    asyncrt_bundle *b = calloc(1, sizeof *b);
    snprintf(why, why_size, "out of memory");
    if (!b || !(b->note = asyncrt__take_str(&r))) goto bad;
    uint64_t texts = asyncrt__take_u64(&r);
    if (texts > r.left / 8 || !(b->texts = calloc(texts + 1, sizeof *b->texts))) goto bad;
    for (; b->text_count < texts; b->text_count++)
        if (!(b->texts[b->text_count] = asyncrt__take_str(&r))) goto bad;
    uint64_t names = asyncrt__take_u64(&r);
    if (names > r.left / 16 || !(b->names = calloc(names + 1, sizeof *b->names)) ||
        !(b->contents = calloc(names + 1, sizeof *b->contents)) || !(b->text_of = calloc(names + 1, sizeof(size_t))))
        goto bad;
    while (b->count < names) {
        char *name = b->names[b->count] = asyncrt__take_str(&r);
        uint64_t text = asyncrt__take_u64(&r);
        if (!name) goto bad;
        b->count++;
        if (!name[0] || text >= texts) {
            snprintf(why, why_size, "header %zu (\"%s\") is malformed", b->count - 1, name);
            goto refused;
        }
        for (size_t i = 0; i + 1 < b->count; i++) /* NVRTC would take one of two silently */
            if (strcmp(b->names[i], name) == 0) {
                snprintf(why, why_size, "the name \"%s\" is given twice", name);
                goto refused;
            }
        b->contents[b->count - 1] = b->texts[text];
        b->text_of[b->count - 1] = (size_t)text;
    }
    if (!r.bad && !r.left && (b->sorted = calloc(b->count + 1, sizeof *b->sorted))) {
        for (size_t i = 0; i < b->count; i++) b->sorted[i] = i;
        g_sorting = b;
        qsort(b->sorted, b->count, sizeof *b->sorted, by_name);
        return b;
    }
bad:
    if (b && b->note) snprintf(why, why_size, "its payload is malformed");
refused:
    asyncrt_bundle_destroy(b);
    return NULL;
}

asyncrt_status asyncrt_bundle_load(asyncrt_context *ctx, const void *data, size_t size, asyncrt_bundle **out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT; /* no message without a context */
    ASYNCRT_ENTER(ctx);
    if (!out) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load: out is NULL");
    *out = NULL;
    if (!data) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load: data is NULL");
    const unsigned char *payload;
    size_t payload_size;
    char why[512];
    if (!asyncrt__seal_open("header bundle", data, size, ASYNCRT_BUNDLE_MAGIC, ASYNCRT_BUNDLE_FORMAT, NULL, NULL,
                           &payload, &payload_size, NULL, why, sizeof why))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "%s (a bundle is what asyncrt-bundle wrote, unchanged)", why);
    asyncrt_bundle *b = decode(payload, payload_size, why, sizeof why);
    if (!b)
        return asyncrt__fail(ctx, strcmp(why, "out of memory") ? ASYNCRT_ERROR_INVALID_ARGUMENT
                                                               : ASYNCRT_ERROR_OUT_OF_MEMORY,
                            "header bundle: %s", why);
    memcpy(b->digest, (const unsigned char *)data + 56, 32); /* the seal's digest of the payload, checked */
    asyncrt__sha256_hex(b->digest, b->hex);
    *out = b;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_bundle_load_file(asyncrt_context *ctx, const char *path, asyncrt_bundle **out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    ASYNCRT_ENTER(ctx);
    if (!out) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load_file: out is NULL");
    *out = NULL;
    if (!path) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load_file: path is NULL");
    char why[512] = "";
    size_t size = 0;
    unsigned char *data = asyncrt__cache_read_file(AT_FDCWD, path, ASYNCRT_CACHE_FILE_MAX, false, &size, why,
                                                  sizeof why);
    if (!data)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_IO, "cannot read the header bundle %s: %s", path,
                            why[0] ? why : "it does not exist");
    asyncrt_status s = asyncrt_bundle_load(ctx, data, size, out);
    free(data);
    if (s != ASYNCRT_SUCCESS) {
        char *inner = strdup(asyncrt_context_last_error(ctx));
        asyncrt__fail(ctx, s, "%s: %s", path, inner ? inner : "");
        free(inner);
    }
    return s;
}

const char *asyncrt_bundle_digest(const asyncrt_bundle *b) { return b ? b->hex : ""; }
size_t asyncrt_bundle_header_count(const asyncrt_bundle *b) { return b ? b->count : 0; }
size_t asyncrt__bundle_count(const asyncrt_bundle *b) { return b ? b->count : 0; }
const char *asyncrt__bundle_name(const asyncrt_bundle *b, size_t i) { return b->names[i]; }

unsigned char *asyncrt__bundle_bytes(const asyncrt_bundle *b, size_t *size)
{
    return asyncrt__bundle_encode(b->note, (const char *const *)b->texts, b->text_count,
                                 (const char *const *)b->names, b->text_of, b->count, size);
}

const char *asyncrt__bundle_content(const asyncrt_bundle *b, size_t i) { return b->contents[i]; }

bool asyncrt__bundle_has(const asyncrt_bundle *b, const char *name)
{
    for (size_t lo = 0, hi = b ? b->count : 0; lo < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, b->names[b->sorted[mid]]);
        if (!c) return true;
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return false;
}

void asyncrt__bundle_key(asyncrt_sha256 *h, const asyncrt_bundle *b)
{
    if (!b) return;
    asyncrt__sha256_update(h, "bundle", 6);
    asyncrt__sha256_update(h, b->digest, 32);
}

char *asyncrt__bundle_missing_hint(const asyncrt_bundle *b, const char *log, const char *toolkit_why)
{
    static const char marker[] = "open source file \""; /* "cannot ..." or "could not ... (no directories ...)" */
    const char *at = log ? strstr(log, marker) : NULL;
    if (!at || (!b && !toolkit_why)) return NULL;
    at += sizeof marker - 1;
    int n = (int)strcspn(at, "\"\n");
    if (!b)
        return asyncrt__format("\"%.*s\" was not found: %s; a program that runs without a toolkit compiles "
                               "with a header bundle that holds it (asyncrt-bundle, README: \"Running where only "
                               "the driver is\")", n, at, toolkit_why);
    return asyncrt__format("\"%.*s\" is not in the header bundle %.12s (%zu headers; made by: %s)%s; remake the "
                           "bundle with asyncrt-bundle from every source the program compiles, the one that "
                           "includes \"%.*s\" among them, with the same -I, -D and --arch",
                           n, at, b->hex, b->count, b->note[0] ? b->note : "unknown",
                           toolkit_why ? "" : ", nor in the toolkit searched beside it", n, at);
}
