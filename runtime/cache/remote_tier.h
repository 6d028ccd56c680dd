/* The cache's remote tier, over the remote client (remote/remote.h; README,
 * "The remote cache"), behind the cache's own functions (cache.h).
 *
 * After the memory and the disk missed, a lookup asks the remote. A value is
 * used only when its HMAC, bounds and both inner seals check (the manifest's
 * dependency set under key1, the entry under the set's result key) and
 * every file of its set holds, on this machine, the content recorded
 * (dep_fit.h); it is then installed through the cache's own store (memory
 * and disk), so later lookups are ordinary memory or disk hits. Anything
 * else is ignored and counted, and left in place.
 *
 * Fleet single flight: before compiling a key every process missed, a
 * process takes the lease; the others poll for the value until it comes, the
 * lease goes (they try to take it), or lease-wait passes (they compile
 * themselves). Each function does nothing with r NULL or refused. */
#ifndef ASYNCRT_REMOTE_TIER_H
#define ASYNCRT_REMOTE_TIER_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "cache_manifest.h"
#include "remote.h"

/* After a local miss: the entry the remote holds for key1, verified and
 * installed in c (origin ASYNCRT_ORIGIN_REMOTE_CACHE): true with *out. */
bool asyncrt__remote_tier_find(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32], asyncrt_cache_entry *out);
/* Before compiling key1: the lease (*leased), or another process's result
 * after waiting for it (true with *out), or false after waiting in vain. */
bool asyncrt__remote_tier_claim(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32], bool *leased,
                                asyncrt_cache_entry *out);
/* After a compile stored locally: the same to the remote (unless
 * read-only); push: the same with its answer (remote.h's put). */
void asyncrt__remote_tier_store(asyncrt_cache *c, asyncrt_remote *r, const uint8_t key1[32],
                                const asyncrt_dep_set *deps, const unsigned char *payload, size_t size);
bool asyncrt__remote_tier_push(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_dep_set *deps,
                               const unsigned char *payload, size_t size, bool *kept, char *why, size_t why_size);
/* Every value of every shard installed in c (counts in *installed,
 * *refused, *stale); false when a shard failed. */
bool asyncrt__remote_tier_pull(asyncrt_cache *c, asyncrt_remote *r, size_t *installed, size_t *refused,
                               size_t *stale, char *why, size_t why_size);

#endif
