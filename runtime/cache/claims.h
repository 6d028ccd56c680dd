/* Single flight per cache key within one process (claims.c): a thread that
 * is about to compile key K claims it; another thread that misses K meanwhile
 * waits for the claim to go, then finds the first one's result in the cache
 * instead of running NVRTC again. Owned by the cache (asyncrt__cache_claims). */
#ifndef ASYNCRT_CLAIMS_H
#define ASYNCRT_CLAIMS_H

#include <stdint.h>

typedef struct asyncrt_claims asyncrt_claims;

asyncrt_claims *asyncrt__claims_create(void); /* NULL on OOM */
void asyncrt__claims_destroy(asyncrt_claims *claims);

/* Waits while another thread holds key, then holds it. Every enter needs a
 * leave. Out of memory: no claim, so at worst a duplicate compile. */
void asyncrt__claims_enter(asyncrt_claims *claims, const uint8_t key[32]);
void asyncrt__claims_leave(asyncrt_claims *claims, const uint8_t key[32]);

#endif
