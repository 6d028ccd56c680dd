/* What the disk tier holds for one key1, for asyncrt_cache_explain
 * (cache_explain.h): read as a lookup reads it (safe_io.h's checked read,
 * the manifest's and the entry's seals), but without refreshing the LRU's
 * times, discarding or counting anything: explaining changes nothing. */
#include "cache_explain.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_tiers.h"
#include "file_hash.h"
#include "remote_tier.h"
#include "safe_io.h"
#include "sha256.h"

static void name_of(const uint8_t key[32], const char *suffix, char out[72])
{
    char hex[65];
    asyncrt__sha256_hex(key, hex);
    snprintf(out, 72, "%s%s", hex, suffix);
}

/* Why the set no longer holds: the working folder, or the first file whose content differs. */
static void why_stale(const asyncrt_dep_set *set, asyncrt_key_diff *d)
{
    char cwd[PATH_MAX];
    *d = (asyncrt_key_diff){0};
    if (set->cwd[0] && (!getcwd(cwd, sizeof cwd) || strcmp(cwd, set->cwd) != 0)) {
        snprintf(d->what, sizeof d->what, "cwd");
        d->was = strdup(set->cwd);
        d->now = strdup(getcwd(cwd, sizeof cwd) ? cwd : "(unreadable)");
        return;
    }
    for (size_t i = 0; i < set->count; i++) {
        uint8_t sha[32];
        struct stat st;
        bool there = asyncrt__file_sha256(set->deps[i].path, sha, &st);
        if (there && memcmp(sha, set->deps[i].sha, 32) == 0) continue;
        char was[65], now[65];
        asyncrt__sha256_hex(set->deps[i].sha, was);
        asyncrt__sha256_hex(sha, now);
        snprintf(d->what, sizeof d->what, "dependency");
        d->name = strdup(set->deps[i].path);
        d->was = strdup(was);
        d->now = there ? strdup(now) : NULL;
        return;
    }
    snprintf(d->what, sizeof d->what, "dependency"); /* stat changed, content held: raced with an edit */
}

asyncrt_key1_state asyncrt__cache_key1_state(asyncrt_cache *c, const uint8_t key1[32], asyncrt_key_diff *stale)
{
    uint8_t mac_key[32];
    bool shared;
    char *dir, why[256], name[72];
    *stale = (asyncrt_key_diff){0};
    int dir_fd = asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (dir_fd < 0) return ASYNCRT_KEY1_NO_DIR;
    const uint8_t *mac = shared ? mac_key : NULL;
    name_of(key1, ".mf", name);
    size_t size = 0;
    unsigned char *data = asyncrt__file_read(dir_fd, name, ASYNCRT_FILE_MAX, false, &size, why, sizeof why);
    asyncrt_manifest m = {0};
    asyncrt_key1_state state = ASYNCRT_KEY1_NO_MANIFEST;
    if (data && asyncrt__manifest_decode(data, size, key1, mac, &m, why, sizeof why)) state = ASYNCRT_KEY1_STALE;
    else if (data) state = ASYNCRT_KEY1_DAMAGED;
    free(data);
    for (size_t s = 0; s < m.count; s++) {
        if (!asyncrt__dep_set_valid(&m.sets[s])) continue;
        name_of(m.sets[s].result_key, ".bin", name);
        data = asyncrt__file_read(dir_fd, name, ASYNCRT_FILE_MAX, false, &size, why, sizeof why);
        asyncrt_cache_entry e = {0};
        state = data && asyncrt__cache_entry_open(data, size, m.sets[s].result_key, mac, &e, why, sizeof why)
                    ? ASYNCRT_KEY1_HIT
                    : ASYNCRT_KEY1_ENTRY_GONE;
        free(e.payload);
        free(data);
        break; /* the newest valid set decides, as a lookup's */
    }
    if (state == ASYNCRT_KEY1_STALE && m.count) why_stale(&m.sets[0], stale);
    asyncrt__manifest_free(&m);
    free(dir);
    close(dir_fd);
    return state;
}

void asyncrt__cache_remote_state(asyncrt_cache *c, const uint8_t key1[32], char *out, size_t size)
{
    if (!c->remote || !asyncrt__remote_usable(c->remote)) {
        snprintf(out, size, "no usable remote cache (ASYNCRT_REMOTE_CACHE)");
        return;
    }
    asyncrt_cache_entry e = {0};
    asyncrt_dep_set set = {0};
    char err[256] = "";
    /* quiet: a refusal is reported here, not counted or logged again */
    asyncrt_tier_got got = asyncrt__remote_tier_fetch(c->diag, c->remote, key1, true, &e, &set, err);
    snprintf(out, size, "%s",
             got == ASYNCRT_TIER_FOUND   ? "hit: the remote holds this key, and its headers hold here"
             : got == ASYNCRT_TIER_STALE ? "miss: the remote holds this key, but the headers it read differ here"
             : got == ASYNCRT_TIER_BAD   ? "miss: the remote's value for this key fails its checks"
             : got == ASYNCRT_TIER_ERROR ? err
                                         : "miss: the remote holds nothing for this key");
    if (got == ASYNCRT_TIER_ERROR && !err[0]) snprintf(out, size, "the remote failed");
    free(e.payload);
    asyncrt__dep_set_free(&set);
}
