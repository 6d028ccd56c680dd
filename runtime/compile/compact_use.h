/* Compact images in the compile flow (issue 37): whether this context makes
 * them, with which nvPTXCompiler, and the step that does it for one compile.
 *
 * ASYNCRT_COMPACT_IMAGES: 1 on, 0 off; unset or "auto" the default, which is
 * on since the GPU parity harness held compact images to NVRTC's results,
 * layout, registers and speed (the project's rule for any change to how
 * images are made; ASYNCRT_COMPACT_DEFAULT). On, the context opens
 * the user's nvPTXCompiler loader library once (ptx_assemble.h: beside the
 * NVRTC in use, or $ASYNCRT_PTXCOMPILER), refused unless it is of NVRTC's
 * exact version, and hashes its file: the cache key of every CUBIN compile
 * holds which of these three it is (compact_use_key), so an entry made with
 * compact images is never served to a process with them off or with another
 * assembler, nor the other way round.
 *
 * The step runs at compile time, after NVRTC, once per compile (so once per
 * cache entry; a load never checks anything): it takes NVRTC's PTX of the
 * same nvrtcProgram and lets compact.h prune, assemble and prove; the
 * program keeps the compact image only where proven, and records the
 * verdict either way (asyncrt_program_image_info_of), logged at level 1. */
#ifndef ASYNCRT_COMPACT_USE_H
#define ASYNCRT_COMPACT_USE_H

#include <stdbool.h>
#include <stddef.h>

#include "compile_job.h"

/* The default of ASYNCRT_COMPACT_IMAGES (unset or "auto"): on since the GPU
 * parity harness held all 46 kernels' compact images (NVRTC 13.1.115, H100)
 * to NVRTC's own: the same results, attributes and time (docs/platform.md). */
#define ASYNCRT_COMPACT_DEFAULT true

/* What the cache key of a CUBIN compile holds for compact images in ctx:
 * "compact off", "compact on, no nvPTXCompiler", or "compact on,
 * nvPTXCompiler 13.1.115 sha256 <the loader file's hash>". The first call
 * on a context chooses the loader: its version and hash come from a memo
 * beside the cache kept for the file's identity (path, inode, size, mtime,
 * ctime) and NVRTC's version, else it opens and hashes it (tens of ms) and
 * keeps the memo; a loader known from the memo is opened at its first
 * assembly, and only if it is still that file. */
const char *asyncrt__compact_key(asyncrt_context *ctx);

/* Whether ctx's CUBIN compiles make compact images, and why (the reason
 * asyncrt-probe and -v print). */
bool asyncrt__compact_setting(asyncrt_context *ctx, char *why, size_t why_size);

/* The step, on a program NVRTC just made from `prog` (its CUBIN in p->image;
 * ltoir: the image is LTO-IR): records why the image is what it is in p
 * and, where the compact image is proven NVRTC's program and smaller,
 * replaces p's image by it. Never fails the compile: any trouble keeps
 * NVRTC's image, with the reason. */
void asyncrt__job_compact(asyncrt_compile_job *job, const asyncrt_nvrtc *nv, nvrtcProgram prog, asyncrt_program *p,
                          bool ltoir);

#endif
