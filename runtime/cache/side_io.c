/* Side files' bytes (cache.h): read and written on a folder already open,
 * through safe_io.h's checked helpers, sealed under their name (and a
 * shared cache's team MAC). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "codec.h"
#include "safe_io.h"
#include "sha256.h"

#define SIDE_MAGIC ASYNCRT_SIDE_MAGIC
#define SIDE_FORMAT ASYNCRT_SIDE_FORMAT /* 2: the digest covers the header */
#define SIDE_MAX_BYTES 65536

/* The key a side file is sealed under: its name, so a copy under another name fails. */
static void side_key(const char *name, uint8_t key[32])
{
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, "asyncrt side file ", 18);
    asyncrt__sha256_update(&h, name, strlen(name));
    asyncrt__sha256_final(&h, key);
}

char *asyncrt__side_read_at(int dir_fd, const uint8_t *mac, const char *name, char *why, size_t why_size)
{
    uint8_t key[32];
    why[0] = '\0';
    if (strchr(name, '/')) {
        snprintf(why, why_size, "not a plain file name");
        return NULL;
    }
    size_t size = 0, text_size = 0;
    unsigned char *data = asyncrt__file_read(dir_fd, name, SIDE_MAX_BYTES, false, &size, why, why_size);
    const unsigned char *text = NULL;
    side_key(name, key);
    if (data && !asyncrt__seal_open("side file", data, size, SIDE_MAGIC, SIDE_FORMAT, key, mac, &text, &text_size,
                                   NULL, why, why_size))
        text = NULL;
    char *copy = text ? asyncrt__dup_bytes(text, text_size) : NULL;
    if (copy && strlen(copy) != text_size) { /* a NUL inside: not text */
        free(copy);
        copy = NULL;
        snprintf(why, why_size, "not text");
    }
    free(data);
    return copy;
}

bool asyncrt__side_write_at(int dir_fd, const uint8_t *mac, const char *name, const char *text)
{
    uint8_t key[32];
    if (strchr(name, '/')) {
        errno = EINVAL;
        return false;
    }
    side_key(name, key);
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put(&w, text, strlen(text));
    size_t size = 0;
    unsigned char *data = asyncrt__seal_end(&w, SIDE_MAGIC, SIDE_FORMAT, key, mac, &size);
    if (!data) errno = ENOMEM;
    bool ok = data && asyncrt__file_write(dir_fd, name, data, size, mac ? 0660 : 0600);
    free(data);
    return ok;
}
