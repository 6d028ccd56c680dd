#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cache_codec.h"
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
    const asyncrt_diag *diag;  /* the owner's, for warnings and counters' log */
    char *dir;                 /* NULL: no disk cache */
    bool enabled;              /* ASYNCRT_CACHE=0 turns memory and disk off */
    pthread_mutex_t lock;
    cached *programs;          /* newest first */
    char *checked_dir;         /* the directory last checked, and the verdict: */
    int dir_fd;                /* it, opened and checked once (-1: not usable) */
    bool pinned;               /* dir_fd was handed in (adopt_dir): never reopened by name */
    bool shared;
    uint8_t mac_key[32];
    _Atomic uint64_t max_bytes;
    _Atomic uint64_t counters[C_COUNT]; /* relaxed: counts, no order between them */
    asyncrt_claims *claims;    /* keys being compiled right now */
};

static void count(asyncrt_cache *c, int which)
{
    atomic_fetch_add_explicit(&c->counters[which], 1, memory_order_relaxed);
}

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
    if (cfg.malformed_max)
        asyncrt__diag_log(diag, 1, "warning: ASYNCRT_CACHE_MAX_BYTES=\"%s\" is not a size (e.g. 1073741824, 512M, "
                                  "2G); using 1G", cfg.malformed_max);
    c->shared = cfg.shared;
    return c;
}

bool asyncrt__cache_set_dir(asyncrt_cache *c, const char *dir)
{
    char *copy = NULL;
    if (dir && !(copy = strdup(dir))) return false;
    free(c->dir);
    c->dir = copy;
    c->pinned = false;
    return true;
}

bool asyncrt__cache_adopt_dir(asyncrt_cache *c, const char *name, int dir_fd, bool shared, const uint8_t mac_key[32])
{
    char *dir = strdup(name), *checked = strdup(name);
    int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
    if (!dir || !checked || fd < 0) {
        free(dir), free(checked);
        if (fd >= 0) close(fd);
        return false;
    }
    pthread_mutex_lock(&c->lock);
    free(c->dir), free(c->checked_dir);
    if (c->dir_fd >= 0) close(c->dir_fd);
    c->dir = dir, c->checked_dir = checked, c->dir_fd = fd;
    c->pinned = true;
    c->shared = shared;
    memcpy(c->mac_key, mac_key, 32);
    pthread_mutex_unlock(&c->lock);
    return true;
}

const char *asyncrt__cache_dir(const asyncrt_cache *c) { return c ? c->dir : NULL; }
bool asyncrt__cache_enabled(const asyncrt_cache *c) { return c && c->enabled; }

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

