/* Side files (cache.h): small notes kept beside the entries, through the
 * disk tier's checked directory (the files themselves: side_io.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_tiers.h"

char *asyncrt__cache_read_side(asyncrt_cache *c, const char *name)
{
    uint8_t mac_key[32];
    bool shared;
    char *dir, why[256];
    int fd = strchr(name, '/') ? -1 : asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (fd < 0) return NULL;
    char *text = asyncrt__side_read_at(fd, shared ? mac_key : NULL, name, why, sizeof why);
    if (!text && why[0]) asyncrt__diag_log(c->diag, 1, "warning: ignoring cache side file %s/%s: %s", dir, name, why);
    free(dir);
    close(fd);
    return text;
}

bool asyncrt__cache_write_side(asyncrt_cache *c, const char *name, const char *text)
{
    uint8_t mac_key[32];
    bool shared;
    char *dir;
    int fd = strchr(name, '/') ? -1 : asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (fd < 0) return false;
    bool ok = asyncrt__side_write_at(fd, shared ? mac_key : NULL, name, text);
    if (!ok) asyncrt__diag_log(c->diag, 1, "warning: cannot write cache side file %s/%s: %s", dir, name, strerror(errno));
    free(dir);
    close(fd);
    return ok;
}
