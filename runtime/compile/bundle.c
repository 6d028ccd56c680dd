/* Reading and checking bundles; their headers for a compile. */
#include "bundle.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "safe_io.h"
#include "context.h" /* asyncrt__fail, asyncrt__enter */

struct asyncrt_bundle {
    unsigned char *raw;    /* the sealed bytes, owned */
    size_t raw_size;
    uint8_t digest[32];    /* as the seal states it: the key's, checked before NVRTC reads a header */
    char hex[65];
    char *note;
    char **names;
    size_t *text_of;       /* names[i]'s text index */
    size_t *sorted;        /* indexes of names in strcmp order, for the check of names given twice */
    size_t count;
    size_t *text_at, *text_len, text_count; /* each text's place in raw */
    pthread_mutex_t lock;  /* over what follows: made on first need (a cache miss) */
    int state;             /* 0 not yet, 1 checked and ready, -1 refused (why) */
    char why[256];
    char **texts;          /* NUL-terminated copies */
    const char **contents; /* contents[i]: names[i]'s text */
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
    for (size_t i = 0; b->texts && i < b->text_count; i++) free(b->texts[i]);
    for (size_t i = 0; i < b->count; i++) free(b->names[i]);
    free(b->texts);
    free(b->contents);
    free(b->names);
    free(b->text_of);
    free(b->sorted);
    free(b->text_at);
    free(b->text_len);
    free(b->note);
    free(b->raw);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

static _Thread_local const asyncrt_bundle *g_sorting; /* qsort has no context argument */

static int by_name(const void *x, const void *y)
{
    return strcmp(g_sorting->names[*(const size_t *)x], g_sorting->names[*(const size_t *)y]);
}

/* The layout of b->raw, read without hashing it: a load must stay cheap,
 * since a program that only hits the cache never needs the texts (the
 * digest is checked before NVRTC first reads one, asyncrt__bundle_ready). */
static bool parse(asyncrt_bundle *b, char *why, size_t why_size)
{
    const unsigned char *h = b->raw;
    uint32_t format = 0, flags = 1;
    uint64_t length = 0;
    if (b->raw_size >= ASYNCRT_SEAL_HEADER_SIZE) {
        memcpy(&format, h + 8, 4);
        memcpy(&flags, h + 12, 4);
        memcpy(&length, h + 48, 8);
    }
    if (b->raw_size >= 8 && b->raw_size < ASYNCRT_SEAL_HEADER_SIZE && memcmp(h, ASYNCRT_BUNDLE_MAGIC, 8) == 0) {
        snprintf(why, why_size, "truncated: %zu bytes, less than a bundle's header (%d)", b->raw_size,
                 ASYNCRT_SEAL_HEADER_SIZE);
        return false;
    }
    if (b->raw_size < ASYNCRT_SEAL_HEADER_SIZE || memcmp(h, ASYNCRT_BUNDLE_MAGIC, 8) != 0 ||
        format != ASYNCRT_BUNDLE_FORMAT || flags != 0) {
        snprintf(why, why_size, "not a header bundle of format %u (%zu bytes)", ASYNCRT_BUNDLE_FORMAT, b->raw_size);
        return false;
    }
    if (length != b->raw_size - ASYNCRT_SEAL_HEADER_SIZE) {
        bool cut = length > b->raw_size - ASYNCRT_SEAL_HEADER_SIZE;
        snprintf(why, why_size, "%s: %zu bytes, its header says %llu", cut ? "truncated" : "bytes after its end",
                 b->raw_size, (unsigned long long)length + ASYNCRT_SEAL_HEADER_SIZE);
        return false;
    }
    memcpy(b->digest, h + 56, 32);
    asyncrt__sha256_hex(b->digest, b->hex);
    asyncrt_reader r = {h + ASYNCRT_SEAL_HEADER_SIZE, (size_t)length, false};
    b->note = asyncrt__take_str(&r);
    uint64_t texts = asyncrt__take_u64(&r);
    if (r.bad) goto bad;
    if (texts > r.left / 8) goto malformed;
    if (!b->note || !(b->text_at = calloc(texts + 1, sizeof(size_t))) ||
        !(b->text_len = calloc(texts + 1, sizeof(size_t))))
        goto oom;
    for (; b->text_count < texts; b->text_count++) {
        uint64_t n = asyncrt__take_u64(&r);
        const unsigned char *at = asyncrt__take(&r, n);
        if (!at || memchr(at, 0, n)) goto bad;
        b->text_at[b->text_count] = (size_t)(at - h);
        b->text_len[b->text_count] = (size_t)n;
    }
    uint64_t names = asyncrt__take_u64(&r);
    if (r.bad) goto bad;
    if (names > r.left / 16) goto malformed;
    if (!(b->names = calloc(names + 1, sizeof *b->names)) || !(b->text_of = calloc(names + 1, sizeof(size_t))) ||
        !(b->sorted = calloc(names + 1, sizeof(size_t))))
        goto oom;
    while (b->count < names) {
        char *name = b->names[b->count] = asyncrt__take_str(&r);
        uint64_t text = asyncrt__take_u64(&r);
        if (r.bad) goto bad;
        if (!name) goto oom;
        b->sorted[b->count] = b->count;
        b->text_of[b->count++] = (size_t)text;
        if (!name[0] || text >= texts) {
            snprintf(why, why_size, "header %zu (\"%s\") is malformed", b->count - 1, name);
            return false;
        }
    }
    if (r.left) goto malformed;
    g_sorting = b;
    qsort(b->sorted, b->count, sizeof *b->sorted, by_name);
    for (size_t i = 1; i < b->count; i++) /* NVRTC would refuse the program */
        if (strcmp(b->names[b->sorted[i - 1]], b->names[b->sorted[i]]) == 0) {
            snprintf(why, why_size, "the name \"%s\" is given twice", b->names[b->sorted[i]]);
            return false;
        }
    return true;
bad: /* the reader ran out of bytes (or met a NUL in a text): the payload is cut short or damaged */
    snprintf(why, why_size, "its payload of %llu bytes ends inside an item (truncated or damaged)",
             (unsigned long long)length);
    return false;
malformed:
    snprintf(why, why_size, "its payload is malformed");
    return false;
oom:
    snprintf(why, why_size, "out of memory");
    return false;
}

/* Takes raw (malloc'd) whatever happens. */
static asyncrt_status load_owned(asyncrt_context *ctx, unsigned char *raw, size_t size, asyncrt_bundle **out)
{
    asyncrt_bundle *b = calloc(1, sizeof *b);
    if (!b || pthread_mutex_init(&b->lock, NULL) != 0) {
        free(b);
        free(raw);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory loading a header bundle");
    }
    b->raw = raw;
    b->raw_size = size;
    char why[512];
    if (!parse(b, why, sizeof why)) {
        asyncrt_bundle_destroy(b);
        return asyncrt__fail(ctx, strcmp(why, "out of memory") ? ASYNCRT_ERROR_INVALID_ARGUMENT
                                                               : ASYNCRT_ERROR_OUT_OF_MEMORY,
                            "header bundle: %s (a bundle is what asyncrt-bundle wrote, unchanged)", why);
    }
    *out = b;
    return ASYNCRT_SUCCESS;
}

static asyncrt_status bundle_load(asyncrt_context *ctx, const void *data, size_t size, asyncrt_bundle **out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT; /* no message without a context */
    if (!out) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load: out is NULL");
    *out = NULL;
    if (!data) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load: data is NULL");
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory loading a header bundle");
    memcpy(copy, data, size);
    return load_owned(ctx, copy, size, out);
}

asyncrt_status asyncrt_bundle_load(asyncrt_context *ctx, const void *data, size_t size, asyncrt_bundle **out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, bundle_load(ctx, data, size, out));
}