void asyncrt__cache_clear(asyncrt_cache *c)
{
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

void asyncrt__cache_destroy(asyncrt_cache *c)
{
    if (!c) return;
    asyncrt_cache_stats s = ASYNCRT_CACHE_STATS_INIT;
    asyncrt__cache_stats(c, &s);
    asyncrt__diag_log(c->diag, 2, "cache: %llu memory hits, %llu disk hits, %llu misses, %llu stores, %llu evictions, "
                        "%llu rejected", (unsigned long long)s.memory_hits, (unsigned long long)s.disk_hits,
                (unsigned long long)s.misses, (unsigned long long)s.stores, (unsigned long long)s.evictions,
                (unsigned long long)s.rejected);
    asyncrt__cache_clear(c);
    pthread_mutex_destroy(&c->lock);
    if (c->dir_fd >= 0) close(c->dir_fd);
    free(c->checked_dir);
    free(c->dir);
    asyncrt__claims_destroy(c->claims);
    free(c);
}

asyncrt_claims *asyncrt__cache_claims(asyncrt_cache *c) { return c->claims; }

void asyncrt__cache_stats(const asyncrt_cache *c, asyncrt_cache_stats *out)
{
    uint64_t v[C_COUNT] = {0};
    for (int i = 0; c && i < C_COUNT; i++) v[i] = atomic_load_explicit(&c->counters[i], memory_order_relaxed);
    *out = (asyncrt_cache_stats){.size = sizeof *out, .memory_hits = v[C_MEMORY_HITS], .disk_hits = v[C_DISK_HITS],
                                 .misses = v[C_MISSES], .stores = v[C_STORES], .evictions = v[C_EVICTIONS],
                                 .rejected = v[C_REJECTED]};
}

/* <hex key><suffix>: a name in the cache directory. */
static void file_name(const uint8_t key[32], const char *suffix, char out[72])
{
    asyncrt__sha256_hex(key, out);
    strcat(out, suffix);
}

/* The cache directory, if it may be used: checked and opened once per
 * directory name (created if missing). Returns a descriptor of its own for
 * the caller to close, or -1; *name is the directory's name (for messages,
 * malloc'd) and *mac_key the shared key. */
static int usable_dir(asyncrt_cache *c, char **name, uint8_t mac_key[32], bool *shared)
{
    *name = NULL;
    if (!c || !c->dir || !c->enabled) return -1;
    pthread_mutex_lock(&c->lock);
    if (!c->pinned && (!c->checked_dir || strcmp(c->checked_dir, c->dir) != 0)) {
        free(c->checked_dir);
        if (c->dir_fd >= 0) close(c->dir_fd);
        c->dir_fd = -1;
        c->checked_dir = strdup(c->dir);
        char why[512];
        if (c->checked_dir &&
            (c->dir_fd = asyncrt__cache_open_dir(c->checked_dir, c->shared, c->mac_key, why, sizeof why)) < 0)
            asyncrt__diag_log(c->diag, 1, "warning: not caching in %s (no disk cache): %s", c->checked_dir, why);
    }
    int fd = c->dir_fd >= 0 ? fcntl(c->dir_fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (fd >= 0 && !(*name = strdup(c->checked_dir))) {
        close(fd);
        fd = -1;
    }
    memcpy(mac_key, c->mac_key, 32);
    *shared = c->shared;
    pthread_mutex_unlock(&c->lock);
    return fd;
}

/* Forgets the directory's check: the next use checks (and creates) it again. */
static void forget_dir(asyncrt_cache *c)
{
    pthread_mutex_lock(&c->lock);
    if (c->pinned) { /* the one directory handed in, or none */
        pthread_mutex_unlock(&c->lock);
        return;
    }
    free(c->checked_dir);
    c->checked_dir = NULL;
    if (c->dir_fd >= 0) close(c->dir_fd);
    c->dir_fd = -1;
    pthread_mutex_unlock(&c->lock);
}

bool asyncrt__cache_dir_usable(asyncrt_cache *c)
{
    bool shared;
    char *dir;
    int fd = asyncrt__cache_dir_fd(c, &dir, &shared);
    if (fd >= 0) close(fd);
    free(dir);
    return fd >= 0;
}

int asyncrt__cache_dir_fd(asyncrt_cache *c, char **name, bool *shared)
{
    uint8_t mac_key[32];
    return usable_dir(c, name, mac_key, shared);
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

/* Reads one cache file; a refused one is logged and counted. */
static unsigned char *read_cache_file(asyncrt_cache *c, int dir_fd, const char *dir, const char *name,
                                      size_t *size)
{
    char why[256];
    unsigned char *data = asyncrt__cache_read_file(dir_fd, name, ASYNCRT_CACHE_FILE_MAX, true, size, why,
                                                  sizeof why);
    if (!data && why[0]) {
        asyncrt__diag_log(c->diag, 1, "warning: refusing cache file %s/%s: it %s", dir, name, why);
        count(c, C_REJECTED);
    }
    return data;
}

/* A damaged file is logged, counted and deleted. */
static void discard(asyncrt_cache *c, int dir_fd, const char *dir, const char *name, const char *why)
{
    /* Another process may be renaming a good file over this one; unlinking
     * is still safe, since rename replaces atomically. */
    asyncrt__diag_log(c->diag, 1, "warning: discarding cache file %s/%s: %s", dir, name, why);
    count(c, C_REJECTED);
    unlinkat(dir_fd, name, 0);
}

static asyncrt_program *find_on_disk(asyncrt_cache *c, int dir_fd, const char *dir, const uint8_t key1[32],
                                     const uint8_t *mac_key)
{
    char mf_name[72], name[72];
    file_name(key1, ".mf", mf_name);
    size_t size = 0;
    unsigned char *data = read_cache_file(c, dir_fd, dir, mf_name, &size);
    asyncrt_manifest m = {0};
    char why[256];
    if (data && !asyncrt__manifest_decode(data, size, key1, mac_key, &m, why, sizeof why))
        discard(c, dir_fd, dir, mf_name, why);
    free(data);
    asyncrt_program *program = NULL;
    for (size_t s = 0; s < m.count && !program; s++) {
        if (!asyncrt__dep_set_valid(&m.sets[s])) continue;
        file_name(m.sets[s].result_key, ".bin", name);
        data = read_cache_file(c, dir_fd, dir, name, &size);
        if (data && asyncrt__program_decode_keyed(data, size, m.sets[s].result_key, mac_key, &program, why,
                                                 sizeof why) != ASYNCRT_SUCCESS)
            discard(c, dir_fd, dir, name, why);
        if (program) {
            asyncrt__diag_log(c->diag, 2, "cache hit: %s/%s", dir, name);
            remember(c, key1, &m.sets[s], program);
        }
        free(data);
        break; /* the newest valid set decides: an older one is another header version */
    }
    if (!program) asyncrt__diag_log(c->diag, 2, "cache miss: %s/%s", dir, mf_name);
    asyncrt__manifest_free(&m);
    return program;
}

asyncrt_program *asyncrt__cache_find(asyncrt_cache *c, const uint8_t key1[32])
{
    if (!c || !c->enabled) return NULL;
    asyncrt_program *p = find_in_memory(c, key1);
    if (p) {
        count(c, C_MEMORY_HITS);
        return p;
    }
    uint8_t mac_key[32];
    bool shared;
    char *dir;
    int fd = usable_dir(c, &dir, mac_key, &shared);
    if (fd >= 0) p = find_on_disk(c, fd, dir, key1, shared ? mac_key : NULL);
    if (fd >= 0) close(fd);
    free(dir);
    count(c, p ? C_DISK_HITS : C_MISSES);
    return p;
}

/* The manifest for key1 with `deps` first and up to MAX_SETS - 1 older sets
 * (a damaged or absent manifest simply starts afresh). Two processes
 * updating one manifest at once may lose one's set: a later miss adds it
 * back. */
static bool write_manifest(asyncrt_cache *c, int dir_fd, const char *dir, const uint8_t key1[32],
                           const asyncrt_dep_set *deps, const uint8_t *mac_key, mode_t mode)
{
    char name[72];
    file_name(key1, ".mf", name);
    size_t size = 0;
    char why[256];
    unsigned char *data = asyncrt__cache_read_file(dir_fd, name, ASYNCRT_CACHE_FILE_MAX, false, &size, why,
                                                  sizeof why);
    asyncrt_manifest old = {0};
    if (data && !asyncrt__manifest_decode(data, size, key1, mac_key, &old, why, sizeof why))
        asyncrt__diag_log(c->diag, 1, "warning: replacing cache manifest %s/%s: %s", dir, name, why);
    free(data);
    asyncrt_dep_set sets[ASYNCRT_MANIFEST_MAX_SETS];
    asyncrt_manifest m = {sets, 1};
    sets[0] = *deps;
    for (size_t i = 0; i < old.count && m.count < ASYNCRT_MANIFEST_MAX_SETS; i++)
        if (memcmp(old.sets[i].result_key, deps->result_key, 32) != 0) sets[m.count++] = old.sets[i];
    data = asyncrt__manifest_encode(&m, key1, mac_key, &size);
    bool ok = data && asyncrt__cache_write_file(dir_fd, name, data, size, mode);
    free(data);
    asyncrt__manifest_free(&old);
    return ok;
}

/* Trims the directory to the cap after a store. A cap smaller than the entry
 * just stored (with its manifest) could only ever empty the cache: it is
 * refused with a warning, and the default applies from then on. */
static void trim(asyncrt_cache *c, int dir_fd, const char *dir, const char *stored)
{
    uint64_t max = atomic_load_explicit(&c->max_bytes, memory_order_relaxed);
    asyncrt_cache_eviction r = asyncrt__cache_evict_at(dir_fd, max, stored);
    if (r.refused_below && max != ASYNCRT_CACHE_DEFAULT_MAX_BYTES &&
        atomic_compare_exchange_strong_explicit(&c->max_bytes, &max, ASYNCRT_CACHE_DEFAULT_MAX_BYTES,
                                                memory_order_relaxed, memory_order_relaxed)) {
        asyncrt__diag_log(c->diag, 1, "warning: the cache cap ASYNCRT_CACHE_MAX_BYTES (%llu bytes) is smaller than one "
                            "entry with its manifest (%llu bytes) in %s: refused, using %llu",
                    (unsigned long long)max, (unsigned long long)r.refused_below, dir,
                    (unsigned long long)ASYNCRT_CACHE_DEFAULT_MAX_BYTES);
        r = asyncrt__cache_evict_at(dir_fd, ASYNCRT_CACHE_DEFAULT_MAX_BYTES, stored);
    }
    atomic_fetch_add_explicit(&c->counters[C_EVICTIONS], r.evicted, memory_order_relaxed);
    if (r.evicted || r.temps)
        asyncrt__diag_log(c->diag, 2, "cache: evicted %zu files to stay under %llu bytes, removed %zu stale temporaries",
                    r.evicted, (unsigned long long)atomic_load_explicit(&c->max_bytes, memory_order_relaxed), r.temps);
}

void asyncrt__cache_store(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                         const asyncrt_program *program)
{
    if (!c || !c->enabled) return;
    remember(c, key1, deps, program);
    count(c, C_STORES);
    uint8_t mac_key[32];
    bool shared;
    char *dir;
    int fd = usable_dir(c, &dir, mac_key, &shared);
    if (fd < 0) return;
    const uint8_t *mac = shared ? mac_key : NULL;
    mode_t mode = shared ? 0660 : 0600;
    char name[72];
    file_name(program->key, ".bin", name);
    size_t size = 0;
    unsigned char *data = asyncrt__program_encode_keyed(program, mac, &size);
    const char *failed = !data                                                 ? "out of memory"
                         : !asyncrt__cache_write_file(fd, name, data, size, mode) ? "cannot write the entry"
                         : !write_manifest(c, fd, dir, key1, deps, mac, mode)   ? "cannot write the manifest"
                                                                                 : NULL;
    if (failed) {
        int err = errno;
        asyncrt__diag_log(c->diag, 1, "warning: not caching in %s: %s (%s)", dir, failed, strerror(err));
        if (err == ENOENT) forget_dir(c); /* removed under us */
    } else {
        asyncrt__diag_log(c->diag, 2, "cached %s/%s (%zu bytes, %zu dependencies)", dir, name, size, deps->count);
        trim(c, fd, dir, name);
    }
    free(data);
    free(dir);
    close(fd);
}

/* ---- side files: small notes kept beside the entries --------------------- */

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
    int fd = strchr(name, '/') ? -1 : usable_dir(c, &dir, mac_key, &shared);
    if (fd < 0) return NULL;
    size_t size = 0, text_size = 0;
    unsigned char *data = asyncrt__cache_read_file(fd, name, SIDE_MAX_BYTES, false, &size, why, sizeof why);
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
    int fd = strchr(name, '/') ? -1 : usable_dir(c, &dir, mac_key, &shared);
    if (fd < 0) return false;
    side_key(name, key);
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put(&w, text, strlen(text));
    size_t size = 0;
    unsigned char *data = asyncrt__seal_end(&w, SIDE_MAGIC, SIDE_FORMAT, key, shared ? mac_key : NULL, &size);
    bool ok = data && asyncrt__cache_write_file(fd, name, data, size, shared ? 0660 : 0600);
    if (!ok) asyncrt__diag_log(c->diag, 1, "warning: cannot write cache side file %s/%s: %s", dir, name, strerror(errno));
    free(data);
    free(dir);
    close(fd);
    return ok;
}
