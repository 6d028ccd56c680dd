/* How the cache reads its settings: the one interpretation of ASYNCRT_CACHE,
 * ASYNCRT_CACHE_DIR (XDG_CACHE_HOME, HOME), ASYNCRT_CACHE_MAX_BYTES and
 * ASYNCRT_CACHE_SHARED, shared by asyncrt__cache_create and asyncrt-cache, so
 * the tool sees the directory, cap and mode the library would use. */
#ifndef ASYNCRT_CACHE_CONFIG_H
#define ASYNCRT_CACHE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "settings.h"

/* ASYNCRT_CACHE_MAX_BYTES's default. */
#define ASYNCRT_CACHE_DEFAULT_MAX_BYTES ((uint64_t)1 << 30)

typedef struct asyncrt_cache_config {
    bool enabled;              /* ASYNCRT_CACHE is not "0" */
    char *dir;                 /* malloc'd; NULL: no disk cache (off, no HOME, or out of memory) */
    uint64_t max_bytes;        /* ASYNCRT_CACHE_MAX_BYTES, else the default */
    const char *malformed_max; /* ASYNCRT_CACHE_MAX_BYTES when it is not a size (the default applies); else NULL */
    bool shared;               /* ASYNCRT_CACHE_SHARED=1 */
} asyncrt_cache_config;

/* The directory: $ASYNCRT_CACHE_DIR, else $XDG_CACHE_HOME/asyncrt, else
 * ~/.cache/asyncrt (none when caching is off). malformed_max points into env. */
void asyncrt__cache_config_read(const asyncrt_settings *env, asyncrt_cache_config *out);
void asyncrt__cache_config_free(asyncrt_cache_config *cfg); /* its dir */

/* Parses "1048576", "512K", "64M", "1G" (binary units). False if malformed. */
bool asyncrt__cache_parse_size(const char *text, uint64_t *out);

#endif
