/* The disk tier's view of one key1, for explaining a miss (compile/explain.c). */
#ifndef ASYNCRT_CACHE_EXPLAIN_H
#define ASYNCRT_CACHE_EXPLAIN_H

#include <stdint.h>

#include "cache.h"
#include "key_record.h"

typedef enum asyncrt_key1_state {
    ASYNCRT_KEY1_NO_DIR,      /* no usable cache directory */
    ASYNCRT_KEY1_NO_MANIFEST, /* nothing was stored under key1: another input differs */
    ASYNCRT_KEY1_DAMAGED,     /* a manifest that fails its checks (a lookup discards it) */
    ASYNCRT_KEY1_STALE,       /* stored, but no dependency set holds: *stale says what changed */
    ASYNCRT_KEY1_ENTRY_GONE,  /* a set holds; its entry is gone or damaged (evicted, cleared) */
    ASYNCRT_KEY1_HIT,         /* a lookup would hit */
} asyncrt_key1_state;

/* Reads key1's manifest and entry in c's directory with a lookup's checks,
 * changing nothing. On STALE, *stale (free with asyncrt__key_diff_free) is
 * the newest set's first difference: what "cwd", or "dependency" with the
 * file's path and its recorded and current digests (now NULL: gone). */
asyncrt_key1_state asyncrt__cache_key1_state(asyncrt_cache *c, const uint8_t key1[32], asyncrt_key_diff *stale);

/* The remote's answer for key1 (fetched and verified as a lookup does, its
 * refusals quiet), as one line into out: a hit, stale here, refused, none,
 * or why it could not be asked. */
void asyncrt__cache_remote_state(asyncrt_cache *c, const uint8_t key1[32], char *out, size_t size);

#endif
