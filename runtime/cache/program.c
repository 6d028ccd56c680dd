#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* Formats: 2, the reserved word became flags (MAC'd entries); 3, the digest covers the header. */
#define ENTRY_MAGIC ASYNCRT_ENTRY_MAGIC
#define ENTRY_FORMAT ASYNCRT_ENTRY_FORMAT

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
    free(p->source_name);
    free(p->options);
    free(p->arch_reason);
    free(p);
}

asyncrt_program *asyncrt__program_clone(const asyncrt_program *p)
{
    asyncrt_program *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    memcpy(c->key, p->key, sizeof c->key);
    memcpy(c->arch, p->arch, sizeof c->arch);
    c->ptx = p->ptx;
    c->origin = p->origin;
    c->log = strdup(p->log);
    c->image = (unsigned char *)asyncrt__dup_bytes(p->image, p->image_size);
    c->image_size = p->image_size;
    c->expressions = calloc(p->name_count + 1, sizeof(char *));
    c->lowered = calloc(p->name_count + 1, sizeof(char *));
    c->name_count = p->name_count;
    c->source_name = p->source_name ? strdup(p->source_name) : NULL;
    c->options = p->options ? strdup(p->options) : NULL;
    c->arch_reason = p->arch_reason ? strdup(p->arch_reason) : NULL;
    bool ok = c->log && c->image && c->expressions && c->lowered && !p->source_name == !c->source_name &&
              !p->options == !c->options && !p->arch_reason == !c->arch_reason;
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

/* ---- encoding (codec.h has the container) ------------------------ */

unsigned char *asyncrt__program_encode_keyed(const asyncrt_program *p, const uint8_t *mac_key, size_t *size)
{
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put_str(&w, p->arch);
    asyncrt__put_u64(&w, p->ptx);
    asyncrt__put_str(&w, p->log);
    asyncrt__put_u64(&w, p->name_count);
    for (size_t i = 0; i < p->name_count; i++) {
        asyncrt__put_str(&w, p->expressions[i]);
        asyncrt__put_str(&w, p->lowered[i]);
    }
    asyncrt__put_u64(&w, p->image_size);
    asyncrt__put(&w, p->image, p->image_size);
    if (p->source_name || p->options) { /* absent: the layout from before they were recorded */
        asyncrt__put_str(&w, p->source_name ? p->source_name : "");
        asyncrt__put_str(&w, p->options ? p->options : "");
    }
    return asyncrt__seal_end(&w, ENTRY_MAGIC, ENTRY_FORMAT, p->key, mac_key, size);
}

unsigned char *asyncrt__program_encode(const asyncrt_program *p, size_t *size)
{
    return asyncrt__program_encode_keyed(p, NULL, size);
}

asyncrt_status asyncrt__program_decode_keyed(const void *data, size_t size, const uint8_t key[32],
                                            const uint8_t *mac_key, asyncrt_program **out, char *why,
                                            size_t why_size)
{
    *out = NULL;
    const unsigned char *payload;
    size_t payload_size;
    uint8_t sealed_key[32];
    if (!asyncrt__seal_open("cache entry", data, size, ENTRY_MAGIC, ENTRY_FORMAT, key, mac_key, &payload,
                           &payload_size, sealed_key, why, why_size))
        return ASYNCRT_ERROR_IO;
    asyncrt_reader r = {payload, payload_size, false};
    asyncrt_program *p = calloc(1, sizeof *p);
    if (!p) return ASYNCRT_ERROR_OUT_OF_MEMORY;
    memcpy(p->key, sealed_key, 32);
    char *arch = asyncrt__take_str(&r);
    if (arch && strlen(arch) < sizeof p->arch) strcpy(p->arch, arch);
    else r.bad = true;
    free(arch);
    p->ptx = asyncrt__take_u64(&r) != 0;
    p->log = asyncrt__take_str(&r);
    uint64_t names = asyncrt__take_u64(&r);
    if (names > r.left / 16) r.bad = true; /* each name pair takes at least 16 bytes */
    if (!r.bad) {
        p->expressions = calloc(names + 1, sizeof(char *));
        p->lowered = calloc(names + 1, sizeof(char *));
        if (!p->expressions || !p->lowered) r.bad = true;
    }
    for (uint64_t i = 0; !r.bad && i < names; i++, p->name_count++) {
        p->expressions[i] = asyncrt__take_str(&r);
        p->lowered[i] = asyncrt__take_str(&r);
        if (!p->expressions[i] || !p->lowered[i]) r.bad = true;
    }
    p->image_size = asyncrt__take_u64(&r);
    const void *image = asyncrt__take(&r, p->image_size);
    if (image) p->image = (unsigned char *)asyncrt__dup_bytes(image, p->image_size);
    if (!r.bad && r.left) { /* written since the source name and options are recorded */
        p->source_name = asyncrt__take_str(&r);
        p->options = asyncrt__take_str(&r);
    }
    if (r.bad || !p->log || !p->image || r.left != 0 || p->image_size == 0) {
        asyncrt_program_destroy(p);
        snprintf(why, why_size, "cache entry payload is malformed");
        return ASYNCRT_ERROR_IO;
    }
    p->origin = ASYNCRT_ORIGIN_DISK_CACHE;
    *out = p;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt__program_decode(const void *data, size_t size, const uint8_t key[32],
                                      asyncrt_program **out, char *why, size_t why_size)
{
    return asyncrt__program_decode_keyed(data, size, key, NULL, out, why, why_size);
}

const void *asyncrt_program_image(const asyncrt_program *p, size_t *size)
{
    if (size) *size = p->image_size;
    return p->image;
}
bool asyncrt_program_is_ptx(const asyncrt_program *p) { return p->ptx; }
const char *asyncrt_program_arch(const asyncrt_program *p) { return p->arch; }
const char *asyncrt_program_arch_reason(const asyncrt_program *p) { return p->arch_reason ? p->arch_reason : ""; }
const char *asyncrt_program_log(const asyncrt_program *p) { return p->log; }
asyncrt_program_origin asyncrt_program_origin_of(const asyncrt_program *p) { return p->origin; }

const char *asyncrt_program_origin_string(asyncrt_program_origin origin)
{
    switch (origin) {
    case ASYNCRT_ORIGIN_COMPILED: return "compiled";
    case ASYNCRT_ORIGIN_MEMORY_CACHE: return "memory cache";
    case ASYNCRT_ORIGIN_DISK_CACHE: return "disk cache";
    case ASYNCRT_ORIGIN_REMOTE_CACHE: return "remote cache";
    }
    return "unknown";
}

const char *asyncrt_program_lowered_name(const asyncrt_program *p, const char *expression)
{
    for (size_t i = 0; i < p->name_count; i++)
        if (strcmp(p->expressions[i], expression) == 0) return p->lowered[i];
    return NULL;
}
