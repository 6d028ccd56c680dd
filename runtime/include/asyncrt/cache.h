/* asyncrt: the disk cache as the library sees it, and administering a cache
 * directory (asyncrt-cache is built on these calls). README, "The cache",
 * says what the cache keeps and how it is checked. */
#ifndef ASYNCRT_CACHE_PUBLIC_H
#define ASYNCRT_CACHE_PUBLIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the context's disk cache ------------------------------------------- */

/* The disk cache a context uses, as it read its settings (ASYNCRT_CACHE,
 * ASYNCRT_CACHE_DIR, XDG_CACHE_HOME, HOME, ASYNCRT_CACHE_MAX_BYTES,
 * ASYNCRT_CACHE_SHARED) or as set_cache_dir changed them. */
typedef struct asyncrt_cache_info {
    /* Set it with ASYNCRT_CACHE_INFO_INIT (or .size = sizeof(asyncrt_cache_info)): the
     * library writes only the fields this size covers (README, "ABI and versioning"). */
    size_t size;
    const char *dir;    /* the directory; NULL when there is none (ASYNCRT_CACHE=0, no HOME,
                           set_cache_dir(NULL)). Valid until the next set_cache_dir or ctx's destruction */
    bool used;          /* it passed the trust checks and is read and written */
    bool shared;        /* ASYNCRT_CACHE_SHARED=1: a team cache, sealed with its KEY */
    uint64_t max_bytes; /* the cap in force */
    bool max_malformed; /* ASYNCRT_CACHE_MAX_BYTES is set but is not a size: the default applies */
    char why[512];      /* when !used: why not (what the warning at ASYNCRT_LOG=1 says); else "" */
} asyncrt_cache_info;
#define ASYNCRT_CACHE_INFO_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_info)

/* Fills *out. To say whether the directory is used it is checked as a
 * compile's lookup checks it (created when missing, 0700; 02770 shared), so
 * `used` and `why` are what the next compile will find. A size below the
 * struct's is ASYNCRT_ERROR_INVALID_ARGUMENT, as for every sized struct.
 * Like the other calls that only report, it leaves the last error alone
 * unless it fails. Must not overlap set_cache_dir on ctx. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_cache_info(const asyncrt_context *ctx, asyncrt_cache_info *out);

#ifdef __cplusplus
}
#endif
#endif