static asyncrt_status bundle_load_file(asyncrt_context *ctx, const char *path, asyncrt_bundle **out)
{
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    if (!out) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load_file: out is NULL");
    *out = NULL;
    if (!path) return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_bundle_load_file: path is NULL");
    char why[512] = "";
    size_t size = 0;
    unsigned char *data = asyncrt__file_read(AT_FDCWD, path, ASYNCRT_FILE_MAX, false, &size, why,
                                                  sizeof why);
    if (!data)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_IO, "cannot read the header bundle %s: %s", path,
                            why[0] ? why : "it does not exist");
    asyncrt_status s = load_owned(ctx, data, size, out);
    if (s != ASYNCRT_SUCCESS) {
        char *inner = strdup(asyncrt_context_last_error(ctx));
        asyncrt__fail(ctx, s, "%s: %s", path, inner ? inner : "");
        free(inner);
    }
    return s;
}

asyncrt_status asyncrt_bundle_load_file(asyncrt_context *ctx, const char *path, asyncrt_bundle **out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, bundle_load_file(ctx, path, out));
}

bool asyncrt__bundle_ready(const asyncrt_bundle *cb, char *why, size_t why_size)
{
    asyncrt_bundle *b = (asyncrt_bundle *)cb; /* read-only to callers; this fills its cache */
    pthread_mutex_lock(&b->lock);
    if (b->state == 0) {
        const unsigned char *payload;
        size_t payload_size;
        bool ok = asyncrt__seal_open("header bundle", b->raw, b->raw_size, ASYNCRT_BUNDLE_MAGIC,
                                     ASYNCRT_BUNDLE_FORMAT, NULL, NULL, &payload, &payload_size, NULL, b->why,
                                     sizeof b->why);
        if (ok && (!(b->texts = calloc(b->text_count + 1, sizeof *b->texts)) ||
                   !(b->contents = calloc(b->count + 1, sizeof *b->contents)))) {
            snprintf(b->why, sizeof b->why, "out of memory");
            ok = false;
        }
        for (size_t i = 0; ok && i < b->text_count; i++)
            if (!(b->texts[i] = asyncrt__dup_bytes(b->raw + b->text_at[i], b->text_len[i]))) {
                snprintf(b->why, sizeof b->why, "out of memory");
                ok = false;
            }
        for (size_t i = 0; ok && i < b->count; i++) b->contents[i] = b->texts[b->text_of[i]];
        b->state = ok ? 1 : -1;
    }
    bool ready = b->state == 1;
    if (!ready) snprintf(why, why_size, "%s", b->why);
    pthread_mutex_unlock(&b->lock);
    return ready;
}

