/* The remote cache's counters (remote_cache.c), and their tally in a cache
 * directory: the side file remote-stats, the sum over the processes that
 * used it, which asyncrt-cache stats shows. */
#ifndef ASYNCRT_REMOTE_TALLY_H
#define ASYNCRT_REMOTE_TALLY_H

#include <stdint.h>

#include "cache.h"

/* ASYNCRT_RC_KEPT is the tally's only: the public stats struct's size is ABI. */
enum {
    ASYNCRT_RC_HITS, ASYNCRT_RC_MISSES, ASYNCRT_RC_ERRORS, ASYNCRT_RC_REJECTED, ASYNCRT_RC_STORES,
    ASYNCRT_RC_LEASE_WAITS, ASYNCRT_RC_BYTES_READ, ASYNCRT_RC_BYTES_WRITTEN, ASYNCRT_RC_TIME_US, ASYNCRT_RC_KEPT,
    ASYNCRT_RC_COUNT
};

/* Adds counts to cache's tally (nothing when all are 0). Read, add, write:
 * two processes ending at once may lose one's counts (the cache directory
 * has no locks); they are a guide, not a ledger. */
void asyncrt__remote_tally_add(asyncrt_cache *cache, const uint64_t counts[ASYNCRT_RC_COUNT]);

#endif
