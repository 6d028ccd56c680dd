/* The remote cache's counters (remote/remote.h) tallied in a cache
 * directory: the side file remote-stats, the sum over the processes that
 * used it, which asyncrt-cache stats shows. */
#ifndef ASYNCRT_REMOTE_TALLY_H
#define ASYNCRT_REMOTE_TALLY_H

#include <stdint.h>

#include "cache.h"
#include "remote.h"

/* Adds counts to cache's tally (nothing when all are 0). Read, add, write:
 * two processes ending at once may lose one's counts (the cache directory
 * has no locks); they are a guide, not a ledger. */
void asyncrt__remote_tally_add(asyncrt_cache *cache, const uint64_t counts[ASYNCRT_RC_COUNT]);

/* The tally (zeros when none), and (kept, when not NULL) the stores that
 * found a value there already. */
void asyncrt__remote_tally_read(asyncrt_cache *cache, asyncrt_remote_cache_stats *out, uint64_t *kept);

#endif
