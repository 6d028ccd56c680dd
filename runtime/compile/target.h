/* The compile's target for a context: auto (the open device's) or explicit,
 * checked against the NVRTC it will use (target.c). */
#ifndef ASYNCRT_TARGET_H
#define ASYNCRT_TARGET_H

#include "arch.h"
#include "context.h"

/* Resolves `text` (NULL/"auto" or explicit) for this context. */
asyncrt_status asyncrt__arch_resolve(asyncrt_context *ctx, const char *text, asyncrt__arch *out);
/* The same; `why` gets the rule that chose it (asyncrt_program_arch_reason)
 * and, for an explicit target while a device is open, whether its driver can
 * load it (asyncrt__arch_loadable's sentence; nothing is refused here). */
asyncrt_status asyncrt__arch_resolve_why(asyncrt_context *ctx, const char *text, asyncrt__arch *out, char *why,
                                        size_t why_size);

/* A program for `arch` is to be loaded on ctx's open device: arch.h's load
 * rule (asyncrt__arch_check_load), with this NVRTC, this driver and, in the
 * advice, an older NVRTC the search found. VERSION_MISMATCH with the rule's
 * sentence when the driver cannot load it; SUCCESS when it can, when no
 * device is open (the program may be for another machine) or when NVRTC's
 * facts are unknown (the driver then speaks for itself). */
asyncrt_status asyncrt__arch_loadable(asyncrt_context *ctx, const asyncrt__arch *arch);

/* Records on `p` why it has its arch: `why`, the reason `resolved` was
 * chosen, and, when p's arch is another (the sm_XYa retry), that too.
 * NULL p is fine. */
void asyncrt__target_note(asyncrt_program *p, const asyncrt__arch *resolved, const char *why);

#endif
