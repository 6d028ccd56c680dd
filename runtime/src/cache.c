#include "cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cache_store.h"
#include "cache_trust.h"
#include "sha256.h"

/* One remembered program. Immutable once listed; refs keeps it alive while
 * a lookup validates it outside the lock. */
typedef struct cached {
    uint8_t key1[32];
    asyncrt_dep_set deps;
    asyncrt_program *program;
    unsigned refs;            /* the list's own + lookups in flight; under the lock */
    bool listed;
    struct cached *next;
} cached;

enum { C_MEMORY_HITS, C_DISK_HITS, C_MISSES, C_STORES, C_EVICTIONS, C_REJECTED, C_COUNT };

struct asyncrt_cache {
    pthread_mutex_t lock;
    cached *programs;          /* newest first */
    char *checked_dir;         /* the directory last checked, and the verdict */
    bool dir_ok;
    bool shared;
    uint8_t mac_key[32];
    uint64_t max_bytes;
    uint64_t counters[C_COUNT]; /* __atomic */
};

static void count(asyncrt_cache *c, int which) { __atomic_fetch_add(&c->counters[which], 1, __ATOMIC_RELAXED); }

bool asyncrt__cache_parse_size(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno || text[0] == '-') return false;
    int shift = 0;
    if (*end && strchr("kK", *end)) shift = 10, end++;
    else if (*end && strchr("mM", *end)) shift = 20, end++;
    else if (*end && strchr("gG", *end)) shift = 30, end++;
    if (*end || v > (UINT64_MAX >> shift)) return false;
    *out = (uint64_t)v << shift;
    return true;
}

asyncrt_cache *asyncrt__cache_create(const asyncrt_context *ctx)
{
    asyncrt_cache *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    c->max_bytes = ASYNCRT_CACHE_DEFAULT_MAX_BYTES;
    const char *max = getenv("ASYNCRT_CACHE_MAX_BYTES");
    if (max && *max && !asyncrt__cache_parse_size(max, &c->max_bytes)) {
        c->max_bytes = ASYNCRT_CACHE_DEFAULT_MAX_BYTES;
        asyncrt__log(ctx, 1, "warning: ASYNCRT_CACHE_MAX_BYTES=\"%s\" is not a size (e.g. 1073741824, 512M, 2G); "
                            "using 1G", max);
    }
    const char *shared = getenv("ASYNCRT_CACHE_SHARED");
    c->shared = shared && strcmp(shared, "1") == 0;
    return c;
}

static void release(asyncrt_cache *c, cached *n)
{
    bool last;
    pthread_mutex_lock(&c->lock);
    last = --n->refs == 0;
    pthread_mutex_unlock(&c->lock);
    if (!last) return;
    asyncrt__dep_set_free(&n->deps);
    asyncrt_program_destroy(n->program);
    free(n);
}

void asyncrt__cache_clear(asyncrt_context *ctx)
{
    asyncrt_cache *c = ctx->cache;
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    cached *list = c->programs;
    c->programs = NULL;
    for (cached *n = list; n; n = n->next) n->listed = false;
    pthread_mutex_unlock(&c->lock);
    while (list) {
        cached *next = list->next;
        release(c, list);
        list = next;
    }
}

void asyncrt__cache_destroy(asyncrt_context *ctx)
{
    asyncrt_cache *c = ctx->cache;
    if (!c) return;
    asyncrt_cache_stats s;
    asyncrt_context_cache_stats(ctx, &s);
    asyncrt__log(ctx, 2, "cache: %llu memory hits, %llu disk hits, %llu misses, %llu stores, %llu evictions, "
                        "%llu rejected", (unsigned long long)s.memory_hits, (unsigned long long)s.disk_hits,
                (unsigned long long)s.misses, (unsigned long long)s.stores, (unsigned long long)s.evictions,
                (unsigned long long)s.rejected);
    asyncrt__cache_clear(ctx);
    pthread_mutex_destroy(&c->lock);
    free(c->checked_dir);
    free(c);
    ctx->cache = NULL;
}

asyncrt_status asyncrt_context_cache_stats(const asyncrt_context *ctx, asyncrt_cache_stats *out)
{
    if (!ctx || !out) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    uint64_t v[C_COUNT] = {0};
    for (int i = 0; ctx->cache && i < C_COUNT; i++) v[i] = __atomic_load_n(&ctx->cache->counters[i], __ATOMIC_RELAXED);
    *out = (asyncrt_cache_stats){v[C_MEMORY_HITS], v[C_DISK_HITS], v[C_MISSES], v[C_STORES], v[C_EVICTIONS],
                                 v[C_REJECTED]};
    return ASYNCRT_SUCCESS;
}

/* <dir>/<hex key><suffix>, malloc'd. */
static char *file_path(const char *dir, const uint8_t key[32], const char *suffix)
{
    char hex[65];
    asyncrt__sha256_hex(key, hex);
    return asyncrt__format("%s/%s%s", dir, hex, suffix);
}

