/* compact.h: prune, mirror, assemble, prove. */
#include "compact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h" /* asyncrt__now_ms */
#include "image_equal.h"
#include "ptx_mirror.h"
#include "ptx_prune.h"

void asyncrt__compact(const asyncrt_ptxcompiler *c, const void *cubin, size_t cubin_size, const char *ptx,
                      size_t ptx_size, const char *const *options, size_t option_count, asyncrt_compact *out)
{
    memset(out, 0, sizeof *out);
    char why[512] = "";
    asyncrt_ptx_prune pruned;
    double start = asyncrt__now_ms();
    bool ok = asyncrt__ptx_prune(ptx, ptx_size, &pruned, why, sizeof why);
    out->prune_ms = asyncrt__now_ms() - start;
    if (!ok) {
        snprintf(out->why, sizeof out->why, "NVRTC's image: the prune did not understand the PTX: %s", why);
        return;
    }
    out->removed = pruned.removed;
    out->placeholders = pruned.placeholders;
    if (pruned.removed + pruned.placeholders == 0) { /* nothing to gain from an assembly */
        snprintf(out->why, sizeof out->why, "NVRTC's image: no unused library global to remove");
        asyncrt__ptx_prune_free(&pruned);
        return;
    }
    char **mirrored = NULL, made_by[64] = "unknown";
    size_t count = 0;
    void *image = NULL;
    size_t size = 0;
    asyncrt_lib_version v;
    if (!asyncrt__ptx_made_by(ptx, ptx_size, &v) || !asyncrt__ptxcompiler_matches(c, &v)) {
        if (asyncrt__ptx_made_by(ptx, ptx_size, &v)) asyncrt__lib_version_format(&v, made_by, sizeof made_by);
        snprintf(out->why, sizeof out->why, "NVRTC's image: its PTX is NVRTC %s's, nvPTXCompiler is %s", made_by,
                 asyncrt__ptxcompiler_version(c));
    } else if (!asyncrt__ptx_mirror_options(options, option_count, &mirrored, &count, why, sizeof why)) {
        snprintf(out->why, sizeof out->why, "NVRTC's image: %s", why);
    } else {
        start = asyncrt__now_ms();
        ok = asyncrt__ptx_assemble(c, pruned.ptx, pruned.size, (const char *const *)mirrored, count, &image, &size, why,
                                   sizeof why);
        out->assemble_ms = asyncrt__now_ms() - start;
        start = asyncrt__now_ms();
        if (!ok) {
            snprintf(out->why, sizeof out->why, "NVRTC's image: nvPTXCompiler %s: %s", asyncrt__ptxcompiler_version(c),
                     why);
        } else if (!asyncrt__image_equal(cubin, cubin_size, image, size, (const char *const *)pruned.unreferenced,
                                         (const char *const *)pruned.placeholders_of, pruned.unreferenced_count, why,
                                         sizeof why)) {
            snprintf(out->why, sizeof out->why, "NVRTC's image: the compact one differs: %s", why);
        } else if (size >= cubin_size) {
            snprintf(out->why, sizeof out->why, "NVRTC's image: the compact one is no smaller (%zu bytes)", size);
        } else {
            snprintf(out->why, sizeof out->why,
                     "compact image: %zu bytes for NVRTC's %zu (%zu unused library globals removed, %zu kept as "
                     "1-byte placeholders), proven the same program",
                     size, cubin_size, pruned.removed, pruned.placeholders);
            out->image = image;
            out->size = size;
            image = NULL;
        }
        out->check_ms = asyncrt__now_ms() - start;
    }
    free(image);
    asyncrt__ptx_options_free(mirrored);
    asyncrt__ptx_prune_free(&pruned);
}

void asyncrt__compact_free(asyncrt_compact *out)
{
    if (!out) return;
    free(out->image);
    memset(out, 0, sizeof *out);
}
