/* The memory tier (cache_tiers.h): this context's entries, each with the
 * dependency set it was compiled against. */
#include <stdlib.h>
#include <string.h>

#include "cache_tiers.h"
#include "codec.h"

/* One remembered entry. Immutable once listed; refs keeps it alive while a
 * lookup validates it outside the lock. */
struct asyncrt_memory_entry {
    uint8_t key1[32];
    asyncrt_dep_set deps;
    unsigned char *payload;
    size_t size;
    unsigned refs;            /* the list's own + lookups in flight; under the lock */
    bool listed;
    struct asyncrt_memory_entry *next;
};
typedef asyncrt_memory_entry node;

static void release(asyncrt_cache *c, node *n)
{
    bool last;
    pthread_mutex_lock(&c->lock);
    last = --n->refs == 0;
    pthread_mutex_unlock(&c->lock);
    if (!last) return;
    asyncrt__dep_set_free(&n->deps);
    free(n->payload);
    free(n);
}

void asyncrt__cache_clear(asyncrt_cache *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    node *list = c->entries;
    c->entries = NULL;
    for (node *n = list; n; n = n->next) n->listed = false;
    pthread_mutex_unlock(&c->lock);
    while (list) {
        node *next = list->next;
        release(c, list);
        list = next;
    }
}

void asyncrt__memory_remember(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                              const unsigned char *payload, size_t size)
{
    node *n = calloc(1, sizeof *n);
    if (!n) return;
    n->payload = (unsigned char *)asyncrt__dup_bytes(payload, size);
    n->size = size;
    if (!n->payload || !asyncrt__dep_set_copy(&n->deps, deps)) {
        free(n->payload);
        free(n);
        return;
    }
    memcpy(n->key1, key1, 32);
    n->refs = 1;
    n->listed = true;
    pthread_mutex_lock(&c->lock);
    n->next = c->entries;
    c->entries = n;
    pthread_mutex_unlock(&c->lock);
}

bool asyncrt__memory_find(asyncrt_cache *c, const uint8_t key1[32], asyncrt_cache_entry *out)
{
    enum { MAX_CANDIDATES = 16 };
    node *candidates[MAX_CANDIDATES];
    size_t n = 0;
    pthread_mutex_lock(&c->lock);
    for (node *p = c->entries; p && n < MAX_CANDIDATES; p = p->next)
        if (memcmp(p->key1, key1, 32) == 0) {
            p->refs++;
            candidates[n++] = p;
        }
    pthread_mutex_unlock(&c->lock);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        node *e = candidates[i];
        if (!found && asyncrt__dep_set_valid(&e->deps) &&
            (out->payload = (unsigned char *)asyncrt__dup_bytes(e->payload, e->size))) {
            memcpy(out->key, e->deps.result_key, 32);
            out->size = e->size;
            out->origin = ASYNCRT_ORIGIN_MEMORY_CACHE;
            found = true;
        }
        release(c, e);
    }
    return found;
}

void asyncrt__memory_forget(asyncrt_cache *c, const uint8_t key1[32], const uint8_t key2[32])
{
    pthread_mutex_lock(&c->lock);
    node *gone = NULL;
    for (node **at = &c->entries; *at; at = &(*at)->next)
        if (memcmp((*at)->key1, key1, 32) == 0 && memcmp((*at)->deps.result_key, key2, 32) == 0) {
            gone = *at;
            *at = gone->next;
            gone->listed = false;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    if (gone) release(c, gone);
}
