#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

#define ENTRY_MAGIC "ASYNCRTC"
#define ENTRY_FORMAT 1u
#define HEADER_SIZE (8 + 4 + 4 + 32 + 8 + 32)

void asyncrt_program_destroy(asyncrt_program *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->name_count; i++) {
        if (p->expressions) free(p->expressions[i]);
        if (p->lowered) free(p->lowered[i]);
    }
    free(p->expressions);
    free(p->lowered);
    free(p->log);
    free(p->image);
    free(p);
}

static char *dup_bytes(const void *src, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, src, n);
    s[n] = '\0';
    return s;
}

asyncrt_program *asyncrt_program_clone(const asyncrt_program *p)
{
    asyncrt_program *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    memcpy(c->key, p->key, sizeof c->key);
    memcpy(c->arch, p->arch, sizeof c->arch);
    c->ptx = p->ptx;
    c->origin = p->origin;
    c->log = strdup(p->log);
    c->image = (unsigned char *)dup_bytes(p->image, p->image_size);
    c->image_size = p->image_size;
    c->expressions = calloc(p->name_count + 1, sizeof(char *));
    c->lowered = calloc(p->name_count + 1, sizeof(char *));
    c->name_count = p->name_count;
    bool ok = c->log && c->image && c->expressions && c->lowered;
    for (size_t i = 0; ok && i < p->name_count; i++) {
        c->expressions[i] = strdup(p->expressions[i]);
        c->lowered[i] = strdup(p->lowered[i]);
        ok = c->expressions[i] && c->lowered[i];
    }
    if (!ok) {
        asyncrt_program_destroy(c);
        return NULL;
    }
    return c;
}

/* ---- encoding: a growing buffer and a bounds-checked reader ------------- */

typedef struct writer {
    unsigned char *data;
    size_t size, cap;
    bool failed;
} writer;

static void put(writer *w, const void *src, size_t n)
{
    if (w->failed) return;
    if (w->size + n > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 4096;
        while (cap < w->size + n) cap *= 2;
        unsigned char *grown = realloc(w->data, cap);
        if (!grown) {
            w->failed = true;
            return;
        }
        w->data = grown;
        w->cap = cap;
    }
    memcpy(w->data + w->size, src, n);
    w->size += n;
}

static void put_u64(writer *w, uint64_t v) { put(w, &v, sizeof v); }
static void put_str(writer *w, const char *s)
{
    size_t n = strlen(s);
    put_u64(w, n);
    put(w, s, n);
}

unsigned char *asyncrt_program_encode(const asyncrt_program *p, size_t *size)
{
    writer w = {0};
    unsigned char header[HEADER_SIZE] = {0};
    put(&w, header, sizeof header); /* filled in below */
    put_str(&w, p->arch);
    put_u64(&w, p->ptx);
    put_str(&w, p->log);
    put_u64(&w, p->name_count);
    for (size_t i = 0; i < p->name_count; i++) {
        put_str(&w, p->expressions[i]);
        put_str(&w, p->lowered[i]);
    }
    put_u64(&w, p->image_size);
    put(&w, p->image, p->image_size);
    if (w.failed) {
        free(w.data);
        return NULL;
    }
    uint64_t payload = w.size - HEADER_SIZE;
    uint32_t format = ENTRY_FORMAT, reserved = 0;
    unsigned char *h = w.data;
    memcpy(h, ENTRY_MAGIC, 8);
    memcpy(h + 8, &format, 4);
    memcpy(h + 12, &reserved, 4);
    memcpy(h + 16, p->key, 32);
    memcpy(h + 48, &payload, 8);
    asyncrt_sha256 sha;
    asyncrt_sha256_init(&sha);
    asyncrt_sha256_update(&sha, w.data + HEADER_SIZE, payload);
    asyncrt_sha256_final(&sha, h + 56);
    *size = w.size;
    return w.data;
}

typedef struct reader {
    const unsigned char *p;
    size_t left;
    bool bad;
} reader;

static const void *take(reader *r, size_t n)
{
    if (r->bad || n > r->left) {
        r->bad = true;
        return NULL;
    }
    const void *at = r->p;
    r->p += n;
    r->left -= n;
    return at;
}

static uint64_t take_u64(reader *r)
{
    uint64_t v = 0;
    const void *at = take(r, sizeof v);
    if (at) memcpy(&v, at, sizeof v);
    return v;
}

static char *take_str(reader *r)
{
    uint64_t n = take_u64(r);
    const void *at = take(r, n);
    return at ? dup_bytes(at, n) : NULL;
}

