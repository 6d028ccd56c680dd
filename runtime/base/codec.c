#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

void asyncrt__put(asyncrt_writer *w, const void *src, size_t n)
{
    if (w->failed || n == 0) return;
    if (n > SIZE_MAX / 2 - w->size) {
        w->failed = true;
        return;
    }
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

void asyncrt__put_u64(asyncrt_writer *w, uint64_t v) { asyncrt__put(w, &v, sizeof v); }

void asyncrt__put_str(asyncrt_writer *w, const char *s)
{
    size_t n = strlen(s);
    asyncrt__put_u64(w, n);
    asyncrt__put(w, s, n);
}

const void *asyncrt__take(asyncrt_reader *r, size_t n)
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

uint64_t asyncrt__take_u64(asyncrt_reader *r)
{
    uint64_t v = 0;
    const void *at = asyncrt__take(r, sizeof v);
    if (at) memcpy(&v, at, sizeof v);
    return v;
}

char *asyncrt__dup_bytes(const void *src, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, src, n);
    s[n] = '\0';
    return s;
}

char *asyncrt__take_str(asyncrt_reader *r)
{
    uint64_t n = asyncrt__take_u64(r);
    const void *at = asyncrt__take(r, n);
    if (at && memchr(at, '\0', n)) r->bad = true; /* what we write never holds a NUL */
    return at && !r->bad ? asyncrt__dup_bytes(at, n) : NULL;
}

void asyncrt__seal_begin(asyncrt_writer *w)
{
    unsigned char header[ASYNCRT_SEAL_HEADER_SIZE] = {0};
    asyncrt__put(w, header, sizeof header);
}

/* The digest (or MAC) of a sealed buffer: its header but the digest field
 * itself (magic, format, flags, key, length), then the payload. The header is
 * covered so that a file or value cannot be relabelled: one key's sealed
 * bytes under another key, one kind's as another's, fail the digest. */
static void digest_of(const unsigned char *h, const unsigned char *payload, size_t size, const uint8_t *mac_key,
                      uint8_t out[32])
{
    if (mac_key) {
        asyncrt_hmac_sha256 m;
        asyncrt__hmac_sha256_init(&m, mac_key, 32);
        asyncrt__hmac_sha256_update(&m, h, ASYNCRT_SEAL_DIGEST_AT);
        asyncrt__hmac_sha256_update(&m, payload, size);
        asyncrt__hmac_sha256_final(&m, out);
        return;
    }
    asyncrt_sha256 sha;
    asyncrt__sha256_init(&sha);
    asyncrt__sha256_update(&sha, h, ASYNCRT_SEAL_DIGEST_AT);
    asyncrt__sha256_update(&sha, payload, size);
    asyncrt__sha256_final(&sha, out);
}

unsigned char *asyncrt__seal_end(asyncrt_writer *w, const char magic[8], uint32_t format,
                                const uint8_t key[32], const uint8_t *mac_key, size_t *size)
{
    if (w->failed || w->size < ASYNCRT_SEAL_HEADER_SIZE) {
        free(w->data);
        w->data = NULL;
        return NULL;
    }
    unsigned char *h = w->data;
    uint64_t payload = w->size - ASYNCRT_SEAL_HEADER_SIZE;
    uint32_t flags = mac_key ? ASYNCRT_SEAL_MAC : 0;
    memcpy(h, magic, 8);
    memcpy(h + 8, &format, 4);
    memcpy(h + 12, &flags, 4);
    memcpy(h + 16, key, 32);
    memcpy(h + 48, &payload, 8);
    digest_of(h, h + ASYNCRT_SEAL_HEADER_SIZE, payload, mac_key, h + ASYNCRT_SEAL_DIGEST_AT);
    *size = w->size;
    return w->data;
}

/* Constant time, so that a forger learns nothing from timing. */
static bool same_digest(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0;
    for (int i = 0; i < 32; i++) diff |= a[i] ^ b[i];
    return diff == 0;
}

static bool check_seal(const void *data, size_t size, const char magic[8], uint32_t format, const uint8_t key[32],
                       const uint8_t *mac_key, char *why, size_t why_size)
{
    const unsigned char *h = data;
    if (size < ASYNCRT_SEAL_HEADER_SIZE || memcmp(h, magic, 8) != 0) {
        snprintf(why, why_size, "not a %.8s file (%zu bytes, bad header)", magic, size);
        return false;
    }
    uint32_t got_format, flags;
    uint64_t length;
    memcpy(&got_format, h + 8, 4);
    memcpy(&flags, h + 12, 4);
    memcpy(&length, h + 48, 8);
    if (got_format < format) {
        snprintf(why, why_size, "format %u, written by an older asyncrt (this one reads %u)", got_format, format);
        return false;
    }
    if (got_format != format || (flags & ~ASYNCRT_SEAL_MAC) != 0) {
        snprintf(why, why_size, "format %u (flags 0x%x), expected %u", got_format, flags, format);
        return false;
    }
    if (!(flags & ASYNCRT_SEAL_MAC) != !mac_key) {
        snprintf(why, why_size, mac_key ? "not signed with the shared cache's key"
                                        : "signed for a shared cache, this one is private");
        return false;
    }
    if (key && memcmp(h + 16, key, 32) != 0) {
        snprintf(why, why_size, "written under another key");
        return false;
    }
    if (length != size - ASYNCRT_SEAL_HEADER_SIZE) {
        snprintf(why, why_size, "%zu bytes, its header says %llu (truncated?)", size,
                 (unsigned long long)length + ASYNCRT_SEAL_HEADER_SIZE);
        return false;
    }
    uint8_t digest[32];
    digest_of(h, h + ASYNCRT_SEAL_HEADER_SIZE, length, mac_key, digest);
    if (!same_digest(digest, h + ASYNCRT_SEAL_DIGEST_AT)) {
        snprintf(why, why_size, mac_key ? "MAC mismatch (damaged, or not written by a key holder)"
                                        : "checksum mismatch (damaged)");
        return false;
    }
    return true;
}

bool asyncrt__seal_open(const char *what, const void *data, size_t size, const char magic[8], uint32_t format,
                       const uint8_t key[32], const uint8_t *mac_key, const unsigned char **payload,
                       size_t *payload_size, uint8_t key_out[32], char *why, size_t why_size)
{
    char reason[192];
    if (!check_seal(data, size, magic, format, key, mac_key, reason, sizeof reason)) {
        snprintf(why, why_size, "%s: %s", what, reason);
        return false;
    }
    const unsigned char *h = data;
    *payload = h + ASYNCRT_SEAL_HEADER_SIZE;
    *payload_size = size - ASYNCRT_SEAL_HEADER_SIZE;
    if (key_out) memcpy(key_out, h + 16, 32);
    return true;
}
