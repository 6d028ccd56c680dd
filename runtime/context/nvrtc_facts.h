/* NVRTC's facts, memoised beside the cache (nvrtc_facts.c). */
#ifndef ASYNCRT_NVRTC_FACTS_H
#define ASYNCRT_NVRTC_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "nvrtc_loader.h"

/* What arch selection needs from NVRTC: its version and supported archs.
 * Served without opening NVRTC when a memo for the NVRTC the search order
 * finds (same path, size and mtime: asyncrt__nvrtc_identity_get) lies in
 * ctx's cache directory (nvrtc-<hash>.facts, written there through the
 * cache's checked side-file helpers the first time NVRTC is opened; ctx may
 * be NULL: no memo). So with a cache key over the identity, a cache hit
 * never loads NVRTC. Thread-safe; process-wide once known. NO_NVRTC (msg
 * says where it looked) when NVRTC must be opened and cannot be. */
typedef struct asyncrt_nvrtc_facts {
    int version;       /* major*1000 + minor*10 */
    int archs[64];     /* nvrtcGetSupportedArchs, e.g. 75, 80, ..., 120 */
    size_t arch_count;
    bool from_memo;    /* read from the cache directory, NVRTC not opened for it */
} asyncrt_nvrtc_facts;
typedef struct asyncrt_context asyncrt_context;
asyncrt_status asyncrt__nvrtc_facts_get(asyncrt_context *ctx, asyncrt_nvrtc_facts *out, char *msg,
                                       size_t msg_size);

/* Parses a memo's text (NUL-terminated): false unless it is well formed and
 * repeats id exactly (so a hash collision or a stale memo never passes). */
bool asyncrt__nvrtc_memo_parse(const char *text, const asyncrt_nvrtc_identity *id, asyncrt_nvrtc_facts *out);

#endif