const char *asyncrt_bundle_digest(const asyncrt_bundle *b) { return b ? b->hex : ""; }
size_t asyncrt_bundle_header_count(const asyncrt_bundle *b) { return b ? b->count : 0; }
size_t asyncrt_bundle_text_count(const asyncrt_bundle *b) { return b ? b->text_count : 0; }
size_t asyncrt__bundle_count(const asyncrt_bundle *b) { return b ? b->count : 0; }
const char *asyncrt__bundle_name(const asyncrt_bundle *b, size_t i) { return b->names[i]; }

unsigned char *asyncrt__bundle_bytes(const asyncrt_bundle *b, size_t *size)
{
    unsigned char *copy = malloc(b->raw_size);
    if (copy) memcpy(copy, b->raw, *size = b->raw_size);
    return copy;
}

const char *asyncrt__bundle_content(const asyncrt_bundle *b, size_t i) { return b->contents[i]; }

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
                               "with a header bundle that holds it (asyncrt-bundle, docs/bundles.md)",
                               n, at, toolkit_why);
    return asyncrt__format("\"%.*s\" is not in the header bundle %.12s (%zu headers; made by: %s)%s; remake the "
                           "bundle with asyncrt-bundle from every source the program compiles, the one that "
                           "includes \"%.*s\" among them, with the same -I, -D and --arch",
                           n, at, b->hex, b->count, b->note[0] ? b->note : "unknown",
                           toolkit_why ? "" : ", nor in the toolkit searched beside it", n, at);
}