/* The cache directory if it may be used (checked once per directory, and
 * created if missing), malloc'd; *mac_key is the shared key or NULL. */
static char *usable_dir(asyncrt_context *ctx, uint8_t mac_key[32], bool *shared)
{
    asyncrt_cache *c = ctx->cache;
    if (!c || !ctx->cache_dir) return NULL;
    pthread_mutex_lock(&c->lock);
    if (!c->checked_dir || strcmp(c->checked_dir, ctx->cache_dir) != 0) {
        free(c->checked_dir);
        c->checked_dir = strdup(ctx->cache_dir);
        char why[512];
        c->dir_ok = c->checked_dir && asyncrt__cache_trust_dir(c->checked_dir, c->shared, c->mac_key, why, sizeof why);
        if (!c->dir_ok && c->checked_dir)
            asyncrt__log(ctx, 1, "warning: not caching in %s (no disk cache): %s", c->checked_dir, why);
    }
    char *dir = c->dir_ok ? strdup(c->checked_dir) : NULL;
    memcpy(mac_key, c->mac_key, 32);
    *shared = c->shared;
    pthread_mutex_unlock(&c->lock);
    return dir;
}

bool asyncrt__cache_dir_usable(asyncrt_context *ctx)
{
    uint8_t mac_key[32];
    bool shared;
    char *dir = usable_dir(ctx, mac_key, &shared);
    bool usable = dir != NULL;
    free(dir);
    return usable;
}

static void remember(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                     const asyncrt_program *program)
{
    cached *n = calloc(1, sizeof *n);
    if (!n) return;
    n->program = asyncrt__program_clone(program);
    if (!n->program || !asyncrt__dep_set_copy(&n->deps, deps)) {
        asyncrt_program_destroy(n->program);
        free(n);
        return;
    }
    memcpy(n->key1, key1, 32);
    n->refs = 1;
    n->listed = true;
    pthread_mutex_lock(&c->lock);
    n->next = c->programs;
    c->programs = n;
    pthread_mutex_unlock(&c->lock);
}

static asyncrt_program *find_in_memory(asyncrt_cache *c, const uint8_t key1[32])
{
    enum { MAX_CANDIDATES = 16 };
    cached *candidates[MAX_CANDIDATES];
    size_t n = 0;
    pthread_mutex_lock(&c->lock);
    for (cached *p = c->programs; p && n < MAX_CANDIDATES; p = p->next)
        if (memcmp(p->key1, key1, 32) == 0) {
            p->refs++;
            candidates[n++] = p;
        }
    pthread_mutex_unlock(&c->lock);
    asyncrt_program *found = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!found && asyncrt__dep_set_valid(&candidates[i]->deps) &&
            (found = asyncrt__program_clone(candidates[i]->program)))
            found->origin = ASYNCRT_ORIGIN_MEMORY_CACHE;
        release(c, candidates[i]);
    }
    return found;
}

/* Reads and unseals one cache file; a refused one is logged, counted and,
 * if it is a damaged regular file or a stray link, deleted. */
static unsigned char *read_cache_file(asyncrt_context *ctx, const char *path, size_t *size)
{
    char why[256];
    unsigned char *data = asyncrt__cache_read_file(path, ASYNCRT_CACHE_FILE_MAX, true, size, why, sizeof why);
    if (!data && why[0]) {
        asyncrt__log(ctx, 1, "warning: refusing cache file %s: it %s", path, why);
        count(ctx->cache, C_REJECTED);
    }
    return data;
}

static void discard(asyncrt_context *ctx, const char *path, const char *why)
{
    /* Another process may be renaming a good file over this one; unlinking
     * is still safe, since rename replaces atomically. */
    asyncrt__log(ctx, 1, "warning: discarding cache file %s: %s", path, why);
    count(ctx->cache, C_REJECTED);
    unlink(path);
}

static asyncrt_program *find_on_disk(asyncrt_context *ctx, const char *dir, const uint8_t key1[32],
                                     const uint8_t *mac_key)
{
    char *mf_path = file_path(dir, key1, ".mf");
    size_t size = 0;
    unsigned char *data = mf_path ? read_cache_file(ctx, mf_path, &size) : NULL;
    asyncrt_manifest m = {0};
    char why[256];
    if (data && !asyncrt__manifest_decode(data, size, key1, mac_key, &m, why, sizeof why)) discard(ctx, mf_path, why);
    free(data);
    asyncrt_program *program = NULL;
    for (size_t s = 0; s < m.count && !program; s++) {
        if (!asyncrt__dep_set_valid(&m.sets[s])) continue;
        char *path = file_path(dir, m.sets[s].result_key, ".bin");
        data = path ? read_cache_file(ctx, path, &size) : NULL;
        if (data && asyncrt__program_decode_keyed(data, size, m.sets[s].result_key, mac_key, &program, why,
                                                 sizeof why) != ASYNCRT_SUCCESS)
            discard(ctx, path, why);
        if (program) {
            asyncrt__log(ctx, 2, "cache hit: %s", path);
            remember(ctx->cache, key1, &m.sets[s], program);
        }
        free(data);
        free(path);
        break; /* the newest valid set decides: an older one is another header version */
    }
    if (!program) asyncrt__log(ctx, 2, "cache miss: %s", mf_path ? mf_path : dir);
    asyncrt__manifest_free(&m);
    free(mf_path);
    return program;
}

