/* The byte layer under every sealed file and value (cache entries and
 * manifests, side files, remote values, bundles) and the workers' messages:
 * a growing writer, a bounds-checked reader, and the sealed container:
 *   magic[8] format:u32 flags:u32 key[32] payload_size:u64 digest[32] payload
 * The digest is SHA-256 of everything but itself (the header's first 56
 * bytes, then the payload), or HMAC-SHA-256 of the same under the shared
 * cache's (or the fleet's) key when flags has ASYNCRT_SEAL_MAC: the key, the
 * kind (magic) and the format are signed with the payload, so no sealed
 * buffer can be relabelled as another key's or another kind's. All integers
 * little-endian (host order: entries are not portable across byte orders,
 * and say so by failing their checks). */
#ifndef ASYNCRT_CODEC_H
#define ASYNCRT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ASYNCRT_SEAL_HEADER_SIZE (8 + 4 + 4 + 32 + 8 + 32)
#define ASYNCRT_SEAL_DIGEST_AT (8 + 4 + 4 + 32 + 8) /* the digest's offset: what precedes it is signed */
#define ASYNCRT_SEAL_MAC 1u

/* Each sealed kind's magic and format. A format changes whenever what a
 * reader of the old one would accept changes, so that files and values of
 * an older asyncrt are refused by their format (a miss), never misread.
 * Entries 3, manifests 2, side files 2, remote values 2: the digest covers
 * the header since (issue 33). */
#define ASYNCRT_ENTRY_MAGIC "ASYNCRTC"
#define ASYNCRT_ENTRY_FORMAT 3u
#define ASYNCRT_MANIFEST_MAGIC "ASYNCRTM"
#define ASYNCRT_MANIFEST_FORMAT 2u
#define ASYNCRT_SIDE_MAGIC "ASYNCRTS"
#define ASYNCRT_SIDE_FORMAT 2u
#define ASYNCRT_VALUE_MAGIC "ASYNCRTR"
#define ASYNCRT_VALUE_FORMAT 2u
#define ASYNCRT_RECORD_MAGIC "ASYNCRTK" /* a key record on the remote (remote_records.h) */
#define ASYNCRT_RECORD_FORMAT 1u

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
