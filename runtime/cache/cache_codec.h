/* The byte layer under cache entries and manifests: a growing writer, a
 * bounds-checked reader, and the sealed container both file kinds use:
 *   magic[8] format:u32 flags:u32 key[32] payload_size:u64 digest[32] payload
 * The digest is SHA-256 of the payload, or HMAC-SHA-256 under the shared
 * cache's key when flags has ASYNCRT_SEAL_MAC. All integers little-endian
 * (host order: entries are not portable across byte orders, and say so by
 * failing their checks). */
#ifndef ASYNCRT_CACHE_CODEC_H
#define ASYNCRT_CACHE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ASYNCRT_SEAL_HEADER_SIZE (8 + 4 + 4 + 32 + 8 + 32)
#define ASYNCRT_SEAL_MAC 1u

typedef struct asyncrt_writer {
    unsigned char *data;
    size_t size, cap;
    bool failed;
} asyncrt_writer;

void asyncrt__put(asyncrt_writer *w, const void *src, size_t n);
void asyncrt__put_u64(asyncrt_writer *w, uint64_t v);
void asyncrt__put_str(asyncrt_writer *w, const char *s); /* length-prefixed */

typedef struct asyncrt_reader {
    const unsigned char *p;
    size_t left;
    bool bad;
} asyncrt_reader;

const void *asyncrt__take(asyncrt_reader *r, size_t n); /* NULL (and bad) past the end */
uint64_t asyncrt__take_u64(asyncrt_reader *r);
char *asyncrt__take_str(asyncrt_reader *r); /* malloc'd; one holding a NUL is bad */
char *asyncrt__dup_bytes(const void *src, size_t n);      /* n bytes + NUL */

/* Starts a sealed buffer: reserves the header. */
void asyncrt__seal_begin(asyncrt_writer *w);
/* Fills the header in; returns the buffer (caller frees) or NULL. mac_key:
 * 32 bytes or NULL for a plain SHA-256. */
unsigned char *asyncrt__seal_end(asyncrt_writer *w, const char magic[8], uint32_t format,
                                const uint8_t key[32], const uint8_t *mac_key, size_t *size);

/* Checks a sealed buffer: magic, format, flags (a MAC'd one needs mac_key
 * and a plain one is refused when mac_key is given), key (when not NULL),
 * length and digest. On success *payload and *payload_size point into data and
 * *key_out (if not NULL) receives the key it was sealed under. why starts
 * with `what` ("cache entry", "manifest"). */
bool asyncrt__seal_open(const char *what, const void *data, size_t size, const char magic[8], uint32_t format,
                       const uint8_t key[32], const uint8_t *mac_key, const unsigned char **payload,
                       size_t *payload_size, uint8_t key_out[32], char *why, size_t why_size);

#endif
