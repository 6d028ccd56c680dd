/* The program type (program.h): its life, its public accessors, and its
 * payload in the cache. */
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "codec.h"
#include "compact_use.h"
#include "context.h" /* asyncrt__sized_give */

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
    free(p->image_note);
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
    c->compact = p->compact;
    c->nvrtc_image_size = p->nvrtc_image_size;
    c->image_note = p->image_note ? strdup(p->image_note) : NULL;
    bool ok = c->log && c->image && c->expressions && c->lowered && !p->source_name == !c->source_name &&
              !p->options == !c->options && !p->arch_reason == !c->arch_reason && !p->image_note == !c->image_note;
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

/* ---- the payload (codec.h's writer and reader) ------------------------- */

unsigned char *asyncrt__program_payload(const asyncrt_program *p, size_t *size)
{
    asyncrt_writer w = {0};
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
    if (p->source_name || p->options || p->image_note) { /* absent: the layout from before they were recorded */
        asyncrt__put_str(&w, p->source_name ? p->source_name : "");
        asyncrt__put_str(&w, p->options ? p->options : "");
    }
    if (p->image_note) { /* absent: not recorded */
        asyncrt__put_str(&w, p->image_note);
        asyncrt__put_u64(&w, p->compact);
        asyncrt__put_u64(&w, p->nvrtc_image_size);
    }
    if (w.failed || !w.data) {
        free(w.data);
        return NULL;
    }
    *size = w.size;
    return w.data;
}

asyncrt_status asyncrt__program_from_payload(const unsigned char *payload, size_t size, const uint8_t key[32],
                                            asyncrt_program_origin origin, asyncrt_program **out, char *why,
                                            size_t why_size)
{
    *out = NULL;
    asyncrt_reader r = {payload, size, false};
    asyncrt_program *p = calloc(1, sizeof *p);
    if (!p) return ASYNCRT_ERROR_OUT_OF_MEMORY;
    memcpy(p->key, key, 32);
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
    if (!r.bad && r.left) { /* written since compact images' verdict is recorded */
        p->image_note = asyncrt__take_str(&r);
        uint64_t compact = asyncrt__take_u64(&r);
        p->compact = compact == 1;
        p->nvrtc_image_size = asyncrt__take_u64(&r);
        if (!p->image_note || compact > 1 || p->nvrtc_image_size < p->image_size) r.bad = true;
    }
    if (r.bad || !p->log || !p->image || r.left != 0 || p->image_size == 0) {
        asyncrt_program_destroy(p);
        snprintf(why, why_size, "cache entry payload is malformed");
        return ASYNCRT_ERROR_IO;
    }
    p->origin = origin;
    *out = p;
    return ASYNCRT_SUCCESS;
}

bool asyncrt__program_accept(const asyncrt_cache_entry *e, void *program, char *why, size_t why_size)
{
    return asyncrt__program_from_payload(e->payload, e->size, e->key, e->origin, (asyncrt_program **)program, why,
                                         why_size) == ASYNCRT_SUCCESS;
}

/* ---- the sealed form: the cache's entry around the payload --------------- */

unsigned char *asyncrt__program_encode_keyed(const asyncrt_program *p, const uint8_t *mac_key, size_t *size)
{
    size_t payload_size = 0;
    unsigned char *payload = asyncrt__program_payload(p, &payload_size);
    unsigned char *sealed = payload ? asyncrt__cache_entry_seal(payload, payload_size, p->key, mac_key, size) : NULL;
    free(payload);
    return sealed;
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
    asyncrt_cache_entry e;
    if (!asyncrt__cache_entry_open(data, size, key, mac_key, &e, why, why_size)) return ASYNCRT_ERROR_IO;
    asyncrt_status s =
        asyncrt__program_from_payload(e.payload, e.size, e.key, ASYNCRT_ORIGIN_DISK_CACHE, out, why, why_size);
    asyncrt__cache_entry_free(&e);
    return s;
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

asyncrt_status asyncrt_program_image_info_of(asyncrt_context *ctx, const asyncrt_program *p,
                                             asyncrt_program_image_info *out)
{
    asyncrt_program_image_info full = ASYNCRT_PROGRAM_IMAGE_INFO_INIT;
    if (!p) { /* the context's setting: what its next CUBIN compile does */
        full.compact = asyncrt__compact_setting(ctx, full.reason, sizeof full.reason);
        return asyncrt__sized_give(ctx, ASYNCRT_SIZED_PROGRAM_IMAGE_INFO, out, &full, "program image info");
    }
    full.compact = p->compact;
    full.image_bytes = p->image_size;
    full.nvrtc_image_bytes = p->image_note ? p->nvrtc_image_size : 0;
    snprintf(full.reason, sizeof full.reason, "%s", p->image_note ? p->image_note : "");
    return asyncrt__sized_give(ctx, ASYNCRT_SIZED_PROGRAM_IMAGE_INFO, out, &full, "program image info");
}

const char *asyncrt_program_lowered_name(const asyncrt_program *p, const char *expression)
{
    for (size_t i = 0; i < p->name_count; i++)
        if (strcmp(p->expressions[i], expression) == 0) return p->lowered[i];
    return NULL;
}