asyncrt_program *asyncrt__cache_find(asyncrt_context *ctx, const uint8_t key1[32])
{
    asyncrt_cache *c = ctx->cache;
    if (!c || !ctx->memory_cache) return NULL;
    asyncrt_program *p = find_in_memory(c, key1);
    if (p) {
        count(c, C_MEMORY_HITS);
        return p;
    }
    uint8_t mac_key[32];
    bool shared;
    char *dir = usable_dir(ctx, mac_key, &shared);
    if (dir) p = find_on_disk(ctx, dir, key1, shared ? mac_key : NULL);
    free(dir);
    count(c, p ? C_DISK_HITS : C_MISSES);
    return p;
}

/* The manifest for key1 with `deps` first and up to MAX_SETS - 1 older sets
 * (a damaged or absent manifest simply starts afresh). Two processes
 * updating one manifest at once may lose one's set: a later miss adds it
 * back. */
static bool write_manifest(asyncrt_context *ctx, const char *dir, const uint8_t key1[32], const asyncrt_dep_set *deps,
                           const uint8_t *mac_key, mode_t mode)
{
    char *path = file_path(dir, key1, ".mf");
    if (!path) return false;
    size_t size = 0;
    char why[256];
    unsigned char *data = asyncrt__cache_read_file(path, ASYNCRT_CACHE_FILE_MAX, false, &size, why, sizeof why);
    asyncrt_manifest old = {0};
    if (data && !asyncrt__manifest_decode(data, size, key1, mac_key, &old, why, sizeof why))
        asyncrt__log(ctx, 1, "warning: replacing cache manifest %s: %s", path, why);
    free(data);
    asyncrt_dep_set sets[ASYNCRT_MANIFEST_MAX_SETS];
    asyncrt_manifest m = {sets, 1};
    sets[0] = *deps;
    for (size_t i = 0; i < old.count && m.count < ASYNCRT_MANIFEST_MAX_SETS; i++)
        if (memcmp(old.sets[i].result_key, deps->result_key, 32) != 0) sets[m.count++] = old.sets[i];
    data = asyncrt__manifest_encode(&m, key1, mac_key, &size);
    bool ok = data && asyncrt__cache_write_file(path, data, size, mode);
    free(data);
    asyncrt__manifest_free(&old);
    free(path);
    return ok;
}

void asyncrt__cache_store(asyncrt_context *ctx, const uint8_t key1[32], const asyncrt_dep_set *deps,
                         const asyncrt_program *program)
{
    asyncrt_cache *c = ctx->cache;
    if (!c || !ctx->memory_cache) return;
    remember(c, key1, deps, program);
    count(c, C_STORES);
    uint8_t mac_key[32];
    bool shared;
    char *dir = usable_dir(ctx, mac_key, &shared);
    if (!dir) return;
    const uint8_t *mac = shared ? mac_key : NULL;
    mode_t mode = shared ? 0660 : 0600;
    char *path = file_path(dir, program->key, ".bin");
    const char *name = path ? strrchr(path, '/') + 1 : NULL;
    size_t size = 0;
    unsigned char *data = asyncrt__program_encode_keyed(program, mac, &size);
    const char *failed = !path || !data                                   ? "out of memory"
                         : !asyncrt__cache_write_file(path, data, size, mode) ? "cannot write the entry"
                         : !write_manifest(ctx, dir, key1, deps, mac, mode)  ? "cannot write the manifest"
                                                                              : NULL;
    if (failed) {
        int err = errno;
        asyncrt__log(ctx, 1, "warning: not caching in %s: %s (%s)", dir, failed, strerror(err));
        if (err == ENOENT) { /* removed under us: check (and create) it again next time */
            pthread_mutex_lock(&c->lock);
            free(c->checked_dir);
            c->checked_dir = NULL;
            pthread_mutex_unlock(&c->lock);
        }
    } else {
        asyncrt__log(ctx, 2, "cached %s (%zu bytes, %zu dependencies)", path, size, deps->count);
        size_t temps = 0;
        size_t evicted = asyncrt__cache_evict(dir, c->max_bytes, name, &temps);
        __atomic_fetch_add(&c->counters[C_EVICTIONS], evicted, __ATOMIC_RELAXED);
        if (evicted || temps)
            asyncrt__log(ctx, 2, "cache: evicted %zu files to stay under %llu bytes, removed %zu stale temporaries",
                        evicted, (unsigned long long)c->max_bytes, temps);
    }
    free(data);
    free(path);
    free(dir);
}