asyncrt_status asyncrt_program_decode(const void *data, size_t size, const uint8_t key[32],
                                      asyncrt_program **out, char *why, size_t why_size)
{
    *out = NULL;
    const unsigned char *h = data;
    if (size < HEADER_SIZE || memcmp(h, ENTRY_MAGIC, 8) != 0) {
        snprintf(why, why_size, "not a cache entry (%zu bytes, bad header)", size);
        return ASYNCRT_ERROR_IO;
    }
    uint32_t format, reserved;
    uint64_t payload;
    memcpy(&format, h + 8, 4);
    memcpy(&reserved, h + 12, 4);
    memcpy(&payload, h + 48, 8);
    if (format != ENTRY_FORMAT || reserved != 0) {
        snprintf(why, why_size, "cache entry format %u.%u, expected %u.0", format, reserved, ENTRY_FORMAT);
        return ASYNCRT_ERROR_IO;
    }
    if (key && memcmp(h + 16, key, 32) != 0) {
        snprintf(why, why_size, "cache entry was written under another key");
        return ASYNCRT_ERROR_IO;
    }
    if (payload != size - HEADER_SIZE) {
        snprintf(why, why_size, "cache entry is %zu bytes, its header says %llu (truncated?)",
                 size, (unsigned long long)(payload + HEADER_SIZE));
        return ASYNCRT_ERROR_IO;
    }
    uint8_t digest[32];
    asyncrt_sha256 sha;
    asyncrt_sha256_init(&sha);
    asyncrt_sha256_update(&sha, h + HEADER_SIZE, payload);
    asyncrt_sha256_final(&sha, digest);
    if (memcmp(digest, h + 56, 32) != 0) {
        snprintf(why, why_size, "cache entry checksum mismatch (damaged)");
        return ASYNCRT_ERROR_IO;
    }

    reader r = {h + HEADER_SIZE, payload, false};
    asyncrt_program *p = calloc(1, sizeof *p);
    if (!p) return ASYNCRT_ERROR_OUT_OF_MEMORY;
    if (key) memcpy(p->key, key, 32);
    char *arch = take_str(&r);
    if (arch && strlen(arch) < sizeof p->arch) strcpy(p->arch, arch);
    else r.bad = true;
    free(arch);
    p->ptx = take_u64(&r) != 0;
    p->log = take_str(&r);
    uint64_t names = take_u64(&r);
    if (names > r.left / 16) r.bad = true; /* each name pair takes at least 16 bytes */
    if (!r.bad) {
        p->expressions = calloc(names + 1, sizeof(char *));
        p->lowered = calloc(names + 1, sizeof(char *));
        if (!p->expressions || !p->lowered) r.bad = true;
    }
    for (uint64_t i = 0; !r.bad && i < names; i++, p->name_count++) {
        p->expressions[i] = take_str(&r);
        p->lowered[i] = take_str(&r);
        if (!p->expressions[i] || !p->lowered[i]) r.bad = true;
    }
    p->image_size = take_u64(&r);
    const void *image = take(&r, p->image_size);
    if (image) p->image = (unsigned char *)dup_bytes(image, p->image_size);
    if (r.bad || !p->log || !p->image || r.left != 0 || p->image_size == 0) {
        asyncrt_program_destroy(p);
        snprintf(why, why_size, "cache entry payload is malformed");
        return ASYNCRT_ERROR_IO;
    }
    p->origin = ASYNCRT_ORIGIN_DISK_CACHE;
    *out = p;
    return ASYNCRT_SUCCESS;
}

const void *asyncrt_program_image(const asyncrt_program *p, size_t *size)
{
    if (size) *size = p->image_size;
    return p->image;
}
bool asyncrt_program_is_ptx(const asyncrt_program *p) { return p->ptx; }
const char *asyncrt_program_arch(const asyncrt_program *p) { return p->arch; }
const char *asyncrt_program_log(const asyncrt_program *p) { return p->log; }
asyncrt_program_origin asyncrt_program_origin_of(const asyncrt_program *p) { return p->origin; }

const char *asyncrt_program_origin_string(asyncrt_program_origin origin)
{
    switch (origin) {
    case ASYNCRT_ORIGIN_COMPILED: return "compiled";
    case ASYNCRT_ORIGIN_MEMORY_CACHE: return "memory cache";
    case ASYNCRT_ORIGIN_DISK_CACHE: return "disk cache";
    }
    return "unknown";
}

const char *asyncrt_program_lowered_name(const asyncrt_program *p, const char *expression)
{
    for (size_t i = 0; i < p->name_count; i++)
        if (strcmp(p->expressions[i], expression) == 0) return p->lowered[i];
    return NULL;
}
