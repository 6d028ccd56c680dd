/* The cache's facade (cache.h): its life, and one lookup, lease and store
 * over the tiers (cache_tiers.h). */
#include "cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_tiers.h"
#include "remote_tally.h"
#include "remote_tier.h"

asyncrt_cache *asyncrt__cache_create(const asyncrt_settings *env, const asyncrt_diag *diag)
{
    asyncrt_cache *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    c->diag = diag;
    c->dir_fd = -1;
    if (!(c->claims = asyncrt__claims_create())) {
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
    asyncrt_cache_config cfg;
    asyncrt__cache_config_read(env, &cfg);
    c->enabled = cfg.enabled;
    c->dir = cfg.dir; /* the cache owns it now */
    atomic_init(&c->max_bytes, cfg.max_bytes);
    c->max_malformed = cfg.malformed_max != NULL;
    if (cfg.malformed_max)
        asyncrt__diag_log(diag, 1, "warning: ASYNCRT_CACHE_MAX_BYTES=\"%s\" is not a size (e.g. 1073741824, 512M, "
                                  "2G); using 1G", cfg.malformed_max);
    c->shared = cfg.shared;
    /* The remote the settings ask for, a refused one (its stats say why, a
     * warning at level 1), or none when none is asked for or caching is off. */
    const char *spec = env->remote_cache;
    if (spec && *spec && c->enabled) {
        asyncrt_status status;
        char why[512];
        if (!asyncrt__cache_set_remote(c, spec, env->remote_cache_key_file, &status, why, sizeof why)) {
            asyncrt__diag_log(diag, 1, "warning: ASYNCRT_REMOTE_CACHE: %s", why);
            c->remote = asyncrt__remote_refused(why);
        }
    }
    return c;
}

/* Adds the remote's counters to the directory's tally (the side file
 * remote-stats, for asyncrt-cache stats) and frees it. */
static void drop_remote(asyncrt_cache *c)
{
    if (!c->remote) return;
    uint64_t counts[ASYNCRT_RC_COUNT];
    asyncrt__remote_counters(c->remote, counts);
    asyncrt__remote_tally_add(c, counts);
    asyncrt__remote_destroy(c->remote);
    c->remote = NULL;
}

bool asyncrt__cache_set_remote(asyncrt_cache *c, const char *spec, const char *key_file, asyncrt_status *status,
                               char *why, size_t why_size)
{
    asyncrt_remote *r = NULL;
    if (spec && !(r = asyncrt__remote_create(spec, key_file, c->diag, status, why, why_size))) return false;
    drop_remote(c);
    c->remote = r;
    return true;
}

void asyncrt__cache_destroy(asyncrt_cache *c)
{
    if (!c) return;
    drop_remote(c); /* before the directory is let go: its tally is a side file */
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    asyncrt__cache_stats(c, &s);
    asyncrt__diag_log(c->diag, 2, "cache: %llu memory hits, %llu disk hits, %llu misses, %llu stores, %llu evictions, "
                      "%llu rejected", (unsigned long long)s.memory_hits, (unsigned long long)s.disk_hits,
                      (unsigned long long)s.misses, (unsigned long long)s.stores, (unsigned long long)s.evictions,
                      (unsigned long long)s.rejected);
    asyncrt__cache_clear(c);
    pthread_mutex_destroy(&c->lock);
    asyncrt__disk_close(c);
    asyncrt__claims_destroy(c->claims);
    free(c);
}

bool asyncrt__cache_enabled(const asyncrt_cache *c) { return c && c->enabled; }
const asyncrt_diag *asyncrt__cache_diag(const asyncrt_cache *c) { return c->diag; }

void asyncrt__cache_stats(const asyncrt_cache *c, asyncrt_cache_stats *out)
{
    uint64_t v[C_COUNT] = {0};
    for (int i = 0; c && i < C_COUNT; i++) v[i] = atomic_load_explicit(&c->counters[i], memory_order_relaxed);
    *out = (asyncrt_cache_stats){.size = sizeof *out, .memory_hits = v[C_MEMORY_HITS], .disk_hits = v[C_DISK_HITS],
                                 .misses = v[C_MISSES], .stores = v[C_STORES], .evictions = v[C_EVICTIONS],
                                 .rejected = v[C_REJECTED], .image_loads = v[C_IMAGE_LOADS],
                                 .module_loads = v[C_MODULE_LOADS]};
}

void asyncrt__cache_count_load(asyncrt_cache *c, bool image)
{
    if (!c) return;
    if (image) asyncrt__cache_count(c, C_IMAGE_LOADS, 1);
    asyncrt__cache_count(c, C_MODULE_LOADS, 1);
}

/* ---- lookup, lease, store ------------------------------------------------ */

/* Memory and disk, and the count of a store: where a compile's result and a
 * remote hit are both installed. deps->result_key is the entry's key. */
static void install(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                    const unsigned char *payload, size_t size)
{
    asyncrt__memory_remember(c, key1, deps, payload, size);
    asyncrt__cache_count(c, C_STORES, 1);
    asyncrt__disk_store(c, key1, deps, payload, size);
}

/* One pass over the tiers: the entry found for key1, as cache.h's lookup
 * finds it, before its reader has seen it. */
static bool find(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_tiers tiers, asyncrt_cache_claim *claim,
                 asyncrt_cache_entry *out)
{
    *out = (asyncrt_cache_entry){0};
    if (!c || !c->enabled) return false;
    if (claim) {
        memcpy(claim->key1, key1, 32);
        asyncrt__claims_enter(c->claims, key1);
        claim->held = true;
    }
    asyncrt_dep_set set = {0};
    bool found = asyncrt__memory_find(c, key1, out);
    if (found) {
        asyncrt__cache_count(c, C_MEMORY_HITS, 1);
    } else {
        found = asyncrt__disk_find(c, key1, &set, out);
        if (found) asyncrt__memory_remember(c, key1, &set, out->payload, out->size);
        asyncrt__cache_count(c, found ? C_DISK_HITS : C_MISSES, 1);
    }
    if (!found && tiers == ASYNCRT_TIERS_ALL && asyncrt__remote_tier_find(c->diag, c->remote, key1, out, &set)) {
        install(c, key1, &set, out->payload, out->size); /* through the local tiers' own checks */
        found = true;
    }
    asyncrt__dep_set_free(&set);
    if (found) asyncrt__cache_release(c, claim); /* no lease is taken yet: the claim alone goes */
    return found;
}

/* The lookup counted a hit (and a remote hit a store) that was none: taken
 * back, so that the counters read as if the tier had refused it itself. */
static const uint64_t TAKE_ONE_BACK = UINT64_MAX; /* added: one less, modulo 2^64 */

/* An entry whose payload its reader refused, dropped from the tiers it
 * reached (cache.h's lookup). True when a lookup again may find it
 * elsewhere (it came from memory or the disk). */
static bool refuse(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_cache_entry *e, const char *why)
{
    asyncrt__memory_forget(c, key1, e->key);
    if (e->origin == ASYNCRT_ORIGIN_REMOTE_CACHE) { /* installed on its way here: undone */
        asyncrt__disk_discard(c, e->key, NULL);
        asyncrt__cache_count(c, C_STORES, TAKE_ONE_BACK);
        asyncrt__remote_count(c->remote, ASYNCRT_RC_HITS, TAKE_ONE_BACK);
        asyncrt__remote_count(c->remote, ASYNCRT_RC_MISSES, 1);
        asyncrt__remote_refuse(c->remote, key1, false, why);
        return false;
    }
    asyncrt__cache_count(c, e->origin == ASYNCRT_ORIGIN_MEMORY_CACHE ? C_MEMORY_HITS : C_DISK_HITS, TAKE_ONE_BACK);
    asyncrt__disk_discard(c, e->key, why);
    return true;
}

/* e through the caller's reader, once; a refused entry dropped (*again: a
 * lookup may find it elsewhere). e is freed. */
static bool accepted(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_entry *e,
                     asyncrt_cache_accept_fn accept, void *user, bool *again)
{
    char why[256] = "the reader refused the payload";
    bool ok = accept(e, user, why, sizeof why);
    *again = !ok && refuse(c, key1, e, why);
    asyncrt__cache_entry_free(e);
    return ok;
}

bool asyncrt__cache_lookup(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_tiers tiers,
                           asyncrt_cache_claim *claim, asyncrt_cache_accept_fn accept, void *user)
{
    asyncrt_cache_entry e;
    bool ok = false, again = true;
    while (!ok && again && find(c, key1, tiers, claim, &e)) ok = accepted(c, key1, &e, accept, user, &again);
    return ok;
}

bool asyncrt__cache_lease(asyncrt_cache *c, asyncrt_cache_claim *claim, asyncrt_cache_accept_fn accept, void *user)
{
    asyncrt_cache_entry e = {0};
    if (!c || !claim->held) return false;
    asyncrt_dep_set set = {0};
    bool found = asyncrt__remote_tier_claim(c->diag, c->remote, claim->key1, &claim->leased, &e, &set);
    if (found) install(c, claim->key1, &set, e.payload, e.size);
    asyncrt__dep_set_free(&set);
    bool again; /* a leased value comes from the remote: refused, it is not looked for again */
    return found && accepted(c, claim->key1, &e, accept, user, &again);
}

void asyncrt__cache_store(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_tiers tiers,
                          const asyncrt_dep_set *deps, const unsigned char *payload, size_t size,
                          asyncrt_cache_claim *claim)
{
    if (c && c->enabled) {
        install(c, key1, deps, payload, size);
        if (tiers == ASYNCRT_TIERS_ALL) asyncrt__remote_tier_store(c->diag, c->remote, key1, deps, payload, size);
    }
    asyncrt__cache_release(c, claim);
}

void asyncrt__cache_release(asyncrt_cache *c, asyncrt_cache_claim *claim)
{
    if (!claim) return;
    if (claim->leased) asyncrt__remote_unlease(c->remote, claim->key1, &claim->leased);
    if (!claim->held) return;
    asyncrt__claims_leave(c->claims, claim->key1); /* this process's claim */
    claim->held = false;
}

/* ---- the remote tier's face ---------------------------------------------- */

void asyncrt__cache_remote_stats(asyncrt_cache *c, asyncrt_remote_cache_stats *out)
{
    asyncrt__remote_stats(c->remote, out);
}

void asyncrt__cache_remote_tally(asyncrt_cache *c, asyncrt_remote_cache_stats *out, uint64_t *kept)
{
    asyncrt__remote_tally_read(c, out, kept);
}

bool asyncrt__cache_remote_push(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                                const unsigned char *payload, size_t size, bool *kept, char *why, size_t why_size)
{
    return asyncrt__remote_tier_push(c->remote, key1, deps, payload, size, kept, why, why_size);
}

/* Whether the disk's newest compile for key1 is already the entry of `set`
 * (a pull repeated: nothing to install). */
static bool on_disk(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *set)
{
    asyncrt_cache_entry e = {0};
    asyncrt_dep_set held = {0};
    bool same = asyncrt__disk_find(c, key1, &held, &e) && !memcmp(held.result_key, set->result_key, 32);
    asyncrt__dep_set_free(&held);
    asyncrt__cache_entry_free(&e);
    return same;
}

/* asyncrt-cache pull: every value of one shard fetched and installed;
 * counts: installed, refused, stale, already on disk. */
static bool pull_shard(asyncrt_cache *c, asyncrt_remote *r, size_t i, size_t counts[4], char *why, size_t why_size)
{
    unsigned long long cursor = 0;
    size_t rounds = 0;
    do {
        asyncrt_remote_key *keys;
        size_t n;
        if (!asyncrt__remote_scan(r, i, &cursor, &rounds, &keys, &n, why, why_size)) return false;
        bool failed = false;
        for (size_t k = 0; k < n && !failed; k++) {
            asyncrt_cache_entry e = {0};
            char err[256];
            asyncrt_dep_set set = {0};
            asyncrt_tier_got g = keys[k].valid ? asyncrt__remote_tier_fetch(c->diag, r, keys[k].key1, false, &e, &set, err)
                                               : ASYNCRT_TIER_BAD;
            bool present = g == ASYNCRT_TIER_FOUND && on_disk(c, keys[k].key1, &set);
            if (g == ASYNCRT_TIER_FOUND && !present) install(c, keys[k].key1, &set, e.payload, e.size);
            if (g == ASYNCRT_TIER_ERROR) { /* the server failed: no value was refused, and the rest would fail too */
                char name[ASYNCRT_REMOTE_NAME_SIZE];
                asyncrt__remote_name(r, "v", keys[k].key1, name);
                snprintf(why, why_size, "the value %.100s: %s", name, err);
                failed = true;
            } else {
                counts[present ? 3 : g == ASYNCRT_TIER_FOUND ? 0 : g == ASYNCRT_TIER_STALE ? 2 : 1] +=
                    g != ASYNCRT_TIER_NOTHING;
            }
            if (g == ASYNCRT_TIER_FOUND && !present) /* taken from the remote, as a lookup's hit */
                asyncrt__remote_count(r, ASYNCRT_RC_HITS, 1);
            asyncrt__dep_set_free(&set);
            asyncrt__cache_entry_free(&e);
        }
        free(keys);
        if (failed) return false;
    } while (cursor != 0);
    return true;
}

bool asyncrt__cache_remote_pull(asyncrt_cache *c, size_t *installed, size_t *refused, size_t *stale,
                                size_t *present, char *why, size_t why_size)
{
    asyncrt_remote *r = c->remote;
    size_t counts[4] = {0};
    bool ok = asyncrt__remote_usable(r);
    if (!ok) snprintf(why, why_size, "no usable remote cache");
    for (size_t i = 0; ok && i < asyncrt__remote_shard_count(r); i++) ok = pull_shard(c, r, i, counts, why, why_size);
    *installed = counts[0], *refused = counts[1], *stale = counts[2], *present = counts[3];
    return ok;
}
