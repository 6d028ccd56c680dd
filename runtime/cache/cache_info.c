/* What the disk tier is, for asyncrt_context_cache_info (asyncrt/cache.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncrt/cache.h"
#include "cache_tiers.h"

void asyncrt__cache_info(asyncrt_cache *c, asyncrt_cache_info *out)
{
    *out = (asyncrt_cache_info){.size = out->size};
    out->dir = c->dir;
    out->shared = c->shared;
    out->max_bytes = atomic_load_explicit(&c->max_bytes, memory_order_relaxed);
    out->max_malformed = c->max_malformed;
    if (!c->enabled) {
        snprintf(out->why, sizeof out->why, "caching is off (ASYNCRT_CACHE=0)");
        return;
    }
    if (!c->dir) {
        snprintf(out->why, sizeof out->why, "no cache directory: ASYNCRT_CACHE_DIR, XDG_CACHE_HOME and HOME are "
                                            "unset, or asyncrt_context_set_cache_dir(ctx, NULL) turned it off");
        return;
    }
    /* The check a lookup makes (once per directory name), and its verdict. */
    char *name;
    uint8_t mac_key[32];
    bool shared;
    int fd = asyncrt__disk_open(c, &name, mac_key, &shared);
    memset(mac_key, 0, sizeof mac_key); /* the team's secret is no business of a report */
    free(name);
    out->used = fd >= 0;
    if (fd >= 0) {
        close(fd);
        return;
    }
    pthread_mutex_lock(&c->lock);
    snprintf(out->why, sizeof out->why, "%s", c->dir_why[0] ? c->dir_why : "out of memory or descriptors");
    pthread_mutex_unlock(&c->lock);
}
