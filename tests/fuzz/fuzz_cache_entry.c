/* libFuzzer target: the cache-entry reader (asyncrt__program_decode), without
 * a key and with one. The first byte picks the mode: odd values wrap the rest
 * as a payload under a correct header (asyncrt__seal_end's: size, and the
 * SHA-256 of header and payload), so that the payload parser is reached past
 * the checksum. */
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "codec.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void decode(const unsigned char *entry, size_t size, const uint8_t *key)
{
    asyncrt_program *p = NULL;
    char why[256];
    why[0] = '\0';
    asyncrt_status st = asyncrt__program_decode(entry, size, key, &p, why, sizeof why);
    if (st == ASYNCRT_SUCCESS) {
        size_t n = 0;
        const unsigned char *image = asyncrt_program_image(p, &n);
        if (!image || n == 0) abort();
        unsigned char sum = 0;
        for (size_t i = 0; i < n; i++) sum ^= image[i];
        *(volatile unsigned char *)&sum = sum; /* every byte read */
        if (strlen(asyncrt_program_arch(p)) >= 32 || !asyncrt_program_log(p)) abort();
        /* What decodes must encode into an entry that decodes to the same image. */
        size_t again_size = 0;
        unsigned char *again = asyncrt__program_encode(p, &again_size);
        if (!again) abort();
        asyncrt_program *q = NULL;
        if (asyncrt__program_decode(again, again_size, key, &q, why, sizeof why) != ASYNCRT_SUCCESS) abort();
        size_t m = 0;
        const void *image2 = asyncrt_program_image(q, &m);
        if (m != n || memcmp(image, image2, n) != 0 || strcmp(asyncrt_program_arch(p), asyncrt_program_arch(q))) abort();
        asyncrt_program_destroy(q);
        free(again);
        asyncrt_program_destroy(p);
    } else {
        if (p || why[0] == '\0') abort();
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1) return 0;
    int wrap = data[0] & 1;
    data++, size--;
    unsigned char *entry;
    size_t entry_size;
    if (wrap) {
        asyncrt_writer w = {0}; /* the library's own seal: the digest covers the header too */
        asyncrt__seal_begin(&w);
        asyncrt__put(&w, data, size);
        static const uint8_t zero_key[32];
        entry = asyncrt__seal_end(&w, ASYNCRT_ENTRY_MAGIC, ASYNCRT_ENTRY_FORMAT, zero_key, NULL, &entry_size);
        if (!entry) return 0;
    } else {
        entry_size = size;
        entry = malloc(size ? size : 1);
        if (!entry) return 0;
        memcpy(entry, data, size);
    }
    uint8_t key[32];
    if (entry_size >= 48) memcpy(key, entry + 16, 32); /* the key it claims: reached the payload checks */
    else memset(key, 0x5a, sizeof key);
    decode(entry, entry_size, NULL);
    decode(entry, entry_size, key);
    free(entry);
    return 0;
}
