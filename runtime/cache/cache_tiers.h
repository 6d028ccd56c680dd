/* The cache's insides, shared by the files of its tiers; other layers see
 * cache.h only. One struct, as SQLite's btreeInt.h is shared by the btree's
 * files: cache.c (the facade) owns it and asks memory.c, then disk.c, then
 * remote_tier.c; entry.c seals what they keep (cache.h's entry form);
 * side.c writes notes beside the entries.
 *
 * Locks: `lock` guards the memory list and the directory check; it is never
 * held while validating dependencies (stat, hashing) or reading and writing
 * files. Counters are atomics. */
#ifndef ASYNCRT_CACHE_TIERS_H
#define ASYNCRT_CACHE_TIERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "remote.h"

enum { C_MEMORY_HITS, C_DISK_HITS, C_MISSES, C_STORES, C_EVICTIONS, C_REJECTED, C_IMAGE_LOADS, C_MODULE_LOADS, C_COUNT };

typedef struct asyncrt_memory_entry asyncrt_memory_entry; /* memory.c */

struct asyncrt_cache {
    const asyncrt_diag *diag;      /* the owner's, for warnings and counters' log */
    bool enabled;                  /* ASYNCRT_CACHE=0 turns every tier off */
    pthread_mutex_t lock;
    asyncrt_memory_entry *entries; /* the memory tier, newest first */
    char *dir;                     /* the disk tier's directory; NULL: none */
    char *checked_dir;             /* the directory last checked, and the verdict: */
    int dir_fd;                    /* it, opened and checked once (-1: not usable) */
    char dir_why[512];             /* why not, when dir_fd is -1 after a check */
    bool pinned;                   /* dir_fd was handed in (adopt_dir): never reopened by name */
    bool shared;
    uint8_t mac_key[32];
    _Atomic uint64_t max_bytes;
    bool max_malformed;            /* ASYNCRT_CACHE_MAX_BYTES was not a size: the default applies */
    _Atomic uint64_t counters[C_COUNT]; /* relaxed: counts, no order between them */
    asyncrt_claims *claims;        /* keys being compiled right now, in this process */
    asyncrt_remote *remote;        /* the remote tier's client, NULL when none (remote_tier.h) */
};

static inline void asyncrt__cache_count(asyncrt_cache *c, int which, uint64_t n)
{
    atomic_fetch_add_explicit(&c->counters[which], n, memory_order_relaxed);
}

/* memory.c: the entry remembered for key1 whose set still holds, copied;
 * remember copies deps and payload (nothing when out of memory); forget drops
 * key1's entry of result key key2; clear is asyncrt__cache_clear. */
bool asyncrt__memory_find(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_entry *out);
void asyncrt__memory_remember(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                              const unsigned char *payload, size_t size);
void asyncrt__memory_forget(asyncrt_cache *c, const uint8_t key1[32], const uint8_t key2[32]);

/* disk.c. open: the directory, if it may be used, checked and opened once
 * per name (created if missing): a descriptor of the caller's own, -1 when
 * none; *name (malloc'd, for messages), the shared key and mode. find: the
 * newest set of key1's manifest whose files hold, and its entry (the set
 * into *set, which the caller frees); a refused or damaged file is a miss,
 * logged and counted. store: the entry and the manifest (false: logged, not
 * cached). discard: key2's entry removed, as a damaged one is. */
int asyncrt__disk_open(asyncrt_cache *c, char **name, uint8_t mac_key[32], bool *shared);
bool asyncrt__disk_find(asyncrt_cache *c, const uint8_t key1[32], asyncrt_dep_set *set, asyncrt_cache_entry *out);
bool asyncrt__disk_store(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                         const unsigned char *payload, size_t size);
void asyncrt__disk_discard(asyncrt_cache *c, const uint8_t key2[32], const char *why);
/* The directory handling's own state, freed (destroy). */
void asyncrt__disk_close(asyncrt_cache *c);
/* cache_store.c, after a store: the directory trimmed to the cap, evictions
 * counted; a cap smaller than the entry just stored is refused (warned),
 * and the default applies from then on. */
size_t asyncrt__cache_trim(asyncrt_cache *c, int dir_fd, const char *dir, const char *stored);

#endif
