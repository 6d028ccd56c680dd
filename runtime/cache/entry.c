/* An entry's container (cache_tiers.h): the payload its owner gives (the
 * compile layer's program), sealed under its result key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_tiers.h"
#include "codec.h"

/* Formats: 2, the reserved word became flags (MAC'd entries); 3, the digest covers the header. */
#define ENTRY_MAGIC ASYNCRT_ENTRY_MAGIC
#define ENTRY_FORMAT ASYNCRT_ENTRY_FORMAT

void asyncrt__cache_entry_free(asyncrt_cache_entry *e)
{
    free(e->payload);
    e->payload = NULL;
    e->size = 0;
}

unsigned char *asyncrt__cache_entry_seal(const unsigned char *payload, size_t size, const uint8_t key2[32],
                                   const uint8_t *mac_key, size_t *sealed_size)
{
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put(&w, payload, size);
    return asyncrt__seal_end(&w, ENTRY_MAGIC, ENTRY_FORMAT, key2, mac_key, sealed_size);
}

bool asyncrt__cache_entry_open(const void *data, size_t size, const uint8_t key2[32], const uint8_t *mac_key,
                         asyncrt_cache_entry *out, char *why, size_t why_size)
{
    const unsigned char *payload;
    size_t payload_size;
    *out = (asyncrt_cache_entry){0};
    if (!asyncrt__seal_open("cache entry", data, size, ENTRY_MAGIC, ENTRY_FORMAT, key2, mac_key, &payload,
                            &payload_size, out->key, why, why_size))
        return false;
    if (!(out->payload = (unsigned char *)asyncrt__dup_bytes(payload, payload_size))) {
        snprintf(why, why_size, "out of memory for a cache entry of %zu bytes", payload_size);
        return false;
    }
    out->size = payload_size;
    return true;
}
