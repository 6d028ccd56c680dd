/* Compact images in the compile flow (issue 37): whether this context makes
 * them, with which nvPTXCompiler, and the step that does it for one compile.
 *
 * ASYNCRT_COMPACT_IMAGES: 1 on, 0 off; unset or "auto" the default, which is
 * OFF until the GPU parity harness holds compact images to NVRTC's results,
 * layout, registers and speed (the project's rule for any change to how
 * images are made; ASYNCRT_COMPACT_DEFAULT flips it). On, the context opens
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

#include "compile_job.h"

/* The default of ASYNCRT_COMPACT_IMAGES (unset or "auto"). */
#define ASYNCRT_COMPACT_DEFAULT false

/* What the cache key of a CUBIN compile holds for compact images in ctx:
 * "compact off", "compact on, no nvPTXCompiler", or "compact on,
 * nvPTXCompiler 13.1.115 sha256 <the loader file's hash>". The first call
 * on a context opens and hashes the loader (tens of ms), under its lock. */
const char *asyncrt__compact_key(asyncrt_context *ctx);

/* The step, on a program NVRTC just made from `prog` (its CUBIN in p->image;
 * ltoir: the image is LTO-IR): records why the image is what it is in p
 * and, where the compact image is proven NVRTC's program and smaller,
 * replaces p's image by it. Never fails the compile: any trouble keeps
 * NVRTC's image, with the reason. */
void asyncrt__job_compact(asyncrt_compile_job *job, const asyncrt_nvrtc *nv, nvrtcProgram prog, asyncrt_program *p,
                          bool ltoir);

#endif
