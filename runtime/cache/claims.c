/* Single flight per cache key (claims.h). */
#include "claims.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct claim {
    uint8_t key[32];
    struct claim *next;
} claim;

struct asyncrt_claims {
    pthread_mutex_t lock;
    pthread_cond_t done;  /* signalled when a claim goes */
    claim *held;
};

asyncrt_claims *asyncrt__claims_create(void)
{
    asyncrt_claims *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    if (pthread_cond_init(&c->done, NULL) != 0) {
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
    return c;
}

void asyncrt__claims_destroy(asyncrt_claims *c)
{
    if (!c) return;
    while (c->held) {
        claim *next = c->held->next;
        free(c->held);
        c->held = next;
    }
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Under c->lock. */
static claim **find(asyncrt_claims *c, const uint8_t key[32])
{
    claim **at = &c->held;
    while (*at && memcmp((*at)->key, key, 32) != 0) at = &(*at)->next;
    return at;
}

void asyncrt__claims_enter(asyncrt_claims *c, const uint8_t key[32])
{
    claim *mine = malloc(sizeof *mine);
    pthread_mutex_lock(&c->lock);
    while (*find(c, key)) pthread_cond_wait(&c->done, &c->lock);
    if (mine) {
        memcpy(mine->key, key, 32);
        mine->next = c->held;
        c->held = mine;
    }
    pthread_mutex_unlock(&c->lock);
}

void asyncrt__claims_leave(asyncrt_claims *c, const uint8_t key[32])
{
    pthread_mutex_lock(&c->lock);
    claim **at = find(c, key), *node = *at;
    if (node) *at = node->next;
    pthread_cond_broadcast(&c->done);
    pthread_mutex_unlock(&c->lock);
    free(node);
}
