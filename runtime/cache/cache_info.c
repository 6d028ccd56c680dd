/* What the disk tier is, for asyncrt/cache.h: asyncrt_context_cache_info and
 * the folder handles of context/cache_dir.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asyncrt/cache.h"
#include "cache_tiers.h"
#include "remote_tally.h"

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

void asyncrt__cache_settings(const asyncrt_cache *c, bool *shared, uint64_t *max_bytes, bool *max_malformed)
{
    *shared = c->shared;
    *max_bytes = atomic_load_explicit(&((asyncrt_cache *)c)->max_bytes, memory_order_relaxed);
    *max_malformed = c->max_malformed;
}

bool asyncrt__cache_holds_dir(asyncrt_cache *c, int dir_fd)
{
    struct stat a, b;
    pthread_mutex_lock(&c->lock);
    bool same = c->pinned && c->dir_fd >= 0 && fstat(c->dir_fd, &a) == 0 && fstat(dir_fd, &b) == 0 &&
                a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    pthread_mutex_unlock(&c->lock);
    return same;
}

void asyncrt__cache_remote_tally_at(const char *name, int dir_fd, bool shared, const uint8_t mac_key[32],
                                    const asyncrt_diag *diag, asyncrt_remote_cache_stats *out, uint64_t *kept)
{
    /* A cache of that one directory, pinned as adopt_dir pins one, for its side file. */
    asyncrt_cache c = {.diag = diag, .enabled = true, .dir = (char *)name, .checked_dir = (char *)name,
                       .dir_fd = dir_fd, .pinned = true, .shared = shared};
    memcpy(c.mac_key, mac_key, 32);
    if (pthread_mutex_init(&c.lock, NULL) != 0) {
        *out = (asyncrt_remote_cache_stats){.size = sizeof *out};
        if (kept) *kept = 0;
        return;
    }
    asyncrt__remote_tally_read(&c, out, kept);
    pthread_mutex_destroy(&c.lock);
    memset(c.mac_key, 0, sizeof c.mac_key);
}
