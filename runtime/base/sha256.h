/* SHA-256, for cache keys and entry checksums (FIPS 180-4). */
#ifndef ASYNCRT_SHA256_H
#define ASYNCRT_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct asyncrt_sha256 {
    uint32_t state[8];
    uint64_t length;      /* bytes hashed so far */
    uint8_t block[64];
    size_t used;          /* bytes waiting in block */
} asyncrt_sha256;

void asyncrt__sha256_init(asyncrt_sha256 *h);
void asyncrt__sha256_update(asyncrt_sha256 *h, const void *data, size_t size);
void asyncrt__sha256_final(asyncrt_sha256 *h, uint8_t digest[32]);
/* Lowercase hex of a digest into out[65]. */
void asyncrt__sha256_hex(const uint8_t digest[32], char out[65]);

/* The compression of whole blocks on the CPU's SHA extensions (sha256_ni.c),
 * where usable; sha256.c uses them unless asyncrt__sha256_portable is set
 * (tests compare the two). */
#include <stdbool.h>
extern const uint32_t asyncrt__sha256_k[64]; /* the round constants, for both */
bool asyncrt__sha256_ni_usable(void);
void asyncrt__sha256_ni_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);
extern bool asyncrt__sha256_portable;

/* HMAC-SHA-256 (RFC 2104) of data under key, for the shared team cache. */
void asyncrt__hmac_sha256(const uint8_t *key, size_t key_size, const void *data, size_t size,
                         uint8_t mac[32]);
/* The same in pieces, for a MAC over data that is not contiguous. */
typedef struct asyncrt_hmac_sha256 {
    asyncrt_sha256 inner;
    uint8_t outer_pad[64];
} asyncrt_hmac_sha256;
void asyncrt__hmac_sha256_init(asyncrt_hmac_sha256 *m, const uint8_t *key, size_t key_size);
void asyncrt__hmac_sha256_update(asyncrt_hmac_sha256 *m, const void *data, size_t size);
void asyncrt__hmac_sha256_final(asyncrt_hmac_sha256 *m, uint8_t mac[32]);

#endif
