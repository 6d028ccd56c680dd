/* What tests (and, until issue 35 moves them, asyncrt-run and asyncrt-bundle)
 * may use of the cache layer, beside the public API: what they need to read,
 * check, write and trim a cache directory exactly as the library does
 * (asyncrt-cache does it through asyncrt/cache.h). Internal, not
 * libasyncrt's ABI: it is linked from asyncrt_private and may change with
 * the library (the file formats carry their own versions).
 *   cache_config.h: the directory, cap and shared mode the library would use
 *     for a settings snapshot (asyncrt__cache_config_read), and the cap's
 *     size syntax (asyncrt__cache_parse_size).
 *   cache_store.h: the directory as a listing; eviction; clearing.
 *   cache_manifest.h: manifests and dependency sets (decode, encode, check).
 *   cache.h: the entry's sealed form; the remote tier's push, pull and tally,
 *     on the context's cache (context_internal.h's
 *     asyncrt__context_cache). */
#ifndef ASYNCRT_CACHE_INTERNAL_H
#define ASYNCRT_CACHE_INTERNAL_H

#include "cache.h"
#include "cache_config.h"
#include "cache_manifest.h"
#include "cache_store.h"

#endif
