/* Side files (cache.h): small notes kept beside the entries, through the
 * disk tier's checked directory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_tiers.h"
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

char *asyncrt__cache_read_side(asyncrt_cache *c, const char *name)
{
    uint8_t mac_key[32], key[32];
    bool shared;
    char *dir, why[256];
    int fd = strchr(name, '/') ? -1 : asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (fd < 0) return NULL;
    size_t size = 0, text_size = 0;
    unsigned char *data = asyncrt__file_read(fd, name, SIDE_MAX_BYTES, false, &size, why, sizeof why);
    const unsigned char *text = NULL;
    side_key(name, key);
    if (data && !asyncrt__seal_open("side file", data, size, SIDE_MAGIC, SIDE_FORMAT, key, shared ? mac_key : NULL, &text,
                                   &text_size, NULL, why, sizeof why))
        text = NULL;
    if (!text && why[0]) asyncrt__diag_log(c->diag, 1, "warning: ignoring cache side file %s/%s: %s", dir, name, why);
    char *copy = text ? asyncrt__dup_bytes(text, text_size) : NULL;
    if (copy && strlen(copy) != text_size) { /* a NUL inside: not text */
        free(copy);
        copy = NULL;
    }
    free(data);
    free(dir);
    close(fd);
    return copy;
}

bool asyncrt__cache_write_side(asyncrt_cache *c, const char *name, const char *text)
{
    uint8_t mac_key[32], key[32];
    bool shared;
    char *dir;
    int fd = strchr(name, '/') ? -1 : asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (fd < 0) return false;
    side_key(name, key);
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put(&w, text, strlen(text));
    size_t size = 0;
    unsigned char *data = asyncrt__seal_end(&w, SIDE_MAGIC, SIDE_FORMAT, key, shared ? mac_key : NULL, &size);
    bool ok = data && asyncrt__file_write(fd, name, data, size, shared ? 0660 : 0600);
    if (!ok) asyncrt__diag_log(c->diag, 1, "warning: cannot write cache side file %s/%s: %s", dir, name, strerror(errno));
    free(data);
    free(dir);
    close(fd);
    return ok;
}
