/* The compile layer's entry points besides asyncrt_program_compile
 * (compile.c), for the layers above it (build/: asyncrt_module_build, the
 * batch; ops/), the compile worker and first-party tools. */
#ifndef ASYNCRT_COMPILE_H
#define ASYNCRT_COMPILE_H

#include <stdint.h>

#include "arch.h"
#include "asyncrt/runtime.h"

/* asyncrt_program_compile for a target already resolved (target.h), e.g. by
 * an op that chose its path for it: opts->arch is not read, and the target
 * counts as explicit (a ptxas failure gets a hint, not the sm_XYa retry). */
asyncrt_status asyncrt__program_compile_arch(asyncrt_context *ctx, const char *source_name, const char *source,
                                            const asyncrt_compile_options *opts, const asyncrt__arch *arch,
                                            asyncrt_program **out);

/* asyncrt_program_compile for a program about to be loaded on the open
 * device (asyncrt_module_build, asyncrt-run): a target that device's driver
 * cannot load (PTX from an NVRTC newer than the driver: target.h's
 * asyncrt__arch_loadable) is VERSION_MISMATCH before anything is compiled.
 * asyncrt_program_compile itself holds no target to a driver: its program
 * may be for another machine; asyncrt_module_load checks it. */
asyncrt_status asyncrt__program_compile_to_load(asyncrt_context *ctx, const char *source_name, const char *source,
                                               const asyncrt_compile_options *opts, asyncrt_program **out);

/* Whether a program for `arch_text` (sm_XY, compute_XY, ...; NULL or "auto"
 * always loads) could be loaded on ctx's open device: SUCCESS, or
 * VERSION_MISMATCH with the rule's sentence as the context's last error
 * (asyncrt-bench skips a build this way, tests skip a case). SUCCESS when
 * no device is open; INVALID_ARGUMENT for a malformed name. */
asyncrt_status asyncrt__target_loadable(asyncrt_context *ctx, const char *arch_text);

/* The compile flow up to the cache lookup. SUCCESS with *out on a hit;
 * NOT_FOUND on a miss and UNSUPPORTED when the compile is not cacheable
 * (both: nothing set in the last error); any other status is the failure the
 * compile itself would give (bad arch, no device...). key: the cache key;
 * arch (may be NULL): the target it resolved. */
asyncrt_status asyncrt__program_lookup(asyncrt_context *ctx, const char *source_name, const char *source,
                                      const asyncrt_compile_options *opts, asyncrt_program **out,
                                      uint8_t key[32], asyncrt__arch *arch);

#endif
