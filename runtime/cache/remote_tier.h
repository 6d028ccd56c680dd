/* The cache's remote tier, over the remote client (remote/remote.h; docs/cache.md,
 * "The remote cache"), behind the cache's own functions (cache.h).
 *
 * After the memory and the disk missed, a lookup asks the remote. A value is
 * used only when its HMAC, bounds and both inner seals check (the manifest's
 * dependency set under key1, the entry under the set's result key) and
 * every file of its set holds, on this machine, the content recorded
 * (dep_fit.h); the facade then installs it (memory and disk), so later
 * lookups are ordinary memory or disk hits. Anything else is ignored and
 * counted, and left in place.
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

/* What a fetch found: an entry that fits (FOUND: *out and its set *set, for
 * the facade to install), a verified value stale for this machine's headers,
 * a refused one, none, or a server that failed (err says why). A value
 * refused once in a lookup is not counted or logged again by the lease's
 * re-checks (quiet). */
typedef enum {
    ASYNCRT_TIER_NOTHING, ASYNCRT_TIER_FOUND, ASYNCRT_TIER_STALE, ASYNCRT_TIER_BAD, ASYNCRT_TIER_ERROR
} asyncrt_tier_got;
asyncrt_tier_got asyncrt__remote_tier_fetch(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32],
                                            bool quiet, asyncrt_cache_entry *out, asyncrt_dep_set *set,
                                            char err[256]);

/* After a local miss: fetch, counted as a hit or a miss. */
bool asyncrt__remote_tier_find(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32],
                               asyncrt_cache_entry *out, asyncrt_dep_set *set);
/* Before compiling key1: the lease (*leased), or another process's result
 * after waiting for it (true, *out and *set), or false after waiting in vain. */
bool asyncrt__remote_tier_claim(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32], bool *leased,
                                asyncrt_cache_entry *out, asyncrt_dep_set *set);
/* After a compile stored locally: the same to the remote (unless
 * read-only); push: the same with its answer (remote.h's put). */
void asyncrt__remote_tier_store(const asyncrt_diag *diag, asyncrt_remote *r, const uint8_t key1[32],
                                const asyncrt_dep_set *deps, const unsigned char *payload, size_t size);
bool asyncrt__remote_tier_push(asyncrt_remote *r, const uint8_t key1[32], const asyncrt_dep_set *deps,
                               const unsigned char *payload, size_t size, bool *kept, char *why, size_t why_size);

#endif
