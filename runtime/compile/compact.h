/* Compact images (issue 37), the one step a compile calls: from NVRTC's
 * CUBIN of a compile, the PTX of the same nvrtcProgram (nvrtcGetPTX works
 * after an sm_XY compile too) and NVRTC's options, an image without the
 * library globals nothing uses, kept only where it is proven to be NVRTC's
 * program (image_equal.h) and is smaller. Otherwise NVRTC's image stays,
 * and `why` says why (for -v). The steps: ptx_prune.h, ptx_mirror.h,
 * ptx_assemble.h, image_equal.h.
 *
 * Meant to run once per compile whose image is cached (the cache stores the
 * compact image in place of NVRTC's), never at load. It costs an assembly
 * (10-150 ms for the parity kernels, seconds for the largest PTX), so a
 * compile with nothing to prune skips it. */
#ifndef ASYNCRT_COMPACT_H
#define ASYNCRT_COMPACT_H

#include <stddef.h>

#include "ptx_assemble.h"

typedef struct asyncrt_compact {
    void *image; /* the compact CUBIN (malloc'd); NULL: keep NVRTC's */
    size_t size;
    char why[640]; /* image NULL: why NVRTC's stays; else what was removed */
    size_t removed, placeholders;
    double prune_ms, assemble_ms, check_ms;
} asyncrt_compact;

/* Fills *out (always; free with asyncrt__compact_free). */
void asyncrt__compact(const asyncrt_ptxcompiler *c, const void *cubin, size_t cubin_size, const char *ptx,
                      size_t ptx_size, const char *const *options, size_t option_count, asyncrt_compact *out);
/* NULL is fine. */
void asyncrt__compact_free(asyncrt_compact *out);

#endif
